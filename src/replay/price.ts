/**
 * Price models: pure functions over a run's request sequence (block shapes and recorded times).
 * Costs are in input-token equivalents: an uncached prompt token costs 1, a cache write `write`,
 * a cache read `read`. No clock: time is each request's recorded `at` (ms).
 *
 * - Breakpoint models (Anthropic): a request writes cache entries at its breakpoints (Pi marks the
 *   system prompt and the last message); a later request reads the longest prefix that an earlier,
 *   unexpired entry covers, found by looking back at most `lookback` blocks from each of its own
 *   breakpoints. A read refreshes the entry's TTL.
 * - Prefix model (OpenAI): every prefix of a request is cached; the longest unexpired one is read.
 * - Idle warming (Pi 1.6 `cacheWarming: "idle"`): in a gap between requests, Pi re-sends the last
 *   request every min(0.9 TTL, TTL - 10 s) while a refresh pays for itself by Pi's own rule
 *   (`evaluateCacheWarming` at the price model's reference prices: in a gap within an agent run
 *   the next request is certain, in a gap between runs it comes with Pi's 15 % chance), for at most
 *   an hour after the request within a run and 30 minutes between runs (none after a compaction at
 *   the end of a run: its new context stops Pi's warming); each refresh is priced as a
 *   request of its own (usually a full read) and counted apart. Before each refresh Pi asks the
 *   extensions (`cache_warming_decision`); a request marked `warmingStopped` had the answer `stop` in
 *   the gap before it, so that gap sends no refresh (Pi stops at the first one) and its refreshes are
 *   counted as stopped instead.
 */

import { CACHE_WARMING_MAX_AGE_MS, CACHE_WARMING_MAX_IDLE_AGE_MS, evaluateCacheWarming } from "@earendil-works/pi-ai";
import type { Vision } from "./image-size.ts";
import type { RequestShape } from "./request-shape.ts";

/** A named price model. */
export interface PriceModel {
	name: string;
	/** Multiplier of a cache-write token (1 = no premium). */
	write: number;
	/** Multiplier of a cache-read token. */
	read: number;
	ttlMs: number;
	matching: "breakpoints" | "prefix";
	/** Blocks looked back from a breakpoint for an earlier entry (breakpoint models). */
	lookback: number;
	/** How the provider prices an image (`--images size`, image-size.ts). */
	vision: Vision;
	/**
	 * Whether Pi's idle warming refreshes this provider's cache: Pi warms only a model with a cache
	 * lifetime (its `promptCache`, which Anthropic's models declare and OpenAI's do not).
	 */
	warmed: boolean;
	/**
	 * For a warmed model, one of Pi's catalog with these ratios, whose list prices in dollars per
	 * million tokens Pi's warming rule weighs (it sends a refresh only when it expects to save five cents).
	 */
	reference?: { model: string; input: number; output: number; cacheRead: number; cacheWrite: number };
}

/**
 * Claude Opus 4.5's list prices: its cache read and write are 0.1 and 1.25 of its input, Anthropic's
 * 5-minute ratios, and its 200k window is the real one the project's 140k replays stand for. Pi
 * weighs a one-hour refresh at the same prices (its rule prices the write at the 5-minute rate).
 */
const OPUS_4_5 = { model: "claude-opus-4-5", input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };

/** The price models the replay knows, by name. */
export const PRICE_MODELS: Record<string, PriceModel> = {
	"anthropic-5m": {
		name: "anthropic-5m",
		write: 1.25,
		read: 0.1,
		ttlMs: 300_000,
		matching: "breakpoints",
		lookback: 20,
		vision: "anthropic",
		warmed: true,
		reference: OPUS_4_5,
	},
	"anthropic-1h": {
		name: "anthropic-1h",
		write: 2,
		read: 0.1,
		ttlMs: 3_600_000,
		matching: "breakpoints",
		lookback: 20,
		vision: "anthropic",
		warmed: true,
		reference: OPUS_4_5,
	},
	openai: {
		name: "openai",
		write: 1,
		read: 0.1,
		ttlMs: 300_000,
		matching: "prefix",
		lookback: 0,
		vision: "openai",
		warmed: false,
	},
};

/**
 * Where a gap before a request falls for Pi's cache warmer: `streaming` within an agent run (the
 * request follows tool results, and surely comes), `idle` between runs (it opens a run on a prompt
 * the user may never type).
 */
export type WarmingPhase = "streaming" | "idle";

/** Pi's warming decision for one refresh (`evaluateCacheWarming`'s result). */
export type WarmingDecision = ReturnType<typeof evaluateCacheWarming>;

/**
 * Pi's cache warmer's decision on refreshing the cache of a `prompt`-token request in a gap of
 * `phase`: Pi's own rule (`evaluateCacheWarming`) at `model`'s reference prices; undefined for a
 * model Pi never warms.
 */
export function piWarming(model: PriceModel, prompt: number, phase: WarmingPhase): WarmingDecision | undefined {
	if (!model.warmed || !model.reference) return undefined;
	const { input, output, cacheRead, cacheWrite } = model.reference;
	const priced = { cost: { input, output, cacheRead, cacheWrite } } as Parameters<typeof evaluateCacheWarming>[0];
	return evaluateCacheWarming(priced, prompt, phase);
}

/** Whether Pi's cache warmer refreshes the cache of a `prompt`-token request in a gap of `phase` (see piWarming). */
export function piWarms(model: PriceModel, prompt: number, phase: WarmingPhase): boolean {
	return piWarming(model, prompt, phase)?.action === "warm";
}

/** Tokens of a request's prompt, as its shape holds them. */
export function shapePrompt(shape: RequestShape): number {
	return sum(shape.tokens, 0, shape.tokens.length);
}

/** One request to price. `kind: "summary"` is a compaction's summary request (never warmed). */
export interface PriceInput {
	at: number;
	kind: "turn" | "summary";
	shape: RequestShape;
	/** The request opens an agent run (the gap before it is Pi's idle phase); else it continues one. */
	opensRun?: boolean;
	/**
	 * A compaction ran since the previous request. Before a request that opens a run, it ran when the
	 * previous run ended, and its new context ended Pi's warming of the previous request: no refresh.
	 */
	afterCompaction?: boolean;
	/** Its reply failed without reporting a prompt: Pi weighs a refresh of this request at 0 tokens (none). */
	failedWithoutUsage?: boolean;
	/** The provider refused it (an error reply that used nothing): it costs nothing, and reads and writes no cache. */
	refused?: boolean;
	/** The extensions answered `stop` when asked whether to warm, in the gap before this request. */
	warmingStopped?: boolean;
}

/** The price of one request. */
export interface RequestPrice {
	prompt: number;
	read: number;
	write: number;
	cost: number;
	/** Tokens of the suffix from the first block that differs from the previous turn request (0: append-only). */
	rewriteTokens: number;
	/** Index of the first changed block when `rewriteTokens` > 0. */
	firstChanged: number;
	rewriteCost: number;
	/** Idle refreshes sent in the gap before this request, and their cost. */
	warmRefreshes: number;
	warmCost: number;
}

/** A run's prices: per request, warming, and totals. */
export interface RunPrice {
	requests: RequestPrice[];
	warmRefreshes: number;
	/** Refreshes not sent because the extensions answered `stop`. */
	warmStopped: number;
	warmRead: number;
	warmWrite: number;
	warmCost: number;
	read: number;
	write: number;
	/** Every cost: requests and warming. */
	cost: number;
}

function sum(tokens: readonly number[], from: number, to: number): number {
	let total = 0;
	for (let i = from; i < to; i++) total += tokens[i];
	return total;
}

/** The delay between idle refreshes for a TTL (Pi's getCacheWarmingDelayMs). */
export function warmingDelayMs(ttlMs: number): number | undefined {
	if (ttlMs <= 10_000) return undefined;
	return Math.max(1, Math.floor(Math.min(ttlMs * 0.9, ttlMs - 10_000)));
}

/**
 * When Pi's warming refreshes the cache between a request at `from` and the next at `to`, once it
 * pays: every `delay` ms, for at most an hour after `from` within a run, 30 minutes between runs.
 */
export function refreshTimes(from: number, to: number, delay: number, phase: WarmingPhase): number[] {
	const times: number[] = [];
	const most = phase === "idle" ? CACHE_WARMING_MAX_IDLE_AGE_MS : CACHE_WARMING_MAX_AGE_MS;
	const stop = Math.min(to, from + most + 1);
	for (let t = from + delay; t < stop; t += delay) times.push(t);
	return times;
}

/** Prices a run's requests under `model`, with or without idle warming. */
export function priceRun(inputs: readonly PriceInput[], model: PriceModel, warming: boolean): RunPrice {
	const expiry = new Map<number, number>();
	const live = (key: number, at: number): boolean => (expiry.get(key) ?? Number.NEGATIVE_INFINITY) >= at;
	const send = (shape: RequestShape, at: number): { read: number; write: number } => {
		const { keys, tokens, breakpoints } = shape;
		let hit = 0;
		if (model.matching === "prefix") {
			for (let p = keys.length; p > 0 && hit === 0; p--) if (live(keys[p - 1], at)) hit = p;
		} else {
			for (const b of breakpoints) {
				for (let p = b; p > 0 && p >= b - model.lookback; p--) {
					if (live(keys[p - 1], at)) {
						hit = Math.max(hit, p);
						break;
					}
				}
			}
		}
		const until = at + model.ttlMs;
		if (hit > 0) expiry.set(keys[hit - 1], until);
		if (model.matching === "prefix") for (const key of keys) expiry.set(key, until);
		else for (const b of breakpoints) if (b > 0) expiry.set(keys[b - 1], until);
		return { read: sum(tokens, 0, hit), write: sum(tokens, hit, tokens.length) };
	};
	const out: RunPrice = {
		requests: [],
		warmRefreshes: 0,
		warmStopped: 0,
		warmRead: 0,
		warmWrite: 0,
		warmCost: 0,
		read: 0,
		write: 0,
		cost: 0,
	};
	const delay = warming ? warmingDelayMs(model.ttlMs) : undefined;
	let lastTurn: PriceInput | undefined;
	// The last turn the provider took: a fold event's rewrite is counted against it.
	let lastSent: PriceInput | undefined;
	for (const input of inputs) {
		let gapRefreshes = 0;
		let gapCost = 0;
		const phase: WarmingPhase = input.opensRun ? "idle" : "streaming";
		const compactedAtRunEnd = input.opensRun === true && input.afterCompaction === true;
		const prompt = lastTurn?.failedWithoutUsage ? 0 : lastTurn && shapePrompt(lastTurn.shape);
		if (lastTurn && delay !== undefined && !compactedAtRunEnd && piWarms(model, prompt ?? 0, phase)) {
			for (const t of refreshTimes(lastTurn.at, input.at, delay, phase)) {
				if (input.warmingStopped) {
					out.warmStopped++;
					continue;
				}
				const warm = send(lastTurn.shape, t);
				const cost = warm.read * model.read + warm.write * model.write;
				gapRefreshes++;
				gapCost += cost;
				out.warmRefreshes++;
				out.warmRead += warm.read;
				out.warmWrite += warm.write;
				out.warmCost += cost;
			}
		}
		const { read, write } = input.refused ? { read: 0, write: 0 } : send(input.shape, input.at);
		let rewriteTokens = 0;
		let firstChanged = -1;
		if (input.kind === "turn" && lastSent && !input.refused) {
			const prev = lastSent.shape.keys;
			const cur = input.shape.keys;
			const common = Math.min(prev.length, cur.length);
			let f = 0;
			while (f < common && prev[f] === cur[f]) f++;
			if (f < common) {
				firstChanged = f;
				rewriteTokens = sum(input.shape.tokens, f, cur.length);
			}
		}
		const cost = read * model.read + write * model.write;
		out.requests.push({
			prompt: input.refused ? shapePrompt(input.shape) : read + write,
			read,
			write,
			cost,
			rewriteTokens,
			firstChanged,
			rewriteCost: rewriteTokens * model.write,
			warmRefreshes: gapRefreshes,
			warmCost: gapCost,
		});
		out.read += read;
		out.write += write;
		out.cost += cost;
		if (input.kind === "turn") lastTurn = input;
		if (input.kind === "turn" && !input.refused) lastSent = input;
	}
	out.read += out.warmRead;
	out.write += out.warmWrite;
	out.cost += out.warmCost;
	return out;
}
