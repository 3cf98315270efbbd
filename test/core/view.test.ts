/**
 * buildView: frozen costs, eligibility, first-delivery holds for unseen results and parallel
 * batches, and lazily computed savings.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BlockMemo, linearize, type MessageLike } from "../../src/core/block.ts";
import { DEFAULT_LADDER, type ViewBlock } from "../../src/core/contract.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { foldedCost, renderFold, savingOf } from "../../src/core/lower.ts";
import { buildView, frozenFor, heldIds, type SavingsMemo } from "../../src/core/view.ts";

const BIG = Array.from({ length: 300 }, (_, i) => `line ${i} of output`).join("\n");
const BIG_ARG = "w".repeat(3000);

function call(id: string, name = "read", args: Record<string, unknown> = { path: id }) {
	return { type: "toolCall", id, name, arguments: args };
}

function result(id: string, text = BIG, ts = 1): MessageLike {
	return { role: "toolResult", toolCallId: id, toolName: "read", content: text, timestamp: ts };
}

/** An old delivered turn, then a parallel batch of three results after the latest assistant. */
function session(): MessageLike[] {
	return [
		{ role: "user", content: "go", timestamp: 1 },
		{
			role: "assistant",
			responseId: "A1",
			content: [call("old1"), call("oldw", "write", { path: "x", content: BIG_ARG })],
		},
		result("old1", BIG, 2),
		result("oldw", "wrote x", 3),
		{
			role: "assistant",
			responseId: "A2",
			content: [
				{ type: "thinking", thinking: "three reads at once" },
				call("p1"),
				call("p2"),
				call("p3", "write", { path: "y", content: BIG_ARG }),
				call("lost", "write", { path: "z", content: BIG_ARG }),
			],
		},
		result("p1", BIG, 4),
		result("p2", BIG, 5),
		result("p3", "wrote y", 6),
	];
}

describe("heldIds", () => {
	it("holds every tool result after the latest assistant message, as one batch", () => {
		const messages = session();
		const held = heldIds(messages, linearize(messages));
		for (const id of ["r:p1", "r:p2", "r:p3"]) assert.ok(held.has(id), id);
		assert.ok(!held.has("r:old1"));
		assert.ok(!held.has("r:oldw"));
	});

	it("holds the args of a call whose result is held or missing, not of a delivered one", () => {
		const messages = session();
		const held = heldIds(messages, linearize(messages));
		assert.ok(held.has("a:p3:args"), "result held");
		assert.ok(held.has("a:lost:args"), "result missing");
		assert.ok(held.has("a:p1:args"));
		assert.ok(!held.has("a:oldw:args"), "delivered");
		assert.ok(!held.has("a:old1:args"));
	});

	it("holds nothing else (user, thinking, text)", () => {
		const messages = session();
		const held = heldIds(messages, linearize(messages));
		assert.deepEqual([...held].sort(), [
			"a:lost:args",
			"a:p1:args",
			"a:p2:args",
			"a:p3:args",
			"r:p1",
			"r:p2",
			"r:p3",
		]);
	});

	it("releases the batch once a later assistant message exists", () => {
		const messages = [...session(), { role: "assistant", responseId: "A3", content: [{ type: "text", text: "ok" }] }];
		const held = heldIds(messages, linearize(messages));
		assert.deepEqual([...held], ["a:lost:args"]);
	});

	it("keeps holding the batch past a reply that failed or was aborted: no model answered it", () => {
		for (const stopReason of ["error", "aborted"]) {
			const failed = { role: "assistant", stopReason, content: [{ type: "text", text: "" }], timestamp: 7 };
			const messages = [...session(), failed, { role: "user", content: "continue", timestamp: 8 }];
			const held = heldIds(messages, linearize(messages));
			for (const id of ["r:p1", "r:p2", "r:p3"])
				assert.ok(held.has(id), `${id} after a reply that ended in ${stopReason}`);
			assert.ok(!held.has("r:old1"));
		}
	});

	it("holds every result when there is no assistant message at all", () => {
		const messages = [result("solo")];
		assert.deepEqual([...heldIds(messages, linearize(messages))], ["r:solo"]);
	});
});

describe("heldIds: calls a provider signed", () => {
	const gemini = { provider: "google", api: "google-generative-ai", id: "gemini-3-flash" };
	const signed = (id: string) => ({ ...call(id, "write", { path: id, content: BIG_ARG }), thoughtSignature: "c2ln" });
	/** A step of the prompt's turn with a signed write and an unsigned one beside it, delivered and answered. */
	function turn(): MessageLike[] {
		return [
			{ role: "user", content: "go", timestamp: 1 },
			{
				role: "assistant",
				provider: gemini.provider,
				api: gemini.api,
				model: gemini.id,
				content: [signed("s1"), call("u1", "write", { path: "u", content: BIG_ARG })],
				timestamp: 2,
			},
			result("s1", "wrote s1", 3),
			result("u1", "wrote u", 4),
			{ role: "assistant", provider: gemini.provider, api: gemini.api, model: gemini.id, content: [], timestamp: 5 },
		];
	}

	it("holds a signed call's arguments while its turn lasts, as Google asks for them back unchanged", () => {
		const messages = turn();
		const held = heldIds(messages, linearize(messages, 0, undefined, undefined, gemini));
		assert.ok(held.has("a:s1:args"), "signed, current turn");
		assert.ok(held.has("a:u1:args"), "unsigned, in the step a signed call opens (Gemini signs a step's first call)");
		assert.ok(!held.has("r:s1"), "its result is not signed");
	});

	it("holds the thinking and text of the signed step with it, not those of an unsigned step", () => {
		const thought = { type: "thinking", thinking: BIG };
		const said = { type: "text", text: BIG };
		const step = (content: unknown[], timestamp: number) => ({
			role: "assistant",
			provider: gemini.provider,
			api: gemini.api,
			model: gemini.id,
			content,
			timestamp,
		});
		const messages: MessageLike[] = [
			{ role: "user", content: "go", timestamp: 1 },
			step([thought, said, signed("s1")], 2),
			result("s1", "wrote s1", 3),
			step([thought, said, call("u1", "write", { path: "u", content: BIG_ARG })], 4),
			result("u1", "wrote u", 5),
			step([], 6),
		];
		const blocks = linearize(messages, 0, undefined, undefined, gemini);
		const held = heldIds(messages, blocks);
		const ids = (msg: number) => blocks.filter((b) => b.msg === msg && b.kind !== "toolResult").map((b) => b.id);
		for (const id of ids(1)) assert.ok(held.has(id), `signed step: ${id}`);
		for (const id of ids(3)) assert.ok(!held.has(id), `unsigned step: ${id}`);
		const ended = [...messages, { role: "user", content: "next", timestamp: 7 }];
		const after = heldIds(ended, linearize(ended, 0, undefined, undefined, gemini));
		for (const id of ids(1)) assert.ok(!after.has(id), `after the turn: ${id}`);
	});

	it("releases it once a user message ends the turn", () => {
		const messages = [...turn(), { role: "user", content: "next", timestamp: 6 }];
		assert.ok(!heldIds(messages, linearize(messages, 0, undefined, undefined, gemini)).has("a:s1:args"));
	});

	it("does not hold it for another model, which pi-ai sends it to without the signature", () => {
		const messages = turn();
		const other = { provider: "anthropic", api: "anthropic-messages", id: "claude" };
		assert.ok(!heldIds(messages, linearize(messages, 0, undefined, undefined, other)).has("a:s1:args"));
	});
});

describe("frozenFor", () => {
	it("returns frozen ops of present blocks, and marks as stale those whose extent changed", () => {
		const messages = session();
		const blocks = linearize(messages);
		const registry = new FoldRegistry();
		const b = blocks.find((x) => x.id === "r:old1");
		const w = blocks.find((x) => x.id === "a:oldw:args");
		assert.ok(b && w);
		const op1 = renderFold(b, messages[b.msg]);
		const op2 = renderFold(w, messages[w.msg]);
		assert.ok(op1 && op2);
		registry.addRecord({ id: b.id, code: op1.code, chars: b.text.length, seq: 1 });
		registry.addRecord({ id: w.id, code: op2.code, chars: w.text.length + 1, seq: 1 });
		registry.commitLayer(1, [op1, op2, { id: "r:gone", code: "gggggggg", text: "x" }]);
		const { ops, stale } = frozenFor(blocks, registry);
		assert.deepEqual(ops, [op1]);
		assert.deepEqual(stale, ["a:oldw:args"]);
	});
});

function view(
	messages: MessageLike[],
	registry = new FoldRegistry(),
	usage?: number | null,
	savings?: SavingsMemo,
	blockMemo?: BlockMemo,
) {
	const blocks = linearize(messages, 0, undefined, blockMemo);
	return {
		blocks,
		view: buildView({
			messages,
			blocks,
			frozen: frozenFor(blocks, registry),
			window: 200_000,
			usage,
			neverCacheRead: false,
			config: DEFAULT_LADDER,
			savings,
		}),
	};
}

function vb(blocks: readonly ViewBlock[], id: string): ViewBlock {
	const found = blocks.find((b) => b.id === id);
	assert.ok(found, id);
	return found;
}

describe("buildView", () => {
	it("lists every block with its cost, kind and flags", () => {
		const messages = session();
		const { blocks, view: v } = view(messages);
		assert.deepEqual(
			v.blocks.map((b) => [b.id, b.kind, b.tokens]),
			blocks.map((b) => [b.id, b.kind, b.tokens]),
		);
		assert.equal(v.window, 200_000);
		assert.equal(v.neverCacheRead, false);
		assert.equal(v.config, DEFAULT_LADDER);
		assert.equal(vb(v.blocks, "r:p1").held, true);
		assert.equal(vb(v.blocks, "r:old1").held, false);
		assert.equal(vb(v.blocks, "r:old1").eligible, true);
		assert.equal(vb(v.blocks, "u:1").eligible, false);
		assert.equal(vb(v.blocks, "a:old1:args").eligible, false, "small args");
		assert.equal(vb(v.blocks, "a:oldw:args").eligible, true);
	});

	it("counts the session's requests: its model replies, with those a compaction removed", () => {
		const messages = session();
		const replies = messages.filter((m) => m.role === "assistant").length;
		assert.ok(replies > 1 && replies < messages.length);
		assert.equal(view(messages).view.requests, replies);
		const blocks = linearize(messages);
		const input = {
			messages,
			blocks,
			frozen: frozenFor(blocks, new FoldRegistry()),
			window: 200_000,
			neverCacheRead: false,
			config: DEFAULT_LADDER,
		};
		assert.equal(buildView({ ...input, requestBase: 40 }).requests, 40 + replies);
	});

	it("says whether a compaction has run: the conversation then starts with its summary", () => {
		assert.equal(view(session()).view.compacted, undefined);
		const summary: MessageLike = { role: "compactionSummary", summary: "## Goal\nship it", timestamp: 0 };
		assert.equal(view([summary, ...session()]).view.compacted, true);
		// A summary anywhere else is not this session's compaction.
		const [first, ...rest] = session();
		assert.equal(view([first, summary, ...rest]).view.compacted, undefined);
	});

	it("uses the reported usage, else the local estimate", () => {
		const messages = session();
		const local = linearize(messages).reduce((n, b) => n + b.tokens, 0);
		assert.equal(view(messages, undefined, 12345).view.usage, 12345);
		assert.equal(view(messages, undefined, null).view.usage, local);
		assert.equal(view(messages).view.usage, local);
		assert.equal(view(messages, undefined, Number.NaN).view.usage, local);
		assert.equal(view(messages, undefined, -1).view.usage, local);
	});

	it("costs frozen blocks at their folded size, marks them frozen, and gives them no saving", () => {
		const messages = session();
		const blocks = linearize(messages);
		const b = blocks.find((x) => x.id === "r:old1");
		assert.ok(b);
		const op = renderFold(b, messages[b.msg]);
		assert.ok(op);
		const registry = new FoldRegistry();
		registry.addRecord({ id: b.id, code: op.code, chars: b.text.length, seq: 1 });
		registry.commitLayer(1, [op]);
		const { view: v } = view(messages, registry);
		const frozen = vb(v.blocks, "r:old1");
		assert.equal(frozen.frozen, true);
		assert.equal(frozen.tokens, foldedCost(b, op));
		assert.ok(frozen.tokens < b.tokens);
		assert.equal(frozen.eligible, false);
		assert.equal(frozen.saving, 0);
		const local = blocks.reduce((n, x) => n + x.tokens, 0) - b.tokens + foldedCost(b, op);
		assert.equal(v.usage, local);
	});

	it("gives savings equal to savingOf for eligible blocks", () => {
		const messages = session();
		const { blocks, view: v } = view(messages);
		for (const id of ["r:old1", "a:oldw:args", "a:A2:0"]) {
			const b = blocks.find((x) => x.id === id);
			assert.ok(b);
			assert.equal(vb(v.blocks, id).saving, savingOf(b, messages[b.msg]), id);
		}
		assert.ok(vb(v.blocks, "r:old1").saving > 0);
	});

	it("gives 0 saving to ineligible blocks: user, signed thinking, positional, unfolded, held raw", () => {
		const messages: MessageLike[] = [
			{ role: "user", content: BIG, timestamp: 1 },
			{
				role: "assistant",
				responseId: "A",
				content: [
					{ type: "thinking", thinking: BIG, thinkingSignature: "sig" },
					call("u1"),
					call("u2"),
					call("u3"),
				],
			},
			result("u1", BIG, 2),
			result("u2", BIG, 3),
			{ role: "toolResult", toolName: "read", content: BIG },
			{ role: "assistant", responseId: "B", content: [{ type: "text", text: "x" }] },
		];
		const registry = new FoldRegistry();
		registry.unfold("r:u1");
		registry.holdRaw("r:u2");
		const { view: v } = view(messages, registry);
		for (const id of ["u:1", "a:A:0", "r:u1", "r:u2", "m4"]) {
			assert.equal(vb(v.blocks, id).eligible, false, id);
			assert.equal(vb(v.blocks, id).saving, 0, id);
		}
	});

	it("gives 0 saving when the digest is not smaller than the block", () => {
		const messages = session();
		const { view: v } = view(messages);
		const small = vb(v.blocks, "r:oldw");
		assert.equal(small.eligible, true);
		assert.equal(small.saving, 0);
	});

	it("computes savings lazily and memoizes them by block object", () => {
		const messages = session();
		const memo: SavingsMemo = new WeakMap();
		const { view: v, blocks } = view(messages, undefined, undefined, memo);
		const block = blocks.find((b) => b.id === "r:old1");
		assert.ok(block);
		assert.equal(memo.has(block), false, "nothing computed before a policy reads a saving");
		const first = vb(v.blocks, "r:old1").saving;
		assert.deepEqual(memo.get(block), { saving: first });
		memo.set(block, { saving: 777 });
		assert.equal(vb(v.blocks, "r:old1").saving, 777);
		// The provider's count of it is worked out once asked, and kept beside it (ASCII: the same).
		assert.equal(vb(v.blocks, "r:old1").providerSaving, 777);
		assert.deepEqual(memo.get(block), { saving: 777, provider: 777 });
	});

	it("counts a saving as the provider may: CJK text about four times its chars/4, ASCII as it is", () => {
		const messages = session();
		const cjk = Array.from({ length: 300 }, (_, i) => `第${i}行：模块加载完成，等待下一步指令`).join("\n");
		messages[2] = result("old1", cjk, 2);
		const old = vb(view(messages).view.blocks, "r:old1");
		assert.ok(old.saving > 0);
		const scale = (old.providerSaving ?? 0) / old.saving;
		assert.ok(scale > 2.5 && scale < 4, `scaled ${scale.toFixed(2)}x`);
		const ascii = vb(view(session()).view.blocks, "r:old1");
		assert.equal(ascii.providerSaving, ascii.saving);
	});

	it("works a saving out again when its block was edited in place (same id, new text)", () => {
		const memo: SavingsMemo = new WeakMap();
		const blockMemo = new BlockMemo();
		const messages = session();
		const before = vb(view(messages, undefined, undefined, memo, blockMemo).view.blocks, "r:old1").saving;
		const again = structuredClone(messages);
		assert.equal(vb(view(again, undefined, undefined, memo, blockMemo).view.blocks, "r:old1").saving, before);
		const edited = structuredClone(messages);
		const old1 = edited.find((m) => m.role === "toolResult" && m.toolCallId === "old1");
		assert.ok(old1);
		old1.content = "short now";
		assert.equal(vb(view(edited, undefined, undefined, memo, blockMemo).view.blocks, "r:old1").saving, 0);
	});
});
