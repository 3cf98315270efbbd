/**
 * The block model: linearize and messageBlocks, durable and positional ids, images, the kind gate,
 * and token costs per block.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	type ArgsCache,
	argsId,
	type Block,
	BlockMemo,
	isDurableId,
	linearize,
	type MessageLike,
	messageBlocks,
	positionalId,
	renderContent,
	resultId,
	splitRepeatedId,
} from "../../src/core/block.ts";
import { ARG_FOLD_CHARS, TEXT_FOLD_CHARS } from "../../src/core/digest.ts";
import { blockCost, IMAGE_TOKENS, PLACEHOLDER_IMAGE_TOKENS } from "../../src/core/tokens.ts";

const IMAGE = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };

/** A session touching every role Pi sends through the context hook. */
function everyRole(): MessageLike[] {
	return [
		{ role: "user", content: "fix the build", timestamp: 1000 },
		{
			role: "assistant",
			responseId: "resp_A",
			timestamp: 1001,
			content: [
				{ type: "thinking", thinking: "The build fails.\nCheck the log." },
				{ type: "text", text: "Looking." },
				{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "npm run build" } },
			],
		},
		{
			role: "toolResult",
			toolCallId: "call_1",
			toolName: "bash",
			content: [{ type: "text", text: "error TS2322\nline 2" }],
			isError: true,
			timestamp: 1002,
		},
		{
			role: "user",
			content: [{ type: "text", text: "see" }, IMAGE, { type: "text", text: "this" }],
			timestamp: 1003,
		},
		{
			role: "assistant",
			timestamp: 1004,
			content: [
				{ type: "thinking", thinking: "signed", thinkingSignature: "sig==" },
				{ type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true },
				{ type: "text", text: "ok" },
			],
		},
		{ role: "custom", customType: "note", content: "extension note", display: true, timestamp: 1005 },
		{ role: "bashExecution", command: "ls", output: "a\nb", exitCode: 0, timestamp: 1006 },
		{ role: "compactionSummary", summary: "Earlier work: set up repo.", tokensBefore: 5000, timestamp: 1007 },
		{ role: "branchSummary", summary: "Branch tried X.", fromId: "e1", timestamp: 1008 },
		{ role: "system", content: "sys", timestamp: 1009 },
		{ role: "mystery", content: [{ type: "text", text: "???" }] },
	];
}

function byId(blocks: Block[], id: string): Block {
	const block = blocks.find((b) => b.id === id);
	assert.ok(block, `no block ${id} in ${blocks.map((b) => b.id).join(", ")}`);
	return block;
}

describe("isDurableId / id helpers", () => {
	it("accepts u:, a:, r:, s: ids and rejects positional ones", () => {
		for (const id of ["u:1", "u:custom:5", "a:resp:0", "a:t12:3", "a:call:args", "r:call", "s:9"]) {
			assert.ok(isDurableId(id), id);
		}
		for (const id of ["m0", "m12", "m3:1", "", "x:1", "U:1", "ru:1", "mu:1"]) {
			assert.ok(!isDurableId(id), id);
		}
	});

	it("builds ids by formula", () => {
		assert.equal(positionalId(4, -1), "m4");
		assert.equal(positionalId(4, 2), "m4:2");
		assert.equal(resultId("call_1"), "r:call_1");
		assert.equal(argsId("call_1"), "a:call_1:args");
	});
});

describe("renderContent", () => {
	it("passes strings through", () => {
		assert.deepEqual(renderContent("plain"), { text: "plain", images: 0 });
	});

	it("joins text parts with newlines and counts images", () => {
		assert.deepEqual(renderContent([{ type: "text", text: "a" }, IMAGE, { type: "text", text: "b" }, IMAGE]), {
			text: "a\nb",
			images: 2,
		});
	});

	it("tolerates junk", () => {
		assert.deepEqual(renderContent(undefined), { text: "", images: 0 });
		assert.deepEqual(renderContent([null, 3, { type: "text" }, { type: "text", text: "x" }]), {
			text: "x",
			images: 0,
		});
	});
});

describe("linearize over every role", () => {
	const blocks = linearize(everyRole());

	it("yields one block per message and one per assistant part, in order", () => {
		assert.deepEqual(
			blocks.map((b) => [b.id, b.kind, b.msg, b.part]),
			[
				["u:1000", "user", 0, -1],
				["a:resp_A:0", "thinking", 1, 0],
				["a:resp_A:1", "text", 1, 1],
				["a:call_1:args", "toolArgs", 1, 2],
				["r:call_1", "toolResult", 2, -1],
				["u:1003", "user", 3, -1],
				["a:t1004:0", "thinking", 4, 0],
				["a:t1004:1", "thinking", 4, 1],
				["a:t1004:2", "text", 4, 2],
				["u:custom:1005", "custom", 5, -1],
				["u:bash:1006", "bashExecution", 6, -1],
				["s:1007", "summary", 7, -1],
				["s:1008", "summary", 8, -1],
				["m9", "other", 9, -1],
				["m10", "other", 10, -1],
			],
		);
	});

	it("marks durable exactly the content-anchored ids", () => {
		for (const block of blocks) assert.equal(block.durable, isDurableId(block.id), block.id);
		assert.deepEqual(
			blocks.filter((b) => !b.durable).map((b) => b.id),
			["m9", "m10"],
		);
	});

	it("renders each block's text", () => {
		assert.equal(byId(blocks, "u:1000").text, "fix the build");
		assert.equal(byId(blocks, "a:resp_A:0").text, "The build fails.\nCheck the log.");
		assert.equal(byId(blocks, "a:resp_A:1").text, "Looking.");
		assert.equal(byId(blocks, "a:call_1:args").text, '{"command":"npm run build"}');
		assert.equal(byId(blocks, "r:call_1").text, "error TS2322\nline 2");
		assert.equal(byId(blocks, "u:1003").text, "see\nthis");
		assert.equal(byId(blocks, "u:custom:1005").text, "extension note");
		assert.equal(byId(blocks, "u:bash:1006").text, "ls\na\nb");
		assert.equal(byId(blocks, "s:1007").text, "Earlier work: set up repo.");
		assert.equal(byId(blocks, "s:1008").text, "Branch tried X.");
		assert.equal(byId(blocks, "m9").text, "sys");
		assert.equal(byId(blocks, "m10").text, "???");
	});

	it("costs every block ceil(chars / 4) + 4 (+ images; tool calls count their name)", () => {
		for (const block of blocks) {
			const extra = block.kind === "toolArgs" ? (block.toolName ?? "").length : 0;
			assert.equal(block.tokens, blockCost(block.text.length + extra, block.images), block.id);
		}
		assert.equal(byId(blocks, "u:1000").tokens, Math.ceil(13 / 4) + 4);
		assert.equal(byId(blocks, "a:call_1:args").tokens, Math.ceil((27 + 4) / 4) + 4);
	});

	it("counts images toward tokens", () => {
		const user = byId(blocks, "u:1003");
		assert.equal(user.images, 1);
		assert.equal(user.tokens, Math.ceil(8 / 4) + IMAGE_TOKENS + 4);
	});

	it("carries tool metadata", () => {
		const args = byId(blocks, "a:call_1:args");
		assert.equal(args.toolName, "bash");
		assert.equal(args.toolCallId, "call_1");
		const result = byId(blocks, "r:call_1");
		assert.equal(result.toolName, "bash");
		assert.equal(result.toolCallId, "call_1");
		assert.equal(result.isError, true);
	});

	it("counts turns by user messages", () => {
		assert.deepEqual(
			blocks.map((b) => b.turn),
			[1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
		);
	});

	it("lets only tool results, tool-call args with a long string, long unsigned text and unsigned thinking be foldable", () => {
		assert.deepEqual(
			blocks.filter((b) => b.foldable).map((b) => b.id),
			["a:resp_A:0", "r:call_1"],
		);
		for (const id of ["a:t1004:0", "a:t1004:1"]) assert.equal(byId(blocks, id).foldable, false, `signed ${id}`);
		assert.equal(byId(blocks, "a:call_1:args").foldable, false, "small args");
	});
});

describe("foldability by shape", () => {
	it("never folds redacted thinking, whatever text it carries and with no signature beside it", () => {
		const blocks = linearize([
			{
				role: "assistant",
				responseId: "r1",
				content: [
					// Pi's own shape (its placeholder text and the opaque payload), and the flag alone.
					{ type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: "opaque", redacted: true },
					{ type: "thinking", thinking: "[Reasoning redacted]", redacted: true },
					{ type: "thinking", thinking: "plain reasoning the model wrote" },
				],
				stopReason: "stop",
				timestamp: 1,
			},
		]);
		assert.deepEqual(
			blocks.map((b) => b.foldable),
			[false, false, true],
		);
	});

	it("makes a tool result with an image unfoldable, and counts the image", () => {
		const [block] = linearize([
			{
				role: "toolResult",
				toolCallId: "c",
				toolName: "read",
				content: [{ type: "text", text: "png file" }, IMAGE],
				timestamp: 1,
			},
		]);
		assert.equal(block.id, "r:c");
		assert.equal(block.images, 1);
		assert.equal(block.foldable, false);
		assert.equal(block.tokens, Math.ceil(8 / 4) + IMAGE_TOKENS + 4);
	});

	it("gives a reply that failed or was aborted no cost and nothing to fold: pi-ai sends it in no request", () => {
		const long = "y".repeat(40_000);
		const reply = (stopReason: string, responseId: string) => ({
			role: "assistant",
			responseId,
			stopReason,
			content: [
				{ type: "text", text: long },
				{ type: "toolCall", id: `c${responseId}`, name: "write", arguments: { path: "a", content: long } },
			],
		});
		const blocks = linearize([reply("aborted", "r1"), reply("error", "r2"), reply("stop", "r3")]);
		const of = (id: string) => blocks.filter((b) => b.msg === Number(id));
		for (const block of [...of("0"), ...of("1")]) {
			assert.equal(block.tokens, 0, block.id);
			assert.equal(block.foldable, false, block.id);
		}
		assert.ok(
			of("2").every((b) => b.foldable && b.tokens > 10_000),
			"a completed reply is sent and may fold",
		);
	});

	it("weighs an image sent to a model without image input as the placeholder pi-ai sends", () => {
		const result: MessageLike = {
			role: "toolResult",
			toolCallId: "c",
			toolName: "read",
			content: [{ type: "text", text: "png file" }, IMAGE],
			timestamp: 1,
		};
		const model = { provider: "p", api: "a", id: "m" };
		const [seen] = linearize([result], 0, undefined, undefined, model);
		assert.equal(seen.tokens, Math.ceil(8 / 4) + IMAGE_TOKENS + 4, "a model that takes images pays for the image");
		const [placeholder] = linearize([result], 0, undefined, undefined, { ...model, images: false });
		assert.equal(placeholder.tokens, Math.ceil(8 / 4) + PLACEHOLDER_IMAGE_TOKENS + 4);
		assert.equal(placeholder.foldable, false, "an image result still never folds");
	});

	it("gives thinking another model wrote no cost and nothing to fold in a request to this one", () => {
		const model = { provider: "fo", api: "openai-completions", id: "model-b" };
		const reply = (provider: string, api: string, id: string, responseId: string): MessageLike => ({
			role: "assistant",
			responseId,
			provider,
			api,
			model: id,
			stopReason: "stop",
			content: [
				{ type: "thinking", thinking: "z".repeat(9_000) },
				{ type: "text", text: "t".repeat(9_000) },
			],
		});
		const messages = [
			reply("fa", "anthropic-messages", "model-a", "r1"),
			reply("fo", "openai-completions", "model-b", "r2"),
		];
		const memo = new BlockMemo();
		const before = linearize(messages, 0, undefined, memo);
		assert.ok(
			before.every((b) => b.foldable && b.tokens > 2_000),
			"without a model every reply's thinking counts",
		);
		const [foreign, text, own] = linearize(messages, 0, undefined, memo, model);
		assert.deepEqual([foreign.kind, foreign.tokens, foreign.foldable], ["thinking", 0, false]);
		assert.ok(text.foldable && text.tokens > 2_000, "another model's text is sent");
		assert.ok(own.foldable && own.tokens > 2_000, "this model's own thinking is sent");
		const back = linearize(messages, 0, undefined, memo, {
			provider: "fa",
			api: "anthropic-messages",
			id: "model-a",
		});
		assert.ok(back[0].foldable && back[0].tokens > 2_000, "the memo starts over when the model changes");
		assert.equal(back[2].tokens, 0);
	});

	it("makes tool-call args foldable when any string leaf outside a kept key is long enough", () => {
		const big = "x".repeat(ARG_FOLD_CHARS);
		const call = (args: unknown, id: string) => ({ type: "toolCall", id, name: "edit", arguments: args });
		const blocks = linearize([
			{
				role: "assistant",
				responseId: "r1",
				content: [
					call({ path: "a", content: big }, "w"),
					call({ path: "a", edits: [{ oldText: "o", newText: big }] }, "e"),
					call({ path: "a", content: big.slice(1) }, "s"),
				],
			},
		]);
		assert.deepEqual(
			blocks.map((b) => [b.id, b.foldable]),
			[
				["a:w:args", true],
				["a:e:args", true],
				["a:s:args", false],
			],
		);
	});

	it("never makes user, custom, bash, summary or unknown blocks foldable, however large", () => {
		const big = "y".repeat(50_000);
		const blocks = linearize([
			{ role: "user", content: big, timestamp: 1 },
			{ role: "custom", content: big, timestamp: 2 },
			{ role: "bashExecution", command: "x", output: big, timestamp: 3 },
			{ role: "compactionSummary", summary: big, timestamp: 4 },
			{ role: "branchSummary", summary: big, timestamp: 5 },
			{ role: "weird", content: big },
		]);
		for (const block of blocks) assert.equal(block.foldable, false, block.id);
	});

	it("gives a `!!cmd` run kept out of the context (excludeFromContext) no text and no cost", () => {
		const big = "z".repeat(30_000);
		const [kept, excluded] = linearize([
			{ role: "bashExecution", command: "ls", output: big, timestamp: 1 },
			{ role: "bashExecution", command: "cat log", output: big, excludeFromContext: true, timestamp: 2 },
		]);
		assert.ok(kept.tokens > 7000);
		assert.equal(excluded.text, "");
		assert.equal(excluded.tokens, 0);
		assert.equal(excluded.id, "u:bash:2");
	});

	it("makes assistant text foldable from TEXT_FOLD_CHARS on, unless it is signed", () => {
		const long = "t".repeat(TEXT_FOLD_CHARS);
		const blocks = linearize([
			{
				role: "assistant",
				responseId: "r",
				content: [
					{ type: "text", text: long },
					{ type: "text", text: long.slice(1) },
					{ type: "text", text: long, textSignature: "sig" },
				],
			},
		]);
		assert.deepEqual(
			blocks.map((b) => [b.id, b.foldable]),
			[
				["a:r:0", true],
				["a:r:1", false],
				["a:r:2", false],
			],
		);
	});

	it("never folds a string under a kept key such as path, however long", () => {
		const long = `src/${"deep/".repeat(40)}file.ts`;
		const [kept, folded] = linearize([
			{
				role: "assistant",
				responseId: "r",
				content: [
					{ type: "toolCall", id: "k", name: "read", arguments: { path: long } },
					{ type: "toolCall", id: "f", name: "bash", arguments: { command: long } },
				],
			},
		]);
		assert.equal(kept.foldable, false);
		assert.equal(folded.foldable, true);
	});

	it("does not fold empty unsigned thinking", () => {
		const [block] = linearize([
			{ role: "assistant", responseId: "r", content: [{ type: "thinking", thinking: "" }] },
		]);
		assert.equal(block.foldable, false);
	});
});

describe("durable ids", () => {
	it("anchors an assistant part on responseId, else on timestamp", () => {
		const blocks = linearize([
			{ role: "assistant", responseId: "resp_X", timestamp: 7, content: [{ type: "text", text: "a" }] },
			{ role: "assistant", timestamp: 8, content: [{ type: "text", text: "b" }] },
			{ role: "assistant", responseId: "", timestamp: 9, content: [{ type: "text", text: "c" }] },
		]);
		assert.deepEqual(
			blocks.map((b) => b.id),
			["a:resp_X:0", "a:t8:0", "a:t9:0"],
		);
	});

	it("gives anchorless messages positional ids that are not durable", () => {
		const blocks = linearize([
			{ role: "user", content: "no ts" },
			{
				role: "assistant",
				content: [
					{ type: "text", text: "x" },
					{ type: "thinking", thinking: "y" },
				],
			},
			{ role: "toolResult", toolName: "bash", content: "no call id" },
			{ role: "compactionSummary", summary: "s" },
			{ role: "custom", content: "c", timestamp: Number.NaN },
		]);
		assert.deepEqual(
			blocks.map((b) => b.id),
			["m0", "m1:0", "m1:1", "m2", "m3", "m4"],
		);
		for (const block of blocks) {
			assert.equal(block.durable, false, block.id);
			assert.equal(isDurableId(block.id), false, block.id);
		}
	});

	it("anchors a tool call without an id on its reply's part, and its result on its stamp", () => {
		const big = "z".repeat(ARG_FOLD_CHARS);
		const blocks = linearize([
			{ role: "assistant", responseId: "r", content: [{ type: "toolCall", name: "write", arguments: { c: big } }] },
			{ role: "toolResult", toolCallId: "", toolName: "write", content: "ok", timestamp: 9 },
		]);
		assert.deepEqual(
			blocks.map((b) => [b.id, b.durable]),
			[
				["a:r:0:args", true],
				["r:@9", true],
			],
		);
		const [bare] = linearize([{ role: "assistant", content: [{ type: "toolCall", name: "write", arguments: {} }] }]);
		assert.deepEqual([bare.id, bare.durable], ["m0:0", false], "no response id and no stamp: positional");
	});

	it("gives unknown assistant part types positional ids", () => {
		const [block] = linearize([{ role: "assistant", responseId: "r", content: [{ type: "audio", data: "..." }] }]);
		assert.equal(block.id, "m0:0");
		assert.equal(block.kind, "other");
		assert.equal(block.durable, false);
	});

	it("tells a repeated anchor apart by its message's stamp, then by a count in one millisecond; the first keeps its id", () => {
		const blocks = linearize([
			{ role: "user", content: "one", timestamp: 5 },
			{ role: "user", content: "two", timestamp: 5 },
			{ role: "toolResult", toolCallId: "dup", toolName: "read", content: "a", timestamp: 6 },
			{ role: "toolResult", toolCallId: "dup", toolName: "read", content: "b", timestamp: 7 },
			{ role: "toolResult", toolCallId: "dup", toolName: "read", content: "c", timestamp: 7 },
			{ role: "assistant", responseId: "same", content: [{ type: "text", text: "x" }] },
			{ role: "assistant", responseId: "same", content: [{ type: "text", text: "y" }] },
		]);
		assert.deepEqual(
			blocks.map((b) => [b.id, b.durable]),
			[
				["u:5", true],
				["u:5@5", true],
				["r:dup", true],
				["r:dup@7", true],
				["r:dup@7.2", true],
				["a:same:0", true],
				["m6:0", false],
			],
		);
		assert.equal(new Set(blocks.map((b) => b.id)).size, blocks.length);
		assert.deepEqual(splitRepeatedId("r:dup@7"), { id: "r:dup", ts: 7 });
		assert.equal(splitRepeatedId("r:dup"), undefined);
	});

	it("does not move when messages are prepended or appended", () => {
		const base = everyRole();
		const before = linearize(base).filter((b) => b.durable);
		const grown = linearize([
			{ role: "user", content: "earlier", timestamp: 1 },
			{
				role: "assistant",
				responseId: "resp_0",
				content: [{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "x" } }],
			},
			{ role: "toolResult", toolCallId: "call_0", toolName: "read", content: "x", timestamp: 2 },
			...base,
			{ role: "user", content: "later", timestamp: 9999 },
		]);
		for (const block of before) {
			const moved = grown.find((b) => b.id === block.id);
			assert.ok(moved, block.id);
			assert.equal(moved.text, block.text, block.id);
			assert.equal(moved.kind, block.kind, block.id);
			assert.equal(moved.msg, block.msg + 3, block.id);
		}
		// positional ids, by contrast, re-point
		const positional = linearize(base).filter((b) => !b.durable);
		for (const block of positional) {
			const same = grown.find((b) => b.id === block.id);
			assert.ok(!same || same.text !== block.text, block.id);
		}
	});

	it("tolerates non-object entries", () => {
		const blocks = linearize([null as unknown as MessageLike, { role: "user", content: "x", timestamp: 1 }]);
		assert.deepEqual(
			blocks.map((b) => b.id),
			["m0", "u:1"],
		);
	});
});

describe("messageBlocks", () => {
	it("computes the same ids as linearize for a message on its own", () => {
		const messages = everyRole();
		const all = linearize(messages);
		let turn = 0;
		messages.forEach((message, i) => {
			if (message.role === "user") turn++;
			const own = messageBlocks(message, i, turn);
			assert.deepEqual(
				own,
				all.filter((b) => b.msg === i),
			);
		});
	});
});

describe("ArgsCache", () => {
	const call = (id: string, args: Record<string, unknown>) => ({
		role: "assistant",
		responseId: `r-${id}`,
		timestamp: 1,
		content: [{ type: "toolCall", id, name: "write", arguments: args }],
	});

	it("gives the same blocks as an uncached linearize, turn after turn", () => {
		const cache: ArgsCache = new Map();
		const messages = [call("c1", { path: "a", content: "x".repeat(ARG_FOLD_CHARS) }), call("c2", { path: "b" })];
		const plain = linearize(messages);
		assert.deepEqual(linearize(structuredClone(messages), 0, cache), plain);
		assert.deepEqual(linearize(structuredClone(messages), 0, cache), plain, "served from the cache");
		assert.equal(cache.size, 2);
	});

	it("never serves stale text when a call id is reused with other arguments", () => {
		const cache: ArgsCache = new Map();
		linearize([call("c1", { path: "a", content: "x".repeat(ARG_FOLD_CHARS) })], 0, cache);
		const sameShape = [call("c1", { path: "a", content: `y${"x".repeat(ARG_FOLD_CHARS - 1)}` })];
		assert.deepEqual(linearize(sameShape, 0, cache), linearize(sameShape));
		const small = [call("c1", { path: "a", content: "short" })];
		const [block] = linearize(small, 0, cache);
		assert.equal(block.text, JSON.stringify({ path: "a", content: "short" }));
		assert.equal(block.foldable, false);
	});
});
