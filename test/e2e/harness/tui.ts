/**
 * Pi's interactive terminal UI under tmux, for what only the TUI shows (the startup banner, `pi config`,
 * the footer status, slash-command completion, extension views): pi runs in a detached tmux session
 * on a private server whose socket lives in the sandbox (`-S`, no tmux.conf); a test sends keys and
 * reads the rendered screen with `capture-pane` until it shows what the test waits for, then the
 * server is killed and its socket removed. Only the screen text is read, never timings.
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
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

/** A running `pi` terminal UI under tmux. */
export interface TuiSession {
	/** The screen as `capture-pane` reads it now. */
	screen(): string;
	/** Sends keys as tmux names them (`Enter`, `Tab`, `Escape`, `Down`, `C-c`) or, with `literal`, text. */
	send(keys: string, literal?: boolean): void;
	/** Types `text` literally, then presses Enter. */
	submit(text: string): void;
	/**
	 * Reads the screen until `ready` holds, and resolves with that screen. Rejects, with the last
	 * screen, if pi exits first or `ready` never holds within `timeoutMs`.
	 */
	waitFor(ready: (screen: string) => boolean, timeoutMs?: number, what?: string): Promise<string>;
	/** Makes the screen `columns` wide (pi redraws for the new width). */
	resize(columns: number): void;
	/** Kills the tmux server (and pi with it) and removes its socket. */
	close(): void;
	/** The tmux server's socket file, in the sandbox. */
	socket: string;
}

/** Starts `pi <argv>` in the sandbox (its cwd and environment, plus `env`) on a 160x50 tmux screen. */
export function startTui(sandbox: PiSandbox, argv: string[], env: Record<string, string | undefined> = {}): TuiSession {
	const socket = join(sandbox.root, `tmux-${++servers}.sock`);
	const tmux = (...args: string[]) =>
		spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], {
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
		send(keys, literal = false) {
			tmux("send-keys", ...(literal ? ["-l", keys] : [keys]));
		},
		submit(text) {
			tmux("send-keys", "-l", text);
			tmux("send-keys", "Enter");
		},
		async waitFor(ready, timeoutMs = 30_000, what = "the expected screen") {
			let last = "";
			const deadline = Date.now() + timeoutMs;
			while (Date.now() < deadline) {
				last = screen();
				if (ready(last)) return last;
				if (EXITED.test(last)) throw new Error(`pi exited before ${what}:\n${last}`);
				await sleep(200);
			}
			throw new Error(`${what} did not appear within ${timeoutMs} ms; last screen:\n${last}`);
		},
		resize(columns) {
			const resized = tmux("resize-window", "-x", String(columns), "-y", String(ROWS));
			if (resized.status !== 0) throw new Error(`tmux resize-window failed: ${resized.stderr}`);
		},
		close() {
			tmux("kill-server");
			rmSync(socket, { force: true });
		},
		socket,
	};
}

/** The editor's text: what stands between the last two horizontal rules of the screen. */
export function editorText(screen: string): string | undefined {
	const lines = screen.split("\n");
	const rules = lines.flatMap((line, i) => (/^─{20,}$/.test(line.trim()) ? [i] : []));
	if (rules.length < 2) return undefined;
	const [from, to] = rules.slice(-2);
	return lines
		.slice(from + 1, to)
		.join("\n")
		.trim();
}

/** Types a slash command and presses Enter until the editor lets it go (the first Enter may take a completion). */
export async function runCommand(tui: TuiSession, text: string, timeoutMs = 90_000): Promise<void> {
	tui.send(text, true);
	await tui.waitFor((s) => editorText(s) === text, timeoutMs, `"${text}" in the editor`);
	for (let i = 0; i < 5; i++) {
		tui.send("Enter");
		await sleep(500);
		if (editorText(tui.screen()) !== text) return;
	}
	throw new Error(`"${text}" was never submitted:\n${tui.screen()}`);
}

/** The screen's text with every run of whitespace (line breaks included) made one space, so a wrapped notice reads as one line. */
export function flat(screen: string): string {
	return screen.replace(/\s+/g, " ");
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
	const tui = startTui(sandbox, argv);
	try {
		return await tui.waitFor(ready, timeoutMs);
	} finally {
		tui.close();
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
