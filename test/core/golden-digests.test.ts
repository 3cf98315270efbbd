/**
 * Golden digests: the exact bytes a folded block reads as, for representative blocks. A change to
 * any of these strings changes what the model sees after a fold and breaks the cached prefix of
 * every session folded by an earlier release, so it must be deliberate.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPlan } from "../../src/core/apply.ts";
import { type Block, linearize, type MessageLike } from "../../src/core/block.ts";
import type { FoldCommand } from "../../src/core/contract.ts";
import { contentKey, lower, renderFold } from "../../src/core/lower.ts";

const BASH_OUTPUT = [
	"$ npm test",
	"> app@1.0.0 test",
	"> node --test",
	"",
	"▶ math",
	"  ✔ adds (0.5ms)",
	"  ✖ divides (1.2ms)",
	"    AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
	"",
	"    1 !== 2",
	"",
	"        at TestContext.<anonymous> (/app/test/math.test.js:12:10)",
	"        at Test.runInAsyncScope (node:async_hooks:206:9)",
	"▶ io",
	"  ✔ reads config (0.3ms)",
	"ℹ tests 3",
	"ℹ pass 2",
	"ℹ fail 1",
	"",
	"Command exited with code 1",
].join("\n");

const LONG_READ = [
	"// generated constants",
	...Array.from({ length: 299 }, (_, i) => `export const value${i + 1} = ${(i + 1) * 7};`),
].join("\n");

const LS_ERROR = "ls: cannot access 'nope': No such file or directory\n\nCommand exited with code 2";

/** An install that repeats one error line 30 times among 16 distinct ones: the repeats collapse first, then the cap. */
const REPEATED_RISK = [
	"$ npm install",
	...Array.from({ length: 30 }, () => "npm ERR! code ERESOLVE"),
	...Array.from({ length: 16 }, (_, i) => `npm ERR! missing peer dependency react-dom@${i + 1}.0.0`),
	"npm ERR! A complete log of this run can be found in /tmp/npm.log",
].join("\n");

const FILE_BODY = Array.from(
	{ length: 40 },
	(_, i) => `export function f${i}(x: number): number {\n\treturn x + ${i};\n}`,
).join("\n");
const OLD_TEXT = Array.from({ length: 30 }, (_, i) => `\tconst a${i} = load(${i});`).join("\n");
const NEW_TEXT = Array.from({ length: 20 }, (_, i) => `\tconst a${i} = await loadAsync(${i});`).join("\n");

function session(): MessageLike[] {
	return [
		{ role: "user", content: "run the tests", timestamp: 1700000000000 },
		{
			role: "assistant",
			responseId: "msg_01",
			timestamp: 1700000000100,
			content: [
				{
					type: "thinking",
					thinking: "The user wants the test suite run.\nI will call bash, then read the constants file.",
				},
				{ type: "thinking", thinking: "secret chain of thought", thinkingSignature: "EqQBCkYIAxgCKkD..." },
				{ type: "thinking", thinking: "", thinkingSignature: "ErcBCkgIAhABGAIi...", redacted: true },
				{ type: "toolCall", id: "toolu_bash", name: "bash", arguments: { command: "npm test" } },
				{ type: "toolCall", id: "toolu_read", name: "read", arguments: { path: "src/constants.ts" } },
				{ type: "toolCall", id: "toolu_empty", name: "bash", arguments: { command: "true" } },
				{ type: "toolCall", id: "toolu_err", name: "bash", arguments: { command: "ls nope" } },
				{ type: "toolCall", id: "toolu_read2", name: "read", arguments: { path: "src/constants.ts" } },
				{ type: "toolCall", id: "toolu_install", name: "bash", arguments: { command: "npm install" } },
			],
		},
		result("toolu_bash", "bash", BASH_OUTPUT, true, 1),
		result("toolu_read", "read", LONG_READ, false, 2),
		result("toolu_empty", "bash", "", false, 3),
		result("toolu_err", "bash", LS_ERROR, true, 4),
		result("toolu_read2", "read", LONG_READ, false, 5),
		result("toolu_install", "bash", REPEATED_RISK, true, 8),
		{
			role: "assistant",
			responseId: "msg_02",
			timestamp: 1700000000200,
			content: [
				{ type: "text", text: "Writing the file and fixing the loader." },
				{
					type: "toolCall",
					id: "toolu_write",
					name: "write",
					arguments: { path: "src/fns.ts", content: FILE_BODY },
				},
				{
					type: "toolCall",
					id: "toolu_edit",
					name: "edit",
					arguments: {
						path: "src/loader.ts",
						edits: [
							{ oldText: OLD_TEXT, newText: NEW_TEXT },
							{ oldText: "let x = 1;", newText: "const x = 1;" },
						],
					},
				},
			],
		},
		result("toolu_write", "write", "Wrote src/fns.ts", false, 6),
		result("toolu_edit", "edit", "Edited src/loader.ts", false, 7),
		{ role: "assistant", responseId: "msg_03", content: [{ type: "text", text: "Done." }] },
	];
}

function result(id: string, tool: string, text: string, isError: boolean, ts: number): MessageLike {
	return {
		role: "toolResult",
		toolCallId: id,
		toolName: tool,
		content: [{ type: "text", text }],
		isError,
		timestamp: 1700000001000 + ts,
	};
}

const messages = session();
const blocks = linearize(messages);

function block(id: string): Block {
	const found = blocks.find((b) => b.id === id);
	assert.ok(found, id);
	return found;
}

function digestOf(id: string): string | undefined {
	const b = block(id);
	return renderFold(b, messages[b.msg])?.text;
}

/** Applies the block's own fold and returns the rewritten message. */
function folded(id: string): MessageLike {
	const b = block(id);
	const op = renderFold(b, messages[b.msg]);
	assert.ok(op, id);
	const out = applyPlan(messages, [op]);
	assert.deepEqual(out.applied, [id]);
	return out.messages[b.msg];
}

const LONG_READ_DIGEST =
	"{#emx6lxqv FOLDED} read: 300 lines, ~2182 tokens. First line: // generated constants Names: value1, value2, value3, value4, value5, value6, value7, value8, value9, value10, value11, value12, value13, value14, value15, value16, ….";

describe("golden digests", () => {
	it("bash output with error lines and a stack trace: errors verbatim first, then frames", () => {
		const expected =
			"{#kfio1zv9 FOLDED} bash: error, 20 lines, ~96 tokens. First line: $ npm test\n" +
			"L7:   ✖ divides (1.2ms)\n" +
			"L8:     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n" +
			"L18: ℹ fail 1\n" +
			"L20: Command exited with code 1\n" +
			"L12:         at TestContext.<anonymous> (/app/test/math.test.js:12:10)\n" +
			"L13:         at Test.runInAsyncScope (node:async_hooks:206:9)";
		assert.equal(digestOf("r:toolu_bash"), expected);
		assert.deepEqual(folded("r:toolu_bash").content, [{ type: "text", text: expected }]);
	});

	it("a long read result: size, first line and the first names it declares", () => {
		const expected = LONG_READ_DIGEST;
		assert.equal(digestOf("r:toolu_read"), expected);
		assert.deepEqual(folded("r:toolu_read").content, [{ type: "text", text: expected }]);
	});

	it("repeated risk lines collapse to one with a count, and the cap counts distinct lines only", () => {
		const expected = [
			"{#j1ukv1ma FOLDED} bash: error, 48 lines, ~390 tokens. First line: $ npm install",
			"L2 ×30: npm ERR! code ERESOLVE",
			...Array.from({ length: 11 }, (_, i) => `L${32 + i}: npm ERR! missing peer dependency react-dom@${i + 1}.0.0`),
			'… 6 more distinct risk lines left out (L43-48): recall_folded codes=["j1ukv1ma"] lines="43-48"',
		].join("\n");
		assert.equal(digestOf("r:toolu_install"), expected);
	});

	it("an empty result", () => {
		assert.equal(digestOf("r:toolu_empty"), "{#3gbj30wg FOLDED} bash: empty, ~0 tokens.");
	});

	it("an error result (isError): says error, keeps its error lines", () => {
		const expected =
			"{#8d01aqty FOLDED} bash: error, 3 lines, ~20 tokens. First line: ls: cannot access 'nope': No such file or directory\n" +
			"L3: Command exited with code 2";
		assert.equal(digestOf("r:toolu_err"), expected);
		const message = folded("r:toolu_err");
		assert.equal(message.isError, true);
		assert.equal(message.toolCallId, "toolu_err");
	});

	it("unsigned thinking: one line", () => {
		const expected = "{#a2rnsdbd FOLDED} thinking: 2 lines, ~21 tokens. The user wants the test suite run.";
		assert.equal(digestOf("a:msg_01:0"), expected);
		const content = folded("a:msg_01:0").content as Record<string, unknown>[];
		assert.deepEqual(content[0], { type: "thinking", thinking: expected });
	});

	for (const [label, id] of [
		["signed thinking", "a:msg_01:1"],
		["redacted thinking", "a:msg_01:2"],
	] as const) {
		it(`${label} never folds: renderFold, lower and applyPlan all refuse`, () => {
			const b = block(id);
			assert.equal(b.kind, "thinking");
			assert.equal(b.durable, true);
			assert.equal(b.foldable, false);
			assert.equal(renderFold(b, messages[b.msg]), null);
			const lowered = lower([{ type: "fold", id, urgent: true }], messages, blocks, () => true);
			assert.deepEqual(lowered.ops, []);
			assert.deepEqual(lowered.refused, [{ id, reason: "not-foldable" }]);
			const forged = applyPlan(messages, [{ id, code: "a2rnsdbd", text: "{#a2rnsdbd FOLDED} thinking" }]);
			assert.deepEqual(forged.applied, []);
			assert.deepEqual(forged.refused, [{ id, reason: "not-foldable" }]);
			assert.equal(forged.messages[b.msg], messages[b.msg]);
			assert.deepEqual(forged.messages, session());
		});
	}

	it("duplicate content: the second identical result points at the first code (one event)", () => {
		const commands: FoldCommand[] = [
			{ type: "fold", id: "r:toolu_read", urgent: false },
			{ type: "fold", id: "r:toolu_read2", urgent: false },
		];
		const { ops, refused } = lower(commands, messages, blocks, () => true);
		assert.deepEqual(refused, []);
		assert.deepEqual(
			ops.map((op) => op.text),
			[LONG_READ_DIGEST, "{#p90fxbdr FOLDED} read: identical to {#emx6lxqv FOLDED}, ~2182 tokens."],
		);
	});

	it("duplicate content: a block matching one folded in an earlier event points at it", () => {
		const known = new Map([[contentKey(LONG_READ), "emx6lxqv"]]);
		const { ops } = lower(
			[{ type: "fold", id: "r:toolu_read2", urgent: false }],
			messages,
			blocks,
			() => true,
			known,
		);
		assert.deepEqual(ops, [
			{
				id: "r:toolu_read2",
				code: "p90fxbdr",
				text: "{#p90fxbdr FOLDED} read: identical to {#emx6lxqv FOLDED}, ~2182 tokens.",
			},
		]);
	});

	it("write arguments: the large content becomes a digest naming what it declares; id, name and path stay", () => {
		const b = block("a:toolu_write:args");
		const op = renderFold(b, messages[b.msg]);
		assert.deepEqual(op, {
			id: "a:toolu_write:args",
			code: "abeo79ra",
			args: {
				path: "src/fns.ts",
				content:
					"{#abeo79ra FOLDED} 120 lines: export function f0(x: number): number { Names: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, ….",
			},
		});
		const content = folded("a:toolu_write:args").content as Record<string, unknown>[];
		assert.deepEqual(content[1], { type: "toolCall", id: "toolu_write", name: "write", arguments: op?.args });
	});

	it("edit arguments: large oldText/newText become digests; every key and small edit stay", () => {
		const b = block("a:toolu_edit:args");
		const op = renderFold(b, messages[b.msg]);
		assert.deepEqual(op, {
			id: "a:toolu_edit:args",
			code: "6ydl9h8f",
			args: {
				path: "src/loader.ts",
				edits: [
					{
						oldText: "{#6ydl9h8f FOLDED} 30 lines: const a0 = load(0);",
						newText: "{#6ydl9h8f FOLDED} 20 lines: const a0 = await loadAsync(0);",
					},
					{ oldText: "let x = 1;", newText: "const x = 1;" },
				],
			},
		});
		const content = folded("a:toolu_edit:args").content as Record<string, unknown>[];
		assert.deepEqual(content[2], { type: "toolCall", id: "toolu_edit", name: "edit", arguments: op?.args });
	});

	it("the same input always gives the same bytes", () => {
		const again = linearize(session());
		for (const b of again) {
			const first = renderFold(block(b.id), messages[b.msg]);
			assert.deepEqual(renderFold(b, session()[b.msg]), first, b.id);
		}
	});
});
