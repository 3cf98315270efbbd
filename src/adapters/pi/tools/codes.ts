/**
 * What both fold tools share: reading the `codes` argument (bare, `#`, or whole-tag codes, 8 or 6
 * characters), the message for input that is not a code, and the tool-result shape (a failed call is
 * flagged as an error result, as a thrown error would be, so the model and the terminal UI read it as
 * one).
 */
import { parseCode } from "../../../core/digest.ts";
import { clip } from "../../../core/tokens.ts";
import { nearestName } from "../config.ts";

/** The fold tools, by name, in the order they join the active tools (tools/loadout.ts). */
export const FOLD_TOOLS = ["recall_folded", "unfold"] as const;

/** Marks a recall_folded head that says what was served of the block headed before it, for the transcript. */
export const SERVED_MARK = "↳ ";

/** Codes one call may name. */
const MAX_CODES = 20;
/** Items a `codes` list may hold before it is refused unread (a code named twice counts once toward MAX_CODES). */
const LIST_BOUND = 10 * MAX_CODES;

/** What a fold tool answers: its text, and whether the call failed (nothing it asked for was served or done). */
export interface ToolAnswer {
	text: string;
	failed: boolean;
	/** Each part's opening line, and what was served of a block (SERVED_MARK), for the transcript (renderers.ts). */
	heads?: string[];
}

/** A failed call's answer. */
export function failure(text: string): ToolAnswer {
	return { text, failed: true };
}

/** A tool result holding the answer's text; Pi 1.6 sends `isError` to the model as an error result. */
export function toolText(answer: ToolAnswer, details: Record<string, unknown> = {}) {
	return { content: [{ type: "text" as const, text: answer.text }], details, isError: answer.failed };
}

/**
 * The codes named by a tool's `codes` argument, deduplicated, and the items that are not codes (each
 * once); or a usage error. Only codes count toward MAX_CODES: an item that is not one is said so, and
 * the codes beside it are served.
 */
export function codeList(input: unknown): { codes: string[]; bad: string[] } | string {
	if (input === undefined) return { codes: [], bad: [] };
	const list = Array.isArray(input) ? input : typeof input === "string" ? [input] : null;
	if (!list) return "`codes` must be a list of fold codes";
	// A code named twice counts once; a list far past the bound is refused unread.
	const tooMany = (n: number) => `at most ${MAX_CODES} distinct codes per call (got ${n})`;
	if (list.length > LIST_BOUND)
		return `at most ${MAX_CODES} distinct codes per call, in a list of at most ${LIST_BOUND} items (got ${list.length} items)`;
	const codes: string[] = [];
	const bad: string[] = [];
	for (const item of list) {
		const code = parseCode(item);
		if (code) {
			if (!codes.includes(code)) codes.push(code);
		} else {
			const text = typeof item === "string" ? item : (JSON.stringify(item) ?? String(item));
			if (!bad.includes(text)) bad.push(text);
		}
	}
	if (codes.length > MAX_CODES) return tooMany(codes.length);
	return { codes, bad };
}

/** Items that are not codes a message names; the rest are counted. */
const BAD_NAMED = 8;

/** The message for items that are not fold codes, each clipped to 40 characters, the first BAD_NAMED named. */
export function notCodes(bad: readonly string[]): string {
	const named = bad.slice(0, BAD_NAMED).map((b) => JSON.stringify(clip(b, 40)));
	if (bad.length > BAD_NAMED) named.push(`and ${bad.length - BAD_NAMED} more`);
	const list = named.join(", ");
	return `${list} ${bad.length === 1 ? "is not a fold code" : "are not fold codes"} (a code is 8 letters or digits, or 6 for a fold made by context-fold 0.5.1; e.g. k3x9a0b2)`;
}

/** Unknown argument names a refusal names; the rest are counted. */
const UNKNOWN_NAMED = 8;

/**
 * Why a call's arguments hold a name its tool does not take (`known`), naming the nearest one; undefined
 * when every name is known. A misspelled argument is refused, not ignored: `line` ignored would serve a
 * whole block where two lines were asked for.
 */
export function unknownArguments(tool: string, args: unknown, known: readonly string[]): string | undefined {
	if (typeof args !== "object" || args === null) return undefined;
	const unknown = Object.keys(args).filter((key) => !known.includes(key));
	if (unknown.length === 0) return undefined;
	const named = unknown.slice(0, UNKNOWN_NAMED).map((key) => {
		const near = nearestName(key, known);
		return `\`${clip(key, 40)}\`${near ? ` (did you mean \`${near}\`?)` : ""}`;
	});
	if (unknown.length > UNKNOWN_NAMED) named.push(`and ${unknown.length - UNKNOWN_NAMED} more`);
	const what = unknown.length === 1 ? "argument" : "arguments";
	return `${tool}: unknown ${what} ${named.join(", ")}; it takes ${known.map((k) => `\`${k}\``).join(", ")}`;
}
