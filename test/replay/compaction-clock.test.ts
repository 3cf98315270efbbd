/**
 * Pi's compactions in a replay happen on the recording's clock. Pi takes a reply stamped at or before
 * its latest compaction for one that predates it and never checks such a reply for a compaction
 * again; a compaction stamped with the machine's time (later than every reply of a recording made in
 * the past) kept plain Pi from compacting between runs after its first compaction, so it overflowed,
 * and a session's figures depended on when it was recorded.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { replayPolicy } from "../../src/replay/run.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const WINDOW = 40_000;

/** Forty prompts pasting about 3k tokens each, one short reply to each, recorded from `t0` on. */
function chat(t0: number) {
	const session = new SyntheticSession(t0);
	for (let k = 0; k < 40; k++) {
		const rows = Array.from({ length: 280 }, (_, i) => `row ${k}-${i}: id_${k}_${String(i).padStart(5, "0")}`);
		session.add(65 * k, { role: "user", content: [{ type: "text", text: `here is log ${k}:\n${rows.join("\n")}` }] });
		session.add(65 * k + 5, {
			role: "assistant",
			content: [{ type: "text", text: `noted log ${k}` }],
			stopReason: "stop",
		});
	}
	return session.script();
}

/** Plain Pi's compactions, requests and largest request over the chat recorded from `t0`. */
async function plainPi(t0: number) {
	const run = await replayPolicy(chat(t0), { name: "pi", kind: "pi" }, { window: WINDOW });
	const prompts = run.requests.map((r) => r.shape.tokens.reduce((a, b) => a + b, 0));
	return { compactions: run.compactions, requests: run.requests.length, peak: Math.max(...prompts) };
}

test("plain Pi compacts between runs after its first compaction, whenever the session was recorded", async () => {
	const past = await plainPi(Date.parse("2020-01-01T00:00:00.000Z"));
	const future = await plainPi(Date.parse("2100-01-01T00:00:00.000Z"));
	assert.deepEqual(past, future, "the same figures for a recording made before or after this run");
	assert.ok(past.compactions >= 3, `${past.compactions} compactions`);
	assert.ok(past.peak <= WINDOW, `a request of ${past.peak} tokens in a ${WINDOW}-token window`);
});
