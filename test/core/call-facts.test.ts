/**
 * The facts of read, write and edit calls, and where each read from an offset starts: a whole-number
 * offset past line 1 of a read call, keyed by its result's id.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { readStartOf, readStarts } from "../../src/core/call-facts.ts";

/** A call of `name` with `args` and its result, as Pi stores them. */
function exchange(i: number, name: string, args: Record<string, unknown>, isError = false): MessageLike[] {
	return [
		{
			role: "assistant",
			content: [{ type: "toolCall", id: `call_${i}`, name, arguments: args }],
			responseId: `resp_${i}`,
			timestamp: 1000 + 2 * i,
		},
		{
			role: "toolResult",
			toolCallId: `call_${i}`,
			toolName: name,
			content: [{ type: "text", text: `result ${i}` }],
			isError,
			timestamp: 1001 + 2 * i,
		},
	] as MessageLike[];
}

describe("readStarts", () => {
	it("keys a read's whole-number offset past line 1 by its result, and nothing else", () => {
		const messages: MessageLike[] = [
			{ role: "user", content: "go", timestamp: 1 } as MessageLike,
			...exchange(0, "read", { path: "a.ts", offset: 2001 }),
			...exchange(1, "read", { path: "a.ts", offset: 1 }),
			...exchange(2, "read", { path: "a.ts", offset: 2.5 }),
			// Pi coerces a number sent as a string before the read runs ("models often send "42" for a number").
			...exchange(3, "read", { path: "a.ts", offset: "40" }),
			...exchange(4, "read", { path: "a.ts" }),
			...exchange(5, "bash", { command: "cat a.ts", offset: 30 }),
			...exchange(6, "read", { path: "b.ts", offset: 12, limit: 5 }),
			...exchange(7, "read", { path: "b.ts", offset: " 640 " }),
			...exchange(8, "read", { path: "b.ts", offset: "2.5" }),
			...exchange(9, "read", { path: "b.ts", offset: "" }),
			...exchange(10, "read", { path: "b.ts", offset: "forty" }),
		];
		const starts = readStarts(messages, linearize(messages));
		assert.deepEqual(
			[...starts],
			[
				["r:call_0", 2001],
				["r:call_3", 40],
				["r:call_6", 12],
				["r:call_7", 640],
			],
		);
	});

	it("is applied only to a read result that is text and no error", () => {
		const messages: MessageLike[] = [
			...exchange(0, "read", { path: "a.ts", offset: 9 }),
			...exchange(1, "read", { path: "a.ts", offset: 9 }, true),
		];
		const results = linearize(messages).filter((b) => b.kind === "toolResult");
		assert.deepEqual(
			results.map((b) => readStartOf(b, 9)),
			[9, undefined],
		);
		assert.equal(readStartOf({ ...results[0], images: 1 }, 9), undefined);
		assert.equal(readStartOf({ ...results[0], toolName: "bash" }, 9), undefined);
	});
});
