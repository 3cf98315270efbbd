/**
 * What a `read`, `write` or `edit` call touched, read from its arguments in the assistant message:
 * the path, the lines a read asked for, and the line a read from an offset started at. Supersession
 * (supersede.ts) and the numbering of a read's copy (output-notices.ts) both go by these facts, memoized
 * by block object. Pure: the facts come from the messages alone.
 */
import { type Block, type MessageLike, resultAfter, resultId } from "./block.ts";

/** What a read, write or edit call touched: a path, and for a read the lines it asked for. */
export interface CallFacts {
	path: string;
	/** `offset:limit` as given, `:` for a whole-file read. */
	range: string;
	/** The path and the range as one key (JSON of the pair, so no two pairs share a key). */
	lines: string;
	/** The id of the call's result. */
	result: string;
	/** The file line a read's output starts at, when its whole-number offset is past line 1. */
	from?: number;
}

/**
 * The call facts of blocks seen in earlier requests, by block object (null: the call names no
 * path). Pass it only with blocks that linearize made, with a BlockMemo, from the same messages: a
 * BlockMemo serves a block object again only while its message is unchanged, so the facts it keeps
 * are those the message gives now. Owned by one caller.
 */
export type CallFactsMemo = WeakMap<Block, CallFacts | null>;

function parsed(message: MessageLike | undefined, block: Block, callId: string): CallFacts | undefined {
	const content = message?.content;
	const args = Array.isArray(content) ? (content[block.part] as { arguments?: unknown })?.arguments : undefined;
	if (!args || typeof args !== "object") return undefined;
	const { path, offset, limit } = args as { path?: unknown; offset?: unknown; limit?: unknown };
	if (typeof path !== "string" || path.length === 0) return undefined;
	const bound = (value: unknown): string =>
		typeof value === "number" || typeof value === "string" ? String(value) : "";
	const file = path.startsWith("./") ? path.slice(2) : path;
	const range = `${bound(offset)}:${bound(limit)}`;
	const facts: CallFacts = { path: file, range, lines: JSON.stringify([file, range]), result: resultId(callId) };
	// Pi's read starts at line `offset` (1-based) of the file; a fraction is not a line it names. Pi
	// coerces a number the model sent as a string ("640", " 640 ") before the tool runs: so is it here.
	const start = typeof offset === "string" && offset.trim() !== "" ? Number(offset) : offset;
	if (typeof start === "number" && Number.isSafeInteger(start) && start > 1) facts.from = start;
	return facts;
}

/** The facts of the call whose arguments `block` is (a `toolArgs` block with a call id), or null. */
export function callFactsOf(messages: readonly MessageLike[], block: Block, memo?: CallFactsMemo): CallFacts | null {
	let facts = memo?.get(block);
	if (facts === undefined) {
		facts = block.toolCallId !== undefined ? (parsed(messages[block.msg], block, block.toolCallId) ?? null) : null;
		memo?.set(block, facts);
	}
	return facts;
}

/** The file line a read result starts at, given its call's `from`, for a text result that is no error; else undefined. */
export function readStartOf(block: Block, from: number | undefined): number | undefined {
	return from !== undefined && block.toolName === "read" && block.isError !== true && block.images === 0
		? from
		: undefined;
}

/**
 * The file line each `read` result starts at, by result id, for text results of reads from an
 * offset past line 1 (see readStartOf): Pi's read tool adds no notice when such a read runs to the
 * file's end, so the call alone says where its lines sit (see outputFilePlace). Each call's own
 * result (see resultAfter: a provider may repeat call ids, or send none).
 */
export function readStarts(
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	memo?: CallFactsMemo,
): Map<string, number> {
	const starts = new Map<string, number>();
	for (let i = 0; i < blocks.length; i++) {
		const block = blocks[i];
		if (block.kind !== "toolArgs" || block.toolName !== "read") continue;
		const asked = callFactsOf(messages, block, memo)?.from;
		if (asked === undefined) continue;
		const answer = resultAfter(blocks, i);
		const from = answer < 0 ? undefined : readStartOf(blocks[answer], asked);
		if (from !== undefined) starts.set(blocks[answer].id, from);
	}
	return starts;
}
