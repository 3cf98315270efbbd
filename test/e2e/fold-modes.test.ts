/**
 * context-fold in Pi's machine-readable modes (issue 3, "works with any provider and mode"):
 * - `pi --mode json`: a run that folds exits on its own with code 0, every stdout line is a JSON
 *   record (the extension's own messages, forced on with CONTEXTFOLD_DEBUG=1, go to stderr only),
 *   later requests carry `{#code FOLDED}` digests, and recall_folded reads a folded block back;
 * - `pi --mode rpc`: the same script folds; `get_state` and `get_session_stats` answer while a
 *   folded turn is in flight and after it, a second prompt on the same process still folds and
 *   recalls, and stdout stays strict JSON lines until an orderly exit.
 * Print mode (`pi -p`) is covered by fold-main.test.ts and fold-safety.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ANY_TAG, analyze, FoldTracker, linesOf, type RequestFolds, resultText } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	lastUserText,
	type ModelServer,
	type Reply,
	startModelServer,
} from "./harness/model-server.ts";
import { createPiSandbox, type JsonRecord, type PiRpc, type PiSandbox, type RunResult } from "./harness/pi-runner.ts";

const WINDOW = 20_000;
const BATCHES = 6;
/** Only a hang: the runner kills pi and rejects past it, so a slow machine never fails a figure. */
const RUN_TIMEOUT_MS = 120_000;
const FIRST_PROMPT = "Run the six batches, then look back at the first one.";
const SECOND_PROMPT = "Once more: what was line 77 of batch 2?";
const FOLD_ENTRY = "contextfold.fold";

/** Bash command printing 400 ok lines of batch `k` with a planted error line after line 200. */
function batchCommand(k: number): string {
	return (
		`for i in $(seq 1 200); do echo "batch ${k} line $i ok"; done; echo "Error: planted failure ${k}"; ` +
		`for i in $(seq 201 400); do echo "batch ${k} line $i ok"; done`
	);
}

const batchId = (k: number) => `toolu_batch_${k}`;
const RECALL_ID = "toolu_recall_1";
const SECOND_RECALL_ID = "toolu_recall_2";

/**
 * The scripted model, a function of the request only: six big bash outputs, a whole recall of the
 * first folded batch (by the code it was sent), then a final answer. On SECOND_PROMPT: a grep recall
 * of batch 2, then an answer. `hold`, when given, is awaited once before answering the first request
 * that carries a digest, so a test can act while a folded turn is in flight.
 */
function modeScript(finalText: string, hold?: () => Promise<void>) {
	const tracker = new FoldTracker();
	let held = false;
	return async (req: CapturedRequest): Promise<Reply> => {
		const folds = tracker.observe(req);
		if (req.index > 30) return { text: "guard: too many requests" };
		if (hold && !held && folds.folded.size > 0) {
			held = true;
			await hold();
		}
		const has = (callId: string) => folds.results.some((r) => r.id === callId);
		if (lastUserText(req) === SECOND_PROMPT) {
			if (has(SECOND_RECALL_ID)) return { text: "second answer done" };
			const code2 = tracker.codes.get(batchId(2));
			if (!code2) return { text: "batch 2 was never folded" };
			return {
				toolCalls: [
					{ id: SECOND_RECALL_ID, name: "recall_folded", args: { codes: [code2], grep: "batch 2 line 77 ok" } },
				],
			};
		}
		for (let k = 1; k <= BATCHES; k++) {
			if (!has(batchId(k))) {
				return { toolCalls: [{ id: batchId(k), name: "bash", args: { command: batchCommand(k) } }] };
			}
		}
		if (!has(RECALL_ID)) {
			const code1 = tracker.codes.get(batchId(1));
			if (!code1) return { text: "no digest of batch 1 was ever sent" };
			return { toolCalls: [{ id: RECALL_ID, name: "recall_folded", args: { codes: [code1] } }] };
		}
		return { text: finalText };
	};
}

/**
 * Strict JSONL check of a whole stdout capture: it ends with LF and every LF-separated line (an
 * optional CR stripped) parses as a JSON object with a string `type`. Returns the offending lines.
 */
function nonJsonLines(stdout: string): string[] {
	const bad: string[] = [];
	if (stdout.length > 0 && !stdout.endsWith("\n")) bad.push(`(no trailing LF) …${stdout.slice(-80)}`);
	for (let line of stdout.split("\n")) {
		if (line.endsWith("\r")) line = line.slice(0, -1);
		if (line === "") continue;
		try {
			const value = JSON.parse(line) as unknown;
			if (!value || typeof value !== "object" || Array.isArray(value)) bad.push(line.slice(0, 200));
			else if (typeof (value as JsonRecord).type !== "string") bad.push(line.slice(0, 200));
		} catch {
			bad.push(line.slice(0, 200));
		}
	}
	return bad;
}

/** Fold records appended through `pi.appendEntry`, as JSON/RPC `entry_appended` events. */
function foldEntries(records: readonly JsonRecord[]): JsonRecord[] {
	return records.filter(
		(r) => r.type === "entry_appended" && (r.entry as JsonRecord | undefined)?.customType === FOLD_ENTRY,
	);
}

/** Asserts that the later requests carry digests of earlier batch results, and a recall served the original. */
function assertFoldedAndRecalled(folds: readonly RequestFolds[], recallId: string): void {
	const first = folds.findIndex((f) => f.folded.size > 0);
	assert.ok(first > 0, "no request carries a digest");
	for (let i = 0; i < first; i++) {
		for (const r of folds[i].results) assert.doesNotMatch(r.text, ANY_TAG, `request ${i}: ${r.id}`);
	}
	const digest1 = folds.map((f) => f.folded.get(batchId(1))).find((d) => d !== undefined);
	assert.ok(digest1, "batch 1 never went out folded");
	assert.match(digest1.text, /^\{#[0-9a-z]{8} FOLDED\} bash: 401 lines/);
	assert.ok(
		linesOf(digest1.text).some((line) => line.endsWith(": Error: planted failure 1")),
		`digest lost the planted error:\n${digest1.text}`,
	);
	assert.ok(!digest1.text.includes("batch 1 line 300 ok"), "the digest carries ok lines");

	const at = folds.findIndex((f) => f.results.some((r) => r.id === recallId));
	assert.ok(at > 0, "the recall result never reached the model");
	assert.equal(folds[at - 1].folded.get(batchId(1))?.code, digest1.code, "batch 1 was not folded when recalled");
	const recall = resultText(folds[at], recallId)!;
	assert.match(recall, new RegExp(`^Recalled #${digest1.code}: bash, 401 lines \\(sha256 verified\\)\\n`));
	for (const probe of ["batch 1 line 1 ok", "batch 1 line 300 ok", "batch 1 line 400 ok"]) {
		assert.ok(
			linesOf(recall).some((line) => line.endsWith(probe)),
			`recall lacks "${probe}"`,
		);
	}
}

describe("context-fold under pi --mode json", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let run: RunResult;

	before(async () => {
		server = await startModelServer(modeScript("json run done"));
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: { compaction: { enabled: false } },
		});
		run = await sandbox.runPrint({
			prompt: FIRST_PROMPT,
			mode: "json",
			extensions: ["."],
			env: { CONTEXTFOLD_DEBUG: "1" },
			timeoutMs: RUN_TIMEOUT_MS,
		});
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("exits on its own with code 0 and a strict JSONL stdout; the extension talks on stderr only", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.signal, null);
		assert.deepEqual(server.errors, []);
		assert.deepEqual(nonJsonLines(run.stdout), [], "stdout carries non-JSON output");
		assert.equal(run.events[0]?.type, "session", "the first record is the session header");
		assert.equal(run.events.at(-1)?.type, "agent_settled");
		assert.ok(!run.events.some((e) => e.type === "extension_error"), "an extension handler threw");

		// Positive control: the extension did print (debug is on), and it went to stderr.
		assert.match(run.stderr, /^context-fold: fold event 1: \d+ blocks?, ~\d+ tokens saved$/m, run.stderr);
		assert.doesNotMatch(run.stdout, /context-fold: fold event/);
		assert.doesNotMatch(run.stderr, /context-fold: (fold pass failed|fold event rejected|could not)/);

		const answers = run.events
			.filter((e) => e.type === "message_end" && (e.message as JsonRecord).role === "assistant")
			.map((e) => JSON.stringify((e.message as JsonRecord).content));
		assert.ok(answers.at(-1)?.includes("json run done"), `last answer: ${answers.at(-1)}`);
	});

	it("later requests carry digests of earlier results and recall_folded serves the original", () => {
		const folds = analyze(server.requests);
		assert.equal(server.requests.length, BATCHES + 2);
		assertFoldedAndRecalled(folds, RECALL_ID);
		// The event stream shows the same: fold records were appended and the recall tool ran.
		assert.ok(foldEntries(run.events).length >= 2, "no contextfold.fold entry_appended events");
		const recallEnd = run.events.find((e) => e.type === "tool_execution_end" && e.toolCallId === RECALL_ID);
		assert.ok(recallEnd, "no tool_execution_end for the recall");
		assert.equal(recallEnd.isError, false);
		assert.match(JSON.stringify(recallEnd.result), /sha256 verified/);
	});
});

describe("context-fold under pi --mode rpc", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let rpc: PiRpc;
	let rawStdout = "";
	let releaseHold: () => void = () => {};
	let holdReached: () => void = () => {};
	const reached = new Promise<void>((resolve) => {
		holdReached = resolve;
	});
	const released = new Promise<void>((resolve) => {
		releaseHold = resolve;
	});

	before(async () => {
		server = await startModelServer(
			modeScript("rpc run done", () => {
				holdReached();
				return released;
			}),
		);
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: { compaction: { enabled: false } },
		});
		rpc = await sandbox.startRpc({ extensions: ["."], env: { CONTEXTFOLD_DEBUG: "1" }, timeoutMs: RUN_TIMEOUT_MS });
		rpc.proc.stdout?.setEncoding("utf8").on("data", (d: string) => {
			rawStdout += d;
		});
	});
	after(async () => {
		releaseHold();
		if (rpc && rpc.proc.exitCode === null) await rpc.close();
		await server?.close();
		await sandbox?.cleanup();
	});

	it(
		"folds, answers get_state/get_session_stats mid-turn and after, takes a second prompt, exits cleanly",
		{
			timeout: 60_000,
		},
		async () => {
			const from = rpc.records.length;
			const accepted = await rpc.send({ type: "prompt", message: FIRST_PROMPT });
			assert.equal(accepted.success, true, accepted.error);

			// The model is now holding the first request that carries a digest: a folded turn is in flight.
			const settled = rpc.waitFor((r) => r.type === "agent_settled", { from });
			const first = await Promise.race([reached.then(() => "held"), settled.then(() => "settled")]);
			assert.equal(first, "held", "the run settled without ever sending a digest");
			const midState = await rpc.call<{ isStreaming: boolean; messageCount: number; sessionFile?: string }>({
				type: "get_state",
			});
			assert.equal(midState.isStreaming, true);
			// system + user + at least four (bash call, result) pairs before the first digest
			assert.ok(midState.messageCount >= 2 + 2 * 4, `messageCount mid-turn: ${midState.messageCount}`);
			const midStats = await rpc.call<{ toolResults: number; contextUsage?: { contextWindow: number } }>({
				type: "get_session_stats",
			});
			assert.ok(midStats.toolResults >= 4, `toolResults mid-turn: ${midStats.toolResults}`);
			assert.equal(midStats.contextUsage?.contextWindow, WINDOW);
			releaseHold();
			await settled;

			const state = await rpc.call<{ isStreaming: boolean; messageCount: number; sessionFile?: string }>({
				type: "get_state",
			});
			assert.equal(state.isStreaming, false);
			const { messages } = await rpc.call<{ messages: { role: string; toolCallId?: string; content?: unknown }[] }>({
				type: "get_messages",
			});
			assert.equal(state.messageCount, messages.length);
			const results = messages.filter((m) => m.role === "toolResult");
			assert.equal(results.length, BATCHES + 1);
			// Folding touches only the outgoing request: Pi's own copy of every result stays raw.
			const batch1 = JSON.stringify(results.find((m) => m.toolCallId === batchId(1))?.content);
			assert.ok(batch1.includes("batch 1 line 300 ok"), batch1.slice(0, 200));
			assert.doesNotMatch(batch1, ANY_TAG);
			assert.equal(state.sessionFile, midState.sessionFile);
			const stats = await rpc.call<{
				toolCalls: number;
				toolResults: number;
				tokens: { cacheRead: number };
				contextUsage?: { tokens: number | null; contextWindow: number };
			}>({ type: "get_session_stats" });
			assert.equal(stats.toolCalls, BATCHES + 1);
			assert.equal(stats.toolResults, BATCHES + 1);
			assert.ok(stats.tokens.cacheRead > 0, "no cache read reported");
			// Pi's context usage is what the folded wire cost, far below the raw outputs' size.
			const last = server.usages.at(-1)!;
			assert.equal(stats.contextUsage?.tokens, last.promptTokens + last.output);
			const tracker = new FoldTracker();
			const folds1 = server.requests.map((r) => tracker.observe(r));
			const rawResultTokens = [...tracker.raw.values()].reduce((n, t) => n + Math.ceil(t.length / 4), 0);
			assert.ok(
				last.promptTokens < rawResultTokens,
				`last prompt ${last.promptTokens} tokens, raw tool results alone ${rawResultTokens}`,
			);

			assertFoldedAndRecalled(folds1, RECALL_ID);
			const firstRun = rpc.records.slice(from);
			assert.ok(foldEntries(firstRun).length >= 2, "no contextfold.fold entry_appended events");
			const answer = firstRun.filter((r) => r.type === "message_end").at(-1);
			assert.match(JSON.stringify(answer?.message), /rpc run done/);

			// The same process takes another prompt; the fold state carries over and recall still works.
			const split = server.requests.length;
			await rpc.prompt(SECOND_PROMPT);
			const folds = analyze(server.requests);
			assert.equal(server.requests.length, split + 2);
			assert.ok(folds[split].folded.has(batchId(2)), "batch 2 is not folded in the second prompt's request");
			const grep = resultText(folds[split + 1], SECOND_RECALL_ID)!;
			assert.ok(linesOf(grep).includes("77: batch 2 line 77 ok"), grep);
			const after2 = await rpc.call<{ messageCount: number }>({ type: "get_state" });
			assert.equal(after2.messageCount, state.messageCount + 4);

			const exit = await rpc.close();
			assert.deepEqual(exit, { code: 0, signal: null }, rpc.stderr());
			assert.deepEqual(server.errors, []);
			assert.deepEqual(nonJsonLines(rawStdout), [], "stdout carries non-JSON output");
			assert.ok(!rpc.records.some((r) => r.type === "__unparsed_stdout__" || r.type === "extension_error"));
			assert.match(rpc.stderr(), /^context-fold: fold event 1: /m, "debug on, yet no fold event on stderr");
			assert.doesNotMatch(rpc.stderr(), /context-fold: (fold pass failed|fold event rejected|could not)/);
		},
	);
});
