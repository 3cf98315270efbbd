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

/** The relative file paths `text` mentions, each once (without a leading `./`), in order. */
export function mentionedPaths(text: string): string[] {
	const paths: string[] = [];
	for (const match of text.matchAll(RELATIVE_PATH)) {
		const path = match[0].startsWith("./") ? match[0].slice(2) : match[0];
		if (!paths.includes(path)) paths.push(path);
	}
	return paths;
}

/**
 * The mentioned paths as one digest line, `Paths: a/b.ts, c/d.md.` (`, …` when some were left out),
 * bounded by MENTION_LIMITS; "" for a text under `minChars` or one that mentions none.
 */
export function pathsLine(text: string): string {
	if (text.length < MENTION_LIMITS.minChars) return "";
	const paths = mentionedPaths(text);
	const kept: string[] = [];
	let used = 0;
	for (const path of paths) {
		if (used + path.length > MENTION_LIMITS.chars) break;
		kept.push(path);
		used += path.length + 2;
	}
	if (kept.length === 0) return "";
	return `Paths: ${kept.join(", ")}${kept.length < paths.length ? ", …" : ""}.`;
}
