/**
 * End-to-end proof of context-fold through the real `pi` CLI (issue 3, scenario 5):
 * - with `CONTEXTFOLD=0` the extension registers nothing: every request goes out raw even far past
 *   the budget, and neither recall_folded nor unfold is declared;
 * - a parallel tool batch the model has not seen yet is never folded in the request that delivers
 *   it, even when that request is far past the threshold and the budget (and folds once seen), nor
 *   when another extension's context handler appends an assistant message after it;
 * - nor after that request failed (a provider error, Pi's retry off): Pi keeps the error reply, but
 *   no model answered the batch, so the next request (the user's "continue") still carries it raw.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ANY_TAG, analyze, messageJson, prefixBreak, resultText, unpaired } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	type ModelServer,
	type Reply,
	startModelServer,
	toolNamesOf,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox, type RunResult } from "./harness/pi-runner.ts";

const WINDOW = 20_000;
const BUDGET = 0.75 * WINDOW;
const RUN_TIMEOUT_MS = 90_000;

/** Bash command printing `lines` ok lines tagged `label`, then a planted error line. */
function noisyCommand(label: string, lines: number): string {
	return `for i in $(seq 1 ${lines}); do echo "${label} line $i ok"; done; echo "Error: planted failure ${label}"`;
}

describe("CONTEXTFOLD=0 through pi -p", () => {
	const BATCHES = 10;
	let server: ModelServer;
	let sandbox: PiSandbox;
	let run: RunResult;

	before(async () => {
		server = await startModelServer((req: CapturedRequest): Reply => {
			const n = toolResultsOf(req).length;
			if (req.index > 30) return { text: "guard: too many requests" };
			if (n < BATCHES)
				return { toolCalls: [{ name: "bash", args: { command: noisyCommand(`batch ${n + 1}`, 400) } }] };
			return { text: "raw run done" };
		});
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: { compaction: { enabled: false } },
		});
		run = await sandbox.runPrint({
			prompt: "Run ten noisy batches.",
			extensions: ["."],
			env: { CONTEXTFOLD: "0" },
			timeoutMs: RUN_TIMEOUT_MS,
		});
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("sends every request raw and declares no context-fold tool", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "raw run done");
		assert.deepEqual(server.errors, []);
		assert.equal(server.requests.length, BATCHES + 1);
		const last = server.usages.at(-1)!;
		assert.ok(last.promptTokens > BUDGET, `never went past the budget: ${last.promptTokens} tokens`);

		const folds = analyze(server.requests);
		for (const [i, req] of server.requests.entries()) {
			assert.doesNotMatch(req.raw, /FOLDED/, `request ${i} mentions FOLDED`);
			const tools = toolNamesOf(req);
			assert.ok(tools.includes("bash"), `request ${i} tools: ${tools}`);
			assert.ok(!tools.includes("recall_folded") && !tools.includes("unfold"), `request ${i} tools: ${tools}`);
			assert.equal(folds[i].folded.size, 0);
			assert.deepEqual(folds[i].mutated, []);
			assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] });
			if (i > 0) assert.equal(prefixBreak(messageJson(server.requests[i - 1]), messageJson(req)), -1);
		}
	});
});

/** The parallel-batch scenario, run with `extensions` (context-fold's last: another's context handler runs first). */
function parallelBatch(title: string, extensions: string[]): void {
	describe(title, () => {
		const PARALLEL = 5;
		const parId = (k: number) => `toolu_par_${k}`;
		let server: ModelServer;
		let sandbox: PiSandbox;
		let run: RunResult;

		before(async () => {
			server = await startModelServer((req: CapturedRequest): Reply => {
				const done = new Set(toolResultsOf(req).map((r) => r.toolCallId));
				if (req.index > 20) return { text: "guard: too many requests" };
				for (const k of [1, 2]) {
					const callId = `toolu_seq_${k}`;
					if (!done.has(callId)) {
						return {
							toolCalls: [{ id: callId, name: "bash", args: { command: noisyCommand(`seq ${k}`, 400) } }],
						};
					}
				}
				if (!done.has(parId(1))) {
					const toolCalls = [];
					for (let k = 1; k <= PARALLEL; k++) {
						toolCalls.push({ id: parId(k), name: "bash", args: { command: noisyCommand(`par ${k}`, 600) } });
					}
					return { toolCalls };
				}
				if (!done.has("toolu_after")) {
					return { toolCalls: [{ id: "toolu_after", name: "bash", args: { command: "echo after the batch" } }] };
				}
				return { text: "parallel run done" };
			});
			sandbox = await createPiSandbox({
				serverUrl: server.url,
				contextWindow: WINDOW,
				settings: { compaction: { enabled: false } },
			});
			run = await sandbox.runPrint({ prompt: "Run the batches.", extensions, timeoutMs: RUN_TIMEOUT_MS });
		});
		after(async () => {
			await server?.close();
			await sandbox?.cleanup();
		});

		it("delivers every result of the batch raw in the request right after it, far past the budget", () => {
			assert.equal(run.code, 0, run.stderr);
			assert.equal(run.stdout.trim(), "parallel run done");
			assert.deepEqual(server.errors, []);
			const folds = analyze(server.requests);
			for (const req of server.requests) {
				assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] }, `request ${req.index}`);
			}

			const at = folds.findIndex((f) => f.fresh.includes(parId(1)));
			assert.ok(at > 0, "the parallel batch never reached the model");
			// One assistant response carried all the calls; its results all arrive in this one request.
			const parallelCalls = server.requests[at].raw.match(/"toolu_par_\d"/g) ?? [];
			assert.equal(new Set(parallelCalls).size, PARALLEL);
			assert.ok(
				server.usages[at]!.promptTokens > BUDGET,
				`request ${at}: ${server.usages[at]!.promptTokens} tokens`,
			);
			for (let k = 1; k <= PARALLEL; k++) {
				assert.ok(folds[at].fresh.includes(parId(k)), `par ${k} is not delivered in request ${at}`);
				const text = resultText(folds[at], parId(k))!;
				assert.doesNotMatch(text, ANY_TAG, `par ${k} went out folded on first delivery`);
				assert.ok(text.includes(`par ${k} line 600 ok\nError: planted failure par ${k}`), `par ${k} is not raw`);
			}
			// The request was past the budget: the fold engine did act on what the model had already seen.
			assert.ok(folds[at].folded.size > 0, `no fold event in request ${at}: the test did not reach the policy`);

			// Positive control: once the model has seen the batch, its older results are ordinary candidates.
			const later = folds.slice(at + 1);
			assert.ok(
				later.some((f) => [...f.folded.keys()].some((k) => k.startsWith("toolu_par_"))),
				"no result of the batch ever folded after it was seen",
			);
		});
	});
}

parallelBatch("a parallel tool batch just delivered is never folded", ["."]);
// An assistant message another extension adds after the batch answered nothing: the batch is still unseen.
parallelBatch("a parallel tool batch is never folded when another extension appends an assistant message after it", [
	"test/e2e/fixtures/inject-reply-extension.ts",
	".",
]);

describe("a batch whose delivering request failed is still unseen", () => {
	const parId = (k: number) => `toolu_par_${k}`;
	let server: ModelServer;
	let sandbox: PiSandbox;
	let runs: RunResult[];
	/** Requests the model answered (not with an HTTP error). */
	const answered = new Set<number>();

	before(async () => {
		let failed = false;
		server = await startModelServer((req: CapturedRequest): Reply => {
			const done = new Set(toolResultsOf(req).map((r) => r.toolCallId));
			if (req.index > 20) return { text: "guard: too many requests" };
			const answer = (reply: Reply): Reply => {
				answered.add(req.index);
				return reply;
			};
			for (const k of [1, 2, 3, 4]) {
				const callId = `toolu_seq_${k}`;
				if (!done.has(callId))
					return answer({
						toolCalls: [{ id: callId, name: "bash", args: { command: noisyCommand(`seq ${k}`, 350) } }],
					});
			}
			if (!done.has(parId(1))) {
				const toolCalls = [1, 2, 3].map((k) => ({
					id: parId(k),
					name: "bash",
					args: { command: noisyCommand(`par ${k}`, 500) },
				}));
				return answer({ toolCalls });
			}
			if (!failed) {
				failed = true;
				return { error: { status: 400, message: "request rejected (simulated provider failure)" } };
			}
			return answer({ text: "continuing" });
		});
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: {
				compaction: { enabled: false },
				retry: { enabled: false },
				"context-fold": { policy: "ladder", tail: 1000 },
			},
		});
		const first = await sandbox.runPrint({
			prompt: "Run the batches.",
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		const next = await sandbox.runPrint({
			prompt: "continue",
			extensions: ["."],
			continueSession: true,
			timeoutMs: RUN_TIMEOUT_MS,
		});
		runs = [first, next];
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("folds no result before a request that carried it raw was answered", () => {
		assert.equal(runs[1].code, 0, runs[1].stderr);
		assert.equal(runs[1].stdout.trim(), "continuing");
		const folds = analyze(server.requests);
		const failedAt = server.requests.findIndex((r) => !answered.has(r.index));
		assert.ok(failedAt > 0 && folds[failedAt].fresh.includes(parId(1)), "the failed request delivered the batch");
		const seen = new Set<string>();
		for (const [i, req] of server.requests.entries()) {
			assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] }, `request ${i}`);
			for (const id of folds[i].folded.keys())
				assert.ok(seen.has(id), `request ${i} folded ${id}, which no model answered`);
			if (answered.has(req.index)) for (const r of folds[i].results) if (!folds[i].folded.has(r.id)) seen.add(r.id);
		}
		const retry = folds.length - 1;
		for (const k of [1, 2, 3]) {
			const text = resultText(folds[retry], parId(k)) ?? "";
			assert.ok(
				text.includes(`Error: planted failure par ${k}`) && !ANY_TAG.test(text),
				`par ${k} after the failure: ${text.slice(0, 80)}`,
			);
		}
		assert.ok(
			folds.some((f) => f.folded.size > 0),
			"nothing ever folded: the test did not reach the policy",
		);
	});
});
