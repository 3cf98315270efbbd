/**
 * `recall_folded`: reads folded blocks back (whole, grep, line slices, or a search over every folded
 * block, and a parent session's codes in a seeded session) without changing the context. One
 * output cap bounds the whole call. Registered inactive: loadout.ts declares it once there is
 * something to recall.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { quoteTags } from "../../../core/digest.ts";
import { type CopyOrigin, type OutputFilePlace, outputFilePlace } from "../../../core/output-notices.ts";
import {
	type ArgField,
	grepBlock,
	type LineRange,
	matchQuality,
	parseLineRange,
	patternProblem,
	RECALL_LIMITS,
	sliceLines,
} from "../../../core/recall.ts";
import { clip, lineCount, linesText, safeSlice } from "../../../core/tokens.ts";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import type { ParentSession } from "../fold/parent-session.ts";
import {
	type ResolvedCode,
	readToolOutputFile,
	resolveCode,
	resolveOtherBranch,
	type Unresolved,
} from "../fold/recall-sources.ts";
import type { Ledger, PlacedRecord } from "../fold/session-ledger.ts";
import {
	codeList,
	FOLD_TOOLS,
	failure,
	notCodes,
	SERVED_MARK,
	type ToolAnswer,
	toolText,
	unknownArguments,
} from "./codes.ts";

/**
 * Parameters of recall_folded. The declaration goes out with every request that declares the tool,
 * so it says only what the names and the description do not: the form of a line range.
 */
const recallParameters = Type.Object({
	codes: Type.Optional(Type.Array(Type.String())),
	grep: Type.Optional(Type.String()),
	lines: Type.Optional(Type.String({ description: '"120-180"' })),
	search: Type.Optional(Type.String()),
});

interface RecallArgs {
	codes?: unknown;
	grep?: unknown;
	lines?: unknown;
	search?: unknown;
}

/** The one output cap of a recall_folded call: every code, grep, line range and search together. */
const CAP = RECALL_LIMITS.totalChars;
/** Least room worth serving one more code or a search in; below it the rest is named, not served. */
const MIN_PIECE = 400;

/**
 * Resolves a code of this branch or, failing that, of another branch of this session file, or of the
 * parent session this one was started from (read-only from the parent's file); each sha-verified.
 */
export function resolveAny(code: string, engine: FoldEngine, ledger: Ledger, parent: ParentSession | undefined) {
	const own = resolveCode(code, engine, ledger);
	if (own.ok || engine.registry.idOf(code) !== undefined) return own;
	const elsewhere = resolveOtherBranch(code, ledger);
	if (elsewhere) return elsewhere;
	return parent ? resolveParent(code, parent) : own;
}

/** Resolves a code from the parent session's file (read-only, sha-verified). */
function resolveParent(code: string, parent: ParentSession): ResolvedCode | Unresolved {
	const hit = parent.resolve(code);
	if (!hit.ok) return { ok: false as const, error: hit.error };
	const resolved: ResolvedCode = {
		ok: true,
		id: hit.record.id,
		record: hit.record,
		text: hit.text,
		...(hit.fields && hit.fields.length > 0 ? { fields: hit.fields } : {}),
		source: "parent",
		origin: hit.file,
		toolName: hit.toolName,
		images: hit.images,
		...(hit.verified
			? {}
			: {
					warning: hit.folded
						? "this fold predates fold-time hashes; served unverified"
						: "no fold record of it in the parent, and its seed carries no sha256 of it to check",
				}),
	};
	return resolved;
}

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
	const lines = place
		? `${linesText(place.total)}, L${place.first}-${place.last} held`
		: linesText(lineCount(file ?? r.text));
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

/** Serves one resolved block: whole, a grep, or a line slice, within `budget` characters. */
function serve(
	r: ResolvedCode,
	grep: string | undefined,
	range: ReturnType<typeof parseLineRange>,
	budget: number,
): string {
	const full = (grep !== undefined || range) && r.fullOutputPath ? readToolOutputFile(r.fullOutputPath) : undefined;
	const head = recallHeader(r, full);
	const room = Math.max(200, budget - head.length - 240);
	// A truncated bash or read copy is numbered as in its file (the bash tool's full output, the file
	// read), as its digest numbers it, whether or not the bash tool's file is still there.
	const place = full === undefined ? outputFilePlace(r.text, originOf(r)) : undefined;
	if (grep !== undefined) {
		const g = grepBlock(r.text, grep, room, { file: full, ...originOf(r) });
		// A copy that holds part of its file found nothing in that part only: say where the rest is.
		const partly = place
			? `; this copy holds lines ${place.first}-${place.last} of ${place.total}, and the others are ${elsewhereOf(place)}`
			: "";
		if (g.matches === 0) return `${head}\nno line contains "${grep}"${literalHint(grep)}${partly}`;
		const more = g.cut
			? `\n… ${g.matches - g.shown} more matching lines not shown; narrow the grep or use lines`
			: "";
		return `${head}\n${g.matches} matching line${g.matches === 1 ? "" : "s"}:\n${g.text}${more}`;
	}
	if (range) {
		const text =
			full !== undefined || !place ? slice(r, full ?? r.text, range, room) : sliceCopy(r, place, range, room);
		return `${head}\n${text}`;
	}
	if (r.text.length <= room) return `${head}\n${r.text}`;
	if (!place && r.fullOutputPath !== undefined && readToolOutputFile(r.fullOutputPath) !== undefined) {
		const s = sliceLines(r.text, { start: 1, end: Number.MAX_SAFE_INTEGER }, room - 200);
		if (!s.next) return `${head}\n${s.text}${clippedNote(s.clipped)}`;
		return `${head}\n${s.text}\n… cut at the output cap (${CAP} characters per call); lines ${s.next}-${s.total} of this copy not shown, and \`lines\` reads the ${shellOf(r)} tool's full output file instead, numbered differently: grep reads both`;
	}
	if (!place) return `${head}\n${slice(r, r.text, { start: 1, end: Number.MAX_SAFE_INTEGER }, room)}`;
	const note = `(lines numbered as in ${fileOf(place)}, ${place.total} lines, whose lines ${place.first}-${place.last} this copy holds)\n`;
	return `${head}\n${note}${sliceCopy(r, place, { start: place.first, end: place.last }, room - note.length)}`;
}

/** Lines `range` of `text`, numbered as its own, with the call that reads on when the cap cuts them. */
function slice(r: ResolvedCode, text: string, range: LineRange, room: number): string {
	const s = sliceLines(text, range, room);
	if (range.start > s.total) return `line ${range.asked ?? range.start} is past the end (${linesText(s.total)})`;
	const end = Math.min(range.end, s.total);
	return `${s.text}${s.next ? `\n${rest(r.record.code, s.next, end)}` : clippedNote(s.clipped)}`;
}

/** The shell tool whose full output file a resolved block names (see fullOutputOf). */
function shellOf(r: ResolvedCode): string {
	return r.record.tool ?? r.toolName ?? "bash";
}

/** Which result a resolved block is, for outputFilePlace: its record's tool (or its block's), and a read's start. */
function originOf(r: ResolvedCode): CopyOrigin {
	return { tool: r.record.tool ?? r.toolName, from: r.record.from };
}

/**
 * A reminder, after a pattern that found nothing, that patterns are plain text when it reads like a
 * regular expression (`error|fail`, `foo.*bar`, `^def `, `fail(ed)?`, `[0-9]+`): said where it helps,
 * never declared.
 */
function literalHint(pattern: string): string {
	return /\||\.\*|\.\+|\\[dwsb]|^\^|\$$|[)\]][?*+]/.test(pattern)
		? " (patterns are plain text, matched in any case, not regular expressions: search for one word at a time)"
		: "";
}

/** Where the lines a truncated copy does not hold are, and how the model reaches them. */
function elsewhereOf(place: OutputFilePlace): string {
	return place.source === "shell"
		? `only in the ${place.tool} tool's full output file, which cannot be read here (deleted, or in another session's temporary folder)`
		: "not in this read of the file (read it again with offset to see them)";
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
function sliceCopy(r: ResolvedCode, place: OutputFilePlace, range: LineRange, room: number): string {
	const shift = place.first - 1;
	const elsewhere = elsewhereOf(place);
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
	const s = sliceLines(place.held, { start: from, end: range.end - shift }, room - missing.length - 160, shift);
	const end = Math.min(range.end, place.last);
	const status = place.status && range.end >= place.last ? `\n… the copy ends with: ${place.status}` : "";
	const past =
		!s.next && range.end > place.last && place.last < place.total
			? `\n… lines ${place.last + 1}-${Math.min(range.end, place.total)} are ${elsewhere}`
			: "";
	const tail = s.next ? `\n${rest(r.record.code, s.next + shift, end)}` : clippedNote(s.clipped);
	return `${missing ? `${missing}\n` : ""}${s.text}${tail}${past}${status}`;
}

/** What a slice that showed every line says of the lines it clipped ("" for none). */
function clippedNote(clipped: number): string {
	if (clipped === 0) return "";
	const lines = clipped === 1 ? "1 line is" : `${clipped} lines are`;
	return `\n… ${lines} longer than ${RECALL_LIMITS.lineChars} characters, shown clipped; grep shows a line around its match`;
}

/** What a cut slice says: where the output stopped and the exact call that reads on. */
function rest(code: string, next: number, end: number): string {
	return `… cut at the output cap (${CAP} characters per call); lines ${next}-${end} not shown: recall_folded codes=["${code}"] lines="${next}-${end}" reads on`;
}

/**
 * What a recall's answer for one block served when not the whole block, from its body: a grep's
 * matching lines, a line range, or a whole recall the output cap cut; undefined for a whole block.
 */
function servedNote(body: string, grep: boolean, lines: string | undefined): string | undefined {
	if (grep) {
		const found = /\n(\d+) matching lines?:/.exec(body);
		return found ? `grep: ${found[1]} matching line${found[1] === "1" ? "" : "s"}` : "grep: no line matches";
	}
	const cut = /\n… cut at the output cap \(\d+ characters per call\); lines (\d+-\d+) not shown/.exec(body);
	if (lines !== undefined) return `lines ${lines.trim()}${cut ? `, cut at the output cap: ${cut[1]} not shown` : ""}`;
	return cut ? `cut at the output cap: lines ${cut[1]} not shown` : undefined;
}

/** How a search heads each block it shows, and what it suggests when more match than it shows. */
export interface SearchWords {
	head: (r: ResolvedCode) => string;
	narrow: string;
	/** How to see a block's matching lines a search left out. */
	grep: (code: string) => string;
}

/** The model's words: recall headers, and recall_folded's own arguments to narrow with. */
const MODEL_WORDS: SearchWords = {
	head: (r) => recallHeader(r),
	narrow: "narrow the search, or recall a code with grep",
	grep: (code) => `recall_folded codes=["${code}"] with the same grep shows them`,
};

/** A search's answer, and the lines that head it: its first, each block's it shows, and a notice of more. */
export interface SearchAnswer {
	text: string;
	heads: string[];
}

/**
 * Searches every recorded block (folded, or removed by a compaction), then every block of the last
 * branch of the `parent` session this one was seeded from, within `room` characters, in `words` (the model's by default;
 * the user's command passes its own). Blocks holding the pattern in
 * its exact case as a whole token come first, then in its exact case inside a longer token, then in
 * another case (matchQuality), so an exact identifier finds its own blocks before longer tokens and
 * case variants; within a block its own such lines come first too (grepText).
 */
export function searchFolded(
	pattern: string,
	engine: FoldEngine,
	ledger: Ledger,
	room: number,
	words: SearchWords = MODEL_WORDS,
	parent?: ParentSession,
): SearchAnswer {
	const tiers: ResolvedCode[][] = [[], [], []];
	let unreadable = 0;
	const take = (r: ResolvedCode | Unresolved | undefined): void => {
		if (!r?.ok) {
			unreadable++;
			return;
		}
		const quality = matchQuality(r.text, pattern);
		if (quality < 3) tiers[quality].push(r);
	};
	for (const record of engine.registry.allRecords()) take(resolveCode(record.code, engine, ledger));
	// Folds this branch recorded that its fold state lacks (a restore that failed) are searched too.
	const branch = branchRecordsOf(ledger);
	if (Array.isArray(branch)) {
		for (const { record } of branch)
			if (engine.registry.idOf(record.code) === undefined) take(resolveOtherBranch(record.code, ledger));
	}
	// A seeded session's parent: the blocks of its branch, and every block the seed cites.
	const parentCodes = parent?.searchCodes() ?? [];
	if (Array.isArray(parentCodes)) {
		for (const code of parentCodes)
			if (engine.registry.idOf(code) === undefined) take(resolveParent(code, parent as ParentSession));
	}
	// Blocks of a damaged parent are served only where a fold record vouches for them: the damage says why.
	const damage = parent?.unreadableLines();
	const notes = [
		...(unreadable ? [`${unreadable} could not be read`] : []),
		...(Array.isArray(branch)
			? []
			: [`the session file could not be read for this branch's records: ${branch.error}`]),
		...(Array.isArray(parentCodes) ? [] : [`not searched: ${parentCodes.error}`]),
		...(damage ? [damage] : []),
	];
	const note = notes.length > 0 ? ` (${notes.join("; ")})` : "";
	// A fold tool's own result only quotes blocks: within a tier, the blocks it quotes come first (a
	// session that recalled a block often holds as many folded echoes of it as the search shows).
	const echo = (r: ResolvedCode) => (FOLD_TOOLS as readonly string[]).includes(r.record.tool ?? "");
	const hits = tiers.flatMap((tier) => [...tier.filter((r) => !echo(r)), ...tier.filter(echo)]);
	if (hits.length === 0) {
		const none = `no folded block contains "${pattern}"${note}${literalHint(pattern)}`;
		return { text: none, heads: [none] };
	}
	const out: string[] = [];
	const heads = [`${hits.length === 1 ? "1 block contains" : `${hits.length} blocks contain`} "${pattern}"${note}:`];
	let budget = room - 200;
	for (const r of hits) {
		if (out.length >= RECALL_LIMITS.searchBlocks || budget < 400) break;
		const g = grepBlock(r.text, pattern, Math.min(2000, budget - 250), {
			maxMatches: 8,
			context: 1,
			...originOf(r),
		});
		const head = `${words.head(r)}: ${g.matches} match${g.matches === 1 ? "" : "es"}`;
		const left = g.cut
			? `\n… ${g.matches - g.shown} more matching lines in this block not shown; ${words.grep(r.record.code)}`
			: "";
		const entry = `${head}\n${g.text}${left}`;
		heads.push(head);
		out.push(entry);
		budget -= entry.length + 2;
	}
	let more = "";
	if (hits.length > out.length) {
		more = `… ${hits.length - out.length} more blocks match, not shown (at most ${RECALL_LIMITS.searchBlocks} blocks per search, ${CAP} characters per call); ${words.narrow}`;
		heads.push(more);
	}
	return { text: `${heads[0]}\n\n${out.join("\n\n")}${more ? `\n${more}` : ""}`, heads };
}

/** The fold records of the current branch as the session file holds them, or why it cannot be read. */
function branchRecordsOf(ledger: Ledger): PlacedRecord[] | { error: string } {
	try {
		return ledger.branchRecords();
	} catch (error) {
		return { error: errorText(error) };
	}
}

/**
 * The recall_folded tool's work (never throws). It failed when the arguments were wrong or no code it
 * named could be served; a search that finds nothing is an answer, not a failure.
 */
function runRecall(args: RecallArgs, engine: FoldEngine, ledger: Ledger, parent?: ParentSession): ToolAnswer {
	try {
		const unknown = unknownArguments("recall_folded", args, Object.keys(recallParameters.properties));
		if (unknown) return failure(unknown);
		const parsed = codeList(args?.codes);
		if (typeof parsed === "string") return failure(`recall_folded: ${parsed}`);
		for (const [name, value] of [
			["grep", args?.grep],
			["search", args?.search],
		] as const) {
			if (value === undefined) continue;
			if (typeof value !== "string" || value.length === 0)
				return failure(`recall_folded: \`${name}\` must be non-empty text`);
			const problem = patternProblem(value);
			if (problem) return failure(`recall_folded: \`${name}\` ${problem}`);
		}
		const range = args?.lines === undefined ? null : parseLineRange(args.lines);
		if (args?.lines !== undefined && !range)
			return failure('recall_folded: `lines` must look like "120-180" (1-based, start <= end)');
		if (args?.grep !== undefined && range) return failure("recall_folded: give either `grep` or `lines`, not both");
		const search = args?.search as string | undefined;
		if (parsed.codes.length === 0 && search === undefined) {
			if (parsed.bad.length > 0) return failure(`recall_folded: ${notCodes(parsed.bad)}`);
			return failure("recall_folded: name at least one fold code in `codes`, or give `search`");
		}
		const parts: string[] = [];
		if (parsed.bad.length > 0) parts.push(notCodes(parsed.bad));
		// `grep` and `lines` read the blocks `codes` names; without any, say they went unused.
		const unused = (["grep", "lines"] as const).filter((name) => args?.[name] !== undefined);
		if (parsed.codes.length === 0 && unused.length > 0)
			parts.push(
				`(\`${unused.join("` and `")}\` read the blocks \`codes\` names, and none was given: the search below is whole)`,
			);
		// Room is kept for the closing notices, so the cap holds with them.
		const reserve = 160 + 12 * parsed.codes.length + (search === undefined ? 0 : 120);
		let budget = CAP - reserve - parts.reduce((n, p) => n + p.length + 2, 0);
		const unserved: string[] = [];
		let served = 0;
		/** What part k served of its block when not all of it (see servedNote), by part. */
		const notes = new Map<number, string | undefined>();
		for (const code of parsed.codes) {
			if (budget < MIN_PIECE) {
				unserved.push(`#${code}`);
				continue;
			}
			const r = resolveAny(code, engine, ledger, parent);
			if (r.ok) served++;
			// A block 0.5.1 recorded and this version folded again answers to both codes: say they are one.
			const alias =
				r.ok && r.record.code !== code ? `#${code} names the block now folded as #${r.record.code}.\n` : "";
			const body = r.ok
				? `${alias}${serve(r, args?.grep as string | undefined, range, budget - alias.length)}`
				: `error: ${r.error}`;
			parts.push(body);
			if (r.ok)
				notes.set(
					parts.length - 1,
					servedNote(body, args?.grep !== undefined, range ? String(args?.lines) : undefined),
				);
			budget -= body.length + 2;
		}
		// What follows the blocks served is never cut: the codes not shown, then the search.
		const closing: string[] = [];
		if (unserved.length > 0) {
			closing.push(
				`… output cap (${CAP} characters per call) reached; not shown: ${unserved.join(", ")}. Call recall_folded again with those codes.`,
			);
		}
		// The line opening each part, and after a block's, what of it was served when not all (for the
		// transcript); a search's hits each head a part of their own.
		const heads = [...parts, ...closing].flatMap((part, k) => {
			const note = notes.get(k);
			return [part.split("\n", 1)[0], ...(note ? [`${SERVED_MARK}${note}`] : [])];
		});
		if (search !== undefined) {
			const late = `… output cap (${CAP} characters per call) reached before the search; call recall_folded with search alone.`;
			const found: SearchAnswer =
				budget < MIN_PIECE
					? { text: late, heads: [late] }
					: searchFolded(search, engine, ledger, budget, MODEL_WORDS, parent);
			closing.push(found.text);
			heads.push(...found.heads);
		}
		const body = parts.join("\n\n");
		const after = closing.join("\n\n");
		const cut = `… cut at the output cap (${CAP} characters per call)`;
		const whole = body.length + after.length + 2 <= CAP;
		const kept = whole ? body : `${safeSlice(body, Math.max(0, CAP - after.length - 80))}\n${cut}`;
		const text = [kept, after].filter((part) => part.length > 0).join("\n\n");
		return {
			text: safeSlice(text, CAP),
			failed: search === undefined && served === 0 && unserved.length === 0,
			heads: whole ? heads : [...heads, cut],
		};
	} catch (error) {
		return failure(`recall_folded failed: ${errorText(error)}`);
	}
}

/** Registers recall_folded, inactive (see loadout.ts). */
export function registerRecallFolded(
	pi: ExtensionAPI,
	engine: FoldEngine,
	ledger: Ledger,
	parent: () => ParentSession | undefined = () => undefined,
): void {
	pi.registerTool({
		name: "recall_folded",
		label: "Recall folded",
		defaultActive: false,
		description:
			"Reads back what a `{#<code> FOLDED} …` digest stands for: whole, or only `grep` matches or `lines`. " +
			"`search` looks in every folded block.",
		parameters: recallParameters,
		async execute(_id, params) {
			const answer = runRecall(params as RecallArgs, engine, ledger, parent());
			return toolText(answer, answer.heads ? { heads: answer.heads } : {});
		},
	});
}
