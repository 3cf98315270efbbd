/**
 * Reading the recorded sessions of test/fixtures/sessions/ for the corpus tests: every file parsed
 * into header and entries, and the session tree (children per entry, the active branch from the
 * leaf, which is the last entry Pi appended, back to the root).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { activeBranch, parseSessionText } from "../../src/replay/session-file.ts";

/** The directory of the recorded sessions. */
export const CORPUS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/sessions");

/** A content block of a message (text, thinking, toolCall, image). */
export interface Block {
	type: string;
	text?: string;
	thinking?: string;
	thinkingSignature?: string;
	redacted?: boolean;
	name?: string;
	id?: string;
	arguments?: Record<string, unknown>;
	data?: string;
	mimeType?: string;
}

/** The message of a `message` entry, as far as the tests look at it. */
export interface Message {
	role: string;
	content?: string | Block[];
	timestamp?: number;
	stopReason?: string;
	usage?: { input: number; output: number; cacheRead: number; cacheWrite: number; totalTokens: number };
	toolName?: string;
	toolCallId?: string;
	isError?: boolean;
}

/** A session entry. */
export interface Entry {
	type: string;
	id: string;
	parentId: string | null;
	timestamp: string;
	message?: Message;
	summary?: string;
	firstKeptEntryId?: string;
	usage?: unknown;
}

/** One recorded session file. */
export interface CorpusSession {
	name: string;
	bytes: number;
	header: { type: string; version?: number; id?: string; timestamp?: string; cwd?: string };
	entries: Entry[];
	children: Map<string | null, Entry[]>;
	/** Entries from the root to the leaf (the last entry), in order. */
	branch: Entry[];
}

/** Every session file of the corpus, parsed. */
export function loadCorpus(): CorpusSession[] {
	return readdirSync(CORPUS_DIR)
		.filter((f) => f.endsWith(".jsonl"))
		.sort()
		.map((f) => {
			const path = join(CORPUS_DIR, f);
			// Read as Pi reads a session (a line that is not JSON skipped, a file without ids one branch).
			const parsed = parseSessionText(readFileSync(path, "utf8"));
			const header = (parsed.header ?? { type: "session" }) as CorpusSession["header"];
			const entries = parsed.entries as unknown as Entry[];
			const children = new Map<string | null, Entry[]>();
			for (const e of entries) children.set(e.parentId, [...(children.get(e.parentId) ?? []), e]);
			const branch = activeBranch(parsed, path) as unknown as Entry[];
			return { name: f, bytes: statSync(path).size, header, entries, children, branch };
		});
}

/** The messages of a session's `message` entries, in file order. */
export function messagesOf(session: CorpusSession): Message[] {
	return session.entries.flatMap((e) => (e.type === "message" && e.message ? [e.message] : []));
}

/** The content blocks of a message (a string content is one text block). */
export function blocksOf(message: Message): Block[] {
	if (typeof message.content === "string") return [{ type: "text", text: message.content }];
	return message.content ?? [];
}

/** The text of a message's text blocks. */
export function textOf(message: Message): string {
	return blocksOf(message)
		.map((b) => (b.type === "text" ? (b.text ?? "") : ""))
		.join("");
}

/** The tool calls of an assistant message. */
export function toolCallsOf(message: Message): Block[] {
	return blocksOf(message).filter((b) => b.type === "toolCall");
}
