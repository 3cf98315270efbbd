/**
 * The adapter side of context-fold's cache breakpoints (src/adapters/pi/cache/breakpoints.ts): a
 * payload that is not an Anthropic Messages request passes untouched, one that is gets its frontier
 * marked with Pi's own mark, and the previous request's last block is remembered until a reset.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BreakpointPlacer } from "../../src/adapters/pi/cache/breakpoints.ts";

const MARK = { type: "ephemeral" };

/** Index of the message holding the result of tool call `id`. */
function resultAt(messages: readonly { content: unknown }[], id: string): number {
	return messages.findIndex((m) => Array.isArray(m.content) && m.content[0]?.tool_use_id === id);
}

/** An Anthropic-shaped request of `n` tool calls and results, Pi's marks on system, tools and the last block. */
function request(n: number) {
	const messages: { role: string; content: Record<string, unknown>[] }[] = [
		{ role: "user", content: [{ type: "text", text: "go" }] },
	];
	for (let i = 0; i < n; i++) {
		messages.push({ role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "bash", input: {} }] });
		messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `out ${i}` }] });
	}
	const last = messages[messages.length - 1].content;
	last[last.length - 1] = { ...last[last.length - 1], cache_control: MARK };
	return {
		model: "claude",
		system: [{ type: "text", text: "system", cache_control: MARK }],
		tools: [{ name: "bash", cache_control: MARK }],
		messages,
	};
}

describe("BreakpointPlacer", () => {
	it("leaves a payload of another shape untouched", () => {
		const placer = new BreakpointPlacer();
		assert.equal(placer.place({ model: "gpt", input: [{ role: "user", content: "hi" }] }, ["t1"]), undefined);
		assert.equal(placer.place({ messages: [{ role: 1, content: [] }] }, ["t1"]), undefined);
		assert.equal(placer.place({ messages: [{ role: "user", content: [{ text: "no type" }] }] }, ["t1"]), undefined);
		assert.equal(placer.place("not an object", ["t1"]), undefined);
	});

	it("marks the frontier's tool result with Pi's mark, and nothing else changes", () => {
		const sent = request(6);
		const before = structuredClone(sent);
		const marked = new BreakpointPlacer().place(sent, ["t2"]);
		assert.ok(marked, "a frontier in the request is marked");
		assert.deepEqual(sent, before, "the payload Pi built is not mutated");
		const result = resultAt(marked.messages, "t2");
		assert.deepEqual((marked.messages[result].content as { cache_control?: unknown }[])[0].cache_control, MARK);
		const unmarked = (value: unknown) =>
			JSON.parse(JSON.stringify(value).replaceAll(',"cache_control":{"type":"ephemeral"}', ""));
		assert.deepEqual(unmarked(marked), unmarked(before));
	});

	it("marks the previous request's last block once more than the lookback follows it, until a reset", () => {
		const placer = new BreakpointPlacer();
		placer.place(request(2), []);
		// The next request appends 12 calls and results (24 blocks) after the previous last block.
		const next = request(14);
		const marked = placer.place(next, []);
		assert.ok(marked, "the previous last block is marked");
		const previous = resultAt(marked.messages, "t1");
		assert.deepEqual((marked.messages[previous].content as { cache_control?: unknown }[])[0].cache_control, MARK);
		placer.reset();
		placer.place(request(2), []);
		placer.reset();
		assert.equal(placer.place(request(14), []), undefined, "after a reset nothing is remembered");
	});
});
