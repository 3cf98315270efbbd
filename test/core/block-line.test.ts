/**
 * How a folded block reads to the user: what it was (tool and the call's command, path or pattern,
 * or its kind), its size, on one line clipped to 100 columns with the code and the size kept whole.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { visibleWidth } from "@earendil-works/pi-tui";
import {
	argSummary,
	blockDescription,
	blockLine,
	blockWhat,
	clipColumns,
	codeLine,
} from "../../src/core/block-line.ts";

describe("block lines", () => {
	it("keep to 100 terminal columns where a command holds wide characters (CJK, emoji)", () => {
		const command = "grep -r '日本語のテキストを検索する' ".repeat(6);
		const line = blockLine({ code: "k3x9a0b2", kind: "toolResult", tool: "bash", args: { command }, tokens: 9800 });
		assert.ok(visibleWidth(line) <= 100, `${visibleWidth(line)} columns: ${line}`);
		assert.ok(visibleWidth(line) >= 99, "the room is used");
		assert.match(line, /… \(9\.8k tokens\)$/);
		assert.equal(clipColumns("ab日本", 5), "ab日…");
		assert.equal(clipColumns("ab日本", 6), "ab日本");
		assert.equal(clipColumns("😀😀😀", 4), "😀…");
		assert.equal(clipColumns("plain text", 20), "plain text");
	});

	it("names the call's most telling argument: command, then path, then any text", () => {
		assert.equal(argSummary({ timeout: 30, command: "npm test" }), "npm test");
		assert.equal(argSummary({ offset: 10, path: "src/a.ts" }), "src/a.ts");
		assert.equal(argSummary({ limit: 3, regex: "foo.*bar" }), "foo.*bar");
		assert.equal(argSummary({ command: "cd x &&\n  npm   test" }), "cd x && npm test");
		assert.equal(argSummary({ n: 3 }), undefined);
		assert.equal(argSummary(undefined), undefined);
		assert.equal(argSummary({ command: "x".repeat(200) })?.length, 80);
	});

	it("says what a block was by kind and tool", () => {
		assert.equal(blockWhat({ kind: "toolResult", tool: "bash", args: { command: "npm test" } }), "bash: npm test");
		assert.equal(blockWhat({ kind: "toolResult", tool: "read" }), "read");
		assert.equal(
			blockWhat({ kind: "toolArgs", tool: "write", args: { path: "a.ts", content: "x" } }),
			"write arguments: a.ts",
		);
		assert.equal(blockWhat({ kind: "thinking" }), "thinking");
		assert.equal(blockWhat({ kind: "text" }), "assistant text");
		assert.equal(blockWhat({}), "block");
	});

	it("reads #code what (size), clipped to the width with the code and the size whole", () => {
		const b = { code: "6vv2m26b", kind: "toolResult", tool: "bash", args: { command: "npm test" }, tokens: 9_800 };
		assert.equal(blockLine(b), "#6vv2m26b bash: npm test (9.8k tokens)");
		assert.equal(blockDescription(b), "bash: npm test (9.8k tokens)");
		assert.equal(blockLine({ ...b, tokens: undefined }), "#6vv2m26b bash: npm test");
		const long = blockLine({ ...b, args: { command: `echo ${"word ".repeat(40)}` } });
		assert.equal(long.length, 100);
		assert.match(long, /^#6vv2m26b bash: echo word .*… \(9\.8k tokens\)$/);
		assert.equal(blockLine(b, 30), "#6vv2m26b bash:… (9.8k tokens)");
		assert.equal(
			codeLine("k3x9a0b2", "read: a.ts", "~1k tokens kept out"),
			"#k3x9a0b2 read: a.ts (~1k tokens kept out)",
		);
	});
});
