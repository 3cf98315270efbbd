/**
 * Distinctive strings: the identifiers, paths and numbers of six characters or more by which a model
 * names what it works on, read from a text in one hand-written pass. The working set counts a use by
 * them, digests keep the lines that hold them, the seed index finds identifiers with the same
 * character classes, and the replay's visibility measure is made of them. Pure.
 */

/** What makes a string distinctive: a digit, `_`, `/`, `.`, `$` or an inner capital. */
const DISTINCT = /[\d_/.$]|[a-z][A-Z]/;

/** True for a word character: a letter, a digit, `_` or `$` (by UTF-16 code). */
export function isWord(c: number): boolean {
	return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}

/** True for a character a string may hold: a word character, `.`, `/` or `-`. */
function inString(c: number): boolean {
	return isWord(c) || c === 46 || c === 47 || c === 45;
}

/**
 * Calls `visit(start, end)` for each maximal run of characters `inRun` accepts (by UTF-16 code), in
 * order, `end` exclusive: one pass by hand, since a regex over a run of millions of characters runs
 * out of stack.
 */
export function eachRun(
	text: string,
	inRun: (c: number) => boolean,
	visit: (start: number, end: number) => void,
): void {
	const n = text.length;
	let i = 0;
	while (i < n) {
		if (!inRun(text.charCodeAt(i))) {
			i++;
			continue;
		}
		let end = i + 1;
		while (end < n && inRun(text.charCodeAt(end))) end++;
		visit(i, end);
		i = end;
	}
}

/**
 * Calls `visit` with each distinctive string of a text, in order, repeats included, and where it
 * stands (`end` exclusive). A string is each run of word characters, `.`, `/` and `-`, from its first
 * word character to its last, of six characters or more; it is distinctive with a digit, `_`, `/`,
 * `.`, `$` or an inner capital.
 */
export function eachDistinctive(text: string, visit: (token: string, start: number, end: number) => void): void {
	eachRun(text, inString, (start, end) => {
		let first = start;
		while (first < end && !isWord(text.charCodeAt(first))) first++;
		let last = end - 1;
		while (last > first && !isWord(text.charCodeAt(last))) last--;
		if (last - first + 1 < 6) return;
		const token = text.slice(first, last + 1);
		if (DISTINCT.test(token)) visit(token, first, last + 1);
	});
}

/** The distinct distinctive strings of a text (see eachDistinctive). */
export function distinctiveTokens(text: string): Set<string> {
	const out = new Set<string>();
	eachDistinctive(text, (token) => out.add(token));
	return out;
}
