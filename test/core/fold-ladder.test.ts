/**
 * The ladder policy: thresholds, the cold threshold, urgent events and the floor, the compact
 * command, the tail clamp, oldest-first selection, and folding when the cache is cold anyway.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	budgetOf,
	type CacheFacts,
	DEFAULT_LADDER,
	type FoldCommand,
	type LadderConfig,
	type PolicyView,
	tailOf,
	type ViewBlock,
} from "../../src/core/contract.ts";
import { conduct, ladderMarks, protectedTail } from "../../src/core/policy/fold-ladder.ts";

/** An eligible, foldable candidate unless flags say otherwise. */
function blk(id: string, tokens: number, saving: number, flags: Partial<ViewBlock> = {}): ViewBlock {
	return { id, kind: "toolResult", tokens, eligible: true, frozen: false, held: false, saving, ...flags };
}

/** The newest block: big enough to fill the default 20k tail alone, never foldable. */
const NEWEST = blk("u:newest", 25_000, 0, { kind: "user", eligible: false });

function mkView(
	blocks: ViewBlock[],
	usage: number,
	opts: { window?: number; neverCacheRead?: boolean; cache?: CacheFacts; config?: Partial<LadderConfig> } = {},
): PolicyView {
	return {
		blocks,
		usage,
		window: opts.window ?? 100_000,
		neverCacheRead: opts.neverCacheRead ?? false,
		...(opts.cache ? { cache: opts.cache } : {}),
		config: { ...DEFAULT_LADDER, ...opts.config },
	};
}

function folds(commands: FoldCommand[]): string[] {
	return commands.map((c) => {
		assert.equal(c.type, "fold");
		return c.id;
	});
}

/** Four candidates saving 4000 each (16% of a 100k window), then the newest block. */
function fourCandidates(): ViewBlock[] {
	return [blk("r:c1", 5000, 4000), blk("r:c2", 5000, 4000), blk("r:c3", 5000, 4000), blk("r:c4", 5000, 4000), NEWEST];
}

describe("budget and tail", () => {
	it("budget is min(200k, 75% of the window)", () => {
		assert.equal(budgetOf(DEFAULT_LADDER, 100_000), 75_000);
		assert.equal(budgetOf(DEFAULT_LADDER, 200_000), 150_000);
		assert.equal(budgetOf(DEFAULT_LADDER, 1_000_000), 200_000);
	});

	it("a budgetCap of 0 means no cap: the budget is budgetFraction of the window", () => {
		const uncapped = { ...DEFAULT_LADDER, budgetCap: 0 };
		assert.equal(budgetOf(uncapped, 100_000), 75_000);
		assert.equal(budgetOf(uncapped, 1_000_000), 750_000);
		assert.equal(tailOf(uncapped, 200_000), 20_000);
	});

	it("with no cap, a context below the threshold folds nothing and above it folds in an ordinary event", () => {
		const blocks = fourCandidates();
		assert.deepEqual(conduct(mkView(blocks, 30_000, { config: { budgetCap: 0 } })), []);
		const ordinary = conduct(mkView(blocks, 60_000, { config: { budgetCap: 0 } }));
		assert.deepEqual(folds(ordinary), ["r:c1", "r:c2", "r:c3", "r:c4"]);
		assert.ok(ordinary.every((c) => c.type === "fold" && !c.urgent));
	});

	it("tail is 20k clamped to half the budget", () => {
		assert.equal(tailOf(DEFAULT_LADDER, 200_000), 20_000);
		assert.equal(tailOf(DEFAULT_LADDER, 32_000), 12_000);
		assert.equal(tailOf({ ...DEFAULT_LADDER, tail: 1e9 }, 100_000), 37_500);
	});

	it("defaults are 45%, 25% cold, 12% step, 2% floor", () => {
		assert.equal(DEFAULT_LADDER.foldAt, 0.45);
		assert.equal(DEFAULT_LADDER.coldFoldAt, 0.25);
		assert.equal(DEFAULT_LADDER.step, 0.12);
		assert.equal(DEFAULT_LADDER.floor, 0.02);
		assert.equal(DEFAULT_LADDER.budgetFraction, 0.75);
		assert.equal(DEFAULT_LADDER.budgetCap, 200_000);
		assert.equal(DEFAULT_LADDER.tail, 20_000);
	});
});

describe("protectedTail", () => {
	it("always holds the newest block, even with a zero tail or a huge newest block", () => {
		const blocks = [blk("a", 10, 5), blk("b", 10, 5), blk("c", 1_000_000, 5)];
		assert.deepEqual([...protectedTail(blocks, 0)], ["c"]);
		assert.deepEqual([...protectedTail(blocks, 100)], ["c"]);
		assert.deepEqual([...protectedTail([blk("only", 1, 1)], 0)], ["only"]);
		assert.deepEqual([...protectedTail([], 100)], []);
	});

	it("holds every block that begins within the last `tail` tokens", () => {
		const blocks = [blk("a", 100, 1), blk("b", 100, 1), blk("c", 100, 1), blk("d", 100, 1)];
		assert.deepEqual([...protectedTail(blocks, 150)].sort(), ["c", "d"]);
		assert.deepEqual([...protectedTail(blocks, 200)].sort(), ["c", "d"]);
		assert.deepEqual([...protectedTail(blocks, 201)].sort(), ["b", "c", "d"]);
	});
});

describe("conduct: ordinary events", () => {
	it("fires at usage >= 45% of the window when at least 12% is maskable, folding oldest first", () => {
		const commands = conduct(mkView(fourCandidates(), 45_000));
		// target = 45% - 12% = 33k: three folds of 4k bring 45k down to 33k
		assert.deepEqual(commands, [
			{ type: "fold", id: "r:c1", urgent: false },
			{ type: "fold", id: "r:c2", urgent: false },
			{ type: "fold", id: "r:c3", urgent: false },
		]);
	});

	it("does not fire below the threshold", () => {
		assert.deepEqual(conduct(mkView(fourCandidates(), 44_999)), []);
		assert.deepEqual(conduct(mkView(fourCandidates(), 0)), []);
	});

	it("does not fire when less than one step is maskable", () => {
		const exact = [blk("r:c1", 5000, 4000), blk("r:c2", 5000, 4000), blk("r:c3", 5000, 4000), NEWEST];
		assert.equal(conduct(mkView(exact, 50_000)).length, 3, "exactly 12% is enough");
		const short = [blk("r:c1", 5000, 4000), blk("r:c2", 5000, 4000), blk("r:c3", 5000, 3999), NEWEST];
		assert.deepEqual(conduct(mkView(short, 50_000)), []);
	});

	it("uses 25% when the session never had a cache read", () => {
		assert.deepEqual(conduct(mkView(fourCandidates(), 25_000)), []);
		const cold = conduct(mkView(fourCandidates(), 25_000, { neverCacheRead: true }));
		// target = 25% - 12% = 13k: three folds of 4k bring 25k down to 13k
		assert.deepEqual(folds(cold), ["r:c1", "r:c2", "r:c3"]);
		assert.deepEqual(conduct(mkView(fourCandidates(), 24_999, { neverCacheRead: true })), []);
	});

	it("folds when the cache is cold anyway: at the threshold, below one step, down to the same target", () => {
		const small = [blk("r:c1", 5000, 4000), blk("r:c2", 5000, 1000), NEWEST];
		const cold: CacheFacts = { warm: false, idleMs: 600_000, ttlMs: 300_000 };
		assert.deepEqual(conduct(mkView(small, 50_000)), [], "warm (no facts): 5% maskable is below one step");
		assert.deepEqual(conduct(mkView(small, 50_000, { cache: { warm: true, idleMs: 1000, ttlMs: 300_000 } })), []);
		assert.deepEqual(conduct(mkView(small, 50_000, { cache: { warm: undefined } })), [], "unknown is not cold");
		assert.deepEqual(folds(conduct(mkView(small, 50_000, { cache: cold }))), ["r:c1", "r:c2"]);
		assert.deepEqual(conduct(mkView(small, 44_999, { cache: cold })), [], "still not below the threshold");
		const nothing = [blk("r:c1", 5000, 0), NEWEST];
		assert.deepEqual(conduct(mkView(nothing, 50_000, { cache: cold })), [], "nothing maskable: no empty event");
	});

	it("stops once usage is one step below the threshold", () => {
		const many = Array.from({ length: 20 }, (_, i) => blk(`r:c${i}`, 2000, 1000));
		const commands = conduct(mkView([...many, NEWEST], 50_000));
		// 50k -> 33k needs 17 folds of 1k
		assert.deepEqual(
			folds(commands),
			many.slice(0, 17).map((b) => b.id),
		);
	});

	it("folds every candidate when they cannot reach the target", () => {
		const commands = conduct(mkView(fourCandidates(), 70_000));
		assert.deepEqual(folds(commands), ["r:c1", "r:c2", "r:c3", "r:c4"]);
	});

	it("returns nothing for a view without a window or usage", () => {
		assert.deepEqual(conduct(mkView(fourCandidates(), 90_000, { window: 0 })), []);
		assert.deepEqual(conduct(mkView(fourCandidates(), Number.NaN)), []);
	});
});

describe("conduct: urgent events and the floor", () => {
	it("is urgent past the budget with at least the floor maskable, regardless of step", () => {
		const blocks = [blk("r:small", 3000, 2000), NEWEST];
		assert.deepEqual(conduct(mkView(blocks, 75_001)), [{ type: "fold", id: "r:small", urgent: true }]);
	});

	it("is not urgent at exactly the budget", () => {
		const blocks = [blk("r:small", 3000, 2000), NEWEST];
		assert.deepEqual(conduct(mkView(blocks, 75_000)), []);
	});

	it("marks ordinary-sized events past the budget urgent too", () => {
		const commands = conduct(mkView(fourCandidates(), 80_000));
		assert.ok(commands.length > 0);
		for (const command of commands) assert.equal(command.type === "fold" && command.urgent, true);
	});

	it("never makes an event below the floor: past the budget it says compact instead", () => {
		const blocks = [blk("r:tiny", 3000, 1999), NEWEST];
		assert.deepEqual(conduct(mkView(blocks, 90_000)), [
			{ type: "compact", usage: 90_000, budget: 75_000, maskable: 1999 },
		]);
		assert.deepEqual(conduct(mkView([NEWEST], 90_000)), [
			{ type: "compact", usage: 90_000, budget: 75_000, maskable: 0 },
		]);
	});

	it("uses the 200k cap on large windows", () => {
		const blocks = [blk("r:a", 30_000, 20_000), NEWEST];
		// threshold is 450k, budget 200k, floor 20k
		assert.deepEqual(conduct(mkView(blocks, 200_000, { window: 1_000_000 })), []);
		assert.deepEqual(conduct(mkView(blocks, 200_001, { window: 1_000_000 })), [
			{ type: "fold", id: "r:a", urgent: true },
		]);
		const under = [blk("r:a", 30_000, 19_999), NEWEST];
		assert.deepEqual(conduct(mkView(under, 200_001, { window: 1_000_000 })), [
			{ type: "compact", usage: 200_001, budget: 200_000, maskable: 19_999 },
		]);
	});
});

describe("conduct: what it may select", () => {
	it("never selects tail, held, frozen, ineligible or zero-saving blocks", () => {
		const blocks = [
			blk("r:held", 30_000, 29_000, { held: true }),
			blk("r:frozen", 30_000, 29_000, { frozen: true }),
			blk("r:ineligible", 30_000, 29_000, { eligible: false }),
			blk("r:nosaving", 30_000, 0),
			blk("r:good", 10_000, 9_000),
			blk("r:tail", 30_000, 29_000),
		];
		const marks = ladderMarks(mkView(blocks, 150_000));
		assert.ok(marks.tail.has("r:tail"));
		assert.deepEqual(
			marks.candidates.map((b) => b.id),
			["r:good"],
		);
		assert.equal(marks.maskable, 9_000);
		assert.deepEqual(conduct(mkView(blocks, 150_000)), [{ type: "fold", id: "r:good", urgent: true }]);
	});

	it("keeps the newest block even when the tail is configured to zero", () => {
		const blocks = [blk("r:old", 10_000, 9_000), blk("r:newest", 50_000, 45_000)];
		const commands = conduct(mkView(blocks, 90_000, { config: { tail: 0 } }));
		assert.deepEqual(folds(commands), ["r:old"]);
	});

	it("clamps the tail to half the budget", () => {
		const blocks = Array.from({ length: 10 }, (_, i) => blk(`r:b${i}`, 5000, 4000));
		const view = mkView(blocks, 80_000, { config: { tail: 1e9 } });
		const marks = ladderMarks(view);
		// the last 8 blocks reach 40k >= 37.5k; b0 and b1 lie outside the clamped tail
		assert.deepEqual(
			marks.candidates.map((b) => b.id),
			["r:b0", "r:b1"],
		);
		assert.deepEqual(folds(conduct(view)), ["r:b0", "r:b1"]);
	});

	it("is deterministic and does not change the view", () => {
		const blocks = fourCandidates();
		const view = mkView(blocks, 60_000);
		const before = structuredClone(view);
		assert.deepEqual(conduct(view), conduct(view));
		assert.deepEqual(view, before);
	});
});
