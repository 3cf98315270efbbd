/**
 * The foresight floor: what a run's requests would cost under a fold policy that knew the future.
 * Every block is sent raw once, stays raw until the last request at which the recorded model used
 * it (a reference it held, see visibility.ts `needs`), and after that costs a digest of
 * `digestTokens`, unless no fold may touch it at all (user text, summaries, signed thinking: `fixed`,
 * see blocks.ts), which stays raw as in every context-fold run. Folds cost no rewrite, the cache never
 * expires and nothing is warmed. The same formula over the run as sent (nothing folded) is the
 * baseline, so the ratio compares like with like. On the `pi` run it bounds, at full visibility,
 * how far any fold policy could bring a session's cost down; a session whose floor is above a cost
 * target cannot meet that target without losing references. Allowed to leave `lose` references
 * unseen, the floor gives up the ones that let it fold the most the soonest (the model's latest uses
 * of a block, chosen exactly over all blocks): what a policy could reach at a visibility bar. Pure.
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

/** The floor's cost, the same formula's cost of the run as sent, and their ratio. */
export interface Foresight {
	cost: number;
	baseline: number;
	ratio: number;
}

/** Where a foldable block is sent after its first request: the request and its tokens there. */
type Sends = { request: number; tokens: number }[];

/** A foldable block's reads, raw up to request `last` and a digest after it. */
function readsOf(sends: Sends, last: number, model: PriceModel, digestTokens: number): number {
	let cost = 0;
	for (const s of sends) cost += (s.request <= last ? s.tokens : Math.min(s.tokens, digestTokens)) * model.read;
	return cost;
}

/**
 * The most the floor saves by leaving at most `lose` references unseen. Leaving a block's latest
 * `j` uses unseen moves its last use back to the one before them; a multiple-choice knapsack over
 * blocks (at most `lose` uses in all) picks the best set exactly.
 */
function bestLoss(
	blocks: ReadonlyMap<number, Sends>,
	needs: ReadonlyMap<number, readonly number[]>,
	lose: number,
	price: (sends: Sends, last: number) => number,
): number {
	let best = new Array<number>(lose + 1).fill(0);
	for (const [id, uses] of needs) {
		const sends = blocks.get(id);
		if (!sends || uses.length === 0) continue;
		const full = price(sends, uses[uses.length - 1]);
		const gains: number[] = [];
		for (let j = 1; j <= Math.min(lose, uses.length); j++) {
			gains.push(full - price(sends, j === uses.length ? -1 : uses[uses.length - 1 - j]));
		}
		const next = best.slice();
		for (let k = 1; k <= lose; k++) {
			for (let j = 1; j <= Math.min(k, gains.length); j++) next[k] = Math.max(next[k], best[k - j] + gains[j - 1]);
		}
		best = next;
	}
	return best[lose];
}

/**
 * Prices the produced requests twice, in input-token equivalents: a block's first appearance is
 * a cache write, each later request reads it, raw in the baseline, and in the floor raw only while
 * the model still needs it (the system prompt and tool declarations, the first block, and the fixed
 * blocks, always). `needs` maps a block to the requests of the references it served, ascending;
 * `lose` is how many of them the floor may leave unseen (0: full visibility).
 */
export function foresightFloor(
	produced: readonly Produced[],
	needs: ReadonlyMap<number, readonly number[]>,
	model: PriceModel,
	fixed: readonly boolean[] = [],
	digestTokens = FORESIGHT_DIGEST_TOKENS,
	lose = 0,
): Foresight {
	const blocks = new Map<number, Sends>();
	let cost = 0;
	let baseline = 0;
	for (const p of produced) {
		p.shape.ids.forEach((id, k) => {
			const tokens = p.shape.tokens[k];
			const sends = blocks.get(id);
			if (!sends) {
				blocks.set(id, []);
				cost += tokens * model.write;
				baseline += tokens * model.write;
				return;
			}
			baseline += tokens * model.read;
			if (k === 0 || fixed[id] === true) cost += tokens * model.read;
			else sends.push({ request: p.request, tokens });
		});
	}
	const price = (sends: Sends, last: number) => readsOf(sends, last, model, digestTokens);
	for (const [id, sends] of blocks) cost += price(sends, needs.get(id)?.at(-1) ?? -1);
	if (lose > 0) cost -= bestLoss(blocks, needs, lose, price);
	return { cost, baseline, ratio: baseline > 0 ? cost / baseline : 1 };
}
