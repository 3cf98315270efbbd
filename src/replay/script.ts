/**
 * A recorded session turned into a replay script: the active branch's messages in order (recorded
 * compactions ignored, so every policy starts from the same history), cut into user turns, each with
 * the recorded assistant messages its run produced, plus the recorded tool results by call id and
 * the lengths of the recorded compaction summaries. A user message recorded between a run's tool
 * calls or results and its next reply (or right after another user message that got no reply) was
 * steered in while the agent ran, and its turn says so; the `!cmd` results recorded between two runs go with
 * the turn they precede. Pure: plain data in, plain data out.
 */
import type { MessageLike } from "../core/block.ts";
import { activeBranch, branchMessages, type Entry, type SessionEntries } from "./session-file.ts";

/** One user turn: the user message and the assistant messages recorded after it, before the next user message. */
export interface ReplayTurn {
	user: MessageLike;
	assistants: MessageLike[];
	/**
	 * The user message reached the agent while it ran (Pi's steering): it follows the previous turn's
	 * tool calls or their results (a converter may put it before the results it came in with), or a
	 * user message the recording has no reply to.
	 */
	steered: boolean;
	/** `bashExecution` messages (user `!` commands) recorded after the previous run and before this user message. */
	before: MessageLike[];
}

/** What a replay needs from one recorded session. */
export interface ReplayScript {
	/** The branch's messages, compactions ignored: the source of reference visibility. */
	messages: MessageLike[];
	turns: ReplayTurn[];
	/**
	 * Recorded tool results by the recorded reply that made the call, then by call id: a call id a
	 * recording uses twice gets each call's own result.
	 */
	results: Map<MessageLike, Map<string, MessageLike>>;
	/** Names of every tool the recorded assistant called. */
	toolNames: string[];
	/** Characters of each recorded compaction summary on the branch, in order. */
	summaryChars: number[];
	/** Compaction entries on the branch (Pi's own at its threshold, or a `/compact` the user typed). */
	compactions: number;
	/** Context edits on the branch: the replay does not make them (see branchMessages). */
	contextEdits: number;
	/**
	 * Messages the replay cannot feed, by role: before the first user message, of a role it does not
	 * drive, a `!cmd` result recorded inside a run (Pi adds those only between runs), or a tool result
	 * that answers no call of a recorded reply before it (or one already answered).
	 */
	skipped: Record<string, number>;
	/** Lines of the session file that are not JSON: Pi skips them, and an entry on one is on no branch. */
	unreadLines: number;
	/**
	 * Model replies recorded before the branch's first entry when that entry's parent is missing from
	 * the file (a line Pi skipped broke the chain): Pi starts the branch there, so they are not replayed.
	 */
	cutOff: number;
	/** The working directory the session header records, if any. */
	cwd?: string;
	/** The header's format version when it is newer than Pi 1.6 writes (SESSION_FORMAT): read as Pi 1.6 reads it. */
	newerFormat?: number;
}

/** The session file format version Pi 1.6 writes (its CURRENT_SESSION_VERSION); a newer one it reads unmigrated. */
export const SESSION_FORMAT = 3;

/** Builds the replay script of a parsed session along its active branch. */
export function replayScript(session: SessionEntries, where = "session"): ReplayScript {
	const branch: Entry[] = activeBranch(session, where);
	const messages = branchMessages(branch);
	const turns: ReplayTurn[] = [];
	const results = new Map<MessageLike, Map<string, MessageLike>>();
	// The latest replayed reply that made each call id.
	const callers = new Map<string, MessageLike>();
	const toolNames = new Set<string>();
	const skipped: Record<string, number> = {};
	const skip = (role: string, count = 1): void => {
		if (count > 0) skipped[role] = (skipped[role] ?? 0) + count;
	};
	let bash: MessageLike[] = [];
	let previous: string | undefined;
	for (const message of messages) {
		if (message.role === "user") {
			const steered = previous === "toolResult" || previous === "user" || previous === "toolCall";
			if (steered) skip("bashExecution", bash.length);
			turns.push({ user: message, assistants: [], steered, before: steered ? [] : bash });
			bash = [];
		} else if (message.role === "bashExecution") {
			bash.push(message);
			continue;
		} else if (message.role === "assistant" && turns.length > 0) {
			skip("bashExecution", bash.length);
			bash = [];
			turns[turns.length - 1].assistants.push(message);
			for (const part of parts(message)) {
				if (part.type !== "toolCall") continue;
				toolNames.add(String(part.name));
				if (typeof part.id === "string") callers.set(part.id, message);
			}
		} else if (message.role === "toolResult" && answers(message, callers, results)) {
			const caller = callers.get(message.toolCallId as string) as MessageLike;
			const byId = results.get(caller) ?? new Map<string, MessageLike>();
			results.set(caller, byId.set(message.toolCallId as string, message));
		} else {
			skip(typeof message.role === "string" ? message.role : "role-less");
			continue;
		}
		// Calls that ran: Pi runs none of a reply that failed or was aborted.
		const ran = !unsent(message) && parts(message).some((p) => p.type === "toolCall");
		previous = message.role === "assistant" && ran ? "toolCall" : message.role;
	}
	const summaryChars = branch
		.filter((e) => e.type === "compaction" && typeof e.summary === "string")
		.map((e) => (e.summary as string).length);
	const compactions = branch.filter((e) => e.type === "compaction").length;
	const contextEdits = branch.filter((e) => e.type === "context_edit").length;
	const cwd = typeof session.header?.cwd === "string" && session.header.cwd ? session.header.cwd : undefined;
	const version = session.header?.version;
	const newer = typeof version === "number" && version > SESSION_FORMAT ? version : undefined;
	return {
		messages,
		turns,
		results,
		toolNames: [...toolNames].sort(),
		summaryChars,
		compactions,
		contextEdits,
		skipped,
		unreadLines: session.unread.length,
		cutOff: cutOffReplies(session, branch),
		...(cwd === undefined ? {} : { cwd }),
		...(newer === undefined ? {} : { newerFormat: newer }),
	};
}

/** The model replies recorded before `branch` when its first entry names a parent the file lacks (see ReplayScript.cutOff). */
function cutOffReplies(session: SessionEntries, branch: readonly Entry[]): number {
	const root = branch[0];
	const parent = root?.parentId;
	if (typeof parent !== "string" || session.entries.some((e) => e.id === parent)) return 0;
	let replies = 0;
	for (const entry of session.entries) {
		if (entry === root) break;
		if ((entry.message as { role?: unknown } | undefined)?.role === "assistant") replies++;
	}
	return replies;
}

/** Whether `result` answers a call of a replayed reply that has no recorded result yet. */
function answers(
	result: MessageLike,
	callers: ReadonlyMap<string, MessageLike>,
	results: ReadonlyMap<MessageLike, ReadonlyMap<string, MessageLike>>,
): boolean {
	const id = result.toolCallId;
	if (typeof id !== "string") return false;
	const caller = callers.get(id);
	return caller !== undefined && !results.get(caller)?.has(id);
}

/**
 * True for a message no provider is sent: Pi's providers skip an assistant message that ended in an
 * error or was aborted (an incomplete turn; pi-ai's transformMessages), its tool calls with it, and
 * Pi runs none of those calls.
 */
export function unsent(message: MessageLike): boolean {
	return message.role === "assistant" && (message.stopReason === "error" || message.stopReason === "aborted");
}

/**
 * The content parts of a message (a string content is one text part). An entry of a content array
 * that is not an object (a `null` a converter left) is no part: Pi sends nothing for it.
 */
export function parts(message: MessageLike): Record<string, unknown>[] {
	const content = message.content;
	if (typeof content === "string") return [{ type: "text", text: content }];
	if (!Array.isArray(content)) return [];
	const all = content as unknown[];
	return all.every(isPart) ? (all as Record<string, unknown>[]) : all.filter(isPart);
}

function isPart(part: unknown): part is Record<string, unknown> {
	return typeof part === "object" && part !== null && !Array.isArray(part);
}
