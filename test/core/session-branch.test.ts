/**
 * A session file's branch (core session-branch.ts): the path from a root to the last entry by `parentId`, as
 * Pi reads it, shared by the replay's session reader and a seeded session's parent.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lastBranch } from "../../src/core/session-branch.ts";

const e = (id: string | undefined, parentId: string | null | undefined, note = "") => ({ id, parentId, note });
const ids = (entries: readonly { id?: unknown; note: string }[]) => entries.map((x) => String(x.id ?? x.note));

describe("lastBranch", () => {
	it("follows parentIds back from the last entry, leaving a branch /tree left", () => {
		const entries = [e("a", null), e("b", "a"), e("side", "a"), e("c", "b")];
		assert.deepEqual(ids(lastBranch(entries).branch), ["a", "b", "c"]);
	});

	it("takes an entry whose parent is missing as a root (a converter dropped entries)", () => {
		assert.deepEqual(ids(lastBranch([e("a", null), e("c", "gone"), e("d", "c")]).branch), ["c", "d"]);
	});

	it("keeps every entry in order when none has an id (before v2)", () => {
		const entries = [e(undefined, undefined, "x"), e(undefined, undefined, "y")];
		assert.deepEqual(ids(lastBranch(entries).branch), ["x", "y"]);
	});

	it("links no entry without a parentId to an entry without an id", () => {
		const entries = [e(undefined, undefined, "stray"), e("a", null), e("b", undefined)];
		assert.deepEqual(ids(lastBranch(entries).branch), ["b"]);
	});

	it("names where a loop of parentIds closes, and ends the branch before it", () => {
		const { branch, looped } = lastBranch([e("a", "c"), e("b", "a"), e("c", "b")]);
		assert.equal(looped, "c");
		assert.deepEqual(ids(branch), ["a", "b", "c"]);
	});
});
