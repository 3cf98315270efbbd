/**
 * The foresight floor on a small synthetic session, exact: a block the model uses later stays raw
 * until its last use, a block it never uses again costs a digest from the request after it was
 * sent, the first block (system prompt and tools) always stays raw, and the baseline is the same
 * formula with nothing folded.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageLike } from "../../src/core/block.ts";
import { BlockTable } from "../../src/replay/blocks.ts";
import { FORESIGHT_DIGEST_TOKENS, foresightFloor } from "../../src/replay/foresight.ts";
import { PRICE_MODELS } from "../../src/replay/price.ts";
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
	const model = PRICE_MODELS["anthropic-5m"];
	const floor = foresightFloor(produced, vis.lastNeeded, model);
	const shapes = produced.map((p) => p.shape);
	const tokensOf = (request: number, k: number): number => shapes[request].tokens[k];
	const resultA = shapes[1].ids[3];
	const resultB = shapes[2].ids[5];
	assert.equal(vis.lastNeeded.get(resultA), 3, "result A serves the reference of the last request");
	assert.equal(vis.lastNeeded.has(resultB), false, "result B is never used");
	let expectedBaseline = 0;
	let expectedCost = 0;
	const seen = new Set<number>();
	shapes.forEach((shape, r) => {
		shape.ids.forEach((id, k) => {
			const t = tokensOf(r, k);
			if (!seen.has(id)) {
				seen.add(id);
				expectedBaseline += t * model.write;
				expectedCost += t * model.write;
				return;
			}
			expectedBaseline += t * model.read;
			const raw = k === 0 || (id === resultA && r <= 3);
			expectedCost += (raw ? t : Math.min(t, FORESIGHT_DIGEST_TOKENS)) * model.read;
		});
	});
	assert.equal(floor.baseline, expectedBaseline);
	assert.equal(floor.cost, expectedCost);
	assert.ok(floor.cost < floor.baseline, "result B and the small blocks fold after first sight");
	assert.equal(floor.ratio, floor.cost / floor.baseline);
	// Result B (300 tokens) is read at request 3 as a digest.
	assert.ok(floor.baseline - floor.cost >= (tokensOf(3, 5) - FORESIGHT_DIGEST_TOKENS) * model.read);
});

test("with every block used at the last request, the floor equals the baseline", () => {
	const { produced } = plainRun();
	const everyBlockLast = new Map<number, number>();
	for (const p of produced) for (const id of p.shape.ids) everyBlockLast.set(id, produced.length - 1);
	const floor = foresightFloor(produced, everyBlockLast, PRICE_MODELS["anthropic-5m"]);
	assert.equal(floor.cost, floor.baseline);
	assert.equal(floor.ratio, 1);
});
