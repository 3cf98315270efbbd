/**
 * A driver for Pi's interactive terminal UI under tmux, for tests that converse with it: pi runs in
 * a detached tmux session on a private server (`-L`, no tmux.conf) on a 160x50 screen; the test
 * types text, presses keys, and waits until `capture-pane` shows what it expects. Only screen text is
 * read, never timings: every wait polls until its predicate holds or a generous deadline passes.
 */
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { PI_CLI, type PiSandbox } from "./pi-runner.ts";

const COLUMNS = 160;
const ROWS = 50;
const EXITED = /\[pi exited: (\d+)\]/;
let servers = 0;

/** A running pi terminal UI. */
export interface TuiSession {
	/** The screen as it stands now. */
	screen(): string;
	/** Types literal text into the focused input (no Enter). */
	type(text: string): void;
	/** Presses tmux key names, e.g. "Enter", "Down", "Escape", "C-c". */
	press(...keys: string[]): void;
	/**
	 * Resolves with the first screen for which `ready` holds; rejects with the last screen when pi
	 * exits first or the deadline passes.
	 */
	waitFor(ready: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
	/** Kills the tmux server (and pi with it). */
	close(): void;
}

/** Quotes one word for `sh -c`. */
function shellQuote(word: string): string {
	return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Starts `pi <argv>` in the sandbox (its cwd and environment, plus `env`) on a tmux screen. */
export function startTui(sandbox: PiSandbox, argv: string[], env: Record<string, string> = {}): TuiSession {
	const server = `cf-tui-${process.pid}-${++servers}`;
	const tmux = (...args: string[]) =>
		spawnSync("tmux", ["-L", server, "-f", "/dev/null", ...args], {
			cwd: sandbox.cwd,
			env: sandbox.env({ TMUX: undefined, TMUX_PANE: undefined, ...env }),
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
	const screen = () => tmux("capture-pane", "-p").stdout ?? "";
	return {
		screen,
		type: (text) => {
			tmux("send-keys", "-l", text);
		},
		press: (...keys) => {
			tmux("send-keys", ...keys);
		},
		async waitFor(ready, what, timeoutMs = 60_000) {
			let last = "";
			const deadline = Date.now() + timeoutMs;
			while (Date.now() < deadline) {
				last = screen();
				if (ready(last)) return last;
				if (EXITED.test(last)) throw new Error(`pi exited while waiting for ${what}:\n${last}`);
				await sleep(250);
			}
			throw new Error(`${what} did not appear within ${timeoutMs} ms; last screen:\n${last}`);
		},
		close: () => {
			tmux("kill-server");
		},
	};
}

/** The screen's text with every run of whitespace (line breaks included) made one space, so a wrapped notice reads as one line. */
export function flat(screen: string): string {
	return screen.replace(/\s+/g, " ");
}
