/**
 * A compaction while the fold tools are left out of the active tools (`pi --tools bash`), through the
 * real `pi` CLI in RPC mode: three failing bash commands, then RPC `compact`. No summarization request
 * reaches the model server: the summary is context-fold's, every error line verbatim, and its preamble
 * says that recall_folded, which reads its codes back, is not active.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SUMMARY_HEADER } from "../../src/core/summary.ts";
import { type CapturedRequest, isSummarizationRequest, type Reply, toolResultsOf } from "./harness/model-server.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

const FAILURES = 3;

describe("a compaction with the fold tools left out (pi --tools bash --mode rpc)", () => {
	const script = (req: CapturedRequest): Reply => {
		if (isSummarizationRequest(req)) return { text: "A MODEL WROTE THIS SUMMARY" };
		const ran = toolResultsOf(req).length;
		const last = (req.body.messages as { role?: string }[]).at(-1)?.role;
		if (ran < FAILURES && last === "user")
			return {
				toolCalls: [
					{
						name: "bash",
						args: {
							command: `for i in $(seq 1 200); do echo "row $i"; done; echo 'Error: W_FAIL_${ran + 1}'; exit 1`,
						},
					},
				],
			};
		return { text: "ok" };
	};
	const run = rpcFixture(
		script,
		{ contextWindow: 200_000, settings: { compaction: { keepRecentTokens: 300 } } },
		{ extensions: ["."], timeoutMs: 120_000, args: ["--tools", "bash"] },
	);

	it("is context-fold's, written without a model, and says its codes wait for recall_folded", async () => {
		for (let k = 1; k <= FAILURES; k++) await run.rpc.prompt(`turn ${k}`);
		const compacted = await run.rpc.call<{ summary: string }>({ type: "compact" });
		assert.deepEqual(
			run.server.requests.filter((r) => isSummarizationRequest(r)).map((r) => r.index),
			[],
			"no summarization request",
		);
		assert.ok(compacted.summary.startsWith(SUMMARY_HEADER), compacted.summary.slice(0, 200));
		assert.doesNotMatch(compacted.summary, /A MODEL WROTE THIS SUMMARY/);
		for (let k = 1; k <= FAILURES; k++) assert.ok(compacted.summary.includes(`Error: W_FAIL_${k}`), `W_FAIL_${k}`);
		assert.match(
			compacted.summary,
			/recall_folded, which reads a block back\nby its code, is not active in this session/,
		);
	});
});
