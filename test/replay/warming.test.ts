/**
 * The warming answer in the replay, through the real Pi SDK: after a recorded idle gap long enough for
 * a refresh, the replay asks the extensions Pi's `cache_warming_decision` question, and context-fold
 * answers stop when a fold event is due on the next request, which then rewrites the cache anyway.
 *
 * The synthetic session reads a large file (10k tokens, the fold candidate), then a result made of
 * 8,000 one-character blocks: Pi's estimate counts their characters, the provider (here the faux one)
 * also pays the join between blocks, so the response reports about 2,000 tokens more than the usage
 * the request was planned with. The first-fold threshold (15k of a 100k window) lies between the two:
 * the request goes out unfolded, and in the 10-minute gap after it a fold event is due. With the
 * threshold above both, nothing is due and Pi warms; `pi` has no answer and always warms. The
 * prompts are small, so these runs are priced at DEAR's prices, where every refresh pays (at real
 * prices Pi would not warm them between runs); the last test weighs Pi's rule at real prices.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runJob } from "../../src/replay/jobs.ts";
import { parseArgs } from "../../src/replay/options.ts";
import type { ReplayPolicy } from "../../src/replay/policy-run.ts";
import { PRICE_MODELS } from "../../src/replay/price.ts";
import { policyFigures } from "../../src/replay/report.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { DEAR } from "./dear-model.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const WINDOW = 100_000;
const session = new SyntheticSession(T0);
const add = (second: number, message: Record<string, unknown>): void => session.add(second, message);
const read = (second: number, id: string, content: { type: "text"; text: string }[]) =>
	session.read(second, id, content);
add(1, { role: "user", content: [{ type: "text", text: "look at both files" }] });
read(2, "c1", [{ type: "text", text: "x".repeat(40_000) }]);
read(
	3,
	"c2",
	Array.from({ length: 8000 }, () => ({ type: "text" as const, text: "a" })),
);
add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
add(605, { role: "user", content: [{ type: "text", text: "again" }] });
add(606, { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" });
const script = session.script();

const fold = (foldAt: number): ReplayPolicy => ({
	name: "context-fold",
	kind: "context-fold",
	settings: { policy: "ladder", foldAt, coldFoldAt: foldAt, step: 0.05, tail: 2000 },
});

test("a fold event due at the idle gap: context-fold stops the warming, the next request rewrites", async () => {
	const run = await replayPolicy(script, fold(0.15), { window: WINDOW, cache: { model: DEAR, warming: true } });
	assert.deepEqual(run.divergences, {});
	assert.deepEqual(
		run.requests.map((r) => [r.at - T0, r.warmingStopped === true]),
		[
			[2000, false],
			[3000, false],
			[4000, false],
			[606_000, true],
		],
	);
	const figures = policyFigures(script, run, DEAR, true, WINDOW);
	assert.deepEqual(
		figures.rewriteEvents.map((e) => e.request),
		[3],
		"the fold event is the request after the gap",
	);
	assert.equal(figures.warmRefreshes, 0);
	assert.equal(figures.warmStopped, 2, "refreshes due at 274 s and 544 s");
	const lastPrompt = run.requests[2].shape.tokens.reduce((a, b) => a + b, 0);
	assert.equal(figures.warmStoppedCost, 2 * lastPrompt * 0.1, "each a full read of the last request");
	assert.ok(figures.warmStopSaving > 0, "under Anthropic's breakpoints the fold loses no read the refresh kept");
});

test("no fold event due at the gap, or no answer: Pi warms, each refresh in the cost of the request after it", async () => {
	for (const policy of [fold(0.2), { name: "pi", kind: "pi" } as ReplayPolicy]) {
		const run = await replayPolicy(script, policy, { window: WINDOW, cache: { model: DEAR, warming: true } });
		assert.ok(
			run.requests.every((r) => r.warmingStopped === undefined),
			policy.name,
		);
		const figures = policyFigures(script, run, DEAR, true, WINDOW);
		assert.deepEqual([figures.warmRefreshes, figures.warmStopped, figures.warmStopSaving], [2, 0, 0], policy.name);
		const perRequest = figures.series.reduce((c, s) => c + s.cost, 0);
		assert.ok(
			Math.abs(perRequest - figures.cost) < 1e-6,
			`${policy.name}: per-request costs, refreshes in, sum to the cost`,
		);
	}
});

test("under OpenAI prices nothing warms, as in Pi, which warms only a model that declares a cache lifetime", async (t) => {
	assert.equal(parseArgs(["s.jsonl", "--price", "openai"]).warming, false);
	assert.equal(parseArgs(["s.jsonl", "--price", "openai", "--warming", "idle"]).warming, false);
	assert.equal(parseArgs(["s.jsonl"]).warming, true, "anthropic-5m warms by default");
	// A 10-minute tool run within a run, after a 12k-token request: at Opus 4.5's prices Pi keeps that warm.
	const tool = new SyntheticSession(T0);
	tool.add(1, { role: "user", content: [{ type: "text", text: "read the spec, then run the slow tests" }] });
	tool.read(2, "r1", [{ type: "text", text: "spec ".repeat(10_000) }]);
	tool.add(3, {
		role: "assistant",
		content: [{ type: "toolCall", id: "b1", name: "bash", arguments: { command: "npm test" } }],
		stopReason: "toolUse",
	});
	tool.add(603, { role: "toolResult", toolCallId: "b1", toolName: "bash", content: [{ type: "text", text: "ok" }] });
	tool.add(604, { role: "assistant", content: [{ type: "text", text: "all pass" }], stopReason: "stop" });
	const dir = mkdtempSync(join(tmpdir(), "replay-warming-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	const file = join(dir, "s.jsonl");
	writeFileSync(file, tool.text());
	const job = (price: string) => ({
		file,
		policy: { name: "pi", kind: "pi" } as ReplayPolicy,
		price,
		window: WINDOW,
		warming: true,
		images: "text" as const,
		foresight: false,
		timeHooks: false,
	});
	assert.equal((await runJob(job("anthropic-5m"), () => {})).warmRefreshes, 2);
	assert.equal((await runJob(job("openai"), () => {})).warmRefreshes, 0, "a job that asks for warming gets none");
});

test("Pi sends no refresh its rule finds unprofitable: a 12k-token prompt between runs, at Opus 4.5's prices", async () => {
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: WINDOW });
	const figures = policyFigures(script, run, PRICE_MODELS["anthropic-5m"], true, WINDOW);
	assert.deepEqual([figures.warmRefreshes, figures.warmStopped], [0, 0]);
});

/**
 * A run that reads a file of `chars` characters and ends with `last` (the reply after the read),
 * then a new prompt twenty minutes later, replayed under plain Pi at DEAR's prices (every refresh
 * its rule weighs pays): the run and its figures.
 */
async function pauseAfter(chars: number, last: Record<string, unknown>) {
	const synthetic = new SyntheticSession(T0);
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "read it" }] });
	synthetic.read(2, "c1", [{ type: "text", text: "x".repeat(chars) }]);
	synthetic.add(4, last);
	synthetic.add(1204, { role: "user", content: [{ type: "text", text: "again" }] });
	synthetic.add(1205, { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" });
	const paused = synthetic.script();
	const run = await replayPolicy(
		paused,
		{ name: "pi", kind: "pi" },
		{ window: WINDOW, cache: { model: DEAR, warming: true } },
	);
	return { run, figures: policyFigures(paused, run, DEAR, true, WINDOW, false) };
}

test("no refresh in the pause after a compaction at the end of a run: its new context stopped Pi's warming", async () => {
	// The run ends at about 87k tokens in a 100k window, and Pi compacts then.
	const { run, figures } = await pauseAfter(300_000, {
		role: "assistant",
		content: [{ type: "text", text: `done ${"y".repeat(48_000)}` }],
		stopReason: "stop",
	});
	assert.equal(run.compactions, 1, "plain Pi compacts when the run ends");
	assert.equal(figures.warmRefreshes, 0);
});

test("no refresh after a run that ended in an error reply reporting no prompt: Pi has nothing to weigh", async () => {
	const none = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
	const { figures } = await pauseAfter(80_000, {
		role: "assistant",
		content: [],
		stopReason: "error",
		errorMessage: "400 invalid_request_error: bad request",
		usage: { ...none, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
	});
	assert.equal(figures.warmRefreshes, 0);
});
