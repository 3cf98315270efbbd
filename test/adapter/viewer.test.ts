/**
 * The text view draws what a tool printed as Pi draws a tool's output: no terminal sequence (a
 * colour, a cursor move, a clear screen, a title) and no other control character reaches the
 * terminal, and a CRLF text reads line by line, not double-spaced.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { visibleWidth } from "@earendil-works/pi-tui";
import { shownText, TextView } from "../../src/adapters/pi/ui/viewer.ts";

/** A CI log as a `read` returns it: CRLF lines, colours, a clear screen, a cursor move, a title, NUL and BEL. */
const LOG = [
	"\x1b[32mPASS\x1b[0m src/a.test.ts",
	"\x1b[2J\x1b[5Aafter clear\x07",
	"\x1b]0;stolen title\x07tail\x00end",
	"\tindented",
].join("\r\n");

test("a recalled text loses its terminal sequences and control characters, and its CRs", () => {
	assert.equal(shownText(LOG), "PASS src/a.test.ts\nafter clear \ntail end\n   indented");
	assert.equal(
		shownText("func main() {\n\t\tfmt.Println()\nbob\t\tparis"),
		"func main() {\n      fmt.Println()\nbob      paris",
	);
	assert.equal(shownText("one\rtwo"), "one\ntwo", "a lone CR is a line break too");
	assert.equal(shownText("a\x1b_Gpicture data\x1b\\b\x1bPdcs\x07c\x1b7d"), "abcd", "APC, DCS, a lone ESC pair");
});

test("the view draws no escape or control character of the text, one line per CRLF line", () => {
	const view = new TextView({
		tui: { terminal: { rows: 40 }, requestRender: () => {} } as never,
		keys: { matches: () => false },
		title: "recall",
		text: LOG,
		style: { title: (t) => t, hint: (t) => t },
		done: () => {},
	});
	const drawn = view.render(60);
	for (const line of drawn) {
		const control = [...line].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
		assert.ok(!control, JSON.stringify(line));
	}
	const body = drawn.filter((line) => /PASS|after clear|tail|indented/.test(line));
	assert.equal(body.length, 4, JSON.stringify(drawn));
	const at = drawn.findIndex((line) => line.includes("PASS"));
	assert.ok(drawn[at + 1].includes("after clear"), "no blank line between CRLF lines");
});

/** A view titled `title` over 83 numbered lines, in a 20-row terminal. */
function titledView(title: string): TextView {
	return new TextView({
		tui: { terminal: { rows: 20 }, requestRender: () => {} } as never,
		keys: { matches: () => false },
		title,
		text: Array.from({ length: 83 }, (_, i) => `line ${i + 1}`).join("\n"),
		style: { title: (t) => t, hint: (t) => t },
		done: () => {},
	});
}

test("a long title gives way to the scroll position, which stays in sight at any width", () => {
	const view = titledView(
		`#g5zlinan bash: for i in $(seq 1 80); do echo "lint pass 2: rule $i has no findings"; done ${"x".repeat(40)}`,
	);
	for (const width of [60, 100]) {
		const [head] = view.render(width);
		assert.match(head, /\(rows 1-\d+ of 83\)$/, head);
		assert.ok(head.startsWith("#g5zlinan bash: for i in"), head);
		assert.ok(visibleWidth(head) <= width, `${visibleWidth(head)} > ${width}`);
	}
});

test("a block's title keeps its size when the what gives way, cut with an ellipsis", () => {
	const view = titledView(
		`#g5zlinan bash: for i in $(seq 1 500); do echo "suite 1 case $i: parses fixtures"; done (9.4k tokens)`,
	);
	for (const width of [60, 100]) {
		const [drawn] = view.render(width);
		// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape of the terminal's colour codes
		const head = drawn.replace(/\x1b\[[0-9;]*m/g, "");
		assert.match(head, /^#g5zlinan bash: for i in .*… \(9\.4k tokens\) \(rows 1-\d+ of 83\)$/, head);
		assert.ok(visibleWidth(head) <= width, `${visibleWidth(head)} > ${width}`);
	}
});
