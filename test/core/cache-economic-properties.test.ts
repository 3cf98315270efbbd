/**
 * Property tests of the cache-economic fold policy on arbitrary views: it never folds inside either
 * tail, never folds a held (or frozen, or ineligible) block, and a non-urgent event's projected saving
 * over the horizon (no more than a quarter of the requests the session has made) is never below its
 * rewrite cost once the session has read from the cache.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
	budgetOf,
	DEFAULT_ECONOMIC,
	DEFAULT_LADDER,
	type PolicyView,
	type ViewBlock,
} from "../../src/core/contract.ts";
import { economicKnobs, economize, leastEventOf, REWRITE_IN_READS } from "../../src/core/policy/cache-economic.ts";

const RUNS = Math.max(300, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

const blockArb = fc.record({
	kind: fc.constantFrom("toolResult", "toolArgs", "thinking", "text", "user") as fc.Arbitrary<ViewBlock["kind"]>,
	tokens: fc.oneof(fc.nat({ max: 400 }), fc.nat({ max: 20_000 })),
	eligible: fc.integer({ min: 0, max: 9 }).map((n) => n < 8),
	frozen: fc.integer({ min: 0, max: 9 }).map((n) => n < 1),
	held: fc.integer({ min: 0, max: 9 }).map((n) => n < 1),
	superseded: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
	savingShare: fc.integer({ min: 0, max: 100 }).map((n) => n / 100),
});

const knobsArb = fc.oneof(
	fc.constant({ ...DEFAULT_ECONOMIC }),
	// The default horizon left unset: counted over no more than a quarter of the requests made.
	fc.constant((({ horizon: _, ...rest }) => rest)(DEFAULT_ECONOMIC)),
	fc.record({
		hotTail: fc.nat({ max: 30_000 }),
		coldTail: fc.nat({ max: 30_000 }),
		horizon: fc.integer({ min: 1, max: 60 }),
		foldFrom: fc.nat({ max: 150_000 }),
		backstopAt: fc.integer({ min: 1_000, max: 300_000 }),
		minEvent: fc.nat({ max: 40_000 }),
	}),
);

/** Views whose usage is the blocks' sum, in a window that puts it from well below the budget to past it. */
const viewArb: fc.Arbitrary<PolicyView> = fc
	.record({
		blocks: fc.array(blockArb, { maxLength: 60, size: "large" }),
		fill: fc.integer({ min: 5, max: 120 }).map((n) => n / 100),
		neverCacheRead: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
		knobs: knobsArb,
		// Pi's reserveTokens while its compaction is on (undefined: off), which can cap the least event.
		reserve: fc.option(fc.nat({ max: 40_000 }), { nil: undefined }),
		// Model requests the session has made so far (undefined: unknown).
		requests: fc.option(fc.nat({ max: 80 }), { nil: undefined }),
	})
	.map(({ blocks, fill, neverCacheRead, knobs, reserve, requests }) => {
		const viewBlocks = blocks.map(({ savingShare, ...b }, i) => ({
			...b,
			id: `r:call_${i}`,
			saving: b.eligible && !b.frozen ? Math.floor(b.tokens * savingShare) : 0,
		}));
		const usage = viewBlocks.reduce((n, b) => n + b.tokens, 0);
		const window = Math.max(1000, Math.round(usage / fill));
		const view: PolicyView = {
			blocks: viewBlocks,
			usage,
			window,
			neverCacheRead,
			config: { ...DEFAULT_LADDER, ...knobs },
		};
		if (requests !== undefined) view.requests = requests;
		return reserve === undefined ? view : { ...view, reserve };
	});

/**
 * Tail membership by its definition: the newest block, or a block beginning within its class's tail
 * (a tool result no later call superseded: the hot tail; anything else: the cold tail).
 */
function inTail(view: PolicyView, index: number): boolean {
	const { hotTail, coldTail } = economicKnobs(view);
	if (index === view.blocks.length - 1) return true;
	let after = 0;
	for (let i = index + 1; i < view.blocks.length; i++) after += view.blocks[i].tokens;
	const block = view.blocks[index];
	return after < (block.kind === "toolResult" && !block.superseded ? hotTail : coldTail);
}

describe("the cache-economic policy", () => {
	test("never folds in a tail or a held, frozen or ineligible block; ordinary events pay for their rewrite and reach the least event", (t) => {
		let ordinary = 0;
		let urgent = 0;
		let compacts = 0;
		fc.assert(
			fc.property(viewArb, (view) => {
				const commands = economize(view);
				const index = new Map(view.blocks.map((b, i) => [b.id, i] as const));
				const folds = commands.filter((c) => c.type === "fold");
				// A compaction runs only once the agent's run is over, so folds may come with its request.
				const asked = commands.filter((c) => c.type === "compact").length;
				assert.ok(asked <= 1, "more than one compaction request");
				if (asked === 1) {
					compacts++;
					assert.equal(commands.at(-1)?.type, "compact", "the compaction request is not last");
				}
				if (folds.length === 0) return;
				const seen = new Set<string>();
				let saved = 0;
				let first = view.blocks.length;
				for (const command of folds) {
					const i = index.get(command.id);
					assert.ok(i !== undefined, `unknown id ${command.id}`);
					assert.ok(!seen.has(command.id), `folded ${command.id} twice`);
					seen.add(command.id);
					const block = view.blocks[i];
					assert.ok(!block.held, `folded held ${command.id}`);
					assert.ok(block.eligible && !block.frozen && block.saving > 0, `folded unfoldable ${command.id}`);
					assert.ok(!inTail(view, i), `folded ${command.id} inside a tail`);
					saved += block.saving;
					first = Math.min(first, i);
				}
				const isUrgent = view.usage > budgetOf(view.config, view.window);
				assert.ok(
					folds.every((c) => c.urgent === isUrgent),
					"urgent flag does not match usage > budget",
				);
				if (isUrgent) {
					urgent++;
					return;
				}
				ordinary++;
				if (view.neverCacheRead) return;
				let prefix = 0;
				for (let i = 0; i < first; i++) prefix += view.blocks[i].tokens;
				const rewrite = view.usage - prefix - saved;
				const knobs = economicKnobs(view);
				// Counted over the horizon; by default over at most a quarter of the requests made, unless Pi
				// compacts on its own, or the context passes the fold budget, before another least event could gather.
				const least = leastEventOf(view, knobs);
				const nearPi = view.reserve !== undefined && view.usage >= view.window - view.reserve - least;
				const nearBudget = view.usage >= budgetOf(view.config, view.window) - least;
				const capped = view.config.horizon === undefined && view.requests !== undefined && !nearPi && !nearBudget;
				const over = capped ? Math.max(1, Math.min(knobs.horizon, (view.requests ?? 0) / 4)) : knobs.horizon;
				assert.ok(
					saved * over >= rewrite * REWRITE_IN_READS,
					`event saving ${saved} × ${over} below rewrite ${rewrite} × ${REWRITE_IN_READS}`,
				);
				assert.ok(saved >= least, `event saving ${saved} below the least event ${least}`);
				assert.ok(least <= knobs.minEvent, "the least event above minEvent");
			}),
			{ numRuns: RUNS * 3 },
		);
		t.diagnostic(`ordinary events ${ordinary}, urgent ${urgent}, compactions ${compacts}`);
		assert.ok(
			ordinary > 20 && urgent > 5 && compacts > 20,
			`ordinary ${ordinary}, urgent ${urgent}, compact ${compacts}`,
		);
	});
});
