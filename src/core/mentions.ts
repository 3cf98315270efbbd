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

/** A git diff's header: its paths carry `a/` and `b/` before the file's own path. */
const GIT_DIFF = /^diff --git a\//m;

/** A path as mentioned: without a leading `./`, and in a git diff without its `a/` or `b/`. */
function pathAsMentioned(path: string, diff: boolean): string {
	if (path.startsWith("./")) return path.slice(2);
	return diff && (path.startsWith("a/") || path.startsWith("b/")) ? path.slice(2) : path;
}

/**
 * The relative file paths `text` mentions, each once (without a leading `./`, or a git diff's `a/` and
 * `b/`), in order: unbounded, for tests (digests use pathsLine, which stops at its bound).
 */
export function mentionedPaths(text: string): string[] {
	const diff = GIT_DIFF.test(text);
	const paths = new Set<string>();
	for (const match of text.matchAll(RELATIVE_PATH)) paths.add(pathAsMentioned(match[0], diff));
	return [...paths];
}

/**
 * The mentioned paths as one digest line, `Paths: src/b.ts, c/d.md.` (`, …` when some were left out),
 * bounded by MENTION_LIMITS; "" for a text under `minChars` or one that mentions none. It stops
 * reading at the first path that does not fit, so a listing of a whole tree costs no more than its head.
 */
export function pathsLine(text: string): string {
	if (text.length < MENTION_LIMITS.minChars) return "";
	const diff = GIT_DIFF.test(text);
	const kept = new Set<string>();
	let used = 0;
	let more = false;
	for (const match of text.matchAll(RELATIVE_PATH)) {
		const path = pathAsMentioned(match[0], diff);
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
