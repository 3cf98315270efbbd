/**
 * What Pi's shell tools (bash, and powershell on Windows) and read tool add to their output, read from
 * the text alone: the notice that ends a truncated result, which says where the session's copy sits
 * in a file (a shell tool's: `[Showing lines 3448-5000 of 5000. Full output: …]`, or `[Showing last
 * 50.0KB of line 3 (line is 960.0KB). Full output: …]` when it kept the end of the last line alone,
 * the full output the tool saved; read: `[Showing lines 1-2000 of 5000. Use offset=2001 to
 * continue.]` or `[120 more lines in file. Use offset=301 to continue.]`, the file read), and the
 * status line a shell tool appends when a command fails or stops (`Command exited with code 2`). A read
 * from an offset that runs to the file's end has no notice: its call's offset says where it starts. A
 * digest and a recall both number such a copy's lines as in that file, so that the line a digest
 * names is the line a recall serves, and the line a `read` would give.
 */

import { lineCount } from "./tokens.ts";

/**
 * Pi's shell tools: `bash`, and `powershell` where Pi runs on Windows. Both cut a long output alike,
 * saving it whole to `pi-<tool>-<16 hex>.log` in the temp dir, and append the same status line.
 */
export const SHELL_TOOLS: ReadonlySet<string> = new Set(["bash", "powershell"]);

/** Where a truncated result's session copy sits in a file: a shell tool's full output, or the file a read read. */
export interface OutputFilePlace {
	/** Which tool's notice: the file is a shell tool's full output, or the file read. */
	source: "shell" | "read";
	/** The shell tool that saved the full output (`bash` when the result does not say). */
	tool?: string;
	/** The file's lines the copy holds, 1-based, inclusive, and how many the file has. */
	first: number;
	last: number;
	total: number;
	/** The copy's text of those lines (everything before the notice). */
	held: string;
	/** The copy's lines after them: the notice, then the shell tool's status line for a failed or stopped command. */
	trailer: string[];
	/** The shell tool's status line after the notice, when there is one. */
	status?: string;
	/** The copy holds only the end of line `last` (the shell tool cut a line longer than its limit). */
	lineTail?: true;
}

/** Which of its file's lines a copy holds, as a digest and a recall say it: `L601-900 held`, `the end of L3 held`. */
export function heldText(place: OutputFilePlace): string {
	return place.lineTail ? `the end of L${place.last} held` : `L${place.first}-${place.last} held`;
}

const SHELL_NOTICE =
	/\n\n\[Showing lines (\d+)-(\d+) of (\d+)[^\n\]]*\. Full output: [^\n]+\](?:\n\n(Command [^\n]*))?$/;
/** A shell tool's notice when it kept only the end of the output's last line, line N (the copy is that line's tail). */
const SHELL_LAST_LINE =
	/\n\n\[Showing last [^\n\]]* of line (\d+) \(line is [^\n\]]*\)\. Full output: [^\n]+\](?:\n\n(Command [^\n]*))?$/;
const READ_SHOWING = /\n\n\[Showing lines (\d+)-(\d+) of (\d+)[^\n\]]*\. Use offset=\d+ to continue\.\]$/;
const READ_MORE = /\n\n\[(\d+) more lines in file\. Use offset=(\d+) to continue\.\]$/;

/** Either read notice at the end of a text, whether or not its figures fit the lines before it. */
const READ_ANY_NOTICE = /\n\n\[(?:Showing lines \d+-\d+ of \d+|\d+ more lines in file)[^\n]*\]$/;
/** Pi's read notice in place of a line too long to show: `[Line 7 is 80KB, exceeds 50KB limit. Use bash: …]`. */
const READ_WIDE_LINE = /^\[Line \d+ is [^\n]*\]$/;

/** Characters at the end of a text that hold any read notice whole (one is well under a hundred). */
const READ_NOTICE_ROOM = 400;

/**
 * True when a `read` result's `text` holds only part of the file it was asked for: Pi's read tool
 * ended it with a notice of the lines it shows or of the lines left, or showed a notice in place of a
 * first line too long to show. Only the end of the text is searched.
 */
export function readCut(text: string): boolean {
	if (!text.endsWith("]")) return false;
	return READ_ANY_NOTICE.test(text.slice(-READ_NOTICE_ROOM)) || READ_WIDE_LINE.test(text);
}

/**
 * Which result a copy is: the tool that returned it (undefined when a record from an older version
 * does not say) and, for a read from an offset, the line its call's offset started at (see readStarts).
 */
export interface CopyOrigin {
	tool?: string;
	from?: number;
}

/**
 * Where a shell or read result's `text` sits in a file, from the notice Pi's tool ends a truncated
 * result with, or for a read without one, from `origin.from`, the line its call's offset started at;
 * undefined for a text whose notice does not match the lines before it, or that has neither notice nor
 * start past line 1. Only the tool that writes a notice is read for it: another tool's text that ends
 * like one (a log it prints, another run's output it passes on) is its own text, numbered from 1.
 */
export function outputFilePlace(text: string, origin: CopyOrigin = {}): OutputFilePlace | undefined {
	const { tool, from } = origin;
	const noticed = noticedPlace(text, tool);
	if (
		noticed ||
		from === undefined ||
		!(from > 1) ||
		!writes(tool, "read") ||
		READ_WIDE_LINE.test(text) ||
		READ_ANY_NOTICE.test(text)
	)
		return noticed;
	// Lines as a whole read counts them: a text ending in a line feed (the file's own last one) has no
	// empty line after it.
	const last = from + Math.max(1, lineCount(text)) - 1;
	return { source: "read", first: from, last, total: last, held: text, trailer: [] };
}

/** True when `tool` (undefined: not known) may have written the notices of Pi's tools of `source`. */
function writes(tool: string | undefined, source: OutputFilePlace["source"]): boolean {
	return tool === undefined || (source === "shell" ? SHELL_TOOLS.has(tool) : tool === source);
}

/** The place a notice at the end of `text` gives (see outputFilePlace), when `tool` writes that notice. */
function noticedPlace(text: string, tool: string | undefined): OutputFilePlace | undefined {
	if (!text.endsWith("]") && !text.includes("\n\nCommand ")) return undefined;
	const shell = writes(tool, "shell") ? SHELL_NOTICE.exec(text) : null;
	if (shell) {
		const place = placed("shell", text, shell.index, Number(shell[1]), Number(shell[2]), Number(shell[3]), shell[4]);
		return place && { ...place, tool: tool ?? "bash" };
	}
	const lastLine = writes(tool, "shell") ? SHELL_LAST_LINE.exec(text) : null;
	if (lastLine) {
		const line = Number(lastLine[1]);
		const place = placed("shell", text, lastLine.index, line, line, line, lastLine[2]);
		return place && { ...place, tool: tool ?? "bash", lineTail: true };
	}
	if (!writes(tool, "read")) return undefined;
	const showing = READ_SHOWING.exec(text);
	if (showing) return placed("read", text, showing.index, Number(showing[1]), Number(showing[2]), Number(showing[3]));
	const more = READ_MORE.exec(text);
	if (!more) return undefined;
	const held = text.slice(0, more.index).split("\n").length;
	const next = Number(more[2]);
	return placed("read", text, more.index, next - held, next - 1, next - 1 + Number(more[1]));
}

/** The place of a copy whose notice starts at `at`, if the lines before it are the file's `first`-`last`. */
function placed(
	source: OutputFilePlace["source"],
	text: string,
	at: number,
	first: number,
	last: number,
	total: number,
	status?: string,
): OutputFilePlace | undefined {
	const held = text.slice(0, at);
	if (!(first >= 1 && last >= first && last <= total && held.split("\n").length === last - first + 1))
		return undefined;
	const trailer = text
		.slice(at + 2)
		.split("\n")
		.filter((line) => line.length > 0);
	const place = { source, first, last, total, held, trailer };
	return status ? { ...place, status } : place;
}

const STATUS =
	/^Command (?:exited with code -?\d+|aborted|timed out after \d+ seconds\b.*|terminated without an exit code)$/;

/**
 * True for a status line Pi's shell tools append to a failed or stopped command's output: it says
 * that the command failed, never why.
 */
export function isShellStatusLine(line: string): boolean {
	return STATUS.test(line);
}
