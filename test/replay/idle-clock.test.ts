/**
 * The replay runs context-fold on the recording's clock and shows it Pi's idle refreshes, so that it
 * tells a warm cache from a cold one as it would have in the recorded session: after a gap longer
 * than Pi warms (30 minutes) or with warming off, the cache is cold and the economic policy folds
 * with no least event size (the rewrite is free); while Pi's refreshes keep the cache warm, it does
 * not, where Pi's rule finds a refresh worth sending. Through the real Pi SDK.
 *
 * The synthetic session reads a 10k-token file, then a 2k-token one, and answers; after the gap a
 * new prompt gets one more answer. With `minEvent` at half the window no event is worth it on a warm
 * cache, and the 2k result keeps the first read outside the 1k hot tail.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ReplayPolicy } from "../../src/replay/policy-run.ts";
import { PRICE_MODELS } from "../../src/replay/price.ts";
import { policyFigures } from "../../src/replay/report.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { DEAR } from "./dear-model.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const WINDOW = 100_000;
/** Every refresh pays at these prices (see dear-model.ts); the last test weighs Pi's rule at real ones. */
const MODEL = DEAR;
const policy: ReplayPolicy = {
	name: "context-fold",
	kind: "context-fold",
	settings: {
		policy: "economic",
		hotTail: 1000,
		coldTail: 1000,
		foldFrom: 5_000,
		minEvent: 50_000,
		backstopAt: 90_000,
	},
};

/** A read of `chars` characters called at second `call` whose result arrived at second `result`. */
function read(synthetic: SyntheticSession, call: number, result: number, id: string, chars: number): void {
	synthetic.add(call, {
		role: "assistant",
		content: [{ type: "toolCall", id, name: "read", arguments: { path: `/no/such/${id}.ts` } }],
		stopReason: "toolUse",
	});
	synthetic.add(result, {
		role: "toolResult",
		toolCallId: id,
		toolName: "read",
		content: [{ type: "text", text: `${id} `.repeat(chars / 3) }],
		isError: false,
	});
}

function session(gapSeconds: number) {
	const synthetic = new SyntheticSession(T0);
	const add = (second: number, message: Record<string, unknown>): void => synthetic.add(second, message);
	add(1, { role: "user", content: [{ type: "text", text: "look at both files" }] });
	read(synthetic, 2, 2, "c1", 40_000);
	read(synthetic, 3, 3, "c2", 8_000);
	add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	add(4 + gapSeconds, { role: "user", content: [{ type: "text", text: "again" }] });
	add(5 + gapSeconds, { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" });
	return synthetic.script();
}

async function foldRequests(gapSeconds: number, warming: boolean, model = MODEL): Promise<number[]> {
	const script = session(gapSeconds);
	const run = await replayPolicy(script, policy, { window: WINDOW, cache: { model, warming } });
	assert.deepEqual(run.divergences, {});
	assert.equal(run.requests.length, 4);
	return policyFigures(script, run, model, warming, WINDOW).rewriteEvents.map((e) => e.request);
}

test("past Pi's 30 minutes of warming the cache is cold: the request after the gap folds", async () => {
	assert.deepEqual(await foldRequests(2 * 3600, true), [3]);
});

test("while Pi's refreshes keep the cache warm, nothing folds", async () => {
	assert.deepEqual(await foldRequests(600, true), []);
});

test("with warming off the same gap leaves the cache cold: the request after it folds", async () => {
	assert.deepEqual(await foldRequests(600, false), [3]);
});

test("at Opus 4.5's prices Pi does not keep a 12k prompt warm between runs: after the same gap the request folds", async () => {
	assert.deepEqual(await foldRequests(600, true, PRICE_MODELS["anthropic-5m"]), [3]);
});

test("a tool that ran past the cache's lifetime leaves it cold: the request its result goes out in folds", async () => {
	const synthetic = new SyntheticSession(T0);
	const add = (second: number, message: Record<string, unknown>): void => synthetic.add(second, message);
	add(1, { role: "user", content: [{ type: "text", text: "look at both files" }] });
	read(synthetic, 2, 2, "c1", 40_000);
	// The second read takes two hours: its result arrives, and the next request goes out, with the cache cold.
	read(synthetic, 3, 3 + 2 * 3600, "c2", 8_000);
	add(4 + 2 * 3600, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const script = synthetic.script();
	const run = await replayPolicy(script, policy, { window: WINDOW, cache: { model: MODEL, warming: false } });
	assert.deepEqual(run.divergences, {});
	assert.deepEqual(
		policyFigures(script, run, MODEL, false, WINDOW).rewriteEvents.map((e) => e.request),
		[2],
	);
});
