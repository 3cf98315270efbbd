/**
 * The cache advisories in Pi's real terminal UI (tmux, read with capture-pane) against the scripted
 * model server:
 * - the cold-input notice, for a response whose scripted usage read nothing from the cache while
 *   carrying 30k tokens (and wrote them again: the provider caches);
 * - the wire watchdog, with a fixture extension loaded after context-fold that sends the raw
 *   messages instead of the folded ones (the request of fold event 1, which also first declares the
 *   fold tools, goes out without its digests), and quiet in the same session without that fixture;
 * - the opt-in send confirmation after an idle gap (a first prompt sent with `pi -p`, its session
 *   file's times moved an hour back, then resumed in the terminal UI): the idle notice on resuming;
 *   Keep draft puts the text back in the editor and sends nothing; Send anyway sends it.
 * Skips without tmux. Waits are generous and poll the screen; nothing is timed.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, afterEach, describe, it } from "node:test";
import { ADVICE, KEEP_DRAFT, SEND_ANYWAY } from "../../src/core/cache-advice.ts";
import { batchCommand } from "./harness/batches.ts";
import { ANY_TAG } from "./harness/fold-wire.ts";
import { ageSession } from "./harness/idle-gap.ts";
import {
	lastUserText,
	type ModelServer,
	type Script,
	serializePrompt,
	startModelServer,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox } from "./harness/pi-runner.ts";
import { flat, startTui, type TuiSession, tmuxAvailable } from "./harness/tui.ts";

const NO_TMUX = tmuxAvailable() ? false : "tmux is not installed (these advisories are read off the terminal UI)";
const WAIT_MS = 120_000;
/** A cold response of a provider that caches: nothing read, the whole 30k prompt written again. */
const COLD = { input: 10, cacheRead: 0, cacheWrite: 29_990 };

/** The editor's text: the lines between the last two horizontal rules on the screen. */
function editorText(screen: string): string {
	const lines = screen.split("\n");
	const rules = lines.flatMap((line, i) => (/^─{20,}$/.test(line.trim()) ? [i] : []));
	if (rules.length < 2) return "";
	return lines
		.slice(rules.at(-2)! + 1, rules.at(-1))
		.map((line) => line.trim())
		.join("\n")
		.trim();
}

const ready = (s: string) => s.includes("fake-model");

describe("cache advisories in the terminal UI", { skip: NO_TMUX }, () => {
	const open: { server: ModelServer; sandbox: PiSandbox; tui?: TuiSession }[] = [];
	const start = async (script: Script, settings: Record<string, unknown>, contextWindow: number) => {
		const server = await startModelServer(script);
		const sandbox = await createPiSandbox({ serverUrl: server.url, contextWindow, settings });
		const run = { server, sandbox } as (typeof open)[number];
		open.push(run);
		return run;
	};
	afterEach(async () => {
		for (const run of open.splice(0)) {
			run.tui?.close();
			await run.server.close();
			await run.sandbox.cleanup();
		}
	});
	after(() => {
		for (const run of open) run.tui?.close();
	});

	it("notices a cold input: no cache read while 30k tokens are carried", async () => {
		const run = await start(() => ({ text: "Done here.", usage: COLD }), {}, 200_000);
		const tui = startTui(run.sandbox, run.sandbox.args({ mode: "tui", extensions: ["."] }));
		run.tui = tui;
		await tui.waitFor(ready, WAIT_MS, "the startup screen");
		tui.send("hello there", true);
		tui.send("Enter");
		// A session's first response has no earlier prompt to read from the cache: not a cold input.
		const first = await tui.waitFor((s) => flat(s).includes("Done here."), WAIT_MS, "the first reply");
		assert.ok(!flat(first).includes("context-fold: cold input"), "noticed on the session's first response");
		tui.send("once more", true);
		tui.send("Enter");
		const screen = await tui.waitFor(
			(s) => flat(s).includes(flat(ADVICE.coldInput(COLD))),
			WAIT_MS,
			"the cold-input notice",
		);
		assert.equal(flat(screen).split("context-fold: cold input").length - 1, 1, "noticed once");
		// Nothing is folded yet, and the footer flags the advisory all the same.
		await tui.waitFor((s) => s.includes("context-fold ⚠"), WAIT_MS, "the footer's advisory flag");
		assert.equal(run.server.requests.length, 2);
		assert.ok(existsSync(tui.socket), "the tmux server's socket is in the sandbox");
		tui.close();
		assert.ok(!existsSync(tui.socket), "closing the session removes its socket");
	});

	// Progress is counted in tool results, which folding never removes (their text may fold).
	const batches: Script = (req) => {
		const ran = toolResultsOf(req).length;
		return ran < 8
			? { toolCalls: [{ name: "bash", args: { command: batchCommand(ran + 1) } }] }
			: { text: "All batches ran." };
	};
	const foldEarly = { compaction: { enabled: false }, "context-fold": { foldAt: 0.3, tail: 1000 } };
	/** Runs the batches in the terminal UI; resolves with every screen seen on the way, the last one showing the end. */
	const runBatches = async (extensions: string[]) => {
		const run = await start(batches, foldEarly, 16_000);
		const tui = startTui(run.sandbox, run.sandbox.args({ mode: "tui", extensions }));
		run.tui = tui;
		await tui.waitFor(ready, WAIT_MS, "the startup screen");
		tui.send("Run the batches.", true);
		tui.send("Enter");
		// A notice may scroll off the screen before the end: every screen on the way is kept.
		const seen = new Set<string>();
		await tui.waitFor(
			(s) => {
				seen.add(flat(s));
				return s.includes("All batches ran.");
			},
			WAIT_MS,
			"the end of the batches",
		);
		return { run, seen: [...seen] };
	};
	// Fold event 1's request is also the first to declare recall_folded and unfold, which changes the
	// prompt at the tool list: the cache read cannot tell whether the fold reached the wire, so the
	// watchdog reads the request's payload.
	const WATCHDOG =
		/context-fold: fold event (\d+) did not reach the wire: the request it folded carried its blocks raw, without their digests; another extension's context handler likely restored the raw messages after context-fold's/g;

	it("watchdog: warns once when another extension sends the raw messages instead of the folded ones", async () => {
		const { run, seen } = await runBatches([".", "test/e2e/fixtures/raw-context.ts"]);
		const events = new Set(seen.flatMap((screen) => [...screen.matchAll(WATCHDOG)].map((m) => m[1])));
		assert.deepEqual([...events], ["1"], "one warning, for fold event 1");
		assert.equal(
			run.server.requests.some((req) => ANY_TAG.test(serializePrompt(req))),
			false,
			"no fold reached the wire",
		);
	});

	it("watchdog: quiet when the fold reaches the wire", async () => {
		const { run, seen } = await runBatches(["."]);
		assert.equal(
			run.server.requests.some((req) => ANY_TAG.test(serializePrompt(req))),
			true,
			"a fold reached the wire",
		);
		assert.deepEqual(
			seen.filter((screen) => screen.includes("did not reach the wire")),
			[],
		);
	});

	it("opt-in confirmation after an idle gap: Keep draft keeps the text and sends nothing; Send anyway sends", async () => {
		const script: Script = (req) => ({ text: `Answered: ${lastUserText(req)}`, usage: COLD });
		const run = await start(script, { "context-fold": { confirmColdSend: true } }, 200_000);
		const first = await run.sandbox.runPrint({ prompt: "first prompt", extensions: ["."], timeoutMs: WAIT_MS });
		assert.equal(first.code, 0, first.stderr);
		const file = await run.sandbox.latestSessionFile();
		assert.ok(file, "the first prompt's session");
		await ageSession(file, 60 * 60_000);
		const tui = startTui(run.sandbox, run.sandbox.args({ mode: "tui", extensions: ["."], continueSession: true }));
		run.tui = tui;
		const resumed = flat(
			await tui.waitFor(
				(s) => flat(s).includes("is likely cold (idle 1h") && flat(s).includes("Answered: first prompt"),
				WAIT_MS,
				"the idle notice on resuming, and the restored transcript",
			),
		);
		// Pi draws the restored transcript after session_start: the warning stands below it, above the editor.
		assert.ok(
			resumed.indexOf("is likely cold (idle 1h") > resumed.indexOf("Answered: first prompt"),
			`the idle warning stands below the restored transcript:\n${resumed}`,
		);
		assert.equal(run.server.requests.length, 1);

		tui.send("second prompt", true);
		tui.send("Enter");
		const dialog = await tui.waitFor((s) => s.includes(SEND_ANYWAY), WAIT_MS, "the confirmation");
		assert.match(
			flat(dialog),
			/The prompt cache of fake\/fake-model is likely cold \(idle 1h 00m\): this prompt re-sends ~30k tokens uncached\./,
		);
		assert.match(dialog, new RegExp(`→ ${KEEP_DRAFT}`), "Keep draft is the first, selected answer");
		tui.send("Enter");
		const kept = await tui.waitFor(
			(s) => flat(s).includes("draft kept, nothing sent") && editorText(s) === "second prompt",
			WAIT_MS,
			"the draft back in the editor",
		);
		assert.equal(kept.includes(SEND_ANYWAY), false, "the dialog closed");
		assert.equal(run.server.requests.length, 1, "Keep draft sent nothing");

		tui.send("Enter");
		await tui.waitFor((s) => s.includes(SEND_ANYWAY), WAIT_MS, "the confirmation, asked again");
		tui.send("Down");
		tui.send("Enter");
		await tui.waitFor((s) => s.includes("Answered: second prompt"), WAIT_MS, "the answer to the sent draft");
		assert.equal(run.server.requests.length, 2);
		assert.equal(lastUserText(run.server.requests[1]), "second prompt");
	});
});
