/**
 * End-to-end proof of context-fold's continuity features through the real `pi` CLI (issue 4):
 * deterministic compaction (automatic and `/compact` over RPC), recall of compacted blocks after a
 * restart and after a second compaction, `/fold-handoff` over RPC, an in-memory session, and the
 * `CONTEXTFOLD_COMPACT=native` escape hatch.
 *
 * The scripted model reads a planted file (`src/planted/needle.ts`) and runs bash batches of 301
 * lines, each with one planted error line (`Error: planted failure <k>`) among "ok" lines. Every
 * assertion is on the request bodies the scripted server captured, the session file, or the files
 * the extension writes beside it.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { withoutAdvisories } from "./harness/advisories.ts";
import {
	type CapturedRequest,
	isSummarizationRequest,
	type ModelServer,
	messagesOf,
	type Reply,
	type ScriptedToolCall,
	startModelServer,
	toolNamesOf,
	toolResultsOf,
} from "./harness/model-server.ts";
import {
	createPiSandbox,
	type JsonRecord,
	type PiRpc,
	type PiSandbox,
	parseJsonl,
	type RunResult,
	readSessionFile,
} from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const GOTO = join(import.meta.dirname, "fixtures", "goto-extension.ts");
const RUN_TIMEOUT_MS = 60_000;
const PLANTED_PATH = "src/planted/needle.ts";
const PLANTED_SOURCE = 'export const needle = "planted needle";\n';
const OUR_HEADER = "[context-fold deterministic compaction summary]";
const PI_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";
const NATIVE_SUMMARY = "NATIVE SUMMARY written by the scripted model";
const ANY_CODE = /\{#([0-9a-z]{8}) FOLDED\}/;
const TAG_AT_HEAD = /^\{#([0-9a-z]{8}) FOLDED\}/;

/** Bash command printing 300 ok lines with the planted error line after line 150. */
function batchCommand(k: number): string {
	return (
		`for i in $(seq 1 150); do echo "batch ${k} line $i ok"; done; echo "Error: planted failure ${k}"; ` +
		`for i in $(seq 151 300); do echo "batch ${k} line $i ok"; done`
	);
}

/** One scripted tool call, keyed by its call id. */
interface Step {
	id: string;
	call: (req: CapturedRequest) => Omit<ScriptedToolCall, "id">;
}

/** A scripted turn: the steps run in order after the user's prompt, then a final text reply. */
interface Plan {
	steps: Step[];
	final: string;
}

/** The step running batch `k` through the bash tool. */
function bashStep(prefix: string, k: number): Step {
	return { id: `toolu_${prefix}_b${k}`, call: () => ({ name: "bash", args: { command: batchCommand(k) } }) };
}

/** The step reading the planted file with the read tool. */
function readStep(prefix: string): Step {
	return { id: `toolu_${prefix}_read`, call: () => ({ name: "read", args: { path: PLANTED_PATH } }) };
}

/**
 * The scripted model: the next step follows from the last tool call the request carries (a new
 * user prompt starts the plan), so the script does not care how compaction reshaped the history.
 */
function replyFor(plan: Plan, req: CapturedRequest): Reply {
	const messages = messagesOf(req);
	let next = 0;
	if (messages.at(-1)?.role !== "user") {
		const lastCall = messages
			.filter((m) => m.role === "assistant" && m.toolCalls?.length)
			.at(-1)
			?.toolCalls?.at(-1);
		const at = plan.steps.findIndex((s) => s.id === lastCall?.id);
		if (at < 0) throw new Error(`script: request ${req.index} follows an unknown call ${lastCall?.id}`);
		next = at + 1;
	}
	const step = plan.steps[next];
	if (!step) return { text: plan.final };
	return { toolCalls: [{ ...step.call(req), id: step.id }] };
}

/** A server whose replies follow `holder.plan`, swapped by the tests between phases; Pi's summaries say `holder.summary`. */
async function planServer(holder: { plan: Plan; summary?: string }): Promise<ModelServer> {
	return startModelServer((req) => {
		if (isSummarizationRequest(req)) return { text: holder.summary ?? NATIVE_SUMMARY };
		if (req.index > 80) return { text: "guard: too many requests" };
		return replyFor(holder.plan, req);
	});
}

/** A sandbox (16k window) whose cwd holds the planted file. */
async function sandboxWithNeedle(server: ModelServer, settings: Record<string, unknown>): Promise<PiSandbox> {
	const sandbox = await createPiSandbox({ serverUrl: server.url, contextWindow: WINDOW, settings });
	await mkdir(join(sandbox.cwd, "src/planted"), { recursive: true });
	await writeFile(join(sandbox.cwd, PLANTED_PATH), PLANTED_SOURCE);
	return sandbox;
}

/** Session files directly in the session dir (the extension's own `.jsonl` files live below it). */
async function sessionFilesIn(dir: string): Promise<string[]> {
	if (!existsSync(dir)) return [];
	const names = await readdir(dir, { withFileTypes: true });
	return names.filter((e) => e.isFile() && e.name.endsWith(".jsonl")).map((e) => join(dir, e.name));
}

/** Every path under `root` whose last component is `name`. */
async function findNamed(root: string, name: string): Promise<string[]> {
	const found: string[] = [];
	const walk = async (dir: string): Promise<void> => {
		for (const entry of await readdir(dir, { withFileTypes: true })) {
			const path = join(dir, entry.name);
			if (entry.name === name) found.push(path);
			if (entry.isDirectory()) await walk(path);
		}
	};
	await walk(root);
	return found;
}

interface CompactionEntry extends JsonRecord {
	id: string;
	summary: string;
	fromHook?: boolean;
	firstKeptEntryId: string;
	details?: { contextFold?: { codes?: string[] } };
}

/** The compaction entries of a session file, in order. */
function compactionsOf(entries: readonly JsonRecord[]): CompactionEntry[] {
	return entries.filter((e) => e.type === "compaction") as CompactionEntry[];
}

/** The code on the first summary line containing `needle`. */
function codeOnLine(summary: string, needle: string): string {
	const line = summary.split("\n").find((l) => l.includes(needle));
	assert.ok(line, `no summary line contains ${JSON.stringify(needle)}:\n${summary}`);
	const code = ANY_CODE.exec(line)?.[1];
	assert.ok(code, `the summary line ${JSON.stringify(line)} carries no fold code`);
	return code;
}

/** Runs a command over RPC and returns the text of its notification, the first holding `marker`. */
async function commandNotice(rpc: PiRpc, command: string, marker: string): Promise<string> {
	const from = rpc.records.length;
	await rpc.send({ type: "prompt", message: command });
	const note = (await rpc.waitFor(
		(r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).includes(marker),
		{ from, timeoutMs: RUN_TIMEOUT_MS },
	)) as JsonRecord;
	return String(note.message);
}

/** The compaction summary a request carries (Pi sends it as a user-role message), if any. */
function summaryIn(req: CapturedRequest): string | undefined {
	return messagesOf(req).find((m) => m.role === "user" && m.text.startsWith(PI_SUMMARY_PREFIX))?.text;
}

/** The text of the tool result answering `callId` in the first request that carries it. */
function resultOf(requests: readonly CapturedRequest[], callId: string): { text: string; req: CapturedRequest } {
	for (const req of requests) {
		const hit = toolResultsOf(req).find((r) => r.toolCallId === callId);
		if (hit) return { text: hit.text, req };
	}
	assert.fail(`no request carries the result of ${callId}`);
}

/** Fails if any of `requests` was one of Pi's summarization requests. */
function assertNoSummarization(requests: readonly CapturedRequest[]): void {
	const bad = requests.filter((r) => isSummarizationRequest(r)).map((r) => r.index);
	assert.deepEqual(bad, [], `summarization requests reached the model server: ${bad}`);
}

/** A summary that is ours, holds the planted path and the planted error lines verbatim on their own lines. */
function assertOurSummary(summary: string, errorBatches: readonly number[]): void {
	assert.ok(summary.startsWith(OUR_HEADER), `not a context-fold summary:\n${summary.slice(0, 400)}`);
	const lines = summary.split("\n");
	assert.ok(
		lines.some((l) => l.startsWith(`- ${PLANTED_PATH} (`)),
		`the planted path is not listed verbatim:\n${summary}`,
	);
	for (const k of errorBatches) {
		assert.ok(
			lines.some((l) => l.endsWith(`bash: Error: planted failure ${k}`)),
			`the planted error line of batch ${k} is not in the summary verbatim:\n${summary}`,
		);
	}
	assert.ok(!summary.includes(" line 77 ok"), "the summary carries ok lines of the outputs");
}

/** A recall result: served sha-verified from the session file, holding each of `wanted` as a whole line. */
function assertRecalled(text: string, code: string, wanted: readonly string[]): void {
	// The header's wording may change; what matters is the code, the whole block's size and the verification.
	const head = text.split("\n")[0];
	assert.ok(
		head.includes(`#${code}`) && head.includes("301 lines") && head.includes("(sha256 verified)"),
		`recall did not serve ${code} sha-verified:\n${text.slice(0, 400)}`,
	);
	assert.doesNotMatch(head, /Warning|unverified|live history/, head);
	for (const line of wanted) {
		assert.ok(text.split("\n").includes(line), `recall result lacks ${JSON.stringify(line)}:\n${text}`);
	}
}

/** Answers an extension UI dialog over RPC. */
function answerUi(rpc: PiRpc, id: unknown, answer: Record<string, unknown>): void {
	rpc.proc.stdin?.write(`${JSON.stringify({ type: "extension_ui_response", id, ...answer })}\n`);
}

/** Runs an extension command over RPC, answering its confirm dialog with `confirmed`. */
async function commandWithConfirm(rpc: PiRpc, message: string, confirmed: boolean): Promise<JsonRecord[]> {
	const from = rpc.records.length;
	const sent = rpc.send({ type: "prompt", message });
	const dialog = await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "confirm", { from });
	answerUi(rpc, dialog.id, { confirmed });
	const response = await sent;
	assert.equal(response.success, true, JSON.stringify(response));
	assert.equal((response.data as { disposition?: string }).disposition, "handled");
	return rpc.records.slice(from);
}

describe("deterministic compaction through pi -p: threshold, restart, second compaction", () => {
	const holder: { plan: Plan } = { plan: { steps: [], final: "" } };
	let server: ModelServer;
	let sandbox: PiSandbox;
	let sessionFile: string;
	let firstSummary: string;
	let headlessSeed: string | undefined;

	before(async () => {
		server = await planServer(holder);
		// Threshold = 16000 - 10000 = 6000 tokens: reached after the third batch (the fold threshold,
		// 45% = 7200, is not), so Pi's own threshold compaction is what trims the context.
		sandbox = await sandboxWithNeedle(server, { compaction: { reserveTokens: 10_000, keepRecentTokens: 2_000 } });
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("auto-compaction during a pi -p run: fromHook entry, no summarization request, planted path and error verbatim", async () => {
		holder.plan = {
			steps: [readStep("auto"), ...[1, 2, 3, 4].map((k) => bashStep("auto", k))],
			final: "Batches done.",
		};
		const run: RunResult = await sandbox.runPrint({
			prompt: "Read the needle, then run batches 1 to 4.",
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "Batches done.", run.stderr);
		assert.deepEqual(server.errors, []);
		assert.doesNotMatch(withoutAdvisories(run.stderr), /context-fold: /, run.stderr);
		assertNoSummarization(server.requests);

		const files = await sessionFilesIn(sandbox.sessionDir);
		assert.equal(files.length, 1, `session files: ${files}`);
		sessionFile = files[0];
		const entries = await readSessionFile(sessionFile);
		const compactions = compactionsOf(entries);
		assert.ok(compactions.length >= 1, "no compaction entry: the threshold never triggered");
		for (const c of compactions) assert.equal(c.fromHook, true, `compaction ${c.id} was not ours`);
		firstSummary = compactions[0].summary;
		assertOurSummary(firstSummary, [1, 2]);
		const code2 = codeOnLine(firstSummary, "Error: planted failure 2");
		assert.ok(compactions[0].details?.contextFold?.codes?.includes(code2), "details do not list the batch 2 code");
		// Batch 2 was never folded by a fold event: it got its fold record when it left live history.
		const recordsAt = entries.findIndex(
			(e) =>
				e.type === "custom" &&
				e.customType === "contextfold.fold" &&
				(e.data as { kind?: string; records?: { code?: string; sha256?: string }[] }).kind === "records" &&
				(e.data as { records: { code?: string; sha256?: string }[] }).records.some(
					(r) => r.code === code2 && /^[0-9a-f]{64}$/.test(r.sha256 ?? ""),
				),
		);
		assert.ok(recordsAt >= 0, `no records entry gives batch 2 (${code2}) a fold record with a sha256`);
		assert.ok(recordsAt < entries.indexOf(compactions[0]), "the fold record comes after the compaction");

		// Later requests carry the summary as a user-role message instead of the compacted blocks.
		const later = server.requests.filter((r) => summaryIn(r) !== undefined);
		assert.ok(later.length > 0, "no request carried the compaction summary");
		for (const req of later) {
			assert.ok(summaryIn(req)?.includes(OUR_HEADER));
			assert.ok(!req.raw.includes("batch 2 line 77 ok"), `request ${req.index} still carries batch 2`);
		}

		// The seed index beside the session holds a compaction record.
		const header = entries[0] as { id?: string };
		const index = join(sandbox.sessionDir, "context-fold", String(header.id), "seed-index.jsonl");
		const records = parseJsonl(await readFile(index, "utf8"));
		assert.ok(
			records.some((r) => r.kind === "compaction"),
			`no compaction record in ${index}`,
		);
	});

	it("pi restarted on the compacted session serves a summary code through recall_folded, sha-verified", async () => {
		assert.ok(sessionFile, "the auto-compaction test did not run");
		const from = server.requests.length;
		let parsed: string | undefined;
		holder.plan = {
			steps: [
				{
					id: "toolu_resume_recall",
					call: (req) => {
						const summary = summaryIn(req);
						if (!summary) throw new Error(`request ${req.index} carries no compaction summary`);
						parsed = codeOnLine(summary, "Error: planted failure 2");
						return { name: "recall_folded", args: { codes: [parsed], grep: "batch 2 line 77 ok" } };
					},
				},
			],
			final: "Recalled batch 2.",
		};
		const run = await sandbox.runPrint({
			prompt: "Show me the ok lines around line 77 of batch 2.",
			session: sessionFile,
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "Recalled batch 2.", run.stderr);
		assert.deepEqual(server.errors, []);
		const requests = server.requests.slice(from);
		assertNoSummarization(requests);
		assert.equal(requests.length, 2);

		// The code came from the summary the model was sent, and the block is no longer live.
		assert.equal(parsed, codeOnLine(firstSummary, "Error: planted failure 2"));
		assert.ok(!requests[0].raw.includes("batch 2 line 77 ok"), "batch 2 is still in live history");
		const { text, req } = resultOf(requests, "toolu_resume_recall");
		assert.equal(req.index, requests[1].index);
		assertRecalled(text, parsed as string, [
			"75- batch 2 line 75 ok",
			"77: batch 2 line 77 ok",
			"79- batch 2 line 79 ok",
		]);
		assert.match(text, /\n1 matching line:\n/);
		assert.deepEqual(await sessionFilesIn(sandbox.sessionDir), [sessionFile]);
	});

	it("after a second compaction, a code from the first compaction still resolves", async () => {
		assert.ok(firstSummary, "the auto-compaction test did not run");
		const code1 = codeOnLine(firstSummary, "Error: planted failure 1");
		const before = compactionsOf(await readSessionFile(sessionFile)).length;
		const from = server.requests.length;
		holder.plan = {
			steps: [
				...[5, 6, 7, 8].map((k) => bashStep("second", k)),
				{
					id: "toolu_second_recall",
					call: () => ({ name: "recall_folded", args: { codes: [code1], lines: "149-152" } }),
				},
			],
			final: "Second round done.",
		};
		const run = await sandbox.runPrint({
			prompt: "Run batches 5 to 8, then look at batch 1 again.",
			session: sessionFile,
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "Second round done.", run.stderr);
		assert.deepEqual(server.errors, []);
		assert.doesNotMatch(withoutAdvisories(run.stderr), /context-fold: /, run.stderr);
		const requests = server.requests.slice(from);
		assertNoSummarization(requests);

		const entries = await readSessionFile(sessionFile);
		const compactions = compactionsOf(entries);
		assert.ok(compactions.length > before, `no new compaction (${compactions.length} entries, ${before} before)`);
		for (const c of compactions) assert.equal(c.fromHook, true, `compaction ${c.id} was not ours`);
		// The recall was made after a new compaction (Pi may compact once more after the final reply).
		const recallAt = entries.findIndex(
			(e) =>
				e.type === "message" &&
				JSON.stringify((e.message as { content?: unknown }).content ?? "").includes("toolu_second_recall"),
		);
		const latest = compactions.filter((c) => entries.indexOf(c) < recallAt).at(-1) as CompactionEntry;
		assert.ok(
			latest && compactions.indexOf(latest) >= before,
			"the recall call does not come after a new compaction",
		);
		assertOurSummary(latest.summary, [1, 2, 5]);

		const { text, req } = resultOf(requests, "toolu_second_recall");
		const asked = requests[requests.indexOf(req) - 1];
		assert.ok(asked && !asked.raw.includes("batch 1 line 149 ok"), "batch 1 is still in live history");
		assertRecalled(text, code1, [
			"149: batch 1 line 149 ok",
			"150: batch 1 line 150 ok",
			"151: Error: planted failure 1",
			"152: batch 1 line 151 ok",
		]);
	});

	it("headless /fold-handoff (pi -p) writes the seed, prints its path and calls no model", async () => {
		assert.ok(sessionFile, "the auto-compaction test did not run");
		const from = server.requests.length;
		const run = await sandbox.runPrint({
			prompt: "/fold-handoff headless goal",
			session: sessionFile,
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		assert.equal(run.code, 0, run.stderr);
		assert.equal(server.requests.length, from, "the handoff command reached the model");
		// Pi's print mode takes stdout over and routes extension writes to stderr; the path is printed there.
		const header = (await readSessionFile(sessionFile))[0] as { id?: string };
		const dir = join(sandbox.sessionDir, "context-fold", String(header.id));
		const path = run.stderr.split("\n").find((l) => l.startsWith(`${dir}/handoff-`) && l.endsWith(".md"));
		assert.ok(path, `the seed path was not printed:\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`);
		const text = await readFile(path, "utf8");
		assert.ok(text.includes("Goal: headless goal\n"), text);
		assert.ok(text.includes(`Parent session: ${sessionFile}\n`), text);
		assert.ok(text.includes(`- ${PLANTED_PATH} (`), text);
		for (const k of [1, 2, 5])
			assert.ok(text.includes(`bash: Error: planted failure ${k}\n`), `batch ${k}:\n${text}`);
		headlessSeed = text;
	});

	it("headless, a command that fails makes pi exit 1, so a script reads no path off its last line", async () => {
		// A new session (no -c): nothing to hand off. Then a subcommand that does not exist.
		for (const prompt of ["/fold-handoff goal", "/context-fold frobnicate"]) {
			const run = await sandbox.runPrint({ prompt, extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
			assert.equal(run.code, 1, `${prompt}: ${run.stderr}`);
			assert.match(run.stderr, /context-fold: (nothing to hand off yet|unknown subcommand)/);
		}
		const status = await sandbox.runPrint({
			prompt: "/context-fold status",
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		assert.equal(status.code, 0, status.stderr);
	});

	it('a seed passed as a prompt (pi -p "$(cat seed)") reads its codes from the parent it names, from its first request', async () => {
		assert.ok(headlessSeed, "the headless /fold-handoff test did not run");
		const code = codeOnLine(headlessSeed, "Error: planted failure 2");
		holder.plan = {
			steps: [{ id: "toolu_pasted_recall", call: () => ({ name: "recall_folded", args: { codes: [code] } }) }],
			final: "Pasted seed read.",
		};
		const from = server.requests.length;
		const parentBefore = await readFile(sessionFile, "utf8");
		// A new session beside the parent, opened by the seed's text alone (no seed message, no parent link).
		const run = await sandbox.runPrint({ prompt: headlessSeed, extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "Pasted seed read.", run.stderr);
		const requests = server.requests.slice(from);
		assert.ok(toolNamesOf(requests[0]).includes("recall_folded"), "the first request does not declare recall_folded");
		const { text } = resultOf(requests, "toolu_pasted_recall");
		const head = text.split("\n")[0];
		assert.ok(
			head.includes(`#${code}`) && head.includes(`from the parent session ${sessionFile}, sha256 verified`),
			head,
		);
		assert.ok(text.split("\n").includes("Error: planted failure 2"), text);
		assert.equal(await readFile(sessionFile, "utf8"), parentBefore, "the parent session file was written");
	});
});

describe("/compact and /fold-handoff over RPC", () => {
	const holder: { plan: Plan } = { plan: { steps: [], final: "" } };
	let server: ModelServer;
	let sandbox: PiSandbox;
	let rpc: PiRpc;
	let sessionFile: string;
	let sessionId: string;
	let childSeed: string | undefined;

	before(async () => {
		server = await planServer(holder);
		// Default reserve (window / 4): no automatic compaction; a small keepRecentTokens so /compact
		// has something to summarize.
		sandbox = await sandboxWithNeedle(server, { compaction: { keepRecentTokens: 1_000 } });
		rpc = await sandbox.startRpc({ extensions: [".", GOTO], timeoutMs: RUN_TIMEOUT_MS });
	});
	after(async () => {
		if (rpc) {
			const exit = await rpc.close();
			assert.equal(exit.code, 0, rpc.stderr());
		}
		await server?.close();
		await sandbox?.cleanup();
	});

	it("/compact: a fromHook compaction entry, no summarization request, planted path and error verbatim", async () => {
		holder.plan = {
			steps: [readStep("rpc"), ...[1, 2, 3].map((k) => bashStep("rpc", k))],
			final: "RPC batches done.",
		};
		await rpc.prompt("Read the needle, then run batches 1 to 3.");
		const state = await rpc.call<{ sessionFile: string; sessionId: string }>({ type: "get_state" });
		sessionFile = state.sessionFile;
		sessionId = state.sessionId;
		assert.equal(compactionsOf(await readSessionFile(sessionFile)).length, 0, "compacted before /compact");

		const compacted = await rpc.call<{ summary: string }>({ type: "compact" });
		assertNoSummarization(server.requests);
		assert.deepEqual(server.errors, []);
		const compactions = compactionsOf(await readSessionFile(sessionFile));
		assert.equal(compactions.length, 1);
		assert.equal(compactions[0].fromHook, true);
		assert.equal(compactions[0].summary, compacted.summary);
		assertOurSummary(compactions[0].summary, [1, 2]);
		assert.doesNotMatch(withoutAdvisories(rpc.stderr()), /context-fold: /, rpc.stderr());

		// Until the next request, the status shows the compacted context, not the request before it.
		const requests = server.requests.length;
		const status = await commandNotice(rpc, "/context-fold status", "Context ");
		assert.match(status, /· as the next request would send it\n/);
		assert.match(status, / C summary \d/);
		assert.equal(server.requests.length, requests, "the status reached the model");

		// One more small step after the compaction: its result stays raw, the handoffs' tail.
		holder.plan = {
			steps: [
				{
					id: "toolu_rpc_tail",
					call: () => ({ name: "bash", args: { command: 'echo "Error: planted tail failure"' } }),
				},
			],
			final: "Tail checked.",
		};
		await rpc.prompt("Check the tail.");
	});

	it("/fold-handoff declined: the seed is written beside the session, the session stays", async () => {
		assert.ok(sessionFile, "the /compact test did not run");
		const before = await readFile(sessionFile, "utf8");
		const events = await commandWithConfirm(rpc, "/fold-handoff my goal", false);
		assert.equal(await readFile(sessionFile, "utf8"), before, "the handoff wrote to the session");
		const dir = join(sandbox.sessionDir, "context-fold", sessionId);
		const seeds = (await readdir(dir)).filter((n) => /^handoff-.*\.md$/.test(n));
		assert.equal(seeds.length, 1, `handoff files: ${seeds}`);
		const path = join(dir, seeds[0]);
		const text = await readFile(path, "utf8");
		assert.ok(text.includes("Goal: my goal\n"), text);
		assert.ok(text.includes(`Parent session: ${sessionFile}\n`), text);
		assert.ok(text.includes(`- ${PLANTED_PATH} (`), text);
		assert.ok(text.includes("bash: Error: planted failure 2\n"), text);
		assert.ok(
			events.some((e) => e.method === "notify" && String(e.message).includes(path)),
			"no notification named the seed file",
		);
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		assert.equal(state.sessionFile, sessionFile, "declining still switched sessions");
	});

	it("/fold-handoff accepted: a new session starts with the seed as its first entry and sends it", async () => {
		assert.ok(sessionFile, "the /compact test did not run");
		await commandWithConfirm(rpc, "/fold-handoff second goal", true);
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		assert.notEqual(state.sessionFile, sessionFile, "accepting did not start a new session");

		const dir = join(sandbox.sessionDir, "context-fold", sessionId);
		const seeds = (await readdir(dir)).filter((n) => /^handoff-.*\.md$/.test(n)).sort();
		assert.equal(seeds.length, 2, `handoff files: ${seeds}`);
		const texts = await Promise.all(seeds.map((n) => readFile(join(dir, n), "utf8")));
		const seed = texts.find((t) => t.includes("Goal: second goal\n"));
		assert.ok(seed, "no seed holds the second goal");

		const { entries } = await rpc.call<{ entries: JsonRecord[] }>({ type: "get_entries" });
		const content = entries.filter((e) => e.type !== "model_change" && e.type !== "thinking_level_change");
		assert.equal(content[0]?.type, "custom_message", JSON.stringify(content[0]).slice(0, 300));
		assert.equal(content[0].customType, "contextfold.handoff");
		assert.equal(content[0].content, seed);

		holder.plan = { steps: [], final: "Seeded session answers." };
		const from = server.requests.length;
		await rpc.prompt("Carry on from the seed.");
		const first = server.requests[from];
		assert.ok(first, "the new session sent no request");
		const users = messagesOf(first).filter((m) => m.role === "user");
		assert.equal(users[0]?.text, seed, "the first request of the new session does not open with the seed");
		assert.equal(users.at(-1)?.text, "Carry on from the seed.");
		const header = (await readSessionFile(state.sessionFile))[0];
		assert.equal(header.parentSession, sessionFile);
		childSeed = seed;
	});

	it("in the seeded session, a parent code recalls read-only from the parent file, sha-verified; unfold refuses it", async () => {
		assert.ok(childSeed, "the accepted handoff test did not run");
		const code = codeOnLine(childSeed, "Error: planted failure 2");
		holder.plan = {
			steps: [
				{ id: "toolu_child_recall", call: () => ({ name: "recall_folded", args: { codes: [code] } }) },
				{ id: "toolu_child_unfold", call: () => ({ name: "unfold", args: { codes: [code] } }) },
			],
			final: "Parent block read.",
		};
		const parentBefore = await readFile(sessionFile, "utf8");
		await rpc.prompt("Read the parent's failing batch.");
		const recalled = resultOf(server.requests, "toolu_child_recall").text;
		const head = recalled.split("\n")[0];
		assert.ok(head.includes(`#${code}`) && head.includes("301 lines"), head);
		assert.ok(head.includes(`from the parent session ${sessionFile}, sha256 verified`), head);
		assert.ok(recalled.split("\n").includes("Error: planted failure 2"), recalled);
		const unfolded = resultOf(server.requests, "toolu_child_unfold").text;
		assert.match(unfolded, /belongs to the parent session .* cannot be unfolded here, recall_folded reads it/);
		assert.equal(await readFile(sessionFile, "utf8"), parentBefore, "the parent session file was written");
	});

	it("in the seeded session, the parent's raw tail has codes too, and a search reaches the parent's branch", async () => {
		assert.ok(childSeed, "the accepted handoff test did not run");
		// The tail step's result was raw in the parent's context at the handoff: the seed cites it by its own code.
		const code = codeOnLine(childSeed, "Error: planted tail failure");
		// Turns count from the session's first message, the compacted ones included: the tail is turn 2.
		const line = childSeed.split("\n").find((l) => l.includes("Error: planted tail failure"));
		assert.match(line ?? "", /^- \[turn 2\] /, line);
		holder.plan = {
			steps: [
				{ id: "toolu_child_tail", call: () => ({ name: "recall_folded", args: { codes: [code] } }) },
				{
					id: "toolu_child_search",
					call: () => ({ name: "recall_folded", args: { search: "batch 1 line 77 ok" } }),
				},
				{
					id: "toolu_child_search_tail",
					call: () => ({ name: "recall_folded", args: { search: "planted tail" } }),
				},
			],
			final: "Parent searched.",
		};
		await rpc.prompt("Read the parent's tail, then find line 77 of batch 1 and the tail failure.");
		const tail = resultOf(server.requests, "toolu_child_tail").text;
		// Never folded in the parent: checked against the sha256 the handoff took, which the seed message carries.
		assert.ok(tail.split("\n")[0].includes(`from the parent session ${sessionFile}, sha256 verified`), tail);
		assert.ok(tail.split("\n").includes("Error: planted tail failure"), tail);
		const found = resultOf(server.requests, "toolu_child_search").text;
		assert.match(found, /^1 block contains "batch 1 line 77 ok"/, found);
		assert.match(found, /from the parent session .*, sha256 verified/, found);
		const tailFound = resultOf(server.requests, "toolu_child_search_tail").text;
		// The call's arguments and its result, both raw in the parent at the handoff.
		assert.match(tailFound, /^2 blocks contain "planted tail"/, tailFound);
		assert.match(tailFound, /^1: Error: planted tail failure$/m, tailFound);
		// The user's own search names what a parent block was and where it came from.
		const heads = await commandNotice(rpc, "/context-fold search planted tail failure", "contain");
		assert.match(heads, /bash: echo "Error: planted tail failure".*\(from the parent session\)/, heads);
	});

	it("after the parent goes on from an earlier entry (/tree), its codes still recall in the seeded session", async () => {
		assert.ok(childSeed, "the accepted handoff test did not run");
		const code = codeOnLine(childSeed, "Error: planted failure 2");
		const child = (await rpc.call<{ sessionFile: string }>({ type: "get_state" })).sessionFile;
		await rpc.call({ type: "switch_session", sessionPath: sessionFile });
		const first = (await readSessionFile(sessionFile)).find((e) => e.type === "message") as { id: string };
		holder.plan = { steps: [], final: "A side answer." };
		await rpc.prompt(`/goto ${first.id}`);
		await rpc.prompt("A side question.");
		const last = (await readSessionFile(sessionFile)).at(-1) as { parentId?: string; type?: string };
		assert.equal(last.type, "message", "the parent's last entry is the side branch's reply");
		await rpc.call({ type: "switch_session", sessionPath: child });
		holder.plan = {
			steps: [{ id: "toolu_child_recall_2", call: () => ({ name: "recall_folded", args: { codes: [code] } }) }],
			final: "Parent block read again.",
		};
		await rpc.prompt("Read the parent's failing batch again.");
		const head = resultOf(server.requests, "toolu_child_recall_2").text.split("\n")[0];
		assert.ok(head.includes(`from the parent session ${sessionFile}, sha256 verified`), head);
		// The handed-on tail is off the parent's latest branch now: a search still finds it (the seed cites it).
		holder.plan = {
			steps: [
				{ id: "toolu_child_search_2", call: () => ({ name: "recall_folded", args: { search: "planted tail" } }) },
			],
			final: "Parent searched again.",
		};
		await rpc.prompt("Find the tail failure again.");
		const found = resultOf(server.requests, "toolu_child_search_2").text;
		assert.match(found, /^1: Error: planted tail failure$/m, found);
	});

	it("a fork of the seeded session reads the seed's codes from the parent the seed names", async () => {
		assert.ok(childSeed, "the accepted handoff test did not run");
		const code = codeOnLine(childSeed, "Error: planted tail failure");
		const { entries } = await rpc.call<{ entries: JsonRecord[] }>({ type: "get_entries" });
		const child = (await rpc.call<{ sessionFile: string }>({ type: "get_state" })).sessionFile;
		const prompt = entries.find((e) => e.type === "message" && (e.message as JsonRecord).role === "user");
		assert.ok(prompt, "the seeded session has no user message");
		// Pi names the seeded session, not the seed's parent, in the fork's header.
		await rpc.call({ type: "fork", entryId: prompt.id });
		holder.plan = {
			steps: [{ id: "toolu_fork_recall", call: () => ({ name: "recall_folded", args: { codes: [code] } }) }],
			final: "Read from the fork.",
		};
		await rpc.prompt("Read the parent's tail from the fork.");
		const forked = (await rpc.call<{ sessionFile: string }>({ type: "get_state" })).sessionFile;
		assert.notEqual(forked, child, "no fork was made");
		assert.equal((await readSessionFile(forked))[0].parentSession, child);
		const head = resultOf(server.requests, "toolu_fork_recall").text.split("\n")[0];
		assert.ok(head.includes(`from the parent session ${sessionFile}, sha256 verified`), head);
	});
});

describe("an in-memory session (--no-session)", () => {
	const holder: { plan: Plan } = { plan: { steps: [], final: "" } };
	let server: ModelServer;
	let sandbox: PiSandbox;

	before(async () => {
		server = await planServer(holder);
		// Default fold thresholds (45% of 16000); compaction only on /compact.
		sandbox = await sandboxWithNeedle(server, { compaction: { reserveTokens: 1_000, keepRecentTokens: 1_000 } });
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("folds, compacts and recalls without writing a session file or a context-fold directory", async () => {
		const rpc = await sandbox.startRpc({ extensions: ["."], noSession: true, timeoutMs: RUN_TIMEOUT_MS });
		try {
			let folded: { code: string; k: number } | undefined;
			holder.plan = {
				steps: [
					readStep("mem"),
					...[1, 2, 3, 4, 5, 6].map((k) => bashStep("mem", k)),
					{
						id: "toolu_mem_recall_fold",
						call: (req) => {
							for (const r of toolResultsOf(req)) {
								const code = TAG_AT_HEAD.exec(r.text)?.[1];
								const k = /^toolu_mem_b(\d)$/.exec(r.toolCallId)?.[1];
								if (code && k) {
									folded = { code, k: Number(k) };
									break;
								}
							}
							if (!folded) throw new Error(`request ${req.index}: no batch went out folded`);
							return {
								name: "recall_folded",
								args: { codes: [folded.code], grep: `batch ${folded.k} line 42 ok` },
							};
						},
					},
				],
				final: "Memory batches done.",
			};
			await rpc.prompt("Read the needle, then run batches 1 to 6 and look back at a folded one.");
			assert.deepEqual(server.errors, []);
			assert.ok(folded, "no fold happened");
			assertRecalled(resultOf(server.requests, "toolu_mem_recall_fold").text, folded.code, [
				`42: batch ${folded.k} line 42 ok`,
			]);

			const compacted = await rpc.call<{ summary: string }>({ type: "compact" });
			assertOurSummary(compacted.summary, [1, 2]);
			const code3 = codeOnLine(compacted.summary, "Error: planted failure 3");
			holder.plan = {
				steps: [
					{
						id: "toolu_mem_recall_summary",
						call: (req) => {
							const summary = summaryIn(req);
							if (!summary) throw new Error(`request ${req.index} carries no compaction summary`);
							const code = codeOnLine(summary, "Error: planted failure 3");
							return { name: "recall_folded", args: { codes: [code], grep: "batch 3 line 200 ok" } };
						},
					},
				],
				final: "Memory recall done.",
			};
			const from = server.requests.length;
			await rpc.prompt("What was around line 200 of batch 3?");
			const requests = server.requests.slice(from);
			assert.ok(!requests[0].raw.includes("batch 3 line 200 ok"), "batch 3 is still in live history");
			assertRecalled(resultOf(requests, "toolu_mem_recall_summary").text, code3, ["201: batch 3 line 200 ok"]);
			assertNoSummarization(server.requests);
			assert.deepEqual(server.errors, []);
			assert.doesNotMatch(withoutAdvisories(rpc.stderr()), /context-fold: /, rpc.stderr());
		} finally {
			const exit = await rpc.close();
			assert.equal(exit.code, 0, rpc.stderr());
		}
		assert.deepEqual(await sessionFilesIn(sandbox.sessionDir), []);
		assert.deepEqual(await findNamed(sandbox.root, "context-fold"), []);
	});
});

describe("CONTEXTFOLD_COMPACT=native", () => {
	const holder: { plan: Plan; summary?: string } = { plan: { steps: [], final: "" } };
	let server: ModelServer;
	let sandbox: PiSandbox;

	before(async () => {
		server = await planServer(holder);
		sandbox = await sandboxWithNeedle(server, { compaction: { keepRecentTokens: 1_000 } });
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("leaves /compact to Pi: a summarization request reaches the model and its text becomes the summary", async () => {
		const rpc = await sandbox.startRpc({
			extensions: ["."],
			env: { CONTEXTFOLD_COMPACT: "native" },
			timeoutMs: RUN_TIMEOUT_MS,
		});
		let sessionFile: string;
		let sessionId: string;
		try {
			holder.plan = {
				steps: [readStep("native"), ...[1, 2, 3].map((k) => bashStep("native", k))],
				final: "Native batches done.",
			};
			await rpc.prompt("Read the needle, then run batches 1 to 3.");
			const state = await rpc.call<{ sessionFile: string; sessionId: string }>({ type: "get_state" });
			sessionFile = state.sessionFile;
			sessionId = state.sessionId;
			const before = server.requests.length;
			const compacted = await rpc.call<{ summary: string }>({ type: "compact" });
			const summarizing = server.requests.slice(before).filter((r) => isSummarizationRequest(r));
			assert.equal(summarizing.length, 1, "Pi's own compaction did not ask the model");
			assert.ok(compacted.summary.includes(NATIVE_SUMMARY), compacted.summary);
			assert.ok(!compacted.summary.startsWith(OUR_HEADER));
			// What Pi's summary replaced is recorded all the same: the model's search still finds it.
			holder.plan = {
				steps: [
					{
						id: "toolu_native_search",
						call: () => ({ name: "recall_folded", args: { search: "planted failure 1" } }),
					},
				],
				final: "Searched.",
			};
			await rpc.prompt("Search what the compaction removed.");
			const found = resultOf(server.requests, "toolu_native_search").text;
			assert.match(found, /^2 blocks contain "planted failure 1"/, found.slice(0, 300));
			assert.match(found, /Recalled #[0-9a-z]{8}: bash, 301 lines \(sha256 verified\)/);
			assert.match(found, /\n151: Error: planted failure 1\n/);
		} finally {
			const exit = await rpc.close();
			assert.equal(exit.code, 0, rpc.stderr());
		}
		const compactions = compactionsOf(await readSessionFile(sessionFile));
		assert.equal(compactions.length, 1);
		assert.notEqual(compactions[0].fromHook, true);
		assert.ok(compactions[0].summary.includes(NATIVE_SUMMARY));
		const index = join(sandbox.sessionDir, "context-fold", sessionId, "seed-index.jsonl");
		const records = existsSync(index) ? parseJsonl(await readFile(index, "utf8")) : [];
		assert.ok(!records.some((r) => r.kind === "compaction"), "the hook wrote a compaction record in native mode");
	});

	it("a long summary Pi wrote, carried cut by context-fold's next compaction, reads back whole by the code it names", async () => {
		const facts = Array.from({ length: 120 }, (_, i) => `- model fact ${i}: the parser keeps rule ${i}`);
		holder.summary = `${NATIVE_SUMMARY}\n${facts.join("\n")}\n- NATIVE-FACT-OMEGA ends it`;
		let sessionFile: string;
		const native = await sandbox.startRpc({
			extensions: ["."],
			env: { CONTEXTFOLD_COMPACT: "native" },
			timeoutMs: RUN_TIMEOUT_MS,
		});
		try {
			holder.plan = { steps: [1, 2, 3].map((k) => bashStep("long", k)), final: "Long batches done." };
			await native.prompt("Run batches 1 to 3.");
			sessionFile = (await native.call<{ sessionFile: string }>({ type: "get_state" })).sessionFile;
			await native.call({ type: "compact" });
		} finally {
			await native.close();
		}
		const rpc = await sandbox.startRpc({ extensions: ["."], session: sessionFile, timeoutMs: RUN_TIMEOUT_MS });
		try {
			holder.plan = { steps: [4, 5].map((k) => bashStep("long", k)), final: "More batches done." };
			await rpc.prompt("Run batches 4 and 5.");
			const ours = await rpc.call<{ summary: string }>({ type: "compact" });
			assert.ok(ours.summary.startsWith(OUR_HEADER), ours.summary.slice(0, 200));
			assert.ok(!ours.summary.includes("NATIVE-FACT-OMEGA"), "Pi's summary fit: the test proves nothing");
			const code = /… Pi's summary is cut here; recall_folded codes=\["([0-9a-z]{8})"\] reads it whole/.exec(
				ours.summary,
			)?.[1];
			assert.ok(code, ours.summary.slice(-500));
			holder.plan = {
				steps: [{ id: "toolu_native_whole", call: () => ({ name: "recall_folded", args: { codes: [code] } }) }],
				final: "Read Pi's summary.",
			};
			await rpc.prompt("Read Pi's summary whole.");
			const whole = resultOf(server.requests, "toolu_native_whole").text;
			assert.match(whole.split("\n")[0], /sha256 verified/, whole.split("\n")[0]);
			assert.ok(whole.includes("- NATIVE-FACT-OMEGA ends it"), whole.slice(-300));
		} finally {
			holder.summary = undefined;
			await rpc.close();
		}
	});
});
