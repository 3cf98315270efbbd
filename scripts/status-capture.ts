/**
 * Regenerates README.md's footer and status example (the block between `<!-- figures:status -->`
 * and `<!-- /figures:status -->`) from a real `pi` session under the default profile: pi runs in
 * tmux on a 100-column screen against the e2e harness's scripted model server, with no `policy`
 * setting and every knob at its default, in a 200k window with Pi's own compaction reserve. The
 * scripted model runs three large bash outputs, then small ones whose messages never mention
 * them, until the working-set policy folds; one more prompt follows, then the footer's
 * context-fold line and the whole `/context-fold status` view (the screen is made taller when the
 * view scrolls) are copied off the screen as pi drew them, from the view's title to its key hints
 * (trailing spaces dropped, nothing else changed).
 * `npm run status-capture`; needs `tmux`. Exits 1, writing nothing, when no fold happened.
 * `npm run status-capture -- --check` writes nothing and exits 1 when the README's block is stale;
 * test/e2e/readme-status.test.ts holds the README to it.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type CapturedRequest, startModelServer, toolResultsOf } from "../test/e2e/harness/model-server.ts";
import { createPiSandbox, type PiSandbox, REPO_ROOT } from "../test/e2e/harness/pi-runner.ts";
import { editorText, runCommand, startTui, type TuiSession, tmuxAvailable } from "../test/e2e/harness/tui.ts";
import { blockOf, withBlock } from "./figures.ts";

const README = join(REPO_ROOT, "README.md");
const WINDOW = 200_000;
/** Pi's default compaction.reserveTokens (the harness scales it to the window otherwise). */
const RESERVE = 16_384;
const COLUMNS = 100;
const ROWS = 60;
const WAIT = 180_000;
const PROMPT = "Run the parser suites, then tidy the lint findings.";
const DONE = "Suites pass and lint is clean.";
const AFTER = "Anything left?";
const FOOTER = /^fold \d+ · −[\d.]+k · cache read (–|\d+%)$/;

/** A bash call: three large test logs (~8k tokens each), then ten small lint listings (~1k tokens). */
function step(k: number): { text: string; command: string } | undefined {
	if (k < 3) {
		const command = `for i in $(seq 1 500); do echo "suite ${k + 1} case $i: parses fixture_${k + 1}_$i.json, snapshot matches"; done`;
		return { text: `Running parser suite ${k + 1}.`, command };
	}
	if (k < 13) {
		const command = `for i in $(seq 1 80); do echo "lint pass ${k - 2}: rule $i has no findings"; done`;
		return { text: `Lint pass ${k - 2}.`, command };
	}
	return undefined;
}

/** The scripted model: step k answers the request carrying k tool results; other prompts get a line. */
function script(req: CapturedRequest) {
	const results = toolResultsOf(req).length;
	const last = JSON.stringify(req.body).includes(AFTER);
	if (last && results >= 13) return { text: "Nothing; the suites and lint are done." };
	const next = step(results);
	return next ? { text: next.text, toolCalls: [{ name: "bash", args: { command: next.command } }] } : { text: DONE };
}

/** Runs tmux on the session's private server. */
function tmux(tui: TuiSession, ...args: string[]): void {
	const env = { ...process.env, TMUX: undefined, TMUX_PANE: undefined };
	const run = spawnSync("tmux", ["-S", tui.socket, "-f", "/dev/null", ...args], { env, encoding: "utf8" });
	if (run.status !== 0) throw new Error(`tmux ${args.join(" ")}: ${run.stderr}`);
}

/** The screen's lines from the status view's title to its key hints, as drawn. */
function statusView(screen: string): string[] | undefined {
	const lines = screen.split("\n").map((line) => line.trimEnd());
	const from = lines.findIndex((line) => line.startsWith("context-fold status"));
	const to = lines.findIndex((line, i) => i > from && line.endsWith("esc close"));
	return from < 0 || to < 0 ? undefined : lines.slice(from, to + 1);
}

/** The README block: the footer line and the status view, with how they were made. */
function block(footer: string, view: readonly string[]): string {
	return [
		"In the terminal UI, once something is folded, context-fold's line in Pi's footer reads",
		"",
		"```",
		footer,
		"```",
		"",
		"and `/context-fold status` opens the status view. Both are captured from a real `pi` session under",
		"the default profile (`working-set`, every knob default), 200k window, by `npm run status-capture`:",
		"",
		"```",
		...view,
		"```",
	].join("\n");
}

/** Removes the sandbox; pi, killed with its tmux server, may still be writing its compile cache for a moment. */
async function removeSandbox(sandbox: PiSandbox): Promise<void> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await sandbox.cleanup();
		} catch (error) {
			if (attempt >= 20) throw error;
			await sleep(500);
		}
	}
}

/**
 * The README block as a real pi session draws it now (see the file comment), with the footer line, the
 * status view and the requests the session made.
 */
export async function captureStatus(): Promise<{ block: string; footer: string; view: string[]; requests: number }> {
	if (!tmuxAvailable()) throw new Error("status-capture needs tmux");
	const server = await startModelServer(script);
	const sandbox = await createPiSandbox({
		serverUrl: server.url,
		contextWindow: WINDOW,
		// undefined leaves the key out of settings.json: the default policy.
		settings: { "context-fold": { policy: undefined }, compaction: { reserveTokens: RESERVE } },
	});
	const tui = startTui(sandbox, sandbox.args({ mode: "tui", extensions: ["."] }));
	try {
		tmux(tui, "resize-window", "-x", String(COLUMNS), "-y", String(ROWS));
		await tui.waitFor((s) => s.includes(sandbox.modelId), WAIT, "pi's footer");
		tui.submit(PROMPT);
		await tui.waitFor((s) => s.includes(DONE), WAIT, "the scripted run's end");
		tui.submit(AFTER);
		const screen = await tui.waitFor((s) => s.includes("Nothing; the suites"), WAIT, "the last answer");
		const footer = screen
			.split("\n")
			.map((line) => line.trim())
			.find((line) => FOOTER.test(line));
		if (!footer) throw new Error(`no fold: the footer has no context-fold line\n${screen}`);
		await runCommand(tui, "/context-fold status", WAIT);
		let view = statusView(await tui.waitFor((s) => statusView(s) !== undefined, WAIT, "the status view"));
		const scrolled = /\(lines \d+-\d+ of (\d+)\)/.exec(view?.[0] ?? "");
		if (scrolled) {
			// The view shows rows - 10 lines: make the screen tall enough for all of them.
			tmux(tui, "resize-window", "-x", String(COLUMNS), "-y", String(Number(scrolled[1]) + 12));
			view = statusView(await tui.waitFor((s) => !/\(lines \d+-/.test(s), WAIT, "the whole status view"));
		}
		if (!view) throw new Error("the status view went away");
		tui.send("Escape");
		await tui.waitFor((s) => editorText(s) === "", WAIT, "the editor back");
		return { block: block(footer, view), footer, view, requests: server.requests.length };
	} finally {
		tui.close();
		await server.close();
		await removeSandbox(sandbox);
	}
}

/**
 * `block` with the model's cache totals since the session started masked: on a loaded machine they
 * moved by one request's prefix between runs (read 317k against 318k), every other figure did not.
 * What a staleness check compares (--check, test/e2e/readme-status.test.ts).
 */
export function steady(block: string | undefined): string | undefined {
	return block?.replace(/cache read \d+% \(read [\d.]+k, write [\d.]+k, uncached \d+\)/g, "cache read …");
}

async function main(): Promise<void> {
	const started = Date.now();
	const { block: captured, footer, view, requests } = await captureStatus();
	const readme = readFileSync(README, "utf8");
	const next = withBlock(readme, "status", captured);
	if (process.argv.includes("--check")) {
		const fresh = steady(blockOf(readme, "status")) === steady(captured);
		console.log(`status-capture: README.md's status block is ${fresh ? "up to date" : "stale"}`);
		if (!fresh) process.exitCode = 1;
		return;
	}
	writeFileSync(README, next);
	const seconds = ((Date.now() - started) / 1000).toFixed(0);
	console.log(`status-capture: README.md rewritten (${requests} requests, ${seconds} s)`);
	console.log(footer);
	console.log(view.join("\n"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
