/**
 * The fold registry: records, code owners and collisions, frozen bytes that never change, unfold
 * and raw holds.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import type { FoldOp } from "../../src/core/apply.ts";
import { foldCode } from "../../src/core/digest.ts";
import { type FoldRecord, FoldRegistry } from "../../src/core/fold-registry.ts";

function op(id: string, text = `digest of ${id}`, code = foldCode(id)): FoldOp {
	return { id, code, text };
}

function record(id: string, code = foldCode(id), seq = 1, key?: string): FoldRecord {
	return { id, code, chars: 100, seq, key };
}

describe("FoldRegistry basics", () => {
	it("starts empty: everything plannable, nothing frozen, seq 0", () => {
		const registry = new FoldRegistry();
		assert.equal(registry.seq, 0);
		assert.equal(registry.plannable("r:a"), true);
		assert.equal(registry.frozenOp("r:a"), undefined);
		assert.deepEqual(registry.frozenOps(), []);
		assert.deepEqual(registry.allRecords(), []);
		assert.equal(registry.idOf("abc12345"), undefined);
	});

	it("records ids under their codes", () => {
		const registry = new FoldRegistry();
		registry.addRecord(record("r:a"));
		registry.addRecord(record("r:b"));
		assert.equal(registry.idOf(foldCode("r:a")), "r:a");
		assert.equal(registry.idOf(foldCode("r:b")), "r:b");
		assert.deepEqual(
			registry.allRecords().map((r) => r.id),
			["r:a", "r:b"],
		);
		assert.equal(registry.record("r:a")?.chars, 100);
	});

	it("holds raw an id whose record's code another id already owns", () => {
		const registry = new FoldRegistry();
		registry.addRecord(record("r:a", "samecode"));
		registry.addRecord(record("r:b", "samecode"));
		assert.equal(registry.idOf("samecode"), "r:a");
		assert.equal(registry.record("r:b"), undefined);
		assert.equal(registry.isHeldRaw("r:b"), true);
		assert.equal(registry.plannable("r:b"), false);
		assert.equal(registry.isHeldRaw("r:a"), false);
	});

	it("keeps the first code per content key", () => {
		const registry = new FoldRegistry();
		registry.addRecord(record("r:a", foldCode("r:a"), 1, "k1"));
		registry.addRecord(record("r:b", foldCode("r:b"), 2, "k1"));
		assert.equal(registry.knownContent().get("k1"), foldCode("r:a"));
	});
});

describe("screen", () => {
	it("drops an op whose code is owned by another id and keeps the rest", () => {
		const registry = new FoldRegistry();
		registry.addRecord(record("r:owner", "deadbeef"));
		const clash = op("r:late", "late", "deadbeef");
		const fine1 = op("r:x");
		const fine2 = op("r:y");
		const { ops, collisions } = registry.screen([fine1, clash, fine2]);
		assert.deepEqual(ops, [fine1, fine2]);
		assert.deepEqual(collisions, [{ id: "r:late", code: "deadbeef", holder: "r:owner" }]);
	});

	it("drops the second of two ops of one event with the same code", () => {
		const registry = new FoldRegistry();
		const first = op("r:one", "one", "cafebabe");
		const second = op("r:two", "two", "cafebabe");
		const other = op("r:three");
		const { ops, collisions } = registry.screen([first, second, other]);
		assert.deepEqual(ops, [first, other]);
		assert.deepEqual(collisions, [{ id: "r:two", code: "cafebabe", holder: "r:one" }]);
	});

	it("keeps an op whose code its own id already owns", () => {
		const registry = new FoldRegistry();
		registry.addRecord(record("r:a"));
		const again = op("r:a");
		assert.deepEqual(registry.screen([again]), { ops: [again], collisions: [] });
	});

	it("does not change the registry", () => {
		const registry = new FoldRegistry();
		registry.screen([op("r:a"), op("r:b", "b", foldCode("r:a"))]);
		assert.equal(registry.idOf(foldCode("r:a")), undefined);
		assert.equal(registry.plannable("r:a"), true);
		assert.equal(registry.plannable("r:b"), true);
		assert.equal(registry.isHeldRaw("r:b"), false);
	});
});

describe("commitLayer", () => {
	it("freezes ops, which then are not plannable", () => {
		const registry = new FoldRegistry();
		const a = op("r:a");
		registry.commitLayer(1, [a]);
		assert.deepEqual(registry.frozenOp("r:a"), a);
		assert.equal(registry.plannable("r:a"), false);
		assert.equal(registry.seq, 1);
	});

	it("keeps the first bytes: a later layer never changes a frozen block", () => {
		const registry = new FoldRegistry();
		registry.commitLayer(1, [op("r:a", "first bytes")]);
		registry.commitLayer(2, [op("r:a", "second bytes"), op("r:b", "b bytes")]);
		assert.equal(registry.frozenOp("r:a")?.text, "first bytes");
		assert.equal(registry.frozenOp("r:b")?.text, "b bytes");
		assert.deepEqual(
			registry.frozenOps().map((o) => [o.id, o.text]),
			[
				["r:a", "first bytes"],
				["r:b", "b bytes"],
			],
		);
		assert.equal(registry.seq, 2);
	});

	it("does not freeze an id held raw", () => {
		const registry = new FoldRegistry();
		registry.holdRaw("r:a");
		registry.commitLayer(1, [op("r:a")]);
		assert.equal(registry.frozenOp("r:a"), undefined);
		assert.equal(registry.plannable("r:a"), false);
	});

	it("keeps the newest seq (an older layer replayed late does not lower it)", () => {
		const registry = new FoldRegistry();
		registry.commitLayer(5, []);
		registry.commitLayer(3, [op("r:a")]);
		assert.equal(registry.seq, 5);
		assert.ok(registry.frozenOp("r:a"));
	});
});

describe("unfold", () => {
	it("makes a folded id render raw and never plannable again", () => {
		const registry = new FoldRegistry();
		registry.addRecord(record("r:a"));
		registry.commitLayer(1, [op("r:a"), op("r:b")]);
		registry.unfold("r:a");
		assert.equal(registry.isUnfolded("r:a"), true);
		assert.equal(registry.frozenOp("r:a"), undefined);
		assert.deepEqual(
			registry.frozenOps().map((o) => o.id),
			["r:b"],
		);
		assert.equal(registry.plannable("r:a"), false);
		// a later layer cannot bring it back
		registry.commitLayer(2, [op("r:a", "refold")]);
		assert.equal(registry.frozenOp("r:a"), undefined);
		assert.equal(registry.plannable("r:a"), false);
	});

	it("of an id never folded still bars it from planning", () => {
		const registry = new FoldRegistry();
		registry.unfold("r:z");
		assert.equal(registry.plannable("r:z"), false);
		registry.commitLayer(1, [op("r:z")]);
		assert.equal(registry.frozenOp("r:z"), undefined);
	});

	it("leaves other ids alone", () => {
		const registry = new FoldRegistry();
		registry.commitLayer(1, [op("r:a")]);
		registry.unfold("r:a");
		assert.equal(registry.plannable("r:c"), true);
		assert.equal(registry.isUnfolded("r:c"), false);
	});
});

describe("hasExtent with the adapter's hash", () => {
	it("tells an edit of the same length by the record's sha256, and hashes a matched text once", () => {
		let hashed = 0;
		const hash = (text: string) => {
			hashed++;
			return createHash("sha256").update(text, "utf8").digest("hex");
		};
		const r = new FoldRegistry();
		const text = "Tests: 80 passed";
		r.addRecord({ id: "r:d", code: "dddddddd", chars: text.length, sha256: hash(text).toUpperCase(), seq: 1 });
		assert.equal(r.hasExtent("r:d", "Tests: 80 FAILED", hash), false, "same length, other text");
		assert.equal(r.hasExtent("r:d", "Tests: 80 FAILED"), true, "without a hash only the extent is compared");
		assert.equal(r.hasExtent("r:d", text, hash), true);
		const before = hashed;
		assert.equal(r.hasExtent("r:d", `${text.slice(0, 5)}${text.slice(5)}`, hash), true, "a remembered match");
		assert.equal(hashed, before, "an equal text is not hashed again");
		assert.equal(r.hasExtent("r:d", "Tests: 80 FAILED", hash), false, "an edit after a match");
	});
});
