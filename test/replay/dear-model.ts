/**
 * A price model for the replay tests of warming mechanics: Anthropic's 5-minute ratios at prices so
 * dear that Pi's warming rule sends every refresh, within a run or between runs, even of the small
 * prompts of synthetic sessions (at real prices Pi warms only large prompts, see price.ts piWarming).
 */
import { PRICE_MODELS, type PriceModel } from "../../src/replay/price.ts";

/** Anthropic's 5-minute model, every refresh paying for itself. */
export const DEAR: PriceModel = {
	...PRICE_MODELS["anthropic-5m"],
	reference: { model: "dear", input: 1e6, output: 0, cacheRead: 1e5, cacheWrite: 1.25e6 },
};
