/**
 * The frontiers the engine hands the provider-request handler (core cache-breakpoints.ts), turn by
 * turn: none before any event; after an event that folded two results and passed over an older one,
 * the last tool result before the first block that may still change counted from that event's first
 * folded block; on the event's own request, and on Pi's retry of it after an error reply, the
 * frontiers as they stood before it; and the same again
 * from an engine rebuilt from the session's entries (a restart), since the newest event is read from
 * the registry's records, not from memory.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_CONFIG } from "../../src/adapters/pi/config.ts";
import { answersRequest, FoldEngine } from "../../src/adapters/pi/fold/engine.ts";
import { ENTRY_TYPE, type FoldEntry } from "../../src/adapters/pi/fold/persistence.ts";
import type { MessageLike } from "../../src/core/block.ts";
import type { FoldCommand } from "../../src/core/contract.ts";

const BIG = Array.from({ length: 300 }, (_, i) => `line ${i} of the output`).join("\n");

/** A prompt, `calls` bash calls each with a long result, a closing reply and a new prompt. */
function conversation(calls: number): MessageLike[] {
	const out: MessageLike[] = [{ role: "user", content: "go", timestamp: 1 }];
	for (let k = 1; k <= calls; k++) {
		out.push({
			role: "assistant",
			responseId: `r${k}`,
			timestamp: 10 * k,
			content: [{ type: "toolCall", id: `c${k}`, name: "bash", arguments: { command: `run ${k}` } }],
		});
		out.push({
			role: "toolResult",
			toolCallId: `c${k}`,
			toolName: "bash",
			isError: false,
			timestamp: 10 * k + 1,
			content: [{ type: "text", text: `${k}\n${BIG}` }],
		});
	}
	out.push({ role: "assistant", responseId: "r-end", timestamp: 1000, content: [{ type: "text", text: "done" }] });
	out.push({ role: "user", content: "next", timestamp: 1001 });
	return out;
}

/** An engine whose policy folds the results of c2 and c3 at its `at`-th request, and nothing else. */
function engine(at: number, entries: FoldEntry[]): FoldEngine {
	let request = 0;
	return new FoldEngine({
		config: () => DEFAULT_CONFIG,
		policy: (): FoldCommand[] =>
			++request === at
				? [
						{ type: "fold", id: "r:c2", urgent: false },
						{ type: "fold", id: "r:c3", urgent: false },
					]
				: [],
		append: (entry) => entries.push(entry),
		warn: () => {},
		debug: () => {},
	});
}

const FACTS = { window: 200_000, usage: undefined, neverCacheRead: false };

describe("FoldEngine.frontiers", () => {
	it("before any event none; on the event's request the old ones; after it, counted from the event", () => {
		const entries: FoldEntry[] = [];
		const fold = engine(2, entries);
		fold.run(conversation(5), FACTS);
		assert.deepEqual(fold.frontiers, [], "no tool result before the first result that may fold");
		fold.answered();
		fold.run(conversation(5), FACTS);
		assert.equal(entries.length, 2, "the event's records and layer");
		assert.deepEqual(fold.frontiers, [], "the event's own request: as before it");
		fold.answered();
		fold.run(conversation(5), FACTS);
		assert.deepEqual(fold.frontiers, ["c3"], "c1 was passed over: from c2 on, c4 is the first that may fold");
	});

	it("a request Pi retries after an error reply still carries the frontiers as they stood before the event", () => {
		const entries: FoldEntry[] = [];
		const fold = engine(3, entries);
		fold.run(conversation(5), FACTS);
		fold.answered();
		fold.run(conversation(5), FACTS);
		const before = fold.frontiers;
		fold.answered();
		fold.run(conversation(5), FACTS);
		assert.equal(entries.length, 2, "the event's records and layer");
		assert.deepEqual(fold.frontiers, before, "the event's own request: as before it");
		// The provider refused it (an error reply, no answer): Pi sends the same request again.
		fold.run(conversation(5), FACTS);
		assert.deepEqual(fold.frontiers, before, "the retry reads up to where the failed request would have");
		fold.answered();
		fold.run(conversation(5), FACTS);
		assert.deepEqual(fold.frontiers, ["c3"], "once answered, counted from the event");
	});

	it("a rebuilt engine finds the same frontiers from the session's entries", () => {
		const entries: FoldEntry[] = [];
		const first = engine(1, entries);
		first.run(conversation(5), FACTS);
		first.answered();
		first.run(conversation(5), FACTS);
		assert.deepEqual(first.frontiers, ["c3"]);
		const restarted = engine(0, []);
		restarted.rebuild(entries.map((data) => ({ type: "custom", customType: ENTRY_TYPE, data })));
		restarted.run(conversation(5), FACTS);
		assert.deepEqual(restarted.frontiers, ["c3"]);
	});

	it("a reply answers its request when the provider read the prompt: not a refusal, nor an abort before the first token", () => {
		const usage = { input: 10, output: 5, cacheRead: 1000, cacheWrite: 0 };
		const none = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
		assert.ok(answersRequest({ stopReason: "stop", usage }));
		assert.ok(answersRequest({ stopReason: "toolUse", usage: none }), "a reply no usage was reported for");
		assert.ok(answersRequest({ stopReason: "aborted", usage }), "aborted mid-stream, the prompt read");
		assert.ok(!answersRequest({ stopReason: "aborted", usage: none }), "aborted before the first token");
		assert.ok(!answersRequest({ stopReason: "error", usage: none }), "refused (529 overloaded)");
		assert.ok(!answersRequest({ stopReason: "error" }));
	});
});
