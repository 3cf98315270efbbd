/**
 * The pure text work behind recall_folded: argument rendering, line ranges, slices and grep.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import {
	grepText,
	matchQuality,
	parseLineRange,
	RECALL_LIMITS,
	recallCap,
	renderArgs,
	renderArgsPlaced,
	sliceLines,
} from "../../src/core/recall.ts";
import { printable } from "../../src/core/tokens.ts";

const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}${i === 9 ? " Error: boom (x+1)" : ""}`).join("\n");

describe("renderArgs", () => {
	it("shows small values inline and large or multi-line strings raw under their key path", () => {
		const out = renderArgs("edit", { path: "src/a.ts", edits: [{ oldText: "a\nb", newText: "c" }], n: 3, on: true });
		assert.equal(
			out,
			"arguments of edit:\npath: src/a.ts\nedits[0].oldText:\na\nb\nedits[0].newText: c\nn: 3\non: true",
		);
	});
	it("places each raw value: the lines its own count covers in the text", () => {
		const args = { path: "src/a.ts", edits: [{ oldText: "a\nb\n", newText: "c\nd\ne" }], content: "x".repeat(201) };
		const { text, fields } = renderArgsPlaced("edit", args);
		assert.equal(text, renderArgs("edit", args));
		assert.deepEqual(fields, [
			{ path: "edits[0].oldText", first: 4, last: 5 },
			{ path: "edits[0].newText", first: 8, last: 10 },
			{ path: "content", first: 12, last: 12 },
		]);
		const lines = text.split("\n");
		assert.deepEqual(lines.slice(3, 5), ["a", "b"], "a trailing line break opens no line of its own");
		assert.deepEqual(lines.slice(7, 10), ["c", "d", "e"]);
		assert.equal(lines[11], "x".repeat(201));
	});
	it("marks empty arrays and objects", () => {
		assert.equal(renderArgs("x", { a: [], b: {} }), "arguments of x:\na: []\nb: {}");
	});
});

describe("recallCap", () => {
	it("is the whole cap in a large or unknown window, a character per token in a small one, never under the least", () => {
		assert.equal(recallCap(undefined), RECALL_LIMITS.totalChars);
		assert.equal(recallCap(Number.NaN), RECALL_LIMITS.totalChars);
		assert.equal(recallCap(0), RECALL_LIMITS.totalChars);
		assert.equal(recallCap(200_000), 32_000);
		assert.equal(recallCap(32_000), 32_000);
		assert.equal(recallCap(16_000), 16_000);
		assert.equal(recallCap(8_192.5), 8_192);
		assert.equal(recallCap(1_000), RECALL_LIMITS.leastChars);
	});
});

describe("parseLineRange", () => {
	it("reads a-b, a-, a and spaces", () => {
		assert.deepEqual(parseLineRange("3-7"), { start: 3, end: 7 });
		assert.deepEqual(parseLineRange(" 3 - 7 "), { start: 3, end: 7 });
		assert.deepEqual(parseLineRange("5"), { start: 5, end: 5 });
		assert.deepEqual(parseLineRange("5-"), { start: 5, end: Number.MAX_SAFE_INTEGER });
	});
	it("reads a number past any line, however long, as the end", () => {
		assert.deepEqual(parseLineRange("1-99999999999999999999"), { start: 1, end: Number.MAX_SAFE_INTEGER });
		assert.deepEqual(parseLineRange("1-9999999999"), { start: 1, end: 9_999_999_999 });
		assert.deepEqual(parseLineRange("99999999999999999999"), {
			start: Number.MAX_SAFE_INTEGER,
			end: Number.MAX_SAFE_INTEGER,
			asked: "99999999999999999999",
		});
		assert.equal(parseLineRange(`1-${"9".repeat(300)}`), null, "a value longer than any range is refused");
	});
	it("reads a@c as one line from its character c on", () => {
		assert.deepEqual(parseLineRange("301@4001"), { start: 301, end: 301, column: 4001 });
		assert.deepEqual(parseLineRange(" 3 @ 1 "), { start: 3, end: 3, column: 1 });
		for (const bad of ["3@0", "0@5", "3@", "@5", "3-4@5", "3@5-6"]) assert.equal(parseLineRange(bad), null, bad);
	});
	it("rejects malformed, reversed, zero and non-string ranges", () => {
		for (const bad of ["", "a-b", "7-3", "0-2", "-3", "1-2-3", "1.5", 12, null, undefined]) {
			assert.equal(parseLineRange(bad), null, String(bad));
		}
	});
});

describe("sliceLines", () => {
	it("numbers the lines and reports the total", () => {
		const s = sliceLines(text, { start: 9, end: 11 }, 10_000);
		assert.equal(s.text, "9: line 9\n10: line 10 Error: boom (x+1)\n11: line 11");
		assert.equal(s.total, 30);
		assert.equal(s.cut, false);
	});
	it("stops at the size cap and says so", () => {
		const s = sliceLines(text, { start: 1, end: 30 }, 40);
		assert.equal(s.cut, true);
		assert.ok(s.text.length <= 40);
	});
	it("a range past the end is empty", () => {
		assert.equal(sliceLines(text, { start: 40, end: 50 }, 1000).text, "");
	});
	it("clips long lines of a range of several, and names the first", () => {
		const long = `a\n${"x".repeat(700)}\n${"y".repeat(900)}`;
		const s = sliceLines(long, { start: 1, end: 3 }, 10_000);
		assert.equal(s.clipped, 2);
		assert.equal(s.firstClipped, 2);
		assert.ok(!s.text.includes("x".repeat(700)));
	});
	it("serves one long line whole within the cap, and in pieces that join to it beyond", () => {
		const line = Array.from({ length: 1200 }, (_, i) => i + 1).join(",");
		const doc = `head\n${line}\ntail`;
		const whole = sliceLines(doc, { start: 2, end: 2 }, 10_000);
		assert.equal(whole.text, `2: ${line}`);
		assert.deepEqual(whole.piece, { line: 2, first: 1, last: line.length, length: line.length });
		assert.equal(whole.cut, false);
		let joined = "";
		let column = 1;
		for (let calls = 0; calls < 100; calls++) {
			const s = sliceLines(doc, { start: 2, end: 2, column }, 700, 10);
			assert.ok(s.text.length <= 700, `${s.text.length}`);
			assert.ok(s.text.startsWith("12: "), "numbered as shifted");
			joined += s.text.slice(4);
			if (!s.cut) break;
			column = (s.piece?.last ?? 0) + 1;
		}
		assert.equal(joined, line, "the pieces join to the line, nothing left out or repeated");
	});
	it("never splits a surrogate pair between pieces, nor starts one inside a pair", () => {
		const line = "😀".repeat(800);
		let joined = "";
		let column = 1;
		for (let calls = 0; calls < 100; calls++) {
			const s = sliceLines(line, { start: 1, end: 1, column }, 301);
			const part = s.text.slice(3);
			assert.doesNotMatch(part, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
			joined += part;
			if (!s.cut) break;
			column = (s.piece?.last ?? 0) + 1;
		}
		assert.equal(joined, line);
		assert.equal(sliceLines(line, { start: 1, end: 1, column: 2 }, 100).piece?.first, 1, "from the pair's start");
	});
});

describe("grepText", () => {
	it("is literal and case-insensitive, with context lines and match markers", () => {
		const g = grepText(text, "ERROR: BOOM (X+1)", 10_000);
		assert.equal(g.matches, 1);
		assert.equal(g.text, "8- line 8\n9- line 9\n10: line 10 Error: boom (x+1)\n11- line 11\n12- line 12");
	});
	it("separates distant hunks and merges overlapping ones", () => {
		const g = grepText("a\nx\nb\nc\nd\ne\nf\ng\nx\nh", "x", 10_000, 60, 1);
		assert.equal(g.text, "1- a\n2: x\n3- b\n--\n8- g\n9: x\n10- h");
		const near = grepText("x\ny\nx", "x", 10_000, 60, 1);
		assert.equal(near.text, "1: x\n2- y\n3: x");
	});
	it("caps the number of matches and the size, and says it cut", () => {
		const many = Array.from({ length: 500 }, () => "hit").join("\n");
		const g = grepText(many, "hit", 100_000);
		assert.equal(g.matches, 500);
		assert.equal(g.shown, RECALL_LIMITS.grepMatches);
		assert.equal(g.cut, true);
		const small = grepText(many, "hit", 50, 1000, 0);
		assert.ok(small.text.length <= 50);
		assert.equal(small.cut, true);
	});
	it("keeps to its size even when the best match with its context does not fit: that line alone, clipped", () => {
		const long = (tag: string) => `${tag} ${"x".repeat(590)}`;
		const text = [long("a"), long("b"), `${long("c")} needle ${"y".repeat(300)}`, long("d"), long("e")].join("\n");
		const g = grepText(text, "needle", 200);
		assert.ok(g.text.length <= 200, `${g.text.length} > 200`);
		assert.match(g.text, /^3: …x* needle y*…$/);
		assert.equal(g.shown, 1);
		assert.equal(g.cut, false);
	});

	it("shows a window around a match deep inside a long line", () => {
		const line = `${"word ".repeat(400)}NEEDLE_TOKEN ${"tail ".repeat(400)}`;
		const g = grepText(line, "needle_token", 10_000);
		assert.ok(g.text.includes("NEEDLE_TOKEN"), "the match stays visible");
		assert.ok(g.text.length < RECALL_LIMITS.lineChars + 20);
	});
	it("marks a matching line as a match even inside another match's context", () => {
		const out = "Fetching caption for en...\nDirect fetch failed: HTTP_429\nFailed: HTTP_429\n";
		const g = grepText(out, "Failed: HTTP_429", 10_000, 8, 1);
		assert.equal(g.matches, 2);
		assert.equal(g.shown, 2);
		assert.equal(g.text, "1- Fetching caption for en...\n2: Direct fetch failed: HTTP_429\n3: Failed: HTTP_429");
		const deps = grepText('\t\t"uuid": "^14.0.0",\n\t\t"zod": "^4.0.0"\n\t},', "4.0.0", 10_000, 8, 1);
		assert.equal(deps.text, '1: \t\t"uuid": "^14.0.0",\n2: \t\t"zod": "^4.0.0"\n3- \t},');
	});
	it("when not every match fits, shows the pattern's exact-case whole-token lines first, in line order", () => {
		const long = (tail: string) => `${"x".repeat(700)}&lsig=APaTxx${tail}`;
		const lines = [
			long("pf..."),
			"gap",
			"gap",
			long("pftyrb..."),
			"gap",
			"gap",
			long("..."),
			"gap",
			"gap",
			"see apatxx",
		];
		const g = grepText(lines.join("\n"), "APaTxx", 800, 8, 0);
		assert.equal(g.matches, 4);
		assert.equal(g.shown, 1);
		assert.equal(g.cut, true);
		assert.match(g.text, /^7: …x+&lsig=APaTxx\.\.\.$/);
		const roomy = grepText(lines.join("\n"), "APaTxx", 10_000, 2, 0);
		assert.deepEqual(
			roomy.text.split("\n").map((l) => l.split(":")[0]),
			["1", "--", "7"],
			"the whole token, then the first exact case in a longer token; the rest waits",
		);
	});
	it("when not every match fits, shows a line that begins with the pattern before lines that quote it", () => {
		const tail = "Property 'apiKey' does not exist on type 'SessionOptions'. ".repeat(8);
		const error = `test/a.test.ts(21,26): error TS2339: ${tail}`;
		const text = [`../pkg/${error}`, "ok", `  ${error}`, "ok", `see ../other/${error}`].join("\n");
		const g = grepText(text, error.slice(0, 200), 700, 8, 0);
		assert.equal(g.matches, 3);
		assert.equal(g.shown, 1);
		assert.match(g.text, /^3: {3}test\/a\.test\.ts\(21,26\)/, "the line the pattern begins, past its indentation");
	});

	it("when not every match fits, shows the line that is the pattern itself first (a risk line quoted whole)", () => {
		const detail = " detail".repeat(80);
		const text = [`Error: case 0${detail}`, `Error: case 0${detail}`, "ok", "Error: case 0", "ok"].join("\n");
		const g = grepText(text, "Error: case 0", 400, 8, 0);
		assert.equal(g.matches, 3);
		assert.equal(g.shown, 1);
		assert.equal(g.text, "4: Error: case 0", "not a longer line that begins with it");
	});
	it("takes a line for the pattern itself whatever its indentation or the pattern's, and case", () => {
		const lines = Array.from({ length: 90 }, (_, i) => `    Error: connection refused by host_${i}`);
		const text = [...lines, "    Error: connection refused"].join("\n");
		for (const pattern of [
			"    Error: connection refused",
			"  Error: connection refused",
			"error: CONNECTION refused",
		]) {
			const g = grepText(text, pattern, 400, 60, 0);
			assert.match(g.text, /^91: {5}Error: connection refused$/m, JSON.stringify(pattern));
		}
	});

	it("shows a long line around its exact-case whole-token match, not an earlier case variant", () => {
		const line = `apatxx ${"filler ".repeat(200)}lsig=APaTxx. ${"tail ".repeat(200)}`;
		const g = grepText(line, "APaTxx", 10_000);
		assert.match(g.text, /lsig=APaTxx\. /);
		assert.ok(g.text.length < RECALL_LIMITS.lineChars + 20);
	});
	it("shows a long line around a match in another case where lowering lengthens a character before it", () => {
		// "İ" lowers to two code units: a window around the match's place in the lowered text missed it.
		const line = `${"İ".repeat(700)} ÄRGER ${"x".repeat(2000)}`;
		const g = grepText(line, "ärger", 10_000);
		assert.equal(g.matches, 1);
		assert.match(g.text, /ÄRGER/);
	});
	it("finds nothing without a match", () => {
		const g = grepText(text, "absent", 1000);
		assert.equal(g.matches, 0);
		assert.equal(g.text, "");
	});
});

describe("a coloured block", () => {
	// A jest run with --color, as Pi's bash tool passes it on: the summary quotes its lines without colour.
	const text = "\x1b[1m\x1b[31m FAIL \x1b[39m\x1b[22m test/money.test.ts\n  \x1b[31mTypeError: boom\x1b[39m\nok";
	const quoted = printable(text.split("\n")[0]);

	it("is found by a line quoted without its colour codes, and grep shows the line without them", () => {
		assert.equal(quoted, " FAIL  test/money.test.ts");
		assert.ok(matchQuality(text, quoted) < 3, "search finds it");
		const g = grepText(text, quoted, 2_000, 8, 0);
		assert.equal(g.matches, 1);
		assert.equal(g.text, "1:  FAIL  test/money.test.ts");
		assert.equal(grepText(text, "TypeError: boom", 2_000, 8, 0).text, "2:   TypeError: boom");
	});

	it("is matched with its codes by a pattern that holds one", () => {
		assert.equal(grepText(text, "\x1b[31mTypeError", 2_000, 8, 0).matches, 1);
		assert.equal(matchQuality(text, "\x1b[32m FAIL"), 3, "a pattern with a code the text lacks there");
	});
});

describe("matchQuality", () => {
	// A hang bound, not a figure: weighing every one of 80 million overlapping occurrences of a
	// 500-letter pattern took about a minute, with Pi's event loop held the whole time. Synchronous
	// work cannot be interrupted in process, so it runs in a child that is killed at the bound.
	it("weighs a bounded number of occurrences: a line of one repeated letter is read once", () => {
		const recall = new URL("../../src/core/recall.ts", import.meta.url).href;
		const script = `
			const { grepText, matchQuality } = await import(${JSON.stringify(recall)});
			const line = "A".repeat(80_000_000);
			const pattern = "A".repeat(500);
			const found = grepText(line + "\\nA " + pattern + " A", pattern, 2_000);
			console.log(JSON.stringify({ quality: matchQuality(line, pattern), matches: found.matches, text: found.text }));`;
		const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
			encoding: "utf8",
			timeout: 20_000,
			killSignal: "SIGKILL",
		});
		assert.equal(child.signal, null, "killed at the bound: the match weighed every occurrence");
		assert.equal(child.status, 0, child.stderr);
		const out = JSON.parse(child.stdout) as { quality: number; matches: number; text: string };
		assert.equal(out.quality, 1, "held, joined to the letters around it");
		assert.equal(out.matches, 2);
		assert.match(out.text, /^2: A A{500} A$/m, "the line holding it as a whole token comes first");
	});

	it("ranks exact case as a whole token, exact case in a longer token, another case, absent", () => {
		assert.equal(matchQuality('"zod": "^4.0.0"', "4.0.0"), 0);
		assert.equal(matchQuality('"uuid": "^14.0.0"', "4.0.0"), 1);
		assert.equal(matchQuality("Direct fetch failed: HTTP_429", "Failed: HTTP_429"), 2);
		assert.equal(matchQuality("all good", "Failed: HTTP_429"), 3);
	});
	it("finds in any case exactly what grep finds: a character lowered to an ASCII letter too", () => {
		const lines = ["boiler at 310 \u212A ok", "\u0130stanbul depot", "plain 310 k", "nothing here"];
		for (const pattern of ["310 k", "310 K", "istanbul", "ISTANBUL", "i\u0307stanbul", "depot"]) {
			for (const line of lines) {
				const grep = grepText(line, pattern, 2_000).matches > 0;
				assert.equal(
					matchQuality(line, pattern) < 3,
					grep,
					`${JSON.stringify(pattern)} in ${JSON.stringify(line)}`,
				);
			}
		}
	});
	it("finds a whole-token occurrence after one inside a longer token", () => {
		assert.equal(matchQuality("lsig=APaTxxpf lsig=APaTxx.", "APaTxx"), 0);
	});
	it("a pattern edge that is not a word character may touch anything", () => {
		assert.equal(matchQuality("x(a+1)y", "(a+1)"), 0);
		assert.equal(matchQuality("xa+1", "a+1"), 1);
	});
	it("in another case, reads the pattern literally, ASCII or not", () => {
		assert.equal(matchQuality("X(A+1)Y [b]", "(a+1)"), 2, "regular-expression characters are literal");
		assert.equal(matchQuality("xaa1", "(a+1)"), 3);
		assert.equal(matchQuality("ab.c? $d^", "AB.C? $D^"), 2);
		assert.equal(matchQuality("abxc", "AB.C"), 3, "a dot is a dot");
		assert.equal(matchQuality("Größe: 12", "GRÖSSE"), 3);
		assert.equal(matchQuality("ÉTÉ 2024", "été"), 2, "a non-ASCII pattern compares lowered");
		assert.equal(matchQuality("parseHeader", "PARSEHEADER"), 2);
		assert.equal(matchQuality("parseHeader", "PARSEHEADERS"), 3, "then another pattern, no stale expression");
	});
});
