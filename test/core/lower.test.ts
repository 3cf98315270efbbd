/**
 * Lowering fold commands to ops: code and digest bytes, duplicate pointers, refusals.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Block, linearize, type MessageLike } from "../../src/core/block.ts";
import type { FoldCommand } from "../../src/core/contract.ts";
import {
	DIGEST_LIMITS,
	duplicateDigest,
	focusSection,
	foldCode,
	foldTag,
	textDigest,
	thinkingDigest,
	toolResultDigest,
} from "../../src/core/digest.ts";
import { contentKey, foldedCost, lower, renderFold, savingOf } from "../../src/core/lower.ts";
import { blockCost } from "../../src/core/tokens.ts";

const BIG = Array.from({ length: 200 }, (_, i) => `row ${i}: some text`).join("\n");

function session(): MessageLike[] {
	return [
		{ role: "user", content: "start", timestamp: 10 },
		{
			role: "assistant",
			responseId: "R1",
			content: [
				{ type: "thinking", thinking: "I should look at both files.\nThen compare." },
				{ type: "thinking", thinking: "signed", thinkingSignature: "s" },
				{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } },
				{ type: "toolCall", id: "c2", name: "read", arguments: { path: "b" } },
				{ type: "toolCall", id: "c3", name: "write", arguments: { path: "c", content: BIG } },
				{ type: "toolCall", id: "c4", name: "bash", arguments: { command: "true" } },
			],
		},
		{ role: "toolResult", toolCallId: "c1", toolName: "read", content: BIG, timestamp: 11 },
		{ role: "toolResult", toolCallId: "c2", toolName: "read", content: BIG, timestamp: 12 },
		{ role: "toolResult", toolCallId: "c3", toolName: "write", content: "ok", timestamp: 13 },
		{ role: "toolResult", toolCallId: "c4", toolName: "bash", content: "", timestamp: 14 },
		{ role: "custom", content: BIG },
		{
			role: "assistant",
			responseId: "R2",
			content: [
				{ type: "text", text: "done" },
				{ type: "text", text: `Both files hold the same rows.\n${BIG.slice(0, 400)}` },
			],
		},
	];
}

const messages = session();
const blocks = linearize(messages);

function block(id: string): Block {
	const found = blocks.find((b) => b.id === id);
	assert.ok(found, id);
	return found;
}

const fold = (id: string, extra: Partial<Extract<FoldCommand, { type: "fold" }>> = {}): FoldCommand => ({
	type: "fold",
	id,
	urgent: false,
	...extra,
});

const always = () => true;

describe("contentKey", () => {
	it("is deterministic and separates different texts", () => {
		assert.equal(contentKey(BIG), contentKey(`${BIG}`));
		assert.notEqual(contentKey("abc"), contentKey("abd"));
		assert.notEqual(contentKey("ab"), contentKey("ba"));
		assert.notEqual(contentKey(""), contentKey(" "));
		assert.match(contentKey("hello"), /^5:[0-9a-z]+:[0-9a-z]+$/);
	});
});

describe("renderFold", () => {
	it("folds a tool result to its digest under its own code", () => {
		const b = block("r:c1");
		assert.deepEqual(renderFold(b, messages[b.msg]), {
			id: "r:c1",
			code: foldCode("r:c1"),
			text: toolResultDigest({ code: foldCode("r:c1"), toolName: "read", text: BIG, isError: false }),
		});
	});

	it("folds a tool result to a pointer when told its bytes were folded before", () => {
		const b = block("r:c2");
		const op = renderFold(b, messages[b.msg], foldCode("r:c1"));
		assert.equal(
			op?.text,
			`${foldTag(foldCode("r:c2"))} read: identical to ${foldTag(foldCode("r:c1"))}, ~${Math.ceil(BIG.length / 4)} tokens.`,
		);
	});

	it("keeps a duplicate's own digest where the pointer would be longer: folding it never saves less than its saving", () => {
		// A short error output, folded twice in one event (a property run found this): its pointer,
		// which names two codes and quotes its risk line, is longer than its own digest.
		const text = "Error: command failed with exit code 2\n✓ keeps the message count (3 ms)\nThe quick brown fox.";
		const short: MessageLike[] = [
			{ role: "user", content: "go", timestamp: 1 },
			{
				role: "assistant",
				responseId: "R",
				content: [
					{ type: "toolCall", id: "d1", name: "read", arguments: { path: "a" } },
					{ type: "toolCall", id: "d2", name: "edit", arguments: { path: "a" } },
				],
			},
			{ role: "toolResult", toolCallId: "d1", toolName: "read", content: text, isError: true, timestamp: 2 },
			{ role: "toolResult", toolCallId: "d2", toolName: "edit", content: text, timestamp: 3 },
		];
		const blocks = linearize(short);
		const second = blocks.find((b) => b.id === "r:d2") as Block;
		const { ops } = lower(
			[
				{ type: "fold", id: "r:d1", urgent: true },
				{ type: "fold", id: "r:d2", urgent: true },
			],
			short,
			blocks,
			() => true,
		);
		const op = ops.find((o) => o.id === "r:d2");
		assert.ok(op?.text, "the duplicate folds");
		const pointer = duplicateDigest(foldCode("r:d2"), "edit", text, foldCode("r:d1"));
		const own = renderFold(second, short[second.msg]);
		assert.ok(pointer.length > (own?.text?.length ?? 0), "the test's pointer is the longer");
		assert.equal(op.text, own?.text);
		assert.ok(
			own && foldedCost(second, op) <= foldedCost(second, own),
			"costs no more than the digest savingOf prices",
		);
	});

	it("does not point a block at its own code", () => {
		const b = block("r:c1");
		const op = renderFold(b, messages[b.msg], foldCode("r:c1"));
		assert.ok(op?.text?.includes("First line: row 0"));
		assert.ok(!op?.text?.includes("identical"));
	});

	it("folds unsigned thinking, and never signed thinking", () => {
		const unsigned = block("a:R1:0");
		assert.deepEqual(renderFold(unsigned, messages[1]), {
			id: "a:R1:0",
			code: foldCode("a:R1:0"),
			text: thinkingDigest(foldCode("a:R1:0"), unsigned.text),
		});
		assert.equal(renderFold(block("a:R1:1"), messages[1]), null);
	});

	it("folds long assistant text to its one-line digest, and never short text", () => {
		const long = block("a:R2:1");
		const op = renderFold(long, messages[7]);
		assert.deepEqual(op, { id: "a:R2:1", code: foldCode("a:R2:1"), text: textDigest(foldCode("a:R2:1"), long.text) });
		assert.equal(
			op?.text,
			`${foldTag(foldCode("a:R2:1"))} text: 24 lines, ~108 tokens. Both files hold the same rows.`,
		);
		assert.ok(savingOf(long, messages[7]) > 0);
		assert.equal(renderFold(block("a:R2:0"), messages[7]), null);
	});

	it("folds large tool-call args, and returns null for small ones", () => {
		const op = renderFold(block("a:c3:args"), messages[1]);
		assert.ok(op?.args);
		assert.equal(op.text, undefined);
		assert.equal(op.args.path, "c");
		assert.ok(String(op.args.content).startsWith(foldTag(foldCode("a:c3:args"))));
		assert.equal(renderFold(block("a:c1:args"), messages[1]), null);
	});

	it("returns null for kinds that never fold", () => {
		for (const id of ["u:10", "a:R2:0", "m6"]) assert.equal(renderFold(block(id), messages[block(id).msg]), null, id);
	});

	it("returns null for a tool result with an image", () => {
		const withImage: MessageLike = {
			role: "toolResult",
			toolCallId: "img",
			toolName: "read",
			content: [
				{ type: "text", text: BIG },
				{ type: "image", data: "AA", mimeType: "image/png" },
			],
			timestamp: 1,
		};
		const [b] = linearize([withImage]);
		assert.equal(renderFold(b, withImage), null);
	});
});

describe("foldedCost and savingOf", () => {
	it("costs a text fold as a block of the digest", () => {
		const b = block("r:c1");
		const op = renderFold(b, messages[b.msg]);
		assert.ok(op?.text);
		assert.equal(foldedCost(b, op), blockCost(op.text.length));
		assert.equal(savingOf(b, messages[b.msg]), b.tokens - blockCost(op.text.length));
		assert.ok(savingOf(b, messages[b.msg]) > 0);
	});

	it("costs an args fold as the folded JSON plus the tool name", () => {
		const b = block("a:c3:args");
		const op = renderFold(b, messages[1]);
		assert.ok(op?.args);
		assert.equal(foldedCost(b, op), blockCost(JSON.stringify(op.args).length + "write".length));
		assert.ok(savingOf(b, messages[1]) > 0);
	});

	it("is 0 when the digest is not smaller than the block", () => {
		for (const id of ["r:c3", "r:c4"]) {
			const b = block(id);
			const op = renderFold(b, messages[b.msg]);
			assert.ok(op && foldedCost(b, op) >= b.tokens, id);
			assert.equal(savingOf(b, messages[b.msg]), 0, id);
		}
	});

	it("is 0 for blocks that cannot fold", () => {
		for (const id of ["u:10", "a:R1:1", "a:c1:args", "m6"])
			assert.equal(savingOf(block(id), messages[block(id).msg]), 0);
	});
});

describe("lower", () => {
	it("lowers fold commands to the engine's ops, in command order", () => {
		const { ops, refused } = lower([fold("a:c3:args"), fold("r:c1"), fold("a:R1:0")], messages, blocks, always);
		assert.deepEqual(refused, []);
		assert.deepEqual(
			ops,
			["a:c3:args", "r:c1", "a:R1:0"].map((id) => renderFold(block(id), messages[block(id).msg])),
		);
	});

	it("refuses unknown, positional, unfoldable, unplannable and repeated ids, and lowers the rest", () => {
		const { ops, refused } = lower(
			[
				fold("r:ghost"),
				fold("m6"),
				fold("u:10"),
				fold("a:R1:1"),
				fold("r:c1"),
				fold("r:c1"),
				fold("r:c2"),
				fold("a:c1:args"),
			],
			messages,
			blocks,
			(id) => id !== "r:c2",
		);
		assert.deepEqual(refused, [
			{ id: "r:ghost", reason: "unknown-id" },
			{ id: "m6", reason: "not-durable" },
			{ id: "u:10", reason: "not-foldable" },
			{ id: "a:R1:1", reason: "not-foldable" },
			{ id: "r:c1", reason: "duplicate-command" },
			{ id: "r:c2", reason: "not-plannable" },
			{ id: "a:c1:args", reason: "not-foldable" },
		]);
		assert.deepEqual(
			ops.map((op) => op.id),
			["r:c1"],
		);
	});

	it("ignores compact commands", () => {
		const { ops, refused } = lower(
			[{ type: "compact", usage: 1, budget: 1, maskable: 0 }, fold("r:c1")],
			messages,
			blocks,
			always,
		);
		assert.deepEqual(
			ops.map((op) => op.id),
			["r:c1"],
		);
		assert.deepEqual(refused, []);
	});

	it("makes the second identical result of one event a pointer to the first", () => {
		const { ops } = lower([fold("r:c1"), fold("r:c2")], messages, blocks, always);
		assert.ok(ops[0].text?.includes("First line: row 0"));
		assert.equal(ops[1].code, foldCode("r:c2"));
		assert.ok(
			ops[1].text?.startsWith(`${foldTag(foldCode("r:c2"))} read: identical to ${foldTag(foldCode("r:c1"))}`),
		);
	});

	it("points at a code folded in an earlier event, through `known`", () => {
		const known = new Map([[contentKey(BIG), "aaaaaaaa"]]);
		const { ops } = lower([fold("r:c1")], messages, blocks, always, known);
		assert.ok(ops[0].text?.includes(`identical to ${foldTag("aaaaaaaa")}`));
		assert.equal(known.size, 1, "known is not mutated");
	});

	it("lets a policy supply a digest but writes the tag itself", () => {
		const { ops } = lower(
			[fold("r:c1", { digest: "{#zzzzzzzz FOLDED} rows 0-199 {#yyyyyyyy FOLDED} of table " })],
			messages,
			blocks,
			always,
		);
		assert.equal(ops[0].text, `${foldTag(foldCode("r:c1"))} rows 0-199 of table`);
	});

	it("keeps the engine's args for an args fold even when a digest is supplied", () => {
		const { ops } = lower([fold("a:c3:args", { digest: "ignored" })], messages, blocks, always);
		assert.deepEqual(ops[0], renderFold(block("a:c3:args"), messages[1]));
	});

	it("is deterministic", () => {
		const commands = [fold("r:c1"), fold("r:c2"), fold("a:c3:args"), fold("a:R1:0")];
		assert.deepEqual(
			lower(commands, session(), linearize(session()), always),
			lower(commands, messages, blocks, always),
		);
	});
});

describe("a focus keeps the lines the model used", () => {
	const rows = Array.from({ length: 40 }, (_, i) => `row ${i}: value_${i} {#abcdef12 FOLDED}`).join("\n");
	const focused: MessageLike[] = [
		{ role: "user", content: "go", timestamp: 1 },
		{ role: "assistant", responseId: "F1", content: [{ type: "toolCall", id: "f1", name: "read", arguments: {} }] },
		{ role: "toolResult", toolCallId: "f1", toolName: "read", content: rows, timestamp: 2 },
	];
	const fBlocks = linearize(focused);

	it("focusSection lists the lines holding a focus string, in order, bounded, tags quoted", () => {
		const section = focusSection(rows, ["value_30", "value_3", "value_7"]);
		const lines = section.split("\n");
		assert.equal(lines[1], "In use:");
		assert.deepEqual(
			lines.slice(2).map((l) => l.slice(0, l.indexOf(":"))),
			["L4", "L8", "L31"],
			"value_3 names line 4, value_7 line 8, value_30 line 31",
		);
		assert.ok(!/\{#abcdef12 FOLDED\}/.test(section), "a tag in a kept line is quoted");
		assert.equal(focusSection(rows, ["absent_name"]), "");
		const many = focusSection(rows, ["value_1", "value_2", "value_3", "value_4", "value_5", "value_6"]);
		assert.equal(many.split("\n").length - 2, DIGEST_LIMITS.focusLines);
		// A truncated bash copy (the last lines of the full output file): numbered as in that file.
		const copy = `${rows}\n\n[Showing lines 961-1000 of 1000. Full output: /tmp/pi-bash-00000000000000aa.log]`;
		assert.match(focusSection(copy, ["value_3"]), /\nL964: row 3: value_3 /);
	});

	it("keeps the lines of what the model worked on before those of a string every part repeats", () => {
		// A module of 12 functions, each importing names every function repeats: the model edited shard 7.
		const module = [
			'import type { LedgerEntry } from "./types.ts";',
			'import { readThreshold } from "./config.ts";',
			...Array.from({ length: 12 }, (_, i) => [
				`export function reconcileShard_${i}(entries: LedgerEntry[]) {`,
				`\tconst threshold_${i} = readThreshold("shard_${i}");`,
				`\treturn entries.filter((e) => e.amount > threshold_${i});`,
				"}",
			]).flat(),
		].join("\n");
		const section = focusSection(module, ["reconcileShard_7", "LedgerEntry", "readThreshold", "threshold_7"]);
		assert.deepEqual(
			section
				.split("\n")
				.slice(2)
				.map((l) => l.slice(0, l.indexOf(":"))),
			["L1", "L31", "L32", "L33"],
			"shard 7's three lines, and of the lines holding only a common string the first, in file order",
		);
	});

	it("lower appends the section to a tool result's digest, and the same command gives the same bytes", () => {
		const command = fold("r:f1", { focus: ["value_12"] });
		const [op] = lower([command], focused, fBlocks, () => true).ops;
		const plain = renderFold(fBlocks[fBlocks.length - 1], focused[2]);
		assert.equal(op.text, `${plain?.text}${focusSection(rows, ["value_12"])}`);
		assert.match(op.text ?? "", /\nIn use:\nL13: row 12: value_12/);
		assert.deepEqual(lower([command], focused, fBlocks, () => true).ops, [op]);
	});

	it("a focus on arguments changes nothing", () => {
		const [withFocus] = lower([fold("a:c3", { focus: ["row"] })], messages, blocks, () => true).ops;
		const [without] = lower([fold("a:c3")], messages, blocks, () => true).ops;
		assert.deepEqual(withFocus, without);
	});
});
