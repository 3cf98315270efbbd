/**
 * Property tests of the working-set fold policy (issue 24): a block the model referred to in its last
 * `useWindow` messages is never folded by an ordinary event; protection never makes the policy ask
 * for a compaction that folding the protected blocks would have avoided; a session with nothing
 * foldable gets no event. The first runs the whole pass over generated conversations, the others
 * the policy over arbitrary views.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { MessageLike } from "../../src/core/block.ts";
import {
	budgetOf,
	DEFAULT_ECONOMIC,
	DEFAULT_LADDER,
	DEFAULT_WORKING_SET,
	type PolicyView,
	type ViewBlock,
} from "../../src/core/contract.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { planTurn } from "../../src/core/pass.ts";
import { workingSet } from "../../src/core/policy/working-set.ts";

const RUNS = Math.max(200, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

/** A tool result's text: filler lines and its own distinctive names (`name_<call>_<k>`). */
function resultText(call: number, lines: number): string {
	const out: string[] = [];
	for (let k = 0; k < lines; k++)
		out.push(`line ${k} of the output holds name_${call}_${k} and some plain words here`);
	return out.join("\n");
}

/**
 * A conversation of `steps` tool calls, each answered by a result of `sizes[i]` lines; the model
 * message `age` messages before the latest repeats names of the result of call `target` (names no
 * other block holds).
 */
function conversation(sizes: readonly number[], target: number, age: number): MessageLike[] {
	let t = 1_000;
	const messages: MessageLike[] = [{ role: "user", content: "work through it", timestamp: t++ }];
	const steps = sizes.length;
	const citing = steps - 1 - age;
	for (let i = 0; i < steps; i++) {
		const cite = i === citing ? `using name_${target}_0, name_${target}_1 and name_${target}_2` : "next";
		messages.push({
			role: "assistant",
			content: [
				{ type: "text", text: cite },
				{ type: "toolCall", id: `call_${i}`, name: "bash", arguments: { command: `step ${i}` } },
			],
			responseId: `resp_${i}`,
			timestamp: t++,
		});
		messages.push({
			role: "toolResult",
			toolCallId: `call_${i}`,
			toolName: "bash",
			content: [{ type: "text", text: resultText(i, sizes[i]) }],
			timestamp: t++,
		});
	}
	return messages;
}

describe("working set: a block in use never folds in an ordinary event", () => {
	test("the result the model cited within useWindow messages stays raw, whatever else folds", () => {
		const arb = fc
			.record({
				sizes: fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 4, maxLength: 30 }),
				useWindow: fc.integer({ min: 1, max: 12 }),
				targetPick: fc.nat(),
				agePick: fc.nat(),
			})
			.filter(({ sizes }) => sizes.length >= 3);
		fc.assert(
			fc.property(arb, ({ sizes, useWindow, targetPick, agePick }) => {
				// The citing message is within the window, and comes after the cited result.
				const age = agePick % Math.min(useWindow, sizes.length - 1);
				const citing = sizes.length - 1 - age;
				const target = targetPick % citing;
				const messages = conversation(sizes, target, age);
				const config = {
					...DEFAULT_LADDER,
					...DEFAULT_ECONOMIC,
					hotTail: 1000,
					coldTail: 1000,
					foldFrom: 0,
					minEvent: 0,
					useWindow,
				};
				const plan = planTurn({
					messages,
					registry: new FoldRegistry(),
					policy: workingSet,
					window: 10_000_000,
					neverCacheRead: true,
					config,
				});
				for (const command of plan.commands) {
					if (command.type !== "fold" || command.urgent) continue;
					assert.notEqual(command.id, `r:call_${target}`, `cited ${age} messages ago, yet folded`);
				}
			}),
			{ numRuns: RUNS },
		);
	});
});

describe("working set: what folds keeps what it was used for", () => {
	test("a result the model cited, once folded, keeps the cited lines in its digest", () => {
		const arb = fc.record({
			sizes: fc.array(fc.integer({ min: 3, max: 120 }), { minLength: 6, maxLength: 30 }),
			useWindow: fc.integer({ min: 1, max: 4 }),
			targetPick: fc.nat(),
		});
		let folded = 0;
		fc.assert(
			fc.property(arb, ({ sizes, useWindow, targetPick }) => {
				// The citing message is past the window, so the cited result may fold.
				const age = useWindow;
				const citing = sizes.length - 1 - age;
				if (citing < 1) return;
				const target = targetPick % citing;
				const messages = conversation(sizes, target, age);
				const config = {
					...DEFAULT_LADDER,
					...DEFAULT_ECONOMIC,
					hotTail: 0,
					coldTail: 0,
					foldFrom: 0,
					minEvent: 0,
					useWindow,
				};
				const plan = planTurn({
					messages,
					registry: new FoldRegistry(),
					policy: workingSet,
					window: 10_000_000,
					neverCacheRead: true,
					config,
				});
				const op = plan.event.find((o) => o.id === `r:call_${target}`);
				if (!op) return;
				folded++;
				for (let k = 0; k < 3; k++)
					assert.match(
						op.text ?? "",
						new RegExp(`\\nL${k + 1}: line ${k} of the output holds name_${target}_${k} `),
					);
			}),
			{ numRuns: RUNS },
		);
		assert.ok(folded > RUNS / 4, `only ${folded} of ${RUNS} runs folded the cited result`);
	});
});

const blockArb = fc.record({
	kind: fc.constantFrom("toolResult", "toolArgs", "thinking", "text", "user") as fc.Arbitrary<ViewBlock["kind"]>,
	tokens: fc.oneof(fc.nat({ max: 400 }), fc.nat({ max: 20_000 })),
	eligible: fc.integer({ min: 0, max: 9 }).map((n) => n < 8),
	frozen: fc.integer({ min: 0, max: 9 }).map((n) => n < 1),
	held: fc.integer({ min: 0, max: 9 }).map((n) => n < 1),
	savingShare: fc.integer({ min: 0, max: 100 }).map((n) => n / 100),
	useAge: fc.oneof(fc.nat({ max: 30 }), fc.constant(Number.POSITIVE_INFINITY)),
});

/** Views whose usage is the blocks' sum, from well below the budget to past it, under random working-set knobs. */
const viewArb: fc.Arbitrary<PolicyView> = fc
	.record({
		blocks: fc.array(blockArb, { maxLength: 60, size: "large" }),
		fill: fc.integer({ min: 5, max: 120 }).map((n) => n / 100),
		neverCacheRead: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
		backstopAt: fc.integer({ min: 1_000, max: 100_000 }),
		foldFrom: fc.nat({ max: 60_000 }),
		minEvent: fc.nat({ max: 20_000 }),
		useWindow: fc.nat({ max: 16 }),
	})
	.map(({ blocks, fill, neverCacheRead, backstopAt, foldFrom, minEvent, useWindow }) => {
		const viewBlocks = blocks.map(({ savingShare, ...b }, i) => ({
			...b,
			id: `r:call_${i}`,
			saving: b.eligible && !b.frozen ? Math.floor(b.tokens * savingShare) : 0,
		}));
		const usage = viewBlocks.reduce((n, b) => n + b.tokens, 0);
		return {
			blocks: viewBlocks,
			usage,
			window: Math.max(1000, Math.round(usage / fill)),
			neverCacheRead,
			config: {
				...DEFAULT_LADDER,
				...DEFAULT_ECONOMIC,
				backstopAt,
				foldFrom,
				minEvent,
				useWindow,
			},
		};
	});

describe("working set over arbitrary views", () => {
	test("no ordinary event folds a block used within useWindow messages", () => {
		fc.assert(
			fc.property(viewArb, (view) => {
				const { useWindow } = { ...DEFAULT_WORKING_SET, ...view.config };
				const byId = new Map(view.blocks.map((b) => [b.id, b]));
				for (const command of workingSet(view)) {
					if (command.type !== "fold" || command.urgent) continue;
					const block = byId.get(command.id);
					assert.ok(block);
					const inUse = (block.useAge ?? Number.POSITIVE_INFINITY) < useWindow;
					assert.ok(!inUse, `${command.id} in use (age ${block.useAge}, ${block.tokens} tokens) folded`);
				}
			}),
			{ numRuns: RUNS },
		);
	});

	test("short of the budget, a compaction is asked only when folding every foldable block, in use or not, would not do", () => {
		fc.assert(
			fc.property(viewArb, (view) => {
				if (view.usage > budgetOf(view.config, view.window)) return;
				if (!workingSet(view).some((c) => c.type === "compact")) return;
				let foldable = 0;
				for (const block of view.blocks) if (block.eligible && !block.frozen) foldable += block.saving;
				// The backstop as docs/settings.md states it: backstopAt, or a quarter over what Pi keeps at a
				// compaction (keepRecentTokens) where that is more; worked out here, not by the policy.
				const backstop = Math.max(
					view.config.backstopAt ?? DEFAULT_ECONOMIC.backstopAt,
					1.25 * (view.keepRecent ?? 0),
				);
				assert.ok(
					view.usage - foldable >= backstop,
					`${view.usage} - ${foldable} is below the backstop ${backstop}`,
				);
			}),
			{ numRuns: RUNS },
		);
	});

	test("a session with nothing foldable gets no fold event, nor a compaction short of Pi's own", () => {
		let quiet = 0;
		fc.assert(
			fc.property(viewArb, fc.integer({ min: 5, max: 30 }), (view, reservePercent) => {
				// Nothing may fold, whatever folding it would save: no event, urgent or not.
				const bare = { ...view, blocks: view.blocks.map((b) => ({ ...b, eligible: false })) };
				assert.ok(!workingSet(bare).some((c) => c.type === "fold"));
				// With Pi's compaction on (a reserve) and nothing folded out of the context, nor a compaction short
				// of Pi's own point (window - reserve, worked out here, not by the policy), budget or not.
				const reserve = Math.round((bare.window * reservePercent) / 100);
				const withPi = { ...bare, reserve, masked: 0 };
				if (withPi.usage >= withPi.window - reserve) return;
				quiet++;
				assert.deepEqual(workingSet(withPi), [], "a session with nothing foldable pays for nothing");
			}),
			{ numRuns: RUNS },
		);
		assert.ok(quiet > RUNS / 10, `only ${quiet} of ${RUNS} runs reached the compaction check`);
	});
});

/** A view of `blocks` (ids `r:call_<i>`), each eligible and saving 90 % of its tokens, usage their sum. */
function viewOf(blocks: readonly Partial<ViewBlock>[], window: number): PolicyView {
	const viewBlocks: ViewBlock[] = blocks.map((b, i) => ({
		id: `r:call_${i}`,
		kind: "toolResult",
		tokens: 1000,
		eligible: true,
		frozen: false,
		held: false,
		...b,
		saving: Math.floor((b.tokens ?? 1000) * 0.9),
	}));
	return {
		blocks: viewBlocks,
		usage: viewBlocks.reduce((n, b) => n + b.tokens, 0),
		window,
		neverCacheRead: true,
		config: {
			...DEFAULT_LADDER,
			...DEFAULT_ECONOMIC,
			hotTail: 4000,
			coldTail: 1000,
			foldFrom: 0,
			minEvent: 0,
			backstopAt: 10_000_000,
		},
	};
}

describe("working set: the tails and the budget", () => {
	test("a file the model wrote keeps the tool results' hot tail, where other arguments have the cold one", () => {
		// Old output, then arguments of 2,000 tokens with 1,500 after them: inside the hot tail (4,000),
		// outside the cold one (1,000), unused for longer than useWindow.
		const view = (toolName: string) =>
			viewOf(
				[
					...Array.from({ length: 10 }, () => ({ tokens: 3000, useAge: Number.POSITIVE_INFINITY })),
					{ kind: "toolArgs", toolName, tokens: 2000, useAge: 20 },
					{ tokens: 1500, useAge: 0 },
				],
				1_000_000,
			);
		const folds = (toolName: string) => workingSet(view(toolName)).flatMap((c) => (c.type === "fold" ? [c.id] : []));
		assert.ok(folds("write").includes("r:call_0"), "the old output folds");
		assert.ok(!folds("write").includes("r:call_10"), "the write stays raw");
		assert.ok(folds("bash").includes("r:call_10"), "a bash call's arguments there fold");
	});

	test("past the budget the working set gives way: an urgent event folds blocks in use", () => {
		const inUse = Array.from({ length: 12 }, () => ({ tokens: 4000, useAge: 0 }));
		const past = viewOf(inUse, 40_000);
		assert.ok(past.usage > budgetOf(past.config, past.window));
		const folds = workingSet(past).filter((c) => c.type === "fold");
		assert.ok(folds.length > 0, "nothing folded past the budget");
		assert.ok(folds.every((c) => c.type === "fold" && c.urgent));
		const short = viewOf(inUse, 1_000_000);
		assert.deepEqual(
			workingSet(short).filter((c) => c.type === "fold"),
			[],
			"short of the budget, nothing in use folds",
		);
	});
});
