/**
 * The file paths a text mentions: relative paths with at least one directory and an extension
 * (`test/payments.test.ts`, `./src/cli.ts`), in order of first appearance. A long tool result (a test
 * run, a grep, a listing) names its files this way, and the model comes back to them by name; a
 * folded one keeps them in its digest, bounded, so the model still sees which files it listed and
 * which code to recall. Absolute paths and URLs are left out (they are rarely how the model refers to
 * a file, and long). Pure: text in, paths out.
 */

/**
 * A relative path: not glued to what precedes it (a word, `/`, `.`, `:` or `@` would make it part of an
 * absolute path, a URL or an address), one or more directories, a file name with an extension of a
 * letter and up to five more characters, and nothing path-like after it.
 */
const RELATIVE_PATH = /(?<![\w./:@-])(?:\.\/)?(?:[\w-][\w.-]*\/)+[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w/])/g;

/**
 * Limits of a paths line: a text shorter than `minChars` keeps none (its first line and error lines
 * show most of it, and a line would only lengthen its digest), and the paths kept take at most `chars`.
 */
export const MENTION_LIMITS = { minChars: 4000, chars: 400 } as const;

/**
 * The relative file paths `text` mentions, each once (without a leading `./`), in order: unbounded,
 * for tests (digests use pathsLine, which stops at its bound).
 */
export function mentionedPaths(text: string): string[] {
	const paths = new Set<string>();
	for (const match of text.matchAll(RELATIVE_PATH))
		paths.add(match[0].startsWith("./") ? match[0].slice(2) : match[0]);
	return [...paths];
}

/**
 * The mentioned paths as one digest line, `Paths: a/b.ts, c/d.md.` (`, …` when some were left out),
 * bounded by MENTION_LIMITS; "" for a text under `minChars` or one that mentions none. It stops
 * reading at the first path that does not fit, so a listing of a whole tree costs no more than its head.
 */
export function pathsLine(text: string): string {
	if (text.length < MENTION_LIMITS.minChars) return "";
	const kept = new Set<string>();
	let used = 0;
	let more = false;
	for (const match of text.matchAll(RELATIVE_PATH)) {
		const path = match[0].startsWith("./") ? match[0].slice(2) : match[0];
		if (kept.has(path)) continue;
		if (used + path.length > MENTION_LIMITS.chars) {
			more = true;
			break;
		}
		kept.add(path);
		used += path.length + 2;
	}
	if (kept.size === 0) return "";
	return `Paths: ${[...kept].join(", ")}${more ? ", …" : ""}.`;
}
