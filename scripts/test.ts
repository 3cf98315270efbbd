/**
 * The test run of `npm test` (after scripts/check-node.mjs and the lint): the type check, then the
 * tests. `tsc -p tsconfig.json` runs first and alone; when it fails, its errors are printed and the
 * run ends with its status, no test started. Then `node --test` runs every test file, four at a
 * time, the folders of the longest files first, through scripts/test-reporter.ts. (Run beside the
 * tests, tsc cost the suite about 70 s of CPU more than it took alone, and 30 s of wall time.) The
 * tests see an empty Pi agent folder of their own (PI_CODING_AGENT_DIR), removed at the end: what
 * the developer's own ~/.pi/agent holds (a 0.5.1 context-fold.json, settings) never reaches them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { globSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

/** The step running now: a signal that stops this run is passed on to it, so that no child outlives the run. */
let running: ChildProcess | undefined;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
	process.on(signal, () => {
		running?.kill(signal);
		process.exitCode = 1;
	});
}

/** Runs one step as a child of this process, with `env` over this one's, and resolves with its exit status (see exitOf). */
function step(args: string[], env: Record<string, string> = {}): Promise<number> {
	running = spawn(process.execPath, args, { cwd: ROOT, stdio: "inherit", env: { ...process.env, ...env } });
	return exitOf(running);
}

const tscStatus = await step([TSC, "-p", "tsconfig.json"]);
if (tscStatus !== 0) {
	process.stderr.write(`\ntsc -p tsconfig.json failed (exit ${tscStatus}): no test was run\n`);
	process.exitCode = tscStatus;
} else {
	const agentDir = mkdtempSync(join(tmpdir(), "context-fold-test-agent-"));
	try {
		const status = await step(
			["--test", "--test-concurrency=4", "--test-reporter=./scripts/test-reporter.ts", ...testFiles()],
			{ PI_CODING_AGENT_DIR: agentDir },
		);
		process.exitCode = process.exitCode || status;
	} finally {
		rmSync(agentDir, { recursive: true, force: true });
	}
}
