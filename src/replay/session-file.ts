/**
 * One recorded Pi session file, read the way Pi reads it: its entries, the active branch (the last
 * entry is the leaf; `parentId` leads back to the root; a pre-v2 file, whose header names no later
 * version, is one branch in file order), and the message sequences the replays feed to context-fold:
 *
 * - `branchMessages`: every model-visible message of the active branch, root to leaf, as recorded: as
 *   if it had never been compacted (compaction entries are skipped, the messages they summarised
 *   stay), and without its context edits (an edit changes only the requests after it);
 * - `contextMessages`: what Pi sends at the leaf (its `buildSessionProjection`): after the latest
 *   compaction, the compaction summary, the kept messages from `firstKeptEntryId`, then the rest;
 * - `branchRequests`: the `context` event of every request the session made on the active branch
 *   (the context at each assistant message's parent), so compactions happen where they happened.
 *
 * System messages are left out everywhere, as Pi leaves them out of the `context` event. Abandoned
 * branches contribute nothing. A message's time is read in milliseconds, the replay's clock: a date
 * string as the time it names, a missing one as its entry's. Projected messages are cached per entry, so an entry keeps one
 * message object across requests (identity marks the unchanged prefix of consecutive requests).
 */
import { constants as bufferConstants } from "node:buffer";
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { timeOf } from "../adapters/pi/cache/telemetry.ts";
import type { MessageLike } from "../core/block.ts";
import { lastBranch } from "../core/session-branch.ts";

/** One line of a session file (the header or an entry), as parsed. */
export interface Entry {
	type?: string;
	id?: string;
	parentId?: string | null;
	timestamp?: string;
	[key: string]: unknown;
}

/** A parsed session file: its header line and its entries (every line but the header), in file order. */
export interface SessionEntries {
	header: Entry | undefined;
	entries: Entry[];
	/** Line numbers (1-based) of the lines that are not a JSON object: Pi skips them, and so does the replay. */
	unread: number[];
}

/** A session file that cannot be read as a Pi session: names the file and what is wrong. */
export class SessionFileError extends Error {
	/** What is wrong, without the file's name. */
	readonly problem: string;

	constructor(where: string, problem: string) {
		super(`${where}: ${problem}`);
		this.name = "SessionFileError";
		this.problem = problem;
	}
}

/**
 * Parses the text of a session file as Pi 1.6 loads one: a line that is not a JSON object (a torn
 * write, a bad escape) is skipped and its number kept in `unread`, and the header is the first line
 * that parses. Pi keeps any other JSON value but `null`, `0` and `""` as an entry, so one before the
 * header (a number, a list) leaves the file with none, as Pi then opens no session.
 */
export function parseSessionText(text: string): SessionEntries {
	let header: Entry | undefined;
	let valueFirst = false;
	const entries: Entry[] = [];
	const unread: number[] = [];
	text.split("\n").forEach((line, i) => {
		if (!line.trim()) return;
		let entry: unknown;
		try {
			entry = JSON.parse(line);
		} catch {
			unread.push(i + 1);
			return;
		}
		if (!entry || typeof entry !== "object" || Array.isArray(entry)) {
			if (entry && header === undefined && entries.length === 0) valueFirst = true;
			unread.push(i + 1);
			return;
		}
		const parsed = entry as Entry;
		if (parsed.type === "session" && header === undefined && entries.length === 0 && !valueFirst) header = parsed;
		else entries.push(parsed);
	});
	if (!isV2(header)) placeKeptEntries(header, entries);
	return { header, entries, unread };
}

/** True when `header` names format version 2 or later; else Pi reads the file as version 1. */
function isV2(header: Entry | undefined): boolean {
	return typeof header?.version === "number" && header.version >= 2;
}

/** A pre-v2 compaction's first kept entry, which its file names by position (firstKeptEntryIndex). */
const keptFrom = new WeakMap<Entry, Entry>();

/**
 * Links each compaction of a pre-v2 file to the entry its `firstKeptEntryIndex` names, as Pi's
 * migration turns the position into an id: a position among the file's parsed lines, the header
 * counted, that must not be the header.
 */
function placeKeptEntries(header: Entry | undefined, entries: readonly Entry[]): void {
	const lines = header ? [header, ...entries] : entries;
	for (const entry of entries) {
		const index = entry.firstKeptEntryIndex;
		if (entry.type !== "compaction" || typeof index !== "number") continue;
		const target = lines[index];
		if (target && target.type !== "session") keptFrom.set(entry, target);
	}
}

/**
 * Opens `path` for reading only if it is a regular file, or throws a SessionFileError. The open never
 * blocks (a FIFO would wait for a writer, with signals held off, so the command could not be
 * stopped): it is checked on the open descriptor, not by name first.
 */
export function openRegularFile(path: string): number {
	let fd: number;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		throw new SessionFileError(path, code === "ENOENT" ? "no such file" : `cannot be read (${code ?? error})`);
	}
	const stat = fstatSync(fd);
	if (stat.isFile()) return fd;
	closeSync(fd);
	const problem = stat.isDirectory()
		? "a directory, not a session file"
		: "not a regular file (a pipe or a device: save the session to a file and replay that)";
	throw new SessionFileError(path, problem);
}

/**
 * Most bytes of a session file the replay reads: Node's longest string (the replay reads the file as
 * one), so a longer file is refused before it is read.
 */
const MAX_SESSION_BYTES = bufferConstants.MAX_STRING_LENGTH;

/** `bytes` in whole MiB, rounded down. */
function mib(bytes: number): number {
	return Math.floor(bytes / 1024 / 1024);
}

/** Reads and parses one session file. */
export function readSessionFile(path: string): SessionEntries {
	return parseSessionText(readFileSync(path, "utf8"));
}

/**
 * Reads one file as Pi reads a session, refusing what Pi would not open as one: a path that is
 * missing or not a readable regular file (a directory, a FIFO, a device), an empty file, or a first JSON line that is not Pi's session header
 * (`{"type":"session","id":"…",…}`, the line Pi checks before it loads any entry). Lines that are not
 * JSON are skipped, as Pi skips them (see parseSessionText). Each refusal is a SessionFileError
 * naming the file and the problem in one sentence.
 */
export function readPiSession(path: string): SessionEntries {
	const fd = openRegularFile(path);
	let text: string;
	try {
		const { size } = fstatSync(fd);
		if (size > MAX_SESSION_BYTES)
			throw new SessionFileError(
				path,
				`too large to replay (${mib(size)} MiB; the replay reads a session of at most ${mib(MAX_SESSION_BYTES)} MiB)`,
			);
		text = readFileSync(fd, "utf8");
	} catch (error) {
		if (error instanceof SessionFileError) throw error;
		throw new SessionFileError(path, `cannot be read (${(error as NodeJS.ErrnoException).code ?? error})`);
	} finally {
		closeSync(fd);
	}
	if (!text.trim()) throw new SessionFileError(path, "empty file, not a Pi session");
	if (text.startsWith("\uFEFF"))
		throw new SessionFileError(
			path,
			"not a Pi session: it starts with a UTF-8 byte-order mark, which Pi 1.6 does not read past",
		);
	const session = parseSessionText(text);
	if (session.header === undefined && session.entries.length === 0)
		throw new SessionFileError(path, "not a Pi session: no line of it is a JSON object");
	if (session.header === undefined || typeof session.header.id !== "string")
		throw new SessionFileError(
			path,
			'not a Pi session: its first JSON line is not a session header ({"type":"session","id":…})',
		);
	return session;
}

/**
 * The active branch, root to leaf (core lastBranch); a file whose `parentId`s loop is refused. A file
 * whose header names no version 2 or later is one branch in file order whatever ids its entries
 * hold: Pi migrates it as version 1, chaining every entry to the one before it.
 */
export function activeBranch(session: SessionEntries, where = "session"): Entry[] {
	if (!isV2(session.header)) return [...session.entries];
	const { branch, looped } = lastBranch(session.entries);
	if (looped !== undefined) throw new SessionFileError(where, `parentId cycle at ${looped}`);
	return branch;
}

function stamp(entry: Entry): number {
	return timeOf(entry.timestamp) ?? 0;
}

const projected = new WeakMap<Entry, MessageLike[]>();

/** The model-visible messages of one entry, as Pi projects it (system messages left out). Cached per entry. */
function entryMessages(entry: Entry): MessageLike[] {
	let out = projected.get(entry);
	if (out) return out;
	out = [];
	if (entry.type === "message") {
		const message = entry.message as MessageLike | undefined;
		if (message && message.role !== "system") {
			// As Pi's loader: a missing content reads as empty; a v2 `hookMessage` is a `custom` message.
			const empty = message.content == null && ["user", "assistant", "toolResult"].includes(message.role);
			// Its time in ms, the replay's clock: a date string read as one, a missing one the entry's.
			const at = timeOf(message.timestamp) ?? timeOf(entry.timestamp);
			let shown = message;
			if (message.role === "hookMessage") shown = { ...shown, role: "custom" };
			if (empty) shown = { ...shown, content: [] };
			if (at !== undefined && at !== message.timestamp) shown = { ...shown, timestamp: at };
			out.push(shown);
		}
	} else if (entry.type === "custom_message") {
		out.push({
			role: "custom",
			customType: entry.customType,
			content: entry.content ?? [],
			display: entry.display,
			details: entry.details,
			timestamp: stamp(entry),
		});
	} else if (entry.type === "branch_summary" && entry.summary) {
		out.push({ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: stamp(entry) });
	} else if (entry.type === "compaction") {
		out.push({
			role: "compactionSummary",
			summary: entry.summary,
			tokensBefore: entry.tokensBefore,
			timestamp: stamp(entry),
		});
	}
	projected.set(entry, out);
	return out;
}

const edited = new WeakMap<Entry, WeakMap<MessageLike, MessageLike>>();

/** `message` with the content an edit gives it (Pi's context_edit), one object per edit and message. */
function withEdit(message: MessageLike, edit: Entry): MessageLike | undefined {
	const replacement = edit.replacement as { content?: unknown } | null | undefined;
	if (replacement === null) return undefined;
	if (!["user", "assistant", "toolResult", "custom"].includes(message.role)) return message;
	let byMessage = edited.get(edit);
	if (!byMessage) {
		byMessage = new WeakMap();
		edited.set(edit, byMessage);
	}
	let out = byMessage.get(message);
	if (!out) {
		const content = replacement?.content;
		const asText = (message.role === "assistant" || message.role === "toolResult") && typeof content === "string";
		out = { ...message, content: asText ? [{ type: "text", text: content }] : content };
		byMessage.set(message, out);
	}
	return out;
}

/**
 * The messages of `entries` in order; with `edited`, each entry's latest context edit (among `entries`)
 * applied, as Pi applies them to the context of a request after them.
 */
function project(entries: readonly Entry[], skipCompactions: boolean, edited = true): MessageLike[] {
	const edits = new Map<string, Entry>();
	for (const entry of edited ? entries : []) {
		if (entry.type === "context_edit" && typeof entry.targetId === "string") edits.set(entry.targetId, entry);
	}
	const out: MessageLike[] = [];
	entries.forEach((entry, i) => {
		// As in Pi, only the leading (latest) compaction contributes its summary.
		if (entry.type === "compaction" && (skipCompactions || i > 0)) return;
		const edit = entry.id === undefined ? undefined : edits.get(entry.id);
		for (const message of entryMessages(entry)) {
			const shown = edit ? withEdit(message, edit) : message;
			if (shown) out.push(shown);
		}
	});
	return out;
}

/**
 * Every model-visible message of `branch`, root to leaf, as recorded: compactions ignored (nothing
 * summarised away), context edits not applied (the requests before an edit carried the message as
 * recorded, and a tool returned it so).
 */
export function branchMessages(branch: readonly Entry[]): MessageLike[] {
	return project(branch, true, false);
}

/**
 * The messages Pi sends with `branch`'s last entry as the leaf (Pi's `buildContextEntries` and
 * projection): without a compaction, the whole branch; after one, the latest compaction's summary,
 * then the non-system entries from its `firstKeptEntryId` (a pre-v2 file's `firstKeptEntryIndex`)
 * up to it, then every entry after it. A compaction naming no entry there keeps none, as in Pi.
 */
export function contextMessages(branch: readonly Entry[]): MessageLike[] {
	let at = -1;
	for (let i = branch.length - 1; i >= 0 && at < 0; i--) if (branch[i].type === "compaction") at = i;
	if (at < 0) return project(branch, false);
	const compaction = branch[at];
	const kept: Entry[] = [compaction];
	const from = keptFrom.get(compaction);
	const fromId = compaction.firstKeptEntryId;
	let keeping = false;
	for (let i = 0; i < at; i++) {
		const entry = branch[i];
		if (from ? entry === from : typeof fromId === "string" && entry.id === fromId) keeping = true;
		const system = entry.type === "message" && (entry.message as MessageLike | undefined)?.role === "system";
		if (keeping && !system) kept.push(entry);
	}
	return project([...kept, ...branch.slice(at + 1)], false);
}

function isAssistant(entry: Entry): boolean {
	return entry.type === "message" && (entry.message as MessageLike | undefined)?.role === "assistant";
}

/**
 * The `context` event of every request made on `branch`: before each assistant message, the context
 * at its parent entry; and the context at the leaf when the branch does not end with an assistant
 * message (the next request). Requests between compactions extend each other; a compaction on the
 * branch replaces the summarised prefix from the next request on.
 */
export function branchRequests(branch: readonly Entry[]): MessageLike[][] {
	const requests: MessageLike[][] = [];
	let lastMessage = -1;
	for (let i = 0; i < branch.length; i++) {
		if (entryMessages(branch[i]).length > 0) lastMessage = i;
		if (isAssistant(branch[i]) && i > 0) {
			const request = contextMessages(branch.slice(0, i));
			if (request.length > 0) requests.push(request);
		}
	}
	if (lastMessage >= 0 && !isAssistant(branch[lastMessage])) requests.push(contextMessages(branch));
	return requests;
}

/**
 * The requests a replay of a message sequence issues: one before each assistant message (the
 * messages so far), and a last one with the whole sequence when it does not end with an assistant
 * message. Each entry is the request's message count; requests are prefixes of the sequence.
 */
export function requestCuts(messages: readonly MessageLike[]): number[] {
	const cuts: number[] = [];
	for (let i = 0; i < messages.length; i++) {
		if (messages[i]?.role === "assistant" && i > 0) cuts.push(i);
	}
	const last = messages[messages.length - 1];
	if (messages.length > 0 && last?.role !== "assistant") cuts.push(messages.length);
	return cuts;
}
