/**
 * Pi's idle cache warming asks extensions before each refresh (`cache_warming_decision`); context-fold
 * answers stop when a fold event is due, since the next request rewrites the cached suffix anyway.
 * Through real `pi` in RPC mode with a 12-second prompt-cache lifetime (a refresh is due 2 s after
 * each request) and costs that make warming pay by Pi's own rule:
 * - with no event due (past the first-fold threshold, but the least event size, the ladder's `step` or
 *   the economic policy's `minEvent`, can never be reached and usage is under the budget) a refresh
 *   request (max_tokens 1) reaches the server;
 * - once the last response reports a prompt past the budget with foldable results outside the tail
 *   (an urgent event is due on the next request), context-fold stops the warming and no refresh
 *   request follows. The crossing uses Pi's estimate: a user message of double quotes counts a
 *   quarter token per character to Pi but half a token to the server (JSON escapes each quote), so
 *   the request itself goes out under the budget, unfolded, and its response reports it past. The next
 *   real request carries the folded blocks: the event was indeed due.
 * Both profiles run the same script.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BATCH_PROMPT, batchSandbox } from "./harness/batches.ts";
import { ANY_TAG } from "./harness/fold-wire.ts";
import { type CapturedRequest, type ModelServer, serializePrompt } from "./harness/model-server.ts";
import type { PiRpc, PiSandbox } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const BUDGET = WINDOW / 2;
const BATCHES = 4;
const STOPPED = "context-fold: cache warming stopped: a fold event is due";

const isRefresh = (req: CapturedRequest) => req.body.max_tokens === 1;

const PROFILES: Record<string, Record<string, unknown>> = {
	ladder: { policy: "ladder", foldAt: 0.2, step: 0.9, budgetFraction: 0.5, floor: 0.02, tail: 1000, debug: true },
	economic: {
		policy: "economic",
		foldFrom: 3_200,
		minEvent: 14_400,
		hotTail: 1000,
		coldTail: 1000,
		backstopAt: 16_000,
		budgetFraction: 0.5,
		floor: 0.02,
		debug: true,
	},
};

for (const [profile, knobs] of Object.entries(PROFILES))
	describe(`cache warming decision (${profile})`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;
		let rpc: PiRpc;

		const waitFor = async (what: string, test: () => boolean) => {
			for (let i = 0; i < 300 && !test(); i++) await new Promise((r) => setTimeout(r, 100));
			assert.ok(test(), `${what}\n${rpc.stderr()}`);
		};

		before(async () => {
			({ server, sandbox } = await batchSandbox({
				count: BATCHES,
				other: "Noted.",
				contextWindow: WINDOW,
				modelExtra: {
					promptCache: { short: 12 },
					cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 500 },
				},
				settings: {
					cacheWarming: "idle",
					compaction: { enabled: false },
					"context-fold": knobs,
				},
			}));
			rpc = await sandbox.startRpc({ extensions: ["."], timeoutMs: 60_000 });
		});
		after(async () => {
			await rpc?.close();
			await server?.close();
			await sandbox?.cleanup();
		});

		it("with no fold event due, Pi's idle refresh reaches the server", async () => {
			await rpc.prompt(BATCH_PROMPT);
			const prompt = server.usages.at(-1)?.promptTokens ?? 0;
			assert.ok(prompt > 0.2 * WINDOW && prompt < BUDGET, `past the threshold, under the budget: ${prompt}`);
			await waitFor("a warming refresh request", () => server.requests.some(isRefresh));
			assert.doesNotMatch(rpc.stderr(), /cache warming stopped/);
		});

		it("with a fold event due, context-fold stops the warming and no refresh follows", async () => {
			const before = server.usages.at(-1)?.promptTokens ?? 0;
			// Pi counts each quote as a quarter token, the server as half: aim between the two.
			const quotes = Math.ceil(((BUDGET - before) * 8) / 3);
			await rpc.prompt(`Keep this: ${'"'.repeat(quotes)}`);
			const real = server.requests.filter((r) => !isRefresh(r)).at(-1);
			assert.ok(real);
			const prompt = server.usages[real.index]?.promptTokens ?? 0;
			assert.ok(prompt > BUDGET, `the response reports the prompt past the budget: ${prompt}`);
			assert.equal(ANY_TAG.test(serializePrompt(real)), false, "that request went out unfolded");
			await waitFor("context-fold stops the warming", () => rpc.stderr().includes(STOPPED));
			await rpc.prompt("Next.");
			const next = server.requests.filter((r) => !isRefresh(r)).at(-1);
			assert.ok(next && next.index > real.index);
			assert.equal(ANY_TAG.test(serializePrompt(next)), true, "the next request folds: the event was due");
			assert.deepEqual(
				server.requests.filter((r) => r.index > real.index && r.index < next.index).map((r) => r.index),
				[],
				"no refresh between the stop and the next request",
			);
		});
	});
