/**
 * Tool calls whose ids repeat, through real `pi`: a provider (or a scripted server started afresh
 * for each process) that numbers its tool calls from zero in every reply gives every call the same
 * id, and one that sends none gives every call an empty id. Pi passes either through. A later
 * occurrence of an id is told apart by its message's timestamp, so its result folds like any other,
 * its code recalls the original bytes (sha256 verified) in the same process and after a resume, and
 * its digest's bytes stay the same from one request to the next.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { batchCommand, earlyFoldKnobs } from "./harness/batches.ts";
import {
	type CapturedRequest,
	lastUserText,
	type ModelServer,
	messagesOf,
	type Reply,
	startModelServer,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiApi, type PiSandbox } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const BATCHES = 10;
const RUN_PROMPT = "Run the batches.";
const RECALL_PROMPT = "Read batch 4 back.";
const RUN_TIMEOUT_MS = 90_000;
const KNOBS = earlyFoldKnobs(WINDOW);
const TAG = /^\{#([0-9a-z]{8}) FOLDED\}/;

/** The bash results of a request in order: result k (0-based) is batch k + 1, whatever its call id. */
function batchResults(req: CapturedRequest): string[] {
	return toolResultsOf(req)
		.map((r) => r.text)
		.slice(0, BATCHES);
}

/**
 * Batches on RUN_PROMPT, each a bash call with the id `callId`; on RECALL_PROMPT one recall_folded
 * call (id `callId` too) of the code batch 4's digest shows, then a closing answer.
 */
function script(callId: string): (req: CapturedRequest) => Reply {
	return (req) => {
		const messages = messagesOf(req);
		const calls = messages.flatMap((m) => m.toolCalls ?? []);
		if (lastUserText(req) === RECALL_PROMPT) {
			if (calls.some((c) => c.name === "recall_folded")) return { text: "recalled" };
			const code = TAG.exec(batchResults(req)[3] ?? "")?.[1];
			if (!code) return { text: "batch 4 is not folded" };
			return { toolCalls: [{ id: callId, name: "recall_folded", args: { codes: [code] } }] };
		}
		const ran = calls.filter((c) => c.name === "bash").length;
		if (ran < BATCHES) return { toolCalls: [{ id: callId, name: "bash", args: { command: batchCommand(ran + 1) } }] };
		return { text: "All batches ran." };
	};
}

for (const [label, api, callId] of [
	["every call id the same", "anthropic-messages", "toolu_0"],
	["every call id the same", "openai-completions", "call_0"],
	["no call ids", "openai-completions", ""],
] as const satisfies readonly (readonly [string, PiApi, string])[])
	describe(`tool calls with ${label} (${api})`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;
		const recalls: string[] = [];

		before(async () => {
			server = await startModelServer(script(callId));
			sandbox = await createPiSandbox({
				serverUrl: server.url,
				api,
				contextWindow: WINDOW,
				settings: { compaction: { enabled: false }, "context-fold": KNOBS },
			});
			// The recall, once in the process that folded and once in a resumed one.
			for (const [prompt, continueSession] of [
				[RUN_PROMPT, false],
				[RECALL_PROMPT, true],
				[RECALL_PROMPT, true],
			] as const) {
				const run = await sandbox.runPrint({
					prompt,
					extensions: ["."],
					timeoutMs: RUN_TIMEOUT_MS,
					continueSession,
				});
				assert.equal(run.code, 0, run.stderr);
				const last = server.requests.at(-1) as CapturedRequest;
				if (prompt === RECALL_PROMPT) recalls.push(toolResultsOf(last).at(-1)?.text ?? "");
			}
		});
		after(async () => {
			await server?.close();
			await sandbox?.cleanup();
		});

		it("every call goes out under the one id the provider gave", () => {
			const last = server.requests.at(-1) as CapturedRequest;
			const ids = new Set(toolResultsOf(last).map((r) => r.toolCallId));
			assert.deepEqual([...ids], [callId]);
		});

		it("folds results after the first, whose ids repeat, and keeps each digest's bytes", () => {
			const folded = server.requests.map((req) => batchResults(req).map((t) => TAG.test(t)));
			const at = folded.findIndex((f) => f.slice(1).some(Boolean));
			assert.ok(at > 0, "no later occurrence of the id ever folded");
			for (let k = 1; k < BATCHES; k++) {
				const first = server.requests.findIndex((req) => TAG.test(batchResults(req)[k] ?? ""));
				if (first < 0) continue;
				const digest = batchResults(server.requests[first])[k];
				for (const req of server.requests.slice(first))
					assert.equal(batchResults(req)[k], digest, `batch ${k + 1}'s digest changed`);
			}
		});

		it("recalls batch 4's original, sha256 verified, in the process that folded it and after a resume", () => {
			assert.equal(recalls.length, 2);
			for (const recall of recalls) {
				assert.match(recall, /^Recalled #[0-9a-z]{8}: bash, 100 lines \(sha256 verified\)/);
				assert.match(recall, /^batch 4 line 100 ok$/m);
				assert.doesNotMatch(recall, /batch [1235-9] line/);
			}
		});
	});
