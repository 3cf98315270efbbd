/**
 * The user's view through real pi (issue 11), against the scripted model server:
 * - the terminal UI under tmux: no footer status before the first fold; `/cont` + Tab completes to
 *   `/context-fold`; a knob changed in `/context-fold settings` (Pi's SettingsList) is saved to
 *   settings.json and the very next request folds at the new threshold; the footer then reads
 *   `fold N · −Xk · cache …` and the transcript names the event and what each block was; `/context-fold
 *   status` opens without any model request, naming a folded block's command; `/context-fold recall`
 *   of a block folded in the context is titled by its command and offers `u unfold`; `/tree`
 *   (labelled-only filter) names the fold event; after `/compact` (context-fold's deterministic summary)
 *   the recall view of a compacted block says it can be read, not unfolded, and offers no `u unfold`;
 * - `/context-fold status` as text in print mode (on stderr, where Pi puts an extension's output)
 *   and over RPC (a notification), neither calling the model; after an RPC `set_model` to a model
 *   with a smaller window, the status names the new window; after RPC `set_auto_compaction` off, it
 *   no longer says where Pi compacts.
 * The sandbox pins the ladder with a high threshold (nothing folds until the setting changes), a
 * small tail and step. Screens are polled generously and never timed.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { FoldTracker } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	lastUserText,
	type ModelServer,
	messagesOf,
	serializePrompt,
	startModelServer,
} from "./harness/model-server.ts";
import { createPiSandbox, type JsonRecord, type PiRpc, type PiSandbox } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";
import { editorText, flat, runCommand, startTui, type TuiSession, tmuxAvailable } from "./harness/tui.ts";

const WINDOW = 20_000;
const WAIT = 90_000;

/** The line of `/context-fold status`, asked over RPC, that starts with `prefix`. */
async function statusLine(rpc: PiRpc, prefix: string): Promise<string | undefined> {
	const { events } = await rpc.prompt("/context-fold status", { timeoutMs: WAIT });
	const note = events.find((e) => e.type === "extension_ui_request" && e.method === "notify");
	return String(note?.message ?? "")
		.split("\n")
		.find((l) => l.startsWith(prefix));
}
const NO_TMUX = tmuxAvailable() ? false : "tmux is not installed (the footer and views exist only in the TUI)";
const FOOTER = /^fold (\d+) · −[\d.]+k · cache read (–|\d+%)$/m;
const batchId = (k: number) => `toolu_view_batch_${k}`;
/** A batch's command, as the script runs it and the user's view names its block. */
const batchCommand = (k: number) => `for i in $(seq 1 400); do echo "batch ${k} line $i ok"; done`;
/** A batch block's line in the user's view, `#code bash: <command> (<size>)`, with a size pattern. */
const blockLine = (size: string) =>
	new RegExp(`#[0-9a-z]{8} bash: for i in \\$\\(seq 1 400\\); do echo "batch \\d line \\$i ok"; done \\(${size}\\)`);
/** How the status's largest folded blocks read. */
const LARGEST = blockLine("~[\\d.]+k tokens kept out");

/** The fold code "recall" has the model read back with recall_folded. */
let recallCode: string | undefined;

/**
 * The scripted model: "run" runs three bash batches of 400 lines, then answers; "recall" calls
 * recall_folded on `recallCode`, then answers; anything else is answered.
 */
function script(tracker: FoldTracker) {
	return (req: CapturedRequest) => {
		const folds = tracker.observe(req);
		if (req.index > 20) return { text: "guard: too many requests" };
		if (lastUserText(req) === "recall") {
			if (messagesOf(req).at(-1)?.role === "tool") return { text: "read it back" };
			return { toolCalls: [{ id: "toolu_view_recall", name: "recall_folded", args: { codes: [recallCode] } }] };
		}
		if (lastUserText(req) !== "run") return { text: `noted ${req.index}` };
		for (let k = 1; k <= 3; k++) {
			if (!folds.results.some((r) => r.id === batchId(k))) {
				return { toolCalls: [{ id: batchId(k), name: "bash", args: { command: batchCommand(k) } }] };
			}
		}
		return { text: "three batches done" };
	};
}

describe("the user's view in pi's terminal UI", { skip: NO_TMUX }, () => {
	const tracker = new FoldTracker();
	let server: ModelServer;
	let sandbox: PiSandbox;
	let tui: TuiSession;
	let sessionFile: string | undefined;

	before(async () => {
		server = await startModelServer(script(tracker));
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: {
				"context-fold": { policy: "ladder", foldAt: 0.9, tail: 1000, step: 0.02 },
				// A small kept tail, so the closing /compact removes the folded batches.
				compaction: { keepRecentTokens: 1_000 },
			},
		});
		tui = startTui(sandbox, sandbox.args({ mode: "tui", extensions: ["."] }));
		await tui.waitFor((s) => s.includes(sandbox.modelId), WAIT, "pi's footer");
	});

	after(async () => {
		tui?.close();
		await server?.close();
		// pi, killed with its tmux server, may still be writing its compile cache for a moment.
		for (let attempt = 1; ; attempt++) {
			try {
				await sandbox?.cleanup();
				return;
			} catch (error) {
				if (attempt >= 20) throw error;
				await sleep(500);
			}
		}
	});

	it("shows no fold status before the first fold", async () => {
		tui.submit("run");
		const screen = await tui.waitFor((s) => s.includes("three batches done"), WAIT, "the batches' answer");
		assert.equal(server.requests.length, 4);
		assert.ok(!server.requests.some((r) => tracker.observe(r).folded.size > 0), "something folded early");
		assert.doesNotMatch(screen, FOOTER);
	});

	it("completes /cont to /context-fold with Tab", async () => {
		tui.send("/cont", true);
		await tui.waitFor((s) => editorText(s) === "/cont", WAIT, "/cont typed");
		tui.send("Tab");
		const screen = await tui.waitFor(
			(s) => editorText(s)?.startsWith("/context-fold") ?? false,
			WAIT,
			"the completion",
		);
		assert.match(editorText(screen) ?? "", /^\/context-fold\s*$/);
		tui.send("C-u");
		await tui.waitFor((s) => editorText(s) === "", WAIT, "a cleared editor");
	});

	it("saves a knob changed in the settings list to settings.json, and the next request folds by it", async () => {
		await runCommand(tui, "/context-fold settings");
		await tui.waitFor((s) => /foldAt · saved +0\.9/.test(s), WAIT, "the settings list");
		assert.match(tui.screen(), /context-fold settings · policy ladder/, "the list has a title naming the policy");
		const listed = tui.screen();
		assert.match(listed, /coldFoldAt · default +0\.25/);
		assert.match(listed, /compact · default +fold/);
		tui.send("foldAt", true);
		await tui.waitFor((s) => /→ foldAt · saved/.test(s), WAIT, "foldAt selected");
		tui.send("Enter");
		await tui.waitFor((s) => s.includes("foldAt (now 0.9"), WAIT, "the value input");
		tui.send("0.2", true);
		tui.send("Enter");
		await tui.waitFor((s) => /foldAt · saved +0\.2/.test(s), WAIT, "the new value listed");
		const settings = JSON.parse(await readFile(join(sandbox.agentDir, "settings.json"), "utf8"));
		assert.equal(settings["context-fold"].foldAt, 0.2);
		assert.equal(settings["context-fold"].tail, 1000, "the section's other knobs are kept");
		assert.equal(settings.defaultModel, sandbox.modelId, "Pi's own keys are kept");
		tui.send("Escape");
		await tui.waitFor((s) => editorText(s) === "", WAIT, "the editor back");

		const from = server.requests.length;
		tui.submit("go on");
		const screen = await tui.waitFor(
			(s) => s.includes(`noted ${from}`) && FOOTER.test(s),
			WAIT,
			"the answer and footer",
		);
		const folded = tracker.observe(server.requests[from]).folded;
		assert.ok(folded.has(batchId(1)), "the request after the change carries batch 1 folded");
		const footer = FOOTER.exec(screen);
		assert.equal(Number(footer?.[1]), folded.size, `footer: ${footer?.[0]}`);
		const codes = [...folded.values()].map((f) => `#${f.code}`);
		assert.ok(screen.includes(`context-fold: folded ${codes.join(", ")} · ~`), `transcript line missing:\n${screen}`);
		const first = folded.get(batchId(1))?.code;
		assert.ok(
			screen.includes(`#${first} bash: ${batchCommand(1)} (`),
			`the transcript does not say what #${first} was:\n${screen}`,
		);
	});

	it("opens /context-fold status without any model request", async () => {
		const from = server.requests.length;
		await runCommand(tui, "/context-fold status");
		const screen = await tui.waitFor((s) => s.includes("Largest folded blocks"), WAIT, "the status view");
		assert.match(screen, /Next fold 4k \(ladder foldAt 20%\)/);
		assert.match(screen, /#1 fold +\d+ blocks?, ~[\d.]+k kept out; rewrite/);
		assert.match(screen, /fake\/fake-model: \d+ responses/);
		assert.match(screen, /Largest folded blocks \(\/context-fold recall <code> shows one\)/);
		assert.match(screen, LARGEST, "the status names a folded block's command");
		const footer = FOOTER.exec(screen)?.[2];
		const status = /cache read (–|\d+%)(?: \(no response since\))? since the latest fold event/.exec(
			flat(screen),
		)?.[1];
		assert.ok(footer && footer !== "–", `the footer shows a cache figure after the fold event:\n${screen}`);
		assert.equal(status, footer, "the status gives the footer's cache figure, the same value");
		tui.send("Escape");
		await tui.waitFor((s) => editorText(s) === "", WAIT, "the editor back");
		assert.equal(server.requests.length, from, "the status reached the model");
		sessionFile = await sandbox.latestSessionFile();
	});

	it("opens a folded block still in the context by what it was, offering to unfold it", async () => {
		const code = [...tracker.observe(server.requests.at(-1) as CapturedRequest).folded.values()][0]?.code;
		assert.ok(code, "nothing folded");
		const from = server.requests.length;
		await runCommand(tui, `/context-fold recall ${code}`);
		const screen = await tui.waitFor((s) => s.includes("esc close"), WAIT, "the recall view");
		assert.match(screen, new RegExp(`#${code} bash: for i in .*\\([\\d.]+k tokens\\)`));
		assert.match(screen, /Recalled #\w{8}: bash, \d+ lines \(sha256 verified\)/);
		assert.match(screen, / u unfold /, "a block folded in the context may be unfolded");
		// Page down, Home and End scroll the view, not the transcript behind it.
		const first = (s: string) => Number(/\(rows (\d+)-\d+ of \d+\)/.exec(s)?.[1] ?? 0);
		assert.equal(first(screen), 1, `a long block opens at its top:\n${screen}`);
		tui.send("NPage");
		await tui.waitFor((s) => first(s) > 1, WAIT, "page down moves the view");
		tui.send("Home");
		await tui.waitFor((s) => first(s) === 1, WAIT, "home goes back to the top");
		tui.send("End");
		await tui.waitFor((s) => first(s) > 1, WAIT, "end goes to the bottom");
		tui.send("Escape");
		await tui.waitFor((s) => editorText(s) === "", WAIT, "the editor back");
		assert.equal(server.requests.length, from, "the recall reached the model");
	});

	it("names the fold event in /tree", async () => {
		await runCommand(tui, "/tree");
		await tui.waitFor((s) => s.includes("Session Tree"), WAIT, "the tree");
		tui.send("C-l");
		const screen = await tui.waitFor((s) => s.includes("[labeled]"), WAIT, "the labelled-only filter");
		assert.match(
			screen,
			/\[folded #[0-9a-z]{8}(, #[0-9a-z]{8})* · ~[\d.]+k tokens kept out\] \[custom: contextfold\.fold\]/,
		);
		tui.send("Escape");
	});

	describe("/context-fold status outside the terminal UI", () => {
		it("prints the status in print mode, calling no model", async () => {
			assert.ok(sessionFile, "the TUI tests did not run");
			const from = server.requests.length;
			const run = await sandbox.runPrint({
				prompt: "/context-fold status",
				session: sessionFile,
				extensions: ["."],
				timeoutMs: WAIT,
			});
			assert.equal(run.code, 0, run.stderr);
			assert.equal(server.requests.length, from, "print mode reached the model");
			const text = run.stderr + run.stdout;
			assert.match(text, /context-fold status\n/);
			// A new process has sent no request: the status shows the resumed context as it would go out.
			assert.match(text, /Context +[\d.]+k of 20k window \(\d+%\) · as the next request would send it\n/);
			assert.match(text, /Folds +[1-9]\d* in context/);
			assert.match(text, /#1 fold +\d+ blocks?/);
			assert.match(text, /lifetime 5m 00s \(cacheTtlSeconds default; the model declares none\)/);
		});

		it("answers over RPC with a notification holding the status, calling no model", async () => {
			assert.ok(sessionFile, "the TUI tests did not run");
			const from = server.requests.length;
			const rpc = await sandbox.startRpc({ session: sessionFile, extensions: ["."], timeoutMs: WAIT });
			try {
				const start = rpc.records.length;
				await rpc.send({ type: "prompt", message: "/context-fold status" });
				const note = (await rpc.waitFor(
					(r) =>
						r.type === "extension_ui_request" &&
						r.method === "notify" &&
						String(r.message).includes("context-fold status"),
					{ from: start, timeoutMs: WAIT },
				)) as JsonRecord;
				assert.match(String(note.message), /#1 fold +\d+ blocks?/);
				assert.match(
					String(note.message),
					/Largest folded blocks \(\/context-fold recall <code> shows one\)\n {2}#/,
				);
				assert.match(String(note.message), LARGEST);
			} finally {
				await rpc.close();
			}
			assert.equal(server.requests.length, from, "RPC reached the model");
		});
	});

	it("after /compact <instructions>, which it says it did not apply, the recall view of a folded block it removed offers reading only, no unfold", async () => {
		const code = tracker.observe(server.requests.at(-1) as CapturedRequest).folded.get(batchId(1))?.code;
		assert.ok(code, "batch 1 is not folded");
		await runCommand(tui, "/compact keep only the error lines");
		await tui.waitFor((s) => /Compacted from/i.test(s), WAIT, "the compaction");
		await tui.waitFor(
			(s) =>
				/compacted the context from ~[\d.]+k tokens with its deterministic summary \(no model call\)/.test(flat(s)),
			WAIT,
			"context-fold's notice that the summary was its own",
		);
		// Instructions a deterministic summary cannot follow are said after Pi's redraw, which wipes earlier notices.
		await tui.waitFor(
			(s) => /the compaction instructions were not applied/.test(flat(s)),
			WAIT,
			"the notice that the instructions were not applied",
		);
		await runCommand(tui, "/context-fold status");
		const status = await tui.waitFor((s) => s.includes("Largest folded blocks"), WAIT, "the status view");
		assert.match(
			status,
			/compaction from ~[\d.]+k, deterministic summary \(no model call\)/,
			"listed with the events",
		);
		tui.send("Escape");
		await tui.waitFor((s) => editorText(s) === "", WAIT, "the editor back");
		await runCommand(tui, `/context-fold recall ${code}`);
		const screen = await tui.waitFor((s) => s.includes("esc close"), WAIT, "the recall view");
		assert.match(screen, new RegExp(`#${code} bash: for i in `), "titled by what the block was");
		assert.match(
			screen,
			/No\s+longer\s+in\s+the\s+context\s+\(a\s+compaction\s+took\s+it\s+out,\s+or\s+another\s+extension\s+leaves\s+it\s+out\):\s+it\s+can\s+be\s+read\s+here,\s+not\s+unfolded\./,
		);
		assert.doesNotMatch(screen, / u unfold /, "a compacted block is offered no unfold");
		tui.send("u");
		tui.send("Escape");
		await tui.waitFor((s) => editorText(s) === "", WAIT, "the editor back");
		assert.doesNotMatch(tui.screen(), /Unfold\?|recall_folded/, "no unfold was asked, no model tool named");
	});

	it("draws a recall_folded result within a 100-column terminal, one line a block", async () => {
		recallCode = tracker.observe(server.requests.at(-1) as CapturedRequest).folded.get(batchId(1))?.code;
		assert.ok(recallCode, "batch 1 is not folded");
		tui.resize(100);
		tui.submit("recall");
		await tui.waitFor((s) => s.includes("read it back"), WAIT, "the model's answer after its recall");
		// Pi draws a tool's result in a box with a column of padding each side: 98 columns of text.
		const line = new RegExp(`^ *recalled #${recallCode} · bash: for i in .*… · 400 lines · sha256 verified *$`, "m");
		assert.match(tui.screen(), line);
	});
});

describe("/context-fold status beside Pi's own count", () => {
	// The answer reports a prompt three times its chars/4 size, as a dense tokenizer would.
	const pi = scriptedPi(
		(req) => ({
			text: "counted",
			usage: { input: 3 * Math.ceil(serializePrompt(req).length / 4), cacheRead: 0, cacheWrite: 0 },
		}),
		{ contextWindow: 200_000 },
	);

	it("names Pi's count where it differs from the status's chars/4 figure by a tenth or more", async () => {
		const first = await pi.sandbox.runPrint({ prompt: "Count me.", extensions: ["."], timeoutMs: WAIT });
		assert.equal(first.code, 0, first.stderr);
		const session = await pi.sandbox.latestSessionFile();
		assert.ok(session, "no session file");
		const run = await pi.sandbox.runPrint({
			prompt: "/context-fold status",
			session,
			extensions: ["."],
			timeoutMs: WAIT,
		});
		assert.equal(run.code, 0, run.stderr);
		const line = (run.stderr + run.stdout).split("\n").find((l) => l.startsWith("Context "));
		const figures =
			/^Context +([\d.]+)k of 200k window \(\d+%\) · Pi counts ([\d.]+)k · as the next request would send it$/.exec(
				String(line),
			);
		assert.ok(figures, String(line));
		assert.ok(Number(figures[2]) > 2 * Number(figures[1]), String(line));
	});
});

describe("/context-fold status after a switch to a model with a smaller window", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	before(async () => {
		server = await startModelServer((req) => ({ text: `noted ${req.index}` }));
		sandbox = await createPiSandbox({ serverUrl: server.url, contextWindow: WINDOW });
		const file = join(sandbox.agentDir, "models.json");
		const models = JSON.parse(await readFile(file, "utf8"));
		const model = models.providers[sandbox.provider].models[0];
		models.providers[sandbox.provider].models.push({ ...model, id: "small-model", contextWindow: 8_000 });
		await writeFile(file, JSON.stringify(models));
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("names the new model's window before the next request", async () => {
		const rpc = await sandbox.startRpc({ extensions: ["."], timeoutMs: WAIT });
		try {
			const status = () => statusLine(rpc, "Context ");
			await rpc.prompt("Note the plan.", { timeoutMs: WAIT });
			assert.match(String(await status()), /of 20k window/);
			await rpc.call({ type: "set_model", provider: sandbox.provider, modelId: "small-model" });
			assert.match(String(await status()), /of 8k window \(\d+%\) · as the next request would send it$/);
		} finally {
			await rpc.close();
		}
	});
});

describe("/context-fold status after Pi's auto-compaction is switched off", () => {
	it("no longer says where Pi compacts", async () => {
		const server = await startModelServer((req) => ({ text: `noted ${req.index}` }));
		const sandbox = await createPiSandbox({ serverUrl: server.url, contextWindow: WINDOW });
		const rpc = await sandbox.startRpc({ extensions: ["."], timeoutMs: WAIT });
		try {
			const nextFold = () => statusLine(rpc, "Next fold");
			await rpc.prompt("Note the plan.", { timeoutMs: WAIT });
			assert.match(String(await nextFold()), /Pi compacts at 15k/);
			await rpc.call({ type: "set_auto_compaction", enabled: false });
			assert.doesNotMatch(String(await nextFold()), /Pi compacts/);
		} finally {
			await rpc.close();
			await server.close();
			await sandbox.cleanup();
		}
	});
});
