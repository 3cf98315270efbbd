/**
 * The knob table. Each knob has a default, may be saved in Pi's settings.json under the
 * `context-fold` section, and may be overridden by its `CONTEXTFOLD_*` environment variable:
 * defaults < saved settings < environment. A bad value is reported once and the default is used.
 */
import { DEFAULT_LADDER, type LadderConfig } from "../../core/contract.ts";

/** Every knob's effective value. */
export interface FoldConfig extends LadderConfig {
	debug: boolean;
	/** `fold`: deterministic compaction summary; `native`: leave compaction to Pi. */
	compact: "fold" | "native";
}

type Kind = "fraction" | "tokens" | "bool" | "compact";

interface Knob {
	key: keyof FoldConfig;
	env: string;
	kind: Kind;
	doc: string;
}

/** The knob table: setting key, environment variable, value kind and meaning. */
export const KNOBS: readonly Knob[] = [
	{ key: "foldAt", env: "CONTEXTFOLD_FOLD_AT", kind: "fraction", doc: "first-fold threshold, share of the window" },
	{ key: "step", env: "CONTEXTFOLD_FOLD_STEP", kind: "fraction", doc: "least maskable mass worth an event" },
	{
		key: "coldFoldAt",
		env: "CONTEXTFOLD_COLD_FOLD_AT",
		kind: "fraction",
		doc: "threshold when no cache read was ever seen",
	},
	{ key: "budgetFraction", env: "CONTEXTFOLD_BUDGET_FRACTION", kind: "fraction", doc: "budget, share of the window" },
	{ key: "budgetCap", env: "CONTEXTFOLD_BUDGET_CAP", kind: "tokens", doc: "absolute budget cap in tokens" },
	{ key: "floor", env: "CONTEXTFOLD_FOLD_FLOOR", kind: "fraction", doc: "least saving of an urgent event" },
	{ key: "tail", env: "CONTEXTFOLD_TAIL", kind: "tokens", doc: "protected tail in tokens" },
	{ key: "debug", env: "CONTEXTFOLD_DEBUG", kind: "bool", doc: "log fold events on stderr" },
	{ key: "compact", env: "CONTEXTFOLD_COMPACT", kind: "compact", doc: "fold (deterministic summary) or native" },
];

/** The defaults. */
export const DEFAULT_CONFIG: Readonly<FoldConfig> = Object.freeze({ ...DEFAULT_LADDER, debug: false, compact: "fold" });

/** The settings.json section holding saved knobs. */
export const SETTINGS_SECTION = "context-fold";

function parse(kind: Kind, raw: unknown): unknown {
	if (kind === "bool") {
		if (typeof raw === "boolean") return raw;
		const text = String(raw).trim().toLowerCase();
		if (["1", "true", "on", "yes"].includes(text)) return true;
		if (["0", "false", "off", "no", ""].includes(text)) return false;
		return undefined;
	}
	if (kind === "compact") {
		const text = String(raw).trim().toLowerCase();
		return text === "fold" || text === "native" ? text : undefined;
	}
	const text = typeof raw === "string" ? raw.trim() : "";
	const percent = kind === "fraction" && text.endsWith("%");
	const number = typeof raw === "number" ? raw : text ? Number(percent ? text.slice(0, -1) : text) : Number.NaN;
	const value = percent ? number / 100 : number;
	if (!Number.isFinite(value)) return undefined;
	if (kind === "fraction") return value > 0 && value <= 1 ? value : undefined;
	return value >= 0 && Number.isInteger(value) ? value : undefined;
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
	const bag = config as unknown as Record<string, unknown>;
	for (const knob of KNOBS) {
		for (const [source, raw] of [
			[`settings ${SETTINGS_SECTION}.${knob.key}`, section[knob.key]],
			[knob.env, env[knob.env]],
		] as const) {
			if (raw === undefined) continue;
			const value = parse(knob.kind, raw);
			if (value === undefined) {
				problems.push(
					`${source}=${JSON.stringify(raw)} is not a valid ${knob.kind}; using ${JSON.stringify(bag[knob.key])}`,
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
