/**
 * The strings a long file read repeats most: its distinctive strings (distinctive.ts: identifiers,
 * member chains, paths), ranked by how often it holds them. A folded read keeps them in its digest,
 * bounded to a small share of its size, so that when the model names a method or a field of a file
 * it read long before (a refactoring plan implemented over a hundred requests names the files it was
 * drawn from), the string is still in sight and says which code to recall. The text is read as a
 * terminal shows it (colour codes left out), and a run glued to a letter or digit outside ASCII
 * (`durée_totale`) is a fragment of a name, not one. Pure: text in, line out.
 */
import { distinctiveTokens, eachDistinctive } from "./distinctive.ts";
import { printable } from "./tokens.ts";

/**
 * Bounds of a strings line: only a text of `minChars` or more keeps one (a shorter read's outline,
 * paths and risk lines show most of what it names), in at most `share` of its characters and never
 * more than `chars`. Replayed at 140k (docs/defaults.md): the corpus 0.549 → 0.550× plain Pi at
 * −1.44 → −1.33 points of visibility; twelve public sessions beyond it 0.599 → 0.603× at −1.70 →
 * −1.34 (a session implementing a plan drawn from files read at its start −5.4 → −3.3).
 */
export const FREQUENT_LIMITS = { minChars: 16_000, chars: 1200, share: 0.03 } as const;

/** A letter or digit: outside ASCII, a run of ASCII word characters beside one is part of a longer name. */
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** True when `text` at `at` holds a letter or digit outside ASCII. */
function wideWordAt(text: string, at: number): boolean {
	return text.charCodeAt(at) > 0x7f && LETTER_OR_DIGIT.test(text[at]);
}

/** How often each whole distinctive string occurs in `text`, in order of first occurrence (see the file's head). */
function wholeStringCounts(text: string): Map<string, number> {
	const counts = new Map<string, number>();
	eachDistinctive(text, (token, start, end) => {
		if (wideWordAt(text, start - 1) || wideWordAt(text, end)) return;
		counts.set(token, (counts.get(token) ?? 0) + 1);
	});
	return counts;
}

/**
 * The digest line of the strings `text` holds, `Strings: a.b, c_d`, most frequent first (first
 * occurrence first among equals, so that strings it names once, such as the paths of a task list,
 * fill what room the repeated ones leave): none is one of the strings `shown` (the rest of the
 * digest) holds, and none would pass the bound; "" for a text under `minChars` or without such strings.
 */
export function frequentStringsLine(text: string, shown = ""): string {
	if (text.length < FREQUENT_LIMITS.minChars) return "";
	const room = Math.min(FREQUENT_LIMITS.chars, Math.floor(text.length * FREQUENT_LIMITS.share));
	const already = distinctiveTokens(printable(shown));
	const ranked = [...wholeStringCounts(printable(text))].sort((a, b) => b[1] - a[1]);
	const kept: string[] = [];
	let used = 0;
	for (const [string] of ranked) {
		if (used + string.length + 2 > room || already.has(string)) continue;
		kept.push(string);
		used += string.length + 2;
	}
	return kept.length === 0 ? "" : `Strings: ${kept.join(", ")}`;
}
