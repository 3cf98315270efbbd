/**
 * Resolving the knobs of `settings-schema.ts`: defaults < saved settings (the settings.json
 * `context-fold` section) < `CONTEXTFOLD_*` environment. Input is tolerant: text such as `45%`,
 * `yes` or `NATIVE` is normalised first, then checked against the knob's schema. A bad value yields
 * one problem message and keeps the previous value; an unknown key in the section is named once.
 * A knob left at its default takes its profile's own default where that differs (PROFILE_DEFAULTS).
 * Also read here: Pi's own `compaction.keepRecentTokens`, which the economic backstop respects.
 */
import { DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import { type TSchema, Type } from "typebox";
import { Value } from "typebox/value";
import { DEFAULT_ECONOMIC, type PolicyView } from "../../core/contract.ts";
import {
	DEPRECATED_KEYS,
	DEPRECATED_VARIABLES,
	deprecatedFor,
	deprecatedKeysFor,
	RETIRED_KEYS,
	renamedValue,
	retiredBecause,
} from "./legacy-settings.ts";
import { ENV_KEYWORD, type FoldConfig, KNOB_SCHEMAS, SETTINGS_SECTION, UNIT_KEYWORD } from "./settings-schema.ts";

/** The environment context-fold's variables are read from (CONTEXTFOLD, CONTEXTFOLD_*). */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Knob defaults that depend on the profile, where they differ from the schema's (which are the
 * default profile's): the economic profile keeps its own least event and hot tail.
 */
const PROFILE_DEFAULTS: Readonly<Record<FoldConfig["policy"], Partial<FoldConfig>>> = {
	"working-set": {},
	economic: { minEvent: DEFAULT_ECONOMIC.minEvent, hotTail: DEFAULT_ECONOMIC.hotTail },
	ladder: {},
};

/** Knobs that only some profiles read; every other knob applies whichever profile is in use. */
export const PROFILE_KNOBS: Readonly<Record<FoldConfig["policy"], readonly (keyof FoldConfig)[]>> = {
	"working-set": ["useWindow", "hotTail", "coldTail", "horizon", "foldFrom", "minEvent", "backstopAt"],
	economic: ["hotTail", "coldTail", "horizon", "foldFrom", "minEvent", "backstopAt"],
	ladder: ["foldAt", "coldFoldAt", "step", "tail"],
};

/** The profiles that read `key`, when only some do; empty for a knob every profile reads. */
export function profilesReading(key: keyof FoldConfig): FoldConfig["policy"][] {
	return (Object.keys(PROFILE_KNOBS) as FoldConfig["policy"][]).filter((p) => PROFILE_KNOBS[p].includes(key));
}

/**
 * Why a knob does nothing under `policy`, when it is one only other profiles read ("it applies under
 * the ladder profile, not under working-set, the policy in force"); undefined when it applies.
 */
export function idleUnder(key: keyof FoldConfig, policy: FoldConfig["policy"] | undefined): string | undefined {
	if (policy === undefined || key === "policy" || PROFILE_KNOBS[policy].includes(key)) return undefined;
	const readers = profilesReading(key);
	if (readers.length === 0) return undefined;
	const names = readers.join(" and ");
	return `it applies under the ${names} profile${readers.length > 1 ? "s" : ""}, not under ${policy}, the policy in force`;
}

/** A default that is not always the value it falls back to, in words (see lifetimeFor). */
const DEFAULT_IN_WORDS: Partial<Record<keyof FoldConfig, (value: string) => string>> = {
	cacheTtlSeconds: (value) => `the model's own lifetime where Pi knows it, else ${value}`,
};

/** What `key`'s default of `value` means where it is not always that value (see DEFAULT_IN_WORDS); undefined elsewhere. */
export function defaultInWords(key: keyof FoldConfig, value: string): string | undefined {
	return DEFAULT_IN_WORDS[key]?.(value);
}

/** One knob: its settings.json key, environment variable and schema. */
export interface Knob {
	key: keyof FoldConfig;
	env: string;
	schema: TSchema;
}

/** The JSON Schema keywords the normaliser reads. */
interface Shape {
	type?: string;
	anyOf?: Shape[];
	const?: unknown;
	minimum?: number;
	default?: unknown;
	[ENV_KEYWORD]?: string;
	[UNIT_KEYWORD]?: string;
}

/** The knob table, derived from the schema: key, environment variable and schema. */
export const KNOBS: readonly Knob[] = Object.entries(KNOB_SCHEMAS).map(([key, schema]) => ({
	key: key as keyof FoldConfig,
	env: String((schema as Shape)[ENV_KEYWORD]),
	schema,
}));

/** The defaults, read from the schema. */
export const DEFAULT_CONFIG: Readonly<FoldConfig> = Object.freeze(
	Object.fromEntries(KNOBS.map((knob) => [knob.key, (knob.schema as Shape).default])) as unknown as FoldConfig,
);

const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
	...["1", "true", "on", "yes"].map((word) => [word, true] as const),
	...["0", "false", "off", "no", ""].map((word) => [word, false] as const),
]);

/** Plain decimal text: digits with an optional fraction, optionally a percentage. No sign, hex or exponent. */
const DECIMAL = /^(\d+(?:\.\d*)?|\.\d+)(\s*%)?$/;

/**
 * Reads text as a number: a fraction may be a percentage, a token count only whole digits.
 * Anything else (`0x10`, `1e4`, `-0`, empty) is NaN, for the schema to reject. A percentage is
 * divided and rounded to 12 significant digits, so that `33.3%` is 0.333, not 0.33299999999999996.
 */
function numberFrom(text: string, fraction: boolean): number {
	const match = DECIMAL.exec(text.trim());
	if (!match || (!fraction && (match[2] || match[1].includes(".")))) return Number.NaN;
	return match[2] ? Number((Number(match[1]) / 100).toPrecision(12)) : Number(match[1]);
}

/**
 * Brings a tolerant input to the form the schema checks: boolean words, numbers in plain decimal
 * text (a percentage for a fraction), a choice in any case. `off` beside a count (budgetCap,
 * cacheIdleMinutes) stands for 0. JSON's -0 is no token count, nor a whole number past 2^53. Anything else is
 * returned as is, for the schema to reject.
 */
function normalise(schema: TSchema, raw: unknown): unknown {
	const shape = schema as Shape;
	if (shape.type === "boolean") {
		if (typeof raw !== "string" && typeof raw !== "number") return raw;
		return BOOLEAN_WORDS.get(String(raw).trim().toLowerCase()) ?? raw;
	}
	if (shape.type === "number") return typeof raw === "string" ? numberFrom(raw, true) : raw;
	if (shape.type === "integer") {
		const n = typeof raw === "string" ? numberFrom(raw, false) : raw;
		// Past 2^53 a whole number is no longer the one typed (99999999999999999999 reads as 1e20).
		return Object.is(n, -0) || (typeof n === "number" && Number.isInteger(n) && !Number.isSafeInteger(n))
			? Number.NaN
			: n;
	}
	if (!shape.anyOf) return raw;
	const count = shape.anyOf.find((member) => member.type === "integer");
	if (typeof raw === "string") {
		const word = raw.trim().toLowerCase();
		const choice = shape.anyOf.find((member) => member.const === word);
		if (choice) return count && word === "off" ? 0 : choice.const;
	}
	return count ? normalise(count as TSchema, raw) : raw;
}

/** Why a value was rejected, in the user's terms: what the knob accepts. */
function complaint(schema: TSchema): string {
	const shape = schema as Shape;
	const unit = shape[UNIT_KEYWORD] ?? "token count";
	if (shape.type === "number") return "is not a valid fraction (a number in (0, 1] or a percentage such as 45%)";
	if (shape.type === "integer") {
		const least = shape.minimum !== undefined ? ` of at least ${shape.minimum}` : "";
		return `is not a valid ${unit} (a whole number${least})`;
	}
	if (shape.type === "boolean") return "is not true or false (also yes/no, on/off, 1/0)";
	if (shape.type === "string") return 'is not a list of provider=seconds pairs (e.g. "anthropic=300, openai=3600")';
	const words = (shape.anyOf ?? []).filter((member) => member.const !== undefined).map((member) => member.const);
	if (shape.anyOf?.some((member) => member.type === "integer")) {
		return `is not a valid ${unit} (a whole number, or ${words.map((word) => JSON.stringify(word)).join(" or ")})`;
	}
	return `is not ${words.join(" or ")}`;
}

/** Where a knob's value comes from. */
export type KnobSource = "default" | "saved" | "environment";

/**
 * The outcome of resolving the knobs: values, where each came from (for a knob the environment
 * sets, the variable read: its own or an earlier release's name), and one message per rejected input.
 */
export interface ResolvedConfig {
	config: FoldConfig;
	sources: Record<keyof FoldConfig, KnobSource>;
	variables: Partial<Record<keyof FoldConfig, string>>;
	problems: string[];
}

/**
 * The knobs as the fold policy reads them. A horizon left at its default is left out, so the policy
 * counts an event's saving over no more than a quarter of the requests so far (horizonOf); so is
 * a hot tail left at its default, so that an urgent event keeps a longer one (hotTailOf). What the
 * user set is taken as given.
 */
export function policyConfigOf(resolved: Pick<ResolvedConfig, "config" | "sources">): PolicyView["config"] {
	const config: PolicyView["config"] = { ...resolved.config };
	if (resolved.sources.horizon === "default") delete config.horizon;
	if (resolved.sources.hotTail === "default") delete config.hotTail;
	return config;
}

/** Letters and digits only, lower case: `hotTail`, `HOT_TAIL` and `hottail` read alike. */
function squeezed(name: string): string {
	return name.replace(/[^A-Za-z0-9]/g, "").toLowerCase();
}

/**
 * Edits (insert, delete, substitute, swap two neighbours) between two short names; stops counting
 * past `limit`, returning limit + 1.
 */
function editsBetween(a: string, b: string, limit: number): number {
	if (Math.abs(a.length - b.length) > limit) return limit + 1;
	const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
	for (let i = 1; i <= a.length; i++) {
		const row = [i];
		for (let j = 1; j <= b.length; j++) {
			const cost = a[i - 1] === b[j - 1] ? 0 : 1;
			row[j] = Math.min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
				row[j] = Math.min(row[j], rows[i - 2][j - 2] + 1);
		}
		if (Math.min(...row) > limit) return limit + 1;
		rows.push(row);
	}
	return rows[a.length][b.length];
}

/**
 * The knob a mistyped name most likely meant: one whose key, or environment variable without its
 * `CONTEXTFOLD_` prefix, reads the same but for case and separators (`hottail`, `HOT-TAIL`,
 * `CONTEXTFOLD_HOTTAIL` all mean hotTail), else the one a slip of one or two keys away
 * (`hotTial`, `CONTEXTFOLD_HOT_TALE`; one key for names under six letters); undefined when none is.
 */
export function nearestKnob(name: string): Knob | undefined {
	const want = squeezed(name.replace(/^CONTEXTFOLD_/i, ""));
	const spellings = (knob: Knob) => [squeezed(knob.key), squeezed(knob.env.replace(/^CONTEXTFOLD_/, ""))];
	const same = KNOBS.find((knob) => spellings(knob).includes(want));
	if (same) return same;
	const limit = want.length < 6 ? 1 : 2;
	let best: { knob: Knob; edits: number } | undefined;
	for (const knob of KNOBS) {
		const edits = Math.min(...spellings(knob).map((spelling) => editsBetween(want, spelling, limit)));
		if (edits <= limit && (!best || edits < best.edits)) best = { knob, edits };
	}
	return best?.knob;
}

/**
 * The one of `names` a slip of a key or two away from `name` (one key for names under six letters;
 * case and separators aside), the closest first; undefined when none is.
 */
export function nearestName(name: string, names: Iterable<string>): string | undefined {
	const want = squeezed(name);
	const limit = want.length < 6 ? 1 : 2;
	let best: { name: string; edits: number } | undefined;
	for (const candidate of names) {
		const edits = editsBetween(want, squeezed(candidate), limit);
		if (edits <= limit && (!best || edits < best.edits)) best = { name: candidate, edits };
	}
	return best?.name;
}

/** The knobs (and 0.5.1's names for them) the settings.json files `origin` reads set, as one section. */
function sectionBeneath(origin: SavedOrigin): Record<string, unknown> {
	const section: Record<string, unknown> = {};
	for (const key of [...KNOBS.map((knob) => knob.key), ...(Object.keys(DEPRECATED_KEYS) as (keyof FoldConfig)[])]) {
		const found = origin(key);
		if (found?.value !== undefined) section[key] = found.value;
	}
	return section;
}

/**
 * True for a variable set to nothing (`CONTEXTFOLD_HOT_TAIL= pi`), where nothing is no value of the
 * knob: it is unset, as `CONTEXTFOLD=` leaves context-fold on, not a bad value reported on every launch.
 * Where nothing is the knob's value (`cacheTtlByProvider`: no per-provider lifetimes), it sets that.
 */
function emptyVariable(knob: Knob, kind: KnobSource, raw: unknown): boolean {
	return kind === "environment" && typeof raw === "string" && raw.trim() === "" && !Value.Check(knob.schema, "");
}

/**
 * Where a saved value came from, for a knob whose value in Pi's merged settings is refused: the
 * settings.json that holds it (`file`), and the value of the file Pi merged it over (a trusted
 * project's settings.json is merged over the global one, key by key), if that file sets the knob.
 * Without a key, the settings.json whose section Pi's merge took (one that is no object). Undefined
 * when no file holds the value (this process saved it).
 */
export type SavedOrigin = (
	key?: keyof FoldConfig,
) => { file: string; value?: unknown; beneath?: { file: string; value: unknown } } | undefined;

/**
 * Resolves every knob from defaults, a saved settings section, and the environment. A saved value
 * refused falls back, where `origin` finds one, to the valid value of the settings.json Pi merged it
 * over, as a refused variable falls back to the saved value: a bad value in a project's file keeps
 * the global file's.
 */
export function resolveConfig(saved: unknown, env: Env, origin?: SavedOrigin): ResolvedConfig {
	const config: FoldConfig = { ...DEFAULT_CONFIG };
	const sources = Object.fromEntries(KNOBS.map((knob) => [knob.key, "default"])) as ResolvedConfig["sources"];
	const variables: ResolvedConfig["variables"] = {};
	const problems: string[] = [];
	const isSection = typeof saved === "object" && saved !== null && !Array.isArray(saved);
	// A section that is no object (a project's `"context-fold": false`) hides the one Pi merged it over:
	// the knobs another settings.json sets beneath it keep their values, as a bad knob keeps its own.
	const beneath = !isSection && saved !== undefined && origin ? sectionBeneath(origin) : {};
	if (saved !== undefined && !isSection) {
		const file = origin?.()?.file;
		problems.push(
			`settings ${SETTINGS_SECTION} must be an object${file ? ` (in ${file})` : ""}; ignoring it${Object.keys(beneath).length > 0 ? ", and reading the knobs the settings.json beneath it sets" : ""}`,
		);
	}
	const section = isSection ? (saved as Record<string, unknown>) : beneath;
	for (const key of Object.keys(section)) {
		if (KNOBS.some((knob) => knob.key === key) || Object.hasOwn(DEPRECATED_KEYS, key)) continue;
		if (Object.hasOwn(RETIRED_KEYS, key)) {
			problems.push(`settings ${SETTINGS_SECTION}.${key} is no longer read (${RETIRED_KEYS[key]}); ignoring it`);
			continue;
		}
		const near = nearestKnob(key);
		const hint = near ? `did you mean ${near.key}?` : `known: ${KNOBS.map((knob) => knob.key).join(", ")}`;
		problems.push(`settings ${SETTINGS_SECTION}.${key} is not a context-fold setting; ignoring it (${hint})`);
	}
	// A CONTEXTFOLD_* variable that is no knob's but reads like one is a typo: say which it meant.
	for (const name of Object.keys(env)) {
		if (!name.startsWith("CONTEXTFOLD_") || KNOBS.some((knob) => knob.env === name)) continue;
		if (name in DEPRECATED_VARIABLES) continue;
		const retired = retiredBecause(name);
		if (retired) {
			problems.push(`${name} is no longer read (${retired}); ignoring it`);
			continue;
		}
		const near = nearestKnob(name);
		if (near) problems.push(`${name} is not a context-fold variable; ignoring it (did you mean ${near.env}?)`);
	}
	const bag = config as unknown as Record<string, unknown>;
	// A value refused says what is used instead, known only once every source and the profile are read.
	const refused: { at: number; text: string; knob: Knob; from?: string }[] = [];
	for (const knob of KNOBS) {
		for (const [source, raw, kind] of [
			...deprecatedKeysFor(knob, section, problems),
			[`settings ${SETTINGS_SECTION}.${knob.key}`, section[knob.key], "saved"],
			...deprecatedFor(knob, env, problems),
			[knob.env, env[knob.env], "environment"],
		] as const) {
			if (raw === undefined || emptyVariable(knob, kind, raw)) continue;
			const value = normalise(knob.schema, renamedValue(knob, source, raw, problems));
			if (Value.Check(knob.schema, value)) {
				bag[knob.key] = value;
				sources[knob.key] = kind;
				if (kind === "environment") variables[knob.key] = source;
				continue;
			}
			// Where a refused saved value came from is known for the knob's own key, not 0.5.1's.
			const held = source === `settings ${SETTINGS_SECTION}.${knob.key}` ? origin?.(knob.key) : undefined;
			const text = `${source}=${JSON.stringify(raw)}${held ? ` in ${held.file}` : ""} ${complaint(knob.schema)}`;
			refused.push({ at: problems.length, text, knob });
			problems.push("");
			const beneath = held?.beneath;
			const lower = beneath === undefined ? undefined : normalise(knob.schema, beneath.value);
			if (beneath && Value.Check(knob.schema, lower)) {
				bag[knob.key] = lower;
				sources[knob.key] = "saved";
				refused[refused.length - 1].from = beneath.file;
			} else if (beneath) {
				const text = `${source}=${JSON.stringify(beneath.value)} in ${beneath.file} ${complaint(knob.schema)}`;
				refused.push({ at: problems.length, text, knob });
				problems.push("");
			}
		}
	}
	for (const [key, value] of Object.entries(PROFILE_DEFAULTS[config.policy])) {
		if (sources[key as keyof FoldConfig] === "default") bag[key] = value;
	}
	for (const { at, text, knob, from } of refused) {
		const value = JSON.stringify(bag[knob.key]);
		const used = sources[knob.key] === "default" ? (defaultInWords(knob.key, value) ?? value) : value;
		problems[at] = `${text}; using ${used}${from && sources[knob.key] === "saved" ? ` (${from})` : ""}`;
	}
	return { config, sources, variables, problems };
}

/** True for the name of one of context-fold's variables: CONTEXTFOLD, CONTEXTFOLD_*. */
function ownVariable(name: string): boolean {
	return name === "CONTEXTFOLD" || name.startsWith("CONTEXTFOLD_");
}

/** The names of context-fold's variables set in `env`, sorted. */
export function ownVariablesIn(env: Env): string[] {
	return Object.keys(env)
		.filter((name) => ownVariable(name) && env[name] !== undefined)
		.sort();
}

/** `env` without context-fold's variables: the replay's, whose knobs come from `--set` alone. */
export function withoutOwnVariables(env: Env): Record<string, string | undefined> {
	return Object.fromEntries(Object.entries(env).filter(([name]) => !ownVariable(name)));
}

/**
 * Whether `CONTEXTFOLD` leaves the extension on for this process: unset or empty, or an on word
 * (`1`, `on`, `true`, `yes`), on; an off word (`0`, `off`, `false`, `no`), off. Any other value
 * (`disable`, `disabled`) is off too, since setting the variable at all asks for the escape hatch,
 * with a `problem` saying the value was not understood and which are.
 */
export function envSwitch(env: Env): { on: boolean; problem?: string } {
	const raw = env.CONTEXTFOLD;
	const word = raw?.trim().toLowerCase();
	if (word === undefined || word === "") return { on: true };
	const on = BOOLEAN_WORDS.get(word);
	if (on !== undefined) return { on };
	return {
		on: false,
		problem: `context-fold: CONTEXTFOLD=${JSON.stringify(raw)} is not understood, so context-fold is off as with CONTEXTFOLD=0 (off: 0, off, false, no; on: 1, on, true, yes, or unset)`,
	};
}

/** A token count Pi accepts in its compaction settings: a non-negative whole number. */
const TokenCount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/** Pi's `compaction` settings as far as they are read here (any other key, or a wrong value, is let be). */
const CompactionSettings = Type.Object({
	keepRecentTokens: Type.Optional(Type.Unknown()),
	reserveTokens: Type.Optional(Type.Unknown()),
	modelOverrides: Type.Optional(Type.Unknown()),
});

/** Pi's `compaction.modelOverrides`: settings by `provider/id`. */
const ModelOverrides = Type.Record(Type.String(), Type.Unknown());

/**
 * One of Pi's compaction token settings for `model` (`provider/id`), resolved as Pi resolves it: the
 * model's entry under `compaction.modelOverrides`, else the setting, else Pi's default. A value Pi
 * would reject (not a non-negative whole number) counts as unset.
 */
function compactionTokens(compaction: unknown, field: "keepRecentTokens" | "reserveTokens", model?: string): number {
	const tokens = (value: unknown): number | undefined => (Value.Check(TokenCount, value) ? value : undefined);
	const settings = Value.Check(CompactionSettings, compaction) ? compaction : undefined;
	const overrides = settings?.modelOverrides;
	const override = model !== undefined && Value.Check(ModelOverrides, overrides) ? overrides[model] : undefined;
	const entry = Value.Check(CompactionSettings, override) ? override : undefined;
	return tokens(entry?.[field]) ?? tokens(settings?.[field]) ?? DEFAULT_COMPACTION_SETTINGS[field];
}

/** Pi's `compaction.keepRecentTokens` for `model` (`provider/id`), as Pi resolves it. */
export function keepRecentOf(compaction: unknown, model?: string): number {
	return compactionTokens(compaction, "keepRecentTokens", model);
}

/**
 * Pi's `compaction.reserveTokens` for `model`, as Pi resolves it, while Pi's threshold compaction is
 * on (`compaction.enabled` not false); undefined when it is off, since Pi then never compacts on its own.
 */
export function reserveOf(compaction: unknown, model?: string): number | undefined {
	if ((compaction as { enabled?: unknown } | undefined)?.enabled === false) return undefined;
	return compactionTokens(compaction, "reserveTokens", model);
}
