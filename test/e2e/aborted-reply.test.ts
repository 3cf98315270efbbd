/**
 * A reply the user aborted, through the real `pi` CLI: pi-ai leaves a reply that was aborted (or
 * failed) out of every later request, so context-fold counts it as nothing and never folds it. A
 * long answer cut off mid-stream (RPC `abort`) then neither fires a fold event that its phantom
 * tokens alone would justify, nor becomes a folded block of its own: the next request carries the
 * tool results raw and no digest.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TAG_AT_HEAD } from "./harness/fold-wire.ts";
import { type CapturedRequest, lastUserText, messagesOf, type Reply, toolResultsOf } from "./harness/model-server.ts";
import { readSessionFile } from "./harness/pi-runner.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

/** A bash command printing 300 lines, then an error line. */
const output = (label: string) =>
	`for i in $(seq 1 300); do echo "${label} line $i ok some padding text here"; done; echo "Error: planted ${label}"`;

/** "go": two bash calls, then "done"; "answer at length": a long answer that stalls until aborted. */
function script(req: CapturedRequest): Reply {
	const user = lastUserText(req) ?? "";
	const ran = toolResultsOf(req).length;
	if (user === "go" && messagesOf(req).at(-1)?.role !== "assistant") {
		if (ran < 2) return { toolCalls: [{ name: "bash", args: { command: output(`b${ran + 1}`) } }] };
		return { text: "done" };
	}
	if (user === "answer at length") return { text: "long answer word ".repeat(2_400), stall: true };
	return { text: "ok" };
}

describe("an aborted reply", () => {
	const run = rpcFixture(
		script,
		{
			contextWindow: 20_000,
			maxTokens: 16_000,
			settings: {
				compaction: { enabled: false },
				"context-fold": { policy: "working-set", foldFrom: 8000, minEvent: 2000, hotTail: 1000 },
			},
		},
		{ extensions: ["."], timeoutMs: 60_000 },
	);

	it("adds nothing to the context size and is never folded", async () => {
		const { server, rpc } = run;
		await rpc.prompt("go");
		const from = rpc.records.length;
		await rpc.send({ type: "prompt", message: "answer at length" });
		await rpc.waitFor((r) => r.type === "message_update", { from });
		await new Promise((resolve) => setTimeout(resolve, 1_000));
		await rpc.call({ type: "abort" });
		await rpc.waitFor((r) => r.type === "agent_settled", { from });
		const before = server.requests.length;
		await rpc.prompt("next");
		const next = server.requests[before];
		assert.ok(next, "the prompt after the abort reached the model");
		assert.ok(!messagesOf(next).some((m) => m.role === "assistant" && m.text.includes("long answer word")));
		const results = toolResultsOf(next);
		assert.equal(results.length, 2);
		for (const r of results) assert.doesNotMatch(r.text, TAG_AT_HEAD, "no fold event for tokens never sent");
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		const folds = (await readSessionFile(state.sessionFile)).filter((e) => e.customType === "contextfold.fold");
		assert.deepEqual(folds, [], "no fold records");
	});
});
