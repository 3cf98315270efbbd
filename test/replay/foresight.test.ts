/**
 * The foresight floor on a small synthetic session, exact: a block the model uses later stays raw
 * until its last use, a block it never uses again costs a digest from the request after it was
 * sent, the first block (system prompt and tools) always stays raw, and the baseline is the same
 * formula with nothing folded. Allowed to leave references unseen, the floor gives up the uses
 * that save the most, chosen exactly rather than one at a time. With folds priced as the cache prices
 * them, the scheduled floor takes an event only where it repays its rewrite, at the cheapest times.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageLike } from "../../src/core/block.ts";
import { FORESIGHT_DIGEST_TOKENS, foresightFloor, scheduledFloor } from "../../src/replay/foresight.ts";
import { PRICE_MODELS } from "../../src/replay/price.ts";
import { BlockTable } from "../../src/replay/request-shape.ts";
import { measureVisibility, type Produced } from "../../src/replay/visibility.ts";

const pad = (words: string, chars: number): string => `${words} ${"x".repeat(chars - words.length - 1)}`;

const messages: MessageLike[] = [
	{ role: "system", content: [{ type: "text", text: "s".repeat(400) }] },
	{ role: "user", content: [{ type: "text", text: "look at both files" }] },
	{ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } }] },
	{
		role: "toolResult",
		toolCallId: "c1",
		toolName: "read",
		content: [{ type: "text", text: pad("usedLater_1", 800) }],
	},
	{ role: "assistant", content: [{ type: "toolCall", id: "c2", name: "read", arguments: { path: "b" } }] },
	{
		role: "toolResult",
		toolCallId: "c2",
		toolName: "read",
		content: [{ type: "text", text: pad("neverUsed_2", 1200) }],
	},
	{ role: "assistant", content: [{ type: "text", text: "thinking it over" }] },
	{ role: "user", content: [{ type: "text", text: "go on" }] },
	{ role: "assistant", content: [{ type: "text", text: "usedLater_1 is the one" }] },
];

/** One request per assistant message, each holding everything before it, as plain Pi sends it. */
function plainRun(): { produced: Produced[]; table: BlockTable } {
	const table = new BlockTable();
	const produced: Produced[] = [];
	messages.forEach((m, i) => {
		if (m.role === "assistant")
			produced.push({ message: i, request: produced.length, shape: table.shape(messages.slice(0, i)) });
	});
	return { produced, table };
}

test("a block stays raw until its last use, then costs a digest; the baseline folds nothing", () => {
	const { produced, table } = plainRun();
	const vis = measureVisibility(messages, produced, table);
	// Blocks in tokens: system 114, user 5, call 5, result A 200, call 5, result B 300, text 4, user 2.
	assert.deepEqual(
		produced.map((p) => p.shape.tokens),
		[
			[114, 5],
			[114, 5, 5, 200],
			[114, 5, 5, 200, 5, 300],
			[114, 5, 5, 200, 5, 300, 4, 2],
		],
	);
	const resultA = produced[1].shape.ids[3];
	assert.deepEqual([...vis.needs], [[resultA, [3]]], "only result A serves a reference, at the last request");
	const floor = foresightFloor({ produced, needs: vis.needs, model: PRICE_MODELS["anthropic-5m"] });
	// Each block is written once: 635 tokens at 1.25. Later requests read 119, 324 and 629 tokens at 0.1.
	const baseline = 635 * 1.25 + (119 + 324 + 629) * 0.1;
	assert.ok(Math.abs(floor.baseline - baseline) < 1e-9, `baseline ${floor.baseline}`);
	// Only result B, never used, is read as a digest: at the last request, 30 tokens instead of 300.
	// The small blocks cost no more than a digest, and result A is needed until the last request.
	assert.ok(Math.abs(floor.cost - (baseline - (300 - FORESIGHT_DIGEST_TOKENS) * 0.1)) < 1e-9, `cost ${floor.cost}`);
	assert.equal(floor.ratio, floor.cost / floor.baseline);
});

test("with every block used at the last request, the floor equals the baseline", () => {
	const { produced } = plainRun();
	const everyBlockLast = new Map<number, number[]>();
	for (const p of produced) for (const id of p.shape.ids) everyBlockLast.set(id, [produced.length - 1]);
	const floor = foresightFloor({ produced, needs: everyBlockLast, model: PRICE_MODELS["anthropic-5m"] });
	assert.equal(floor.cost, floor.baseline);
	assert.equal(floor.ratio, 1);
});

test("signed thinking, user text and summaries are fixed: the floor keeps them raw, as context-fold does", () => {
	const long = pad("weighing the options", 1200);
	const withThinking: MessageLike[] = [
		{ role: "system", content: [{ type: "text", text: "s".repeat(400) }] },
		{ role: "user", content: [{ type: "text", text: pad("a long request", 800) }] },
		{ role: "assistant", content: [{ type: "thinking", thinking: long, thinkingSignature: "sig" }] },
		{ role: "assistant", content: [{ type: "thinking", thinking: `${long} again` }] },
		{ role: "user", content: [{ type: "text", text: "go on" }] },
		{ role: "assistant", content: [{ type: "text", text: "done" }] },
	];
	const table = new BlockTable();
	const produced: Produced[] = [];
	withThinking.forEach((m, i) => {
		if (m.role === "assistant")
			produced.push({ message: i, request: produced.length, shape: table.shape(withThinking.slice(0, i)) });
	});
	const last = produced[produced.length - 1].shape;
	const [, user, signed, unsigned] = last.ids;
	assert.deepEqual(
		[user, signed, unsigned].map((id) => table.fixed[id]),
		[true, true, false],
	);
	const model = PRICE_MODELS["anthropic-5m"];
	const kept = foresightFloor({ produced, needs: new Map(), model, fixed: table.fixed });
	const loose = foresightFloor({ produced, needs: new Map(), model });
	// The user text (200 tokens) is read raw at the second and third requests, the signed thinking
	// (300) at the third, where the loose floor reads a digest each time.
	const extra = (200 - FORESIGHT_DIGEST_TOKENS) * 0.1 * 2 + (300 - FORESIGHT_DIGEST_TOKENS) * 0.1;
	assert.ok(Math.abs(kept.cost - loose.cost - extra) < 1e-9, `kept ${kept.cost}, loose ${loose.cost}`);
	assert.equal(kept.baseline, loose.baseline);
});

/** The two results of the plain run: A (200 tokens, sent again at requests 2 and 3), B (300, at 3). */
function results() {
	const { produced } = plainRun();
	return { produced, a: produced[1].shape.ids[3], b: produced[2].shape.ids[5] };
}

test("leaving references unseen, the floor folds the blocks whose latest uses save the most", () => {
	const { produced, a, b } = results();
	const model = PRICE_MODELS["anthropic-5m"];
	// A is used at request 3; B at requests 2 and 3.
	const needs = new Map([
		[a, [3]],
		[b, [2, 3]],
	]);
	const full = foresightFloor({ produced, needs, model });
	assert.equal(full.cost, full.baseline, "every block is needed wherever it is sent again");
	const at = (lose: number) => full.cost - foresightFloor({ produced, needs, model, lose }).cost;
	// One reference: A's (a digest at requests 2 and 3: 2 x 17) beats B's latest (a digest at 3: 27).
	assert.ok(Math.abs(at(1) - 2 * (200 - FORESIGHT_DIGEST_TOKENS) * 0.1) < 1e-9, `one: ${at(1)}`);
	// Two: A's, and B's latest; B's earlier use saves nothing more (B is sent again only at 3).
	const both = 2 * (200 - FORESIGHT_DIGEST_TOKENS) * 0.1 + (300 - FORESIGHT_DIGEST_TOKENS) * 0.1;
	assert.ok(Math.abs(at(2) - both) < 1e-9, `two: ${at(2)}`);
	assert.ok(Math.abs(at(3) - both) < 1e-9, `three: ${at(3)}`);
	assert.equal(foresightFloor({ produced, needs, model, lose: 0 }).cost, full.cost);
});

test("the floor's choice of unseen references is exact where one at a time is not", () => {
	const { produced, a, b } = results();
	const model = PRICE_MODELS["anthropic-5m"];
	// A serves two references at request 3: only leaving both unseen folds it (34 saved); B's one
	// reference at 3 saves 27 alone. With two to leave, taking the best single step first (B) ends at 27.
	const needs = new Map([
		[a, [3, 3]],
		[b, [3]],
	]);
	const full = foresightFloor({ produced, needs, model });
	const two = foresightFloor({ produced, needs, model, lose: 2 });
	assert.ok(
		Math.abs(full.cost - two.cost - 2 * (200 - FORESIGHT_DIGEST_TOKENS) * 0.1) < 1e-9,
		`saved ${full.cost - two.cost}`,
	);
});

test("visibility lists one need per visible reference, in request order", () => {
	const twice: MessageLike[] = [
		...messages.slice(0, 6),
		{ role: "assistant", content: [{ type: "text", text: "see neverUsed_2" }] },
		{ role: "user", content: [{ type: "text", text: "and?" }] },
		{ role: "assistant", content: [{ type: "text", text: "usedLater_1 then" }] },
	];
	twice[5] = { ...twice[5], content: [{ type: "text", text: pad("neverUsed_2 againUsed_3", 1200) }] };
	twice[8] = { role: "assistant", content: [{ type: "text", text: "usedLater_1 and againUsed_3" }] };
	const table = new BlockTable();
	const produced: Produced[] = [];
	twice.forEach((m, i) => {
		if (m.role === "assistant")
			produced.push({ message: i, request: produced.length, shape: table.shape(twice.slice(0, i)) });
	});
	const vis = measureVisibility(twice, produced, table);
	const [a, b] = [produced[1].shape.ids[3], produced[2].shape.ids[5]];
	assert.deepEqual(vis.needs.get(a), [3]);
	assert.deepEqual(vis.needs.get(b), [2, 3], "B serves neverUsed_2 at 2 and againUsed_3 at 3");
});

/** Requests of blocks given as token counts (id = position in `sizes`); each request holds the listed ids. */
function synthetic(sizes: number[], requests: number[][]): Produced[] {
	return requests.map((ids, request) => ({
		message: request,
		request,
		shape: { ids, tokens: ids.map((id) => sizes[id]), keys: [], breakpoints: [] },
	}));
}

/** A system prompt (100), a 1,000-token result at request 1, then 10 tokens more per request. */
function growing(requests: number, big: number[] = [1]): Produced[] {
	const sizes = [100];
	const held: number[] = [0];
	const out: number[][] = [[0]];
	for (let r = 1; r < requests; r++) {
		sizes.push(big.includes(r) ? 1000 : 10);
		held.push(r);
		out.push([...held]);
	}
	return synthetic(sizes, out);
}

test("priced, an event that cannot repay its rewrite is not taken", () => {
	const { produced } = plainRun();
	const model = PRICE_MODELS["anthropic-5m"];
	const floor = scheduledFloor({ produced, needs: new Map(), model });
	// Folding result A at request 2 rewrites it and result B (+17.5) to save 17 at request 3.
	assert.deepEqual(floor.events, []);
	assert.ok(Math.abs(floor.baseline - 900.95) < 1e-9, `baseline ${floor.baseline}`);
	assert.equal(floor.cost, floor.baseline);
	assert.ok(foresightFloor({ produced, needs: new Map(), model }).cost < floor.cost, "free folds cost less");
});

test("priced, the event folds at the first request it can and pays the rewrite of what follows", () => {
	const model = PRICE_MODELS["anthropic-5m"];
	const produced = growing(6);
	const floor = scheduledFloor({ produced, needs: new Map(), model });
	assert.deepEqual(floor.events, [2]);
	// 125 + 1260, then request 2 reads the system prompt and writes the digest and its own block
	// (10 + 50), and requests 3-5 read 140, 150, 160 tokens and write 10 each.
	assert.ok(Math.abs(floor.cost - 1527.5) < 1e-9, `cost ${floor.cost}`);
	assert.ok(Math.abs(floor.baseline - 1881) < 1e-9, `baseline ${floor.baseline}`);
	// The free floor reads the digest at request 2 instead of writing it: 34.5 less.
	assert.ok(Math.abs(floor.cost - foresightFloor({ produced, needs: new Map(), model }).cost - 34.5) < 1e-9);
});

test("priced, a needed block waits for its last use, unless the bar lets that reference go", () => {
	const model = PRICE_MODELS["anthropic-5m"];
	const produced = growing(6);
	const needs = new Map([[1, [3]]]);
	const kept = scheduledFloor({ produced, needs, model });
	assert.deepEqual(kept.events, [4]);
	// Requests 2 and 3 as sent (122.5, 123.5); request 4 writes the digest and three blocks (85).
	assert.ok(Math.abs(kept.cost - 1744.5) < 1e-9, `cost ${kept.cost}`);
	const lost = scheduledFloor({ produced, needs, model, lose: 1 });
	assert.deepEqual(lost.events, [2]);
	assert.ok(Math.abs(lost.cost - 1527.5) < 1e-9, `cost ${lost.cost}`);
});

test("priced, each large block gets its own event when one later event would cost more", () => {
	const model = PRICE_MODELS["anthropic-5m"];
	const produced = growing(12, [1, 3]);
	const floor = scheduledFloor({ produced, needs: new Map(), model });
	assert.deepEqual(floor.events, [2, 4]);
	assert.ok(floor.cost < floor.baseline);
	const fixed: boolean[] = [];
	fixed[3] = true;
	assert.deepEqual(
		scheduledFloor({ produced, needs: new Map(), model, fixed }).events,
		[2],
		"a fixed block never folds",
	);
});
