/**
 * Resolving the knobs of `settings-schema.ts`: defaults < saved settings (the settings.json
 * `context-fold` section) < `CONTEXTFOLD_*` environment. Input is tolerant: text such as `45%`,
 * `yes` or `NATIVE` is normalised first, then checked against the knob's schema. A bad value yields
 * one problem message and keeps the previous value; an unknown key in the section is named once.
 */
import type { TSchema } from "typebox";
import { Value } from "typebox/value";
import { ENV_KEYWORD, type FoldConfig, KNOB_SCHEMAS, SETTINGS_SECTION } from "./settings-schema.ts";

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
	default?: unknown;
	[ENV_KEYWORD]?: string;
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

/** Reads text as a number; a fraction may be a percentage. Empty text is not a number. */
function numberFrom(text: string, percent: boolean): number {
	const trimmed = text.trim();
	if (percent && trimmed.endsWith("%")) return numberFrom(trimmed.slice(0, -1), false) / 100;
	return trimmed ? Number(trimmed) : Number.NaN;
}

/**
 * Brings a tolerant input to the form the schema checks: boolean words, numbers in text (a
 * percentage for a fraction), a choice in any case. Anything else is returned as is, for the schema
 * to reject.
 */
function normalise(schema: TSchema, raw: unknown): unknown {
	const shape = schema as Shape;
	if (shape.type === "boolean") {
		if (typeof raw !== "string" && typeof raw !== "number") return raw;
		return BOOLEAN_WORDS.get(String(raw).trim().toLowerCase()) ?? raw;
	}
	if (shape.type === "number" || shape.type === "integer") {
		return typeof raw === "string" ? numberFrom(raw, shape.type === "number") : raw;
	}
	if (shape.anyOf && typeof raw === "string") {
		const text = raw.trim().toLowerCase();
		return shape.anyOf.find((member) => member.const === text)?.const ?? raw;
	}
	return raw;
}

/** What a rejected value was expected to be, for the problem message. */
function expected(schema: TSchema): string {
	const type = (schema as Shape).type;
	if (type === "number") return "a valid fraction";
	if (type === "integer") return "a valid tokens";
	if (type === "boolean") return "a valid bool";
	return "a valid choice";
}

/** The outcome of resolving the knobs: values plus one message per rejected input. */
export interface Resolved {
	config: FoldConfig;
	problems: string[];
}

/** Resolves every knob from defaults, a saved settings section, and the environment. */
export function resolveConfig(saved: unknown, env: Readonly<Record<string, string | undefined>>): Resolved {
	const config: FoldConfig = { ...DEFAULT_CONFIG };
	const problems: string[] = [];
	const section =
		saved && typeof saved === "object" && !Array.isArray(saved) ? (saved as Record<string, unknown>) : {};
	for (const key of Object.keys(section)) {
		if (KNOBS.some((knob) => knob.key === key)) continue;
		const near = KNOBS.find((knob) => knob.key.toLowerCase() === key.toLowerCase());
		const hint = near ? `did you mean ${near.key}?` : `known: ${KNOBS.map((knob) => knob.key).join(", ")}`;
		problems.push(`settings ${SETTINGS_SECTION}.${key} is not a context-fold setting; ignoring it (${hint})`);
	}
	const bag = config as unknown as Record<string, unknown>;
	for (const knob of KNOBS) {
		for (const [source, raw] of [
			[`settings ${SETTINGS_SECTION}.${knob.key}`, section[knob.key]],
			[knob.env, env[knob.env]],
		] as const) {
			if (raw === undefined) continue;
			const value = normalise(knob.schema, raw);
			if (!Value.Check(knob.schema, value)) {
				problems.push(
					`${source}=${JSON.stringify(raw)} is not ${expected(knob.schema)}; using ${JSON.stringify(bag[knob.key])}`,
				);
				continue;
			}
			bag[knob.key] = value;
		}
	}
	return { config, problems };
}

/** True when `CONTEXTFOLD` disables the extension for this process (`0`, `off`, `false`, `no`). */
export function disabledByEnv(env: Readonly<Record<string, string | undefined>>): boolean {
	const value = env.CONTEXTFOLD?.trim().toLowerCase();
	return value === "0" || value === "off" || value === "false" || value === "no";
}
