/**
 * The files a long text mentions: relative paths only (absolute paths, URLs, stack frames and
 * addresses left out), order, bounds, the length below which a text keeps none, and the digest line
 * that carries them beside the error lines.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolResultDigest } from "../../src/core/digest.ts";
import { MENTION_LIMITS, mentionedPaths, pathsLine } from "../../src/core/mentions.ts";

/** A test run's output: failing files by relative path, stack frames by absolute URL. */
function testRun(files: readonly string[]): string {
	const frames = "    at TestContext.<anonymous> (file:///tmp/work/ledger/test/budgets.test.ts:25:10)\n".repeat(20);
	return files
		.map((file, i) => `test at ${file}:${i + 3}:2\n✖ case ${i} fails (0.5ms)\n  AssertionError: 1 !== 2\n${frames}`)
		.join("\n");
}

describe("mentionedPaths", () => {
	it("lists relative paths with a directory and an extension, each once, in order, without a leading ./", () => {
		const text = [
			"src/cli.ts:12: const x = load(./data/ledger.json)",
			"see ./data/ledger.json and docs/guide/setup.md, then src/cli.ts again",
			"test/payments.test.ts",
		].join("\n");
		assert.deepEqual(mentionedPaths(text), [
			"src/cli.ts",
			"data/ledger.json",
			"docs/guide/setup.md",
			"test/payments.test.ts",
		]);
	});

	it("leaves out absolute paths, URLs, addresses, bare names and directories", () => {
		const text = [
			"/usr/lib/node/index.js",
			"file:///tmp/work/test/budgets.test.ts:25:10",
			"https://example.com/docs/page.html",
			"git@github.com:owner/repo.git",
			"node:internal/test_runner/test:1047:25",
			"package.json README.md",
			"src/layout/ and src/raster",
		].join("\n");
		assert.deepEqual(mentionedPaths(text), []);
	});
});

describe("paths in a git diff", () => {
	it("names each file once, without the diff's a/ and b/", () => {
		const diff = Array.from(
			{ length: 200 },
			(_, f) =>
				`diff --git a/src/f${f}.ts b/src/f${f}.ts\n--- a/src/f${f}.ts\n+++ b/src/f${f}.ts\n@@ -1 +1 @@\n-x\n+y`,
		).join("\n");
		assert.deepEqual(mentionedPaths(diff).slice(0, 3), ["src/f0.ts", "src/f1.ts", "src/f2.ts"]);
		assert.match(pathsLine(diff), /^Paths: src\/f0\.ts, src\/f1\.ts, src\/f2\.ts, /);
		// Outside a diff, a folder named a/ or b/ is the path's own.
		assert.deepEqual(mentionedPaths("see a/notes.md and b/x/y.ts"), ["a/notes.md", "b/x/y.ts"]);
	});
});

describe("pathsLine", () => {
	it("names the files of a long text, bounded, with … when some are left out", () => {
		const files = Array.from({ length: 40 }, (_, i) => `test/module-${String(i).padStart(2, "0")}.test.ts`);
		const text = testRun(files);
		const line = pathsLine(text);
		assert.match(line, /^Paths: test\/module-00\.test\.ts, test\/module-01\.test\.ts, .*, …\.$/);
		const kept = line.slice("Paths: ".length, -", ….".length).split(", ");
		assert.ok(kept.join(", ").length <= MENTION_LIMITS.chars, line);
		assert.deepEqual(kept, files.slice(0, kept.length));
		assert.equal(pathsLine(testRun(files.slice(0, 3))), `Paths: ${files.slice(0, 3).join(", ")}.`);
	});

	it("gives none for a text under minChars, or one that mentions no relative path", () => {
		const short = "src/a.ts:1: error TS2304\n".repeat(10);
		assert.ok(short.length < MENTION_LIMITS.minChars);
		assert.equal(pathsLine(short), "");
		assert.equal(pathsLine("no paths here, only words.\n".repeat(400)), "");
	});
});

describe("the tool-result digest", () => {
	it("carries the paths line after the first line and before the error lines, which still survive", () => {
		const text = testRun(["test/payments.test.ts", "test/refunds.test.ts", "test/fees.test.ts"]);
		assert.ok(text.length >= MENTION_LIMITS.minChars);
		const digest = toolResultDigest({ code: "abcd1234", toolName: "bash", text, isError: false });
		assert.match(
			digest,
			/First line: test at test\/payments\.test\.ts:3:2 Paths: test\/payments\.test\.ts, test\/refunds\.test\.ts, test\/fees\.test\.ts\.\n/,
		);
		assert.match(digest, /\nL\d+( ×\d+)?: .*AssertionError: 1 !== 2/);
	});
});
