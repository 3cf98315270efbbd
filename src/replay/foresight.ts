/**
 * The foresight floor: what a run's requests would cost under a fold policy that knew the future.
 * Every block is sent raw once, stays raw until the last request at which the recorded model used
 * it (a reference it held, see visibility.ts `needs`), and after that costs a digest of
 * `digestTokens`, unless no fold may touch it at all (user text, summaries, signed thinking: `fixed`,
 * see request-shape.ts; and the first block, the system prompt), which stays raw as in every context-fold
 * run. The cache never expires and nothing is warmed. The same formula over the run as sent (nothing
 * folded) is each floor's own baseline; the report divides the floors by the run's priced cost
 * instead (which also pays Pi's compactions and cache expiries), as every policy's cost+recalls × pi is. On the
 * `pi` run it bounds how far a fold policy could bring a session's cost down; a session whose floor
 * is above a cost target cannot meet that target without losing references.
 *
 * Allowed to leave `lose` references unseen, the floor gives up the ones that save the most (the
 * model's latest uses of a block, chosen exactly over all blocks): what a policy could reach at a
 * visibility bar. `foresightFloor` folds for free, each block right after its last use;
 * `scheduledFloor` prices folds as the cache does, a rewrite of everything after the first changed
 * block, and finds the cheapest times for fold events that fold every block whose last use has
 * passed. Pure.
 */
import type { PriceModel } from "./price.ts";
import type { Produced } from "./visibility.ts";

/** Tokens a folded block still costs in the floor: about a short digest. */
export const FORESIGHT_DIGEST_TOKENS = 30;

/**
 * The share of a session's references a policy may leave unseen and still pass issue 10's
 * visibility bar (plain Pi's visibility minus 5 points).
 */
export const VISIBILITY_BAR_LOSS = 0.05;

/** A floor's cost, the same formula's cost of the run as sent, and their ratio. */
export interface Foresight {
	cost: number;
	baseline: number;
	ratio: number;
}

/** The scheduled floor, and the requests its fold events happen at. */
export interface ScheduledForesight extends Foresight {
	events: number[];
}

/** Where a foldable block is sent after its first request: the request and its tokens there. */
type Sends = { request: number; tokens: number }[];

/** A run's blocks: where and at what size each is first sent, and whether any fold may touch it. */
interface RunBlocks {
	first: Map<number, { request: number; tokens: number }>;
	/** Blocks no fold touches: fixed ones, and the first block of a request (the system prompt). */
	kept: Set<number>;
	/** Each block's sends after its first. */
	sends: Map<number, Sends>;
}

function runBlocks(produced: readonly Produced[], fixed: readonly boolean[]): RunBlocks {
	const out: RunBlocks = { first: new Map(), kept: new Set(), sends: new Map() };
	for (const p of produced) {
		p.shape.ids.forEach((id, k) => {
			const tokens = p.shape.tokens[k];
			if (k === 0 || fixed[id] === true) out.kept.add(id);
			const sends = out.sends.get(id);
			if (sends) sends.push({ request: p.request, tokens });
			else {
				out.first.set(id, { request: p.request, tokens });
				out.sends.set(id, []);
			}
		});
	}
	return out;
}

/** A foldable block's reads, raw up to request `last` and a digest after it. */
function readsOf(sends: Sends, last: number, model: PriceModel, digestTokens: number): number {
	let cost = 0;
	for (const s of sends) cost += (s.request <= last ? s.tokens : Math.min(s.tokens, digestTokens)) * model.read;
	return cost;
}

/**
 * Each needed block's last use once at most `lose` references are given up: those whose loss saves
 * the most reads when blocks fold for free. Giving up a block's latest `j` uses moves its last use
 * back to the one before them (-1: none left); a multiple-choice knapsack over blocks (at most
 * `lose` uses in all) picks the best set exactly.
 */
function lastUses(
	blocks: RunBlocks,
	needs: ReadonlyMap<number, readonly number[]>,
	lose: number,
	price: (sends: Sends, last: number) => number,
): Map<number, number> {
	const last = new Map<number, number>();
	const items: { id: number; uses: readonly number[] }[] = [];
	for (const [id, uses] of needs) {
		if (uses.length === 0) continue;
		last.set(id, uses[uses.length - 1]);
		const sends = blocks.sends.get(id);
		if (lose > 0 && sends && sends.length > 0 && !blocks.kept.has(id)) items.push({ id, uses });
	}
	const usesLeft = (uses: readonly number[], j: number) => (j === uses.length ? -1 : uses[uses.length - 1 - j]);
	// best[k]: the most saved giving up at most k uses among the items so far; took[i][k]: item i's share.
	let best = new Array<number>(lose + 1).fill(0);
	const took: number[][] = [];
	for (const { id, uses } of items) {
		const sends = blocks.sends.get(id) as Sends;
		const full = price(sends, uses[uses.length - 1]);
		const gains = [0];
		for (let j = 1; j <= Math.min(lose, uses.length); j++) gains.push(full - price(sends, usesLeft(uses, j)));
		const next = best.slice();
		const share = new Array<number>(lose + 1).fill(0);
		for (let k = 1; k <= lose; k++) {
			for (let j = 1; j <= Math.min(k, gains.length - 1); j++) {
				if (best[k - j] + gains[j] > next[k]) {
					next[k] = best[k - j] + gains[j];
					share[k] = j;
				}
			}
		}
		best = next;
		took.push(share);
	}
	let k = lose;
	for (let i = items.length - 1; i >= 0; i--) {
		const j = took[i][k];
		if (j > 0) last.set(items[i].id, usesLeft(items[i].uses, j));
		k -= j;
	}
	return last;
}

/** What a floor is worked out from. */
export interface FloorInput {
	produced: readonly Produced[];
	/** Block id -> the requests of the references it served, ascending (visibility.ts `needs`). */
	needs: ReadonlyMap<number, readonly number[]>;
	model: PriceModel;
	/** Block ids no fold may touch (request-shape.ts `fixed`). */
	fixed?: readonly boolean[];
	/** Tokens a folded block still costs; FORESIGHT_DIGEST_TOKENS by default. */
	digestTokens?: number;
	/** References the floor may leave unseen; 0 (full visibility) by default. */
	lose?: number;
}

/** A floor's blocks, each needed block's last use once `lose` references are given up, and its read price. */
function prepare(input: FloorInput) {
	const digestTokens = input.digestTokens ?? FORESIGHT_DIGEST_TOKENS;
	const blocks = runBlocks(input.produced, input.fixed ?? []);
	const price = (sends: Sends, last: number) => readsOf(sends, last, input.model, digestTokens);
	return { blocks, price, digestTokens, last: lastUses(blocks, input.needs, input.lose ?? 0, price) };
}

/**
 * Prices the produced requests twice, in input-token equivalents: a block's first appearance is
 * a cache write, each later request reads it, raw in the baseline, and in the floor raw only while
 * the model still needs it (the kept blocks always). Folds are free.
 */
export function foresightFloor(input: FloorInput): Foresight {
	const { blocks, price, last } = prepare(input);
	const { model } = input;
	let cost = 0;
	let baseline = 0;
	for (const [id, sends] of blocks.sends) {
		const written = (blocks.first.get(id)?.tokens ?? 0) * model.write;
		const raw = price(sends, Number.POSITIVE_INFINITY);
		baseline += written + raw;
		cost += written + (blocks.kept.has(id) ? raw : price(sends, last.get(id) ?? -1));
	}
	return { cost, baseline, ratio: baseline > 0 ? cost / baseline : 1 };
}

/**
 * The floor with folds priced as the cache prices them. Each request reads the blocks it shares,
 * in the same form and place, with the request before it, and writes the rest. A fold event at
 * request s folds every block sent before s whose last use (after giving up `lose` references as
 * `foresightFloor` does) came before s; the cheapest set of event times is found exactly by dynamic
 * programming over the latest event before each request. Quadratic in the requests.
 */
export function scheduledFloor(input: FloorInput): ScheduledForesight {
	const { blocks, last, digestTokens } = prepare(input);
	const { produced, model } = input;
	const n = produced.length;
	// A block folds under an event at a request after both its first send and its last use.
	const foldsAfter: number[] = [];
	for (const [id, first] of blocks.first) {
		foldsAfter[id] = blocks.kept.has(id) ? Number.POSITIVE_INFINITY : Math.max(first.request, last.get(id) ?? -1);
	}
	/** The form a block is sent in under the event at produced index e (-1: none yet). */
	const form = (id: number, tokens: number, e: number): number =>
		e >= 0 && produced[e].request > foldsAfter[id] ? Math.min(tokens, digestTokens) : tokens;
	/** Request i's cost when request i - 1 went out under event `before` and request i under `now`. */
	const cost = (i: number, before: number, now: number): number => {
		const cur = produced[i].shape;
		const prev = i > 0 ? produced[i - 1].shape : undefined;
		let read = 0;
		let write = 0;
		let shared = prev !== undefined;
		for (let k = 0; k < cur.ids.length; k++) {
			const id = cur.ids[k];
			const tokens = form(id, cur.tokens[k], now);
			shared &&= prev !== undefined && prev.ids[k] === id && form(id, prev.tokens[k], before) === tokens;
			if (shared) read += tokens;
			else write += tokens;
		}
		return read * model.read + write * model.write;
	};
	// run[e + 1][i]: requests 0..i-1 at their cost under event e alone (requests before e count as none).
	const run: number[][] = [];
	for (let e = -1; e < n; e++) {
		const sums = [0];
		for (let i = 0; i < n; i++) sums.push(sums[i] + (i > e ? cost(i, e, e) : 0));
		run.push(sums);
	}
	const between = (e: number, from: number, to: number) => (to <= from ? 0 : run[e + 1][to] - run[e + 1][from]);
	// best[e + 1]: the least cost of requests 0..e with an event at e; from[e + 1]: the event before it.
	const best: number[] = [0];
	const from: number[] = [-1];
	// Costs summed in different orders differ by rounding: one lower by no more than that is a tie,
	// and a tie keeps the schedule found first, whose previous event is the earlier one, so an event
	// that folds nothing new (it costs exactly what its absence does) is left out.
	const lower = (c: number, than: number) => (Number.isFinite(than) ? c < than - 1e-9 * Math.abs(than) : c < than);
	for (let e = 0; e < n; e++) {
		let least = Number.POSITIVE_INFINITY;
		let prior = -1;
		for (let p = -1; p < e; p++) {
			if (p >= 0 && !Number.isFinite(best[p + 1])) continue;
			const c = best[p + 1] + between(p, p + 1, e) + cost(e, p, e);
			if (lower(c, least)) {
				least = c;
				prior = p;
			}
		}
		best.push(e === 0 ? Number.POSITIVE_INFINITY : least);
		from.push(prior);
	}
	let total = Number.POSITIVE_INFINITY;
	let end = -1;
	for (let e = -1; e < n; e++) {
		if (e >= 0 && !Number.isFinite(best[e + 1])) continue;
		const c = best[e + 1] + between(e, e + 1, n);
		if (lower(c, total)) {
			total = c;
			end = e;
		}
	}
	const events: number[] = [];
	for (let e = end; e >= 0; e = from[e + 1]) events.unshift(produced[e].request);
	let baseline = 0;
	for (let i = 0; i < n; i++) baseline += cost(i, -1, -1);
	return { cost: total, baseline, ratio: baseline > 0 ? total / baseline : 1, events };
}
