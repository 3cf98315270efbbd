/**
 * Fold events' requests that the provider refuses once each (529 overloaded) and Pi's auto-retry
 * sends again, through the real `pi` CLI. The last response before such a request still counts the
 * blocks the event folded at their raw size, so the retried request is measured from itself, not
 * from that figure: a reading from the old figure saw the folded blocks as content that could not
 * fold, and raised the reset flag ("more than half the window cannot fold") on a context a third of
 * that size. And the retry is the event's first request to reach the provider: it carries the same
 * bytes, the cache breakpoint at the frontier as it stood before the event included, so it reads the
 * cache up to there (without it, a second event's retry rewrote the whole conversation).
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

const BATCHES = 12;

/** A bash command printing 300 lines of batch `k`. */
const output = (k: number) => `for i in $(seq 1 300); do echo "batch ${k} line $i ok some padding text"; done`;

describe("a fold event's request that fails once and is retried", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let run: RunResult;
	/** The requests refused, once each: every one that first carried a fold event's digests. */
	const refused: CapturedRequest[] = [];
	let folded = 0;

	before(async () => {
		server = await startModelServer((req: CapturedRequest): Reply => {
			const results = toolResultsOf(req);
			const digests = results.filter((r) => TAG_AT_HEAD.test(r.text)).length;
			if (digests > folded) {
				folded = digests;
				refused.push(req);
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

	it("is retried with the same folds and breakpoints, and no advisory reads the folded blocks at their old size", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.ok(refused.length >= 2, `${refused.length} fold events`);
		for (const failed of refused) {
			const retried = server.requests[server.requests.indexOf(failed) + 1];
			assert.ok(retried, `Pi retried request ${failed.index}`);
			assert.equal(
				JSON.stringify(retried.body),
				JSON.stringify(failed.body),
				`request ${failed.index}: the retry carries the same bytes`,
			);
		}
		assert.match(run.stdout, /batches done/);
		assert.doesNotMatch(run.stderr, /reset flag|cannot fold|compacted the context/);
	});
});
