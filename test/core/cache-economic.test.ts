/**
 * Unit tests of the cache-economic fold policy: its two tails, the break-even rule, the choice of
 * the event's first block, the compaction backstop, urgency, and knobs read from the view.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	DEFAULT_ECONOMIC,
	DEFAULT_LADDER,
	type EconomicConfig,
	type FoldCommand,
	type PolicyView,
	type ViewBlock,
} from "../../src/core/contract.ts";
import {
	backstopOf,
	EVENT_ROOM_SHARE,
	economicTails,
	economize,
	horizonOf,
	hotTailOf,
	KEPT_OVERHEAD,
	leastEventOf,
	PAYBACK_SHARE,
	piCompactionPoint,
	REWRITE_IN_READS,
	URGENT_HOT_TAIL,
} from "../../src/core/policy/cache-economic.ts";

import { conduct } from "../../src/core/policy/fold-ladder.ts";
import { workingSet } from "../../src/core/policy/working-set.ts";

function blk(id: string, tokens: number, saving: number, flags: Partial<ViewBlock> = {}): ViewBlock {
	return { id, kind: "toolResult", tokens, eligible: true, frozen: false, held: false, saving, ...flags };
}

/** Never-foldable text of `tokens`. */
function text(id: string, tokens: number): ViewBlock {
	return blk(id, tokens, 0, { kind: "text", eligible: false });
}

/** Knobs these tests are written against, fixed so that tuning the shipped defaults cannot change them. */
const KNOBS: EconomicConfig = {
	hotTail: 5000,
	coldTail: 1000,
	horizon: 20,
	foldFrom: 15_000,
	backstopAt: 30_000,
	minEvent: 1_000,
};

/** The same shares of a 200k window, for the tests of larger sessions. */
const WIDE: Partial<EconomicConfig> = { foldFrom: 30_000, backstopAt: 60_000, minEvent: 2_000 };

function mkView(blocks: ViewBlock[], opts: { window?: number; config?: Partial<EconomicConfig> } = {}): PolicyView {
	const usage = blocks.reduce((n, b) => n + b.tokens, 0);
	return {
		blocks,
		usage,
		window: opts.window ?? 100_000,
		neverCacheRead: false,
		config: { ...DEFAULT_LADDER, ...KNOBS, ...opts.config },
	};
}

function folds(commands: FoldCommand[]): string[] {
	return commands.map((c) => {
		assert.equal(c.type, "fold");
		return c.id;
	});
}

describe("economic tails", () => {
	it("keeps results within hotTail and everything else within coldTail, and always the newest block", () => {
		const blocks = [
			blk("r:old", 1000, 900),
			blk("a:think", 1000, 900, { kind: "thinking" }),
			blk("r:mid", 1000, 900),
			text("a:newest", 500),
		];
		const tail = economicTails(blocks, 2000, 1000);
		assert.deepEqual([...tail].sort(), ["a:newest", "r:mid"]);
		assert.ok(economicTails(blocks, 1000, 3000).has("a:think"));
		assert.deepEqual([...economicTails(blocks, 0, 0)], ["a:newest"]);
	});
});

describe("the break-even rule", () => {
	it("folds when the saving over the horizon repays the rewrite, not when it does not", () => {
		// 20k of old results saving 18k, then 20k of text the event would rewrite, then a 6k tail: the
		// rewritten suffix is 2k of digests + 20k + 6k = 28k tokens, 322k reads at 11.5 a token. Over
		// 20 requests the saving is 360k reads (it pays); over 10, 180k (it does not).
		const paying = [blk("r:a", 10_000, 9000), blk("r:b", 10_000, 9000), text("t:1", 20_000), text("t:new", 6000)];
		assert.equal(KNOBS.horizon, 20);
		assert.equal(REWRITE_IN_READS, 11.5);
		assert.deepEqual(folds(economize(mkView(paying, { window: 200_000, config: WIDE }))), ["r:a", "r:b"]);
		assert.deepEqual(economize(mkView(paying, { window: 200_000, config: { ...WIDE, horizon: 10 } })), []);
	});

	it("prices the rewrite at the cache's own write premium when the view carries one", () => {
		// The paying event above: 28k rewritten against 360k reads saved over 20 requests. At 11.5 reads a
		// token (Anthropic's 5-minute write) it pays, at 20 (the one-hour write, 2x) 560k does not.
		const paying = [blk("r:a", 10_000, 9000), blk("r:b", 10_000, 9000), text("t:1", 20_000), text("t:new", 6000)];
		const priced = (rewriteInReads: number): PolicyView => ({
			...mkView(paying, { window: 200_000, config: WIDE }),
			cache: { warm: true, rewriteInReads },
		});
		assert.deepEqual(folds(economize(priced(11.5))), ["r:a", "r:b"]);
		assert.deepEqual(folds(economize(priced(12.8))), ["r:a", "r:b"], "358k: still repaid");
		assert.deepEqual(economize(priced(12.9)), [], "361k: not repaid over 20 requests");
		assert.deepEqual(economize(priced(20)), []);
	});

	it("counts the saving over no more than a quarter of the requests the session has made: it may end soon after", () => {
		// The paying event above repays over 20 requests (360k reads against 322k), not over 10 (180k):
		// over 18 (324k) but not 17 (306k).
		const paying = [blk("r:a", 10_000, 9000), blk("r:b", 10_000, 9000), text("t:1", 20_000), text("t:new", 6000)];
		// The default horizon (20): the tests' knobs set one, which is taken as given.
		const { horizon: _set, ...unset } = { ...DEFAULT_LADDER, ...KNOBS, ...WIDE };
		const view = (requests?: number): PolicyView => ({
			...mkView(paying, { window: 200_000 }),
			config: unset,
			...(requests === undefined ? {} : { requests }),
		});
		assert.equal(DEFAULT_ECONOMIC.horizon, 20);
		assert.equal(PAYBACK_SHARE, 0.25);
		assert.deepEqual(economize(view(18)), [], "18 requests so far: counted over 4.5");
		assert.deepEqual(economize(view(71)), [], "71: counted over 17.75, 319.5k reads, short of the rewrite");
		assert.deepEqual(folds(economize(view(72))), ["r:a", "r:b"], "72: over 18, 324k reads repay it");
		assert.deepEqual(folds(economize(view(500))), ["r:a", "r:b"], "a long session: the horizon binds");
		assert.deepEqual(folds(economize(view())), ["r:a", "r:b"], "unknown: the horizon");
		const knobs = { ...KNOBS, ...WIDE };
		assert.equal(horizonOf(view(0), knobs), 1, "never below one request");
		assert.equal(horizonOf(view(2), knobs), 1, "never below one request");
		assert.equal(horizonOf(view(28), knobs), 7);
		assert.equal(horizonOf(view(84), knobs), 20);
		const set = (requests: number, horizon: number) => ({ ...view(requests), config: { ...unset, horizon } });
		assert.equal(horizonOf(set(7, 1000), { ...knobs, horizon: 1000 }), 1000, "a horizon the user set is as given");
		assert.deepEqual(folds(economize(set(10, 20))), ["r:a", "r:b"], "set to 20: counted over 20");
		// Cold or never-read caches rewrite for free: no request count holds an event back there.
		assert.deepEqual(folds(economize({ ...view(2), cache: { warm: false } })), ["r:a", "r:b"]);
		// Where Pi compacts on its own (window less reserve) before another least event (2k) could
		// gather, the event spares that compaction: the whole horizon. 46k used, Pi's point at 47k.
		assert.deepEqual(folds(economize({ ...view(10), reserve: 153_000 })), ["r:a", "r:b"], "Pi compacts at 47k");
		assert.equal(horizonOf({ ...view(10), reserve: 153_000 }, knobs, 2_000), 20);
		assert.deepEqual(economize({ ...view(10), reserve: 151_000 }), [], "at 49k, 3k away: the share");
		assert.equal(horizonOf({ ...view(10), reserve: 152_000 }, knobs, 1_999), 2.5);
		// Where the context passes the fold budget before another least event could gather, the alternative
		// is an urgent event, which folds what the model is using too: the whole horizon. 46k used.
		const budget = (fraction: number) => ({ ...view(10), config: { ...unset, budgetFraction: fraction } });
		assert.equal(horizonOf(budget(0.24), knobs, 2_000), 20, "budget 48k, 2k away");
		assert.deepEqual(folds(economize(budget(0.24))), ["r:a", "r:b"], "the event comes before the budget");
		assert.equal(horizonOf(budget(0.25), knobs, 1_999), 2.5, "budget 50k, farther than a least event: the share");
	});

	it("starts the event where it pays best, skipping an old small candidate before a long raw stretch", () => {
		const blocks = [
			blk("r:small", 600, 500),
			text("t:long", 40_000),
			blk("r:big1", 12_000, 11_000),
			blk("r:big2", 12_000, 11_000),
			text("t:new", 6000),
		];
		assert.deepEqual(folds(economize(mkView(blocks, { window: 200_000, config: WIDE }))), ["r:big1", "r:big2"]);
	});

	it("when the cache is cold anyway, folds without charging the rewrite, once it saves half the least event", () => {
		// Does not pay over 10 requests against a warm cache, and masks 18k: less than minEvent (36k), half of it.
		const blocks = [blk("r:a", 10_000, 9000), blk("r:b", 10_000, 9000), text("t:1", 20_000), text("t:new", 9000)];
		const knobs = { ...WIDE, horizon: 10, minEvent: 36_000 };
		assert.deepEqual(economize(mkView(blocks, { window: 200_000, config: knobs })), []);
		const warm = { ...mkView(blocks, { window: 200_000, config: knobs }), cache: { warm: true } };
		assert.deepEqual(economize(warm), []);
		const cold = { ...mkView(blocks, { window: 200_000, config: knobs }), cache: { warm: false } };
		assert.deepEqual(folds(economize(cold)), ["r:a", "r:b"]);
		const unknown = { ...mkView(blocks, { window: 200_000, config: knobs }), cache: { warm: undefined } };
		assert.deepEqual(economize(unknown), []);
		const dearer = {
			...mkView(blocks, { window: 200_000, config: { ...knobs, minEvent: 40_000 } }),
			cache: { warm: false },
		};
		assert.deepEqual(economize(dearer), [], "18k saved is less than half of a 40k least event");
	});

	it("when the session never read from the cache, folds without charging the rewrite, once it saves half the least event", () => {
		const blocks = [blk("r:a", 10_000, 9000), blk("r:b", 10_000, 9000), text("t:1", 20_000), text("t:new", 9000)];
		const knobs = { ...WIDE, horizon: 10, minEvent: 36_000 };
		assert.deepEqual(economize(mkView(blocks, { window: 200_000, config: knobs })), []);
		const never = { ...mkView(blocks, { window: 200_000, config: knobs }), neverCacheRead: true };
		assert.deepEqual(folds(economize(never)), ["r:a", "r:b"]);
		const below = { ...never, config: { ...never.config, foldFrom: 100_000 } };
		assert.deepEqual(economize(below), [], "foldFrom still applies");
	});

	it("does not fire a paying event that masks less than minEvent", () => {
		const blocks = [blk("r:a", 10_000, 9000), text("t:b", 5000), text("t:new", 6000)];
		assert.deepEqual(folds(economize(mkView(blocks))), ["r:a"]);
		assert.deepEqual(economize(mkView(blocks, { config: { minEvent: 10_000 } })), []);
	});

	it("shrinks the least event to a fifth of where Pi compacts on its own, never grows it", () => {
		const knobs = { ...KNOBS, minEvent: 11_200 };
		const at = (window: number, reserve?: number) =>
			leastEventOf(
				{ ...mkView([], { window, config: knobs }), ...(reserve === undefined ? {} : { reserve }) },
				knobs,
			);
		assert.equal(at(32_000, 16_384), EVENT_ROOM_SHARE * (32_000 - 16_384));
		assert.equal(at(140_000, 16_384), 11_200, "a large window: minEvent");
		assert.equal(at(32_000), 11_200, "Pi's compaction off: minEvent");
		assert.equal(at(10_000, 16_384), 0, "Pi compacts at once: any paying event");
		// ~7.5k of old results saving 7k in a 32k window: under minEvent, over a fifth of 15.6k.
		const blocks = [blk("r:a", 4000, 3500), blk("r:b", 4000, 3500), text("t:1", 2000), text("t:new", 6000)];
		const view = mkView(blocks, { window: 32_000, config: { ...knobs, foldFrom: 10_000 } });
		assert.deepEqual(economize(view), []);
		assert.deepEqual(folds(economize({ ...view, reserve: 16_384 })), ["r:a", "r:b"]);
	});

	it("does nothing below foldFrom", () => {
		const blocks = [blk("r:a", 10_000, 9000), blk("r:b", 10_000, 9000), text("t:new", 6000)];
		assert.ok(folds(economize(mkView(blocks))).length > 0);
		assert.deepEqual(economize(mkView(blocks, { config: { foldFrom: 30_000 } })), []);
	});

	it("never folds held, frozen or ineligible blocks", () => {
		const blocks = [
			blk("r:held", 10_000, 9000, { held: true }),
			blk("r:frozen", 10_000, 0, { frozen: true }),
			blk("r:inel", 10_000, 0, { eligible: false }),
			blk("r:ok", 10_000, 9000),
			text("t:new", 6000),
		];
		assert.deepEqual(folds(economize(mkView(blocks, { window: 200_000, config: WIDE }))), ["r:ok"]);
	});
});

it("decides the same in any window the context is under the budget of: its sizes are tokens (Pi's compaction unknown)", () => {
	const growing = [blk("r:a", 10_000, 9000), blk("r:b", 10_000, 9000), text("t:1", 8000), text("t:new", 6000)];
	const atLeast = (window: number) => economize(mkView(growing, { window, config: DEFAULT_ECONOMIC }));
	assert.deepEqual(folds(atLeast(140_000)), ["r:a", "r:b"]);
	for (const window of [64_000, 200_000, 1_000_000]) assert.deepEqual(atLeast(window), atLeast(140_000), `${window}`);
	const small = [blk("r:a", 5000, 4500), text("t:1", 2000), text("t:new", 6000)];
	for (const window of [64_000, 140_000, 1_000_000]) {
		assert.deepEqual(economize(mkView(small, { window, config: DEFAULT_ECONOMIC })), [], "under foldFrom anywhere");
	}
});

describe("backstop and urgency", () => {
	it("past the budget, an urgent event that cannot save the floor (a share of the window) compacts instead", () => {
		// 80.1k of a 100k window is past the 75k budget; the one old foldable block saves 500, under 2k.
		const blocks = [blk("r:old", 600, 500), text("t:big", 79_000), blk("r:new", 500, 400)];
		const view = mkView(blocks);
		assert.ok(view.usage > 75_000 && view.config.floor * view.window > 500, "urgent, and under the floor");
		assert.deepEqual(
			economize(view).map((c) => c.type),
			["compact"],
		);
		// The same block saving more than the floor folds, urgently (the text past the backstop compacts too).
		const saves = mkView([blk("r:old", 3000, 2500), text("t:big", 77_000), blk("r:new", 500, 400)]);
		assert.deepEqual(
			economize(saves).map((c) => (c.type === "fold" ? `${c.id}${c.urgent ? " urgent" : ""}` : c.type)),
			["r:old urgent", "compact"],
		);
	});

	it("asks for a compaction when folding everything would still leave usage at or above backstopAt", () => {
		const blocks = [text("t:old", 30_000), blk("r:a", 5000, 4000), text("t:new", 5000)];
		const commands = economize(mkView(blocks));
		assert.deepEqual(commands.at(-1), { type: "compact", usage: 40_000, budget: 75_000, maskable: 4000 });
		assert.equal(commands.filter((c) => c.type === "compact").length, 1);
		assert.equal(folds(economize(mkView(blocks, { config: { backstopAt: 50_000 } }))).length, 1);
	});

	it("weighs the backstop in the provider's count: a CJK result saves about four times its chars/4", () => {
		// The provider counts 40k; the old results, CJK text, save 4k at chars/4 but 16k as it counts them.
		const cjk = [text("t:old", 6000), blk("r:a", 5000, 2000), blk("r:b", 5000, 2000), text("t:new", 5000)];
		const usage = 40_000;
		const plain = { ...mkView(cjk), usage };
		assert.equal(plain.usage, 40_000);
		assert.equal(economize(plain).at(-1)?.type, "compact", "at chars/4 folding cannot bring 40k under 30k");
		const counted = cjk.map((b) => (b.saving > 0 ? { ...b, providerSaving: 4 * b.saving } : b));
		assert.ok(
			economize({ ...mkView(counted), usage }).every((c) => c.type === "fold"),
			"as the provider counts them, folding brings 40k under 30k: no compaction",
		);
		assert.ok(
			workingSet({ ...mkView(counted), usage }).every((c) => c.type === "fold"),
			"the same under the working set's protection",
		);
	});

	it("never puts the backstop below what a compaction leaves: KEPT_OVERHEAD × Pi's keepRecentTokens", () => {
		const knobs = { ...KNOBS, backstopAt: 18_000 };
		const view = (window: number, keepRecent?: number): PolicyView => ({
			...mkView([], { window, config: knobs }),
			...(keepRecent === undefined ? {} : { keepRecent }),
		});
		assert.equal(backstopOf(view(100_000), knobs), 18_000);
		assert.equal(backstopOf(view(100_000, 20_000), knobs), 20_000 * KEPT_OVERHEAD);
		assert.equal(backstopOf(view(1_000_000, 20_000), knobs), 20_000 * KEPT_OVERHEAD, "whatever the window");
		assert.equal(backstopOf(view(1_000_000, 8_000), knobs), 18_000, "whatever the window");
		// 40k of text that never folds: above 30k (the tests' backstopAt), so a
		// compaction is asked for, unless the compaction keeps 40k raw anyway.
		const blocks = [text("t:old", 30_000), blk("r:a", 5000, 4000), text("t:new", 5000)];
		assert.equal(economize(mkView(blocks)).at(-1)?.type, "compact");
		const keeps = { ...mkView(blocks), keepRecent: 40_000 };
		assert.ok(economize(keeps).every((c) => c.type === "fold"));
	});

	it("keeps folding what pays while a compaction is asked for: it runs only once the agent's run is over", () => {
		const blocks = [text("t:old", 30_000), blk("r:a", 10_000, 9000), text("t:new", 6000)];
		const commands = economize(mkView(blocks));
		assert.deepEqual(
			commands.map((c) => c.type),
			["fold", "compact"],
		);
		assert.deepEqual(folds(commands.slice(0, 1)), ["r:a"]);
		const idle = [text("t:old", 30_000), blk("r:a", 10_000, 100), text("t:new", 6000)];
		assert.deepEqual(
			economize(mkView(idle)).map((c) => c.type),
			["compact"],
			"nothing pays: the compaction alone",
		);
	});

	it("past the budget folds every candidate even when the event does not pay", () => {
		const blocks = [blk("r:a", 4000, 3000), text("t:old", 74_000), text("t:new", 6000)];
		const config = { backstopAt: 100_000, horizon: 1 };
		assert.deepEqual(
			economize(mkView(blocks, { config })).map((c) => c.type === "fold" && c.urgent),
			[true],
		);
		const nothing = [text("t:old", 78_000), text("t:new", 6000)];
		assert.equal(economize(mkView(nothing, { config }))[0]?.type, "compact");
	});

	it("past the budget keeps a default hot tail of URGENT_HOT_TAIL at least, what an ordinary event folds", () => {
		// r:near begins 3k before the end: outside a 2k hot tail, inside the urgent one; r:a 8k, outside both.
		const hot = [blk("r:a", 40_000, 39_000), text("t:mid", 2000), blk("r:near", 3000, 2900), text("t:new", 3000)];
		/** The view with no hot tail set: the profile's default (2000 here) applies. */
		const unset = (blocks: ViewBlock[], window = 100_000): PolicyView => {
			const view = mkView(blocks, { window });
			delete view.config.hotTail;
			return view;
		};
		const defaults = { hotTail: 2000 };
		const ordinary = unset(hot);
		assert.ok(ordinary.usage < 75_000, "within the budget");
		assert.deepEqual(folds(economize(ordinary, undefined, defaults)), ["r:a", "r:near"]);
		const past = [text("t:old", 40_000), ...hot];
		assert.ok(URGENT_HOT_TAIL > 3000 && URGENT_HOT_TAIL < 8000);
		assert.deepEqual(
			economize(unset(past), undefined, defaults)
				.filter((c) => c.type === "fold")
				.map((c) => [c.id, c.type === "fold" && c.urgent]),
			[["r:a", true]],
		);
		const set = economize(mkView(past, { config: { hotTail: 2000 } }), undefined, defaults);
		assert.deepEqual(folds(set.filter((c) => c.type === "fold")), ["r:a", "r:near"], "a hot tail the user set holds");
	});

	it("the urgent hot tail is never more than half the budget", () => {
		const view = mkView([blk("r:a", 1000, 900)], { window: 8000 });
		delete view.config.hotTail;
		const knobs = { ...KNOBS, hotTail: 1000 };
		const budget = 6000;
		assert.equal(hotTailOf(view, knobs, budget, true), 3000);
		assert.equal(hotTailOf(view, knobs, 100_000, true), URGENT_HOT_TAIL);
		assert.equal(hotTailOf(view, knobs, 100_000, false), 1000);
		assert.equal(hotTailOf(mkView([], { config: { hotTail: 1000 } }), knobs, 100_000, true), 1000, "set: as given");
	});
});

describe("savings read only when they can matter", () => {
	/** `blk` whose saving counts its reads (a real view works each one out, as a digest, on first read). */
	function counted(id: string, tokens: number, saving: number, reads: { n: number }): ViewBlock {
		return {
			...blk(id, tokens, 0),
			get saving() {
				reads.n++;
				return saving;
			},
		};
	}

	it("reads none when the blocks that could fold cost less than the least event, short of backstop and budget", () => {
		const reads = { n: 0 };
		// minEvent 10k: an event must save 10k; the foldable blocks outside the tails cost 9k.
		const config = { minEvent: 10_000, foldFrom: 5_000 };
		const blocks = [counted("r:a", 4500, 4000, reads), counted("r:b", 4500, 4000, reads), text("t:new", 6000)];
		assert.deepEqual(economize(mkView(blocks, { config })), []);
		assert.equal(reads.n, 0);
	});

	it("reads them once the foldable blocks could make an event, and folds as before", () => {
		const reads = { n: 0 };
		const config = { minEvent: 10_000, foldFrom: 5_000 };
		const blocks = [counted("r:a", 6000, 5500, reads), counted("r:b", 6000, 5500, reads), text("t:new", 6000)];
		assert.deepEqual(folds(economize(mkView(blocks, { config }))), ["r:a", "r:b"]);
		assert.ok(reads.n > 0);
	});

	it("reads none when the blocks a protection leaves cost less than the least event", () => {
		const reads = { n: 0 };
		const config = { minEvent: 10_000, foldFrom: 5_000 };
		// Outside the tails 15k could fold, but the 6k block is in use: the 9k left cannot make an event.
		const used = counted("r:used", 6000, 5500, reads);
		const blocks = [used, counted("r:a", 4500, 4000, reads), counted("r:b", 4500, 4000, reads), text("t:new", 6000)];
		const view = mkView(blocks, { config });
		assert.deepEqual(economize(view, { keep: (b) => b.id === "r:used" }), []);
		assert.equal(reads.n, 0);
		assert.deepEqual(folds(economize(view, { keep: () => false })), ["r:used", "r:a", "r:b"]);
	});

	it("reads none of the blocks a protection keeps, even past the backstop while Pi's compaction is far", () => {
		const reads = { n: 0 };
		const config = { minEvent: 1_000, foldFrom: 5_000, backstopAt: 10_000 };
		const blocks = [counted("r:a", 6000, 5500, reads), counted("r:b", 6000, 5500, reads), text("t:new", 6000)];
		// 18k used of a 100k window whose compaction (16k reserve) comes far later: no backstop test.
		const view = { ...mkView(blocks, { config }), reserve: 16_000 };
		const kept = economize(view, { keep: () => true });
		assert.deepEqual(folds(kept), []);
		assert.equal(kept.length, 0, "no compaction either");
		assert.equal(reads.n, 0);
		// Kept by use or not, the same view folds both once nothing protects them.
		assert.deepEqual(folds(economize(view, { keep: () => false })), ["r:a", "r:b"]);
	});

	it("stops the backstop count once the foldable savings could bring the usage under it", () => {
		const reads = { n: 0 };
		const config = { minEvent: 1_000, foldFrom: 5_000, backstopAt: 10_000 };
		const older = Array.from({ length: 6 }, (_, i) => counted(`r:${i}`, 3000, 2900, reads));
		// 24k used, backstop 10k: 14k of room; the kept blocks' savings pass it at the fifth.
		const view = mkView([...older, text("t:new", 6000)], { config });
		assert.deepEqual(economize(view, { keep: () => true }), []);
		assert.equal(reads.n, 5);
		// Where they cannot, the compaction is asked for, with every saving counted.
		const tight = mkView([...older, text("t:big", 40_000)], { config });
		reads.n = 0;
		assert.deepEqual(
			economize(tight, { keep: () => true }).map((c) => c.type),
			["compact"],
		);
		assert.ok(reads.n >= older.length);
	});
});

describe("the backstop and Pi's own compaction point", () => {
	const config = { minEvent: 1_000, foldFrom: 5_000, backstopAt: 10_000 };
	const older = Array.from({ length: 6 }, (_, i) => blk(`r:${i}`, 3000, 2900));
	// A 100k window whose compaction reserve is 16k: Pi compacts past 84k; 60 % of that is 50.4k. Earlier
	// folds keep 1k out of the context (a context nothing folded out of is plain Pi's, tested below).
	const at = (usage: number, compacted: boolean, masked = 1_000): PolicyView => ({
		...mkView([...older, text("t:big", usage - 18_000)], { config }),
		reserve: 16_000,
		masked,
		...(compacted ? { compacted } : {}),
	});
	const asks = (view: PolicyView) => economize(view, { keep: () => true }).some((c) => c.type === "compact");

	it("is 60 % of Pi's point before any compaction, Pi's point after one, none where Pi's is off", () => {
		assert.equal(piCompactionPoint(at(70_000, false)), 50_400);
		assert.equal(piCompactionPoint(at(70_000, true)), 84_000);
		assert.equal(piCompactionPoint(mkView([text("t", 70_000)], { config })), 0);
	});

	it("a protecting policy asks for a first compaction past 60 % of Pi's point, and for a later one only past Pi's point", () => {
		assert.equal(asks(at(48_000, false)), false, "short of 60 %");
		assert.equal(asks(at(52_000, false)), true, "past 60 %, before any compaction");
		// Context-fold's compaction keeps less raw than Pi's, so at the same share it would come round
		// more often than Pi's: after one, it waits for Pi's own point.
		assert.equal(asks(at(70_000, true)), false, "after a compaction, short of Pi's point");
		assert.equal(asks(at(86_000, true)), true, "after a compaction, past Pi's point");
	});

	it("asks for no compaction short of Pi's point while nothing is folded, whatever the policy", () => {
		// 75k: past 60 % of Pi's point and past the budget (75 % of the window), short of Pi's 84k.
		const plain = at(76_000, false, 0);
		const none = { ...plain, blocks: plain.blocks.map((b) => ({ ...b, eligible: false })) };
		// Outputs that may fold but whose digests save nothing (many short ones): as good as none.
		const saveNothing = { ...plain, blocks: plain.blocks.map((b) => ({ ...b, saving: 0 })) };
		for (const [name, policy] of [
			["economic", (v: PolicyView) => economize(v)],
			["protecting", (v: PolicyView) => economize(v, { keep: () => true })],
			["ladder", (v: PolicyView) => conduct(v)],
		] as const) {
			assert.deepEqual(policy(none), [], `${name}: nothing foldable, nothing folded: plain Pi's context`);
			assert.deepEqual(policy(saveNothing), [], `${name}: folding would save nothing: plain Pi's context`);
			assert.ok(
				policy({ ...none, usage: 85_000 }).some((c) => c.type === "compact"),
				`${name}: past Pi's point, as Pi`,
			);
			assert.ok(
				policy({ ...none, masked: 20_000 }).some((c) => c.type === "compact"),
				`${name}: with folds in the context (more than the least event), the early compaction stays`,
			);
		}
	});
});
