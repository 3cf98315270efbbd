/**
 * No digest reaches the model in a request that does not declare recall_folded, through the real
 * `pi` CLI: another extension's `context` handler, run first, makes every tool result larger than
 * the session holds it, so context-fold's look-ahead (planned on the stored conversation) misses
 * the request that first folds. That request goes out raw and declares the fold tools; the next one
 * folds, with them.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { analyze, unpaired } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	type ModelServer,
	type Reply,
	startModelServer,
	toolNamesOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox, type RunResult } from "./harness/pi-runner.ts";

const BATCHES = 10;

describe("a look-ahead that misses the first fold (another extension grows the results)", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let run: RunResult;

	before(async () => {
		server = await startModelServer((req: CapturedRequest): Reply => {
			if (req.index >= BATCHES) return { text: "done" };
			const k = req.index + 1;
			const command = `for i in $(seq 1 300); do echo "batch ${k} line $i ok"; done`;
			return { toolCalls: [{ id: `toolu_b${k}`, name: "bash", args: { command } }] };
		});
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: 16_000,
			settings: {
				compaction: { enabled: false },
				"context-fold": { policy: "working-set", foldFrom: 5000, minEvent: 1500, hotTail: 1000 },
			},
		});
		run = await sandbox.runPrint({
			prompt: "Run the ten batches.",
			extensions: ["test/e2e/fixtures/grow-results-extension.ts", "."],
			timeoutMs: 120_000,
		});
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("sends every digest with recall_folded declared, and still folds", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.deepEqual(server.errors, []);
		const folds = analyze(server.requests);
		const folding = server.requests.filter((_, i) => folds[i].folded.size > 0);
		assert.ok(folding.length > 0, "the session folds");
		for (const req of folding) {
			assert.ok(toolNamesOf(req).includes("recall_folded"), `request ${req.index} folds without recall_folded`);
		}
		// The first folding request is not the first to declare the tools only when the plan foresaw it.
		const declaring = server.requests.findIndex((r) => toolNamesOf(r).includes("recall_folded"));
		assert.ok(
			declaring >= 0 && declaring <= folding[0].index,
			`declared at ${declaring}, folded at ${folding[0].index}`,
		);
		for (const req of server.requests)
			assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] });
	});
});
