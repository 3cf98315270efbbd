/**
 * Pure text work behind `recall_folded`: rendering folded tool-call arguments readably, line
 * slices, literal case-insensitive grep with context, and the caps that stop a recall from
 * re-flooding the context.
 */
import { outputFilePlace } from "./output-notices.ts";
import { clip, clipAround, lineCount, printable } from "./tokens.ts";

/** Caps on what one recall may return. */
export const RECALL_LIMITS = {
	/**
	 * Characters one recall call may return in all (~8k tokens): every code, grep, range and search
	 * together; less in a small window (recallCap).
	 */
	totalChars: 32_000,
	/** Matching lines one grep may list per block before it stops. */
	grepMatches: 60,
	/** Context lines around each grep match. */
	grepContext: 2,
	/** Characters of one served line before it is clipped. */
	lineChars: 600,
	/** Longest accepted grep / search pattern. */
	patternChars: 500,
	/** Blocks a `search` sweep lists before it stops. */
	searchBlocks: 40,
	/** Least output cap, however small the window. */
	leastChars: 2_000,
} as const;

/**
 * The output cap of one recall call in a context window of `window` tokens: RECALL_LIMITS.totalChars,
 * or one character per token of the window where that is less (a quarter of it in English or code, at
 * about four characters a token), so that a recall leaves room in a small window; at least
 * RECALL_LIMITS.leastChars.
 */
export function recallCap(window: number | undefined): number {
	if (window === undefined || !Number.isFinite(window) || window <= 0) return RECALL_LIMITS.totalChars;
	return Math.max(RECALL_LIMITS.leastChars, Math.min(RECALL_LIMITS.totalChars, Math.floor(window)));
}

/**
 * Why a grep or search pattern cannot be matched, said after its name ("is 600 characters; at most
 * 500"), or undefined: a match is within one line, so a pattern holds no line break.
 */
export function patternProblem(pattern: string): string | undefined {
	const most = RECALL_LIMITS.patternChars;
	if (pattern.length > most) return `is ${pattern.length} characters; at most ${most}`;
	if (/[\r\n]/.test(pattern)) return "holds a line break; a match is within one line";
	return undefined;
}

/** A raw block of renderArgs' text: an argument value's key path and the lines its value takes there (1-based, inclusive). */
export interface ArgField {
	path: string;
	first: number;
	last: number;
}

/**
 * Readable text of a tool call's arguments: one `key: value` line per small value, and large or
 * multi-line strings as raw blocks under their key path, so grep and line slices see the real text.
 */
export function renderArgs(toolName: string, args: unknown): string {
	return renderArgsPlaced(toolName, args).text;
}

/**
 * renderArgs' text, and where each raw block's value sits in it: a folded value's digest counts the
 * value's own lines, which the text numbers after its header and key lines.
 */
export function renderArgsPlaced(toolName: string, args: unknown): { text: string; fields: ArgField[] } {
	const out: string[] = [];
	const fields: ArgField[] = [];
	/** The number of the next line the text gets. */
	let line = 1;
	const push = (text: string): void => {
		out.push(text);
		line += text.split("\n").length;
	};
	push(`arguments of ${toolName}:`);
	const walk = (path: string, value: unknown): void => {
		if (typeof value === "string") {
			if (value.includes("\n") || value.length > 200) {
				push(`${path}:`);
				fields.push({ path, first: line, last: line + Math.max(1, lineCount(value)) - 1 });
				push(value);
			} else push(`${path}: ${value}`);
		} else if (Array.isArray(value)) {
			if (value.length === 0) push(`${path}: []`);
			for (let i = 0; i < value.length; i++) walk(`${path}[${i}]`, value[i]);
		} else if (value && typeof value === "object") {
			const entries = Object.entries(value);
			if (entries.length === 0) push(`${path}: {}`);
			for (const [key, inner] of entries) walk(path ? `${path}.${key}` : key, inner);
		} else {
			push(`${path}: ${JSON.stringify(value) ?? String(value)}`);
		}
	};
	walk("", args);
	return { text: out.join("\n"), fields };
}

/** A parsed `lines` argument: 1-based inclusive range. */
export interface LineRange {
	start: number;
	end: number;
	/** The first line as written, when it is past any safe integer (read as the end, named as asked). */
	asked?: string;
	/** `"N@C"`: the one line N from its character C on (1-based), where a long line's piece left off. */
	column?: number;
}

/** A line number as written, however long: past any block's last line, a large one reads as the end. */
function lineNumber(digits: string): number {
	return Math.min(Number(digits), Number.MAX_SAFE_INTEGER);
}

/**
 * Parses `"a-b"`, `"a-"`, `"a"` into a 1-based inclusive range, and `"a@c"` into line a from its
 * character c on (the call a long line's piece names to read on); null when malformed.
 */
export function parseLineRange(input: unknown): LineRange | null {
	if (typeof input !== "string" || input.length > 200) return null;
	const piece = /^\s*(\d+)\s*@\s*(\d+)\s*$/.exec(input);
	if (piece) {
		const line = lineNumber(piece[1]);
		const column = lineNumber(piece[2]);
		if (line < 1 || column < 1) return null;
		return { start: line, end: line, column, ...(line < Number(piece[1]) ? { asked: piece[1] } : {}) };
	}
	const match = /^\s*(\d+)\s*(?:(-)\s*(\d+)?)?\s*$/.exec(input);
	if (!match) return null;
	const start = lineNumber(match[1]);
	const end = match[3] !== undefined ? lineNumber(match[3]) : match[2] ? Number.MAX_SAFE_INTEGER : start;
	if (start < 1 || end < start) return null;
	if (start < Number(match[1])) return { start, end, asked: match[1].replace(/^0+(?=\d)/, "") };
	return { start, end };
}

/**
 * Ranks of a grep match: a line that is the pattern itself first (a line quoted whole, as a digest
 * prints a risk line: indentation and case aside), then two per match quality (see bestMatch), a
 * line that begins with the pattern first.
 */
const RANKS = 9;

function splitLines(text: string): string[] {
	const lines = text.split("\n");
	if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
	return lines;
}

/** The characters of one long line a slice served (1-based, inclusive), of its `length`. */
export interface LinePiece {
	/** The line's number as shown. */
	line: number;
	first: number;
	last: number;
	length: number;
}

/** What sliceLines served (see there). */
export interface Slice {
	text: string;
	total: number;
	cut: boolean;
	/** Lines shown clipped, and the number (as shown) of the first. */
	clipped: number;
	firstClipped?: number;
	/** The first line number not shown, when the size cut the lines short. */
	next?: number;
	/** A range of one line longer than RECALL_LIMITS.lineChars, or asked from a character on: the part served. */
	piece?: LinePiece;
}

/**
 * Lines `range` of `text`, numbered, clipped per line and to `maxChars` in all. When the size cut
 * them short, `next` is the first line number not shown; `clipped` counts the lines shown clipped.
 * A range of one line is never clipped: a line longer than RECALL_LIMITS.lineChars, or asked from a
 * character on (`column`), is served from there up to `maxChars`, and `piece` says which characters
 * (nothing of a long line is out of reach). `shift` is added to each number shown (a text that is a
 * slice of a longer one, numbered as there); `range`, `next` and `total` stay the text's own.
 */
export function sliceLines(text: string, range: LineRange, maxChars: number, shift = 0): Slice {
	const lines = splitLines(text);
	const one = range.start === range.end ? lines[range.start - 1] : undefined;
	if (one !== undefined && (range.column !== undefined || one.length > RECALL_LIMITS.lineChars)) {
		const label = `${range.start + shift}: `;
		const asked = range.column ?? 1;
		if (asked > one.length) {
			const piece = { line: range.start + shift, first: asked, last: asked - 1, length: one.length };
			return { text: "", total: lines.length, cut: false, clipped: 0, piece };
		}
		const from = pairStart(one, asked);
		let end = from - 1 + Math.max(2, maxChars - label.length - 1);
		// A piece ends before a pair it would split, and the next begins with that pair whole.
		if (end < one.length && isHighSurrogate(one.charCodeAt(end - 1))) end--;
		const part = one.slice(from - 1, end);
		const piece = { line: range.start + shift, first: from, last: from - 1 + part.length, length: one.length };
		return { text: `${label}${part}`, total: lines.length, cut: piece.last < one.length, clipped: 0, piece };
	}
	const out: string[] = [];
	let used = 0;
	let cut = false;
	let clipped = 0;
	let firstClipped: number | undefined;
	const last = Math.min(range.end, lines.length);
	for (let n = range.start; n <= last; n++) {
		const whole = lines[n - 1];
		const line = `${n + shift}: ${clip(whole, RECALL_LIMITS.lineChars)}`;
		if (used + line.length + 1 > maxChars) {
			cut = true;
			break;
		}
		if (whole.length > RECALL_LIMITS.lineChars) {
			clipped++;
			firstClipped ??= n + shift;
		}
		out.push(line);
		used += line.length + 1;
	}
	const next = cut ? { next: range.start + out.length } : {};
	return {
		text: out.join("\n"),
		total: lines.length,
		cut,
		clipped,
		...(firstClipped ? { firstClipped } : {}),
		...next,
	};
}

function isHighSurrogate(code: number): boolean {
	return code >= 0xd800 && code <= 0xdbff;
}

/** Character `column` (1-based) of `line`, one back when it is the second half of a surrogate pair. */
function pairStart(line: string, column: number): number {
	const code = line.charCodeAt(column - 1);
	return column > 1 && code >= 0xdc00 && code <= 0xdfff && isHighSurrogate(line.charCodeAt(column - 2))
		? column - 1
		: column;
}

/** Letters, digits, `_` and `$`: what continues a token. */
const TOKEN_CHAR = /[\w$]/;

/** How well a text holds a pattern (see matchQuality) and where: the first occurrence of that quality, -1 for none. */
interface Match {
	quality: 0 | 1 | 2 | 3;
	at: number;
}

/**
 * Occurrences bestMatch weighs before it settles for the first: each costs a comparison of the whole
 * pattern, so a text that holds it at every position (a line of one repeated letter) stays linear.
 */
const OCCURRENCES_WEIGHED = 64;

function bestMatch(text: string, pattern: string): Match {
	const open = TOKEN_CHAR.test(pattern[0] ?? "");
	const close = TOKEN_CHAR.test(pattern[pattern.length - 1] ?? "");
	let first = -1;
	let weighed = 0;
	for (let at = text.indexOf(pattern); at >= 0; at = text.indexOf(pattern, at + 1)) {
		if (first < 0) first = at;
		if (++weighed > OCCURRENCES_WEIGHED) break;
		const joinedLeft = open && at > 0 && TOKEN_CHAR.test(text[at - 1]);
		const joinedRight = close && TOKEN_CHAR.test(text[at + pattern.length] ?? "");
		if (!joinedLeft && !joinedRight) return { quality: 0, at };
	}
	if (first >= 0) return { quality: 1, at: first };
	const loose = caselessIndex(text, pattern);
	return loose >= 0 ? { quality: 2, at: loose } : { quality: 3, at: -1 };
}

/** The latest ASCII pattern's case-insensitive expression: a search asks the same pattern of every block. */
let caseless: { pattern: string; expression: RegExp } | undefined;

/**
 * Characters outside ASCII that JavaScript lowers to an ASCII letter: the Kelvin sign (to `k`) and
 * `İ` (to `i` and a combining dot). A case-insensitive expression does not take them for those
 * letters; grep's lowered comparison does.
 */
const LOWERS_TO_ASCII = /[\u212A\u0130]/;

/**
 * Where `text` first holds `pattern` in any case, as grep compares (both lowered), or -1. An ASCII
 * pattern is matched by a case-insensitive expression, which reads the text in place (lowering a block
 * of tens of kilobytes for every block of every search cost most of a search), and compared lowered
 * only where the text holds a character that lowers to an ASCII letter; any other pattern is compared lowered.
 */
function caselessIndex(text: string, pattern: string): number {
	for (let i = 0; i < pattern.length; i++) {
		if (pattern.charCodeAt(i) > 0x7f) return loweredIndex(text, pattern);
	}
	if (caseless?.pattern !== pattern) {
		caseless = { pattern, expression: new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i") };
	}
	const at = text.search(caseless.expression);
	return at < 0 && LOWERS_TO_ASCII.test(text) ? loweredIndex(text, pattern) : at;
}

/**
 * Where `pattern` first occurs in `text`, both lowered, as a position in `text` itself: lowering can
 * lengthen a character (`İ` lowers to two code units), and a window cut around a position in the
 * lowered text would then miss the match.
 */
function loweredIndex(text: string, pattern: string): number {
	const lowered = text.toLowerCase();
	const at = lowered.indexOf(pattern.toLowerCase());
	if (at <= 0 || lowered.length === text.length) return at;
	let seen = 0;
	let i = 0;
	while (i < text.length && seen < at) {
		const char = String.fromCodePoint(text.codePointAt(i) as number);
		seen += char.toLowerCase().length;
		i += char.length;
	}
	return i;
}

/**
 * How well `text` holds `pattern`, best first: 0 in its exact case as a whole token (no token
 * character joins it where the pattern itself begins or ends with one), 1 in its exact case inside a
 * longer token, 2 only in another case, 3 not at all.
 */
export function matchQuality(text: string, pattern: string): 0 | 1 | 2 | 3 {
	return bestMatch(readable(text, pattern), pattern).quality;
}

/**
 * `text` as it is matched against `pattern`: without its terminal sequences (colour codes) when it
 * holds some and the pattern none, so that a line quoted without them (a summary's error line, a
 * terminal's copy) finds the block it came from.
 */
function readable(text: string, pattern: string): string {
	return text.includes("\x1b") && !pattern.includes("\x1b") ? printable(text) : text;
}

/** Result of a grep over one text. */
export interface GrepResult {
	text: string;
	/** Lines holding the pattern. */
	matches: number;
	/** Matching lines in `text`. */
	shown: number;
	cut: boolean;
}

/**
 * Literal, case-insensitive grep with `context` lines around each match; numbered lines (`n:` for a
 * matching line, also when it falls in another match's context; `n-` for context), `--` between
 * separate hunks, at most `maxMatches` matching lines and about `maxChars` characters (the best match
 * alone, without context, when it does not fit with it). When not every match fits, the best are
 * shown, still in line order: a line that is the pattern itself first (a risk line quoted whole,
 * its indentation or the pattern's and case aside), then by matchQuality (an exact identifier finds
 * its own lines before longer tokens and case variants; of equal ones, lines that begin with the
 * pattern first). A long line is shown around its best match. `shift` is added to each number shown
 * (see sliceLines). A text holding terminal sequences (colour codes) is read, and its lines shown,
 * without them (see readable), unless the pattern holds one.
 */
export function grepText(
	text: string,
	pattern: string,
	maxChars: number,
	maxMatches: number = RECALL_LIMITS.grepMatches,
	context: number = RECALL_LIMITS.grepContext,
	shift = 0,
): GrepResult {
	const needle = pattern.toLowerCase();
	const lines = splitLines(readable(text, pattern));
	// Each matching line's rank, plus one (0: no match): its quality, then, of two equal ones, 0 for a
	// line that begins with the pattern (past its indentation), the line it names rather than one that
	// quotes it. Once as many lines as can be shown have the best rank, a later line is only counted.
	const ranks = new Uint8Array(lines.length);
	let count = 0;
	let atBest = 0;
	const whole = needle.trim();
	for (let i = 0; i < lines.length; i++) {
		const lower = lines[i].toLowerCase();
		if (!lower.includes(needle)) continue;
		count++;
		if (lower.trim() === whole) {
			ranks[i] = 1;
			atBest++;
			continue;
		}
		if (atBest >= maxMatches) {
			ranks[i] = RANKS;
			continue;
		}
		const match = bestMatch(lines[i], pattern);
		const rank = 1 + 2 * match.quality + (match.at === lines[i].length - lines[i].trimStart().length ? 0 : 1);
		ranks[i] = rank + 1;
		if (rank === 1) atBest++;
	}
	const ranked: number[] = [];
	for (let rank = 1; rank <= RANKS; rank++)
		for (let i = 0; i < ranks.length; i++) if (ranks[i] === rank) ranked.push(i);
	const shownLines = new Map<number, string>();
	const render = (centers: readonly number[]): { text: string; shown: number } => {
		const out: string[] = [];
		let shown = 0;
		let printedTo = -1;
		for (const center of [...centers].sort((a, b) => a - b)) {
			const from = Math.max(center - context, printedTo + 1);
			const to = Math.min(center + context, lines.length - 1);
			if (printedTo >= 0 && from > printedTo + 1) out.push("--");
			for (let i = from; i <= to; i++) {
				let line = shownLines.get(i);
				const matched = ranks[i] > 0;
				if (line === undefined) {
					const at = matched ? bestMatch(lines[i], pattern).at : -1;
					const text = clipAround(lines[i], at, pattern.length, RECALL_LIMITS.lineChars);
					line = `${i + 1 + shift}${matched ? ":" : "-"} ${text}`;
					shownLines.set(i, line);
				}
				if (matched) shown++;
				out.push(line);
			}
			printedTo = Math.max(printedTo, to);
		}
		return { text: out.join("\n"), shown };
	};
	const centers: number[] = [];
	let best = { text: "", shown: 0 };
	for (const hit of ranked) {
		if (best.shown >= maxMatches) break;
		const next = render([...centers, hit]);
		if (next.text.length > maxChars) {
			// Not even the best match fits with its context: it is shown alone, clipped around the match.
			if (centers.length === 0) {
				const head = `${hit + 1 + shift}: `;
				const room = Math.max(1, Math.min(RECALL_LIMITS.lineChars, maxChars - head.length));
				const at = bestMatch(lines[hit], pattern).at;
				best = { text: `${head}${clipAround(lines[hit], at, pattern.length, room)}`, shown: 1 };
			}
			break;
		}
		centers.push(hit);
		best = next;
	}
	return { text: best.text, matches: count, shown: best.shown, cut: best.shown < count };
}

/** How grepBlock reads a block: grepText's bounds, and where the block's lines sit in a file. */
export interface GrepBlockOptions {
	maxMatches?: number;
	context?: number;
	/** The file's own text, read instead where it is at hand (the bash tool's full output). */
	file?: string;
	/** The file line a read from an offset started at (see outputFilePlace). */
	from?: number;
	/** The tool whose result the block is (undefined: a record that does not say; see outputFilePlace). */
	tool?: string;
}

/**
 * grepText over a folded block's text. A truncated bash or read copy, or a read from an offset (see
 * outputFilePlace), is numbered as in its file, as its digest numbers it, or the file's own text is
 * read instead where it is at hand; the copy's closing lines (the notice, and the bash tool's status
 * line for a failed command), which are in no line of that file, match as `after <last>:`.
 */
export function grepBlock(text: string, pattern: string, maxChars: number, options: GrepBlockOptions = {}): GrepResult {
	const { maxMatches = RECALL_LIMITS.grepMatches, context = RECALL_LIMITS.grepContext, file, from, tool } = options;
	const place = outputFilePlace(text, { tool, from });
	if (!place) return grepText(file ?? text, pattern, maxChars, maxMatches, context);
	const needle = pattern.toLowerCase();
	const closing = place.trailer
		.filter((line) => line.toLowerCase().includes(needle))
		.map((line) => `after ${place.last}: ${clip(line, RECALL_LIMITS.lineChars)}`)
		.join("\n");
	const room = Math.max(1, maxChars - closing.length - 4);
	const g =
		file !== undefined
			? grepText(file, pattern, room, maxMatches, context)
			: grepText(place.held, pattern, room, maxMatches, context, place.first - 1);
	if (!closing) return g;
	const found = closing.split("\n").length;
	return {
		text: g.text ? `${g.text}\n--\n${closing}` : closing,
		matches: g.matches + found,
		shown: g.shown + found,
		cut: g.cut,
	};
}
