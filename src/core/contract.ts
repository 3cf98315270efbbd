/**
 * The policy interface: what a fold policy sees (PolicyView) and what it may ask for
 * (FoldCommand). A policy decides when and what; the mechanism (lower + applyOps) decides how.
 */
import type { BlockKind } from "./block.ts";

/** One block as the policy sees it. */
export interface ViewBlock {
	id: string;
	kind: BlockKind;
	/** Tokens this block costs in the request as it stands (after frozen folds). */
	tokens: number;
	/** Durable id, foldable kind, not unfolded by the agent, not held raw after a code collision. */
	eligible: boolean;
	/** Already folded by a committed layer; never re-planned. */
	frozen: boolean;
	/**
	 * No fold may take it now: a first-delivery tool result (or the arguments of one), which the model
	 * has not seen yet, or a part of a model message of the current turn that holds a provider-signed
	 * call (see Block.signed).
	 */
	held: boolean;
	/** Tokens a fold would save now; 0 when the digest is not smaller than the block. */
	saving: number;
	/**
	 * `saving` as the provider may count it, for a figure weighed against its count of the context
	 * (`usage`): scaled up where the block's text holds characters outside ASCII, which count a token
	 * each where chars/4 counts a quarter (CJK text about four times over); `saving` for ASCII text.
	 */
	providerSaving?: number;
	/** A file read that a later call made stale: a later version of the file is in the context (see supersede.ts). */
	superseded?: boolean;
	/** The tool of a tool call's arguments or result. */
	toolName?: string;
	/**
	 * Model messages since the newest one that used this block (repeated one of its distinctive
	 * strings, see use-ages.ts) or first saw it: 0 for the latest, Infinity beyond USE_LOOKBACK.
	 */
	useAge?: number;
	/** The distinctive strings the model used this block for over the lookback, sorted. */
	usedStrings?: readonly string[];
}

/** Knobs of the fold ladder, as fractions of the context window unless named in tokens. */
export interface LadderConfig {
	/** First-fold threshold (fraction of the window). */
	foldAt: number;
	/** First-fold threshold when the session never had a cache read. */
	coldFoldAt: number;
	/** Minimum maskable mass worth an ordinary event (fraction of the window). */
	step: number;
	/** Budget as a fraction of the window; the budget is min(budgetCap, budgetFraction × window), see budgetOf. */
	budgetFraction: number;
	/** Absolute cap on the budget, in tokens; 0 means no cap. */
	budgetCap: number;
	/** Minimum saving even an urgent event must reach (fraction of the window). */
	floor: number;
	/** Protected tail, in tokens; clamped to half the budget. */
	tail: number;
}

/** The shipped defaults. */
export const DEFAULT_LADDER: Readonly<LadderConfig> = Object.freeze({
	foldAt: 0.45,
	coldFoldAt: 0.25,
	step: 0.12,
	budgetFraction: 0.75,
	budgetCap: 200_000,
	floor: 0.02,
	tail: 20_000,
});

/**
 * What the provider's prompt cache is doing, as plain facts the adapter computes with its clock
 * from cache telemetry (the core reads no clock).
 */
export interface CacheFacts {
	/**
	 * False once the cache is cold anyway: the latest response and the latest idle refresh are both
	 * older than the cache lifetime. Undefined before the first response (nothing is known).
	 */
	warm: boolean | undefined;
	/** Milliseconds since the latest response or idle refresh. */
	idleMs?: number;
	/** The cache lifetime assumed, in milliseconds. */
	ttlMs?: number;
	/**
	 * What rewriting a cached token costs over reading it, in reads, at the model's prices for the
	 * cache retention in use (see rewriteInReadsOf); absent when the prices are unknown.
	 */
	rewriteInReads?: number;
}

/** Knobs of the cache-economic profile (src/core/policy/cache-economic.ts); the ladder ignores them. */
export interface EconomicConfig {
	/** Tail of tool results no later call superseded (what the model re-reads), in tokens: none of the newest this many fold. */
	hotTail: number;
	/** Tail of everything else (thinking, assistant text, arguments, superseded reads), in tokens. */
	coldTail: number;
	/** Requests an event's saving is counted over (the expected gap to the next event). */
	horizon: number;
	/** Least usage at which an ordinary event may fire, in tokens, whatever the window. */
	foldFrom: number;
	/** Usage that folding alone must bring below, else compact, in tokens, whatever the window. */
	backstopAt: number;
	/** Least saving of an ordinary event, in tokens, whatever the window: fewer, larger events. */
	minEvent: number;
}

/**
 * The economic profile's defaults, chosen with `context-fold replay` (anthropic-5m, idle warming,
 * 140k window) over the project's and the shared sessions; docs/defaults.md gives the figures.
 * Every size is in tokens, not a share of the window: what an event saves and what its rewrite costs do
 * not depend on the window, so a 1M window folds as early as a 140k one (foldFrom, minEvent and
 * backstopAt are 10, 8 and 18 % of the 140k they were chosen in). The working-set profile reads them
 * too, with its own defaults where WORKING_SET_ECONOMIC gives one.
 */
export const DEFAULT_ECONOMIC: Readonly<EconomicConfig> = Object.freeze({
	hotTail: 7500,
	coldTail: 1000,
	horizon: 20,
	foldFrom: 14_000,
	backstopAt: 25_200,
	minEvent: 11_200,
});

/** Knobs of the working-set profile (src/core/policy/working-set.ts), on top of the economic ones. */
export interface WorkingSetConfig {
	/** Model messages a use (or the arrival) keeps a block raw for. */
	useWindow: number;
}

/** The working-set profile's defaults (docs/defaults.md). */
export const DEFAULT_WORKING_SET: Readonly<WorkingSetConfig> = Object.freeze({
	useWindow: 8,
});

/**
 * The economic knobs whose default differs under the working-set profile (docs/defaults.md): a
 * larger least event (10 % of 140k), since a small one late in a short session does not repay its
 * recalls; and a shorter hot tail, since a result stays raw for `useWindow` model messages after it
 * arrives anyway (past the budget the tail is URGENT_HOT_TAIL at least, policy/cache-economic.ts).
 */
export const WORKING_SET_ECONOMIC: Readonly<Pick<EconomicConfig, "minEvent" | "hotTail">> = Object.freeze({
	minEvent: 14_000,
	hotTail: 4000,
});

/** Everything a policy may read. */
export interface PolicyView {
	blocks: readonly ViewBlock[];
	/** Context tokens of the request as it stands. */
	usage: number;
	/** Tokens the frozen folds keep out of the request: `usage + masked` is the context unfolded, as plain Pi would hold it. */
	masked?: number;
	/** True when the conversation starts with a compaction summary: a compaction has run in this session. */
	compacted?: boolean;
	/**
	 * Model requests the session has made so far: its assistant messages, those a compaction removed
	 * included. Absent when unknown.
	 */
	requests?: number;
	/** The model's context window, in tokens. */
	window: number;
	/** True when telemetry shows the session has never had a cache read. */
	neverCacheRead: boolean;
	/** Cache facts; absent when the host reports none (treated as warm-or-unknown). */
	cache?: CacheFacts;
	/** Tokens of the newest messages Pi's compaction cut keeps raw (its `compaction.keepRecentTokens`); absent when unknown. */
	keepRecent?: number;
	/**
	 * Pi's `compaction.reserveTokens` while its threshold compaction is on: Pi compacts once usage passes
	 * `window - reserve`. Absent when Pi's compaction is off or unknown.
	 */
	reserve?: number;
	/** The ladder's knobs, and the economic profile's where the caller supplies them (defaults otherwise). */
	config: LadderConfig & Partial<EconomicConfig> & Partial<WorkingSetConfig>;
}

/**
 * A policy's request. `fold` asks for one block to fold (a supplied digest is re-tagged by the
 * engine; a tool result's digest also keeps its lines holding any `focus` string); `compact` says usage is past the budget with nothing worth folding, leaving the rest to
 * compaction.
 */
export type FoldCommand =
	| { type: "fold"; id: string; urgent: boolean; digest?: string; focus?: readonly string[] }
	| { type: "compact"; usage: number; budget: number; maskable: number };

/** The effective budget in tokens for a window: budgetFraction × window, capped by budgetCap unless it is 0. */
export function budgetOf(config: LadderConfig, window: number): number {
	const share = Math.floor(config.budgetFraction * window);
	return config.budgetCap > 0 ? Math.min(config.budgetCap, share) : share;
}

/**
 * True while the context is plain Pi's and short of Pi's own compaction point: what folds keep out of
 * it and what folding could still save (every eligible block's saving, its digest read where it was
 * not yet: this runs only where a compaction is in question) come to less than `least`, the smallest
 * event worth having, and usage is under `window - reserve`. A policy then
 * asks for no compaction: Pi's own comes at its point, so a session with nothing to fold compacts
 * where plain Pi does, never sooner. False where Pi's compaction is off (no reserve).
 */
export function plainBeforePi(view: PolicyView, least: number): boolean {
	if (view.reserve === undefined || !(view.usage < view.window - view.reserve)) return false;
	// Nothing at all to fold is plain Pi's context whatever the least event (a `minEvent` of 0).
	const enough = Math.max(least, 1);
	let foldable = view.masked ?? 0;
	for (const block of view.blocks) {
		if (foldable >= enough) return false;
		if (block.eligible && !block.frozen) foldable += block.saving;
	}
	return foldable < enough;
}

/** The effective protected tail in tokens: the configured tail clamped to half the budget. */
export function tailOf(config: LadderConfig, window: number): number {
	return Math.min(config.tail, Math.floor(budgetOf(config, window) / 2));
}
