/**
 * Token accounting and small string helpers. The token oracle is deliberately crude and uniform:
 * every block costs `ceil(chars / 4) + BLOCK_OVERHEAD`, so policy decisions are reproducible and
 * swapping the oracle is a one-line change here.
 */

/** Fixed per-block framing cost (role markers, separators) added to every block. */
export const BLOCK_OVERHEAD = 4;

/** Flat token charge for one image part; images are never folded but must weigh on usage. */
export const IMAGE_TOKENS = 1600;

/** Estimated tokens for a text (or a character count): ceil(chars / 4). */
export function estTokens(text: string | number): number {
	return Math.ceil((typeof text === "string" ? text.length : text) / 4);
}

/**
 * A bound on a text's tokens where estTokens may count far too few: ASCII at four characters a token,
 * every other UTF-16 unit a token of its own (CJK and most other scripts take about one each, where
 * chars/4 counts a quarter). For guards that must not let a request past the window.
 */
export function tokenBound(text: string): number {
	let ascii = 0;
	for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x80) ascii++;
	return Math.ceil(ascii / 4) + (text.length - ascii);
}

/** Cost of one block holding `chars` characters of text and `images` image parts. */
export function blockCost(chars: number, images = 0): number {
	return estTokens(chars) + images * IMAGE_TOKENS + BLOCK_OVERHEAD;
}

/**
 * Tokens of an image sent to a model without image input: pi-ai sends a placeholder in its place
 * ("(tool image omitted: model does not support images)", 52 characters; one for each run of images,
 * counted here for each image).
 */
export const PLACEHOLDER_IMAGE_TOKENS = estTokens(52);

/** Length of `text` in UTF-8 bytes (a lone surrogate counts 3, as its replacement character encodes). */
export function utf8Length(text: string): number {
	let bytes = 0;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c < 0x80) bytes += 1;
		else if (c < 0x800) bytes += 2;
		else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
			const next = text.charCodeAt(i + 1);
			if (next >= 0xdc00 && next <= 0xdfff) {
				bytes += 4;
				i++;
			} else bytes += 3;
		} else bytes += 3;
	}
	return bytes;
}

/** Slices `text` to at most `max` UTF-16 units without splitting a surrogate pair or a colour code. */
export function safeSlice(text: string, max: number): string {
	if (text.length <= max) return text;
	let end = Math.max(0, max);
	const code = text.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end -= 1;
	const open = openSequence(text, end);
	return text.slice(0, open ?? end);
}

/** Longest colour code (CSI sequence) looked for around a cut (`\x1b[38;2;255;255;255m` is 19). */
const SEQUENCE_MOST = 32;

/** Longest OSC sequence looked for around a cut: a hyperlink's (`\x1b]8;;<url>\x07`) holds its URL. */
const OSC_MOST = 2048;

/**
 * Where the terminal control sequence that `at` falls inside starts, if it does: a colour code
 * (`\x1b[…m`, a CSI sequence) or an OSC sequence (`\x1b]8;;<url>` up to its BEL or `\x1b\\`, a
 * terminal hyperlink). A cut there would leave half a sequence, which a terminal or a model reads
 * as garbage.
 */
function openSequence(text: string, at: number): number | undefined {
	// Only the last OSC_MOST units before the cut are looked at: a long text without one costs no more.
	const from = Math.max(0, at - OSC_MOST);
	const found = text.slice(from, at).lastIndexOf("\x1b");
	if (found < 0) return undefined;
	const esc = from + found;
	const kind = text.charAt(esc + 1);
	if (esc === at - 1) {
		// A lone escape: the start of a sequence, or the first half of the `\x1b\\` that ends an OSC one.
		const osc = text.slice(from, esc).lastIndexOf("\x1b]");
		return kind === "\\" && osc >= 0 ? from + osc : esc;
	}
	if (kind === "[") {
		// A CSI sequence ends at its first byte from @ to ~ after `\x1b[`; one ended before `at` is whole.
		if (at - esc > SEQUENCE_MOST) return undefined;
		for (let i = esc + 2; i < at; i++) {
			const c = text.charCodeAt(i);
			if (c >= 0x40 && c <= 0x7e) return undefined;
		}
		return esc;
	}
	// An OSC sequence runs to a BEL (or to the `\x1b\\` whose escape would be the last one found).
	if (kind === "]") return text.slice(esc + 2, at).includes("\x07") ? undefined : esc;
	return undefined;
}

/** Where the terminal control sequence starting at `esc` ends (the index after it), or the text's end. */
function sequenceEnd(text: string, esc: number): number {
	const kind = text.charAt(esc + 1);
	for (let i = esc + 2; (kind === "[" || kind === "]") && i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (kind === "[" && c >= 0x40 && c <= 0x7e) return i + 1;
		if (kind === "]" && c === 0x07) return i + 1;
		if (kind === "]" && c === 0x1b && text.charAt(i + 1) === "\\") return i + 2;
	}
	return kind === "[" || kind === "]" ? text.length : Math.min(text.length, esc + 2);
}

/**
 * What a terminal acts on rather than prints: ANSI escape sequences (CSI, such as colours, and OSC)
 * and every other control character but the tab and the line break.
 */
const CONTROLS =
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
	/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** `text` without what a terminal would act on (see CONTROLS): its lines as a person reads them. */
export function printable(text: string): string {
	return text.replace(CONTROLS, "");
}

/** Clips `text` to `max` characters, marking the cut with an ellipsis. */
export function clip(text: string, max: number): string {
	if (text.length <= max) return text;
	return `${safeSlice(text, Math.max(0, max - 1))}…`;
}

/**
 * A line clipped to `max` characters so that the `length` characters at `at` stay in sight: its
 * head when they fit there (or `at` is -1), else a window from a third of `max` before them,
 * opened with an ellipsis. Never splits a surrogate pair or a colour code.
 */
export function clipAround(line: string, at: number, length: number, max: number): string {
	if (line.length <= max) return line;
	if (at < 0 || at + length <= max - 1) return clip(line, max);
	let start = Math.max(0, Math.min(at - Math.floor(max / 3), line.length - max + 2));
	const code = line.charCodeAt(start);
	if (code >= 0xdc00 && code <= 0xdfff) start++;
	// A window that opens inside a colour code or a hyperlink's sequence starts after it.
	const open = openSequence(line, start);
	if (open !== undefined) start = sequenceEnd(line, open);
	return `…${clip(line.slice(start), max - 1)}`;
}

/** The first line of `text` that holds something other than white space, trimmed ("" if none). */
export function firstLine(text: string): string {
	let start = 0;
	while (start <= text.length) {
		let end = text.indexOf("\n", start);
		if (end < 0) end = text.length;
		const line = text.slice(start, end).trim();
		if (line) return line;
		start = end + 1;
	}
	return "";
}

/** Number of lines in `text` (a trailing newline does not open a new line; "" has 0). */
export function lineCount(text: string): number {
	if (!text) return 0;
	let n = 1;
	for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
	return text.endsWith("\n") ? n - 1 : n;
}

/** A ratio as a whole percentage; a share short of all or above none never reads 100% or 0% (99%, 1%). */
export function percent(ratio: number): string {
	const whole = Math.round(ratio * 100);
	if (whole >= 100 && ratio < 1) return "99%";
	if (whole <= 0 && ratio > 0) return "1%";
	return `${whole}%`;
}

/** "1 line", "N lines": a line count in words. */
export function linesText(count: number): string {
	return `${count} line${count === 1 ? "" : "s"}`;
}

/** A token count in short form: 812, 4.4k, 53k, 1.2M (a count that rounds to a thousand thousands is 1M, never 1000k). */
export function short(tokens: number): string {
	const n = Math.max(0, Math.round(tokens));
	if (n < 1000) return String(n);
	if (n < 9_950) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
	if (n < 999_500) return `${Math.round(n / 1000)}k`;
	return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}
