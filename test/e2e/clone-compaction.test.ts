/**
 * A compaction in a clone of a clone, through the real `pi` CLI (RPC `clone`, as `/clone` does): the
 * seed index lives beside each session under its id, and a clone has a new id. A clone starts from
 * the index records of the sessions it descends from, so its next compaction merges the parent's earlier summary as the
 * parent's own next compaction does, instead of carrying it over clipped as a lost index; the two
 * summaries, made at the same point of the same conversation, are the same but for the codes of the
 * last run's blocks (Pi gave its tool calls other ids in each session).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type CapturedRequest, isSummarizationRequest, lastUserText, messagesOf } from "./harness/model-server.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

/** "RUN <tag> <n>": n bash calls of 300 lines each, then a short answer; anything else: "ok". */
function script(req: CapturedRequest) {
	if (isSummarizationRequest(req)) return { text: "MODEL SUMMARY" };
	const run = /^RUN (\w+) (\d+)/.exec(lastUserText(req) ?? "");
	if (!run) return { text: "ok" };
	const ran = messagesOf(req).filter((m) => m.role === "tool").length;
	const done = messagesOf(req).filter((m) => m.role === "tool" && m.text.includes(`${run[1]} blk`)).length;
	if (done >= Number(run[2])) return { text: `done ${run[1]}` };
	const command = `for i in $(seq 1 300); do echo "${run[1]} blk ${done} line $i payload-${ran}"; done`;
	return { toolCalls: [{ name: "bash", args: { command } }] };
}

describe("a compaction in a cloned session", () => {
	const run = rpcFixture(
		script,
		{ contextWindow: 20_000, settings: { compaction: { enabled: false, keepRecentTokens: 400 } } },
		{ extensions: ["."], timeoutMs: 90_000 },
	);

	it("merges the first session's earlier summary as that session's own compaction does", async () => {
		const { server, rpc } = run;
		const file = async () => (await rpc.call<{ sessionFile: string }>({ type: "get_state" })).sessionFile;
		await rpc.prompt("RUN t 3");
		await rpc.prompt("RUN a 4");
		const first = await rpc.call<{ summary: string }>({ type: "compact" });
		assert.ok(first.summary.length > 0);
		await rpc.prompt("RUN c 3");
		const parent = await file();

		// A clone of a clone: the second reads its grandparent's index through its parent's header.
		await rpc.call({ type: "clone" });
		const clone = await file();
		assert.notEqual(clone, parent);
		await rpc.call({ type: "clone" });
		assert.notEqual(await file(), clone);
		await rpc.prompt("RUN d 2");
		const inClone = (await rpc.call<{ summary: string }>({ type: "compact" })).summary;

		await rpc.call({ type: "switch_session", sessionPath: parent });
		await rpc.prompt("RUN d 2");
		const inParent = (await rpc.call<{ summary: string }>({ type: "compact" })).summary;

		assert.doesNotMatch(inClone, /Carried from the previous compaction/, inClone);
		// The last run's tool calls got other ids in each session, so their blocks other codes.
		const codeless = (summary: string) => summary.replace(/\{#[0-9a-z]{8} FOLDED\}/g, "{#code FOLDED}");
		assert.equal(codeless(inClone), codeless(inParent));
		assert.equal(server.requests.filter((r) => isSummarizationRequest(r)).length, 0, "no model summary");
	});
});
