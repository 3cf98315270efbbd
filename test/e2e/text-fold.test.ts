/**
 * Issue 10 through real `pi`, under the economic policy, with every assertion on the request bodies
 * the scripted model server captured:
 * - old assistant text folds: the model's first reply is a long plan (with a marker string on a
 *   later line) next to a bash call; once bash output pushes it out of the cold tail and usage past
 *   `foldFrom`, its text part goes out as `{#code FOLDED} text: …` (one line), the marker leaves the
 *   wire, and nothing else in the request changes (message count, tool calls and their results). The
 *   model then recalls the code (the original text, sha256 verified) and unfolds it (raw from the next
 *   request on). The hot tail is larger than the whole session, so no tool result ever folds here.
 *   Run for the Anthropic Messages and the OpenAI chat-completions wire APIs.
 * - a superseded read folds inside the hot tail: three files are read, then the middle one is edited.
 *   The request before the edit's result is past `foldFrom` and folds nothing (every read is hot);
 *   the next one folds the edited file's read, which is outside the cold tail, while the other two
 *   reads stay raw. The folded read's digest names the files it mentions (`Paths: …`).
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { batchCommand } from "./harness/batches.ts";
import { ANY_TAG, analyze, messageJson, type RequestFolds, TAG_AT_HEAD, unpaired } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	type ModelServer,
	messagesOf,
	type Reply,
	serializePrompt,
	startModelServer,
	toolResultOf,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiApi, type PiSandbox, type RunResult } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
/** Larger than any prompt of these sessions: no tool result that no later call superseded can fold. */
const HOT_TAIL = 12_000;
const FOLD_FROM = 1_920;
const SETTINGS = {
	compaction: { enabled: false },
	"context-fold": {
		policy: "economic",
		hotTail: HOT_TAIL,
		coldTail: 1000,
		// A long horizon: any event pays for its rewrite, so firing depends on the tails and foldFrom alone.
		horizon: 1000,
		foldFrom: FOLD_FROM,
		minEvent: 320,
		backstopAt: 14_400,
		budgetFraction: 0.95,
	},
};
const RUN_TIMEOUT_MS = 90_000;

const MARKER = "ZEBRA-LANTERN-4417";
const PLAN_HEAD = "Plan before the batches, step by step:";
/** The model's first reply: 31 lines, ~2.7k characters, the marker on line 5 (not in the digest's head). */
const PLAN = [
	PLAN_HEAD,
	...Array.from({ length: 30 }, (_, i) =>
		i === 3
			? `- step ${i + 1}: remember the codeword ${MARKER} for the final report, it matters later on.`
			: `- step ${i + 1}: run one batch of a hundred lines and check that every single one says ok.`,
	),
].join("\n");
const MAX_BATCHES = 12;

/** Tool-call ids of one API run. */
function ids(prefix: string) {
	return {
		batch: (k: number) => `${prefix}_batch_${String(k).padStart(2, "0")}`,
		isBatch: (callId: string) => callId.startsWith(`${prefix}_batch_`),
		recall: `${prefix}_recall`,
		unfold: `${prefix}_unfold`,
		after: `${prefix}_after`,
	};
}

/** The text of the assistant message that made the first batch call, as this request sends it. */
function planText(req: CapturedRequest, firstCall: string): string | undefined {
	return messagesOf(req).find((m) => m.toolCalls?.some((c) => c.id === firstCall))?.text;
}

/**
 * The scripted model: the plan with the first batch, more batches until the plan comes back folded,
 * then recall_folded and unfold of its code, one more small command, and a final answer.
 */
function textScript(id: ReturnType<typeof ids>) {
	let code: string | undefined;
	return (req: CapturedRequest): Reply => {
		if (req.index > 40) return { text: "guard: too many requests" };
		const plan = planText(req, id.batch(1));
		if (plan === undefined) {
			return { text: PLAN, toolCalls: [{ id: id.batch(1), name: "bash", args: { command: batchCommand(1) } }] };
		}
		code ??= TAG_AT_HEAD.exec(plan)?.[1];
		const call = (callId: string, name: string, args: Record<string, unknown>): Reply => ({
			toolCalls: [{ id: callId, name, args }],
		});
		if (!code) {
			const ran = toolResultsOf(req).filter((r) => id.isBatch(r.toolCallId)).length;
			if (ran >= MAX_BATCHES) return { text: "the plan never folded" };
			return call(id.batch(ran + 1), "bash", { command: batchCommand(ran + 1) });
		}
		if (toolResultOf(req, id.recall) === undefined) return call(id.recall, "recall_folded", { codes: [code] });
		if (toolResultOf(req, id.unfold) === undefined) return call(id.unfold, "unfold", { codes: [code] });
		if (toolResultOf(req, id.after) === undefined) return call(id.after, "bash", { command: "echo after unfold" });
		return { text: "text run done" };
	};
}

/** Index of the first request carrying the result of `callId`. */
function firstWith(requests: readonly CapturedRequest[], callId: string): number {
	const i = requests.findIndex((r) => toolResultOf(r, callId) !== undefined);
	assert.ok(i >= 0, `no request carries the result of ${callId}`);
	return i;
}

for (const api of ["anthropic-messages", "openai-completions"] as PiApi[]) {
	const id = ids(api === "anthropic-messages" ? "toolu" : "call");

	describe(`economic policy: old assistant text folds and is recalled (${api})`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;
		let run: RunResult;
		let requests: CapturedRequest[] = [];
		/** The first request whose plan text is a digest. */
		let folded = -1;
		let code = "";

		before(async () => {
			server = await startModelServer(textScript(id));
			sandbox = await createPiSandbox({ serverUrl: server.url, api, contextWindow: WINDOW, settings: SETTINGS });
			run = await sandbox.runPrint({
				prompt: "Plan, then run the batches.",
				extensions: ["."],
				timeoutMs: RUN_TIMEOUT_MS,
			});
			requests = server.requests;
			folded = requests.findIndex((r) => TAG_AT_HEAD.test(planText(r, id.batch(1)) ?? ""));
			code = TAG_AT_HEAD.exec(planText(requests[folded] ?? requests[0], id.batch(1)) ?? "")?.[1] ?? "";
		});
		after(async () => {
			await server?.close();
			await sandbox?.cleanup();
		});

		it("the run exits on its own with the scripted final answer", () => {
			assert.equal(run.code, 0, run.stderr);
			assert.equal(run.stdout.trim(), "text run done", run.stderr);
			assert.deepEqual(server.errors, []);
		});

		it("the old plan text goes out as a one-line digest, and nothing else in the request changes", () => {
			assert.ok(folded > 1, `the plan never went out folded (first digest at request ${folded})`);
			for (let i = 1; i < folded; i++) {
				assert.equal(planText(requests[i], id.batch(1)), PLAN, `request ${i}: the plan is not raw`);
			}
			const digest = planText(requests[folded], id.batch(1));
			const tokens = Math.ceil(PLAN.length / 4);
			assert.equal(digest, `{#${code} FOLDED} text: 31 lines, ~${tokens} tokens. ${PLAN_HEAD}`);
			assert.ok(serializePrompt(requests[folded - 1]).includes(MARKER), "the marker was on the wire before");
			assert.ok(!serializePrompt(requests[folded]).includes(MARKER), "the marker is still on the wire");

			// The previous request's messages, byte for byte, but for the plan's text; then the new turn.
			const before = messageJson(requests[folded - 1]);
			const now = messageJson(requests[folded]);
			assert.equal(now.length, before.length + 2, "one assistant message and its tool result appended");
			const escaped = (s: string) => JSON.stringify(s).slice(1, -1);
			const changed = before.map((m, i) => (m === now[i] ? -1 : i)).filter((i) => i >= 0);
			assert.equal(changed.length, 1, `messages changed: ${changed}`);
			assert.equal(now[changed[0]], before[changed[0]].replace(escaped(PLAN), escaped(digest ?? "")));
			assert.deepEqual(unpaired(requests[folded]), { callsWithoutResult: [], resultsWithoutCall: [] });
			const calls = (r: CapturedRequest) => messagesOf(r).flatMap((m) => (m.toolCalls ?? []).map((c) => c.id));
			assert.deepEqual(calls(requests[folded]).slice(0, -1), calls(requests[folded - 1]));
			for (const r of toolResultsOf(requests[folded])) assert.doesNotMatch(r.text, ANY_TAG, r.toolCallId);

			// The request before was already past foldFrom, yet sent the plan raw: it was still in the cold tail.
			const usage = server.usages[folded - 2];
			assert.ok(usage && usage.promptTokens + usage.output >= FOLD_FROM, `usage ${usage?.promptTokens}`);
		});

		it("recall_folded serves the original text, sha256 verified, without unfolding it", () => {
			const at = firstWith(requests, id.recall);
			assert.ok(at > folded, "the recall came before the fold");
			assert.ok(TAG_AT_HEAD.test(planText(requests[at - 1], id.batch(1)) ?? ""), "the plan was raw when recalled");
			assert.equal(
				toolResultOf(requests[at], id.recall),
				`Recalled #${code}: text, 31 lines (sha256 verified)\n${PLAN}`,
			);
			assert.ok(TAG_AT_HEAD.test(planText(requests[at], id.batch(1)) ?? ""), "the recall unfolded the plan");
			for (let i = folded; i < at; i++) assert.ok(!serializePrompt(requests[i]).includes(MARKER), `request ${i}`);
		});

		it("unfold puts the raw text back on the wire from the next request on", () => {
			const at = firstWith(requests, id.unfold);
			assert.match(toolResultOf(requests[at], id.unfold) ?? "", new RegExp(`^Unfolded #${code}:`));
			assert.ok(TAG_AT_HEAD.test(planText(requests[at - 1], id.batch(1)) ?? ""), "the plan was already raw");
			for (let i = at; i < requests.length; i++) {
				assert.equal(planText(requests[i], id.batch(1)), PLAN, `request ${i}: the plan is not raw`);
			}
			assert.ok(requests.length - at >= 2, "too few requests after the unfold");
		});
	});
}

/** A file of `n` numbered lines of filler (~60 characters each); line 60 names two other files. */
function fileText(name: string, n: number): string {
	return Array.from({ length: n }, (_, i) =>
		i === 59
			? `${name} line 60: see docs/${name}-notes.md and src/${name}.ts for the rest.\n`
			: `${name} line ${i + 1}: filler words to give this file some size.\n`,
	).join("");
}

describe("economic policy: a superseded read folds inside the hot tail", () => {
	const READS = { beta: "toolu_read_beta", alpha: "toolu_read_alpha", gamma: "toolu_read_gamma" };
	const EDIT = "toolu_edit_alpha";
	let server: ModelServer;
	let sandbox: PiSandbox;
	let run: RunResult;
	let folds: RequestFolds[] = [];
	let edited = -1;

	before(async () => {
		server = await startModelServer((req) => {
			const has = (callId: string) => toolResultOf(req, callId) !== undefined;
			for (const [name, callId] of Object.entries(READS)) {
				if (!has(callId)) return { toolCalls: [{ id: callId, name: "read", args: { path: `${name}.txt` } }] };
			}
			if (!has(EDIT)) {
				const edits = [{ oldText: "alpha line 7: filler", newText: "alpha line 7: edited" }];
				return { toolCalls: [{ id: EDIT, name: "edit", args: { path: "alpha.txt", edits } }] };
			}
			return { text: "edit done" };
		});
		sandbox = await createPiSandbox({ serverUrl: server.url, contextWindow: WINDOW, settings: SETTINGS });
		for (const name of Object.keys(READS)) await writeFile(join(sandbox.cwd, `${name}.txt`), fileText(name, 120));
		run = await sandbox.runPrint({
			prompt: "Read the files, then fix alpha.",
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		folds = analyze(server.requests);
		edited = server.requests.findIndex((r) => toolResultOf(r, EDIT) !== undefined);
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("the run reads three files and edits one", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "edit done", run.stderr);
		assert.deepEqual(server.errors, []);
		assert.ok(edited > 0, "no request carries the edit's result");
		assert.match(toolResultOf(server.requests[edited], EDIT) ?? "", /Successfully/i);
	});

	it("before the edit nothing folds, past foldFrom; after it only the edited file's read folds", () => {
		const usage = server.usages[edited - 1];
		assert.ok(usage && usage.promptTokens >= FOLD_FROM, `usage before the edit: ${usage?.promptTokens}`);
		for (let i = 0; i < edited; i++)
			assert.doesNotMatch(serializePrompt(server.requests[i]), ANY_TAG, `request ${i}`);
		const now = folds[edited];
		assert.deepEqual([...now.folded.keys()], [READS.alpha]);
		const digest = now.folded.get(READS.alpha)?.text ?? "";
		assert.match(digest, /^\{#[0-9a-z]{8} FOLDED\} read: 120 lines, ~\d+ tokens\./);
		assert.match(
			digest,
			/ Paths: docs\/alpha-notes\.md, src\/alpha\.ts\./,
			"the digest names the files the read mentions",
		);
		for (const callId of [READS.beta, READS.gamma]) {
			assert.equal(
				now.results.find((r) => r.id === callId)?.text,
				toolResultOf(server.requests[edited - 1], callId),
				`${callId} changed`,
			);
		}
		// Every read is inside the hot tail: the whole prompt is shorter than it.
		assert.ok((server.usages[edited]?.promptTokens ?? HOT_TAIL) < HOT_TAIL, "the prompt outgrew the hot tail");
		assert.deepEqual(unpaired(server.requests[edited]), { callsWithoutResult: [], resultsWithoutCall: [] });
	});
});
