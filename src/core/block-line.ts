/**
 * How a folded block reads to the user wherever its code is shown (the status, code completion, the
 * recall picker, fold notices): the code, what the block was (its tool and the command, path or
 * pattern of the tool call, or its kind) and its size, on one line clipped to a width, e.g.
 * `#6vv2m26b bash: npm test (9.8k tokens)`. Pure text from plain data; the adapter looks the tool
 * call's arguments up.
 */
import { clip, short } from "./tokens.ts";

/** The width a user-facing line is clipped to. */
export const LINE_WIDTH = 100;

/** What is known of a folded block for its line. */
export interface BlockFacts {
	code: string;
	/** The record's kind: `toolResult`, `toolArgs`, `text`, `thinking`. */
	kind?: string;
	/** The tool whose call or result it was. */
	tool?: string;
	/** The tool call's arguments, when the call was found. */
	args?: unknown;
	/** The block's size in tokens at fold time; undefined when unknown. */
	tokens?: number;
}

/** Argument names that say best what a call did, most telling first. */
const TELLING = ["command", "path", "file_path", "filePath", "file", "pattern", "query", "url", "glob", "name"];

/** White space runs (newlines included) as one space, trimmed. */
function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

/**
 * The argument that says what a tool call did: the first of the telling names holding text, else the
 * first text argument; on one line, clipped to `max`. Undefined when the arguments hold no text.
 */
export function argSummary(args: unknown, max = 80): string | undefined {
	if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
	const record = args as Record<string, unknown>;
	const named = TELLING.map((k) => record[k]).find((v) => typeof v === "string" && oneLine(v) !== "");
	const value = named ?? Object.values(record).find((v) => typeof v === "string" && oneLine(v) !== "");
	return typeof value === "string" ? clip(oneLine(value), max) : undefined;
}

/** What a block was, e.g. `bash: npm test`, `write arguments: src/a.ts`, `thinking`. */
export function blockWhat(b: Omit<BlockFacts, "code" | "tokens">): string {
	const name =
		b.kind === "toolArgs"
			? `${b.tool ?? "tool"} arguments`
			: b.kind === "text"
				? "assistant text"
				: (b.tool ?? b.kind ?? "block");
	const detail = argSummary(b.args);
	return detail ? `${name}: ${detail}` : name;
}

/**
 * True for a code point a terminal draws two columns wide: the East Asian wide and fullwidth blocks
 * (Hangul, CJK, kana, fullwidth forms) and the emoji pictographs.
 */
function wide(code: number): boolean {
	return (
		(code >= 0x1100 && code <= 0x115f) ||
		(code >= 0x2e80 && code <= 0xa4cf && code !== 0x303f) ||
		(code >= 0xac00 && code <= 0xd7a3) ||
		(code >= 0xf900 && code <= 0xfaff) ||
		(code >= 0xfe30 && code <= 0xfe4f) ||
		(code >= 0xff00 && code <= 0xff60) ||
		(code >= 0xffe0 && code <= 0xffe6) ||
		(code >= 0x1f300 && code <= 0x1f64f) ||
		(code >= 0x1f900 && code <= 0x1f9ff) ||
		(code >= 0x20000 && code <= 0x3fffd)
	);
}

/** `text` within `max` terminal columns (a wide character takes two), cut with an ellipsis. */
export function clipColumns(text: string, max: number): string {
	let columns = 0;
	let end = 0;
	// Where the text ends while it still leaves a column for the ellipsis.
	let fit = 0;
	for (const char of text) {
		const width = wide(char.codePointAt(0) ?? 0) ? 2 : 1;
		if (columns + width > max) return `${text.slice(0, fit)}…`;
		columns += width;
		end += char.length;
		if (columns <= max - 1) fit = end;
	}
	return text;
}

/** `what (size)` within `width` columns: `what` is clipped so the size always shows; no parentheses without a size. */
function describedAs(what: string, size: string | undefined, width = LINE_WIDTH): string {
	const end = size ? ` (${size})` : "";
	return `${clipColumns(what, Math.max(1, width - end.length))}${end}`;
}

/** A code's line, `#code what (size)`, within `width` columns (see describedAs). */
export function codeLine(code: string, what: string, size: string | undefined, width = LINE_WIDTH): string {
	return `#${code} ${describedAs(what, size, width - code.length - 2)}`;
}

/** What a block was and its size in tokens, e.g. `bash: npm test (9.8k tokens)`, within `width` columns. */
export function blockDescription(b: BlockFacts, width = LINE_WIDTH): string {
	return describedAs(blockWhat(b), b.tokens === undefined ? undefined : `${short(b.tokens)} tokens`, width);
}

/** One block's line, e.g. `#6vv2m26b bash: npm test (9.8k tokens)`, within `width` columns. */
export function blockLine(b: BlockFacts, width = LINE_WIDTH): string {
	return `#${b.code} ${blockDescription(b, width - b.code.length - 2)}`;
}
