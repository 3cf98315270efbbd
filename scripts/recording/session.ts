/**
 * What a recorded session is made of (a sandbox project and a story that drives Pi through it), and
 * the helpers stories use to write tool calls the way a model would.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Call, Task } from "./agent.ts";

/** A session entry as `get_entries` returns it (only what stories look at). */
export interface EntryLike {
	type: string;
	id: string;
	parentId: string | null;
	message?: { role: string; content?: unknown };
}

/** What a story can do while it plays. */
export interface PlayContext {
	/** Pi's working directory: the sandbox project. */
	cwd: string;
	/** Sends the task's prompt, answers the turn's requests with its steps, waits until Pi settles. */
	run(task: Task): Promise<void>;
	/** Moves the session leaf like `/tree` does, to the entry `pick` chooses. */
	goto(pick: (entries: EntryLike[]) => string, summarize: boolean): Promise<void>;
	/** Runs a user `!` command (RPC `bash`): its output joins the context of the next prompt. */
	userBash(command: string): Promise<void>;
	/** Context tokens of the last model response (prompt + output, as the server reported them). */
	contextTokens(): number;
}

/** One recorded session. */
export interface SessionSpec {
	/** Fixture file name without `.jsonl`. */
	name: string;
	/** Directory name of the sandbox project (pi's cwd). */
	project: string;
	/** The user's overall goal, for summaries. */
	goal: string;
	/** Start of the rewritten clock (ISO). */
	start: string;
	/** The project's files before the session, path relative to the project root. */
	files(): Record<string, string | Uint8Array>;
	/** Git history before the session: each commit writes its files (on top of `files()`) and commits. */
	history: { message: string; date: string; files?: Record<string, string> }[];
	play(ctx: PlayContext): Promise<void>;
}

/** A `bash` call. */
export const bash = (command: string, timeout?: number): Call => ({
	name: "bash",
	args: timeout === undefined ? { command } : { command, timeout },
});

/** A `read` call (optionally a line window). */
export const read = (path: string, offset?: number, limit?: number): Call => ({
	name: "read",
	args: { path, ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) },
});

/** A `write` call. */
export const write = (path: string, content: string): Call => ({ name: "write", args: { path, content } });

/** An `edit` call with one or more replacements. */
export const edit = (path: string, edits: { oldText: string; newText: string }[]): Call => ({
	name: "edit",
	args: { path, edits },
});

/** A `grep` call. */
export const grep = (
	pattern: string,
	opts: { path?: string; glob?: string; literal?: boolean; context?: number } = {},
): Call => ({
	name: "grep",
	args: { pattern, ...opts },
});

/** An `ls` call. */
export const ls = (path?: string): Call => ({ name: "ls", args: path === undefined ? {} : { path } });

/** A `find` call. */
export const find = (pattern: string, path?: string): Call => ({
	name: "find",
	args: path === undefined ? { pattern } : { pattern, path },
});

/** 1-based line number of the first line containing `needle` in a project file, as it is on disk now. */
export function lineOf(cwd: string, path: string, needle: string): number {
	const lines = readFileSync(join(cwd, path), "utf8").split("\n");
	const i = lines.findIndex((l) => l.includes(needle));
	if (i < 0) throw new Error(`${needle} not found in ${path}`);
	return i + 1;
}
