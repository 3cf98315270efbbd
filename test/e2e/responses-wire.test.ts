/**
 * context-fold on OpenAI's Responses API, through the real `pi` CLI with reasoning on (`--thinking low`
 * on a model declaring `reasoning: true`): every scripted reply carries a reasoning item with an
 * `encrypted_content`, which Pi keeps as the thinking block's signature and sends back as it came. One
 * `pi -p` run: bash batches until a request carries a digest, then the model recalls the first batch by
 * its code, unfolds it, and runs one more small command. Every assertion is on the request bodies the
 * scripted model server captured: each function_call is answered by exactly one function_call_output
 * after it, a folded output begins with its fold tag, every reasoning item goes out byte-identical in
 * every later request, between fold events each `input` extends the previous one byte for byte, no body
 * carries `cache_control`, and the recall serves the original lines, sha256 verified.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { batchCommand, batchLines } from "./harness/batches.ts";
import {
	analyze,
	FoldTracker,
	headJson,
	linesOf,
	messageJson,
	prefixBreak,
	type RequestFolds,
	resultText,
	TAG_AT_HEAD,
} from "./harness/fold-wire.ts";
import type { CapturedRequest, JsonObject, Reply } from "./harness/model-server.ts";
import { type RunResult, readSessionFile } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const WINDOW = 16_000;
const SETTINGS = {
	compaction: { enabled: false },
	"context-fold": { policy: "ladder", foldAt: 0.3, step: 0.1, budgetFraction: 0.95, tail: 1000 },
};
const MAX_BATCHES = 16;
const RUN_TIMEOUT_MS = 90_000;
const DONE = "responses run done";
const batchId = (k: number) => `call_batch_${String(k).padStart(2, "0")}`;
const RECALL = "call_recall";
const UNFOLD = "call_unfold";
const AFTER = "call_after";

/** The summary of the reasoning the model sends with its reply to request `index`. */
function thinkingOf(index: number): string {
	return `Step ${index}: read what the last command printed.\nThen decide on the next command.`;
}

/** The scripted model's next move, a function of the results the request carries and the digests seen. */
function nextMove(req: CapturedRequest, tracker: FoldTracker): Reply {
	if (req.index > 40) return { text: "guard: too many requests" };
	const folds = tracker.observe(req);
	const has = (callId: string) => folds.results.some((r) => r.id === callId);
	const call = (id: string, name: string, args: Record<string, unknown>): Reply => ({
		toolCalls: [{ id, name, args }],
	});
	const code = tracker.codes.get(batchId(1));
	if (!code) {
		const k = folds.results.filter((r) => r.id.startsWith("call_batch_")).length + 1;
		if (k > MAX_BATCHES) return { text: "batch 1 never folded" };
		return call(batchId(k), "bash", { command: batchCommand(k) });
	}
	if (!has(RECALL)) return call(RECALL, "recall_folded", { codes: [code] });
	if (!has(UNFOLD)) return call(UNFOLD, "unfold", { codes: [code] });
	if (!has(AFTER)) return call(AFTER, "bash", { command: "echo after the unfold" });
	return { text: DONE };
}

/** The Responses `input` items of a request. */
function inputOf(req: CapturedRequest): JsonObject[] {
	return Array.isArray(req.body.input) ? (req.body.input as JsonObject[]) : [];
}

/** Calls not answered by exactly one output after them, and outputs with no call before them. */
function pairingFaults(req: CapturedRequest): string[] {
	const items = inputOf(req);
	const faults: string[] = [];
	items.forEach((item, at) => {
		const same = (type: string) =>
			items.flatMap((other, i) => (other.type === type && other.call_id === item.call_id ? [i] : []));
		if (item.type === "function_call") {
			const outputs = same("function_call_output");
			if (outputs.length !== 1 || outputs[0] < at) faults.push(`${item.call_id} at ${at}: outputs at ${outputs}`);
		} else if (item.type === "function_call_output" && !same("function_call").some((i) => i < at)) {
			faults.push(`output ${item.call_id} at ${at} answers no earlier call`);
		}
	});
	return faults;
}

/** Index of the first request carrying the result of `callId`. */
function firstWith(folds: readonly RequestFolds[], callId: string): number {
	const i = folds.findIndex((f) => f.results.some((r) => r.id === callId));
	assert.ok(i >= 0, `no request carries the result of ${callId}`);
	return i;
}

describe("context-fold through pi -p on the OpenAI Responses wire, reasoning on", () => {
	const tracker = new FoldTracker();
	const pi = scriptedPi((req) => ({ thinking: thinkingOf(req.index), ...nextMove(req, tracker) }), {
		api: "openai-responses",
		contextWindow: WINDOW,
		modelExtra: { reasoning: true },
		settings: SETTINGS,
	});
	let run: RunResult;
	let folds: RequestFolds[] = [];

	before(async () => {
		run = await pi.sandbox.runPrint({
			prompt: "Run the batches, then look back at the first one.",
			extensions: ["."],
			args: ["--thinking", "low"],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		folds = analyze(pi.server.requests);
	});

	it("runs to the scripted end on the Responses wire, asking for encrypted reasoning", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), DONE, run.stderr);
		assert.deepEqual(pi.server.errors, []);
		for (const req of pi.server.requests) {
			assert.equal(req.path, "/v1/responses");
			assert.deepEqual(req.body.reasoning, { effort: "low", summary: "auto" }, `request ${req.index}`);
			assert.deepEqual(req.body.include, ["reasoning.encrypted_content"], `request ${req.index}`);
			assert.equal(req.body.store, false);
		}
	});

	it("every function_call has exactly one function_call_output with its call_id after it", () => {
		for (const req of pi.server.requests) assert.deepEqual(pairingFaults(req), [], `request ${req.index}`);
		const calls = inputOf(pi.server.requests.at(-1) as CapturedRequest).filter((i) => i.type === "function_call");
		assert.ok(calls.length >= 5, `only ${calls.length} calls in the last request`);
	});

	it("a folded output begins with its fold tag; no other output changes", () => {
		const first = folds.findIndex((f) => f.folded.size > 0);
		assert.ok(first > 0, "no request carries a digest");
		for (const f of folds) {
			assert.deepEqual(f.mutated, [], `request ${f.index}: outputs changed without a fold tag`);
			for (const [callId, digest] of f.folded) {
				assert.match(digest.text, TAG_AT_HEAD, `request ${f.index}: ${callId}`);
				assert.match(digest.text, /^\{#[0-9a-z]{8} FOLDED\} bash: 100 lines/, `request ${f.index}: ${callId}`);
				assert.ok(!digest.text.includes("line 50 ok"), `request ${f.index}: ${callId} digest carries ok lines`);
			}
		}
		assert.ok(folds[first].folded.has(batchId(1)), "the first fold event leaves batch 1 raw");
	});

	it("every reasoning item goes out byte-identical in every later request, never digested", () => {
		const sent = new Map<string, string>();
		for (const req of pi.server.requests) {
			const reasoning = inputOf(req).filter((item) => item.type === "reasoning");
			// One reasoning item per earlier reply, in order: none dropped, none added.
			assert.deepEqual(
				reasoning.map((item) => item.id),
				Array.from({ length: req.index }, (_, i) => `rs_e2e_${i}`),
				`request ${req.index}`,
			);
			for (const item of reasoning) {
				const json = JSON.stringify(item);
				const id = String(item.id);
				if (!sent.has(id)) {
					assert.deepEqual(item.summary, [{ type: "summary_text", text: thinkingOf(Number(id.slice(7))) }]);
					assert.match(String(item.encrypted_content), /^gAAAA[A-Za-z0-9+/=]{40,}$/, id);
					sent.set(id, json);
				}
				assert.equal(json, sent.get(id), `request ${req.index}: ${id} changed`);
				assert.ok(req.raw.includes(json), `request ${req.index}: ${id} is not in the body byte for byte`);
				assert.doesNotMatch(json, /FOLDED/, `request ${req.index}: ${id}`);
			}
		}
		assert.ok(sent.size >= 8, `only ${sent.size} reasoning items`);
	});

	it("between fold events each request's input extends the previous one's byte for byte, and the cache is read", async () => {
		const { requests, usages } = pi.server;
		let quiet = 0;
		let events = 0;
		for (let i = 0; i + 1 < requests.length; i++) {
			if (folds[i].signature !== folds[i + 1].signature) {
				events++;
				continue;
			}
			quiet++;
			assert.equal(headJson(requests[i + 1]), headJson(requests[i]), `request ${i + 1}: tools moved`);
			const a = messageJson(requests[i]);
			const b = messageJson(requests[i + 1]);
			const at = prefixBreak(a, b);
			assert.equal(at, -1, `requests ${i} → ${i + 1}: item ${at} changed\n${a[at]?.slice(0, 300)}\n---\n${b[at]}`);
			// The simulated cache reads the whole previous prompt (all but its closing `]}`).
			assert.ok(
				usages[i + 1]!.commonPrefixChars >= usages[i]!.promptChars - 2,
				`request ${i + 1}: cached prefix ${usages[i + 1]!.commonPrefixChars} of ${usages[i]!.promptChars} chars`,
			);
		}
		assert.ok(events >= 2, `expected a fold event and the unfold, saw ${events} changes`);
		assert.ok(quiet >= 6, `only ${quiet} request pairs without a fold event`);

		// Pi read the usage of every response, cached tokens included, as the server reported it.
		const file = await pi.sandbox.latestSessionFile();
		assert.ok(file, "no session file");
		const recorded = (await readSessionFile(file)).flatMap((e) => {
			const m = e.message as { role?: string; usage?: { input: number; cacheRead: number } } | undefined;
			return m?.role === "assistant" && m.usage ? [{ input: m.usage.input, cacheRead: m.usage.cacheRead }] : [];
		});
		assert.deepEqual(
			recorded,
			usages.map((u) => ({ input: u!.input, cacheRead: u!.cacheRead })),
		);
		assert.ok(
			recorded.slice(1).every((u) => u.cacheRead > 0),
			"a response after the first read nothing",
		);
	});

	it("no request body carries cache_control", () => {
		for (const req of pi.server.requests) assert.ok(!req.raw.includes("cache_control"), `request ${req.index}`);
	});

	it("recall_folded serves the original lines, sha256 verified; unfold brings batch 1 back raw", () => {
		const raw1 = resultText(folds[firstWith(folds, batchId(1))], batchId(1));
		assert.deepEqual(linesOf(String(raw1).replace(/\n$/, "")), batchLines(1), "batch 1's first delivery is raw");
		const code = tracker.codes.get(batchId(1));

		const recallAt = firstWith(folds, RECALL);
		assert.ok(folds[recallAt - 1].folded.has(batchId(1)), "batch 1 was not folded when the model recalled it");
		const recall = String(resultText(folds[recallAt], RECALL));
		assert.match(recall, new RegExp(`^Recalled #${code}: bash, 100 lines \\(sha256 verified\\)\\n`));
		const recalled = linesOf(recall);
		for (const line of batchLines(1)) assert.ok(recalled.includes(line), `the recall lacks "${line}"`);

		const unfoldAt = firstWith(folds, UNFOLD);
		assert.match(String(resultText(folds[unfoldAt], UNFOLD)), new RegExp(`^Unfolded #${code}:`));
		assert.ok(folds[unfoldAt - 1].folded.has(batchId(1)), "batch 1 was already raw before the unfold");
		for (let i = unfoldAt; i < folds.length; i++) {
			assert.equal(resultText(folds[i], batchId(1)), raw1, `request ${i}: batch 1 is not raw`);
		}
	});
});
