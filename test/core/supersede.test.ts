/**
 * Superseded file versions (src/core/supersede.ts): which `read` results a later call made stale,
 * and how the economic policy's tails treat them (cold, like everything the model does not re-read).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { DEFAULT_LADDER, type PolicyView, type ViewBlock } from "../../src/core/contract.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { economicTails, isHot } from "../../src/core/policy/cache-economic.ts";
import { supersededReads } from "../../src/core/supersede.ts";
import { buildView, frozenFor } from "../../src/core/view.ts";

let clock = 1000;
/** One assistant call and its result. */
function call(id: string, name: string, args: Record<string, unknown>, result = "ok", isError = false): MessageLike[] {
	clock += 2;
	return [
		{
			role: "assistant",
			responseId: `resp_${id}`,
			timestamp: clock,
			content: [{ type: "toolCall", id, name, arguments: args }],
		},
		{
			role: "toolResult",
			toolCallId: id,
			toolName: name,
			isError,
			timestamp: clock + 1,
			content: [{ type: "text", text: result }],
		},
	];
}

function superseded(messages: MessageLike[]): string[] {
	return [...supersededReads(messages, linearize(messages))].sort();
}

describe("supersededReads", () => {
	it("marks a read once the file is written or edited later", () => {
		const messages = [
			...call("r1", "read", { path: "src/a.ts" }),
			...call("e1", "edit", { path: "src/a.ts", edits: [] }),
			...call("r2", "read", { path: "src/b.ts" }),
			...call("w1", "write", { path: "./src/b.ts", content: "x" }),
			...call("r3", "read", { path: "src/c.ts" }),
		];
		assert.deepEqual(superseded(messages), ["r:r1", "r:r2"]);
	});

	it("marks a read once the same lines or the whole file are read again, not another range", () => {
		const messages = [
			...call("r1", "read", { path: "a.ts", offset: 10, limit: 20 }),
			...call("r2", "read", { path: "a.ts", offset: 40, limit: 20 }),
			...call("r3", "read", { path: "a.ts", offset: 10, limit: 20 }),
			...call("r4", "read", { path: "b.ts" }),
			...call("r5", "read", { path: "b.ts", offset: 1, limit: 5 }),
			...call("r6", "read", { path: "c.ts", offset: 1, limit: 5 }),
			...call("r7", "read", { path: "c.ts" }),
		];
		assert.deepEqual(superseded(messages), ["r:r1", "r:r6"]);
	});

	it("takes a whole-file read that Pi cut short for the lines it showed, not the whole file", () => {
		const lines = (from: number, to: number) =>
			Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`).join("\n");
		const messages = [
			...call("r1", "read", { path: "big.ts", offset: 3000, limit: 100 }, lines(3000, 3099)),
			...call(
				"r2",
				"read",
				{ path: "big.ts" },
				`${lines(1, 2000)}\n\n[Showing lines 1-2000 of 6000. Use offset=2001 to continue.]`,
			),
			...call(
				"r3",
				"read",
				{ path: "huge.min.js", offset: 1, limit: 1 },
				"[Line 1 is 80KB, exceeds 50KB limit. Use bash: head -c 50000 huge.min.js]",
			),
			...call(
				"r4",
				"read",
				{ path: "huge.min.js" },
				"[Line 1 is 80KB, exceeds 50KB limit. Use bash: head -c 50000 huge.min.js]",
			),
			...call(
				"r5",
				"read",
				{ path: "big.ts" },
				`${lines(1, 2000)}\n\n[4000 more lines in file. Use offset=2001 to continue.]`,
			),
			...call("r6", "read", { path: "small.ts", offset: 5, limit: 2 }, lines(5, 6)),
			...call("r7", "read", { path: "small.ts" }, lines(1, 40)),
		];
		// r2 showed the same lines again as r5 (no offset, no limit); r1's lines were never shown again.
		assert.deepEqual(superseded(messages), ["r:r2", "r:r6"]);
	});

	it("ignores failed calls, other tools, and calls without a path", () => {
		const messages = [
			...call("r1", "read", { path: "a.ts" }),
			...call("e1", "edit", { path: "a.ts" }, "no match", true),
			...call("b1", "bash", { command: "cat a.ts", path: "a.ts" }),
			...call("r2", "read", { file: "a.ts" }),
			...call("r3", "read", { path: "b.ts" }, "ENOENT", true),
			...call("r4", "read", { path: "b.ts" }),
		];
		assert.deepEqual(superseded(messages), []);
	});
});

describe("superseded reads in the view and the economic tails", () => {
	it("the view marks them, and the hot tail does not protect them", () => {
		const big = "line\n".repeat(4000);
		const messages: MessageLike[] = [
			{ role: "user", content: "go", timestamp: 1 },
			...call("r1", "read", { path: "a.ts" }, big),
			...call("e1", "edit", { path: "a.ts", edits: [] }),
			...call("r2", "read", { path: "b.ts" }, big),
			...call("x1", "bash", { command: "true" }),
		];
		const blocks = linearize(messages);
		const view: PolicyView = buildView({
			messages,
			blocks,
			frozen: frozenFor(blocks, new FoldRegistry()),
			window: 200_000,
			neverCacheRead: false,
			config: { ...DEFAULT_LADDER },
		});
		const byId = new Map(view.blocks.map((b) => [b.id, b] as const));
		assert.equal(byId.get("r:r1")?.superseded, true);
		assert.equal(byId.get("r:r2")?.superseded, false);
		assert.equal(isHot(byId.get("r:r1") as ViewBlock), false);
		assert.equal(isHot(byId.get("r:r2") as ViewBlock), true);
		const tail = economicTails(view.blocks, 50_000, 100);
		assert.ok(tail.has("r:r2"), "an unsuperseded read within the hot tail is protected");
		assert.ok(!tail.has("r:r1"), "a superseded read gets only the cold tail");
	});
});
