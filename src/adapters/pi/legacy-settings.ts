/**
 * The names and words of earlier releases: context-fold 0.5.1's (and older) variables, settings keys
 * and values. A deprecated one is still read as the knob or word it is now, with a notice naming
 * this version's; a retired one sets nothing and is named once as no longer read, with why.
 */
import type { Env, Knob, KnobSource } from "./config.ts";
import { type FoldConfig, SETTINGS_SECTION } from "./settings-schema.ts";

/**
 * Variables earlier releases read, by the knob they set: still read, with a notice naming the
 * variable that follows the one rule (`CONTEXTFOLD_` and the knob's name in upper snake case).
 */
export const DEPRECATED_VARIABLES: Readonly<Record<string, keyof FoldConfig>> = {
	CONTEXTFOLD_FOLD_STEP: "step",
	CONTEXTFOLD_FOLD_FLOOR: "floor",
	CONTEXTFOLD_CONFIRM_COLD_PROMPT: "confirmColdSend",
};

/**
 * Variables of context-fold 0.5.1 (and older) that set nothing here: each is named once as no
 * longer read, so that a user who kept one knows it does nothing now.
 */
const RETIRED_VARIABLES: Readonly<Record<string, string>> = {
	CONTEXTFOLD_RECON_TOKENS: "0.5.1's compaction budget; the summary sizes itself to the window",
	CONTEXTFOLD_DUMP: "0.5.1's dump of each request; `context-fold replay` measures a session instead",
	CONTEXTFOLD_SPOOL_RETAIN_DAYS: "retired in 0.4.0",
};

/**
 * Keys of 0.5.1's settings file (`context-fold.json`) under another name here: still read in the
 * section, with a notice naming the knob's key (which wins when both are set).
 */
export const DEPRECATED_KEYS: Readonly<Record<string, keyof FoldConfig>> = {
	foldStep: "step",
	confirmColdPrompt: "confirmColdSend",
};

/** The knob 0.5.1's name `key` is now (foldStep: step), or undefined for any other name. */
export function renamedKnob(key: string): keyof FoldConfig | undefined {
	return Object.hasOwn(DEPRECATED_KEYS, key) ? DEPRECATED_KEYS[key] : undefined;
}

/** The knob's value word as this version spells it: 0.5.1's word for it put in the new one (see DEPRECATED_VALUES). */
export function currentWord(key: keyof FoldConfig, text: string): string {
	const words = DEPRECATED_VALUES[key];
	const word = text.trim().toLowerCase();
	return words && Object.hasOwn(words, word) ? words[word] : text;
}

/** The keys a settings section may hold `key`'s value under: its own, and 0.5.1's names for it. */
export function savedKeysOf(key: keyof FoldConfig): string[] {
	return [key, ...Object.keys(DEPRECATED_KEYS).filter((old) => DEPRECATED_KEYS[old] === key)];
}

/** Keys of 0.5.1's settings file that set nothing here: each is named as no longer read, with why. */
export const RETIRED_KEYS: Readonly<Record<string, string>> = {
	reconTokens: "0.5.1's compaction budget; the summary sizes itself to the window",
	providerCacheIdleMinutes: "0.5.1's idle minutes by provider; cacheIdleMinutes holds for every provider",
};

/** Values 0.5.1 gave a knob under another word: read as this version's word, with a notice. */
const DEPRECATED_VALUES: Readonly<Partial<Record<keyof FoldConfig, Readonly<Record<string, string>>>>> = {
	compact: { det: "fold" },
};

/** Why `name`, a retired variable of an earlier release, does nothing, or undefined for any other name. */
export function retiredBecause(name: string): string | undefined {
	if (Object.hasOwn(RETIRED_VARIABLES, name)) return RETIRED_VARIABLES[name];
	return name.startsWith("CONTEXTFOLD_L0") ? "retired in 0.3.0" : undefined;
}

/**
 * The old variables still set for `knob`, each as a source to read before the current one (which
 * wins), with a deprecation notice in `problems`.
 */
export function deprecatedFor(
	knob: Knob,
	env: Env,
	problems: string[],
): (readonly [string, string | undefined, KnobSource])[] {
	const old = Object.keys(DEPRECATED_VARIABLES).filter((name) => DEPRECATED_VARIABLES[name] === knob.key);
	return old
		.filter((name) => env[name] !== undefined)
		.map((name) => {
			const read = env[knob.env] === undefined ? "read this time" : `${knob.env} wins`;
			problems.push(`${name} is deprecated; rename it ${knob.env} (${read})`);
			return [name, env[name], "environment"] as const;
		});
}

/**
 * 0.5.1's keys in the saved `section` for `knob`, each as a source to read before the knob's own key
 * (which wins), with a notice in `problems`.
 */
export function deprecatedKeysFor(
	knob: Knob,
	section: Record<string, unknown>,
	problems: string[],
): (readonly [string, unknown, KnobSource])[] {
	const old = Object.keys(DEPRECATED_KEYS).filter((key) => DEPRECATED_KEYS[key] === knob.key);
	return old
		.filter((key) => section[key] !== undefined)
		.map((key) => {
			const read = section[knob.key] === undefined ? "read this time" : `${knob.key} wins`;
			problems.push(`settings ${SETTINGS_SECTION}.${key} is 0.5.1's name; rename it ${knob.key} (${read})`);
			return [`settings ${SETTINGS_SECTION}.${key}`, section[key], "saved"] as const;
		});
}

/** `raw` with a word 0.5.1 used for `knob` put in this version's (see DEPRECATED_VALUES), said in `problems`. */
export function renamedValue(knob: Knob, source: string, raw: unknown, problems: string[]): unknown {
	const words = DEPRECATED_VALUES[knob.key];
	const word = typeof raw === "string" ? raw.trim().toLowerCase() : undefined;
	if (!words || word === undefined || !Object.hasOwn(words, word)) return raw;
	problems.push(`${source}=${JSON.stringify(raw)} is 0.5.1's word for ${JSON.stringify(words[word])}; read as that`);
	return words[word];
}
