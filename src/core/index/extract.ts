/**
 * Extraction of seed-index records: the files, commands, verbatim error lines, exact identifiers,
 * user intents and spans of one fold event or compaction, deterministic and capped.
 */
import { type Block, linearize, type MessageLike, resultAfter } from "../block.ts";
import { foldCode } from "../digest.ts";
import { eachRun, isWord } from "../distinctive.ts";
import type { FoldRecord } from "../fold-registry.ts";
import { contentKey } from "../lower.ts";
import { SHELL_TOOLS } from "../output-notices.ts";
import { clipToError, ERRNO_PATTERN, isErrorLine, riskLines, uncoloured } from "../policy/risk-lexicon.ts";
import { handoffSeedIn, withoutSeedHead } from "../summary.ts";
import { blockCost, clip, firstLine, safeSlice } from "../tokens.ts";
import {
	droppedOf,
	keepEnds,
	type ListName,
	makeSpan,
	SEED_CAPS,
	SEED_INDEX_VERSION,
	type SeedCaps,
	type SeedCommand,
	type SeedError,
	type SeedFile,
	type SeedIntent,
	type SeedRecord,
	type SeedSpan,
	setIf,
} from "./seed-index.ts";

/** Tools whose `path` / `file_path` argument names a file or directory. */
const FILE_TOOLS = new Set(["read", "write", "edit", "ls", "grep", "find"]);

/**
 * Tools whose successful output is file content or a listing: lines there that mention "error" are
 * the file's text, not failure signals, so only their error results contribute error lines.
 */
const CONTENT_TOOLS = new Set(["read", "grep", "find", "ls"]);

/**
 * context-fold's own read-back tools: a result copies blocks mined where they first were (a recall of a
 * failed command is no new failure, in no later turn), so neither a call nor a result of theirs is mined.
 */
const READ_BACK_TOOLS = new Set(["recall_folded", "unfold"]);

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
	/**
	 * Tag blocks with the spans' codes only: a handoff seed points into the parent session, where a
	 * block that never folded has no record and its computed code would not resolve. Absent, a
	 * foldable block without a span gets the code it folds under (a fold event's or compaction's own).
	 */
	recordedOnly?: boolean;
	/** Overrides of SEED_CAPS (tests use small ones). */
	caps?: Partial<SeedCaps>;
	/** User messages before `messages` (removed by compaction), so turns are session-absolute. */
	turnBase?: number;
	/**
	 * `messages` already linearized with `turnBase` (a fold event passes its turn's blocks, so the
	 * turn is linearized once); absent, they are linearized here.
	 */
	blocks?: readonly Block[];
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
 * Characters an identifier may hold: letters and digits of any script (a name in `größeBerechnen`,
 * `Привет_Мир` or `user_名前_id` is whole, never cut at its first non-ASCII letter), combining marks,
 * `_` and `$`. Also what bounds every alternative below, so none starts or ends inside such a name.
 */
const ID = "\\p{L}\\p{M}\\p{N}_$";

/**
 * Candidate identifiers, one alternative per class, tried left to right at each position:
 * UUIDs, versions, hex hashes (7-64 lowercase hex chars holding a digit and a letter), long
 * numbers (6+ digits), dotted module paths (3+ segments), then plain words that are classified as
 * code symbols afterwards.
 */
const IDENTIFIER_PATTERN = new RegExp(
	[
		`(?<uuid>(?<![${ID}-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![${ID}-]))`,
		`(?<version>(?<![${ID}.])v?\\d+\\.\\d+\\.\\d+(?:-[0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*)?(?:\\+[0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*)?(?![${ID}]|\\.\\d))`,
		`(?<hex>(?<![${ID}\\\\])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\\d)[0-9a-f]{7,64}(?![${ID}]))`,
		`(?<number>(?<![${ID}.])\\d{6,}(?![${ID}]|\\.\\d))`,
		`(?<dotted>(?<![${ID}.\\\\-])[\\p{L}_$][${ID}]*(?:\\.[\\p{L}_$][${ID}]*){2,}(?![${ID}]|\\.[\\p{L}_$]))`,
		`(?<word>(?<![${ID}\\\\])[\\p{L}_$][${ID}]*)`,
	].join("|"),
	"gu",
);

/** camelCase / PascalCase with an inner capital (a lowercase letter, maybe digits, then a capital), in any script. */
const INNER_CAPITAL = /\p{Ll}\p{N}*\p{Lu}/u;
/** snake_case: an underscore between two letters or digits. */
const INNER_UNDERSCORE = /[\p{L}\p{N}]_+[\p{L}\p{N}]/u;

/** An identifier found in a text; `exact` marks hashes, UUIDs, versions and long numbers. */
interface Found {
	text: string;
	exact: boolean;
}

/**
 * The longest run of characters an identifier may hold or sit beside (word characters, `.`, `+`, `-`,
 * `\\`) that is scanned for identifiers. A longer one (a minified bundle, a base64 blob, a log line of
 * one number) holds none worth a seed, and the scan's backtracking over it runs out of stack.
 */
const LONGEST_RUN = 10_000;

/**
 * True for a character an identifier may hold or sit beside (see LONGEST_RUN), by UTF-16 code: any
 * outside ASCII among them, as a letter of another script may be part of a name.
 */
function inRun(c: number): boolean {
	return isWord(c) || c === 46 || c === 43 || c === 45 || c === 92 || c > 127;
}

/**
 * The pieces of `text` to scan for identifiers: the text itself, or, when it has a run longer than
 * LONGEST_RUN, the text cut at that run's ends with the run left out. Every other character bounds
 * each alternative and its look-arounds the way the end of a text does, so what the pieces yield is
 * what the whole text yields outside the long runs.
 */
function scannable(text: string): string[] {
	const pieces: string[] = [];
	let from = 0;
	eachRun(text, inRun, (start, end) => {
		if (end - start <= LONGEST_RUN) return;
		pieces.push(text.slice(from, start));
		from = end;
	});
	if (from === 0) return [text];
	pieces.push(text.slice(from));
	return pieces;
}

function scanIdentifiers(text: string, maxChars: number, out: Found[]): void {
	for (const piece of scannable(text)) scanPiece(piece, maxChars, out);
}

function scanPiece(text: string, maxChars: number, out: Found[]): void {
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
 * PascalCase with an inner capital, snake_case, dotted paths of 3+ segments). The list form of what
 * extraction scans a record's text for, for tests and the quality eval.
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
	// A seed pasted as the prompt: its head names the parent's file and the tools, no identifier of the work.
	return [block.kind === "user" ? withoutSeedHead(block.text) : block.text];
}

/** Words that say no failure happened: "no errors", "0 failed", "without warnings". */
const NO_FAILURE = /\b(?:no|0|zero|without)\s+(?:errors?|failures?|failed|failing|warnings?|issues?|problems?)\b/gi;

/**
 * Source code, not output: a comment, or a line that handles or raises an error (`} catch (error) {`,
 * `throw new Error(`, `except ValueError:`, `if err != nil {`, `console.error(`).
 */
const CODE_LINE =
	/^(?:\/\/|\/\*|\*\s|#\s)|\bcatch\s*\(|\}\s*catch\b|\bthrow\s+new\b|^except\b.*:$|\berr\s*!=\s*nil\b|\bconsole\.(?:error|warn)\(/;

/**
 * True when a risk line reports a failure, for a summary's error lines: not when it only says there
 * was none, and not when it is a line of code that handles errors (a file shown by `cat` or `sed`).
 * Digests keep every risk line; a summary's few error lines are for what went wrong.
 */
function reportsFailure(line: string): boolean {
	const trimmed = line.trim();
	if (CODE_LINE.test(trimmed)) return false;
	return isErrorLine(trimmed.replace(NO_FAILURE, ""));
}

/**
 * An error as a program prints one, labelled: `Error: …`, `[ERROR]`, `fatal: …`, `panic: …`, `npm ERR!`
 * and `npm error`, `"error": "…"` (JSON, not `"error": null`), `error TS2322`, `error[E0308]`, eslint's
 * `3:5  error  …`, a traceback's head, `panicked at`, make's `Error 1`, a count of failures
 * (`1 failed`), a test runner's ✖.
 */
const LABELLED =
	/\b(?:error|fatal|panic|failed|failure|exception)\b"?\s*[:\]](?!\s*(?:null|false|""|\[\]|\{\}|0)\s*[,}\]]?\s*$)|\bERR!|^\s*npm error\b|\btraceback \(most recent call last\)|\berror\s+TS\d+|\berror\[E\d+\]|^\s*\d+:\d+\s+error\b|\bpanicked at\b|\bError \d+\s*$|\b[1-9]\d* (?:failed|failing|errors?)\b|[✗✘✖✕❌]/i;
/**
 * The same, in the case programs print it: a named error or exception (`TypeError`,
 * `java.lang.NullPointerException`), FAIL, FAILED, ERROR or FATAL as a word (go's `--- FAIL:`, cargo's
 * `test result: FAILED`, a log's level), a line opening with `Error` (docker's `Error response from
 * daemon`, kubectl's `Error from server`), and the system's own messages (`No such file or directory`,
 * `Permission denied`, `command not found`).
 */
const LABELLED_AS_PRINTED =
	/\b[A-Z]\w*(?:Error|Exception)\b|\b(?:FAIL|FAILED|ERROR|FATAL)\b|^\s*Error\b|No such file or directory|Permission denied|command not found|Operation not permitted|Connection refused|Segmentation fault|core dumped/;

/**
 * The label of an error where the tools speak the user's language, as compilers and glibc print it
 * (gcc's `main.c:3:5: エラー: …`, `错误：`, `오류:`, `Fehler:`, `erreur :`, `ошибка:`, `erro:`,
 * `errore:`): the languages the risk lexicon knows, a colon (or a full-width one) after the word.
 */
const LABELLED_LOCALIZED = /(?:^|[^\p{L}])(?:fehler|erreur|errore|erro|ошибка|エラー|错误|錯誤|오류|에러)\s*[:：]/iu;

/** True when `line` reads as an error a program printed, labelled as one (see LABELLED), its colour codes aside. */
function labelledError(line: string): boolean {
	const plain = uncoloured(line);
	return (
		LABELLED.test(plain) ||
		LABELLED_AS_PRINTED.test(plain) ||
		LABELLED_LOCALIZED.test(plain) ||
		ERRNO_PATTERN.test(plain)
	);
}

/**
 * The verbatim error lines (not stack frames) of `text` that report a failure (see reportsFailure), in
 * text order. With `labelled`, for the output of a command or tool that succeeded, only those a
 * program labelled as errors (see labelledError): such output is often a file, a log or prose, whose
 * words alone say nothing failed (`git log`'s "Fix crash when…", a `.gitignore`'s `yarn-error.log*`,
 * "Ships cannot overlap").
 */
export function errorLinesIn(text: string, labelled = false): string[] {
	return riskLines(text)
		.filter((risk) => !risk.frame && reportsFailure(risk.text) && (!labelled || labelledError(risk.text)))
		.map((risk) => risk.text);
}

/** A file header of an `apply_patch` patch (Codex's): `*** Add File: p`, `*** Update File: p`, `*** Delete File: p`, `*** Move to: p`. */
const PATCH_FILE = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm;

/** The files a patch in the `apply_patch` format names, in order, each once; none for anything else. */
function patchedFiles(patch: unknown): string[] {
	if (typeof patch !== "string" || !patch.startsWith("*** Begin Patch")) return [];
	return [...new Set([...patch.matchAll(PATCH_FILE)].map((m) => m[1].trim()).filter((p) => p.length > 0))];
}

/** A line that opens a block of markup (`<environment_context>`): the block runs to its closing tag. */
const OPENING_TAG = /^<([A-Za-z][\w.:-]*)(?:\s[^>]*)?>$/;
/** A line of markup alone: a closing tag, or one element on one line (`<cwd>/repo</cwd>`). */
const TAG_LINE = /^<\/[^>]+>$|^<([A-Za-z][\w.:-]*)[^>]*>.*<\/\1>$/;

/** A handoff seed's goal line (see renderHandoff). */
const SEED_GOAL = /^Goal: (.+)$/m;

/**
 * What a user message asks, as one line: its first non-empty line that is not markup. Agents put
 * context ahead of the request in the user's message (Codex's `<environment_context>` block), so the
 * first line alone named that block and lost the request. The first non-empty line when every line
 * is markup. A handoff seed pasted as the prompt asks what the user wrote above it, or else what its
 * goal line says, not its heading.
 */
function intentLine(text: string): string {
	const seed = handoffSeedIn(text);
	if (seed !== undefined) {
		const above = text.slice(0, text.length - seed.length);
		if (above.trim()) return intentLine(above);
		const goal = SEED_GOAL.exec(seed);
		if (goal) return goal[0];
	}
	let closing: string | undefined;
	for (const raw of text.split("\n")) {
		const line = raw.trim();
		if (!line) continue;
		if (closing !== undefined) {
			if (line === closing) closing = undefined;
			continue;
		}
		const open = OPENING_TAG.exec(line);
		if (open) closing = `</${open[1]}>`;
		else if (!TAG_LINE.test(line)) return line;
	}
	return firstLine(text);
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
	const blocks = input.blocks ?? linearize(messages, input.turnBase);
	const inScope = (id: string): boolean => input.scope === undefined || input.scope.has(id);
	const spanOf = new Map<string, FoldRecord>();
	const spanByKey = new Map<string, FoldRecord>();
	for (const span of input.spans) {
		if (!spanOf.has(span.id)) spanOf.set(span.id, span);
		if (span.key !== undefined && !spanByKey.has(span.key)) spanByKey.set(span.key, span);
	}
	const codeOf = (block: Block): string | undefined => {
		const span = spanOf.get(block.id);
		if (!span) return !input.recordedOnly && block.durable && block.foldable ? foldCode(block.id) : undefined;
		if (span.key === undefined || block.kind !== "toolResult") return span.code;
		// A record of other bytes under this id (a provider that repeats call ids, whose first occurrence a
		// compaction removed, so this one took the plain id): the record of these bytes, or none.
		const key = contentKey(block.text);
		return span.key === key ? span.code : spanByKey.get(key)?.code;
	};

	const files = new Map<string, { turn: number; tools: Set<string> }>();
	const commands: SeedCommand[] = [];
	/** Error lines by their whole text, each at its newest occurrence, in the order of those. */
	const errors = new Map<string, SeedError>();
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

	/** Adds the error lines of `text`: of a result that `succeeded`, only those labelled as errors (see errorLinesIn). */
	const addErrors = (
		text: string,
		turn: number,
		code: string | undefined,
		tool: string | undefined,
		succeeded: boolean,
	): void => {
		const here = new Set<string>();
		for (const raw of errorLinesIn(text, succeeded)) {
			// Two long lines alike up to the cut are two errors: they are told apart whole.
			if (here.has(raw)) continue;
			here.add(raw);
			if (here.size > caps.errorsPerBlock) {
				dropped.errors++;
				continue;
			}
			const line = clipToError(raw, caps.errorChars);
			const entry: SeedError = { line, turn };
			setIf(entry, "code", code);
			setIf(entry, "tool", tool);
			// An error that came back is listed where it last appeared: it reads as still open, not as old.
			errors.delete(raw);
			errors.set(raw, entry);
		}
	};

	for (let at = 0; at < blocks.length; at++) {
		const block = blocks[at];
		const message = messages[block.msg];
		if (block.kind === "user") {
			const text = intentLine(block.text);
			// The images a user attached leave with the message: the summary says they were there.
			const attached = block.images > 0 ? `[${block.images} image${block.images === 1 ? "" : "s"} attached]` : "";
			const line = !attached
				? clip(text, caps.intentChars)
				: text
					? `${clip(text, caps.intentChars - attached.length - 1)} ${attached}`
					: attached;
			if (line) intents.push({ turn: block.turn, text: line });
		}
		if (block.kind === "toolArgs") {
			const name = block.toolName ?? "";
			const args = callArgs(messages, block);
			const path = nonEmpty(args?.path) ?? nonEmpty(args?.file_path);
			const paths = FILE_TOOLS.has(name) && path !== undefined ? [path] : patchedFiles(args?.input ?? args?.patch);
			for (const each of paths) {
				const file = files.get(each);
				if (file) file.tools.add(name);
				else files.set(each, { turn: block.turn, tools: new Set([name]) });
			}
			const command = SHELL_TOOLS.has(name) ? nonEmpty(args?.command) : undefined;
			const answer = resultAfter(blocks, at);
			const result = answer < 0 ? undefined : blocks[answer];
			if (command !== undefined && (inScope(block.id) || (result !== undefined && inScope(result.id)))) {
				const entry: SeedCommand = { command: clipCommand(command, caps.commandChars), turn: block.turn };
				if (result) {
					setIf(entry, "code", codeOf(result));
					entry.error = result.isError === true;
				}
				commands.push(entry);
			}
		}
		if (!inScope(block.id) || READ_BACK_TOOLS.has(block.toolName ?? "")) continue;
		if (block.kind === "bashExecution" && message) {
			const command = nonEmpty(message.command);
			const exit = message.exitCode;
			if (command !== undefined) {
				const entry: SeedCommand = { command: clipCommand(command, caps.commandChars), turn: block.turn };
				setIf(entry, "code", codeOf(block));
				entry.error = typeof exit === "number" && exit !== 0;
				commands.push(entry);
			}
			const output = typeof message.output === "string" ? message.output : "";
			addErrors(output, block.turn, codeOf(block), undefined, exit === 0);
		}
		if (block.kind === "toolResult") {
			const tool = block.toolName ?? "tool";
			const failed = block.isError === true;
			if (failed || !CONTENT_TOOLS.has(tool)) addErrors(block.text, block.turn, codeOf(block), tool, !failed);
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
	const cappedErrors = keepEnds([...errors.values()], caps.errors);
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
