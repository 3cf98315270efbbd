/**
 * Seed invariant 6 as a property: every distinct risk line of a folded tool result, thinking block,
 * assistant text or duplicate result either stands in its digest (once, with the count of its
 * copies) or is counted among those left out, within the line range the digest names for a `lines`
 * recall, and none is left out short of the bounds; and each line left out is found in the original
 * by the search `recall_folded` runs (grepBlock, as its `grep` and `search` do) and by the `lines`
 * recall of its number (sliceLines; through the tool: test/adapter/recall-search.test.ts). Texts mix error
 * lines, stack frames and plain lines drawn from small pools, so copies are common and the bounds
 * are often reached; which lines are risk lines comes from the generator, not from the lexicon.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { DIGEST_LIMITS, duplicateDigest, textDigest, thinkingDigest, toolResultDigest } from "../../src/core/digest.ts";
import { grepBlock, parseLineRange, RECALL_LIMITS, sliceLines } from "../../src/core/recall.ts";
import { clip, firstLine } from "../../src/core/tokens.ts";

const RUNS = Math.max(200, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

/** A generated line and what it is: the oracle of which lines are risk lines, apart from the lexicon. */
interface Line {
	text: string;
	kind: "error" | "frame" | "plain";
}

const errorLine: fc.Arbitrary<Line> = fc
	.tuple(fc.constantFrom("Error:", "FAIL", "TypeError:", "fatal:", "ENOENT"), fc.nat({ max: 30 }), fc.nat({ max: 3 }))
	.map(([word, n, pad]) => ({ text: `${word} case ${n}${" detail".repeat(pad * 40)}`, kind: "error" }));
const frameLine: fc.Arbitrary<Line> = fc
	.nat({ max: 20 })
	.map((n) => ({ text: `    at handler (src/app.ts:${n}:7)`, kind: "frame" }));
const plainLine: fc.Arbitrary<Line> = fc
	.nat({ max: 50 })
	.map((n) => ({ text: `line ${n} of ordinary output`, kind: "plain" }));
const linesArb = fc.array(
	fc.oneof({ arbitrary: errorLine, weight: 3 }, { arbitrary: frameLine, weight: 1 }, plainLine),
	{ minLength: 1, maxLength: 80, size: "max" },
);

/**
 * The risk lines a digest must account for, by the generator's tags: error lines and stack frames;
 * in a failed result without an error line, every line (docs/policy.md). Each distinct text at its
 * first line's number, with its count.
 */
function expectedRisks(lines: readonly Line[], failed: boolean): Map<string, { at: number; count: number }> {
	const all = failed && !lines.some((l) => l.kind === "error");
	const out = new Map<string, { at: number; count: number }>();
	lines.forEach((line, i) => {
		if (!all && line.kind === "plain") return;
		const seen = out.get(line.text);
		if (seen) seen.count++;
		else out.set(line.text, { at: i + 1, count: 1 });
	});
	return out;
}

/**
 * Checks the risk lines of `digest` (code abcd1234) against `expected`: each distinct line stands in
 * it once, verbatim but clipped, with the count of its copies, or lies in the left-out line's range
 * and is counted there; the one the digest's first line shows whole (`head`, when `headShown`) is
 * not listed again; and lines are left out only past the bounds (12 lines or about 2,400 characters).
 * Returns the lines left out.
 */
function checkRisks(
	digest: string,
	expected: ReadonlyMap<string, { at: number; count: number }>,
	head: string | undefined,
): string[] {
	const body = digest.split("\n").slice(1);
	const counted =
		/^… (\d+) more distinct risk lines? left out \(L([\d-]+)\): recall_folded codes=\["abcd1234"\] lines="([\d-]+)"$/.exec(
			body.at(-1) ?? "",
		);
	const range = counted ? parseLineRange(counted[3]) : null;
	if (counted) {
		assert.equal(counted[2], counted[3], "the range said is the range to recall");
		assert.ok(range, "a range recall_folded takes");
	}
	const shownLines = counted ? body.slice(0, -1) : body;
	const left: string[] = [];
	let headShown = 0;
	for (const [line, { at, count }] of expected) {
		if (count === 1 && head !== undefined && line.trim() === head && headShown === 0) {
			headShown = 1;
			continue;
		}
		const shown = shownLines.find((l) => l.startsWith(`L${at}:`) || l.startsWith(`L${at} ×`));
		if (shown) {
			assert.ok(shown.endsWith(`: ${clip(line, DIGEST_LIMITS.riskLineChars)}`), "verbatim, clipped at most");
			assert.match(shown, count > 1 ? new RegExp(`^L\\d+ ×${count}: `) : /^L\d+: /, "its count");
		} else {
			left.push(line);
			assert.ok(range && range.start <= at && at <= range.end, `L${at} lies in the range named`);
		}
	}
	const missing = left.length;
	assert.equal(Number(counted?.[1] ?? 0), missing, "every distinct line left out is counted");
	assert.equal(shownLines.length, expected.size - missing - headShown, "one line each, no copy shown twice");
	if (missing > 0) {
		// The next line would not have fit: the line bound, or the character bound less one line at most.
		const chars = shownLines.reduce((n, l) => n + l.length + 1, 0);
		assert.ok(
			shownLines.length === DIGEST_LIMITS.riskLines ||
				chars + DIGEST_LIMITS.riskLineChars + 16 > DIGEST_LIMITS.riskChars,
			`${missing} left out with ${shownLines.length} lines in ${chars} characters shown`,
		);
	}
	return left;
}

/**
 * Checks that `recall_folded` finds each line of `left` in `text` (the stored original): a search for
 * it shows one of its lines, by number, and the `lines` recall of its first number serves it.
 */
function checkFound(text: string, left: readonly string[]): void {
	const lines = text.split("\n");
	for (const line of left) {
		const numbers = new Set<number>();
		lines.forEach((l, i) => {
			if (l === line) numbers.add(i + 1);
		});
		const found = grepBlock(text, line, RECALL_LIMITS.leastChars);
		assert.ok(found.matches >= numbers.size, "every copy counted as a match");
		const shown = [...found.text.matchAll(/^(\d+):/gm)].map((m) => Number(m[1]));
		assert.ok(
			shown.some((n) => numbers.has(n)),
			`a search for the line left out shows it: ${line.slice(0, 40)}`,
		);
		const first = Math.min(...numbers);
		// One line is served whole, or from its start in pieces that name the call that reads on.
		const slice = sliceLines(text, { start: first, end: first }, RECALL_LIMITS.leastChars);
		if (slice.cut) assert.ok(`${first}: ${line}`.startsWith(slice.text), "the lines recall serves its start");
		else assert.equal(slice.text, `${first}: ${line}`, "the lines recall serves it");
	}
}

describe("risk lines survive every digest", () => {
	test("a tool result's: each distinct risk line is in the digest with its count, or counted as left out", () => {
		fc.assert(
			fc.property(linesArb, fc.boolean(), (lines, isError) => {
				const text = lines.map((l) => l.text).join("\n");
				const digest = toolResultDigest({ code: "abcd1234", toolName: "bash", text, isError });
				// The head shows the text's first line whole (unclipped): that line, once, is not listed again.
				const head = clip(firstLine(text), DIGEST_LIMITS.firstLineChars);
				const headShown = digest.split("\n")[0].includes(`First line: ${head}`);
				checkFound(text, checkRisks(digest, expectedRisks(lines, isError), headShown ? head : undefined));
			}),
			{ numRuns: RUNS },
		);
	});

	test("a thinking block's, an assistant text's and a duplicate result's alike", () => {
		fc.assert(
			fc.property(linesArb, fc.boolean(), (lines, isError) => {
				const text = lines.map((l) => l.text).join("\n");
				const expected = expectedRisks(lines, false);
				const thinking = clip(firstLine(text), DIGEST_LIMITS.firstLineChars);
				checkFound(text, checkRisks(thinkingDigest("abcd1234", text), expected, thinking));
				checkFound(
					text,
					checkRisks(
						textDigest("abcd1234", text),
						expected,
						clip(firstLine(text), DIGEST_LIMITS.textFirstLineChars),
					),
				);
				// A duplicate shows no head: every risk line is listed or counted.
				checkFound(
					text,
					checkRisks(
						duplicateDigest("abcd1234", "bash", text, "efgh5678", isError),
						expectedRisks(lines, isError),
						undefined,
					),
				);
			}),
			{ numRuns: RUNS },
		);
	});
});
