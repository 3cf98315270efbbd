/**
 * The block model: a Pi message array seen as typed, costed blocks with ids. Durable ids are
 * anchored on content that never moves (a tool call id, a response id or timestamp plus part index,
 * a message timestamp); an anchor that repeats (a provider that numbers its tool calls afresh in
 * each reply or process) is told apart by its message's timestamp; anything without such an anchor
 * gets a positional id, which is never foldable because it re-points as soon as history stops
 * being append-only.
 */
import { hasFoldableArg, TEXT_FOLD_CHARS } from "./digest.ts";
import { MessageMemo, matchesSnapshot, type Snapshot, snapshotOf } from "./message-memo.ts";
import { blockCost, IMAGE_TOKENS, PLACEHOLDER_IMAGE_TOKENS } from "./tokens.ts";

/** A message as Pi hands it to the `context` hook; only the fields the core reads are typed. */
export interface MessageLike {
	role: string;
	timestamp?: number;
	content?: unknown;
	[key: string]: unknown;
}

/** What a block holds. Only `toolResult`, `toolArgs`, assistant `text` and unsigned `thinking` can ever fold. */
export type BlockKind =
	| "user"
	| "text"
	| "thinking"
	| "toolArgs"
	| "toolResult"
	| "custom"
	| "bashExecution"
	| "summary"
	| "other";

/** One unit of context: a whole message or one part of an assistant message. */
export interface Block {
	id: string;
	/** True if the id is content-anchored (see isDurableId). */
	durable: boolean;
	kind: BlockKind;
	/** Index of the message in the array. */
	msg: number;
	/** Index of the content part inside an assistant message; -1 for a whole message. */
	part: number;
	/** The block's rendered text: what a fold replaces and what recall serves. */
	text: string;
	images: number;
	tokens: number;
	/** Kind gate: the block's kind and shape allow a fold (separate from the durable-id gate). */
	foldable: boolean;
	/** Number of user messages up to and including this block's message. */
	turn: number;
	toolName?: string;
	toolCallId?: string;
	isError?: boolean;
	/**
	 * A tool call the provider signed (Gemini's `thoughtSignature`) that reaches this request's model
	 * with its signature: Google asks for the calls of the current turn back unchanged.
	 */
	signed?: boolean;
}

const DURABLE_PREFIX = /^[uars]:/;

/** True for content-anchored ids (`u:`, `a:`, `r:`, `s:`); positional `m<i>:` ids are never durable. */
export function isDurableId(id: string): boolean {
	return DURABLE_PREFIX.test(id);
}

/**
 * The id a later occurrence of durable id `id` gets in a message stamped `ts` (see linearize):
 * `r:call_0@1700000000123` for the second result of a call id a provider used twice; a third in the
 * same millisecond gets `.2` after it, and so on (see SAME_STAMP).
 */
export function repeatedId(id: string, ts: number): string {
	return `${id}@${ts}`;
}

const REPEATED = /^(.+)@(\d+)(?:\.\d+)?$/;

/** Occurrences of one anchor in one millisecond told apart by their count (`r:@T@T.2`); past it, positional. */
const SAME_STAMP = 64;

/**
 * The id a later occurrence of durable id `id` in a message stamped `ts` takes, given the ids already
 * `taken`: its stamp (repeatedId), then a count after it for more in one millisecond; undefined past
 * SAME_STAMP or without a stamp (then positional). linearize and the ledger both count so.
 */
export function laterId(id: string, ts: number | undefined, taken: (id: string) => boolean): string | undefined {
	if (ts === undefined) return undefined;
	const stamped = repeatedId(id, ts);
	if (!taken(stamped)) return stamped;
	for (let n = 2; n <= SAME_STAMP; n++) if (!taken(`${stamped}.${n}`)) return `${stamped}.${n}`;
	return undefined;
}

/** The durable id and the message stamp a repeated id names (see repeatedId; a count after it too), or undefined. */
export function splitRepeatedId(id: string): { id: string; ts: number } | undefined {
	const match = REPEATED.exec(id);
	return match ? { id: match[1], ts: Number(match[2]) } : undefined;
}

/** Positional id of message `msg`, part `part`: stable only while history is append-only. */
export function positionalId(msg: number, part: number): string {
	return part < 0 ? `m${msg}` : `m${msg}:${part}`;
}

const LEGACY_PART_ID = /^a:(.+):p(\d+)$/;

/**
 * The durable id this version gives the block that context-fold 0.5.1 named `id`. 0.5.1 wrote
 * assistant part ids as `a:<responseId or t<timestamp>>:p<j>` where this formula writes
 * `a:<anchor>:<j>`; its `u:`, `r:` and `s:` ids are the same here. Never matches an id of this
 * version (those end in `:<digits>` or `:args`), so it may be applied to any id read from 0.5.1.
 */
export function fromLegacyId(id: string): string {
	const match = LEGACY_PART_ID.exec(id);
	return match ? `a:${match[1]}:${match[2]}` : id;
}

/**
 * True for an assistant message the model gets back in later requests: not one that ended in an
 * error or was aborted, which pi-ai leaves out of every request (`transformMessages`), so no
 * model ever answered after what it was sent with.
 */
export function isModelReply(message: MessageLike | undefined): boolean {
	if (message?.role !== "assistant") return false;
	const stop = (message as { stopReason?: unknown }).stopReason;
	return stop !== "error" && stop !== "aborted";
}

/** Durable id of the folded arguments of tool call `toolCallId`. */
export function argsId(toolCallId: string): string {
	return `a:${toolCallId}:args`;
}

/** Durable id of the result of tool call `toolCallId`. */
export function resultId(toolCallId: string): string {
	return `r:${toolCallId}`;
}

/**
 * The position of the result answering the call whose arguments block is at `call`, before `before`,
 * or -1, so that a provider that repeats call ids still pairs each call with its own result: results
 * answer the calls of one reply that share an id in order, and a later reply's call with the id ends
 * the search (the calls of an aborted reply never ran).
 */
export function resultAfter(blocks: readonly Block[], call: number, before = blocks.length): number {
	const asked = blocks[call];
	const callId = asked?.toolCallId;
	if (callId === undefined) return -1;
	let ahead = 0;
	for (let j = call - 1; j >= 0 && blocks[j].msg === asked.msg; j--)
		if (blocks[j].kind === "toolArgs" && blocks[j].toolCallId === callId) ahead++;
	for (let j = call + 1; j < before; j++) {
		const block = blocks[j];
		if (block.toolCallId !== callId) continue;
		if (block.kind === "toolArgs" && block.msg !== asked.msg) return -1;
		if (block.kind === "toolResult" && ahead-- === 0) return j;
	}
	return -1;
}

interface Part {
	type?: unknown;
	text?: unknown;
	thinking?: unknown;
	thinkingSignature?: unknown;
	textSignature?: unknown;
	thoughtSignature?: unknown;
	redacted?: unknown;
	id?: unknown;
	name?: unknown;
	arguments?: unknown;
}

function partsOf(content: unknown): Part[] {
	return Array.isArray(content) ? (content as Part[]) : [];
}

/** Renders string-or-parts content to text, counting image parts. */
export function renderContent(content: unknown): { text: string; images: number } {
	if (typeof content === "string") return { text: content, images: 0 };
	let text = "";
	let images = 0;
	let first = true;
	for (const part of partsOf(content)) {
		if (part?.type === "image") {
			images++;
			continue;
		}
		if (part?.type === "text" && typeof part.text === "string") {
			text = first ? part.text : `${text}\n${part.text}`;
			first = false;
		}
	}
	return { text, images };
}

/**
 * Remembers the JSON text of tool-call arguments across turns, keyed by call id. Pi hands every
 * request a fresh deep copy, so identity cannot be used; an entry is reused only when the
 * arguments are structurally equal to a snapshot of those it was made from (see snapshotOf), so a
 * reused call id or an edited argument is never served stale text.
 */
export type ArgsCache = Map<string, { snapshot: Snapshot; text: string; foldable: boolean }>;

function argsText(
	callId: string | undefined,
	args: unknown,
	cache: ArgsCache | undefined,
): { text: string; foldable: boolean } {
	const known = callId ? cache?.get(callId) : undefined;
	if (known && matchesSnapshot(args, known.snapshot)) return known;
	const text = JSON.stringify(args) ?? "";
	const foldable = hasFoldableArg(args);
	const snapshot = cache && callId ? snapshotOf(args) : undefined;
	if (snapshot && callId) cache?.set(callId, { snapshot, text, foldable });
	else if (callId) cache?.delete(callId);
	return { text, foldable };
}

/** Drops the cached argument texts of calls that `blocks` no longer hold. */
function retainCalls(cache: ArgsCache, blocks: readonly Block[]): void {
	const live = new Set<string>();
	for (const block of blocks) if (block.kind === "toolArgs" && block.toolCallId) live.add(block.toolCallId);
	for (const id of cache.keys()) if (!live.has(id)) cache.delete(id);
}

function str(value: unknown): string | undefined {
	return typeof value === "string" && value.length > 0 ? value : undefined;
}

function stamp(message: MessageLike): number | undefined {
	return typeof message.timestamp === "number" && Number.isFinite(message.timestamp) ? message.timestamp : undefined;
}

function make(
	id: string | undefined,
	msg: number,
	part: number,
	kind: BlockKind,
	text: string,
	turn: number,
	extra: Partial<Block> = {},
	extraChars = 0,
): Block {
	const images = extra.images ?? 0;
	const block: Block = {
		id: id ?? positionalId(msg, part),
		durable: id !== undefined,
		kind,
		msg,
		part,
		text,
		images,
		tokens: blockCost(text.length + extraChars, images),
		foldable: false,
		turn,
	};
	if (extra.toolName !== undefined) block.toolName = extra.toolName;
	if (extra.toolCallId !== undefined) block.toolCallId = extra.toolCallId;
	if (extra.isError !== undefined) block.isError = extra.isError;
	return block;
}

/** The model a request goes to, as pi-ai tells one model from another, and whether it takes images. */
export interface ModelKey {
	provider: string;
	api: string;
	id: string;
	/** False for a model without image input: pi-ai sends a placeholder for each image. */
	images?: boolean;
}

/**
 * True when a reply's thinking reaches a request to `model`: pi-ai drops thinking written by another
 * model (another provider, API or model id) from every request it sends (`transformMessages`), so
 * such thinking costs nothing and has nothing to fold. Without a model, every reply's counts.
 */
export function thinkingSentTo(message: MessageLike, model: ModelKey | undefined): boolean {
	if (!model) return true;
	const m = message as { provider?: unknown; api?: unknown; model?: unknown };
	return m.provider === model.provider && m.api === model.api && m.model === model.id;
}

/**
 * The blocks of one message, with ids as the formula gives them (no uniqueness pass). `turn` is
 * the number of user messages up to and including this one. Used by linearize and by the ledger
 * route, which must compute exactly the same ids. With `model`, the request's, a reply's thinking
 * written by another model costs nothing and does not fold (see thinkingSentTo), and an image sent to
 * a model without image input costs its placeholder.
 */
export function messageBlocks(
	message: MessageLike,
	msg: number,
	turn: number,
	cache?: ArgsCache,
	model?: ModelKey,
): Block[] {
	const blocks = blocksOf(message, msg, turn, cache, model);
	if (model?.images === false) {
		for (const block of blocks)
			if (block.images > 0 && block.tokens > 0)
				block.tokens -= block.images * (IMAGE_TOKENS - PLACEHOLDER_IMAGE_TOKENS);
	}
	return blocks;
}

/** The blocks of one message (see messageBlocks), images at their full cost. */
function blocksOf(message: MessageLike, msg: number, turn: number, cache?: ArgsCache, model?: ModelKey): Block[] {
	const ts = stamp(message);
	switch (message.role) {
		case "user": {
			const { text, images } = renderContent(message.content);
			return [make(ts === undefined ? undefined : `u:${ts}`, msg, -1, "user", text, turn, { images })];
		}
		case "custom": {
			const { text, images } = renderContent(message.content);
			return [make(ts === undefined ? undefined : `u:custom:${ts}`, msg, -1, "custom", text, turn, { images })];
		}
		case "bashExecution": {
			// A `!!cmd` run is kept out of every request (Pi's convertToLlm): it costs nothing and holds nothing the model sees.
			const excluded = message.excludeFromContext === true;
			const text = excluded
				? ""
				: `${str(message.command) ?? ""}\n${typeof message.output === "string" ? message.output : ""}`;
			const block = make(ts === undefined ? undefined : `u:bash:${ts}`, msg, -1, "bashExecution", text, turn);
			if (excluded) block.tokens = 0;
			return [block];
		}
		case "compactionSummary":
		case "branchSummary": {
			const text = typeof message.summary === "string" ? message.summary : "";
			return [make(ts === undefined ? undefined : `s:${ts}`, msg, -1, "summary", text, turn)];
		}
		case "toolResult": {
			const { text, images } = renderContent(message.content);
			const callId = str(message.toolCallId);
			// A result whose call has no id (a provider that sends none) is anchored on its stamp.
			const id = callId ? resultId(callId) : ts === undefined ? undefined : `r:@${ts}`;
			const block = make(id, msg, -1, "toolResult", text, turn, {
				images,
				toolName: str(message.toolName) ?? "tool",
				// An empty id too (a provider that sends none): calls and results still pair by it (resultAfter).
				toolCallId: typeof message.toolCallId === "string" ? message.toolCallId : undefined,
				isError: message.isError === true,
			});
			block.foldable = images === 0;
			return [block];
		}
		case "assistant": {
			const anchor = str(message.responseId) ?? (ts === undefined ? undefined : `t${ts}`);
			const blocks: Block[] = [];
			partsOf(message.content).forEach((part, j) => {
				const partId = anchor === undefined ? undefined : `a:${anchor}:${j}`;
				if (part?.type === "toolCall") {
					const callId = str(part.id);
					const name = str(part.name) ?? "tool";
					const { text, foldable } = argsText(callId, part.arguments ?? {}, cache);
					const block = make(
						callId ? argsId(callId) : partId && `${partId}:args`,
						msg,
						j,
						"toolArgs",
						text,
						turn,
						{
							toolName: name,
							toolCallId: typeof part.id === "string" ? part.id : undefined,
						},
						name.length,
					);
					block.foldable = foldable;
					if (str(part.thoughtSignature) && thinkingSentTo(message, model)) block.signed = true;
					blocks.push(block);
				} else if (part?.type === "thinking") {
					const text = typeof part.thinking === "string" ? part.thinking : "";
					const block = make(partId, msg, j, "thinking", text, turn);
					block.foldable = !str(part.thinkingSignature) && part.redacted !== true && text.length > 0;
					if (!thinkingSentTo(message, model)) {
						block.tokens = 0;
						block.foldable = false;
					}
					blocks.push(block);
				} else if (part?.type === "text") {
					const text = typeof part.text === "string" ? part.text : "";
					const block = make(partId, msg, j, "text", text, turn);
					block.foldable = !str(part.textSignature) && text.length >= TEXT_FOLD_CHARS;
					blocks.push(block);
				} else {
					blocks.push(make(undefined, msg, j, "other", JSON.stringify(part) ?? "", turn));
				}
			});
			// pi-ai leaves a reply that failed or was aborted out of every request: it costs nothing, and
			// there is nothing to fold.
			if (!isModelReply(message)) {
				for (const block of blocks) {
					block.tokens = 0;
					block.foldable = false;
				}
			}
			return blocks;
		}
		default: {
			const { text, images } = renderContent(message.content);
			return [make(undefined, msg, -1, "other", text, turn, { images })];
		}
	}
}

/** What linearize keeps of its previous output, to reuse the part of it that did not change. */
interface LinearizeState {
	/** Messages in the previous call. */
	count: number;
	/** Its output, copied. */
	blocks: Block[];
	/** Index in `blocks` of each message's first block, plus the total at the end. */
	starts: number[];
	/** Each durable id of the output → the message it first appeared in. */
	first: Map<string, number>;
	/** The keys of `first`, in order of first appearance. */
	order: string[];
}

const OTHER_FIELDS = ["role", "timestamp", "content"] as const;

/** What messageBlocks reads of a message of each role; any other role is read as OTHER_FIELDS. */
const FIELDS_BY_ROLE: ReadonlyMap<unknown, readonly string[]> = new Map<unknown, readonly string[]>([
	["user", OTHER_FIELDS],
	["custom", OTHER_FIELDS],
	["bashExecution", ["role", "timestamp", "command", "output", "excludeFromContext"]],
	["compactionSummary", ["role", "timestamp", "summary"]],
	["branchSummary", ["role", "timestamp", "summary"]],
	["toolResult", ["role", "timestamp", "content", "toolCallId", "toolName", "isError"]],
	["assistant", ["role", "timestamp", "content", "responseId", "stopReason", "provider", "api", "model"]],
]);

/**
 * The fields messageBlocks reads of `message` (directly or through `stamp`), which depend on its
 * role alone. The memo compares only these, so usage figures and provider metadata, about half of
 * an assistant message, are never walked, and no field another role would read is looked up;
 * `test/core/block-memo.test.ts` checks that messageBlocks reads nothing else.
 */
export function blockFields(message: Record<string, unknown>): readonly string[] {
	return FIELDS_BY_ROLE.get(message.role) ?? OTHER_FIELDS;
}

/**
 * What linearize remembers between calls over one conversation: each message's blocks (served
 * while the message is unchanged at its position, see MessageMemo) and its previous output, whose
 * leading messages are reused whole when they are unchanged too. Owned by one caller.
 */
export class BlockMemo {
	messages = new MessageMemo<Block[]>(blockFields);
	private last: LinearizeState | undefined;
	/** The request model the memo's blocks were made for (undefined for none), its fields copied. */
	private model: ModelKey | undefined;

	/**
	 * Starts over when the request's model changes: a reply's thinking counts for one model only.
	 * Compared field by field, with no key string built per request.
	 */
	forModel(model: ModelKey | undefined): void {
		const was = this.model;
		const same = model
			? was !== undefined &&
				was.provider === model.provider &&
				was.api === model.api &&
				was.id === model.id &&
				(was.images !== false) === (model.images !== false)
			: was === undefined;
		if (same) return;
		this.model = model && { provider: model.provider, api: model.api, id: model.id, images: model.images !== false };
		this.messages = new MessageMemo<Block[]>(blockFields);
		this.last = undefined;
	}

	/** The previous call's output, taken: a call that throws leaves none behind. */
	take(): LinearizeState | undefined {
		const last = this.last;
		this.last = undefined;
		return last;
	}

	/** Keeps a finished call's output for the next call. */
	keep(state: LinearizeState): void {
		this.last = state;
	}
}

/**
 * Turns a message array into blocks in order. Ids are unique: when an anchor repeats, a later
 * occurrence takes its message's timestamp (repeatedId), and falls back to its positional (never
 * foldable) id where that repeats too or there is none. `turnBase` is the number of user messages
 * before the array (those a compaction removed), so turns stay session-absolute.
 * `cache` (optional) saves re-serializing tool-call arguments seen in earlier turns; `memo`
 * (optional) reuses the blocks of messages unchanged at their position since the previous call.
 * Blocks served from the memo are shared across calls: callers must treat blocks as read-only.
 * `model` is the request's (see messageBlocks).
 */
export function linearize(
	messages: readonly MessageLike[],
	turnBase = 0,
	cache?: ArgsCache,
	memo?: BlockMemo,
	model?: ModelKey,
): Block[] {
	memo?.forModel(model);
	const prev = memo?.take();
	const own: Block[][] = [];
	let turn = turnBase;
	let kept = 0;
	for (let i = 0; i < messages.length; i++) {
		const message = messages[i];
		if (!message || typeof message !== "object") {
			memo?.messages.forget(i);
			own.push([make(undefined, i, -1, "other", "", turn)]);
			continue;
		}
		if (message.role === "user") turn++;
		let blocks = memo?.messages.get(i, message, turn);
		if (!blocks) {
			blocks = messageBlocks(message, i, turn, cache, model);
			memo?.messages.set(i, message, turn, blocks);
		} else if (kept === i && prev && i < prev.count) kept++;
		own.push(blocks);
	}
	const first = prev?.first ?? new Map<string, number>();
	const order = prev?.order ?? [];
	while (order.length > 0 && (first.get(order[order.length - 1]) ?? 0) >= kept) first.delete(order.pop() as string);
	const blocks = prev ? prev.blocks.slice(0, prev.starts[kept]) : [];
	const starts = prev ? prev.starts.slice(0, kept) : [];
	for (let i = kept; i < own.length; i++) {
		starts.push(blocks.length);
		for (const block of own[i]) {
			if (!block.durable) blocks.push(block);
			else if (first.has(block.id)) {
				const again = laterId(block.id, stamp(messages[i]), (id) => first.has(id));
				if (again === undefined) blocks.push({ ...block, id: positionalId(block.msg, block.part), durable: false });
				else {
					first.set(again, i);
					order.push(again);
					blocks.push({ ...block, id: again });
				}
			} else {
				first.set(block.id, i);
				order.push(block.id);
				blocks.push(block);
			}
		}
	}
	starts.push(blocks.length);
	if (memo) {
		memo.messages.truncate(messages.length);
		memo.keep({ count: messages.length, blocks: blocks.slice(), starts, first, order });
	}
	// Where the conversation changed before its end (a compaction, a move in the tree), calls may have
	// left it: the cache keeps only those still in it.
	if (cache && (!prev || kept < prev.count)) retainCalls(cache, blocks);
	return blocks;
}
