/**
 * One resolved block as recall_folded serves it: its header (what it is, its lines, how it was
 * verified), then the block whole, a grep's matching lines or a line range, within the room the call
 * has left. A truncated bash or read copy is numbered as its file numbers it; a cut says where it
 * stopped and the call that reads on. The user's recall shows the same header over the whole block.
 */
import { quoteTags } from "../../../core/digest.ts";
import { type CopyOrigin, heldText, type OutputFilePlace, outputFilePlace } from "../../../core/output-notices.ts";
import {
	type ArgField,
	grepBlock,
	type LinePiece,
	type LineRange,
	type parseLineRange,
	RECALL_LIMITS,
	type Slice,
	sliceLines,
} from "../../../core/recall.ts";
import { clip, lineCount, linesText } from "../../../core/tokens.ts";
import {
	MAX_FULL_OUTPUT_BYTES,
	type OutputReads,
	oversizedToolOutput,
	type ResolvedCode,
} from "../fold/recall-sources.ts";

/** The recall header; `file` is the shell tool's full output when it is served, which no sha256 covers. */
export function recallHeader(r: ResolvedCode, file?: string): string {
	const what =
		r.record.kind === "toolArgs"
			? `arguments of ${r.toolName ?? "a tool call"}`
			: (r.toolName ?? r.record.kind ?? "block");
	const how =
		file !== undefined
			? `from the ${shellOf(r)} tool's full output file, which the fold-time sha256 does not cover`
			: r.source === "parent"
				? `from the parent session ${r.origin}, ${r.warning ? "unverified" : "sha256 verified"}`
				: r.source === "branch" || r.source === "records"
					? `${r.source === "branch" ? "from another branch of this session" : "from this branch's records, which its fold state lacks"}, ${r.warning ? "unverified" : "sha256 verified"}`
					: r.source === "ledger"
						? "sha256 verified"
						: r.source === "live"
							? "from live history"
							: "unverified: legacy record without a fold-time sha256";
	const images = r.images ? `; ${r.images} image${r.images === 1 ? "" : "s"} not served: recall serves text only` : "";
	// A truncated copy served itself is counted as its digest counts it: its file's lines, and which it holds.
	const place = file === undefined ? outputFilePlace(r.text, originOf(r)) : undefined;
	const lines = place ? `${linesText(place.total)}, ${heldText(place)}` : linesText(lineCount(file ?? r.text));
	const head = `Recalled #${r.record.code}: ${what}, ${lines}${fieldsText(r.fields)} (${how}${images})${r.warning ? `. Warning: ${r.warning}` : ""}`;
	return quoteTags(head);
}

/** Fields a recall header places at most; the rest are counted. */
const FIELDS_PLACED = 6;

/**
 * Where the arguments' raw values sit in the recalled text (`, content is L4-83`): a folded value's
 * digest counts its own lines, and the text numbers them after its header and key lines.
 */
function fieldsText(fields: readonly ArgField[] | undefined): string {
	if (!fields || fields.length === 0) return "";
	const placed = fields
		.slice(0, FIELDS_PLACED)
		.map((f) => `${clip(f.path, 60)} is ${f.first === f.last ? `L${f.first}` : `L${f.first}-${f.last}`}`);
	const more = fields.length > FIELDS_PLACED ? `, and ${fields.length - FIELDS_PLACED} more` : "";
	return `, ${placed.join(", ")}${more}`;
}

/**
 * Serves one resolved block: whole, a grep, or a line slice, within `budget` characters of the call's
 * output cap `cap` (which a cut names), reading a shell tool's full output file through the call's
 * `reads`.
 */
export function serve(
	r: ResolvedCode,
	grep: string | undefined,
	range: ReturnType<typeof parseLineRange>,
	budget: number,
	cap: number,
	reads: OutputReads,
): string {
	const full = (grep !== undefined || range) && r.fullOutputPath ? reads.read(r.fullOutputPath) : undefined;
	const unread =
		r.fullOutputPath !== undefined && reads.skipped.has(r.fullOutputPath)
			? `\n(${unreadNote(shellOf(r))}: recall this code alone to read it)`
			: "";
	const head = `${recallHeader(r, full)}${unread}`;
	const room = Math.max(200, budget - head.length - 240);
	// A truncated bash or read copy is numbered as in its file (the bash tool's full output, the file
	// read), as its digest numbers it, whether or not the bash tool's file is still there.
	const place = full === undefined ? outputFilePlace(r.text, originOf(r)) : undefined;
	if (grep !== undefined) {
		const g = grepBlock(r.text, grep, room, { file: full, ...originOf(r) });
		// A copy that holds part of its file found nothing in that part only: say where the rest is.
		const partly = place
			? `; this copy holds lines ${place.first}-${place.last} of ${place.total}, and the others are ${elsewhereOf(place, r)}`
			: "";
		if (g.matches === 0) return `${head}\nno line contains "${grep}"${literalHint(grep)}${partly}`;
		const more = g.cut
			? `\n… ${g.matches - g.shown} more matching lines not shown; narrow the grep or use lines`
			: "";
		return `${head}\n${g.matches} matching line${g.matches === 1 ? "" : "s"}:\n${g.text}${more}`;
	}
	if (range) {
		const text =
			full !== undefined || !place
				? slice(r, full ?? r.text, range, room, cap)
				: sliceCopy(r, place, range, room, cap);
		return `${head}\n${text}`;
	}
	if (r.text.length <= room) return `${head}\n${r.text}`;
	if (!place && r.fullOutputPath !== undefined && reads.readable(r.fullOutputPath)) {
		const s = sliceLines(r.text, { start: 1, end: Number.MAX_SAFE_INTEGER }, room - 200 - CLIPPED_NOTE_ROOM);
		if (!s.next) return `${head}\n${s.text}${clippedNote(s)}`;
		return `${head}\n${s.text}\n… cut at the output cap (${cap} characters per call); lines ${s.next}-${s.total} of this copy not shown, and \`lines\` reads the ${shellOf(r)} tool's full output file instead, numbered differently: grep reads both${clippedNote(s)}`;
	}
	if (!place) return `${head}\n${slice(r, r.text, { start: 1, end: Number.MAX_SAFE_INTEGER }, room, cap)}`;
	const note = `(lines numbered as in ${fileOf(place)}, ${place.total} lines, whose lines ${place.first}-${place.last} this copy holds)\n`;
	return `${head}\n${note}${sliceCopy(r, place, { start: place.first, end: place.last }, room - note.length, cap)}`;
}

/** Lines `range` of `text`, numbered as its own, with the call that reads on when the cap cuts them. */
function slice(r: ResolvedCode, text: string, range: LineRange, room: number, cap: number): string {
	const s = sliceLines(text, range, room - CLIPPED_NOTE_ROOM);
	if (range.start > s.total) return `line ${range.asked ?? range.start} is past the end (${linesText(s.total)})`;
	const end = Math.min(range.end, s.total);
	if (s.piece) return withNote(s.text, pieceNote(r.record.code, s.piece, cap));
	return `${s.text}${s.next ? `\n${rest(r.record.code, s.next, end, cap)}` : ""}${clippedNote(s)}`;
}

/** Why a shell tool's full output file was not read: the call had read its bytes of such files. */
export function unreadNote(tool: string): string {
	return `the ${tool} tool's full output file was not read: this call already read the ${MAX_FULL_OUTPUT_BYTES / 1024 / 1024} MiB of such files a call reads`;
}

/** The shell tool whose full output file a resolved block names (see fullOutputOf). */
function shellOf(r: ResolvedCode): string {
	return r.record.tool ?? r.toolName ?? "bash";
}

/** Which result a resolved block is, for outputFilePlace: its record's tool (or its block's), and a read's start. */
export function originOf(r: ResolvedCode): CopyOrigin {
	return { tool: r.record.tool ?? r.toolName, from: r.record.from };
}

/**
 * A reminder, after a pattern that found nothing, that patterns are plain text when it reads like a
 * regular expression (`error|fail`, `foo.*bar`, `^def `, `fail(ed)?`, `[0-9]+`): said where it helps,
 * never declared.
 */
export function literalHint(pattern: string): string {
	return /\||\.\*|\.\+|\\[dwsb]|^\^|\$$|[)\]][?*+]/.test(pattern)
		? " (patterns are plain text, matched in any case, not regular expressions: search for one word at a time)"
		: "";
}

/**
 * Where the lines a truncated copy does not hold are, and how the model reaches them: a shell tool's
 * file too large for a recall is named, for the shell to read.
 */
function elsewhereOf(place: OutputFilePlace, r: ResolvedCode): string {
	if (place.source !== "shell") return "not in this read of the file (read it again with offset to see them)";
	const size = oversizedToolOutput(r.fullOutputPath);
	if (size !== undefined)
		return `only in the ${place.tool} tool's full output file ${r.fullOutputPath} (${Math.round(size / 1024 / 1024)} MiB, more than the ${MAX_FULL_OUTPUT_BYTES / 1024 / 1024} MiB a recall reads: read it with the ${place.tool} tool)`;
	return `only in the ${place.tool} tool's full output file, which cannot be read here (deleted, or in another session's temporary folder)`;
}

/** The file a truncated copy's lines are numbered as in (see outputFilePlace). */
function fileOf(place: OutputFilePlace): string {
	return place.source === "shell" ? `the ${place.tool} tool's full output file` : "the file read";
}

/**
 * Lines `range` of a truncated bash or read copy, numbered as in its file (see outputFilePlace):
 * lines outside those it holds are only in that file (a bash tool's file here cannot be read; a file read
 * is never read by a recall), and Pi's status line after a bash notice, in no line of the file, is
 * said by a range that reaches the copy's last line.
 */
function sliceCopy(r: ResolvedCode, place: OutputFilePlace, range: LineRange, room: number, cap: number): string {
	const shift = place.first - 1;
	const elsewhere = elsewhereOf(place, r);
	if (range.start > place.total)
		return `line ${range.asked ?? range.start} is past the end (${linesText(place.total)})`;
	if (range.start > place.last)
		return `lines ${range.start}-${Math.min(range.end, place.total)} are ${elsewhere}; this copy holds lines ${place.first}-${place.last}`;
	const missing =
		range.start < place.first
			? `lines ${range.start}-${Math.min(range.end, shift)} are ${elsewhere}; this copy holds lines ${place.first}-${place.last}`
			: "";
	if (range.end < place.first) return missing;
	const from = Math.max(range.start, place.first) - shift;
	const s = sliceLines(
		place.held,
		{ start: from, end: range.end - shift, column: range.column },
		room - missing.length - 160 - CLIPPED_NOTE_ROOM,
		shift,
	);
	const end = Math.min(range.end, place.last);
	const status = place.status && range.end >= place.last ? `\n… the copy ends with: ${place.status}` : "";
	const past =
		!s.next && range.end > place.last && place.last < place.total
			? `\n… lines ${place.last + 1}-${Math.min(range.end, place.total)} are ${elsewhere}`
			: "";
	const tail = s.piece
		? pieceNote(r.record.code, s.piece, cap)
		: `${s.next ? `\n${rest(r.record.code, s.next + shift, end, cap)}` : ""}${clippedNote(s)}`;
	return `${missing ? `${missing}\n` : ""}${withNote(s.text, tail)}${past}${status}`;
}

/** Room a slice leaves for its clipped note (see clippedNote) beside the note of a cut. */
const CLIPPED_NOTE_ROOM = 120;

/** What a slice that showed every line says of the lines it clipped ("" for none), and how to read one whole. */
function clippedNote(s: Slice): string {
	if (s.clipped === 0 || s.firstClipped === undefined) return "";
	const lines =
		s.clipped === 1 ? `1 line (${s.firstClipped}) is` : `${s.clipped} lines (the first ${s.firstClipped}) are`;
	return `\n… ${lines} longer than ${RECALL_LIMITS.lineChars} characters, shown clipped: lines="${s.firstClipped}" serves one line whole`;
}

/** `text` and the note after it on a line of its own; the note alone where there is no text. */
function withNote(text: string, note: string): string {
	return text ? `${text}${note}` : note.replace(/^\n/, "");
}

/** What a piece of one long line says: which characters it holds, and the exact call that reads on. */
function pieceNote(code: string, piece: LinePiece, cap: number): string {
	const { line, first, last, length } = piece;
	if (first > length) return `\n… line ${line} has ${length} characters: nothing from character ${first} on`;
	const shown = `characters ${first}-${last} of line ${line}'s ${length}`;
	if (last >= length) return first > 1 ? `\n… ${shown}, to its end` : "";
	return `\n… cut at the output cap (${cap} characters per call); ${shown} shown: recall_folded codes=["${code}"] lines="${line}@${last + 1}" reads on`;
}

/** What a cut slice says: where the output stopped and the exact call that reads on. */
function rest(code: string, next: number, end: number, cap: number): string {
	return `… cut at the output cap (${cap} characters per call); lines ${next}-${end} not shown: recall_folded codes=["${code}"] lines="${next}-${end}" reads on`;
}

/**
 * What a recall's answer for one block served when not the whole block, from its body: a grep's
 * matching lines, a line range, or a whole recall the output cap cut; undefined for a whole block.
 */
export function servedNote(body: string, grep: boolean, lines: string | undefined): string | undefined {
	if (grep) {
		const found = /\n(\d+) matching lines?:/.exec(body);
		return found ? `grep: ${found[1]} matching line${found[1] === "1" ? "" : "s"}` : "grep: no line matches";
	}
	const cut = /\n… cut at the output cap \(\d+ characters per call\); lines (\d+-\d+) not shown/.exec(body);
	const piece =
		/\n… cut at the output cap \(\d+ characters per call\); characters \d+-(\d+) of line (\d+)'s (\d+) shown/.exec(
			body,
		);
	if (lines !== undefined && piece)
		return `lines ${lines.trim()}, cut at the output cap: characters ${Number(piece[1]) + 1}-${piece[3]} of line ${piece[2]} not shown`;
	if (lines !== undefined) return `lines ${lines.trim()}${cut ? `, cut at the output cap: ${cut[1]} not shown` : ""}`;
	return cut ? `cut at the output cap: lines ${cut[1]} not shown` : undefined;
}
