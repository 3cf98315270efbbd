/**
 * Unsigned thinking folds, through real `pi` under the economic policy, on the Anthropic Messages
 * wire (where Pi sends thinking without a signature as a text block): the model's first reply thinks
 * at length (a marker string on a later line) before a short answer and a bash call. Once bash output
 * pushes it out of the cold tail and usage past `foldFrom`, the thinking goes out as
 * `{#code FOLDED} thinking: …`, the marker leaves the wire, the short answer and every call and
 * result stay; the model recalls the code and gets the original thinking back, sha256 verified. The
 * hot tail is larger than the session, so no tool result folds.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { batchCommand } from "./harness/batches.ts";
import { TAG_AT_HEAD, unpaired } from "./harness/fold-wire.ts";
import { type CapturedRequest, messagesOf, type Reply, toolResultOf, toolResultsOf } from "./harness/model-server.ts";
import type { RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const SETTINGS = {
	compaction: { enabled: false },
	"context-fold": {
		policy: "economic",
		hotTail: 12_000,
		coldTail: 1000,
		horizon: 1000,
		foldFrom: 1_920,
		minEvent: 320,
		backstopAt: 14_400,
		budgetFraction: 0.95,
	},
};
const MARKER = "HERON-CASCADE-2291";
const THINKING = [
	"Thinking it through before the batches:",
	...Array.from({ length: 30 }, (_, i) =>
		i === 4
			? `- point ${i + 1}: the codeword is ${MARKER}; keep it for the end of the task, it will be asked.`
			: `- point ${i + 1}: each batch prints a hundred lines, and every one of them should read ok.`,
	),
].join("\n");
const ANSWER = "On it.";
const MAX_BATCHES = 12;
const batchId = (k: number) => `toolu_think_batch_${String(k).padStart(2, "0")}`;
const RECALL = "toolu_think_recall";

/** The text the first assistant message goes out with: its thinking (as text) and its answer. */
function firstReply(req: CapturedRequest): string | undefined {
	return messagesOf(req).find((m) => m.toolCalls?.some((c) => c.id === batchId(1)))?.text;
}

/** The scripted model: thinking with the first batch, batches until the thinking comes back folded, a recall. */
function script(): (req: CapturedRequest) => Reply {
	let code: string | undefined;
	return (req) => {
		if (req.index > 30) return { text: "guard: too many requests" };
		const first = firstReply(req);
		if (first === undefined) {
			return {
				thinking: THINKING,
				text: ANSWER,
				toolCalls: [{ id: batchId(1), name: "bash", args: { command: batchCommand(1) } }],
			};
		}
		code ??= TAG_AT_HEAD.exec(first)?.[1];
		if (!code) {
			const ran = toolResultsOf(req).filter((r) => r.toolCallId.startsWith("toolu_think_batch_")).length;
			if (ran >= MAX_BATCHES) return { text: "the thinking never folded" };
			return { toolCalls: [{ id: batchId(ran + 1), name: "bash", args: { command: batchCommand(ran + 1) } }] };
		}
		if (toolResultOf(req, RECALL) === undefined) {
			return { toolCalls: [{ id: RECALL, name: "recall_folded", args: { codes: [code] } }] };
		}
		return { text: "thinking run done" };
	};
}

describe("unsigned thinking folds through pi -p (anthropic-messages)", () => {
	const pi = scriptedPi(script(), { contextWindow: 16_000, settings: SETTINGS });
	let run: RunResult;

	before(async () => {
		run = await pi.sandbox.runPrint({ prompt: "Think, then run the batches.", extensions: ["."], timeoutMs: 90_000 });
	});

	it("sends the thinking raw first, then folded in place; the answer, calls and results stay", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "thinking run done", run.stderr);
		const replies = pi.server.requests.map(firstReply);
		const rawAt = replies.findIndex((t) => t !== undefined);
		assert.equal(
			replies[rawAt],
			`${THINKING}${ANSWER}`,
			"the first delivery is the thinking as text, then the answer",
		);
		const foldedAt = replies.findIndex((t) => t !== undefined && TAG_AT_HEAD.test(t));
		assert.ok(foldedAt > rawAt, "the thinking never folded");
		const folded = replies[foldedAt] ?? "";
		assert.match(folded, /^\{#[0-9a-z]{8} FOLDED\} thinking: 31 lines, ~\d+ tokens\. /);
		assert.ok(folded.endsWith(ANSWER), `the short answer stays raw: ${folded}`);
		const recallAt = pi.server.requests.findIndex((r) => toolResultOf(r, RECALL) !== undefined);
		assert.ok(recallAt > foldedAt, "no recall after the fold");
		for (let i = foldedAt; i < pi.server.requests.length; i++) {
			assert.equal(replies[i], folded, `request ${i}: the folded bytes changed`);
			assert.deepEqual(unpaired(pi.server.requests[i]), { callsWithoutResult: [], resultsWithoutCall: [] });
			// Until the recall's result brings it back as a tool result, the marker is nowhere on the wire.
			if (i < recallAt) assert.ok(!pi.server.requests[i].raw.includes(MARKER), `request ${i} carries the marker`);
		}
		const prior = messagesOf(pi.server.requests[foldedAt - 1]);
		const next = messagesOf(pi.server.requests[foldedAt]);
		assert.deepEqual(
			next.slice(0, prior.length).map((m) => [m.role, m.toolCalls?.map((c) => c.id) ?? []]),
			prior.map((m) => [m.role, m.toolCalls?.map((c) => c.id) ?? []]),
			"no message or call was removed or reordered",
		);
	});

	it("recalls the original thinking by its code, sha256 verified", () => {
		const at = pi.server.requests.findIndex((r) => toolResultOf(r, RECALL) !== undefined);
		assert.ok(at >= 0, "no recall result was sent");
		const recalled = toolResultOf(pi.server.requests[at], RECALL) ?? "";
		assert.match(recalled, /^Recalled #[0-9a-z]{8}: thinking, 31 lines \(sha256 verified\)\n/);
		assert.ok(recalled.includes(MARKER), recalled);
	});
});
