/**
 * Reading what context-fold 0.5.1 left behind, in the core: its block ids mapped to ours, its
 * byte extents, its frozen digest bytes replayed verbatim (assistant text parts included), block
 * text identical to the text 0.5.1 hashed, and its seed-index lines read into records.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPlan, type FoldOp, retag } from "../../src/core/apply.ts";
import { fromLegacyId, linearize, type MessageLike } from "../../src/core/block.ts";
import { foldCode, parseCode } from "../../src/core/digest.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { summarizeIndex } from "../../src/core/index/merge.ts";
import { parseSeedIndex, serializeRecord } from "../../src/core/index/reader.ts";
import { renderSummary } from "../../src/core/summary.ts";
import { blockCost, estTokens, utf8Length } from "../../src/core/tokens.ts";
import { frozenFor } from "../../src/core/view.ts";
import {
	bytesOf,
	CODES,
	DIGESTS,
	L,
	legacyCode,
	legacyEntries,
	legacySeedIndex,
	sha,
} from "../fixtures/legacy-0.5.1.ts";

const messages = (): MessageLike[] =>
	legacyEntries().flatMap((e) => (e.type === "message" ? [e.message as MessageLike] : []));

describe("0.5.1 block ids", () => {
	it("maps assistant part ids a:<anchor>:p<j> to a:<anchor>:<j>, anchors with colons included", () => {
		assert.equal(fromLegacyId("a:resp_4Lw8:p0"), "a:resp_4Lw8:0");
		assert.equal(fromLegacyId("a:t1757512800000:p12"), "a:t1757512800000:12");
		assert.equal(fromLegacyId("a:x:p1:p0"), "a:x:p1:0");
	});

	it("leaves u:, r:, s: ids and every id of ours unchanged", () => {
		for (const id of ["u:1757512800000", "r:toolu_01QmZ7", "s:1757512800000", "a:resp_4Lw8:0", "a:call_1:args"]) {
			assert.equal(fromLegacyId(id), id);
		}
	});

	it("names the very blocks our linearize gives: every 0.5.1 id of the fixture is one of ours after mapping", () => {
		const ours = new Set(linearize(messages()).map((b) => b.id));
		for (const id of [L.bashId, L.thinkingId, L.textId, L.readId, L.unfoldedId, "u:1757512800000"]) {
			assert.ok(ours.has(fromLegacyId(id)), id);
		}
	});

	it("keeps 0.5.1's 6-character codes readable beside ours", () => {
		assert.equal(legacyCode("r:toolu_01QmZ7"), "lfnrzh");
		assert.equal(parseCode("{#lfnrzh FOLDED}"), "lfnrzh");
		assert.equal(parseCode("#23SZ10"), "23sz10");
		assert.equal(foldCode(L.bashId).length, 8);
	});
});

describe("block text equals the text 0.5.1 hashed", () => {
	it("for a multi-part tool result (parts joined with a newline), thinking, assistant text and the user message", () => {
		const blocks = new Map(linearize(messages()).map((b) => [b.id, b.text] as const));
		assert.equal(sha(blocks.get(fromLegacyId(L.bashId)) ?? ""), sha(L.bashText));
		assert.equal(blocks.get(fromLegacyId(L.thinkingId)), L.thinkingText);
		assert.equal(blocks.get(fromLegacyId(L.textId)), L.textText);
		assert.equal(blocks.get("u:1757512800000"), "run the tests and fix the header parser");
	});
});

describe("utf8Length", () => {
	it("counts UTF-8 bytes: ASCII, two- and three-byte characters, surrogate pairs, lone surrogates", () => {
		for (const text of ["", "abc", "é", "→ ✓", "😀x", L.bashText])
			assert.equal(utf8Length(text), bytesOf(text), text);
		assert.equal(utf8Length("\ud800"), 3);
		assert.equal(utf8Length("a\udc00"), 4);
	});
});

describe("extents of 0.5.1 records", () => {
	const registry = () => {
		const r = new FoldRegistry();
		r.addRecord({ id: "r:a", code: "aaaaaa", chars: -1, bytes: bytesOf(L.bashText), seq: 1 });
		r.addRecord({ id: "r:b", code: "bbbbbb", chars: -1, seq: 0 });
		r.addRecord({ id: "r:c", code: "cccccccc", chars: 5, seq: 2 });
		return r;
	};

	it("compares UTF-8 bytes for a 0.5.1 record (its UTF-16 length differs), characters for ours", () => {
		assert.notEqual(L.bashText.length, bytesOf(L.bashText));
		assert.equal(registry().hasExtent("r:a", L.bashText.replace("✓", "v")), false, "same length, fewer bytes");
		const r = registry();
		assert.equal(r.hasExtent("r:a", L.bashText), true);
		assert.equal(r.hasExtent("r:a", L.bashText), true, "a remembered match");
		assert.equal(r.hasExtent("r:a", `${L.bashText}!`), false);
		assert.equal(r.hasExtent("r:c", "12345"), true);
		assert.equal(r.hasExtent("r:c", "1234"), false);
	});

	it("lets a record of unknown extent match (0.5.1 replayed layers without any check)", () => {
		assert.equal(registry().hasExtent("r:b", "anything"), true);
	});

	it("sends a block raw when its byte extent changed (frozenFor marks it stale)", () => {
		const r = new FoldRegistry();
		const id = fromLegacyId(L.bashId);
		r.addRecord({ id, code: CODES.bash, chars: -1, bytes: bytesOf(L.bashText) + 1, seq: 1 });
		r.commitLayer(1, [{ id, code: CODES.bash, text: DIGESTS.bash, legacy: true }]);
		const { ops, stale } = frozenFor(linearize(messages()), r);
		assert.deepEqual(ops, []);
		assert.deepEqual(stale, [id]);
	});
});

describe("replaying 0.5.1 layers", () => {
	const op = (id: string, code: string, text: string): FoldOp => ({ id: fromLegacyId(id), code, text, legacy: true });

	it("sends the frozen bytes verbatim for a tool result, unsigned thinking and an assistant text part", () => {
		const input = messages();
		const { messages: out, applied } = applyPlan(input, [
			op(L.bashId, CODES.bash, DIGESTS.bash),
			op(L.thinkingId, CODES.thinking, DIGESTS.thinking),
			op(L.textId, CODES.text, DIGESTS.text),
		]);
		assert.equal(applied.length, 3);
		const result = out.find((m) => m.toolCallId === "toolu_01QmZ7");
		assert.deepEqual(result?.content, [{ type: "text", text: DIGESTS.bash }]);
		const parts = out.find((m) => m.responseId === "resp_4Lw8")?.content as Record<string, unknown>[];
		assert.equal(parts[0].thinking, DIGESTS.thinking);
		assert.equal(parts[1].text, DIGESTS.text);
		assert.equal(parts[2].type, "toolCall");
	});

	it("refuses an assistant text op that is not a 0.5.1 replay, and a replay on signed thinking", () => {
		const input = messages();
		const plain = applyPlan(input, [{ id: fromLegacyId(L.textId), code: CODES.text, text: DIGESTS.text }]);
		assert.deepEqual(plain.refused, [{ id: fromLegacyId(L.textId), reason: "not-foldable" }]);
		const signed = input.map((m) =>
			m.responseId === "resp_4Lw8"
				? {
						...m,
						content: (m.content as Record<string, unknown>[]).map((p, j) =>
							j === 0 ? { ...p, thinkingSignature: "sig" } : p,
						),
					}
				: m,
		);
		const replay = applyPlan(signed, [op(L.thinkingId, CODES.thinking, DIGESTS.thinking)]);
		assert.deepEqual(replay.refused, [{ id: fromLegacyId(L.thinkingId), reason: "not-foldable" }]);
	});

	it("keeps a text already headed by exactly its own tag; re-heads anything else", () => {
		assert.equal(retag("lfnrzh", "{#lfnrzh FOLDED}   two spaces kept"), "{#lfnrzh FOLDED}   two spaces kept");
		assert.equal(retag("lfnrzh", "{#lfnrzh FOLDED} \nnewline kept"), "{#lfnrzh FOLDED} \nnewline kept");
		assert.equal(retag("lfnrzh", "{#zzzzzz FOLDED} x"), "{#lfnrzh FOLDED} x");
		assert.equal(retag("lfnrzh", "{#lfnrzh FOLDED} {#zzzzzz FOLDED} x"), "{#lfnrzh FOLDED} x");
		assert.equal(retag("lfnrzh", "{#lfnrzh FOLDED}x"), "{#lfnrzh FOLDED} x");
	});
});

describe("0.5.1 seed-index lines", () => {
	it("reads v2 and v1 fold-index records, applies the fold-retract, and counts nothing as skipped", () => {
		const parsed = parseSeedIndex(legacySeedIndex());
		assert.equal(parsed.skipped, 0);
		assert.equal(parsed.newer, 0);
		assert.deepEqual(
			parsed.records.map((r) => [r.kind, r.seq]),
			[
				["fold", 4],
				["fold", 1],
				["fold", 2],
			],
		);
		assert.ok(!JSON.stringify(parsed.records).includes(L.retractedIdentifier));
	});

	it("maps every field: files, commands, errors, identifiers, userMessages, spans with mapped ids", () => {
		const [v1, first] = parseSeedIndex(legacySeedIndex()).records;
		assert.deepEqual(first.files, [
			{ path: "src/a.test.ts", tools: [], turn: 0 },
			{ path: L.indexOnlyFile, tools: [], turn: 0 },
		]);
		assert.deepEqual(first.commands, [{ command: "npx vitest run", turn: 0 }]);
		assert.deepEqual(first.errors, [{ line: "Error: expected 3, got 4", turn: 0 }]);
		assert.deepEqual(first.identifiers, [L.indexOnlyIdentifier, "parseHeader"]);
		assert.deepEqual(first.intents, [{ turn: 1, text: "run the tests and fix the header parser" }]);
		const bytes = bytesOf(L.bashText);
		assert.deepEqual(first.spans, [
			{
				id: L.bashId,
				code: CODES.bash,
				kind: "toolResult",
				tool: "bash",
				turn: 1,
				chars: bytes,
				tokens: blockCost(bytes),
				sha256: sha(L.bashText),
			},
			{
				id: "a:resp_4Lw8:0",
				code: CODES.thinking,
				kind: "thinking",
				turn: 1,
				chars: bytesOf(L.thinkingText),
				tokens: blockCost(bytesOf(L.thinkingText)),
				sha256: sha(L.thinkingText),
			},
			{
				id: "a:resp_4Lw8:1",
				code: CODES.text,
				kind: "text",
				turn: 1,
				chars: bytesOf(L.textText),
				tokens: blockCost(bytesOf(L.textText)),
				sha256: sha(L.textText),
			},
		]);
		assert.deepEqual(v1.spans, [
			{
				id: L.readId,
				code: CODES.read,
				kind: "toolResult",
				tool: "read",
				turn: 1,
				chars: bytesOf(L.readText),
				tokens: blockCost(bytesOf(L.readText)),
			},
		]);
	});

	it("lets the latest record per seq win, and a retraction void only what came before it", () => {
		const line = (seq: number, identifier: string) =>
			`${JSON.stringify({ v: 2, kind: "fold-index", seq, trigger: "threshold", identifiers: [identifier], spans: [] })}\n`;
		const retract = (seq: number) => `${JSON.stringify({ v: 2, kind: "fold-retract", seq, at: "x" })}\n`;
		const parsed = parseSeedIndex(line(1, "first") + line(1, "second") + retract(2) + line(2, "kept") + retract(3));
		assert.deepEqual(
			parsed.records.map((r) => r.identifiers[0]),
			["second", "kept"],
		);
		assert.equal(parseSeedIndex(line(5, "gone") + retract(5)).records.length, 0);
	});

	it("makes a compaction record of trigger compact, skips a fold-index line without spans, reads v3 object lists", () => {
		const compact = { v: 2, kind: "fold-index", seq: 9, trigger: "compact", spans: [] };
		const noSpans = { v: 2, kind: "fold-index", seq: 10, trigger: "cap" };
		const v3 = {
			v: 3,
			kind: "fold-index",
			seq: 11,
			trigger: "cap",
			commands: [{ command: "make", turn: 4 }],
			errors: [{ line: "Error: x", turn: 4 }, 7],
			spans: [],
		};
		const parsed = parseSeedIndex([compact, noSpans, v3].map((l) => `${JSON.stringify(l)}\n`).join(""));
		assert.equal(parsed.skipped, 1);
		assert.deepEqual(
			parsed.records.map((r) => r.kind),
			["compaction", "fold"],
		);
		assert.deepEqual(parsed.records[1].commands, [{ command: "make", turn: 4 }]);
		assert.deepEqual(parsed.records[1].errors, [{ line: "Error: x", turn: 4 }]);
	});

	it("coexists with this version's records in one file", () => {
		const ours = {
			v: 1,
			kind: "fold" as const,
			seq: 5,
			files: [],
			commands: [],
			errors: [],
			identifiers: ["ours"],
			intents: [],
			spans: [],
		};
		const parsed = parseSeedIndex(legacySeedIndex() + serializeRecord(ours));
		assert.deepEqual(parsed.records.at(-1), ours);
		assert.equal(parsed.records.length, 4);
	});

	it("renders in a summary without made-up turns: facts, intents with their turn, a pointer to a 0.5.1 code", () => {
		const summary = renderSummary({
			summary: summarizeIndex(parseSeedIndex(legacySeedIndex()).records),
			scope: "s.",
		});
		assert.ok(summary.includes(`- ${L.indexOnlyFile}\n`), summary);
		assert.ok(summary.includes("- Error: expected 3, got 4\n"), summary);
		assert.ok(summary.includes("- `npx vitest run`\n"), summary);
		assert.ok(summary.includes("- [turn 1] run the tests and fix the header parser"), summary);
		assert.ok(summary.includes(L.indexOnlyIdentifier), summary);
		// Counted as a digest counts its block: 0.5.1's byte count standing in for characters.
		assert.ok(summary.includes(`- {#${CODES.bash} FOLDED} bash, turn 1, ~${estTokens(bytesOf(L.bashText))} tokens`));
		assert.ok(!summary.includes("[turn 0]"));
	});
});
