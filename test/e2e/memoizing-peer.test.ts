/**
 * Another extension loaded before context-fold that hands on the message objects it keeps
 * (test/e2e/fixtures/memo-peer-extension.ts), through the real `pi` CLI: context-fold rewrites a request's
 * messages in place (Pi keeps its system messages where they are only for the same objects), so the
 * peer's objects came back to the next request holding digests, each read as a block changed since
 * its fold: sent raw, the peer blamed, and after two such events no more folding. Sixteen bash
 * batches in a 20k window: folding goes on, nothing is said changed, and every folded result stays
 * folded in the request after its fold.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { FoldTracker } from "./harness/fold-wire.ts";
import { type CapturedRequest, type Reply, toolResultsOf } from "./harness/model-server.ts";
import type { RunResult } from "./harness/pi-runner.ts";
import { readSessionFile } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const BATCHES = 16;

describe("a peer before context-fold that hands on the message objects it keeps", () => {
	const tracker = new FoldTracker();
	const script = (req: CapturedRequest): Reply => {
		tracker.observe(req);
		const n = toolResultsOf(req).length;
		if (req.index > 40) return { text: "guard: too many requests" };
		if (n >= BATCHES) return { text: "done" };
		const command = `for i in $(seq 1 250); do echo "batch ${n + 1} line $i ok"; done; echo "Error: planted failure ${n + 1}"`;
		return { toolCalls: [{ id: `toolu_memo_${n + 1}`, name: "bash", args: { command } }] };
	};
	const pi = scriptedPi(script, {
		contextWindow: 20_000,
		settings: { compaction: { enabled: false }, "context-fold": { policy: "ladder" } },
	});
	let run: RunResult;

	before(async () => {
		run = await pi.sandbox.runPrint({
			prompt: "Run the batches.",
			extensions: ["test/e2e/fixtures/memo-peer-extension.ts", "."],
			timeoutMs: 120_000,
		});
	});

	it("keeps folding without blaming the peer, and a folded result stays folded", async () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "done");
		assert.doesNotMatch(run.stderr, /changed since (it was|they were) folded|no new fold events this session/);
		const file = (await pi.sandbox.latestSessionFile()) ?? "";
		const layers = (await readSessionFile(file)).filter(
			(e) => e.customType === "contextfold.fold" && (e.data as { kind?: string })?.kind === "layer",
		);
		assert.ok(layers.length >= 3, `${layers.length} fold events`);
		// Once folded, a result goes out folded on every later request (it never reads as changed).
		const requests = pi.server.requests;
		for (const [callId] of tracker.codes) {
			const first = requests.findIndex((r) => /^\{#[0-9a-z]{8} FOLDED\}/.test(resultOf(r, callId)));
			for (const later of requests.slice(first + 1))
				assert.match(resultOf(later, callId), /^\{#[0-9a-z]{8} FOLDED\}/, `${callId} went out raw again`);
		}
	});
});

/** The text of the result of `callId` in a request ("" when it carries none). */
function resultOf(req: CapturedRequest, callId: string): string {
	return toolResultsOf(req).find((r) => r.toolCallId === callId)?.text ?? "";
}
