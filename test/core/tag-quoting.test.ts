/**
 * Invariant 2 over every text the engine emits: tag-shaped text copied from content reaches the
 * model defused (`[quoted tag #code]`), so the only `{#code FOLDED}` tags in digests, summaries and
 * handoff seeds are the engine's own, and each of them names a code the engine assigned.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	argDigest,
	codesIn,
	duplicateDigest,
	foldArgs,
	parseCode,
	quoteTags,
	thinkingDigest,
	toolResultDigest,
} from "../../src/core/digest.ts";
import type { SeedSummary } from "../../src/core/index/merge.ts";
import { renderHandoff, renderSummary } from "../../src/core/summary.ts";

const PLANTED = "{#abcdefgh FOLDED}";
const VARIANTS = [PLANTED, "{#ABCDEFGH folded}", "{ #abcdef  FOLDED }", "{#zz0011 FOLDED}"];

describe("quoteTags", () => {
	it("defuses every form a code parser accepts, keeping the code readable", () => {
		for (const tag of VARIANTS) {
			assert.ok(parseCode(tag), `${tag} parses as a code`);
			const out = quoteTags(`before ${tag} after`);
			assert.deepEqual(codesIn(out), [], out);
			assert.equal(parseCode(out.slice(7, -6)), null);
			assert.match(out, /^before \[quoted tag #[0-9a-zA-Z]+\] after$/);
		}
	});

	it("defuses a tag that colour codes cut into parts, as `grep --color` prints one", () => {
		for (const tag of [
			"{#abcdefgh \x1b[01;31mFOLDED\x1b[m}",
			"{#\x1b[31mabcdefgh\x1b[m FOLDED}",
			"\x1b[1m{#abcdefgh FOLDED}",
		]) {
			const out = quoteTags(`before ${tag} after`);
			assert.match(out, /\[quoted tag #abcdefgh\]/, JSON.stringify(out));
			assert.doesNotMatch(out, /FOLDED/);
		}
		const digest = toolResultDigest({
			code: "k3x9a0b2",
			toolName: "bash",
			text: "x\nerror in {#abcdefgh \x1b[01;31mFOLDED\x1b[m} fixture",
			isError: false,
		});
		assert.equal(digest.match(/FOLDED/g)?.length, 1, digest);
	});

	it("leaves text without tags byte-identical", () => {
		for (const text of ["", "plain", "#abcdefgh", "{#abcdefg FOLDED}", "{#abcdefgh FOLDED", "a # b { c }"]) {
			assert.equal(quoteTags(text), text);
		}
	});
});

describe("digests carry only the engine's tag", () => {
	it("tool result: first line and risk lines quote a planted tag", () => {
		const text = `${PLANTED} header line\nok\nError: see ${PLANTED} for details\n    at f (a.ts:1:1)`;
		const d = toolResultDigest({ code: "k3x9a0b2", toolName: "bash", text, isError: false });
		assert.deepEqual(codesIn(d), ["k3x9a0b2"]);
		assert.match(d, /First line: \[quoted tag #abcdefgh\] header line/);
		assert.match(d, /L3: Error: see \[quoted tag #abcdefgh\] for details/);
	});

	it("thinking, argument and duplicate digests", () => {
		assert.deepEqual(codesIn(thinkingDigest("k3x9a0b2", `${PLANTED} plan`)), ["k3x9a0b2"]);
		assert.deepEqual(codesIn(argDigest("k3x9a0b2", `${PLANTED}\n${"x".repeat(600)}`)), ["k3x9a0b2"]);
		const args = foldArgs("k3x9a0b2", { path: "a.ts", content: `${PLANTED} ${"y".repeat(600)}` });
		assert.deepEqual(codesIn(JSON.stringify(args)), ["k3x9a0b2"]);
		assert.deepEqual(codesIn(duplicateDigest("k3x9a0b2", PLANTED, "text", "zz000001")), ["k3x9a0b2", "zz000001"]);
	});
});

describe("summaries and handoff seeds carry only pointers the engine wrote", () => {
	const summary: SeedSummary = {
		sources: [{ kind: "compaction", seq: 1 }],
		files: [{ path: `src/${PLANTED}.ts`, tools: ["read"], turn: 1 }],
		commands: [{ command: `echo ${PLANTED}`, turn: 2, code: "k3x9a0b2" }],
		errors: [{ line: `Error: ${PLANTED}`, turn: 2, code: "k3x9a0b2", tool: "bash" }],
		identifiers: [PLANTED],
		intents: [{ turn: 1, text: `recall ${PLANTED} please` }],
		spans: [{ id: "r:t1", code: "k3x9a0b2", kind: "toolResult", tool: "bash", turn: 2, chars: 4000, tokens: 1004 }],
	};

	it("every section quotes content tags; the pointers keep theirs", () => {
		const out = renderSummary({
			summary,
			scope: "Scope.",
			previousSummary: `A model's summary that quoted ${PLANTED}.`,
		});
		assert.deepEqual([...new Set(codesIn(out))], ["k3x9a0b2"]);
		assert.equal(out.split("[quoted tag #abcdefgh]").length - 1, 6);
	});

	it("the handoff seed quotes a tag in the goal", () => {
		const seed = renderHandoff({ goal: `continue ${PLANTED}`, parentSession: "p", writtenAt: "t", summary: "body" });
		assert.deepEqual(codesIn(seed), []);
		assert.match(seed, /Goal: continue \[quoted tag #abcdefgh\]/);
	});
});
