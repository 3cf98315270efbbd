/**
 * recall_folded in a small window, through real `pi`: the output cap of one call is one character
 * per token of the model's window where that is less than 32,000 (a quarter of the window in English
 * or code), so that a recall of every folded block leaves room in the window. Here an 8k window:
 * twelve batches fold, the model recalls every code it was shown at once, and the recall's result in
 * the next request body is at most 8,000 characters, names the cap, and names the codes it left out
 * with the call that serves them.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BATCH_PROMPT, BATCHES_DONE, batchScript, earlyFoldKnobs } from "./harness/batches.ts";
import {
	type CapturedRequest,
	lastUserText,
	type ModelServer,
	type Reply,
	serializePrompt,
	startModelServer,
	toolResultOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox } from "./harness/pi-runner.ts";

const WINDOW = 8_000;
const BATCHES = 12;
const RECALL_PROMPT = "Read back every folded batch.";
const RECALL_ID = "toolu_recall_all";
const RUN_TIMEOUT_MS = 90_000;
const KNOBS = earlyFoldKnobs(WINDOW);

/** Every fold code a request shows in a digest. */
function codesShown(req: CapturedRequest): string[] {
	return [...new Set([...serializePrompt(req).matchAll(/\{#([0-9a-z]{8}) FOLDED\}/g)].map((m) => m[1]))];
}

/** The batch script, then on RECALL_PROMPT one recall of every code shown, then a closing answer. */
function script(): (req: CapturedRequest, index: number) => Reply {
	const batches = batchScript({ trigger: BATCH_PROMPT, count: BATCHES, done: BATCHES_DONE, other: "?" });
	return (req, index) => {
		if (lastUserText(req) !== RECALL_PROMPT) return batches(req, index) as Reply;
		if (toolResultOf(req, RECALL_ID) !== undefined) return { text: "recalled" };
		return { toolCalls: [{ id: RECALL_ID, name: "recall_folded", args: { codes: codesShown(req) } }] };
	};
}

describe("recall_folded in an 8k window", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let asked: string[] = [];
	let answer = "";

	before(async () => {
		server = await startModelServer(script());
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: { compaction: { enabled: false }, "context-fold": KNOBS },
		});
		for (const [prompt, continueSession] of [
			[BATCH_PROMPT, false],
			[RECALL_PROMPT, true],
		] as const) {
			const run = await sandbox.runPrint({ prompt, extensions: ["."], timeoutMs: RUN_TIMEOUT_MS, continueSession });
			assert.equal(run.code, 0, run.stderr);
		}
		const at = server.requests.findIndex((req) => toolResultOf(req, RECALL_ID) !== undefined);
		assert.ok(at > 0, "no request carries the recall's result");
		asked = codesShown(server.requests[at - 1]);
		answer = toolResultOf(server.requests[at], RECALL_ID) ?? "";
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("folds more than the window's worth of characters, and the model asks for all of it", () => {
		assert.ok(asked.length >= 5, `codes shown: ${asked.length}`);
	});

	it("answers within one character per window token, naming that cap and what it left out", () => {
		assert.ok(answer.length <= WINDOW, `the recall's result is ${answer.length} characters`);
		assert.match(answer, /^Recalled #[0-9a-z]{8}: bash, 100 lines \(sha256 verified\)/);
		assert.match(answer, /output cap \(8000 characters per call\) reached; not shown: #[0-9a-z]{8}/);
		const served = [...answer.matchAll(/^Recalled #([0-9a-z]{8})/gm)].map((m) => m[1]);
		const named = /not shown: (.*)\. Call recall_folded again/.exec(answer)?.[1].split(", ") ?? [];
		assert.deepEqual([...served, ...named.map((c) => c.slice(1))], asked, "every code is served or named");
	});
});
