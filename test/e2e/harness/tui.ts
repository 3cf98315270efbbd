/**
 * Pi's interactive terminal UI under tmux, for what only the TUI shows (the startup banner's list of
 * loaded extensions, the `pi config` resource list): pi runs in a detached tmux session on a private
 * server (`-L`, no tmux.conf), the rendered screen is read with `capture-pane` until it shows what the
 * test waits for, then the server is killed. Only the screen text is read, never timings.
 */
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { PI_CLI, type PiSandbox } from "./pi-runner.ts";

const COLUMNS = 160;
const ROWS = 50;
const EXITED = /\[pi exited: (\d+)\]/;
let servers = 0;

/** True when a `tmux` binary runs. */
export function tmuxAvailable(): boolean {
	return spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;
}

/** Quotes one word for `sh -c`. */
function shellQuote(word: string): string {
	return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Starts `pi <argv>` in the sandbox (its cwd and environment) on a 160x50 tmux screen and resolves
 * with the first screen for which `ready` holds. Rejects, with the last screen, if pi exits first or
 * `ready` never holds within `timeoutMs`.
 */
export async function readTuiScreen(
	sandbox: PiSandbox,
	argv: string[],
	ready: (screen: string) => boolean,
	timeoutMs = 30_000,
): Promise<string> {
	const server = `cf-e2e-${process.pid}-${++servers}`;
	const tmux = (...args: string[]) =>
		spawnSync("tmux", ["-L", server, "-f", "/dev/null", ...args], {
			cwd: sandbox.cwd,
			env: sandbox.env({ TMUX: undefined, TMUX_PANE: undefined }),
			encoding: "utf8",
		});
	const command = [process.execPath, PI_CLI, ...argv].map(shellQuote).join(" ");
	// Keep the pane after pi exits so its last words can be read.
	const started = tmux(
		"new-session",
		"-d",
		"-x",
		String(COLUMNS),
		"-y",
		String(ROWS),
		`${command}; echo "[pi exited: $?]"; sleep 600`,
	);
	if (started.status !== 0) throw new Error(`tmux new-session failed: ${started.stderr}`);
	try {
		let screen = "";
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline) {
			screen = tmux("capture-pane", "-p").stdout ?? "";
			if (ready(screen)) return screen;
			if (EXITED.test(screen)) throw new Error(`pi exited before the expected screen:\n${screen}`);
			await sleep(200);
		}
		throw new Error(`the expected screen did not appear within ${timeoutMs} ms; last screen:\n${screen}`);
	} finally {
		tmux("kill-server");
	}
}

/**
 * The labels of the startup banner's `[Extensions]` section (Pi's compact listing: one line of
 * comma-separated labels, possibly wrapped), or undefined when the screen has no such section.
 */
export function bannerExtensionLabels(screen: string): string[] | undefined {
	const lines = screen.split("\n");
	const start = lines.findIndex((line) => line.trim() === "[Extensions]");
	if (start < 0) return undefined;
	const body: string[] = [];
	for (const line of lines.slice(start + 1)) {
		if (line.trim() === "") break;
		body.push(line.trim());
	}
	return body
		.join(" ")
		.split(/,\s*/)
		.filter((label) => label.length > 0);
}

/** The resource names `pi config` lists (the text after each `[x]` / `[ ]` checkbox). */
export function configItemNames(screen: string): string[] {
	const names: string[] = [];
	for (const line of screen.split("\n")) {
		const match = /\[[x ]\] (.+)$/.exec(line);
		if (match) names.push(match[1].trim());
	}
	return names;
}
