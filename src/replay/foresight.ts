/**
 * The foresight floor: what a run's requests would cost under a fold policy that knew the future.
 * Every block is sent raw once, stays raw until the last request at which the recorded model used
 * it (a reference it held, see visibility.ts `lastNeeded`), and after that costs a digest of
 * `digestTokens`, unless no fold may touch it at all (user text, summaries, signed thinking: `fixed`,
 * see blocks.ts), which stays raw as in every context-fold run. Folds cost no rewrite, the cache never
 * expires and nothing is warmed. The same formula over the run as sent (nothing folded) is the
 * baseline, so the ratio compares like with like. On the `pi` run it bounds, at full visibility,
 * how far any fold policy could bring a session's cost down; a session whose floor is above a cost
 * target cannot meet that target without losing references. Pure.
 */
import type { PriceModel } from "./price.ts";
import type { Produced } from "./visibility.ts";

/** Tokens a folded block still costs in the floor: about a short digest. */
export const FORESIGHT_DIGEST_TOKENS = 30;

/** The floor's cost, the same formula's cost of the run as sent, and their ratio. */
export interface Foresight {
	cost: number;
	baseline: number;
	ratio: number;
}

/**
 * Prices the produced requests twice, in input-token equivalents: a block's first appearance is
 * a cache write, each later request reads it, raw in the baseline, and in the floor raw only while
 * the model still needs it (the system prompt and tool declarations, the first block, and the fixed
 * blocks, always).
 */
export function foresightFloor(
	produced: readonly Produced[],
	lastNeeded: ReadonlyMap<number, number>,
	model: PriceModel,
	fixed: readonly boolean[] = [],
	digestTokens = FORESIGHT_DIGEST_TOKENS,
): Foresight {
	const firstSeen = new Set<number>();
	let cost = 0;
	let baseline = 0;
	for (const p of produced) {
		p.shape.ids.forEach((id, k) => {
			const tokens = p.shape.tokens[k];
			if (!firstSeen.has(id)) {
				firstSeen.add(id);
				cost += tokens * model.write;
				baseline += tokens * model.write;
				return;
			}
			baseline += tokens * model.read;
			const needed = k === 0 || fixed[id] === true || (lastNeeded.get(id) ?? -1) >= p.request;
			cost += (needed ? tokens : Math.min(tokens, digestTokens)) * model.read;
		});
	}
	return { cost, baseline, ratio: baseline > 0 ? cost / baseline : 1 };
}
