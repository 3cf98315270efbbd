/**
 * The engine's view of the latest request as it came in: after a pass that folded a tool result and
 * a tool call's arguments in place, liveBlock serves each block with its message as the hook saw it
 * (raw content, every other field), and the request itself carries the folded content.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_CONFIG } from "../../src/adapters/pi/config.ts";
import { FoldEngine } from "../../src/adapters/pi/fold/engine.ts";
import { linearize, type MessageLike } from "../../src/core/block.ts";

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

describe("FoldEngine.unfoldRoom", () => {
	it("scales its estimates up to the provider's count of the latest request, by at most 1.25", () => {
		const roomAt = (usage: number | undefined) => {
			const fold = engine();
			fold.run(structuredClone(conversation()), { window: 200_000, usage, neverCacheRead: false });
			const room = fold.unfoldRoom(1000);
			assert.ok(room);
			return room;
		};
		// The request as the pass estimated it, before its event folded it: its blocks and the 1,000 besides.
		const estimated = 1000 + linearize(conversation()).reduce((n, b) => n + b.tokens, 0);
		const plain = roomAt(undefined);
		const sent = 200_000 - plain.left;
		const counted = roomAt(Math.round(1.2 * estimated));
		assert.ok(counted.left < plain.left, "a higher count leaves less room");
		assert.ok(Math.abs(200_000 - counted.left - 1.2 * sent) <= 2, `${counted.left} against ${plain.left}`);
		for (const [id, tokens] of plain.back) assert.ok(Math.abs((counted.back.get(id) ?? 0) - 1.2 * tokens) <= 2, id);
		assert.equal(roomAt(Math.round(0.5 * estimated)).left, plain.left, "a lower count takes nothing back");
		assert.equal(roomAt(10 * estimated).left, 200_000 - Math.ceil(1.25 * sent), "at most 1.25");
	});
});
