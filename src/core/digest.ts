/**
 * The `{#code FOLDED}` tag, fold codes, and the deterministic per-kind digests that stand in for a
 * folded block. Nothing here depends on anything but its arguments: the same block and code always
 * give the same bytes.
 */

import { distinctiveTokens } from "./distinctive.ts";
import { readsFile } from "./file-calls.ts";
import { frequentStringsLine } from "./frequent-strings.ts";
import { pathsLine } from "./mentions.ts";
import { outlineLine } from "./outline.ts";
import { type CopyOrigin, heldText, type OutputFilePlace, outputFilePlace } from "./output-notices.ts";
import { clipToError, type RiskLine, riskLines } from "./policy/risk-lexicon.ts";
import { clip, estTokens, firstLine, lineCount, linesText } from "./tokens.ts";

/** Length of a fold code: 8 base36 characters (36^8 ≈ 2.8e12 codes). */
export const CODE_LENGTH = 8;
/** Length of codes written by earlier releases; still accepted by the parser. */
const LEGACY_CODE_LENGTH = 6;
/** A code of either length, as a pattern group's alternatives (the longer first). */
const CODE_CHARS = `[0-9a-z]{${CODE_LENGTH}}|[0-9a-z]{${LEGACY_CODE_LENGTH}}`;

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const CODE_SPACE = 36n ** BigInt(CODE_LENGTH);
const encoder = new TextEncoder();

/** 64-bit FNV-1a over the UTF-8 bytes of `text`. */
export function fnv1a64(text: string): bigint {
	let hash = FNV_OFFSET;
	for (const byte of encoder.encode(text)) {
		hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * FNV_PRIME);
	}
	return hash;
}

/** The fold code of a durable block id: FNV-1a 64 mod 36^8, as 8 lowercase base36 characters. */
export function foldCode(durableId: string): string {
	return (fnv1a64(durableId) % CODE_SPACE).toString(36).padStart(CODE_LENGTH, "0");
}

/** The tag that heads every folded block. */
export function foldTag(code: string): string {
	return `{#${code} FOLDED}`;
}

const TAG_PATTERN = new RegExp(`\\{#(${CODE_CHARS}) FOLDED\\}[ \\t]*`, "gi");
/** A bare or `#` code, or the whole tag with both braces: a half tag is not a code. */
const CODE_INPUT = new RegExp(`^(?:#?(${CODE_CHARS})|\\{\\s*#(${CODE_CHARS})\\s+FOLDED\\s*\\})$`, "i");

/**
 * Reads a fold code given as `abc12345`, `#abc12345` or the whole `{#abc12345 FOLDED}` tag, in any
 * case, 8 or 6 characters. Returns the lowercase code, or null if the input is not a code.
 */
export function parseCode(input: unknown): string | null {
	if (typeof input !== "string") return null;
	const match = CODE_INPUT.exec(input.trim());
	const code = match?.[1] ?? match?.[2];
	return code ? code.toLowerCase() : null;
}

/** Removes every fold tag from `text` (the engine alone writes tags). */
export function stripTags(text: string): string {
	return text.replace(TAG_PATTERN, "");
}

/** A terminal control sequence (a colour code), as `grep --color` prints one between a tag's parts. */
const ESC = String.raw`\x1b\[[0-9;?]*[A-Za-z]`;

/** Tag-shaped text in any spacing and case, colour codes between its parts, as a reader would still take it. */
const TAG_SHAPE = new RegExp(
	String.raw`\{(?:\s|${ESC})*#(?:${ESC})*(${CODE_CHARS})(?:\s|${ESC})+FOLDED(?:\s|${ESC})*\}`,
	"gi",
);

/**
 * Defuses tag-shaped text copied from content (`{#abc12345 FOLDED}` → `[quoted tag #abc12345]`), so
 * that every tag the model reads in engine-written text was written by the engine (invariant 2).
 */
export function quoteTags(text: string): string {
	return text.includes("#") ? text.replace(TAG_SHAPE, (_, code: string) => `[quoted tag #${code}]`) : text;
}

/** Every fold code mentioned as a tag in `text`, lowercase, in order of appearance. */
export function codesIn(text: string): string[] {
	return Array.from(text.matchAll(TAG_PATTERN), (m) => m[1].toLowerCase());
}

/** Limits applied to the risk lines a digest carries. */
export const DIGEST_LIMITS = {
	firstLineChars: 160,
	riskLines: 12,
	riskLineChars: 400,
	riskChars: 2400,
	argFirstLineChars: 60,
	textFirstLineChars: 60,
	focusLines: 4,
	focusLineChars: 160,
} as const;

/** What a tool-result digest is made from. */
export interface ToolResultDigestInput {
	code: string;
	toolName: string;
	text: string;
	isError: boolean;
	/** The file line a read from an offset started at (see outputFilePlace). */
	from?: number;
}

/**
 * A tool result's size: `error`, its lines (for a truncated bash or read copy, its file's, and which
 * of them the copy holds), its tokens.
 */
function describeSize(text: string, isError: boolean, place?: OutputFilePlace): string {
	const lines = lineCount(text);
	const count = place ? `${linesText(place.total)}, ${heldText(place)}` : linesText(lines);
	const shape = isError ? `error, ${count}` : lines === 0 ? "empty" : count;
	return `${shape}, ~${estTokens(text.length)} tokens`;
}

/**
 * The risk section of a tool result. A truncated shell or read copy's lines are numbered as in its
 * file (see outputFilePlace), as `lines` and `grep` recalls number them, and the shell tool's status
 * line after its notice closes the section. `shown` is the digest's head line, not repeated (see
 * riskSection).
 */
function resultRiskSection(
	code: string,
	text: string,
	isError: boolean,
	place?: OutputFilePlace,
	shown?: string,
): string {
	if (!place) return riskSection(code, riskLines(text, isError), shown);
	const section = riskSection(code, riskLines(place.held, isError), shown, place.first - 1);
	return place.status ? `${section}\nafter L${place.last}: ${place.status}` : section;
}

/** One distinct risk line of a digest: where it first is, how often it occurs, and how it was found. */
interface DistinctRisk {
	text: string;
	line: number;
	count: number;
	frame: boolean;
	failed: boolean;
}

/** The distinct lines of `risks`, in order, each with its first line number and how many there are. */
function distinctRisks(risks: readonly RiskLine[]): DistinctRisk[] {
	const distinct = new Map<string, DistinctRisk>();
	for (const risk of risks) {
		const seen = distinct.get(risk.text);
		if (seen) seen.count++;
		else
			distinct.set(risk.text, {
				text: risk.text,
				line: risk.line,
				count: 1,
				frame: risk.frame,
				failed: risk.failed === true,
			});
	}
	return [...distinct.values()];
}

/**
 * Renders the risk-line section of a digest: verbatim lines, bounded, with a count of the rest.
 * Identical lines collapse into their first, which says how many there are (`L12 ×3:`); the bounds
 * apply to distinct lines, and every distinct line left out is counted, so none is dropped silently.
 * A line the digest already shows whole (`shown`, its head) is not repeated unless it occurs again.
 * Lines listed only because their result failed (see riskLines) keep the last ones first: a failure
 * says why at its end. Each number shown is the line's own plus `shift` (a copy of a file's lines
 * numbered as in that file).
 */
function riskSection(code: string, risks: readonly RiskLine[], shown?: string, shift = 0): string {
	// The head stands for one line only: the first that reads as it (the head's own), unless that line
	// recurs; a later line that reads as it after trimming is another line, and listed.
	let headMet = false;
	const entries = distinctRisks(risks).filter((risk) => {
		if (headMet || shown === undefined || risk.text.trim() !== shown) return true;
		headMet = true;
		return risk.count > 1;
	});
	if (entries.length === 0) return "";
	const lines = entries.filter((risk) => !risk.frame);
	const tailFirst = lines.some((risk) => risk.failed);
	const priority = tailFirst ? [...lines.reverse(), ...entries.filter((risk) => risk.frame)] : entries;
	const rendered = new Map<DistinctRisk, string>();
	let used = 0;
	for (const risk of priority) {
		if (rendered.size >= DIGEST_LIMITS.riskLines) break;
		const count = risk.count > 1 ? ` ×${risk.count}` : "";
		const line = `L${risk.line + shift}${count}: ${clipToError(risk.text, DIGEST_LIMITS.riskLineChars)}`;
		if (used + line.length > DIGEST_LIMITS.riskChars && rendered.size > 0) break;
		rendered.set(risk, line);
		used += line.length + 1;
	}
	const out = entries.flatMap((risk) => rendered.get(risk) ?? []);
	const left = entries.filter((risk) => !rendered.has(risk));
	if (left.length > 0) out.push(leftOutLine(code, left, shift));
	return `\n${out.join("\n")}`;
}

/**
 * The line that counts the distinct risk lines a digest left out and says where they lie, as a
 * `lines` range recall_folded takes (numbered as the digest numbers them).
 */
function leftOutLine(code: string, left: readonly DistinctRisk[], shift: number): string {
	let first = Number.POSITIVE_INFINITY;
	let last = 0;
	for (const risk of left) {
		first = Math.min(first, risk.line + shift);
		last = Math.max(last, risk.line + shift);
	}
	const range = first === last ? `${first}` : `${first}-${last}`;
	const count = `${left.length} more distinct risk line${left.length === 1 ? "" : "s"}`;
	return `… ${count} left out (L${range}): recall_folded codes=["${code}"] lines="${range}"`;
}

/**
 * The lines of a folded text that hold any of `focus` (the distinctive strings the model was using
 * it for, matched whole), bounded, in order, as a digest section: what the model is likely to name
 * again stays in sight. Where more lines hold them than the section keeps, a line's worth is the sum,
 * over the strings it holds, of one over how many lines hold that string, so the lines of the
 * function the model worked on come before an import every function repeats (earlier lines first
 * among equals). Empty when no line holds one. A truncated bash or read copy's lines, and those of a
 * read from line `from`, are numbered as in its file, as its risk lines are (see outputFilePlace).
 */
export function focusSection(text: string, focus: readonly string[], origin: CopyOrigin = {}): string {
	if (focus.length === 0) return "";
	const wanted = new Set(focus);
	const place = outputFilePlace(text, origin);
	const shift = place ? place.first - 1 : 0;
	const lines = (place?.held ?? text).split("\n");
	const held = new Map<number, string[]>();
	const lineCount = new Map<string, number>();
	lines.forEach((line, i) => {
		const strings = [...distinctiveTokens(line)].filter((s) => wanted.has(s));
		if (strings.length === 0) return;
		held.set(i, strings);
		for (const s of strings) lineCount.set(s, (lineCount.get(s) ?? 0) + 1);
	});
	const worth = new Map<number, number>();
	for (const [i, strings] of held)
		worth.set(
			i,
			strings.reduce((sum, s) => sum + 1 / (lineCount.get(s) ?? 1), 0),
		);
	const kept = [...held.keys()]
		.sort((a, b) => (worth.get(b) ?? 0) - (worth.get(a) ?? 0) || a - b)
		.slice(0, DIGEST_LIMITS.focusLines)
		.sort((a, b) => a - b);
	const out = kept.map((i) => `L${i + 1 + shift}: ${quoteTags(clip(lines[i].trim(), DIGEST_LIMITS.focusLineChars))}`);
	return out.length === 0 ? "" : `\nIn use:\n${out.join("\n")}`;
}

/**
 * Digest of a tool result: tag, tool, line count or `error`, token estimate, the first non-empty
 * line, the names a code text declares (outline.ts), the files a long text mentions (mentions.ts)
 * and the strings a long file read repeats most (frequent-strings.ts), then its risk lines verbatim
 * (errors before stack frames), bounded.
 */
export function toolResultDigest(input: ToolResultDigestInput): string {
	const place = outputFilePlace(input.text, { tool: input.toolName, from: input.from });
	const content = place?.held ?? input.text;
	const head = clip(firstLine(content), DIGEST_LIMITS.firstLineChars);
	// A copy that holds only a long line's end opens mid-line: its first line says so.
	const first = head ? ` First line: ${place?.lineTail ? "…" : ""}${head}` : "";
	const names = outlineLine(content);
	const paths = pathsLine(content);
	const risks = resultRiskSection(input.code, input.text, input.isError, place, head);
	const strings = readsFile(input.toolName) ? frequentStringsLine(content, `${head} ${names} ${paths} ${risks}`) : "";
	const body = `${input.toolName}: ${describeSize(input.text, input.isError, place)}.${first}${names ? ` ${names}` : ""}${paths ? ` ${paths}` : ""}${strings ? ` ${strings}` : ""}${risks}`;
	return `${foldTag(input.code)} ${quoteTags(body)}`;
}

/**
 * Digest of a block whose bytes equal an already-folded block: a pointer to the first one, with the
 * block's own risk lines (the first one's digest may have left the context with a compaction).
 */
export function duplicateDigest(
	code: string,
	label: string,
	text: string,
	originalCode: string,
	isError = false,
	from?: number,
): string {
	return `${foldTag(code)} ${quoteTags(label)}: identical to ${foldTag(originalCode)}, ~${estTokens(text.length)} tokens.${quoteTags(resultRiskSection(code, text, isError, outputFilePlace(text, { tool: label, from })))}`;
}

/** Digest of an unsigned thinking block: one line, then its risk lines verbatim, bounded (invariant 6). */
export function thinkingDigest(code: string, text: string): string {
	const head = clip(firstLine(text), DIGEST_LIMITS.firstLineChars);
	return `${foldTag(code)} thinking: ${linesText(lineCount(text))}, ~${estTokens(text.length)} tokens.${head ? ` ${quoteTags(head)}` : ""}${quoteTags(riskSection(code, riskLines(text), head))}`;
}

/** Digest of an assistant text part: one line, then its risk lines verbatim, bounded (invariant 6). */
export function textDigest(code: string, text: string): string {
	const head = clip(firstLine(text), DIGEST_LIMITS.textFirstLineChars);
	return `${foldTag(code)} text: ${linesText(lineCount(text))}, ~${estTokens(text.length)} tokens.${head ? ` ${quoteTags(head)}` : ""}${quoteTags(riskSection(code, riskLines(text), head))}`;
}

/** An assistant text part of at least this many characters may fold; shorter ones cost less raw than folded. */
export const TEXT_FOLD_CHARS = 120;

/** A string argument of at least this many characters may fold (see foldableArg). */
export const ARG_FOLD_CHARS = 64;

/**
 * Argument keys whose strings name what a call touched or looked for (a file, a directory, a search
 * pattern, an address). They never fold: a folded call must still say what it was about.
 */
const KEPT_ARG_KEYS: ReadonlySet<string> = new Set([
	"path",
	"file_path",
	"filePath",
	"paths",
	"cwd",
	"dir",
	"directory",
	"pattern",
	"glob",
	"url",
]);

/**
 * A `command` argument shorter than this never folds: a command line says what a call did, as a path
 * does, and its digest (tag, line count, head) would save little of it. Longer ones (scripts, heredocs)
 * fold.
 */
export const KEPT_COMMAND_CHARS = 200;

/** True when a string argument under `key` (the nearest object key; undefined at the top) may fold. */
export function foldableArg(key: string | undefined, value: unknown): value is string {
	if (typeof value !== "string" || value.length < ARG_FOLD_CHARS) return false;
	if (key === "command") return value.length >= KEPT_COMMAND_CHARS;
	return !(key !== undefined && KEPT_ARG_KEYS.has(key));
}

/**
 * An argument string of at least this many characters (a file written, a heredoc script) also names
 * what its code declares (outline.ts). Replayed at 140k against no names: large-session 0.364 →
 * 0.359× plain Pi at 96.7 → 96.8 % visibility, refactor-long 95.7 → 96.0 % at the same cost, the
 * others unchanged; from 1,000 characters the same, for every argument debug-branchy 0.901× (over 0.9).
 */
export const ARG_OUTLINE_CHARS = 2000;

/**
 * Digest string standing in for one string argument: tag, line count, the head of its first line
 * (at most a quarter of the value and `argFirstLineChars`), and for a long one the names its code
 * declares. foldArgs keeps a value its digest would not shorten.
 */
export function argDigest(code: string, value: string): string {
	const room = Math.min(DIGEST_LIMITS.argFirstLineChars, Math.floor(value.length / 4));
	const head = room > 1 ? clip(firstLine(value), room) : "";
	const names = value.length >= ARG_OUTLINE_CHARS ? outlineLine(value) : "";
	return `${foldTag(code)} ${linesText(lineCount(value))}${head ? `: ${quoteTags(head)}` : ""}${names ? ` ${quoteTags(names)}` : ""}`;
}

/**
 * True when foldArgs would change `args`: some string leaf is foldable (see foldableArg). Its digest
 * is then always shorter (at most about 320 characters, and under a quarter plus 31 of the value below
 * ARG_OUTLINE_CHARS), so no digest needs making: a call's first request pays no outline scan.
 */
export function hasFoldableArg(args: unknown): boolean {
	const walk = (value: unknown, key: string | undefined): boolean => {
		if (typeof value === "string") return foldableArg(key, value);
		if (Array.isArray(value)) return value.some((inner) => walk(inner, key));
		if (value && typeof value === "object") return Object.entries(value).some(([inner, v]) => walk(v, inner));
		return false;
	};
	return !!args && typeof args === "object" && !Array.isArray(args) && walk(args, undefined);
}

/**
 * Copy of a tool call's arguments with every foldable string leaf (at any depth, see foldableArg)
 * replaced by its digest where the digest is shorter; keys, kept and short values, and structure are
 * untouched. Returns null if nothing changes.
 */
export function foldArgs(code: string, args: unknown): Record<string, unknown> | null {
	let changed = false;
	const walk = (value: unknown, key: string | undefined): unknown => {
		if (typeof value === "string") {
			if (!foldableArg(key, value)) return value;
			const digest = argDigest(code, value);
			if (digest.length >= value.length) return value;
			changed = true;
			return digest;
		}
		if (Array.isArray(value)) return value.map((inner) => walk(inner, key));
		if (value && typeof value === "object") {
			const out: Record<string, unknown> = {};
			for (const [inner, innerValue] of Object.entries(value)) out[inner] = walk(innerValue, inner);
			return out;
		}
		return value;
	};
	if (!args || typeof args !== "object" || Array.isArray(args)) return null;
	const folded = walk(args, undefined) as Record<string, unknown>;
	return changed ? folded : null;
}
