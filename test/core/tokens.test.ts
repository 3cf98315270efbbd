/**
 * The token oracle (ceil(chars/4) + block overhead, flat image cost) and the text helpers: clip,
 * clipAround, firstLine, lineCount, safeSlice.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	BLOCK_OVERHEAD,
	blockCost,
	clip,
	clipAround,
	estTokens,
	firstLine,
	IMAGE_TOKENS,
	lineCount,
	percent,
	safeSlice,
	short,
	tokenBound,
} from "../../src/core/tokens.ts";

describe("short and percent", () => {
	it("write a count that rounds to the next unit in that unit (1M, never 1000k; 10k, never 10.0k)", () => {
		assert.equal(short(812), "812");
		assert.equal(short(4_449), "4.4k");
		assert.equal(short(9_949), "9.9k");
		assert.equal(short(9_950), "10k");
		assert.equal(short(999_499), "999k");
		assert.equal(short(999_500), "1M");
		assert.equal(short(1_250_000), "1.3M");
	});
	it("never write a share short of all as 100% or one above none as 0%", () => {
		assert.equal(percent(0.9999), "99%");
		assert.equal(percent(0.0001), "1%");
		assert.equal(percent(1), "100%");
		assert.equal(percent(0), "0%");
		assert.equal(percent(0.456), "46%");
	});
});

describe("estTokens", () => {
	it("is ceil(chars / 4)", () => {
		assert.equal(estTokens(0), 0);
		assert.equal(estTokens(1), 1);
		assert.equal(estTokens(4), 1);
		assert.equal(estTokens(5), 2);
		assert.equal(estTokens(8), 2);
		assert.equal(estTokens(9), 3);
		assert.equal(estTokens(4001), 1001);
	});
});

describe("tokenBound", () => {
	it("counts ASCII at four characters a token and every other UTF-16 unit as a token", () => {
		assert.equal(tokenBound(""), 0);
		assert.equal(tokenBound("abcdefgh"), 2);
		assert.equal(tokenBound("解析器输出"), 5);
		assert.equal(tokenBound("ok: 解析器"), 4);
		assert.ok(tokenBound("解".repeat(400)) >= 4 * estTokens("解".repeat(400)));
	});
});

describe("blockCost", () => {
	it("is ceil(chars / 4) + 4 for text", () => {
		assert.equal(BLOCK_OVERHEAD, 4);
		assert.equal(blockCost(0), 4);
		assert.equal(blockCost(1), 5);
		assert.equal(blockCost(4), 5);
		assert.equal(blockCost(5), 6);
		assert.equal(blockCost(1000), 254);
	});

	it("charges a flat amount per image on top", () => {
		assert.ok(IMAGE_TOKENS > 0);
		assert.equal(blockCost(8, 1), 2 + IMAGE_TOKENS + 4);
		assert.equal(blockCost(8, 3), 2 + 3 * IMAGE_TOKENS + 4);
	});
});

describe("safeSlice", () => {
	it("returns short text unchanged", () => {
		assert.equal(safeSlice("abc", 3), "abc");
		assert.equal(safeSlice("abc", 10), "abc");
	});

	it("cuts to max UTF-16 units", () => {
		assert.equal(safeSlice("abcdef", 4), "abcd");
		assert.equal(safeSlice("abcdef", 0), "");
	});

	it("never splits a surrogate pair", () => {
		const text = "ab😀cd"; // the emoji occupies units 2 and 3
		assert.equal(safeSlice(text, 3), "ab");
		assert.equal(safeSlice(text, 4), "ab😀");
		// no lone high surrogate at the end
		const cut = safeSlice(text, 3);
		const last = cut.charCodeAt(cut.length - 1);
		assert.ok(!(last >= 0xd800 && last <= 0xdbff));
	});

	it("never splits a colour code: a cut inside one goes before it", () => {
		const text = "ab\x1b[01;31mFAIL\x1b[m";
		for (let max = 3; max <= 9; max++) assert.equal(safeSlice(text, max), "ab", String(max));
		assert.equal(safeSlice(text, 10), "ab\x1b[01;31m", "a whole code stays");
		assert.equal(safeSlice(text, 11), "ab\x1b[01;31mF");
		assert.equal(safeSlice(`${"x".repeat(157)}\x1b[31mFAIL`, 159), "x".repeat(157));
	});

	it("never splits a terminal hyperlink's sequence, however long its URL, ended by BEL or ESC \\", () => {
		const url = `https://gcc.gnu.org/onlinedocs/gcc/Warning-Options.html#${"x".repeat(80)}`;
		for (const end of ["\x07", "\x1b\\"]) {
			const open = `\x1b]8;;${url}${end}`;
			const text = `warn: [${open}-Wunused${"\x1b]8;;"}${end}]`;
			const start = "warn: [".length;
			for (let max = start + 1; max < start + open.length; max++)
				assert.equal(safeSlice(text, max), "warn: [", `${JSON.stringify(end)} ${max}`);
			assert.equal(safeSlice(text, start + open.length), `warn: [${open}`, "a whole sequence stays");
			assert.equal(safeSlice(text, start + open.length + 2), `warn: [${open}-W`, "link text cuts anywhere");
		}
	});
});

describe("clipAround", () => {
	it("opens its window after a colour code it would start inside", () => {
		const line = `${"y".repeat(300)}\x1b[01;31mError: boom\x1b[0m ${"z".repeat(300)}`;
		for (let max = 60; max < 140; max++) {
			const window = clipAround(line, 310, 5, max);
			assert.doesNotMatch(window, /^…[0-9;[]/, `${max}: ${JSON.stringify(window.slice(0, 12))}`);
			const esc = window.lastIndexOf("\u001b");
			assert.ok(esc < 0 || /[@-~]/.test(window.slice(esc + 2)), `${max}: ${JSON.stringify(window.slice(-12))}`);
		}
	});

	it("opens its window after a hyperlink's sequence it would start inside", () => {
		const link = `\x1b]8;;https://example.com/${"u".repeat(60)}\x07`;
		const line = `${"y".repeat(300)}${link}Error: boom\x1b]8;;\x07 ${"z".repeat(300)}`;
		const at = line.indexOf("Error");
		for (let max = 40; max < 200; max++) {
			// No tail of a sequence opens the window: a BEL comes only after the `\x1b]` that starts it.
			const body = clipAround(line, at, 5, max).slice(1);
			const bel = body.indexOf("\x07");
			const osc = body.indexOf("\x1b]");
			assert.ok(bel < 0 || (osc >= 0 && osc < bel), `${max}: ${JSON.stringify(body.slice(0, 30))}`);
		}
	});
});

describe("clip", () => {
	it("keeps text within the limit unchanged", () => {
		assert.equal(clip("hello", 5), "hello");
	});

	it("cuts longer text to exactly max characters, ending with an ellipsis", () => {
		const out = clip("hello world", 6);
		assert.equal(out, "hello…");
		assert.equal(out.length, 6);
	});

	it("does not split a surrogate pair before the ellipsis", () => {
		assert.equal(clip("a😀bcdef", 3), "a…");
	});
});

describe("firstLine", () => {
	it("skips blank and white-space-only lines and trims", () => {
		assert.equal(firstLine("\n  \n\t  first thing  \nsecond"), "first thing");
	});

	it("returns the only line of a one-line text", () => {
		assert.equal(firstLine("solo"), "solo");
	});

	it("returns empty for empty or blank text", () => {
		assert.equal(firstLine(""), "");
		assert.equal(firstLine("\n \n\t\n"), "");
	});
});

describe("lineCount", () => {
	it("counts lines, a trailing newline not opening a new one", () => {
		assert.equal(lineCount(""), 0);
		assert.equal(lineCount("a"), 1);
		assert.equal(lineCount("a\n"), 1);
		assert.equal(lineCount("a\nb"), 2);
		assert.equal(lineCount("a\nb\n"), 2);
		assert.equal(lineCount("a\n\nb"), 3);
		assert.equal(lineCount("\n"), 1);
	});
});

describe("estTokens on text", () => {
	it("takes a string as well as a character count", () => {
		assert.equal(estTokens("abcde"), 2);
		assert.equal(estTokens(""), 0);
		assert.equal(estTokens(5), 2);
	});
});
