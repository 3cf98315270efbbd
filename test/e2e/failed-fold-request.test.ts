/**
 * A fold event's request that the provider refuses once (529 overloaded) and Pi's auto-retry sends
 * again, through the real `pi` CLI: the last response before it still counts the blocks the event
 * folded at their raw size, so the retried request is measured from itself, not from that figure. A
 * reading from the old figure saw the folded blocks as content that could not fold: it raised the
 * reset flag ("more than half the window cannot fold") on a context a third of that size.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TAG_AT_HEAD } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	type ModelServer,
	type Reply,
	startModelServer,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox, type RunResult } from "./harness/pi-runner.ts";

const BATCHES = 6;

/** A bash command printing 300 lines of batch `k`. */
const output = (k: number) => `for i in $(seq 1 300); do echo "batch ${k} line $i ok some padding text"; done`;

describe("a fold event's request that fails once and is retried", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let run: RunResult;
	/** The request refused, once: the first that carried a digest. */
	let refused: CapturedRequest | undefined;

	before(async () => {
		server = await startModelServer((req: CapturedRequest): Reply => {
			const results = toolResultsOf(req);
			if (!refused && results.some((r) => TAG_AT_HEAD.test(r.text))) {
				refused = req;
				return { error: { status: 529, message: "Overloaded", type: "overloaded_error" } };
			}
			if (results.length < BATCHES)
				return { toolCalls: [{ name: "bash", args: { command: output(results.length + 1) } }] };
			return { text: "batches done" };
		});
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: 20_000,
			maxTokens: 4_000,
			settings: {
				compaction: { enabled: false },
				retry: { enabled: true, maxRetries: 3, baseDelayMs: 50 },
				"context-fold": { policy: "working-set", foldFrom: 8000, minEvent: 2000, hotTail: 1000, useWindow: 1 },
			},
		});
		run = await sandbox.runPrint({ prompt: "run the batches", extensions: ["."], timeoutMs: 90_000 });
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("is retried with the same folds, and no advisory reads the folded blocks at their old size", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.ok(refused, "a request carried a fold event");
		const at = server.requests.indexOf(refused);
		const retried = server.requests[at + 1];
		assert.ok(retried, "Pi retried it");
		assert.equal(JSON.stringify(retried.body), JSON.stringify(refused.body), "the retry carries the same bytes");
		assert.match(run.stdout, /batches done/);
		assert.doesNotMatch(run.stderr, /reset flag|cannot fold|compacted the context/);
	});
});
