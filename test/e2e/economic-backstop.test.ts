/**
 * The economic policy's backstop through real `pi`: when even folding every candidate would leave the
 * context above `backstopAt` of the window (here a big user message, which never folds, holds it
 * there) while it is still under the fold budget, context-fold compacts with its deterministic
 * summary: a fromHook compaction entry, no summarization request at the model server, and a notice
 * naming the backstop.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isSummarizationRequest, type ModelServer, startModelServer } from "./harness/model-server.ts";
import { createPiSandbox, type PiRpc, type PiSandbox, waitForEntries } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const OUR_HEADER = "[context-fold deterministic compaction summary]";

describe("economic policy: the backstop", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let rpc: PiRpc;

	before(async () => {
		server = await startModelServer((req) =>
			isSummarizationRequest(req) ? { text: "MODEL SUMMARY" } : { text: `reply ${req.index}` },
		);
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: {
				compaction: { keepRecentTokens: 1_000 },
				"context-fold": { policy: "economic", backstopAt: 0.3, budgetFraction: 0.95 },
			},
		});
		rpc = await sandbox.startRpc({ extensions: ["."], timeoutMs: 60_000 });
	});
	after(async () => {
		await rpc?.close();
		await server?.close();
		await sandbox?.cleanup();
	});

	it("compacts deterministically above the backstop, calls no model for it, and names the backstop", async () => {
		await rpc.prompt("Start: note the plan.");
		const big = `Constraints, keep verbatim:\n${"the parser must keep every byte of the input. ".repeat(700)}`;
		await rpc.prompt(big);
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		const compactions = await waitForEntries(state.sessionFile, "compaction");
		const usage = server.usages.at(-1)?.promptTokens ?? 0;
		assert.ok(usage > 0.3 * WINDOW && usage < 0.95 * WINDOW, `above the backstop, under the budget: ${usage}`);
		assert.equal(compactions.length, 1, rpc.stderr());
		assert.equal(compactions[0].fromHook, true);
		assert.ok(String(compactions[0].summary).startsWith(OUR_HEADER));
		assert.deepEqual(
			server.requests.filter((r) => isSummarizationRequest(r)).map((r) => r.index),
			[],
			"no summarization request",
		);
		assert.match(rpc.stderr(), /below the economic policy's backstop \(backstopAt 0\.3\)/);
		assert.match(rpc.stderr(), /compacting now with the deterministic summary \(no model call\)/);
	});
});
