/**
 * The seed index: one small, deterministic record per fold event or compaction, holding the facts a
 * later reader (the compaction summary, a handoff seed) needs after the blocks left live history:
 * files touched, commands run, verbatim error lines, exact identifiers, user intents and the spans
 * folded. Records are plain JSON, one per line in `seed-index.jsonl`; the reader here is tolerant of
 * unknown fields, newer versions, malformed lines and a last line cut mid-write.
 *
 * Schema (version 1), one JSON object per line:
 * - `{ v, kind: "fold" | "compaction", seq, files, commands, errors, identifiers, intents, spans, dropped? }`
 *   (see SeedRecord for each field);
 * - `{ v, kind: "retraction", seq, reason, target? }`: cancels the record of kind `target` (default
 *   "compaction") and the same `seq`
 *   written before it (a compaction Pi reported as failed).
 * Writers only ever append. Readers ignore fields they do not know and read the known fields of
 * records with a higher `v`.
 */
import { type Block, linearize, type MessageLike } from "../block.ts";
import { foldCode } from "../digest.ts";
import type { FoldRecord } from "../fold-registry.ts";
import { riskLines } from "../policy/risk-lexicon.ts";
import { blockCost, clip, firstLine, safeSlice } from "../tokens.ts";
import { isLegacyIndexKind, readLegacyLine } from "./legacy-seed-index.ts";

/** Schema version written by this module. */
export const SEED_INDEX_VERSION = 1;

/** A file a file tool touched: the path exactly as the tool received it. */
export interface SeedFile {
	path: string;
	/** Names of the tools that touched it, sorted, unique. */
	tools: string[];
	/** Turn of the first call that named it. */
	turn: number;
}

/** A shell command: a `bash` tool call, or a user `!` command (bashExecution). */
export interface SeedCommand {
	/** The command verbatim, or its head followed by a clip marker when very long. */
	command: string;
	turn: number;
	/** Fold code of the block holding its output, when that block can carry a fold record. */
	code?: string;
	/** The result was an error (tool result `isError`, or a non-zero exit of a user command). */
	error?: boolean;
}

/** One verbatim error line of a tool result or a user command's output. */
export interface SeedError {
	/** The line verbatim (clipped with `…` only when very long). */
	line: string;
	turn: number;
	/** Fold code of the block it came from, when that block can carry a fold record. */
	code?: string;
	/** Tool whose result held it; absent for a user `!` command. */
	tool?: string;
}

/** The first non-empty line of a user message. */
export interface SeedIntent {
	turn: number;
	text: string;
}

/** A span (block) covered by a fold record. */
export interface SeedSpan {
	id: string;
	code: string;
	kind: string;
	tool?: string;
	turn: number;
	/** Characters of the block text at fold time. */
	chars: number;
	tokens: number;
	sha256?: string;
}

/** One seed-index record: what a fold event or a compaction took out of live history. */
export interface SeedRecord {
	/** Schema version the writer used (SEED_INDEX_VERSION when written by this module). */
	v: number;
	kind: "fold" | "compaction";
	/** The fold event's layer sequence number, or the compaction's sequence number. */
	seq: number;
	files: SeedFile[];
	commands: SeedCommand[];
	errors: SeedError[];
	/** Exact identifiers (hashes, UUIDs, versions, long numbers, code symbols), first occurrence first. */
	identifiers: string[];
	intents: SeedIntent[];
	spans: SeedSpan[];
	/** How many entries each capped list left out, by list name; absent when nothing was left out. */
	dropped?: Record<string, number>;
}

/**
 * A retraction: cancels the records of kind `target` (absent: "compaction") with the same `seq`
 * written before it: a compaction Pi reported as failed, or a fold event rejected after its record
 * was written.
 */
export interface SeedRetraction {
	v: number;
	kind: "retraction";
	seq: number;
	reason: string;
	target?: "fold" | "compaction";
}

/** Bounds that keep a record small whatever the session's length. */
export interface SeedCaps {
	files: number;
	commands: number;
	/** A longer command keeps this many characters and a clip marker. */
	commandChars: number;
	errors: number;
	/** At most this many error lines per block, so one noisy output cannot fill the list. */
	errorsPerBlock: number;
	errorChars: number;
	identifiers: number;
	/** Longer candidate identifiers are noise (encoded blobs), never kept. */
	identifierChars: number;
	intents: number;
	intentChars: number;
	spans: number;
}

/** The shipped caps. */
export const SEED_CAPS: Readonly<SeedCaps> = Object.freeze({
	files: 200,
	commands: 200,
	commandChars: 500,
	errors: 100,
	errorsPerBlock: 20,
	errorChars: 400,
	identifiers: 300,
	identifierChars: 96,
	intents: 100,
	intentChars: 300,
	spans: 500,
});

/** Tools whose `path` / `file_path` argument names a file or directory. */
const FILE_TOOLS = new Set(["read", "write", "edit", "ls", "grep", "find"]);

/**
 * Tools whose successful output is file content or a listing: lines there that mention "error" are
 * the file's text, not failure signals, so only their error results contribute error lines.
 */
const CONTENT_TOOLS = new Set(["read", "grep", "find", "ls"]);

/** Order of the `dropped` keys, fixed so the JSON bytes are deterministic. */
const LISTS = ["files", "commands", "errors", "identifiers", "intents", "spans"] as const;
type ListName = (typeof LISTS)[number];

/** What extractSeedRecord reads. */
export interface SeedInput {
	kind: "fold" | "compaction";
	seq: number;
	/**
	 * The messages in scope: for a fold event the whole array the pass saw, for a compaction the
	 * messages being compacted (`messagesToSummarize` followed by `turnPrefixMessages`). Files and
	 * intents come from all of them.
	 */
	messages: readonly MessageLike[];
	/** Fold records of the spans this event covers (their codes win over computed ones). */
	spans: readonly FoldRecord[];
	/**
	 * Block ids (as linearize gives them) whose content is mined for commands, error lines and
	 * identifiers. Absent means every block, which is what a compaction wants; a fold event passes
	 * the ids it folds. A bash command is in scope when its call or its result is.
	 */
	scope?: ReadonlySet<string>;
	/** Overrides of SEED_CAPS (tests use small ones). */
	caps?: Partial<SeedCaps>;
	/** User messages before `messages` (removed by compaction), so turns are session-absolute. */
	turnBase?: number;
}

/**
 * Keeps at most `cap` items: the first half and the last half, since a session's opening states
 * its task and its end holds the live state. `dropped` is how many were left out.
 */
function keepEnds<T>(items: T[], cap: number): { kept: T[]; dropped: number } {
	const limit = Math.max(0, Math.floor(cap));
	if (items.length <= limit) return { kept: items, dropped: 0 };
	const head = Math.ceil(limit / 2);
	const tail = limit - head;
	return {
		kept: items.slice(0, head).concat(tail > 0 ? items.slice(items.length - tail) : []),
		dropped: items.length - limit,
	};
}

/** Clips a long command, saying how much was cut. */
function clipCommand(command: string, max: number): string {
	if (command.length <= max) return command;
	const head = safeSlice(command, max);
	return `${head}… [clipped, ${command.length - head.length} more chars]`;
}

function callPart(messages: readonly MessageLike[], block: Block): Record<string, unknown> | undefined {
	const content = messages[block.msg]?.content;
	if (!Array.isArray(content)) return undefined;
	const part = content[block.part];
	return part && typeof part === "object" ? (part as Record<string, unknown>) : undefined;
}

function callArgs(messages: readonly MessageLike[], block: Block): Record<string, unknown> | undefined {
	const args = callPart(messages, block)?.arguments;
	return args && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
}

function nonEmpty(value: unknown): string | undefined {
	return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Every string leaf of a value, depth first, in key order. */
function stringLeaves(value: unknown, out: string[]): string[] {
	if (typeof value === "string") out.push(value);
	else if (Array.isArray(value)) for (const inner of value) stringLeaves(inner, out);
	else if (value && typeof value === "object") for (const inner of Object.values(value)) stringLeaves(inner, out);
	return out;
}

/**
 * Candidate identifiers, one alternative per class, tried left to right at each position:
 * UUIDs, versions, hex hashes (7-64 lowercase hex chars holding a digit and a letter), long
 * numbers (6+ digits), dotted module paths (3+ segments), then plain words that are classified as
 * code symbols afterwards.
 */
const IDENTIFIER_PATTERN = new RegExp(
	[
		"(?<uuid>(?<![\\w$-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\\w$-]))",
		"(?<version>(?<![\\w.$])v?\\d+\\.\\d+\\.\\d+(?:-[0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*)?(?:\\+[0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*)?(?![\\w$]|\\.\\d))",
		"(?<hex>(?<![\\w$\\\\])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\\d)[0-9a-f]{7,64}(?![\\w$]))",
		"(?<number>(?<![\\w.$])\\d{6,}(?![\\w$]|\\.\\d))",
		"(?<dotted>(?<![\\w$.\\\\-])[A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*){2,}(?![\\w$]|\\.[A-Za-z_$]))",
		"(?<word>(?<![\\w$\\\\])[A-Za-z_$][\\w$]*)",
	].join("|"),
	"g",
);

/** camelCase / PascalCase with an inner capital (a lowercase letter, maybe digits, then a capital). */
const INNER_CAPITAL = /[a-z][0-9]*[A-Z]/;
/** snake_case: an underscore between two letters or digits. */
const INNER_UNDERSCORE = /[A-Za-z0-9]_+[A-Za-z0-9]/;

/** An identifier found in a text; `exact` marks hashes, UUIDs, versions and long numbers. */
interface Found {
	text: string;
	exact: boolean;
}

function scanIdentifiers(text: string, maxChars: number, out: Found[]): void {
	for (const match of text.matchAll(IDENTIFIER_PATTERN)) {
		const groups = match.groups ?? {};
		const value = match[0];
		if (value.length > maxChars) continue;
		if (groups.uuid || groups.version || groups.hex || groups.number) out.push({ text: value, exact: true });
		else if (groups.dotted) out.push({ text: value, exact: false });
		else if (value.length >= 3 && (INNER_CAPITAL.test(value) || INNER_UNDERSCORE.test(value))) {
			out.push({ text: value, exact: false });
		}
	}
}

/**
 * The exact identifiers of `text` in first-occurrence order, deduplicated: git-style hex hashes,
 * UUIDs, versions (`1.2.3`, `v1.2.3-beta.1`), numbers of 6+ digits, and code symbols (camelCase or
 * PascalCase with an inner capital, snake_case, dotted paths of 3+ segments).
 */
export function identifiersIn(text: string, maxChars: number = SEED_CAPS.identifierChars): string[] {
	const found: Found[] = [];
	scanIdentifiers(text, maxChars, found);
	return [...new Set(found.map((f) => f.text))];
}

/**
 * Picks at most `cap` identifiers: exact ones (hashes, UUIDs, versions, numbers) before code
 * symbols, each class in first-occurrence order; the result is in first-occurrence order.
 */
function selectIdentifiers(found: readonly Found[], cap: number): { kept: string[]; dropped: number } {
	const first = new Map<string, { index: number; exact: boolean }>();
	for (const f of found) {
		if (!first.has(f.text)) first.set(f.text, { index: first.size, exact: f.exact });
	}
	const all = [...first.entries()];
	if (all.length <= cap) return { kept: all.map(([text]) => text), dropped: 0 };
	const ranked = all.filter(([, f]) => f.exact).concat(all.filter(([, f]) => !f.exact));
	const chosen = ranked.slice(0, Math.max(0, cap)).sort((a, b) => a[1].index - b[1].index);
	return { kept: chosen.map(([text]) => text), dropped: all.length - chosen.length };
}

/** The text of a block that identifiers are mined from (string arguments, not their JSON). */
function minedText(messages: readonly MessageLike[], block: Block): string[] {
	if (block.kind === "toolArgs") return stringLeaves(callArgs(messages, block), []);
	return [block.text];
}

/** The verbatim error lines (not stack frames) of `text`, in text order. */
export function errorLinesIn(text: string): string[] {
	return riskLines(text)
		.filter((risk) => !risk.frame)
		.map((risk) => risk.text);
}

/** A span with its keys in schema order and absent optional fields left out (stable JSON bytes). */
function makeSpan(f: SeedSpan): SeedSpan {
	return {
		id: f.id,
		code: f.code,
		kind: f.kind,
		...(f.tool === undefined ? {} : { tool: f.tool }),
		turn: f.turn,
		chars: f.chars,
		tokens: f.tokens,
		...(f.sha256 === undefined ? {} : { sha256: f.sha256 }),
	};
}

function setIf<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
	if (value !== undefined) target[key] = value;
}

/**
 * Extracts the seed-index record of one fold event or compaction. Pure and deterministic: the same
 * input gives a deep-equal record and the same JSON bytes. Block ids and turns are those of
 * `linearize`, codes those of `foldCode` (or the span's recorded code). Every list is capped (see
 * SEED_CAPS); `dropped` counts what each cap left out.
 */
export function extractSeedRecord(input: SeedInput): SeedRecord {
	const caps: SeedCaps = { ...SEED_CAPS, ...input.caps };
	const messages = input.messages;
	const blocks = linearize(messages, input.turnBase);
	const inScope = (id: string): boolean => input.scope === undefined || input.scope.has(id);
	const spanCodes = new Map<string, string>();
	for (const span of input.spans) if (!spanCodes.has(span.id)) spanCodes.set(span.id, span.code);
	const codeOf = (block: Block): string | undefined =>
		spanCodes.get(block.id) ?? (block.durable && block.foldable ? foldCode(block.id) : undefined);

	const results = new Map<string, Block>();
	for (const block of blocks) {
		if (block.kind === "toolResult" && block.toolCallId && !results.has(block.toolCallId)) {
			results.set(block.toolCallId, block);
		}
	}

	const files = new Map<string, { turn: number; tools: Set<string> }>();
	const commands: SeedCommand[] = [];
	const errors: SeedError[] = [];
	const seenErrors = new Set<string>();
	const found: Found[] = [];
	const intents: SeedIntent[] = [];
	const dropped: Record<ListName, number> = {
		files: 0,
		commands: 0,
		errors: 0,
		identifiers: 0,
		intents: 0,
		spans: 0,
	};

	const addErrors = (text: string, turn: number, code: string | undefined, tool: string | undefined): void => {
		let taken = 0;
		const over = new Set<string>();
		for (const raw of errorLinesIn(text)) {
			const line = clip(raw, caps.errorChars);
			if (seenErrors.has(line) || over.has(line)) continue;
			if (taken >= caps.errorsPerBlock) {
				over.add(line);
				dropped.errors++;
				continue;
			}
			seenErrors.add(line);
			taken++;
			const entry: SeedError = { line, turn };
			setIf(entry, "code", code);
			setIf(entry, "tool", tool);
			errors.push(entry);
		}
	};

	for (const block of blocks) {
		const message = messages[block.msg];
		if (block.kind === "user") {
			const text = firstLine(block.text);
			if (text) intents.push({ turn: block.turn, text: clip(text, caps.intentChars) });
		}
		if (block.kind === "toolArgs") {
			const name = block.toolName ?? "";
			const args = callArgs(messages, block);
			const path = nonEmpty(args?.path) ?? nonEmpty(args?.file_path);
			if (FILE_TOOLS.has(name) && path !== undefined) {
				const file = files.get(path);
				if (file) file.tools.add(name);
				else files.set(path, { turn: block.turn, tools: new Set([name]) });
			}
			const command = name === "bash" ? nonEmpty(args?.command) : undefined;
			const result = block.toolCallId ? results.get(block.toolCallId) : undefined;
			if (command !== undefined && (inScope(block.id) || (result !== undefined && inScope(result.id)))) {
				const entry: SeedCommand = { command: clipCommand(command, caps.commandChars), turn: block.turn };
				if (result) {
					setIf(entry, "code", codeOf(result));
					entry.error = result.isError === true;
				}
				commands.push(entry);
			}
		}
		if (!inScope(block.id)) continue;
		if (block.kind === "bashExecution" && message) {
			const command = nonEmpty(message.command);
			const exit = message.exitCode;
			if (command !== undefined) {
				const entry: SeedCommand = { command: clipCommand(command, caps.commandChars), turn: block.turn };
				setIf(entry, "code", codeOf(block));
				entry.error = typeof exit === "number" && exit !== 0;
				commands.push(entry);
			}
			addErrors(typeof message.output === "string" ? message.output : "", block.turn, codeOf(block), undefined);
		}
		if (block.kind === "toolResult") {
			const tool = block.toolName ?? "tool";
			if (block.isError === true || !CONTENT_TOOLS.has(tool)) addErrors(block.text, block.turn, codeOf(block), tool);
		}
		for (const text of minedText(messages, block)) scanIdentifiers(text, caps.identifierChars, found);
	}

	const byId = new Map(blocks.map((b) => [b.id, b] as const));
	const spans: SeedSpan[] = [];
	const seenSpans = new Set<string>();
	for (const record of input.spans) {
		if (seenSpans.has(record.id)) continue;
		seenSpans.add(record.id);
		const block = byId.get(record.id);
		const chars = record.chars >= 0 ? record.chars : (block?.text.length ?? record.bytes ?? 0);
		spans.push(
			makeSpan({
				id: record.id,
				code: record.code,
				kind: record.kind ?? block?.kind ?? "other",
				tool: record.tool ?? block?.toolName,
				turn: record.turn ?? block?.turn ?? 0,
				chars,
				tokens: block && block.text.length === chars ? block.tokens : blockCost(chars),
				sha256: record.sha256,
			}),
		);
	}

	const fileList: SeedFile[] = [...files.entries()].map(([path, f]) => ({
		path,
		tools: [...f.tools].sort(),
		turn: f.turn,
	}));
	const cappedFiles = keepEnds(fileList, caps.files);
	const cappedCommands = keepEnds(commands, caps.commands);
	const cappedErrors = keepEnds(errors, caps.errors);
	const cappedIdentifiers = selectIdentifiers(found, caps.identifiers);
	const cappedIntents = keepEnds(intents, caps.intents);
	const cappedSpans = keepEnds(spans, caps.spans);
	dropped.files += cappedFiles.dropped;
	dropped.commands += cappedCommands.dropped;
	dropped.errors += cappedErrors.dropped;
	dropped.identifiers += cappedIdentifiers.dropped;
	dropped.intents += cappedIntents.dropped;
	dropped.spans += cappedSpans.dropped;

	const record: SeedRecord = {
		v: SEED_INDEX_VERSION,
		kind: input.kind,
		seq: input.seq,
		files: cappedFiles.kept,
		commands: cappedCommands.kept,
		errors: cappedErrors.kept,
		identifiers: cappedIdentifiers.kept,
		intents: cappedIntents.kept,
		spans: cappedSpans.kept,
	};
	setIf(record, "dropped", droppedOf(dropped));
	return record;
}

function droppedOf(counts: Partial<Record<string, number>>): Record<string, number> | undefined {
	const out: Record<string, number> = {};
	for (const name of LISTS) {
		const n = counts[name] ?? 0;
		if (n > 0) out[name] = n;
	}
	return Object.keys(out).length > 0 ? out : undefined;
}

/** Several records merged: every list unioned, deduplicated, in order of first appearance. */
export interface SeedSummary {
	/** The records merged, in the order given. */
	sources: { kind: SeedRecord["kind"]; seq: number }[];
	files: SeedFile[];
	commands: SeedCommand[];
	errors: SeedError[];
	identifiers: string[];
	intents: SeedIntent[];
	spans: SeedSpan[];
	/** Left out by the records' own caps plus the merge's caps; absent when nothing was. */
	dropped?: Record<string, number>;
}

/**
 * Unions several records (in the order given, e.g. the index as read) into one summary: files by
 * path (first turn kept, tools merged), commands by command, turn and code, error lines by text,
 * identifiers by value, intents by turn and text, spans by id; each list in order of first
 * appearance and capped again like a record. Deterministic.
 */
export function summarizeIndex(records: readonly SeedRecord[], caps: Partial<SeedCaps> = {}): SeedSummary {
	const limits: SeedCaps = { ...SEED_CAPS, ...caps };
	const files = new Map<string, { turn: number; tools: Set<string> }>();
	const commands = new Map<string, SeedCommand>();
	const errors = new Map<string, SeedError>();
	const identifiers = new Set<string>();
	const intents = new Map<string, SeedIntent>();
	const spans = new Map<string, SeedSpan>();
	const dropped: Record<string, number> = {};
	for (const record of records) {
		for (const file of record.files) {
			const known = files.get(file.path);
			if (known) for (const tool of file.tools) known.tools.add(tool);
			else files.set(file.path, { turn: file.turn, tools: new Set(file.tools) });
		}
		for (const command of record.commands) {
			const key = `${command.command}\u0000${command.turn}\u0000${command.code ?? ""}`;
			if (!commands.has(key)) commands.set(key, command);
		}
		for (const error of record.errors) if (!errors.has(error.line)) errors.set(error.line, error);
		for (const identifier of record.identifiers) identifiers.add(identifier);
		for (const intent of record.intents) {
			const key = `${intent.turn}\u0000${intent.text}`;
			if (!intents.has(key)) intents.set(key, intent);
		}
		for (const span of record.spans) if (!spans.has(span.id)) spans.set(span.id, span);
		for (const name of LISTS) dropped[name] = (dropped[name] ?? 0) + (record.dropped?.[name] ?? 0);
	}
	const fileList = [...files.entries()].map(([path, f]) => ({ path, tools: [...f.tools].sort(), turn: f.turn }));
	const capped = {
		files: keepEnds(fileList, limits.files),
		commands: keepEnds([...commands.values()], limits.commands),
		errors: keepEnds([...errors.values()], limits.errors),
		identifiers: keepEnds([...identifiers], limits.identifiers),
		intents: keepEnds([...intents.values()], limits.intents),
		spans: keepEnds([...spans.values()], limits.spans),
	};
	for (const name of LISTS) dropped[name] += capped[name].dropped;
	const summary: SeedSummary = {
		sources: records.map((r) => ({ kind: r.kind, seq: r.seq })),
		files: capped.files.kept,
		commands: capped.commands.kept,
		errors: capped.errors.kept,
		identifiers: capped.identifiers.kept,
		intents: capped.intents.kept,
		spans: capped.spans.kept,
	};
	setIf(summary, "dropped", droppedOf(dropped));
	return summary;
}

/** A retraction record for the compaction (or, with `target`, the fold event) numbered `seq`. */
export function retraction(seq: number, reason: string, target?: "fold" | "compaction"): SeedRetraction {
	const record: SeedRetraction = { v: SEED_INDEX_VERSION, kind: "retraction", seq, reason };
	if (target === "fold") record.target = "fold";
	return record;
}

/** One record (or retraction) as one JSON line, newline included, ready to append. */
export function serializeRecord(record: SeedRecord | SeedRetraction): string {
	return `${JSON.stringify(record)}\n`;
}

/** What parseSeedIndex read. */
export interface ParsedSeedIndex {
	/** Fold and compaction records in file order, retracted compactions removed. */
	records: SeedRecord[];
	/** Retraction records in file order. */
	retracted: SeedRetraction[];
	/** Lines that were not a readable record: malformed, truncated, unknown kind, missing fields. */
	skipped: number;
	/** Records (and retractions) read from a newer schema version, by the fields this version knows. */
	newer: number;
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
	return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function asString(value: unknown): string | undefined {
	return typeof value === "string" ? value : undefined;
}

function objects(value: unknown): Obj[] {
	return Array.isArray(value) ? value.filter(isObj) : [];
}

function readFiles(value: unknown): SeedFile[] {
	const out: SeedFile[] = [];
	for (const entry of objects(value)) {
		const path = asString(entry.path);
		if (path === undefined) continue;
		const tools = Array.isArray(entry.tools) ? entry.tools.filter((t): t is string => typeof t === "string") : [];
		out.push({ path, tools, turn: num(entry.turn) ?? 0 });
	}
	return out;
}

function readCommands(value: unknown): SeedCommand[] {
	const out: SeedCommand[] = [];
	for (const entry of objects(value)) {
		const command = asString(entry.command);
		if (command === undefined) continue;
		const item: SeedCommand = { command, turn: num(entry.turn) ?? 0 };
		setIf(item, "code", asString(entry.code));
		if (typeof entry.error === "boolean") item.error = entry.error;
		out.push(item);
	}
	return out;
}

function readErrors(value: unknown): SeedError[] {
	const out: SeedError[] = [];
	for (const entry of objects(value)) {
		const line = asString(entry.line);
		if (line === undefined) continue;
		const item: SeedError = { line, turn: num(entry.turn) ?? 0 };
		setIf(item, "code", asString(entry.code));
		setIf(item, "tool", asString(entry.tool));
		out.push(item);
	}
	return out;
}

function readIntents(value: unknown): SeedIntent[] {
	const out: SeedIntent[] = [];
	for (const entry of objects(value)) {
		const t = asString(entry.text);
		if (t !== undefined) out.push({ turn: num(entry.turn) ?? 0, text: t });
	}
	return out;
}

function readSpans(value: unknown): SeedSpan[] {
	const out: SeedSpan[] = [];
	for (const entry of objects(value)) {
		const id = asString(entry.id);
		const code = asString(entry.code);
		if (id === undefined || code === undefined) continue;
		const chars = num(entry.chars) ?? 0;
		out.push(
			makeSpan({
				id,
				code,
				kind: asString(entry.kind) ?? "other",
				tool: asString(entry.tool),
				turn: num(entry.turn) ?? 0,
				chars,
				tokens: num(entry.tokens) ?? blockCost(chars),
				sha256: asString(entry.sha256),
			}),
		);
	}
	return out;
}

function readDropped(value: unknown): Record<string, number> | undefined {
	if (!isObj(value)) return undefined;
	const counts: Record<string, number> = {};
	for (const name of LISTS) {
		const n = num(value[name]);
		if (n !== undefined && n > 0) counts[name] = n;
	}
	return droppedOf(counts);
}

/**
 * Reads a seed-index JSONL text without throwing. Blank lines are ignored; a line that is not a
 * JSON object with a positive integer `v`, a known `kind` and a numeric `seq` (a malformed line, a
 * last line cut mid-write) is counted in `skipped`. Unknown fields are ignored; a record with a
 * newer `v` is read by the fields this version knows and counted in `newer`. A retraction removes
 * every record of its target kind (compaction unless it says fold) and `seq` that precedes it.
 * Lines context-fold 0.5.1 wrote are read too (see legacy-seed-index.ts) by 0.5.1's own rules:
 * among them the latest record per `seq` wins, and a `fold-retract` voids the one before it.
 */
export function parseSeedIndex(input: string): ParsedSeedIndex {
	const records: SeedRecord[] = [];
	const retracted: SeedRetraction[] = [];
	const legacy = new Map<number, SeedRecord>();
	const dropLegacy = (seq: number): void => {
		const earlier = legacy.get(seq);
		if (earlier) records.splice(records.indexOf(earlier), 1);
		legacy.delete(seq);
	};
	let skipped = 0;
	let newer = 0;
	const lines = input.replace(/^\uFEFF/, "").split("\n");
	for (const raw of lines) {
		const line = raw.trim();
		if (!line) continue;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch {
			skipped++;
			continue;
		}
		if (isObj(value) && isLegacyIndexKind(value.kind)) {
			const read = readLegacyLine(value);
			if (!read) skipped++;
			else {
				dropLegacy(read.kind === "retract" ? read.seq : read.record.seq);
				if (read.kind === "record") {
					legacy.set(read.record.seq, read.record);
					records.push(read.record);
				}
			}
			continue;
		}
		const v = isObj(value) ? num(value.v) : undefined;
		const seq = isObj(value) ? num(value.seq) : undefined;
		if (!isObj(value) || v === undefined || !Number.isInteger(v) || v < 1 || seq === undefined) {
			skipped++;
			continue;
		}
		const kind = value.kind;
		if (kind === "retraction") {
			const target = value.target === "fold" ? "fold" : "compaction";
			const item: SeedRetraction = { v, kind, seq, reason: asString(value.reason) ?? "" };
			if (target === "fold") item.target = "fold";
			retracted.push(item);
			for (let i = records.length - 1; i >= 0; i--) {
				if (records[i].kind === target && records[i].seq === seq) records.splice(i, 1);
			}
		} else if (kind === "fold" || kind === "compaction") {
			const record: SeedRecord = {
				v,
				kind,
				seq,
				files: readFiles(value.files),
				commands: readCommands(value.commands),
				errors: readErrors(value.errors),
				identifiers: Array.isArray(value.identifiers)
					? value.identifiers.filter((i): i is string => typeof i === "string")
					: [],
				intents: readIntents(value.intents),
				spans: readSpans(value.spans),
			};
			setIf(record, "dropped", readDropped(value.dropped));
			records.push(record);
		} else {
			skipped++;
			continue;
		}
		if (v > SEED_INDEX_VERSION) newer++;
	}
	return { records, retracted, skipped, newer };
}
