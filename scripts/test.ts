/**
 * The test run of `npm test` (after scripts/check-node.mjs and the lint): the type check and the tests
 * at once. `tsc -p tsconfig.json` runs beside `node --test` (every test file, four at a time, the
 * folders of the longest files first, through scripts/test-reporter.ts) at a lower priority: it takes
 * about 20 s of CPU, which it spent alone before the first test started, and now takes from what the
 * tests leave idle (a test waiting on its `pi`, its browser or npm). Its output is held and printed
 * after the tests' report when it fails; the run fails when either fails, with the tests' exit
 * status or else tsc's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { globSync } from "node:fs";
import { constants, setPriority } from "node:os";
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

const tsc = spawn(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
if (tsc.pid !== undefined) {
	try {
		setPriority(tsc.pid, constants.priority.PRIORITY_BELOW_NORMAL);
	} catch {
		// It runs at the tests' own priority: slower beside them, never wrong.
	}
}
let typeErrors = "";
tsc.stdout?.setEncoding("utf8").on("data", (text: string) => {
	typeErrors += text;
});
tsc.stderr?.setEncoding("utf8").on("data", (text: string) => {
	typeErrors += text;
});
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

const tests = spawn(
	process.execPath,
	["--test", "--test-concurrency=4", "--test-reporter=./scripts/test-reporter.ts", ...testFiles()],
	{ cwd: ROOT, stdio: "inherit" },
);
const [testStatus, tscStatus] = await Promise.all([exitOf(tests), exitOf(tsc)]);
if (tscStatus !== 0) process.stderr.write(`\ntsc -p tsconfig.json failed (exit ${tscStatus}):\n${typeErrors}\n`);
process.exitCode = testStatus !== 0 ? testStatus : tscStatus;
