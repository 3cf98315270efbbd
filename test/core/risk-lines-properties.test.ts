/**
 * Seed invariant 6 as a property: every distinct risk line of a folded tool result either stands in
 * its digest (once, with the count of its copies) or is counted among those left out, within the
 * line range the digest names for a `lines` recall (that `recall_folded` then finds each left out in
 * the stored original: test/adapter/recall-search.test.ts). Texts mix error lines, stack frames
 * and plain lines drawn from small pools, so copies are common and the bounds are often reached.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { DIGEST_LIMITS, toolResultDigest } from "../../src/core/digest.ts";
import { riskLines } from "../../src/core/policy/risk-lexicon.ts";
import { parseLineRange } from "../../src/core/recall.ts";
import { clip, firstLine } from "../../src/core/tokens.ts";

const RUNS = Math.max(200, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

const errorLine = fc
	.tuple(fc.constantFrom("Error:", "FAIL", "TypeError:", "fatal:", "ENOENT"), fc.nat({ max: 30 }), fc.nat({ max: 3 }))
	.map(([word, n, pad]) => `${word} case ${n}${" detail".repeat(pad * 40)}`);
const frameLine = fc.nat({ max: 20 }).map((n) => `    at handler (src/app.ts:${n}:7)`);
const plainLine = fc.nat({ max: 50 }).map((n) => `line ${n} of ordinary output`);
const textArb = fc
	.array(fc.oneof({ arbitrary: errorLine, weight: 3 }, { arbitrary: frameLine, weight: 1 }, plainLine), {
		minLength: 1,
		maxLength: 80,
	})
	.map((lines) => lines.join("\n"));

describe("risk lines survive every digest", () => {
	test("each distinct risk line is in the digest with its count, or counted as left out", () => {
		fc.assert(
			fc.property(textArb, fc.boolean(), (text, isError) => {
				const digest = toolResultDigest({ code: "abcd1234", toolName: "bash", text, isError });
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
				// Each distinct line by its first occurrence's line number, which the digest names.
				const copies = new Map<string, { at: number; count: number }>();
				for (const risk of riskLines(text, isError)) {
					const seen = copies.get(risk.text);
					if (seen) seen.count++;
					else copies.set(risk.text, { at: risk.line, count: 1 });
				}
				let missing = 0;
				// The head shows the text's first line whole (unclipped): that line, once, is not listed again.
				const head = clip(firstLine(text), DIGEST_LIMITS.firstLineChars);
				let headShown = 0;
				for (const [line, { at, count }] of copies) {
					if (
						count === 1 &&
						line.trim() === head &&
						headShown === 0 &&
						digest.split("\n")[0].includes(`First line: ${head}`)
					) {
						headShown = 1;
						continue;
					}
					const shown = shownLines.find((l) => l.startsWith(`L${at}:`) || l.startsWith(`L${at} ×`));
					if (shown) {
						assert.ok(
							shown.endsWith(`: ${clip(line, DIGEST_LIMITS.riskLineChars)}`),
							"verbatim, clipped at most",
						);
						assert.match(shown, count > 1 ? new RegExp(`^L\\d+ ×${count}: `) : /^L\d+: /, "its count");
					} else {
						missing++;
						assert.ok(range && range.start <= at && at <= range.end, `L${at} lies in the range named`);
					}
				}
				assert.equal(Number(counted?.[1] ?? 0), missing, "every distinct line left out is counted");
				assert.equal(shownLines.length, copies.size - missing - headShown, "one line each, no copy shown twice");
			}),
			{ numRuns: RUNS },
		);
	});
});
