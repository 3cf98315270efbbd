/**
 * The risk lexicon: lines that signal a failure must survive every digest verbatim. It is broad and
 * case-insensitive on purpose; a missed error line is worse than a digest a few lines longer.
 */
import { isBashStatusLine } from "../output-notices.ts";
import { clipAround } from "../tokens.ts";

/**
 * A terminal colour or style code (an ANSI CSI sequence such as `ESC[31m`): Pi's bash tool passes
 * them to the model as the command printed them (pytest, npm, cargo and jest colour their failures).
 */
const ANSI_CODE = "\\x1b\\[[0-9;?]*[ -/]*[@-~]";

/**
 * The start of a word, as `\b` reads it, or right after a colour code: the code ends in a letter
 * (`ESC[31mFAILED`), so `\b` alone finds no word start there and a coloured failure would be missed.
 */
const WORD_START = `(?:\\b|(?<=${ANSI_CODE}))`;

/** `source` with each `\b` that opens a word read as WORD_START. */
function colourBlind(source: string): string {
	return source.replace(/\\b(?=[\w(])/g, WORD_START);
}

const ERROR_PATTERN = new RegExp(
	colourBlind(
		[
			"\\berr(or|ors|no)?\\b",
			"error", // also inside names: TypeError, ValueError, ModuleNotFoundError
			"\\bfail",
			"exception",
			"traceback",
			"\\bpanic",
			"\\bfatal",
			"denied",
			"\\bforbidden\\b",
			"unauthori[sz]ed",
			"segmentation fault",
			"\\bsegfault",
			"core dumped",
			"non-zero exit",
			"exit(ed)? (with )?(code|status):? [1-9]",
			"\\bcannot\\b",
			"\\bcan't\\b",
			"\\bunable to\\b",
			"not found",
			"no such file",
			"\\baborted\\b",
			"\\btimed? ?out\\b",
			"\\bkilled\\b",
			"\\bcrash",
			"\\bassertion",
			"\\bunhandled\\b",
			"\\bundefined is not\\b",
			"✗|✘|✖|✕|❌", // ✖ node:test, ✕ jest
		].join("|"),
	),
	"i",
);

/** POSIX errno names (ENOENT, EACCES, ...) are matched case-sensitively so plain words do not hit. */
const ERRNO_PATTERN = new RegExp(
	colourBlind(
		"\\bE(NOENT|ACCES|PERM|EXIST|NOTDIR|ISDIR|INVAL|NOSPC|ADDRINUSE|CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|NOTEMPTY|MFILE|AGAIN|BUSY|NOMEM|HOSTUNREACH|NOTFOUND|AI_AGAIN)\\b",
	),
);

/**
 * Stack frames (JS, Python, Java, Rust, Go) count as risk lines, but rank after error lines; a frame
 * may open with colour codes (a dimmed `    at …`).
 */
const FRAME_PATTERN = new RegExp(
	`^(?:\\s|${ANSI_CODE})*(at\\s+\\S.*[:(]\\d+|File ".+", line \\d+|\\d+:\\s+0x[0-9a-f]+|goroutine \\d+|\\S+\\.go:\\d+)`,
	"i",
);

/** True if the line reads as an error, failure or warning signal. */
export function isErrorLine(line: string): boolean {
	return ERROR_PATTERN.test(line) || ERRNO_PATTERN.test(line);
}

/** Where `line` first reads as an error (see isErrorLine) and how long that reading is; undefined if it does not. */
function errorSignal(line: string): { at: number; length: number } | undefined {
	const matches = [ERROR_PATTERN.exec(line), ERRNO_PATTERN.exec(line)].filter((m) => m !== null);
	if (matches.length === 0) return undefined;
	const first = matches.reduce((a, b) => (b.index < a.index ? b : a));
	return { at: first.index, length: first[0].length };
}

/**
 * `line` within `max` characters: a long one is cut around where it first reads as an error (see
 * errorSignal), so the failure itself stays (a JSON line whose error comes at its end).
 */
export function clipToError(line: string, max: number): string {
	const signal = errorSignal(line);
	return clipAround(line, signal?.at ?? -1, signal?.length ?? 0, max);
}

/** The error patterns, to search a whole text at once (see errorLineStarts). */
const ERROR_SCANS = [new RegExp(ERROR_PATTERN.source, "gi"), new RegExp(ERRNO_PATTERN.source, "g")];

/**
 * The start offset of every line of `text` that isErrorLine would flag, found by searching the whole
 * text instead of each line (a search per line costs several times more). It finds the same lines:
 * no error pattern matches a line feed or a carriage return, and `\b` reads a line feed like the
 * end of a line.
 */
function errorLineStarts(text: string): Set<number> {
	const starts = new Set<number>();
	for (const scan of ERROR_SCANS) {
		scan.lastIndex = 0;
		for (let match = scan.exec(text); match; match = scan.exec(text)) {
			starts.add(text.lastIndexOf("\n", match.index - 1) + 1);
			const end = text.indexOf("\n", match.index);
			if (end < 0) break;
			scan.lastIndex = end + 1;
		}
	}
	return starts;
}

/** True if the line is a stack frame of a common runtime. */
export function isFrameLine(line: string): boolean {
	return FRAME_PATTERN.test(line);
}

/** A risk line found in a text, with its 1-based line number. */
export interface RiskLine {
	line: number;
	text: string;
	frame: boolean;
	/** Listed only because the result it is in failed: the lexicon finds no error in it (see riskLines). */
	failed?: true;
}

/**
 * Every risk line of `text`, error lines first and stack frames after, each group in text order.
 * White-space-only differences are kept: the lines are verbatim. With `allErrors` (the text of an
 * error result), when the lexicon finds no error line but Pi's bash status line (`Command exited
 * with code 1`, which says that a command failed and never why), every non-empty line that is not a
 * frame counts as one, marked `failed`: the whole result is the failure signal.
 */
export function riskLines(text: string, allErrors = false): RiskLine[] {
	const errors: RiskLine[] = [];
	const frames: RiskLine[] = [];
	const failed: RiskLine[] = [];
	const errorAt = errorLineStarts(text);
	let start = 0;
	let n = 0;
	while (start < text.length) {
		let end = text.indexOf("\n", start);
		if (end < 0) end = text.length;
		n++;
		const raw = text.slice(start, end);
		const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
		if (line.trim()) {
			if (isFrameLine(line)) frames.push({ line: n, text: line, frame: true });
			else {
				const error = errorAt.has(start);
				if (error) errors.push({ line: n, text: line, frame: false });
				if (allErrors)
					failed.push(
						error ? { line: n, text: line, frame: false } : { line: n, text: line, frame: false, failed: true },
					);
			}
		}
		start = end + 1;
	}
	const signalled = errors.some((risk) => !isBashStatusLine(risk.text));
	return (allErrors && !signalled ? failed : errors).concat(frames);
}
