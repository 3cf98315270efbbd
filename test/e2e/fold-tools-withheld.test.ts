/**
 * The fold tools left out of the active tools, through the real `pi` CLI (`--tools bash`, the user's
 * own selection; another extension's `setActiveTools` is the same case): the model could not read a
 * folded block back, so nothing new folds, and the user is told why once. Every request goes out with
 * its tool results raw.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TAG_AT_HEAD } from "./harness/fold-wire.ts";
import { type CapturedRequest, messagesOf, type Reply, toolNamesOf, toolResultsOf } from "./harness/model-server.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

/** Eight bash calls of 300 lines each, then a short answer. */
function script(req: CapturedRequest): Reply {
	const ran = toolResultsOf(req).length;
	if (messagesOf(req).at(-1)?.role === "assistant" || ran >= 8) return { text: "done" };
	return {
		toolCalls: [{ name: "bash", args: { command: `for i in $(seq 1 300); do echo "b${ran} line $i ok"; done` } }],
	};
}

describe("recall_folded and unfold left out of the active tools", () => {
	const run = rpcFixture(
		script,
		{
			contextWindow: 20_000,
			settings: {
				compaction: { enabled: false },
				"context-fold": { policy: "working-set", foldFrom: 6000, minEvent: 2000, hotTail: 1000 },
			},
		},
		{ extensions: ["."], args: ["--tools", "bash"], timeoutMs: 90_000 },
	);

	it("fold nothing new, and say why once", async () => {
		const { server, rpc } = run;
		await rpc.prompt("go");
		assert.ok(server.requests.length >= 9);
		for (const req of server.requests) {
			assert.ok(!toolNamesOf(req).includes("recall_folded"), "the selection keeps recall_folded out");
			for (const r of toolResultsOf(req)) assert.doesNotMatch(r.text, TAG_AT_HEAD, `request ${req.index} folds`);
		}
		const said = rpc
			.stderr()
			.split("\n")
			.filter((l) => l.includes("recall_folded and unfold are not active"));
		assert.equal(said.length, 1, rpc.stderr());
	});
});
