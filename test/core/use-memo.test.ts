/**
 * The working set's memo (UseMemo, src/core/use-ages.ts): over randomized conversations that grow,
 * are edited in place, have a message replaced, shrink from the front as a compaction would, or stay
 * the same, useOf with one UseMemo kept from request to request finds exactly the ages and used
 * strings a fresh useOf finds, whether the blocks come from a BlockMemo (unchanged messages keep their
 * block objects, as in the engine) or are made afresh each request. The strings come from a small
 * vocabulary, so that several blocks hold each and the newest holder before a use moves as the
 * conversation changes, and reads and edits of a few paths and plans whose steps a text cites, so that
 * the read an edit uses and the plan a citation uses move too (shell prints and patches among them).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { BlockMemo, linearize, type MessageLike } from "../../src/core/block.ts";
import { UseMemo, useAges, useOf } from "../../src/core/use-ages.ts";

const RUNS = Math.max(200, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

/** Distinctive strings (see distinctiveTokens) and plain words, few enough to repeat. */
const word = fc.constantFrom("src/a.ts", "parse_1", "abc123", "TokenBucket", "plain", "words", "drain queue");
const text = fc.array(word, { maxLength: 4 }).map((words) => words.join(" "));
const callId = fc.constantFrom("c1", "c2", "c3", "c4");

const message: fc.Arbitrary<MessageLike> = fc.oneof(
	fc.record({ role: fc.constant("user"), content: text, timestamp: fc.nat(5) }),
	fc.record({
		role: fc.constant("assistant"),
		content: fc.array(
			fc.oneof(
				text.map((t) => ({ type: "text", text: t })),
				text.map((t) => ({ type: "thinking", thinking: t })),
				fc
					.record({ id: callId, args: text })
					.map(({ id, args }) => ({ type: "toolCall", id, name: "bash", arguments: { command: args } })),
				// Reads and edits of a few paths: an edit also uses the newest read of its file.
				fc
					.record({
						id: callId,
						name: fc.constantFrom("read", "edit", "write"),
						path: fc.constantFrom("a.ts", "src/a.ts", "b.ts"),
					})
					.map(({ id, name, path }) => ({ type: "toolCall", id, name, arguments: { path } })),
				// The same files printed by a shell or changed by a patch (a read that a Pi read outranks).
				fc
					.record({
						id: callId,
						command: fc.constantFrom("cat a.ts", "sed -n '1,9p' src/a.ts", "cd src && cat a.ts", "head b.ts"),
					})
					.map(({ id, command }) => ({ type: "toolCall", id, name: "bash", arguments: { command } })),
				fc.record({ id: callId, path: fc.constantFrom("/r/a.ts", "/r/src/a.ts", "b.ts") }).map(({ id, path }) => ({
					type: "toolCall",
					id,
					name: "apply_patch",
					arguments: { input: `*** Begin Patch\n*** Update File: ${path}\n*** End Patch` },
				})),
				// Plans whose steps a text may cite ("drain queue"): a citation uses the newest plan holding the step.
				fc
					.record({ id: callId, step: fc.constantFrom("Drain the queue", "Swap brokers") })
					.map(({ id, step }) => ({
						type: "toolCall",
						id,
						name: "write",
						arguments: { path: "PLAN.md", content: `## Step 1: ${step}` },
					})),
			),
			{ maxLength: 3 },
		),
		responseId: fc.option(callId, { nil: undefined }),
		timestamp: fc.nat(5),
	}),
	fc.record({
		role: fc.constant("toolResult"),
		toolCallId: callId,
		toolName: fc.constantFrom("bash", "read"),
		content: text.map((t) => [{ type: "text", text: t }]),
		timestamp: fc.nat(5),
	}),
);

type Edit = (messages: MessageLike[], at: number, extra: MessageLike) => MessageLike[];

/** Changes between two requests. */
const EDITS: Record<string, Edit> = {
	append: (ms, _at, extra) => [...ms, extra],
	appendTwo: (ms, _at, extra) => [...ms, extra, structuredClone(extra)],
	replace: (ms, at, extra) => ms.map((m, i) => (i === at ? extra : m)),
	editText: (ms, at) =>
		ms.map((m, i) => (i === at ? { ...m, content: [{ type: "text", text: "src/a.ts moved_9" }] } : m)),
	drop: (ms, at) => ms.filter((_, i) => i !== at),
	compact: (ms, at) => ms.slice(at),
	same: (ms) => ms,
};

const step = fc.record({ edit: fc.constantFrom(...Object.keys(EDITS)), at: fc.nat(10), extra: message });

/** For each conversation, makes a fresh `check` (its memos new) and runs it on the start, then after each edit. */
function eachRequest(fresh: () => (request: MessageLike[]) => void): void {
	fc.assert(
		fc.property(fc.array(message, { maxLength: 12 }), fc.array(step, { maxLength: 10 }), (start, steps) => {
			const check = fresh();
			let history = structuredClone(start);
			check(structuredClone(history));
			for (const { edit, at, extra } of steps) {
				history = EDITS[edit](history, Math.min(at, Math.max(0, history.length - 1)), extra);
				check(structuredClone(history));
			}
		}),
		{ numRuns: RUNS },
	);
}

describe("useOf with a UseMemo", () => {
	it("finds the ages and used strings of a fresh useOf, request after request, over a BlockMemo's blocks", () => {
		eachRequest(() => {
			const blockMemo = new BlockMemo();
			const memo = new UseMemo();
			return (request) => {
				const blocks = linearize(request, 0, undefined, blockMemo);
				const fresh = useOf(request, linearize(structuredClone(request)));
				assert.deepEqual(useAges(request, blocks, memo), fresh.ages);
				assert.deepEqual(useOf(request, blocks, memo), fresh);
			};
		});
	});

	it("finds the same when every request's blocks are new objects, and across conversations", () => {
		const memo = new UseMemo();
		eachRequest(() => (request) => {
			assert.deepEqual(
				useOf(request, linearize(request), memo),
				useOf(request, linearize(structuredClone(request))),
			);
		});
	});
});
