/**
 * The economic policy's least event in a small window, through real `pi`. Pi compacts on its own once
 * usage passes the window less its `compaction.reserveTokens`; where that comes soon after `foldFrom`,
 * an event of `minEvent` tokens would rarely gather first, so the least event is at most a fifth of
 * that threshold. Here Pi's threshold is 10k (a 16k window, reserve 6,000): the least event is 2k,
 * not the 6k `minEvent` asks, and the batches fold while the context is still far from 10k. With Pi's
 * compaction off, nothing caps `minEvent` and the same session folds nothing. Neither run reaches
 * Pi's threshold: no compaction, no summarization request.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BATCH_PROMPT, BATCHES_DONE, batchSandbox } from "./harness/batches.ts";
import { ANY_TAG } from "./harness/fold-wire.ts";
import { isSummarizationRequest, type ModelServer, serializePrompt } from "./harness/model-server.ts";
import type { PiSandbox } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const RESERVE = 6_000;
const BATCHES = 10;
const RUN_TIMEOUT_MS = 90_000;
const KNOBS = {
	policy: "economic",
	foldFrom: 3_000,
	minEvent: 6_000,
	hotTail: 1000,
	coldTail: 1000,
	// A long horizon: any event pays for its rewrite, so firing depends on the least event alone.
	horizon: 1000,
	backstopAt: WINDOW,
	budgetFraction: 0.95,
};

for (const [label, compaction] of [
	["Pi's compaction on", { reserveTokens: RESERVE }],
	["Pi's compaction off", { enabled: false, reserveTokens: RESERVE }],
] as const)
	describe(`economic policy in a small window (${label})`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;

		before(async () => {
			({ server, sandbox } = await batchSandbox({
				count: BATCHES,
				contextWindow: WINDOW,
				settings: { compaction, "context-fold": KNOBS },
			}));
			const run = await sandbox.runPrint({
				prompt: BATCH_PROMPT,
				extensions: ["."],
				timeoutMs: RUN_TIMEOUT_MS,
			});
			assert.equal(run.code, 0, run.stderr);
			assert.equal(run.stdout.trim(), BATCHES_DONE, run.stderr);
		});
		after(async () => {
			await server?.close();
			await sandbox?.cleanup();
		});

		it("stays under Pi's own compaction threshold, reading from the cache", () => {
			const prompts = server.usages.map((u) => u?.promptTokens ?? 0);
			assert.ok(Math.max(...prompts) < WINDOW - RESERVE, `prompts ${prompts}`);
			assert.ok(
				server.usages.some((u) => (u?.cacheRead ?? 0) > 0),
				"the cache is warm",
			);
			assert.deepEqual(
				server.requests.filter((r) => isSummarizationRequest(r)).map((r) => r.index),
				[],
			);
		});

		const folding = () => server.requests.filter((req) => ANY_TAG.test(serializePrompt(req))).length;
		if (label === "Pi's compaction on") {
			it("folds once the least event (a fifth of 10k) can gather, well short of minEvent", () => {
				const first = server.requests.findIndex((req) => ANY_TAG.test(serializePrompt(req)));
				assert.ok(first > 0, "no request carries a folded block");
				const before = server.usages[first - 1]?.promptTokens ?? 0;
				assert.ok(before >= KNOBS.foldFrom, `usage before the first fold: ${before}`);
				assert.ok(before < KNOBS.hotTail + KNOBS.minEvent, `the event could not have reached minEvent: ${before}`);
			});
		} else {
			it("folds nothing: the least event stays minEvent", () => {
				assert.equal(folding(), 0);
			});
		}
	});
