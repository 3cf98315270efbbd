/**
 * The test run of `npm test` (after scripts/check-node.mjs and the lint): the type check, then the
 * tests. `tsc -p tsconfig.json` runs first and alone; when it fails, its errors are printed and the
 * run ends with its status, no test started. Then `node --test` runs every test file, four at a
 * time, the folders of the longest files first, through scripts/test-reporter.ts. (Run beside the
 * tests, tsc cost the suite about 70 s of CPU more than it took alone, and 30 s of wall time.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { globSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TSC = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));

/** Resolves with `child`'s exit status (1 when a signal ended it, or it could not start). */
function exitOf(child: ChildProcess): Promise<number> {
	return new Promise((resolve) => {
		child.once("error", () => resolve(1));
		child.once("close", (code) => resolve(code ?? 1));
	});
}

/**
 * Folders of test files by how long their files take, the longest first: four run at once, and a long
 * file started last would run on alone at the end (node --test starts them in the order given).
 */
const LONGEST_FIRST = ["test/acceptance/", "test/replay/", "test/e2e/", "test/eval/", "test/corpus/", "test/core/"];

/** Every test file, those of LONGEST_FIRST's folders first in its order, then the rest by name. */
function testFiles(): string[] {
	const files = globSync("test/**/*.test.ts", { cwd: ROOT }).sort();
	const rank = (file: string) => {
		const at = LONGEST_FIRST.findIndex((folder) => file.startsWith(folder));
		return at < 0 ? LONGEST_FIRST.length : at;
	};
	return files.sort((a, b) => rank(a) - rank(b));
}

const tscStatus = await exitOf(spawn(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: ROOT, stdio: "inherit" }));
if (tscStatus !== 0) {
	process.stderr.write(`\ntsc -p tsconfig.json failed (exit ${tscStatus}): no test was run\n`);
	process.exitCode = tscStatus;
} else {
	const tests = spawn(
		process.execPath,
		["--test", "--test-concurrency=4", "--test-reporter=./scripts/test-reporter.ts", ...testFiles()],
		{ cwd: ROOT, stdio: "inherit" },
	);
	process.exitCode = await exitOf(tests);
}
