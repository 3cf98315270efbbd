/**
 * The session-ledger read route's cache: it re-reads Pi's entries only when their count changed,
 * extends its index with entries appended since the last lookup, and starts over when the source
 * shrank (another session) or was reset.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Ledger } from "../../src/adapters/pi/fold/session-ledger.ts";

function result(id: string, text: string) {
	return {
		type: "message",
		message: { role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }] },
	};
}

function source(entries: unknown[]) {
	const calls = { getEntries: 0 };
	return {
		calls,
		entries,
		getEntries: () => {
			calls.getEntries++;
			return entries;
		},
		getEntryCount: () => entries.length,
	};
}

describe("Ledger cache", () => {
	it("does not re-read while the entry count is unchanged", () => {
		const s = source([result("a", "alpha")]);
		const ledger = new Ledger(() => s);
		assert.equal(ledger.lookup("r:a")[0]?.block.text, "alpha");
		ledger.lookup("r:a");
		ledger.lookup("r:zz");
		assert.equal(s.calls.getEntries, 1);
	});

	it("extends the index with entries appended after a lookup", () => {
		const s = source([result("a", "alpha")]);
		const ledger = new Ledger(() => s);
		assert.deepEqual(ledger.lookup("r:b"), []);
		s.entries.push(result("b", "beta"), result("a", "alpha again"));
		assert.equal(ledger.lookup("r:b")[0]?.block.text, "beta");
		assert.deepEqual(
			ledger.lookup("r:a").map((h) => h.block.text),
			["alpha", "alpha again"],
		);
		assert.equal(s.calls.getEntries, 2);
	});

	it("finds a repeated call id's later result by the stamp its id carries", () => {
		const stamped = (text: string, timestamp: number) => {
			const entry = result("dup", text);
			return { ...entry, message: { ...entry.message, timestamp } };
		};
		const ledger = new Ledger(() => source([stamped("first", 6), stamped("second", 7)]));
		assert.deepEqual(
			ledger.lookup("r:dup").map((h) => h.block.text),
			["first", "second"],
		);
		assert.deepEqual(
			ledger.lookup("r:dup@7").map((h) => h.block.text),
			["second"],
		);
		assert.deepEqual(ledger.lookup("r:dup@8"), []);
		// A third in the same millisecond (a parallel batch of calls without ids) is counted, as linearize counts it.
		const batch = new Ledger(() => source([stamped("a", 6), stamped("b", 7), stamped("c", 7), stamped("d", 7)]));
		assert.deepEqual(
			["r:dup", "r:dup@7", "r:dup@7.2", "r:dup@7.3"].map((id) => batch.lookup(id).at(-1)?.block.text),
			["d", "d", "c", "d"],
		);
	});

	it("finds a custom message (another extension's, a handoff seed) by the id the request gave it", () => {
		const at = "2026-12-05T10:00:00.123Z";
		const entry = { type: "custom_message", customType: "seed", content: "the plan", display: true, timestamp: at };
		const ledger = new Ledger(() => source([result("a", "alpha"), entry]));
		const [hit] = ledger.lookup(`u:custom:${Date.parse(at)}`);
		assert.equal(hit?.block.text, "the plan");
		assert.equal(hit?.message.role, "custom");
	});

	it("starts over when the source shrinks or is replaced, and after reset()", () => {
		let current = source([result("a", "alpha"), result("b", "beta")]);
		const ledger = new Ledger(() => current);
		assert.equal(ledger.lookup("r:b").length, 1);
		current = source([result("c", "gamma")]);
		assert.deepEqual(ledger.lookup("r:b"), [], "a shorter session's lookup still saw the old one");
		assert.equal(ledger.lookup("r:c")[0]?.block.text, "gamma");
		current = source([result("d", "delta"), result("e", "eps")]);
		ledger.reset();
		assert.deepEqual(ledger.lookup("r:c"), []);
		assert.equal(ledger.lookup("r:d").length, 1);
	});
});
