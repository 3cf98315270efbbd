/**
 * applyPlan, the only rewrite: refusals (positional ids, unknown ids, duplicates, bad ops), re-
 * tagging with the op's own code, and length and pairing kept.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPlan, type FoldOp, retag } from "../../src/core/apply.ts";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { foldCode, foldTag } from "../../src/core/digest.ts";
import { renderFold } from "../../src/core/lower.ts";

const BIG = `line one\n${"x".repeat(2000)}`;

function session(): MessageLike[] {
	return [
		{ role: "user", content: "go", timestamp: 100 },
		{
			role: "assistant",
			responseId: "resp_1",
			content: [
				{ type: "thinking", thinking: "plan: read then write" },
				{ type: "thinking", thinking: "sealed", thinkingSignature: "sig" },
				{ type: "toolCall", id: "c_read", name: "read", arguments: { path: "a.ts" } },
				{ type: "toolCall", id: "c_write", name: "write", arguments: { path: "b.ts", content: BIG } },
				{ type: "toolCall", id: "c_img", name: "read", arguments: { path: "p.png" } },
			],
		},
		{
			role: "toolResult",
			toolCallId: "c_read",
			toolName: "read",
			content: [{ type: "text", text: BIG }],
			timestamp: 101,
		},
		{ role: "toolResult", toolCallId: "c_write", toolName: "write", content: "wrote b.ts", timestamp: 102 },
		{
			role: "toolResult",
			toolCallId: "c_img",
			toolName: "read",
			content: [
				{ type: "text", text: "image" },
				{ type: "image", data: "AAAA", mimeType: "image/png" },
			],
			timestamp: 103,
		},
		{ role: "custom", content: "no timestamp here" },
		{ role: "assistant", responseId: "resp_2", content: [{ type: "text", text: "done" }] },
	];
}

/** The engine's own op for `id`. */
function opFor(messages: MessageLike[], id: string): FoldOp {
	const block = linearize(messages).find((b) => b.id === id);
	assert.ok(block, id);
	const op = renderFold(block, messages[block.msg]);
	assert.ok(op, id);
	return op;
}

function allOps(messages: MessageLike[]): FoldOp[] {
	return ["r:c_read", "a:c_write:args", "a:resp_1:0", "r:c_write"].map((id) => opFor(messages, id));
}

/** Every tool call (id, name) and every tool result's toolCallId, in order. */
function pairing(messages: readonly MessageLike[]): string[] {
	const out: string[] = [];
	for (const message of messages) {
		if (message.role === "toolResult") out.push(`result ${String(message.toolCallId)}`);
		if (message.role === "assistant" && Array.isArray(message.content)) {
			for (const part of message.content as Record<string, unknown>[]) {
				if (part.type === "toolCall") out.push(`call ${String(part.id)} ${String(part.name)}`);
			}
		}
	}
	return out;
}

describe("applyPlan", () => {
	it("folds tool results, tool-call args and unsigned thinking", () => {
		const messages = session();
		const ops = allOps(messages);
		const { messages: out, applied, refused } = applyPlan(messages, ops);
		assert.deepEqual(applied, ["r:c_read", "a:c_write:args", "a:resp_1:0", "r:c_write"]);
		assert.deepEqual(refused, []);
		assert.deepEqual(out[2].content, [{ type: "text", text: ops[0].text }]);
		const parts = out[1].content as Record<string, unknown>[];
		assert.equal(parts[0].thinking, ops[2].text);
		assert.deepEqual(parts[3].arguments, ops[1].args);
		assert.equal((parts[3].arguments as Record<string, unknown>).path, "b.ts");
		assert.ok(String((parts[3].arguments as Record<string, unknown>).content).startsWith(foldTag(ops[1].code)));
	});

	it("keeps the array length", () => {
		const messages = session();
		const { messages: out } = applyPlan(messages, allOps(messages));
		assert.equal(out.length, messages.length);
	});

	it("keeps every tool call's id and name and every result's toolCallId", () => {
		const messages = session();
		const before = pairing(messages);
		const { messages: out } = applyPlan(messages, allOps(messages));
		assert.deepEqual(pairing(out), before);
		assert.deepEqual(before, [
			"call c_read read",
			"call c_write write",
			"call c_img read",
			"result c_read",
			"result c_write",
			"result c_img",
		]);
	});

	it("keeps every other field of a rewritten message and part", () => {
		const messages = session();
		messages[2].isError = false;
		messages[2].details = { truncated: true };
		const { messages: out } = applyPlan(messages, allOps(messages));
		assert.equal(out[2].role, "toolResult");
		assert.equal(out[2].toolName, "read");
		assert.equal(out[2].isError, false);
		assert.deepEqual(out[2].details, { truncated: true });
		assert.equal(out[2].timestamp, 101);
		assert.equal(out[1].responseId, "resp_1");
		const parts = out[1].content as Record<string, unknown>[];
		assert.equal(parts.length, 5);
		assert.deepEqual(parts[1], { type: "thinking", thinking: "sealed", thinkingSignature: "sig" });
		assert.deepEqual(parts[2], { type: "toolCall", id: "c_read", name: "read", arguments: { path: "a.ts" } });
	});

	it("does not mutate its input, and keeps the identity of untouched messages", () => {
		const messages = session();
		const ops = allOps(messages);
		const before = structuredClone(messages);
		const opsBefore = structuredClone(ops);
		const { messages: out } = applyPlan(messages, ops);
		assert.deepEqual(messages, before);
		assert.deepEqual(ops, opsBefore);
		assert.notEqual(out, messages);
		assert.equal(out[0], messages[0]);
		assert.equal(out[4], messages[4]);
		assert.equal(out[6], messages[6]);
		assert.notEqual(out[1], messages[1]);
		assert.notEqual(out[2], messages[2]);
	});

	it("is deterministic", () => {
		const a = applyPlan(session(), allOps(session()));
		const b = applyPlan(session(), allOps(session()));
		assert.equal(JSON.stringify(a), JSON.stringify(b));
	});

	it("with no ops returns an equal array", () => {
		const messages = session();
		const { messages: out, applied, refused } = applyPlan(messages, []);
		assert.deepEqual(out, messages);
		assert.deepEqual(applied, []);
		assert.deepEqual(refused, []);
	});

	it("refuses ops on unknown ids", () => {
		const messages = session();
		const {
			messages: out,
			refused,
			applied,
		} = applyPlan(messages, [
			{ id: "r:nope", code: foldCode("r:nope"), text: "x" },
			{ id: "a:resp_9:0", code: foldCode("a:resp_9:0"), text: "x" },
		]);
		assert.deepEqual(applied, []);
		assert.deepEqual(refused, [
			{ id: "r:nope", reason: "unknown-id" },
			{ id: "a:resp_9:0", reason: "unknown-id" },
		]);
		assert.deepEqual(out, messages);
	});

	it("refuses ops on positional ids", () => {
		const messages = session();
		// m5 is the custom message without a timestamp; m2 is a durable block's position, not its id
		const { refused, messages: out } = applyPlan(messages, [
			{ id: "m5", code: foldCode("m5"), text: "x" },
			{ id: "m2", code: foldCode("m2"), text: "x" },
		]);
		assert.deepEqual(refused, [
			{ id: "m5", reason: "not-durable" },
			{ id: "m2", reason: "unknown-id" },
		]);
		assert.deepEqual(out, messages);
	});

	it("refuses a positional tool result even when its kind is foldable", () => {
		const messages: MessageLike[] = [
			{ role: "assistant", responseId: "r", content: [{ type: "text", text: "x" }] },
			{ role: "toolResult", toolName: "read", content: BIG },
		];
		const [, block] = linearize(messages);
		assert.equal(block.id, "m1");
		assert.equal(block.foldable, true);
		const { refused } = applyPlan(messages, [{ id: "m1", code: foldCode("m1"), text: "x" }]);
		assert.deepEqual(refused, [{ id: "m1", reason: "not-durable" }]);
	});

	it("refuses ops on unfoldable kinds", () => {
		const messages = session();
		const ids = ["u:100", "a:resp_1:1", "a:c_read:args", "r:c_img", "a:resp_2:0"];
		const {
			refused,
			applied,
			messages: out,
		} = applyPlan(
			messages,
			ids.map((id) => ({ id, code: foldCode(id), text: "digest", args: { path: "x" } })),
		);
		assert.deepEqual(applied, []);
		assert.deepEqual(
			refused,
			ids.map((id) => ({ id, reason: "not-foldable" })),
		);
		assert.deepEqual(out, messages);
	});

	it("refuses malformed ops", () => {
		const messages = session();
		const read = opFor(messages, "r:c_read");
		const args = opFor(messages, "a:c_write:args");
		const think = opFor(messages, "a:resp_1:0");
		const bad: FoldOp[] = [
			{ id: "r:c_read", code: read.code },
			{ id: "r:c_write", code: foldCode("r:c_write"), text: 42 as unknown as string },
			{ id: "a:resp_1:0", code: "NOT A CODE", text: think.text },
			{ id: "a:c_write:args", code: args.code, text: "args need args" },
		];
		const first = applyPlan(messages, bad);
		assert.deepEqual(first.applied, []);
		assert.deepEqual(
			first.refused.map((r) => r.reason),
			["bad-op", "bad-op", "bad-op", "bad-op"],
		);
		const more: FoldOp[] = [
			{ id: "r:c_read", code: "abc1234", text: "seven-char code" },
			{ id: "r:c_write", code: undefined as unknown as string, text: "no code" },
			{ id: "a:c_write:args", code: args.code, args: ["not", "an", "object"] as unknown as Record<string, unknown> },
			{ id: "a:resp_1:0", code: think.code, args: { thinking: "wrong shape" } },
		];
		const second = applyPlan(messages, more);
		assert.deepEqual(second.applied, []);
		assert.deepEqual(
			second.refused.map((r) => r.reason),
			["bad-op", "bad-op", "bad-op", "bad-op"],
		);
		assert.deepEqual(second.messages, messages);
	});

	it("refuses ops that are not objects or have no string id, without throwing", () => {
		const messages = session();
		const junk = [null, undefined, 7, "r:c_read", { code: "abc12345", text: "x" }] as unknown as FoldOp[];
		const read = opFor(messages, "r:c_read");
		const { applied, refused, messages: out } = applyPlan(messages, [...junk, read]);
		assert.deepEqual(applied, ["r:c_read"]);
		assert.equal(refused.length, junk.length);
		for (const refusal of refused) assert.equal(refusal.reason, "bad-op");
		assert.equal(out.length, messages.length);
	});

	it("applies each id at most once (single disposition)", () => {
		const messages = session();
		const read = opFor(messages, "r:c_read");
		const other = { ...read, text: "second disposition" };
		const { applied, refused, messages: out } = applyPlan(messages, [read, other]);
		assert.deepEqual(applied, ["r:c_read"]);
		assert.deepEqual(refused, [{ id: "r:c_read", reason: "duplicate-op" }]);
		assert.deepEqual(out[2].content, [{ type: "text", text: read.text }]);
	});

	it("a refused first op still claims the id: a later op for it is a duplicate", () => {
		const messages = session();
		const read = opFor(messages, "r:c_read");
		const { applied, refused } = applyPlan(messages, [{ id: read.id, code: read.code }, read]);
		assert.deepEqual(applied, []);
		assert.deepEqual(
			refused.map((r) => r.reason),
			["bad-op", "duplicate-op"],
		);
	});

	it("re-tags: a foreign or wrong leading tag gives way to the engine's tag for the op's code", () => {
		const messages = session();
		const code = foldCode("r:c_read");
		const { messages: out } = applyPlan(messages, [
			{ id: "r:c_read", code, text: "{#zzzzzzzz FOLDED} {#ABC123 FOLDED}  read: forged summary" },
		]);
		assert.deepEqual(out[2].content, [{ type: "text", text: `{#${code} FOLDED} read: forged summary` }]);
	});

	it("re-tags text that carries no tag at all", () => {
		const messages = session();
		const code = foldCode("a:resp_1:0");
		const { messages: out } = applyPlan(messages, [{ id: "a:resp_1:0", code, text: "plain digest" }]);
		const parts = out[1].content as Record<string, unknown>[];
		assert.equal(parts[0].thinking, `{#${code} FOLDED} plain digest`);
	});

	it("re-tags every replaced large argument string, tagged wrongly or not at all", () => {
		const messages = session();
		const code = foldCode("a:c_write:args");
		for (const content of ["{#00000000 FOLDED} {#qqqqqq FOLDED} 2009 chars", "2009 chars"]) {
			const { messages: out, applied } = applyPlan(messages, [
				{ id: "a:c_write:args", code, args: { path: "b.ts", content } },
			]);
			assert.deepEqual(applied, ["a:c_write:args"]);
			const parts = out[1].content as Record<string, unknown>[];
			assert.deepEqual(parts[3].arguments, { path: "b.ts", content: `{#${code} FOLDED} 2009 chars` });
		}
	});

	it("refuses args ops that would not keep the call well-formed (keys and small values)", () => {
		const messages = session();
		const code = foldCode("a:c_write:args");
		const {
			applied,
			refused,
			messages: out,
		} = applyPlan(messages, [{ id: "a:c_write:args", code, args: { path: "b.ts", content: "d", extra: 1 } }]);
		assert.deepEqual(applied, []);
		assert.deepEqual(refused, [{ id: "a:c_write:args", reason: "bad-op" }]);
		assert.deepEqual(out, messages);
		for (const args of [{ path: "b.ts" }, { path: "other.ts", content: "d" }, { path: "b.ts", content: 5 }]) {
			const result = applyPlan(messages, [{ id: "a:c_write:args", code, args }]);
			assert.deepEqual(result.refused, [{ id: "a:c_write:args", reason: "bad-op" }], JSON.stringify(args));
		}
	});

	it("accepts precomputed blocks of the same array", () => {
		const messages = session();
		const blocks = linearize(messages);
		const ops = allOps(messages);
		assert.deepEqual(applyPlan(messages, ops, blocks), applyPlan(messages, ops));
	});
});

describe("retag", () => {
	it("puts the engine tag in front of the text, dropping leading tags only", () => {
		assert.equal(retag("abc12345", "hello"), "{#abc12345 FOLDED} hello");
		assert.equal(retag("abc12345", "  {#zzzzzzzz FOLDED}hello"), "{#abc12345 FOLDED} hello");
		assert.equal(retag("abc12345", "see {#zzzzzzzz FOLDED}"), "{#abc12345 FOLDED} see {#zzzzzzzz FOLDED}");
	});

	it("keeps a 0.5.1 digest byte for byte when its own tag heads it, a cited tag after it included", () => {
		const digest = "{#wk1jhb FOLDED} {#lfnrzh FOLDED} shows the header test failing";
		assert.equal(retag("wk1jhb", digest, true), digest);
		assert.equal(retag("wk1jhb", digest), "{#wk1jhb FOLDED} shows the header test failing", "this version's ops");
		assert.equal(
			retag("wk1jhb", "{#zzzzzz FOLDED} x", true),
			"{#wk1jhb FOLDED} x",
			"another code's head is replaced",
		);
	});
});
