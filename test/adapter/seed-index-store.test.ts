/**
 * The seed index on disk (IndexStore) after damage: a file whose last line was cut mid-write (before
 * this process opened it, or later by another process on the same session) keeps every record
 * appended after it readable, and a fold event rejected on one branch retracts only that branch's
 * record of its seq (sequence numbers restart on each branch).
 */
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { IndexStore, type SessionPlace } from "../../src/adapters/pi/compaction/seed-index-store.ts";
import { extractSeedRecord } from "../../src/core/index/extract.ts";
import { parseSeedIndex, serializeRecord } from "../../src/core/index/reader.ts";
import type { SeedRecord } from "../../src/core/index/seed-index.ts";

const dir = mkdtempSync(join(tmpdir(), "seed-index-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A saved session named `id` in the temporary folder. */
function place(id: string): SessionPlace {
	return { getSessionDir: () => dir, getSessionId: () => id, getSessionFile: () => join(dir, `${id}.jsonl`) };
}

/** A fold record of event `seq` (of no messages), written at `leaf`. */
function fold(seq: number, leaf: string): SeedRecord {
	return { ...extractSeedRecord({ kind: "fold", seq, messages: [], spans: [] }), leaf };
}

const tags = (records: readonly SeedRecord[]) => records.map((r) => `${r.kind}:${r.seq}@${r.leaf}`);

describe("IndexStore", () => {
	it("appends after a line cut mid-write on a new line, so the new record stays readable", () => {
		const store = new IndexStore();
		store.open(place("torn"));
		const file = store.file() as string;
		store.append(fold(1, "e1"));
		writeFileSync(file, readFileSync(file, "utf8").slice(0, -20));
		const reopened = new IndexStore();
		assert.deepEqual(reopened.open(place("torn")), { skipped: 1 });
		reopened.append(fold(2, "e2"));
		const parsed = parseSeedIndex(readFileSync(file, "utf8"));
		assert.deepEqual(tags(parsed.records), ["fold:2@e2"]);
		assert.equal(parsed.skipped, 1, "only the line cut mid-write is lost");
	});

	it("appends on a new line after a line another process cut mid-write once this one had opened the file", () => {
		const store = new IndexStore();
		store.open(place("torn-later"));
		const file = store.file() as string;
		store.append(fold(1, "e1"));
		// A second pi on the same session dies in the middle of its append.
		appendFileSync(file, serializeRecord(fold(7, "x7")).slice(0, 30));
		store.append(fold(2, "e2"));
		store.retract(1, "layer could not be appended", "fold");
		const reopened = new IndexStore();
		assert.deepEqual(reopened.open(place("torn-later")), { skipped: 1 }, "only the other process's fragment");
		assert.deepEqual(tags(reopened.all()), ["fold:2@e2"], "record 2 kept, record 1 retracted");
		assert.ok(readFileSync(file, "utf8").endsWith("\n"));
	});

	it("retracts a rejected event's record on its own branch only", () => {
		const store = new IndexStore();
		store.open(place("branches"));
		store.append(fold(1, "a7"));
		// /tree to another branch: its first event is numbered 1 again, and is rejected.
		store.append(fold(1, "b9"));
		store.retract(1, "layer could not be appended", "fold");
		assert.deepEqual(tags(store.all()), ["fold:1@a7"]);
		const reopened = new IndexStore();
		reopened.open(place("branches"));
		assert.deepEqual(tags(reopened.all()), ["fold:1@a7"]);
		const lines = readFileSync(store.file() as string, "utf8")
			.trim()
			.split("\n");
		assert.equal(lines.length, 3);
		assert.deepEqual(JSON.parse(lines[2]), {
			v: 1,
			kind: "retraction",
			seq: 1,
			reason: "layer could not be appended",
			target: "fold",
			leaf: "b9",
		});
	});

	it("reads a retraction without a leaf as before: every record of its kind and seq", () => {
		const text = [fold(1, "a7"), fold(1, "b9")].map(serializeRecord).join("");
		const retraction = `${JSON.stringify({ v: 1, kind: "retraction", seq: 1, reason: "old", target: "fold" })}\n`;
		assert.deepEqual(tags(parseSeedIndex(text + retraction).records), []);
	});

	it("starts a forked or cloned session from its parent's records, read only, and says when they cannot be read", () => {
		const parent = new IndexStore();
		parent.open(place("parent"));
		parent.append(fold(1, "p1"));
		writeFileSync(join(dir, "parent.jsonl"), `${JSON.stringify({ type: "session", id: "parent" })}\n`);
		const child = (id: string, parentSession: string): SessionPlace => ({
			...place(id),
			getHeader: () => ({ parentSession }),
		});
		const clone = new IndexStore();
		clone.open(child("clone", join(dir, "parent.jsonl")));
		assert.deepEqual(tags(clone.all()), ["fold:1@p1"]);
		clone.append(fold(2, "c2"));
		const reopened = new IndexStore();
		reopened.open(child("clone", join(dir, "parent.jsonl")));
		assert.deepEqual(tags(reopened.all()), ["fold:1@p1", "fold:2@c2"], "the parent's first, then its own");
		assert.deepEqual(
			tags(parseSeedIndex(readFileSync(parent.file() as string, "utf8")).records),
			["fold:1@p1"],
			"the parent's file is left as it was",
		);
		const warned: string[] = [];
		writeFileSync(join(dir, "gone.jsonl"), `${JSON.stringify({ type: "session", id: "gone" })}\n`);
		new IndexStore((m) => warned.push(m)).open(child("orphan", join(dir, "gone.jsonl")));
		assert.equal(warned.length, 0, "a parent without an index is no problem");
		writeFileSync(join(dir, "odd.jsonl"), `${JSON.stringify({ type: "session", id: "odd" })}\n`);
		mkdirSync(join(dir, "context-fold", "odd", "seed-index.jsonl"), { recursive: true });
		new IndexStore((m) => warned.push(m)).open(child("odd-child", join(dir, "odd.jsonl")));
		assert.equal(warned.length, 1);
		assert.match(warned[0], /the parent session's seed index .* cannot be read \(it is not a regular file\)/);
	});

	it("reads the indexes of every session a fork descends from, oldest first, and stops at a loop", () => {
		const header = (id: string, parent?: string) =>
			`${JSON.stringify({ type: "session", id, ...(parent ? { parentSession: join(dir, `${parent}.jsonl`) } : {}) })}\n`;
		for (const [id, parent] of [
			["g0", undefined],
			["g1", "g0"],
			["g2", "g1"],
		] as const) {
			writeFileSync(join(dir, `${id}.jsonl`), header(id, parent));
			const store = new IndexStore();
			store.open(place(id));
			store.append(fold(1, `${id}-leaf`));
		}
		const child = (parent: string): SessionPlace => ({
			...place(`child-of-${parent}`),
			getHeader: () => ({ parentSession: join(dir, `${parent}.jsonl`) }),
		});
		const store = new IndexStore();
		store.open(child("g2"));
		assert.deepEqual(tags(store.all()), ["fold:1@g0-leaf", "fold:1@g1-leaf", "fold:1@g2-leaf"]);
		writeFileSync(join(dir, "l1.jsonl"), header("l1", "l2"));
		writeFileSync(join(dir, "l2.jsonl"), header("l2", "l1"));
		const looped = new IndexStore();
		looped.open(child("l1"));
		assert.deepEqual(tags(looped.all()), [], "a chain that loops ends");
	});
});
