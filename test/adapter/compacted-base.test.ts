/**
 * compactedBaseOf: what the latest compaction of a branch removed from live history, by role, as Pi
 * projects it. The
 * user messages keep turn numbers session-absolute; the assistant messages keep the session's request
 * count whole, which bounds how many requests a fold event's saving is counted over.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compactedBaseOf } from "../../src/adapters/pi/fold/persistence.ts";

const message = (id: string, role: string) => ({ type: "message", id, message: { role, content: [] } });
const compaction = (id: string, firstKeptEntryId: string) => ({ type: "compaction", id, firstKeptEntryId });

describe("compactedBaseOf", () => {
	const history = [
		message("u1", "user"),
		message("a1", "assistant"),
		message("t1", "toolResult"),
		message("a2", "assistant"),
		message("u2", "user"),
		message("a3", "assistant"),
		message("u3", "user"),
		message("a4", "assistant"),
	];

	it("counts the user and assistant messages before the first kept entry", () => {
		assert.deepEqual(compactedBaseOf([...history, compaction("c1", "u2")]), { turns: 1, requests: 2 });
		assert.deepEqual(compactedBaseOf([...history, compaction("c1", "u3")]), { turns: 2, requests: 3 });
	});

	it("reads the latest compaction", () => {
		const branch = [...history.slice(0, 5), compaction("c1", "u2"), ...history.slice(5), compaction("c2", "u3")];
		assert.deepEqual(compactedBaseOf(branch), { turns: 2, requests: 3 });
	});

	it("is zero without a compaction, or when it keeps the branch from its first entry", () => {
		assert.deepEqual(compactedBaseOf(history), { turns: 0, requests: 0 });
		assert.deepEqual(compactedBaseOf([null, 3, "x", compaction("c1", "u1")]), { turns: 0, requests: 0 });
		assert.deepEqual(compactedBaseOf([...history, compaction("c1", "u1")]), { turns: 0, requests: 0 });
	});

	it("counts every message before the compaction when no earlier entry is its first kept one, as Pi keeps none", () => {
		// Pi's projection (buildContextEntries) looks for the first kept entry before the compaction only.
		assert.deepEqual(compactedBaseOf([...history, compaction("c1", "gone")]), { turns: 3, requests: 4 });
		assert.deepEqual(compactedBaseOf([...history, compaction("c1", "c1")]), { turns: 3, requests: 4 });
		const after = [...history.slice(0, 4), compaction("c1", "u3"), ...history.slice(4)];
		assert.deepEqual(compactedBaseOf(after), { turns: 1, requests: 2 }, "u3 comes after the compaction");
	});
});
