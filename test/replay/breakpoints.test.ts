/**
 * The replay prices the cache breakpoints the extensions place (src/replay/wire.ts): the stand-in
 * payload groups tool results and carries Pi's marks; a mark a handler adds becomes a breakpoint of
 * the request's shape after that message, where the price model reads up to it. Replayed through
 * the real Pi SDK on refactor-long (the project's own corpus): every fold event after the first
 * (of the session, or since a compaction), within the cache's lifetime of the request before, carries a breakpoint before its first changed block
 * that the request before it carried too, so it reads the cache up to there instead of the system
 * prompt alone; and plain Pi's requests carry Pi's two marks only.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import type { MessageLike } from "../../src/core/block.ts";
import type { WireBlock, WireRequest } from "../../src/core/cache-breakpoints.ts";
import type { PolicyRun } from "../../src/replay/policy-run.ts";
import { PRICE_MODELS, priceRun } from "../../src/replay/price.ts";
import { BlockTable } from "../../src/replay/request-shape.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { replayScript } from "../../src/replay/script.ts";
import { parseSessionText } from "../../src/replay/session-file.ts";
import { markedMessages, replayWire } from "../../src/replay/wire.ts";

const text = (role: string, chars: number, fill: string): MessageLike => ({
	role,
	content: [{ type: "text", text: fill.repeat(chars) }],
});
const call = (ids: string[]): MessageLike => ({
	role: "assistant",
	content: ids.map((id) => ({ type: "toolCall", id, name: "read", arguments: { path: id } })),
});
const result = (id: string, chars: number): MessageLike => ({
	role: "toolResult",
	toolCallId: id,
	content: [{ type: "text", text: id.repeat(chars / id.length) }],
});
const system: MessageLike = { role: "system", content: "you are pi" };

test("the stand-in payload: tool results grouped, Pi's marks on the system prompt, the last tool and the last block", () => {
	const messages = [system, text("user", 40, "u"), call(["c1", "c2"]), result("c1", 400), result("c2", 400)];
	const { request, owner } = replayWire(messages);
	assert.deepEqual(
		request.messages.map((m) => [m.role, (m.content as WireBlock[]).map((b) => b.type)]),
		[
			["user", ["text"]],
			["assistant", ["tool_use", "tool_use"]],
			["user", ["tool_result", "tool_result"]],
		],
	);
	assert.deepEqual(owner, [[1], [2, 2], [3, 4]]);
	const marks = (blocks: unknown) =>
		(blocks as { cache_control?: unknown }[]).map((b) => b.cache_control !== undefined);
	assert.deepEqual(marks(request.system), [true]);
	assert.deepEqual(marks(request.tools), [true]);
	assert.deepEqual(marks(request.messages[2].content), [false, true]);
	assert.deepEqual([...markedMessages(request, { request, owner })], [4], "Pi's own mark: after the last message");
});

test("a mark a handler adds is a breakpoint after its message, and a later change reads up to it", () => {
	const before = [system, text("user", 40, "u"), call(["c1"]), result("c1", 800), call(["c2"]), result("c2", 800)];
	const wire = replayWire(before);
	const sent: WireRequest = structuredClone(wire.request);
	(sent.messages[2].content as WireBlock[])[0].cache_control = { type: "ephemeral" };
	const marked = markedMessages(sent, wire);
	assert.deepEqual([...marked].sort(), [3, 5]);
	const table = new BlockTable();
	const first = table.shape(before, marked);
	assert.deepEqual(first.breakpoints, [1, 4, 6], "system, after c1's result, the whole request");
	// The next request changes c2's result (a fold): without the mark it would read the system prompt only.
	const after = [...before.slice(0, 5), result("c2", 40), call(["c3"]), result("c3", 40)];
	const second = table.shape(after, new Set([3]));
	const plain = new BlockTable();
	for (const [shapes, read] of [
		[[first, second], first.tokens.slice(0, 4).reduce((a, b) => a + b, 0)],
		[[plain.shape(before), plain.shape(after)], first.tokens[0]],
	] as const) {
		const price = priceRun(
			shapes.map((shape, i) => ({ at: i * 10_000, kind: "turn", shape })),
			PRICE_MODELS["anthropic-5m"],
			false,
		);
		assert.equal(price.requests[1].read, read);
	}
});

const session = readFileSync(new URL("../fixtures/sessions/refactor-long.jsonl", import.meta.url), "utf8");
const script = replayScript(parseSessionText(session));

/** The fold events of a run: the turn requests whose blocks differ from the turn request before them. */
function events(run: PolicyRun): { request: number; changed: number }[] {
	const turns = run.requests.filter((r) => r.kind === "turn");
	const out: { request: number; changed: number }[] = [];
	for (let i = 1; i < turns.length; i++) {
		const prev = turns[i - 1].shape.keys;
		const cur = turns[i].shape.keys;
		let c = 0;
		while (c < prev.length && c < cur.length && prev[c] === cur[c]) c++;
		if (c < Math.min(prev.length, cur.length)) out.push({ request: run.requests.indexOf(turns[i]), changed: c });
	}
	return out;
}

test("refactor-long: each fold event after the first can read the cache up to a mark before its change", async () => {
	const run = await replayPolicy(
		script,
		{ name: "context-fold", kind: "context-fold", settings: {} },
		{
			window: 140_000,
			timeHooks: false,
		},
	);
	const found = events(run);
	assert.ok(found.length >= 5, `${found.length} fold events`);
	let reading = 0;
	// The first event of the session, and the first after a compaction, have no earlier event to plan with.
	let first = true;
	for (const event of found) {
		const request = run.requests[event.request];
		const before = run.requests[event.request - 1];
		if (request.afterCompaction || event.changed <= 1) {
			first = true;
			continue;
		}
		// A gap past the cache's lifetime may have left it cold: that event reads nothing either way.
		const cold = request.at - before.at > PRICE_MODELS["anthropic-5m"].ttlMs;
		if (first || cold) {
			first = false;
			continue;
		}
		// A breakpoint at or before the first changed block that the request before also carried, on the same prefix.
		const shared = request.shape.breakpoints.filter(
			(b) =>
				b > 1 &&
				b <= event.changed &&
				before.shape.breakpoints.includes(b) &&
				before.shape.keys[b - 1] === request.shape.keys[b - 1],
		);
		assert.ok(shared.length > 0, `the event at request ${event.request} (first change ${event.changed}) has no mark`);
		reading++;
	}
	assert.ok(reading >= 4, `${reading} events read past the system prompt`);
});

test("plain Pi's requests carry Pi's marks only: the system prompt and the whole request", async () => {
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 140_000, timeHooks: false });
	for (const request of run.requests) {
		assert.ok(request.shape.breakpoints.length <= 2, JSON.stringify(request.shape.breakpoints));
		assert.equal(request.shape.breakpoints.at(-1), request.shape.ids.length);
	}
});
