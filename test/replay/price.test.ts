/**
 * The price models on small synthetic request sequences, with exact figures: an append-only run
 * reads and writes the same under every model, a fold event's rewrite is the suffix after the first
 * changed block, a gap past the TTL forces a full write unless idle warming kept the cache, and a
 * gap whose warming the extension stopped sends no refresh: before a fold event that saves the
 * refresh under Anthropic's breakpoints, but loses the unchanged prefix's read under OpenAI's; an
 * assistant message that ended in an error or was aborted is not priced, as no provider is sent it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageLike } from "../../src/core/block.ts";
import { BlockTable } from "../../src/replay/blocks.ts";
import { PRICE_MODELS, type PriceInput, priceRun, refreshTimes, WARMING_MAX_IDLE_MS } from "../../src/replay/price.ts";

const text = (role: string, chars: number, fill = "a"): MessageLike => ({
	role,
	content: [{ type: "text", text: fill.repeat(chars) }],
});
// tokens: u1 100, a1 50, t1 200, a2 10, t2 20
const u1 = text("user", 400);
const a1 = text("assistant", 200, "b");
const t1 = text("toolResult", 800, "c");
const a2 = text("assistant", 40, "d");
const t2 = text("toolResult", 80, "e");

function inputs(requests: MessageLike[][], gapMs = 10_000): PriceInput[] {
	const table = new BlockTable();
	return requests.map((messages, i) => ({ at: i * gapMs, kind: "turn", shape: table.shape(messages) }));
}

test("an append-only run reads and writes the same under every model; costs follow the multipliers", () => {
	const run = inputs([[u1], [u1, a1, t1], [u1, a1, t1, a2, t2]]);
	const costs: Record<string, number> = {};
	for (const model of Object.values(PRICE_MODELS)) {
		const price = priceRun(run, model, false);
		assert.deepEqual(
			price.requests.map((r) => [r.read, r.write, r.rewriteTokens]),
			[
				[0, 100, 0],
				[100, 250, 0],
				[350, 30, 0],
			],
			model.name,
		);
		assert.equal(price.read, 450);
		assert.equal(price.write, 380);
		costs[model.name] = price.cost;
	}
	assert.deepEqual(costs, { "anthropic-5m": 520, "anthropic-1h": 805, openai: 425 });
});

test("a single fold event's rewrite cost is the suffix after the first changed block", () => {
	const folded = text("toolResult", 40, "f"); // t1 folded to 10 tokens
	const run = inputs([[u1], [u1, a1, t1], [u1, a1, folded, a2, t2]]);
	const openai = priceRun(run, PRICE_MODELS.openai, false).requests[2];
	assert.equal(openai.firstChanged, 2);
	assert.equal(openai.rewriteTokens, 10 + 10 + 20);
	assert.equal(openai.write, openai.rewriteTokens, "longest-prefix caching writes exactly that suffix");
	assert.equal(openai.read, 150);
	const anthropic = priceRun(run, PRICE_MODELS["anthropic-5m"], false).requests[2];
	assert.equal(anthropic.rewriteTokens, 40);
	assert.equal(anthropic.rewriteCost, 40 * 1.25);
	// No breakpoint was ever written after a1, so Anthropic reads back only to u1 (written by request 1).
	assert.equal(anthropic.read, 100);
	assert.equal(anthropic.write, 90);
});

test("a gap past the TTL forces a full write; idle warming keeps the cache for its refresh cost", () => {
	const run = inputs([[u1], [u1, a1, t1]], 301_000);
	const cold = priceRun(run, PRICE_MODELS["anthropic-5m"], false);
	assert.deepEqual([cold.requests[1].read, cold.requests[1].write], [0, 350]);
	const warm = priceRun(run, PRICE_MODELS["anthropic-5m"], true);
	assert.equal(warm.warmRefreshes, 1, "one refresh at 270 s");
	assert.equal(warm.warmRead, 100);
	assert.equal(warm.warmCost, 10);
	assert.deepEqual([warm.requests[1].read, warm.requests[1].write], [100, 250]);
	const hour = priceRun(run, PRICE_MODELS["anthropic-1h"], false);
	assert.deepEqual([hour.requests[1].read, hour.requests[1].write], [100, 250], "within the 1 h TTL");
});

test("warming stops after 30 idle minutes", () => {
	const run = inputs([[u1], [u1, a1, t1]], 3_600_000);
	const warm = priceRun(run, PRICE_MODELS["anthropic-5m"], true);
	assert.equal(warm.warmRefreshes, 6, "every 270 s up to 1800 s");
	assert.deepEqual([warm.requests[1].read, warm.requests[1].write], [0, 350]);
});

test("a stopped gap sends no refresh: the refresh saved against the prefix read lost", () => {
	const folded = text("toolResult", 40, "f");
	const run = inputs(
		[
			[u1, a1, t1],
			[u1, a1, folded, a2, t2],
		],
		301_000,
	);
	const stopped = run.map((input, i) => (i === 1 ? { ...input, warmingStopped: true } : input));
	const anthropic = PRICE_MODELS["anthropic-5m"];
	const warm = priceRun(run, anthropic, true);
	const stop = priceRun(stopped, anthropic, true);
	assert.deepEqual([warm.warmRefreshes, warm.warmStopped, warm.warmCost], [1, 0, 35], "one full read of 350 at 270 s");
	assert.deepEqual(
		[warm.requests[1].warmRefreshes, warm.requests[1].warmCost],
		[1, 35],
		"booked on the request after the gap",
	);
	assert.deepEqual([stop.warmRefreshes, stop.warmStopped, stop.warmCost, stop.warmRead], [0, 1, 0, 0]);
	// The fold rewrites from block 2 and no breakpoint entry lies before it: the request reads nothing either way.
	assert.deepEqual([warm.requests[1].read, warm.requests[1].write], [0, 190]);
	assert.deepEqual([stop.requests[1].read, stop.requests[1].write], [0, 190]);
	assert.deepEqual([warm.cost, stop.cost], [437.5 + 35 + 237.5, 437.5 + 237.5]);
	const openai = PRICE_MODELS.openai;
	const warmO = priceRun(run, openai, true);
	const stopO = priceRun(stopped, openai, true);
	assert.equal(stopO.warmStopped, 1);
	// Every prefix is cached: the refresh kept u1 a1 (150) readable; stopped, it expired at 300 s.
	assert.deepEqual([warmO.requests[1].read, warmO.requests[1].write], [150, 40]);
	assert.deepEqual([stopO.requests[1].read, stopO.requests[1].write], [0, 190]);
	assert.deepEqual([warmO.cost, stopO.cost], [350 + 35 + 55, 350 + 190]);
});

test("a stop stops every refresh of its gap, and only that gap's", () => {
	const run = inputs([[u1], [u1, a1, t1], [u1, a1, t1, a2, t2]], 900_000);
	const stopped = run.map((input, i) => (i === 1 ? { ...input, warmingStopped: true } : input));
	const price = priceRun(stopped, PRICE_MODELS["anthropic-5m"], true);
	assert.equal(price.warmStopped, 3, "270, 540 and 810 s into the first gap");
	assert.deepEqual(
		price.requests.map((r) => r.warmRefreshes),
		[0, 0, 3],
	);
	assert.equal(priceRun(stopped, PRICE_MODELS["anthropic-5m"], false).warmStopped, 0, "no warming, nothing to stop");
});

test("idle refreshes come every delay after a request, for at most 30 minutes, and not at the next request", () => {
	assert.deepEqual(refreshTimes(0, 600_000, 270_000), [270_000, 540_000]);
	assert.deepEqual(refreshTimes(0, 540_000, 270_000), [270_000]);
	const long = refreshTimes(1_000, 7_200_000, 270_000);
	assert.equal(long.length, 6);
	assert.ok(long.every((t) => t <= 1_000 + WARMING_MAX_IDLE_MS));
});

test("a system message mid-conversation gets no breakpoint: a fold before it still reads the leading system prompt", () => {
	const system: MessageLike = { role: "system", content: "s".repeat(400) } as MessageLike; // 100+ tokens
	const patch: MessageLike = { role: "system", content: "p".repeat(40), toolsAdded: [{ name: "x" }] } as MessageLike;
	const table = new BlockTable();
	const shape = table.shape([system, u1, a1, t1, patch, a2, t2]);
	assert.deepEqual(shape.breakpoints, [1, 7], "only the leading system message and the whole request are marked");
	const folded = text("toolResult", 40, "f");
	const run: PriceInput[] = [
		{ at: 0, kind: "turn", shape: table.shape([system, u1, a1, t1, patch, a2]) },
		{ at: 10_000, kind: "turn", shape: table.shape([system, u1, a1, folded, patch, a2, t2]) },
	];
	const head = shape.tokens[0];
	const anthropic = priceRun(run, PRICE_MODELS["anthropic-5m"], false).requests[1];
	assert.equal(anthropic.read, head, "the leading system prompt stays cached behind its own breakpoint");
});

test("an assistant message that ended in an error or was aborted is not priced: no provider is sent it", () => {
	const call = (stopReason: string): MessageLike => ({
		role: "assistant",
		stopReason,
		content: [
			{ type: "text", text: "g".repeat(400) },
			{
				type: "toolCall",
				id: `c-${stopReason}`,
				name: "edit",
				arguments: { path: "a.ts", oldText: "x", newText: "y" },
			},
		],
	});
	const table = new BlockTable();
	const plain = table.shape([u1, a1, t1]);
	for (const stopReason of ["error", "aborted"]) {
		const shape = table.shape([u1, call(stopReason), a1, t1]);
		assert.deepEqual(shape.ids, plain.ids, stopReason);
		assert.deepEqual(shape.tokens, plain.tokens, stopReason);
	}
	const sent = table.shape([u1, call("toolUse"), a1, t1]);
	assert.equal(sent.ids.length, plain.ids.length + 2, "a completed one is priced, text and call");
});
