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
import {
	PRICE_MODELS,
	type PriceInput,
	type PriceModel,
	piWarms,
	priceRun,
	refreshTimes,
} from "../../src/replay/price.ts";
import { BlockTable } from "../../src/replay/request-shape.ts";
import { DEAR } from "./dear-model.ts";

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

/** OpenAI's prefix caching, warmed at DEAR's prices (Pi warms no OpenAI model: the prefix mechanics only). */
const DEAR_PREFIX: PriceModel = { ...PRICE_MODELS.openai, warmed: true, reference: DEAR.reference };

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
	const warm = priceRun(run, DEAR, true);
	assert.equal(warm.warmRefreshes, 1, "one refresh at 270 s");
	assert.equal(warm.warmRead, 100);
	assert.equal(warm.warmCost, 10);
	assert.deepEqual([warm.requests[1].read, warm.requests[1].write], [100, 250]);
	const hour = priceRun(run, PRICE_MODELS["anthropic-1h"], false);
	assert.deepEqual([hour.requests[1].read, hour.requests[1].write], [100, 250], "within the 1 h TTL");
});

test("warming stops after 30 minutes between runs, after an hour within one", () => {
	const [first, second] = inputs([[u1], [u1, a1, t1]], 7_200_000);
	const idle = priceRun([first, { ...second, opensRun: true }], DEAR, true);
	assert.equal(idle.warmRefreshes, 6, "every 270 s up to 1800 s");
	assert.deepEqual([idle.requests[1].read, idle.requests[1].write], [0, 350]);
	const streaming = priceRun([first, second], DEAR, true);
	assert.equal(streaming.warmRefreshes, 13, "every 270 s up to 3600 s");
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
	const warm = priceRun(run, DEAR, true);
	const stop = priceRun(stopped, DEAR, true);
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
	const warmO = priceRun(run, DEAR_PREFIX, true);
	const stopO = priceRun(stopped, DEAR_PREFIX, true);
	assert.equal(stopO.warmStopped, 1);
	// Every prefix is cached: the refresh kept u1 a1 (150) readable; stopped, it expired at 300 s.
	assert.deepEqual([warmO.requests[1].read, warmO.requests[1].write], [150, 40]);
	assert.deepEqual([stopO.requests[1].read, stopO.requests[1].write], [0, 190]);
	assert.deepEqual([warmO.cost, stopO.cost], [350 + 35 + 55, 350 + 190]);
});

test("a stop stops every refresh of its gap, and only that gap's", () => {
	const run = inputs([[u1], [u1, a1, t1], [u1, a1, t1, a2, t2]], 900_000);
	const stopped = run.map((input, i) => (i === 1 ? { ...input, warmingStopped: true } : input));
	const price = priceRun(stopped, DEAR, true);
	assert.equal(price.warmStopped, 3, "270, 540 and 810 s into the first gap");
	assert.deepEqual(
		price.requests.map((r) => r.warmRefreshes),
		[0, 0, 3],
	);
	assert.equal(priceRun(stopped, DEAR, false).warmStopped, 0, "no warming, nothing to stop");
});

test("refreshes come every delay after a request, for at most 30 minutes between runs or an hour within one, and not at the next request", () => {
	assert.deepEqual(refreshTimes(0, 600_000, 270_000, "idle"), [270_000, 540_000]);
	assert.deepEqual(refreshTimes(0, 540_000, 270_000, "streaming"), [270_000]);
	const idle = refreshTimes(1_000, 7_200_000, 270_000, "idle");
	assert.equal(idle.length, 6);
	assert.ok(idle.every((t) => t <= 1_000 + 30 * 60_000));
	const streaming = refreshTimes(1_000, 7_200_000, 270_000, "streaming");
	assert.equal(streaming.length, 13);
	assert.ok(streaming.every((t) => t <= 1_000 + 60 * 60_000));
});

test("after a compaction at the end of a run nothing is warmed; after one within a run the gap before it was", () => {
	const [first, second] = inputs([[u1], [u1, a1, t1]], 600_000);
	const refreshes = (opensRun: boolean) =>
		priceRun([first, { ...second, opensRun, afterCompaction: true }], DEAR, true).warmRefreshes;
	assert.equal(refreshes(true), 0, "the compaction ended the run, and Pi's warming with it");
	assert.equal(refreshes(false), 2, "the compaction came after the tool run Pi kept warm");
});

test("Pi's rule decides each gap: at Opus 4.5's prices a refresh pays from about 9.5k tokens within a run, 138k between runs", () => {
	// Worked by hand from Pi's rule: warm when p * (write - read) * tokens - (read * tokens + one output token)
	// saves at least $0.05, p = 1 within a run and 0.15 between runs; $ per million tokens 5 / 25 / 0.5 / 6.25.
	// Within a run: 5.25 t - 25 >= 50,000 from t = 9,529; between runs: 0.3625 t - 25 >= 50,000 from t = 138,000.
	const model = PRICE_MODELS["anthropic-5m"];
	assert.equal(piWarms(model, 9_520, "streaming"), false);
	assert.equal(piWarms(model, 9_540, "streaming"), true);
	assert.equal(piWarms(model, 137_900, "idle"), false);
	assert.equal(piWarms(model, 138_100, "idle"), true);
	assert.equal(
		piWarms(PRICE_MODELS.openai, 1_000_000, "streaming"),
		false,
		"Pi warms no model without a cache lifetime",
	);
	// In a priced run: a 20k-token prompt is kept warm through a 6-minute tool run, not through a 6-minute pause between runs.
	const table = new BlockTable();
	const big = text("toolResult", 80_000, "z");
	const shapes = [table.shape([u1, big]), table.shape([u1, big, a1, t1])];
	const gap = (opensRun: boolean): PriceInput[] => [
		{ at: 0, kind: "turn", shape: shapes[0] },
		{ at: 360_000, kind: "turn", shape: shapes[1], opensRun },
	];
	assert.equal(priceRun(gap(false), model, true).warmRefreshes, 1, "within a run");
	const between = priceRun(gap(true), model, true);
	assert.equal(between.warmRefreshes, 0, "between runs");
	assert.deepEqual([between.requests[1].read, between.requests[1].write], [0, 20_350], "so the cache went cold");
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

test("a request the provider refused (an error reply that used nothing) costs nothing and leaves the cache as it was", () => {
	const folded = text("toolResult", 40, "f");
	const [first, second, third] = inputs([
		[u1, a1, t1],
		[u1, a1, folded, a2],
		[u1, a1, folded, a2],
	]);
	for (const model of Object.values(PRICE_MODELS)) {
		const plain = priceRun([first, third], model, false);
		const retried = priceRun([first, { ...second, refused: true }, third], model, false);
		assert.deepEqual(retried.requests[1], { ...retried.requests[1], read: 0, write: 0, cost: 0, rewriteTokens: 0 });
		assert.equal(retried.requests[1].prompt, 170, "its prompt still counts toward the peak");
		// The retry pays what the request alone would have: the rewrite is counted against the last request taken.
		assert.deepEqual(retried.requests[2], plain.requests[1], model.name);
		assert.equal(retried.cost, plain.cost, model.name);
	}
});

test("Anthropic looks back at most 20 blocks from a breakpoint for an entry an earlier request wrote", () => {
	const after = (n: number) =>
		Array.from({ length: n }, (_, i) =>
			text(i % 2 === 0 ? "assistant" : "toolResult", 40, String.fromCharCode(98 + (i % 20))),
		);
	for (const [n, read] of [
		[20, 100],
		[21, 0],
	] as const) {
		const price = priceRun(inputs([[u1], [u1, ...after(n)]]), PRICE_MODELS["anthropic-5m"], false);
		assert.equal(price.requests[1].read, read, `${n} blocks appended after the entry at u1`);
	}
});

test("an entry read from lives a full TTL from that read, not from its write", () => {
	const table = new BlockTable();
	const at = (ms: number, messages: MessageLike[]): PriceInput => ({
		at: ms,
		kind: "turn",
		shape: table.shape(messages),
	});
	// u1 written at 0 s; read at 200 s by a request whose own entry the last one cannot use; read again at 450 s,
	// past 300 s after its write but within 300 s of its read.
	const run = [at(0, [u1]), at(200_000, [u1, a1]), at(450_000, [u1, a2])];
	const price = priceRun(run, PRICE_MODELS["anthropic-5m"], false);
	assert.deepEqual(
		price.requests.map((r) => r.read),
		[0, 100, 100],
	);
});
