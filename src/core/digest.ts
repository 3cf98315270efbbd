/**
 * The `{#code FOLDED}` tag, fold codes, and the deterministic per-kind digests that stand in for a
 * folded block. Nothing here depends on anything but its arguments: the same block and code always
 * give the same bytes.
 */
import { riskLines } from "./policy/risk-lexicon.ts";
import { clip, estTokens, firstLine, lineCount } from "./tokens.ts";

/** Length of a fold code: 8 base36 characters (36^8 ≈ 2.8e12 codes). */
export const CODE_LENGTH = 8;
/** Length of codes written by earlier releases; still accepted by the parser. */
export const LEGACY_CODE_LENGTH = 6;

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

const TAG_PATTERN = /\{#([0-9a-z]{6}|[0-9a-z]{8}) FOLDED\}[ \t]*/gi;
/** A bare or `#` code, or the whole tag with both braces: a half tag is not a code. */
const CODE_INPUT = /^(?:#?([0-9a-z]{8}|[0-9a-z]{6})|\{\s*#([0-9a-z]{8}|[0-9a-z]{6})\s+FOLDED\s*\})$/i;

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

/** Tag-shaped text in any spacing and case, as a code parser would still accept it. */
const TAG_SHAPE = /\{\s*#([0-9a-z]{8}|[0-9a-z]{6})\s+FOLDED\s*\}/gi;

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
	argFirstLineChars: 80,
} as const;

/** What a tool-result digest is made from. */
export interface ToolResultDigestInput {
	code: string;
	toolName: string;
	text: string;
	isError: boolean;
}

function describeSize(text: string, isError: boolean): string {
	const lines = lineCount(text);
	const shape = isError ? `error, ${lines} line${lines === 1 ? "" : "s"}` : lines === 0 ? "empty" : `${lines} lines`;
	return `${shape}, ~${estTokens(text.length)} tokens`;
}

/** Renders the risk-line section of a digest: verbatim lines, bounded, with a count of the rest. */
function riskSection(code: string, text: string, isError = false): string {
	const risks = riskLines(text, isError);
	if (risks.length === 0) return "";
	const out: string[] = [];
	let used = 0;
	for (const risk of risks) {
		if (out.length >= DIGEST_LIMITS.riskLines) break;
		const line = `L${risk.line}: ${clip(risk.text, DIGEST_LIMITS.riskLineChars)}`;
		if (used + line.length > DIGEST_LIMITS.riskChars && out.length > 0) break;
		out.push(line);
		used += line.length + 1;
	}
	const left = risks.length - out.length;
	if (left > 0) {
		out.push(
			`… ${left} more risk line${left === 1 ? "" : "s"} left out; recall_folded codes=["${code}"] grep="…" shows them.`,
		);
	}
	return `\n${out.join("\n")}`;
}

/**
 * Digest of a tool result: tag, tool, line count or `error`, token estimate, the first non-empty
 * line, then its risk lines verbatim (errors before stack frames), bounded.
 */
export function toolResultDigest(input: ToolResultDigestInput): string {
	const head = clip(firstLine(input.text), DIGEST_LIMITS.firstLineChars);
	const first = head ? ` First line: ${head}` : "";
	const body = `${input.toolName}: ${describeSize(input.text, input.isError)}.${first}${riskSection(input.code, input.text, input.isError)}`;
	return `${foldTag(input.code)} ${quoteTags(body)}`;
}

/** Digest of a block whose bytes equal an already-folded block: a pointer to the first one. */
export function duplicateDigest(code: string, label: string, text: string, originalCode: string): string {
	return `${foldTag(code)} ${quoteTags(label)}: identical to ${foldTag(originalCode)}, ~${estTokens(text.length)} tokens.`;
}

/** One-line digest of an unsigned thinking block. */
export function thinkingDigest(code: string, text: string): string {
	const head = clip(firstLine(text), DIGEST_LIMITS.firstLineChars);
	return `${foldTag(code)} thinking: ${lineCount(text)} lines, ~${estTokens(text.length)} tokens.${head ? ` ${quoteTags(head)}` : ""}`;
}

/** Digest string standing in for one large string argument of a tool call. */
export function argDigest(code: string, value: string): string {
	const head = clip(firstLine(value), DIGEST_LIMITS.argFirstLineChars);
	return `${foldTag(code)} ${value.length} chars, ${lineCount(value)} lines${head ? `: ${quoteTags(head)}` : ""}`;
}

/** A string argument at least this long is "large" and may be folded. */
export const LARGE_ARG_CHARS = 512;

/**
 * Copy of a tool call's arguments with every large string leaf (at any depth) replaced by its
 * digest; keys, small values and structure are untouched. Returns null if nothing is large.
 */
export function foldArgs(code: string, args: unknown): Record<string, unknown> | null {
	let changed = false;
	const walk = (value: unknown): unknown => {
		if (typeof value === "string") {
			if (value.length < LARGE_ARG_CHARS) return value;
			changed = true;
			return argDigest(code, value);
		}
		if (Array.isArray(value)) return value.map(walk);
		if (value && typeof value === "object") {
			const out: Record<string, unknown> = {};
			for (const [key, inner] of Object.entries(value)) out[key] = walk(inner);
			return out;
		}
		return value;
	};
	if (!args || typeof args !== "object" || Array.isArray(args)) return null;
	const folded = walk(args) as Record<string, unknown>;
	return changed ? folded : null;
}
