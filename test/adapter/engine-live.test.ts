/**
 * The engine's view of the latest request as it came in: after a pass that folded a tool result and
 * a tool call's arguments in place, liveBlock serves each block with its message as the hook saw it
 * (raw content, every other field), and the request itself carries the folded content.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_CONFIG } from "../../src/adapters/pi/config.ts";
import { FoldEngine } from "../../src/adapters/pi/fold/engine.ts";
import type { MessageLike } from "../../src/core/block.ts";

const BIG = Array.from({ length: 400 }, (_, i) => `line ${i} of the file`).join("\n");

function conversation(): MessageLike[] {
	return [
		{ role: "user", content: "go", timestamp: 1 },
		{
			role: "assistant",
			responseId: "r1",
			timestamp: 2,
			usage: { input: 1, output: 2 },
			content: [
				{ type: "text", text: "writing it" },
				{ type: "toolCall", id: "w1", name: "write", arguments: { path: "a.txt", content: BIG } },
			],
		},
		{
			role: "toolResult",
			toolCallId: "w1",
			toolName: "write",
			isError: false,
			timestamp: 3,
			details: { note: "kept" },
			content: [{ type: "text", text: BIG }],
		},
		{ role: "assistant", responseId: "r2", timestamp: 4, content: [{ type: "text", text: "done" }] },
		{ role: "user", content: "next", timestamp: 5 },
	];
}

/** An engine whose policy folds the two blocks above. */
function engine(): FoldEngine {
	return new FoldEngine({
		config: () => DEFAULT_CONFIG,
		policy: () => [
			{ type: "fold", id: "r:w1", urgent: false },
			{ type: "fold", id: "a:w1:args", urgent: false },
		],
		append: () => {},
		warn: () => {},
		debug: () => {},
	});
}

describe("FoldEngine.liveBlock", () => {
	it("serves folded blocks with their raw message, while the request carries the folds", () => {
		const fold = engine();
		for (let request = 0; request < 2; request++) {
			const messages = structuredClone(conversation());
			assert.equal(fold.run(messages, { window: 200_000, usage: undefined, neverCacheRead: false }), true);
			const sent = messages[2].content as { text: string }[];
			assert.match(sent[0].text, /^\{#[0-9a-z]{8} FOLDED\}/);
			const call = (messages[1].content as { arguments: { content: string } }[])[1];
			assert.match(call.arguments.content, /^\{#[0-9a-z]{8} FOLDED\}/);

			const result = fold.liveBlock("r:w1");
			assert.deepEqual(result?.message, conversation()[2]);
			const args = fold.liveBlock("a:w1:args");
			assert.deepEqual(args?.message, conversation()[1]);
			assert.equal(fold.liveBlock("u:1")?.message, messages[0], "an unfolded message is the request's own");
		}
	});
});
