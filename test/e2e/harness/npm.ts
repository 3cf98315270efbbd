/**
 * npm for package tests, offline and isolated: no registry, no update notifier, no audit, a private
 * cache, and none of the `npm_*` variables an enclosing `npm test` exports. `npmIsolation` is the
 * environment delta (also for `pi install`, which runs npm itself); `runNpm` runs the `npm` on PATH.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

/** Environment changes that make npm work offline with a cache under `dir` (`undefined` = unset). */
export function npmIsolation(dir: string): Record<string, string | undefined> {
	const delta: Record<string, string | undefined> = {};
	for (const key of Object.keys(process.env)) {
		if (key.toLowerCase().startsWith("npm_")) delta[key] = undefined;
	}
	return {
		...delta,
		npm_config_offline: "true",
		npm_config_update_notifier: "false",
		npm_config_audit: "false",
		npm_config_fund: "false",
		npm_config_cache: join(dir, "npm-cache"),
	};
}

/** The result of one npm run. */
export interface NpmResult {
	status: number | null;
	stdout: string;
	stderr: string;
}

/** Runs `npm <args>` in `cwd` with `npmIsolation(scratch)` applied to this process's environment. */
export function runNpm(args: string[], cwd: string, scratch: string): NpmResult {
	const env: NodeJS.ProcessEnv = { ...process.env };
	for (const [key, value] of Object.entries(npmIsolation(scratch))) {
		if (value === undefined) delete env[key];
		else env[key] = value;
	}
	const result = spawnSync("npm", args, { cwd, env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
	if (result.error) throw result.error;
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** One file of `npm pack --json` output. */
export interface PackedFile {
	path: string;
	size: number;
}

/** Parses `npm pack --json` (or `--dry-run --json`) output: the tarball's file name and its files. */
export function parsePackJson(stdout: string): { filename: string; files: PackedFile[] } {
	const [entry] = JSON.parse(stdout) as { filename: string; files: PackedFile[] }[];
	return { filename: entry.filename, files: entry.files };
}
