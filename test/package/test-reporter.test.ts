/**
 * The concise reporter `npm test` uses (scripts/test-reporter.ts, issue 26), run by `node --test` on
 * three small files written for the purpose: one that passes, one whose assertion fails, one that
 * fails after its test ended. Each file gets its one line; a failed test is shown in full, and a file
 * that failed with no failed test says why (Node's diagnostic), as "failures in full" asks.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { REPO_ROOT } from "../corpus/corpora.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-reporter-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const FILES: Record<string, string> = {
	"passes.test.ts": `import { it } from "node:test";\nit("adds", () => {});\n`,
	"asserts.test.ts": `import assert from "node:assert/strict";\nimport { it } from "node:test";\nit("compares", () => assert.equal(1 + 1, 3));\n`,
	"late.test.ts": `import { it } from "node:test";\nit("ends first", () => {\n\tsetTimeout(() => {\n\t\tthrow new Error("boom after the end");\n\t}, 5);\n});\n`,
};

/** This process's environment without the variable by which Node's runner refuses to run inside a test file. */
function outsideTheRunner(): NodeJS.ProcessEnv {
	const env = { ...process.env };
	delete env.NODE_TEST_CONTEXT;
	return env;
}

describe("the test reporter", () => {
	for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text);
	const run = spawnSync(
		process.execPath,
		["--test", `--test-reporter=${join(REPO_ROOT, "scripts", "test-reporter.ts")}`, ...Object.keys(FILES)],
		{ cwd: dir, encoding: "utf8", env: outsideTheRunner() },
	);
	const lines = run.stdout.split("\n");

	it("gives each file one line, and fails the run", () => {
		assert.equal(run.status, 1, run.stdout + run.stderr);
		assert.match(run.stdout, /^ok +\d+\.\ds {2}passes\.test\.ts {2}\(1 test\)$/m);
		assert.match(run.stdout, /^FAIL +\d+\.\ds {2}asserts\.test\.ts {2}\(1 test, 1 failed\)$/m);
		assert.match(run.stdout, /^FAIL +\d+\.\ds {2}late\.test\.ts {2}\(1 test, the file itself failed\)$/m);
		assert.ok(lines.includes("# fail 2"), run.stdout);
	});

	it("shows a failed assertion in full", () => {
		assert.match(run.stdout, /✖ compares \(asserts\.test\.ts:3\)/);
		assert.match(run.stdout, /2 !== 3/);
	});

	it("says why a file failed after its tests passed", () => {
		const at = lines.findIndex((line) => line.includes("late.test.ts  ("));
		const under = lines.slice(at + 1, at + 4).join("\n");
		assert.match(under, /^ {2}# Error: Test "ends first" .*"Error: boom after the end"/m, run.stdout);
	});
});
