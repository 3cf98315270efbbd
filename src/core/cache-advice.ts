/**
 * The cache advisories' decisions and texts, as plain functions over plain figures: a cold input,
 * a fold that never reached the wire, a reset flag (handoff pay-back, forced compactions, a context
 * that cannot fold), recall churn, and the idle cache-risk prediction. Times are passed in (epoch
 * milliseconds); nothing here reads a clock. The adapter (src/adapters/pi/cache/) feeds them from
 * Pi's usage reports and shows what they decide, once per streak (`Streaks`).
 */
import { GOAL_CHARS, SUMMARY_LIMITS } from "./summary.ts";
import { estTokens, percent, short } from "./tokens.ts";

/** A cold input is flagged only when at least this many prompt tokens are carried. */
export const COLD_INPUT_MIN_TOKENS = 20_000;

/** Recalls or unfolds of one fold code that make churn. */
export const CHURN_CALLS = 3;

/** The reset flag's horizon: a handoff must pay for itself within this many warm turns. */
const HANDOFF_PAYBACK_TURNS = 2;

/** Forced compactions (not asked for by the user) that raise the reset flag. */
export const FORCED_COMPACTIONS = 2;

/**
 * Upper bound of a handoff seed in tokens: its summary is capped at SUMMARY_LIMITS.total characters,
 * its goal at GOAL_CHARS, and its other fixed text (header, parent path, provenance note) stays under
 * 1,200 more.
 */
export const HANDOFF_SEED_MAX_TOKENS = estTokens(SUMMARY_LIMITS.total + GOAL_CHARS + 1_200);

/** One response's prompt figures, in tokens. */
export interface PromptFigures {
	input: number;
	cacheRead: number;
	cacheWrite: number;
}

/** Prompt tokens of a response: input + cacheRead + cacheWrite. */
export function promptOf(f: PromptFigures): number {
	return f.input + f.cacheRead + f.cacheWrite;
}

/**
 * A usage report's prompt figures, read tolerantly (a missing or invalid count is 0): all 0 for a
 * reply without usage, such as a provider error's.
 */
export function figuresOf(
	usage: { input?: unknown; cacheRead?: unknown; cacheWrite?: unknown } | undefined,
): PromptFigures {
	return { input: count(usage?.input), cacheRead: count(usage?.cacheRead), cacheWrite: count(usage?.cacheWrite) };
}

function count(value: unknown): number {
	return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * A cold input: the response read nothing from the cache while at least COLD_INPUT_MIN_TOKENS were
 * carried, and no rewrite was expected (the response right after a fold event or an unfold).
 */
export function isColdInput(f: PromptFigures, rewriteExpected: boolean): boolean {
	return !rewriteExpected && f.cacheRead === 0 && promptOf(f) >= COLD_INPUT_MIN_TOKENS;
}

/**
 * Whether a fold event missed the wire, judged on the first response after it. A fold that reached
 * the wire changes the prompt at its first folded block, so that response reads at most
 * `prefoldPrompt - masked` tokens from the cache; one overridden by another extension reads the
 * whole pre-fold prompt. The line is drawn halfway, at `prefoldPrompt - masked / 2`, which absorbs
 * the gap between estimated and provider tokens and the cache's granularity. False when nothing was
 * read, the fold saved nothing, or the figures disagree (a saving not smaller than the pre-fold
 * prompt: that prompt is not the one the fold was cut from).
 */
export function foldMissedWire(prefoldPrompt: number, masked: number, cacheRead: number): boolean {
	if (cacheRead <= 0 || masked <= 0 || masked >= prefoldPrompt) return false;
	return cacheRead >= prefoldPrompt - masked / 2;
}

/** The shortest line a wire probe takes: a shorter one could be any block's. */
export const WIRE_PROBE_MIN_CHARS = 16;

/** Lines a probe may take, the longest first: at most this many of a block are tried. */
const WIRE_PROBE_TRIES = 8;

/**
 * Folded blocks probed at most, spread over the event from its first to its last: one probe found on
 * the wire tells the event missed it, and each line tried is looked for in the whole request, so
 * probing every block of an event over thousands cost the square of the history (a minute on a
 * resumed session of 140 MB).
 */
export const WIRE_PROBE_BLOCKS = 8;

/** True for a line JSON writes as it is, at any depth of quoting (no quote, backslash or control character). */
function writtenAsIs(line: string): boolean {
	return JSON.stringify(line).length === line.length + 2;
}

/** True when `line` occurs exactly once in all of `texts` together. */
function occursOnce(line: string, texts: readonly string[]): boolean {
	let seen = 0;
	for (const text of texts) {
		for (let at = text.indexOf(line); at >= 0; at = text.indexOf(line, at + 1)) if (++seen > 1) return false;
	}
	return seen === 1;
}

/** Up to `most` positions of `count`, spread evenly from the first to the last. */
function spread(count: number, most: number): number[] {
	if (count <= most) return Array.from({ length: count }, (_, i) => i);
	return Array.from({ length: most }, (_, i) => Math.round((i * (count - 1)) / (most - 1)));
}

/**
 * Probes for the raw text of the `folded` block texts in a serialized provider payload. Of each of at
 * most WIRE_PROBE_BLOCKS of them, spread over the event, its longest line (a line of a string inside
 * JSON text, as a call's arguments are, too) that JSON writes as it is however deeply it is quoted (a
 * provider may send arguments as an object or as a JSON string), and that occurs once in all the
 * request's blocks (`folded` and `others`): found on the wire, it is that block's raw text, not a
 * later re-read of it. A block without such a line gets none, and cannot be told on the wire.
 */
export function wireProbes(folded: readonly string[], others: readonly string[]): string[] {
	const texts = [...folded, ...others];
	const probes: string[] = [];
	for (const k of spread(folded.length, WIRE_PROBE_BLOCKS)) {
		const lines = folded[k]
			.split(/\\n|\n/)
			.map((line) => line.trim())
			.filter((line) => line.length >= WIRE_PROBE_MIN_CHARS && writtenAsIs(line))
			.sort((a, b) => b.length - a.length)
			.slice(0, WIRE_PROBE_TRIES);
		const probe = lines.find((line) => occursOnce(line, texts));
		if (probe !== undefined) probes.push(probe);
	}
	return probes;
}

/**
 * Whether a fold event's request went out with its blocks raw, judged on the serialized payload:
 * none of its tags is there and the raw text of one of its blocks is (`probes`, see wireProbes).
 * Blocks that are simply absent (another extension dropped old messages) are no missed fold.
 */
export function rawOnWire(wire: string, tags: readonly string[], probes: readonly string[]): boolean {
	if (tags.some((tag) => wire.includes(tag))) return false;
	return probes.some((probe) => wire.includes(probe));
}

/** Prices relative to an uncached input token (input = 1). */
export interface PriceRatios {
	/** A cache read. */
	read: number;
	/** A cache write. */
	write: number;
}

/** Anthropic's ratios (read 0.1, write 1.25), used when the model's prices do not tell. */
export const DEFAULT_RATIOS: Readonly<PriceRatios> = Object.freeze({ read: 0.1, write: 1.25 });

/**
 * Price ratios from per-token prices (any unit): read = cacheRead / input; write = cacheWrite / input,
 * or 1 when the provider bills no separate write (a write costs plain input), or 2 for a
 * long-retention write (Anthropic's one-hour cache, as Pi prices it). DEFAULT_RATIOS when input or
 * cacheRead is not a positive price, as the fold policy's rewrite price falls back to them, with a
 * long-retention write at 2 all the same.
 */
export function ratiosOf(
	cost: { input?: number; cacheRead?: number; cacheWrite?: number } | undefined,
	longWrite = false,
): PriceRatios {
	const input = cost?.input ?? 0;
	const read = cost?.cacheRead ?? 0;
	if (!(input > 0) || !(read > 0)) return { ...DEFAULT_RATIOS, ...(longWrite ? { write: 2 } : {}) };
	const write = cost?.cacheWrite ?? 0;
	return { read: read / input, write: longWrite ? 2 : write > 0 ? write / input : 1 };
}

/** The handoff arithmetic's figures, in input-token units. */
export interface HandoffPayback {
	/** Tokens carried per request now. */
	carried: number;
	/** Tokens a fresh session seeded by /fold-handoff would carry: its base plus HANDOFF_SEED_MAX_TOKENS. */
	seeded: number;
	/** Cost of continuing over the horizon: turns × carried × read. */
	stay: number;
	/** Cost of the handoff over the horizon: seeded × write (its first request), then (turns - 1) × seeded × read. */
	move: number;
	/** True when move <= stay. */
	pays: boolean;
}

/**
 * Whether a `/fold-handoff` pays for itself within `turns` warm turns. `base` is the prompt of a
 * fresh session before any work (system prompt, tools, first message: the branch's smallest
 * prompt); the seed adds at most HANDOFF_SEED_MAX_TOKENS. Continuing costs `turns × carried ×
 * read`; the handoff writes its prompt once and reads it on the remaining turns.
 */
export function handoffPayback(
	carried: number,
	base: number,
	ratios: PriceRatios,
	turns = HANDOFF_PAYBACK_TURNS,
): HandoffPayback {
	const seeded = base + HANDOFF_SEED_MAX_TOKENS;
	const stay = turns * carried * ratios.read;
	const move = seeded * ratios.write + (turns - 1) * seeded * ratios.read;
	return { carried, seeded, stay, move, pays: carried > seeded && move <= stay };
}

/**
 * The tokens of a request that no fold can take out: its usage (the provider's count) minus what
 * folding every eligible, not yet folded block would save, as the provider counts it (providerSaving).
 */
export function unfoldable(
	usage: number,
	blocks: readonly { eligible: boolean; frozen: boolean; saving: number; providerSaving?: number }[],
): number {
	const foldable = blocks.reduce((n, b) => n + (b.eligible && !b.frozen ? (b.providerSaving ?? b.saving) : 0), 0);
	return Math.max(0, usage - foldable);
}

/** What raises the reset flag, checked in this order. */
export type ResetReason =
	| { kind: "handoff"; payback: HandoffPayback }
	| { kind: "compactions"; count: number }
	| { kind: "unfoldable"; tokens: number; window: number };

/** The reset flag's inputs. */
export interface ResetInputs {
	payback: HandoffPayback | undefined;
	forcedCompactions: number;
	unfoldable: number | undefined;
	window: number | undefined;
}

/**
 * The reset flag: a handoff pays for itself within HANDOFF_PAYBACK_TURNS warm turns, or
 * FORCED_COMPACTIONS forced compactions happened, or what cannot fold is more than half the window.
 */
export function resetReason(inputs: ResetInputs): ResetReason | undefined {
	if (inputs.payback?.pays) return { kind: "handoff", payback: inputs.payback };
	if (inputs.forcedCompactions >= FORCED_COMPACTIONS) return { kind: "compactions", count: inputs.forcedCompactions };
	const { unfoldable: tokens, window } = inputs;
	if (tokens !== undefined && window !== undefined && window > 0 && tokens > window / 2)
		return { kind: "unfoldable", tokens, window };
	return undefined;
}

/** The idle cache-risk prediction's inputs, for one provider and model. */
export interface IdleInputs {
	/** Now (epoch ms). */
	now: number;
	/** When the branch's latest response of this provider and model completed. */
	completedAt: number | undefined;
	/** When Pi last refreshed this cache (a `cache_warm` usage entry). */
	warmedAt: number | undefined;
	/** The cache lifetime assumed for the provider, in ms. */
	ttlMs: number;
	/** Prompt tokens of that latest response: what the next prompt re-sends. */
	carried: number;
	/** Least idle time before the prediction is risky, whatever the lifetime (cacheIdleMinutes), in ms. */
	quietMs?: number;
}

/** The prediction. */
export interface IdlePrediction {
	/** True when the cache is likely cold and at least COLD_INPUT_MIN_TOKENS are carried. */
	risky: boolean;
	/** Ms since the latest response or refresh. */
	idleMs: number;
	/** Ms until the lifetime, or the least idle time where longer, runs out (negative once past it). */
	leftMs: number;
	/** The latest response or refresh this prediction counts from (epoch ms). */
	since: number;
}

/** Predicts whether the next prompt finds the cache cold; undefined without a completed response. */
export function predictIdle(inputs: IdleInputs): IdlePrediction | undefined {
	if (inputs.completedAt === undefined) return undefined;
	const since = Math.max(inputs.completedAt, inputs.warmedAt ?? Number.NEGATIVE_INFINITY);
	const idleMs = Math.max(0, inputs.now - since);
	const leftMs = Math.max(inputs.ttlMs, inputs.quietMs ?? 0) - idleMs;
	return { risky: leftMs < 0 && inputs.carried >= COLD_INPUT_MIN_TOKENS, idleMs, leftMs, since };
}

/**
 * The grammar of a per-provider lifetime table: `provider=seconds`, comma separated; may be empty.
 * Seconds are a whole number of at most 15 digits, below 2^53, as every whole-number knob is.
 */
export const PROVIDER_TTL_PATTERN =
	"^\\s*([A-Za-z0-9._-]+\\s*=\\s*[1-9][0-9]{0,14}\\s*(,\\s*[A-Za-z0-9._-]+\\s*=\\s*[1-9][0-9]{0,14}\\s*)*)?$";

/**
 * Parses a per-provider lifetime table (`anthropic=300, openai=3600`) into seconds by provider; a
 * provider named twice, in any case, keeps its first entry (see repeatedProviders).
 */
export function parseProviderTtls(text: string): Map<string, number> {
	const table = new Map<string, number>();
	const seen = new Set<string>();
	for (const part of text.split(",")) {
		const [name, seconds] = part.split("=").map((s) => s.trim());
		if (!name || !seconds || !/^[1-9]\d{0,14}$/.test(seconds) || seen.has(name.toLowerCase())) continue;
		seen.add(name.toLowerCase());
		table.set(name, Number(seconds));
	}
	return table;
}

/** The later entries of a provider the table names more than once, in any case, as written (`Fake=7200`): they never apply. */
export function repeatedProviders(text: string): string[] {
	const seen = new Set<string>();
	const repeats: string[] = [];
	for (const part of text.split(",")) {
		const [name, seconds] = part.split("=").map((s) => s.trim());
		if (!name || !seconds) continue;
		if (seen.has(name.toLowerCase())) repeats.push(`${name}=${seconds}`);
		seen.add(name.toLowerCase());
	}
	return repeats;
}

/** What a cache lifetime is worked out from (see cacheLifetime). */
export interface LifetimeInputs {
	provider: string | undefined;
	/** `cacheTtlByProvider`: lifetimes in seconds by provider. */
	table: string;
	/** `cacheTtlSeconds`. */
	seconds: number;
	/** True when the user set `cacheTtlSeconds` (saved or environment), false for its default. */
	secondsSet: boolean;
	/** The lifetime the model declares for the cache retention in use (Pi's `promptCache`), in ms. */
	modelMs?: number;
}

/** A cache lifetime and where it came from. */
export interface Lifetime {
	ms: number;
	source: "cacheTtlByProvider" | "cacheTtlSeconds" | "model" | "default";
	/** The environment variable that set the knob `source` names, where one did (else it was saved). */
	variable?: string;
}

/** The seconds the table gives `provider`, its name matched in any case (`Anthropic=3600` is anthropic's). */
function tableEntry(table: string, provider: string): number | undefined {
	// Every entry holds an `=`: the empty default table (nearly every request's) is not parsed.
	if (!table.includes("=")) return undefined;
	const want = provider.toLowerCase();
	for (const [name, seconds] of parseProviderTtls(table)) if (name.toLowerCase() === want) return seconds;
	return undefined;
}

/**
 * The table's provider names that match none of `providers` in any case: entries that never apply.
 */
export function unknownProviders(table: string, providers: Iterable<string>): string[] {
	const known = new Set([...providers].map((name) => name.toLowerCase()));
	return [...parseProviderTtls(table).keys()].filter((name) => !known.has(name.toLowerCase()));
}

/**
 * The cache lifetime, most specific first: the provider's entry in the table (its name in any case),
 * else `cacheTtlSeconds` when the user set it, else the lifetime the model declares, else the default
 * `cacheTtlSeconds`.
 */
export function cacheLifetime(inputs: LifetimeInputs): Lifetime {
	const entry = inputs.provider === undefined ? undefined : tableEntry(inputs.table, inputs.provider);
	if (entry !== undefined) return { ms: entry * 1000, source: "cacheTtlByProvider" };
	if (inputs.secondsSet) return { ms: inputs.seconds * 1000, source: "cacheTtlSeconds" };
	if (inputs.modelMs !== undefined && inputs.modelMs > 0) return { ms: inputs.modelMs, source: "model" };
	return { ms: inputs.seconds * 1000, source: "default" };
}

/**
 * Once-per-streak bookkeeping: a key is raised when its condition starts to hold and not again until
 * it has stopped holding. Keys are the advisories' ids.
 */
export class Streaks {
	private readonly holding = new Set<string>();

	/** Updates `key`; true when its condition now holds and did not before (time to notify). */
	update(key: string, holds: boolean): boolean {
		if (!holds) {
			this.holding.delete(key);
			return false;
		}
		if (this.holding.has(key)) return false;
		this.holding.add(key);
		return true;
	}

	/** True while `key`'s condition holds. */
	has(key: string): boolean {
		return this.holding.has(key);
	}

	/** Forgets every streak. */
	clear(): void {
		this.holding.clear();
	}
}

/** "12.3k" for 12,345; plain below 1,000; from what rounds to a million as everywhere else ("1M", "1.1M", see short). */
export function kTokens(n: number): string {
	if (n >= 999_950) return short(n);
	return n < 1000 ? String(Math.round(n)) : `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
}

/** "2m 05s" / "45s" for a duration in ms. */
export function duration(ms: number): string {
	const s = Math.max(0, Math.round(ms / 1000));
	if (s < 60) return `${s}s`;
	const m = Math.floor(s / 60);
	if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
	return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** The advisories' texts. */
export const ADVICE = {
	coldInput: (f: PromptFigures) =>
		`context-fold: cold input: the last response read nothing from the prompt cache while carrying ~${kTokens(promptOf(f))} tokens; the whole prompt was paid uncached (cache expired, evicted, or the prompt changed before its end)`,
	watchdog: (prefold: number, cacheRead: number, seq: number) =>
		`context-fold: fold event ${seq} did not reach the wire: the next response still read ~${kTokens(cacheRead)} tokens from the cache, the whole pre-fold prompt (~${kTokens(prefold)}); another extension's context handler likely restored the raw messages after context-fold's`,
	watchdogRequest: (seq: number) =>
		`context-fold: fold event ${seq} did not reach the wire: the request it folded carried its blocks raw, without their digests; another extension's context handler likely restored the raw messages after context-fold's`,
	reset: (reason: ResetReason) => {
		if (reason.kind === "handoff") {
			const p = reason.payback;
			return `context-fold: reset flag: /fold-handoff would pay for itself within ${HANDOFF_PAYBACK_TURNS} warm turns: this session carries ~${kTokens(p.carried)} tokens per request, a fresh session seeded by /fold-handoff at most ~${kTokens(p.seeded)}`;
		}
		if (reason.kind === "compactions")
			return `context-fold: reset flag: ${reason.count} forced compactions since this session was opened or moved in its tree; consider /fold-handoff to start fresh from a deterministic seed`;
		return `context-fold: reset flag: ~${kTokens(reason.tokens)} tokens of the context cannot fold (the system prompt and tools, digests and summaries, what never folds, and the digest each fold would leave), more than half the window (${kTokens(reason.window)}); consider /fold-handoff`;
	},
	churn: (code: string, calls: number, unfolded: boolean, tailKnob: string, what?: string) =>
		unfolded
			? `context-fold: recall churn: #${code}${what ? ` ${what}` : ""} was asked for ${calls} times though it is unfolded: its original is in every request since the unfold, so the model is not finding it there (a recall of it costs a request and changes nothing)`
			: `context-fold: recall churn: #${code}${what ? ` ${what}` : ""} was recalled ${calls} times; /context-fold unfold ${code} keeps it in the context, or widen the protected tail (${tailKnob})`,
	idle: (provider: string, p: IdlePrediction, ttlMs: number, carried: number) =>
		`context-fold: the prompt cache of ${provider} is likely cold (idle ${duration(p.idleMs)}, lifetime ${duration(ttlMs)}): the next prompt re-sends ~${kTokens(carried)} tokens uncached`,
	confirmTitle: (provider: string, p: IdlePrediction, carried: number) =>
		`The prompt cache of ${provider} is likely cold (idle ${duration(p.idleMs)}): this prompt re-sends ~${kTokens(carried)} tokens uncached.`,
	keptDraft: (images: number) =>
		`context-fold: draft kept, nothing sent; Enter sends it (and asks again while the cache is likely cold)${images > 0 ? `; ${images} image${images === 1 ? "" : "s"} kept for the next prompt (/context-fold discard-images drops ${images === 1 ? "it" : "them"})` : ""}`,
	imagesDropped: (images: number) =>
		`context-fold: dropped ${images} image${images === 1 ? "" : "s"} kept from a cancelled prompt: the session changed or moved in its tree`,
	debugCache: (f: PromptFigures) => {
		const prompt = promptOf(f);
		const hit = percent(prompt > 0 ? f.cacheRead / prompt : 0);
		return `context-fold: cache read ${f.cacheRead} · write ${f.cacheWrite} · input ${f.input}: cache read ${hit} of the prompt`;
	},
} as const;

/** The confirmation's answer that puts the prompt back in the editor, unsent. */
export const KEEP_DRAFT = "Keep draft";
/** The confirmation's answer that sends the prompt to the cold cache. */
export const SEND_ANYWAY = "Send anyway";
