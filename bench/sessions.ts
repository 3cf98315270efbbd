/**
 * Loading the recorded Pi sessions in shared/sessions/ for the replay bench and the replay tests,
 * and the request sequence a replay issues. Parsed sessions are cached per process.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { MessageLike } from "../src/core/block.ts";

/** File names of the shared sessions, in the order the bench reports them. */
export const SESSION_FILES = ["large-session.jsonl", "accordion-sample.jsonl"] as const;

/** One recorded session: its file name and the messages of its `message` entries, in file order. */
export interface Session {
	name: string;
	messages: MessageLike[];
}

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The directory holding the shared sessions: `CONTEXTFOLD_SESSIONS` if set, else the `shared/`
 * folder beside the repository (the layout of the work tree and of CI).
 */
export function sessionsDir(): string {
	const fromEnv = process.env.CONTEXTFOLD_SESSIONS;
	if (fromEnv) return resolve(fromEnv);
	return resolve(here, "..", "..", "shared", "sessions");
}

const cache = new Map<string, Session>();

/** Parses one session file (cached): every `message` entry's `.message`, in file order. */
export function loadSession(file: string): Session {
	const path = join(sessionsDir(), file);
	let session = cache.get(path);
	if (!session) {
		if (!existsSync(path)) throw new Error(`shared session not found: ${path}`);
		const messages: MessageLike[] = [];
		for (const line of readFileSync(path, "utf8").split("\n")) {
			if (!line.trim()) continue;
			const entry = JSON.parse(line) as { type?: string; message?: MessageLike };
			if (entry.type === "message" && entry.message) messages.push(entry.message);
		}
		session = { name: file, messages };
		cache.set(path, session);
	}
	return session;
}

/** Every shared session, parsed (cached). */
export function loadSessions(): Session[] {
	return SESSION_FILES.map(loadSession);
}

/**
 * The requests a replay issues: one before each assistant message (the messages so far), and a
 * last one with the whole session when it does not end with an assistant message. Each entry is
 * the request's message count; requests are prefixes of the session.
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
