/**
 * A provider that repeats its tool call ids (numbering them from zero in each reply, or a scripted
 * server started for each process): each call is paired with its own result, the first later result
 * with its id, wherever calls and results are paired: the seed record's commands (their codes and
 * error marks), what the model has not seen yet, and where an offset read's lines start.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Block, linearize, type MessageLike, resultAfter } from "../../src/core/block.ts";
import { readStarts } from "../../src/core/call-facts.ts";
import { foldCode } from "../../src/core/digest.ts";
import { extractSeedRecord } from "../../src/core/index/extract.ts";
import { contentKey } from "../../src/core/lower.ts";
import { supersededReads } from "../../src/core/supersede.ts";
import { useOf } from "../../src/core/use-ages.ts";
import { heldIds } from "../../src/core/view.ts";

let clock = 1_700_000_000_000;
const call = (name: string, args: Record<string, unknown>): MessageLike => ({
	role: "assistant",
	content: [{ type: "toolCall", id: "call_0", name, arguments: args }],
	stopReason: "toolUse",
	timestamp: clock++,
});
const result = (name: string, text: string, isError = false): MessageLike => ({
	role: "toolResult",
	toolCallId: "call_0",
	toolName: name,
	content: [{ type: "text", text }],
	isError,
	timestamp: clock++,
});
const lines = (tag: string) => Array.from({ length: 40 }, (_, k) => `${tag} line ${k + 1}`).join("\n");

describe("tool calls that all carry one id", () => {
	const messages: MessageLike[] = [
		{ role: "user", content: "build it", timestamp: clock++ },
		call("bash", { command: "make one" }),
		result("bash", lines("one")),
		call("bash", { command: "make two" }),
		result("bash", `${lines("two")}\nError: step two failed`, true),
		call("read", { path: "src/a.ts", offset: 200 }),
		result("read", lines("source")),
		call("bash", { command: "make three" }),
	];
	const blocks = linearize(messages);
	const at = (predicate: (b: Block) => boolean) => blocks.findIndex(predicate);

	it("pairs each call with the first later result of its id", () => {
		const two = at((b) => b.kind === "toolArgs" && b.text.includes("make two"));
		assert.equal(blocks[resultAfter(blocks, two)].text.startsWith("two line 1"), true);
		const three = at((b) => b.kind === "toolArgs" && b.text.includes("make three"));
		assert.equal(resultAfter(blocks, three), -1, "no result yet");
	});

	it("gives each command of a seed record its own result's code and error mark", () => {
		const record = extractSeedRecord({ kind: "compaction", seq: 1, messages, spans: [] });
		const results = blocks.filter((b) => b.kind === "toolResult" && b.toolName === "bash");
		assert.deepEqual(
			record.commands.map((c) => [c.command, c.code, c.error]),
			[
				["make one", foldCode(results[0].id), false],
				["make two", foldCode(results[1].id), true],
				["make three", undefined, undefined],
			],
		);
		assert.notEqual(results[0].id, results[1].id);
	});

	it("holds the arguments of a call whose own result the model has not seen, whatever earlier results carry its id", () => {
		const held = heldIds(messages, blocks);
		const three = blocks[at((b) => b.kind === "toolArgs" && b.text.includes("make three"))];
		const one = blocks[at((b) => b.kind === "toolArgs" && b.text.includes("make one"))];
		assert.ok(held.has(three.id), "the pending call's arguments");
		assert.ok(!held.has(one.id), "an answered call's arguments");
	});

	it("numbers an offset read's result from its own call's offset, and no later result from it", () => {
		const starts = readStarts(messages, blocks);
		const source = blocks[at((b) => b.kind === "toolResult" && b.toolName === "read")];
		assert.deepEqual([...starts], [[source.id, 200]]);
	});

	it("supersedes a read by a later read of the same file, naming the earlier read's own result", () => {
		const reads: MessageLike[] = [
			{ role: "user", content: "look", timestamp: clock++ },
			call("bash", { command: "ls" }),
			result("bash", "a.ts"),
			call("read", { path: "a.ts" }),
			result("read", lines("first read")),
			call("read", { path: "a.ts" }),
			result("read", lines("second read")),
		];
		const all = linearize(reads);
		const first = all.find((b) => b.kind === "toolResult" && b.text.startsWith("first read"));
		assert.deepEqual([...supersededReads(reads, all)], [first?.id]);
	});

	it("counts an edit of a file as a use of its own read, not of an earlier result with the same id", () => {
		const FILE = "export function parseHeader(raw_line) {}\nconst MAX_HEADER_SIZE = 8192;";
		const edits: MessageLike[] = [
			{ role: "user", content: "fix it", timestamp: clock++ },
			call("bash", { command: "true" }),
			result("bash", "ok"),
			call("read", { path: "src/h.ts" }),
			result("read", FILE),
		];
		for (let i = 0; i < 5; i++) edits.push(call("bash", { command: "true" }), result("bash", "ok"));
		edits.push(call("edit", { path: "src/h.ts", oldText: "8192", newText: "16384" }), result("edit", "done"));
		edits.push(call("bash", { command: "true" }), result("bash", "ok"));
		const all = linearize(edits);
		const read = all.findIndex((b) => b.kind === "toolResult" && b.toolName === "read");
		assert.equal(useOf(edits, all).ages[read], 1, "used by the edit, one model message ago");
	});

	it("pairs the calls of one reply that share an id with their results in order, and an aborted reply's call with none", () => {
		const parallel: MessageLike[] = [
			{ role: "user", content: "go", timestamp: clock++ },
			{
				role: "assistant",
				content: [{ type: "toolCall", id: "call_0", name: "bash", arguments: { command: "make deploy" } }],
				stopReason: "aborted",
				timestamp: clock++,
			},
			{ role: "user", content: "again", timestamp: clock++ },
			{
				role: "assistant",
				content: [
					{ type: "toolCall", id: "call_0", name: "bash", arguments: { command: "make a" } },
					{ type: "toolCall", id: "call_0", name: "bash", arguments: { command: "make b" } },
				],
				stopReason: "toolUse",
				timestamp: clock++,
			},
			result("bash", "a done"),
			result("bash", "b done", true),
		];
		const all = linearize(parallel);
		const args = (command: string) => all.findIndex((b) => b.kind === "toolArgs" && b.text.includes(command));
		assert.equal(resultAfter(all, args("make deploy")), -1, "the aborted reply's call never ran");
		assert.equal(all[resultAfter(all, args("make a"))].text, "a done");
		assert.equal(all[resultAfter(all, args("make b"))].text, "b done");
		const record = extractSeedRecord({ kind: "compaction", seq: 1, messages: parallel, spans: [] });
		assert.deepEqual(
			record.commands.map((c) => [c.command, c.error]),
			[
				["make deploy", undefined],
				["make a", false],
				["make b", true],
			],
		);
	});

	it("gives a block no code of a record another block holds under its id, and the code of the record of its bytes", () => {
		const record = (id: string, code: string, text: string) => ({
			id,
			code,
			chars: text.length,
			seq: 1,
			kind: "toolResult" as const,
			tool: "bash",
			turn: 1,
			key: contentKey(text),
		});
		const two = blocks.find((b) => b.kind === "toolResult" && b.text.startsWith("two line 1")) as Block;
		const other = record(two.id, "aaaaaaaa", "other bytes");
		const own = record("r:call_0@1", "bbbbbbbb", two.text);
		const codes = (spans: ReturnType<typeof record>[]) =>
			extractSeedRecord({ kind: "compaction", seq: 2, messages, spans }).commands.find(
				(c) => c.command === "make two",
			)?.code;
		assert.equal(codes([other]), undefined, "not the other block's code");
		assert.equal(codes([other, own]), "bbbbbbbb", "the code its bytes were folded under");
	});

	it("lets a failed call supersede nothing, whatever other calls share its id", () => {
		const reads: MessageLike[] = [
			{ role: "user", content: "look", timestamp: clock++ },
			call("bash", { command: "false" }),
			result("bash", "exit 1", true),
			call("read", { path: "b.ts" }),
			result("read", lines("first read")),
			call("read", { path: "b.ts" }),
			result("read", lines("second read")),
		];
		const all = linearize(reads);
		const first = all.find((b) => b.kind === "toolResult" && b.text.startsWith("first read"));
		assert.deepEqual([...supersededReads(reads, all)], [first?.id]);
	});
});

describe("tool calls without an id (a provider that sends none)", () => {
	const noId = (name: string, args: Record<string, unknown>): MessageLike => ({
		role: "assistant",
		content: [{ type: "toolCall", id: "", name, arguments: args }],
		stopReason: "toolUse",
		timestamp: clock++,
	});
	const noIdResult = (name: string, text: string): MessageLike => ({
		role: "toolResult",
		toolCallId: "",
		toolName: name,
		content: [{ type: "text", text }],
		isError: false,
		timestamp: clock++,
	});

	it("numbers an offset read from its call's offset", () => {
		const messages: MessageLike[] = [
			{ role: "user", content: "read the tail", timestamp: clock++ },
			noId("read", { path: "big.txt", offset: 2001 }),
			noIdResult("read", lines("tail")),
		];
		const blocks = linearize(messages);
		const read = blocks.find((b) => b.kind === "toolResult") as Block;
		assert.equal(readStarts(messages, blocks).get(read.id), 2001);
	});

	it("numbers each of a reply's parallel offset reads from its own call's offset", () => {
		const parallel: MessageLike[] = [
			{ role: "user", content: "read both tails", timestamp: clock++ },
			{
				role: "assistant",
				content: [
					{ type: "toolCall", id: "", name: "read", arguments: { path: "a.ts", offset: 2001 } },
					{ type: "toolCall", id: "", name: "read", arguments: { path: "b.ts", offset: 5001 } },
				],
				stopReason: "toolUse",
				timestamp: clock++,
			},
			noIdResult("read", lines("a tail")),
			noIdResult("read", lines("b tail")),
		];
		const blocks = linearize(parallel);
		const results = blocks.filter((b) => b.kind === "toolResult");
		assert.deepEqual(
			[...readStarts(parallel, blocks)],
			[
				[results[0].id, 2001],
				[results[1].id, 5001],
			],
		);
	});

	it("counts an edit of a file as a use of its read", () => {
		const FILE = "export function parseHeader(raw_line) {}\nconst MAX_HEADER_SIZE = 8192;";
		const edits: MessageLike[] = [
			{ role: "user", content: "fix it", timestamp: clock++ },
			noId("read", { path: "src/h.ts" }),
			noIdResult("read", FILE),
		];
		for (let i = 0; i < 5; i++) edits.push(noId("bash", { command: "true" }), noIdResult("bash", "ok"));
		edits.push(noId("edit", { path: "src/h.ts", oldText: "8192", newText: "16384" }), noIdResult("edit", "done"));
		edits.push(noId("bash", { command: "true" }), noIdResult("bash", "ok"));
		const all = linearize(edits);
		const read = all.findIndex((b) => b.kind === "toolResult" && b.toolName === "read");
		assert.equal(useOf(edits, all).ages[read], 1, "used by the edit, one model message ago");
	});
});
