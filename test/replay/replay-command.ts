/**
 * The package's own command as a user runs it, for the replay tests that check what it prints and
 * how it exits: `node bin/context-fold.mjs replay …` in a child process, stdout and stderr captured
 * as text (stderr is then not a terminal).
 */
import { type SpawnSyncOptions, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/context-fold.mjs", import.meta.url));

/** Runs `context-fold replay` with `args` (and `options`: a working directory, an environment). */
export function replayCommand(args: readonly string[], options: Omit<SpawnSyncOptions, "encoding"> = {}) {
	return spawnSync(process.execPath, [BIN, "replay", ...args], { ...options, encoding: "utf8" });
}
