/**
 * The package's own command as a user runs it, for the replay tests that check what it prints and
 * how it exits: `node bin/context-fold.mjs replay …` in a child process, stdout and stderr captured
 * as text (stderr is then not a terminal); and, for the many refusals that stop it before any
 * replay, its `main` in this process, which the command runs once its Node and Pi are checked.
 */
import { type SpawnSyncOptions, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { main } from "../../src/replay/cli.ts";

/** The package's command, as its `bin` entry names it. */
export const BIN = fileURLToPath(new URL("../../bin/context-fold.mjs", import.meta.url));

/** Runs `context-fold replay` with `args` (and `options`: a working directory, an environment). */
export function replayCommand(args: readonly string[], options: Omit<SpawnSyncOptions, "encoding"> = {}) {
	return spawnSync(process.execPath, [BIN, "replay", ...args], { ...options, encoding: "utf8" });
}

/**
 * Runs the command's `main` on `replay …args` in this process: its exit status and what it wrote.
 * The command writes text only; a chunk of bytes written meanwhile is node:test's own report of an
 * earlier test (under `node --test` a file reports to its runner on stdout, while the next test
 * runs), passed on to the stream, neither taken for the command's output nor lost.
 */
export async function replayInProcess(args: readonly string[]) {
	const out = { stdout: "", stderr: "" };
	const write = { stdout: process.stdout.write, stderr: process.stderr.write };
	const capture = (stream: "stdout" | "stderr") =>
		((chunk: string | Uint8Array, ...rest: unknown[]) => {
			if (typeof chunk !== "string")
				return (write[stream] as (...a: unknown[]) => boolean).call(process[stream], chunk, ...rest);
			out[stream] += chunk;
			return true;
		}) as typeof process.stdout.write;
	process.stdout.write = capture("stdout");
	process.stderr.write = capture("stderr");
	try {
		return { status: await main(["replay", ...args]), ...out };
	} finally {
		process.stdout.write = write.stdout;
		process.stderr.write = write.stderr;
	}
}
