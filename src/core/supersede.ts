/**
 * Superseded file versions: the result of a `read` that a later call made stale. A read of a file
 * is superseded once a later successful `write` or `edit` changed that file, or a later successful
 * `read` showed the same lines again (the same offset and limit, or the whole file). Paths compare
 * as written, less a leading `./`. Pure: the facts come from the messages alone.
 */
import { type Block, type MessageLike, resultId } from "./block.ts";

/** What a read, write or edit call touched: a path, and for a read the lines it asked for. */
export interface CallFacts {
	path: string;
	/** `offset:limit` as given, `:` for a whole-file read. */
	range: string;
	/** The path and the range as one key (JSON of the pair, so no two pairs share a key). */
	lines: string;
	/** The id of the call's result. */
	result: string;
}

/**
 * The call facts of blocks seen in earlier requests, by block object (null: the call names no
 * path). Pass it only with blocks that linearize made, with a BlockMemo, from the same messages: a
 * BlockMemo serves a block object again only while its message is unchanged, so the facts it keeps
 * are those the message gives now. Owned by one caller.
 */
export type CallFactsMemo = WeakMap<Block, CallFacts | null>;

function callFacts(message: MessageLike | undefined, block: Block, callId: string): CallFacts | undefined {
	const content = message?.content;
	const args = Array.isArray(content) ? (content[block.part] as { arguments?: unknown })?.arguments : undefined;
	if (!args || typeof args !== "object") return undefined;
	const { path, offset, limit } = args as { path?: unknown; offset?: unknown; limit?: unknown };
	if (typeof path !== "string" || path.length === 0) return undefined;
	const bound = (value: unknown): string =>
		typeof value === "number" || typeof value === "string" ? String(value) : "";
	const file = path.startsWith("./") ? path.slice(2) : path;
	const range = `${bound(offset)}:${bound(limit)}`;
	return { path: file, range, lines: JSON.stringify([file, range]), result: resultId(callId) };
}

const WHOLE_FILE = ":";

/** Result ids of `read` calls that a later call superseded (see the file comment); `memo` keeps call facts. */
export function supersededReads(
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	memo?: CallFactsMemo,
): Set<string> {
	const failed = new Set<string>();
	for (const block of blocks) {
		if (block.kind === "toolResult" && block.isError && block.toolCallId) failed.add(block.toolCallId);
	}
	// What later calls did: changed a file, read it whole, or read these lines of it.
	const changed = new Set<string>();
	const whole = new Set<string>();
	const read = new Set<string>();
	const out = new Set<string>();
	for (let i = blocks.length - 1; i >= 0; i--) {
		const block = blocks[i];
		const callId = block.toolCallId;
		if (block.kind !== "toolArgs" || !callId || failed.has(callId)) continue;
		const name = block.toolName;
		if (name !== "read" && name !== "write" && name !== "edit") continue;
		let facts = memo?.get(block);
		if (facts === undefined) {
			facts = callFacts(messages[block.msg], block, callId) ?? null;
			memo?.set(block, facts);
		}
		if (!facts) continue;
		if (name !== "read") {
			changed.add(facts.path);
			continue;
		}
		if (changed.has(facts.path) || whole.has(facts.path) || read.has(facts.lines)) out.add(facts.result);
		if (facts.range === WHOLE_FILE) whole.add(facts.path);
		read.add(facts.lines);
	}
	return out;
}
