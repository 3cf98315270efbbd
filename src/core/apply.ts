/**
 * The mechanism: applyOps swaps the rendered content of folded blocks and nothing else. The
 * message count never changes, every tool call keeps its id, name, keys and result, and the engine
 * alone writes the `{#code FOLDED}` tag.
 */
import { type Block, isDurableId, linearize, type MessageLike } from "./block.ts";
import { foldableArg, foldTag } from "./digest.ts";

/** One fold: the block id, its code, and the replacement (text for results and thinking, args for tool calls). */
export interface FoldOp {
	id: string;
	code: string;
	text?: string;
	args?: Record<string, unknown>;
	/**
	 * Replayed from a context-fold 0.5.1 layer. 0.5.1 folded assistant text parts of any size, so
	 * such an op may stand for one this version would not fold.
	 */
	legacy?: true;
}

/** An op applyOps would not apply, and why. */
export interface Refusal {
	id: string;
	reason: "duplicate-op" | "unknown-id" | "not-durable" | "not-foldable" | "bad-op";
}

/** The rewritten array (same length; untouched messages keep their identity) and what happened. */
export interface ApplyResult {
	messages: MessageLike[];
	applied: string[];
	refused: Refusal[];
}

const LEADING_TAGS = /^(?:\s*\{#[0-9a-z]{6,8} FOLDED\}[ \t]*)+/i;

/**
 * `text` headed by the authoritative tag of `code`, any leading tag the op carried removed. A text
 * already headed by exactly that tag and one space, and by no further tag, is returned unchanged;
 * so is a `verbatim` one (a 0.5.1 layer's digest, whose bytes reach the wire as recorded, even when
 * a tag the block's own text cited follows its head).
 */
export function retag(code: string, text: string, verbatim = false): string {
	const head = `${foldTag(code)} `;
	if (text.startsWith(head) && (verbatim || !LEADING_TAGS.test(text.slice(head.length)))) return text;
	return `${head}${text.replace(LEADING_TAGS, "")}`;
}

/** Tags every foldable string of the original arguments that the op replaced; other values stay as they are. */
function retagArgs(code: string, value: unknown, original: unknown, key?: string): unknown {
	if (typeof value === "string") return foldableArg(key, original) && value !== original ? retag(code, value) : value;
	if (Array.isArray(value)) return value.map((inner, i) => retagArgs(code, inner, (original as unknown[])[i], key));
	if (value && typeof value === "object") {
		const out: Record<string, unknown> = {};
		for (const [inner, innerValue] of Object.entries(value)) {
			out[inner] = retagArgs(code, innerValue, (original as Record<string, unknown>)[inner], inner);
		}
		return out;
	}
	return value;
}

/** True when every object in `value` is a plain object or array, as JSON would make them. */
function plainTree(value: unknown): boolean {
	if (Array.isArray(value)) return Object.getPrototypeOf(value) === Array.prototype && value.every(plainTree);
	if (value && typeof value === "object") {
		return Object.getPrototypeOf(value) === Object.prototype && Object.values(value).every(plainTree);
	}
	return true;
}

/** A fresh copy of a plain tree (see plainTree), so arguments an ApplyMemo keeps are never handed out twice. */
function copyTree(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(copyTree);
	if (value && typeof value === "object") {
		const out: Record<string, unknown> = {};
		for (const [key, inner] of Object.entries(value)) out[key] = copyTree(inner);
		return out;
	}
	return value;
}

/**
 * True when `value` keeps the structure of a call's original arguments: the same keys at every
 * depth, the same array lengths, equal non-string leaves and equal unfoldable strings. Only
 * foldable strings (see foldableArg) may differ, so a folded call stays well-formed.
 */
function keepsCall(original: unknown, value: unknown, key?: string): boolean {
	if (typeof original === "string") {
		return typeof value === "string" && (foldableArg(key, original) || value === original);
	}
	if (Array.isArray(original)) {
		return (
			Array.isArray(value) &&
			value.length === original.length &&
			original.every((v, i) => keepsCall(v, value[i], key))
		);
	}
	if (original && typeof original === "object") {
		if (!value || typeof value !== "object" || Array.isArray(value)) return false;
		const keys = Object.keys(original);
		if (keys.length !== Object.keys(value).length) return false;
		return keys.every(
			(inner) =>
				Object.hasOwn(value, inner) &&
				keepsCall((original as Record<string, unknown>)[inner], (value as Record<string, unknown>)[inner], inner),
		);
	}
	return Object.is(original, value);
}

function callArguments(message: MessageLike | undefined, block: Block): unknown {
	const content = message?.content;
	return Array.isArray(content) ? (content[block.part] as { arguments?: unknown } | undefined)?.arguments : undefined;
}

function checkOp(op: FoldOp, block: Block | undefined, message: MessageLike | undefined): Refusal["reason"] | null {
	if (!block) return "unknown-id";
	if (!block.durable || !isDurableId(op.id)) return "not-durable";
	const legacyText = op.legacy === true && block.kind === "text";
	if (!block.foldable && !legacyText) return "not-foldable";
	if (typeof op.code !== "string" || !/^(?:[0-9a-z]{8}|[0-9a-z]{6})$/.test(op.code)) return "bad-op";
	if (block.kind === "toolArgs") {
		const valid = op.args && typeof op.args === "object" && !Array.isArray(op.args);
		return valid && keepsCall(callArguments(message, block), op.args) ? null : "bad-op";
	}
	return typeof op.text === "string" ? null : "bad-op";
}

/**
 * What applying one op to one block decided, kept by an ApplyMemo under the op's id: the block and
 * its position in the blocks array it was found in, the verdict, and the re-tagged text it writes.
 */
interface Applied {
	op: FoldOp;
	block: Block;
	index: number;
	reason: Refusal["reason"] | null;
	/** The re-tagged text of a result, text or thinking op, made on first use. */
	text?: string;
	/**
	 * The re-tagged arguments of a tool-call op, handed out as copies; null when they are not a
	 * plain tree (they are then re-tagged on every use).
	 */
	args?: Record<string, unknown> | null;
}

/**
 * What applyPlan remembers between requests over one conversation, when it is given the blocks that
 * linearize (with a BlockMemo) made from the same messages: per op, the block it named, the verdict
 * and the re-tagged text. An entry is used again only for the same op object and the same block
 * object at the same position; a BlockMemo serves a block object again only while its message is
 * unchanged, so the verdict and the bytes are exactly those a fresh check would give. Owned by one caller.
 */
export class ApplyMemo {
	readonly byId = new Map<string, Applied>();
}

/** The re-tagged arguments `entry` keeps for its op, made on first use; null when they cannot be kept. */
function keptArgs(entry: Applied, part: Record<string, unknown>): Record<string, unknown> | null {
	if (entry.args === undefined) {
		const args = retagArgs(entry.op.code, entry.op.args, part.arguments);
		entry.args = plainTree(args) ? (args as Record<string, unknown>) : null;
	}
	return entry.args;
}

/** The re-tagged text `entry` keeps for its op, made on first use; made afresh without an entry. */
function keptText(op: FoldOp, entry: Applied | undefined): string {
	if (!entry) return retag(op.code, op.text ?? "", op.legacy);
	entry.text ??= retag(op.code, op.text ?? "", op.legacy);
	return entry.text;
}

/**
 * The content of `message` with `op` applied to `block`, with what `entry` keeps when given.
 * `current` is the content array this call already made for the message (an earlier op rewrote
 * another part of it): it is then rewritten in place.
 */
function rewrite(
	message: MessageLike,
	block: Block,
	op: FoldOp,
	entry: Applied | undefined,
	current: unknown[] | undefined,
): unknown[] {
	if (block.kind === "toolResult") return [{ type: "text", text: keptText(op, entry) }];
	const content = current ?? (Array.isArray(message.content) ? [...message.content] : []);
	const part = content[block.part] as Record<string, unknown>;
	if (block.kind === "toolArgs") {
		const kept = entry && keptArgs(entry, part);
		content[block.part] = { ...part, arguments: kept ? copyTree(kept) : retagArgs(op.code, op.args, part.arguments) };
	} else if (block.kind === "text") content[block.part] = { ...part, text: keptText(op, entry) };
	else content[block.part] = { ...part, thinking: keptText(op, entry) };
	return content;
}

/** Position of each wanted id in `blocks` (the last block with that id, as a lookup by id finds it). */
function positions(blocks: readonly Block[], ops: readonly FoldOp[]): Map<unknown, number> {
	const wanted = new Set<unknown>();
	for (const op of ops) wanted.add(op?.id);
	const at = new Map<unknown, number>();
	for (let i = 0; i < blocks.length; i++) if (wanted.has(blocks[i].id)) at.set(blocks[i].id, i);
	return at;
}

/** What applyOps did: the new content of each rewritten message, by index, and the applied and refused ids. */
export interface ContentResult {
	contents: Map<number, unknown[]>;
	applied: string[];
	refused: Refusal[];
}

/**
 * Works out fold ops on `messages` without mutating them: the new content of each message an op
 * rewrites (see applyPlan for what is refused). `blocks` may be passed when the caller already
 * linearized the same array; `memo` (with `blocks` only) keeps each op's verdict and bytes for the
 * next call over the same conversation (see ApplyMemo).
 */
export function applyOps(
	messages: readonly MessageLike[],
	ops: readonly FoldOp[],
	blocks?: readonly Block[],
	memo?: ApplyMemo,
): ContentResult {
	const all = blocks ?? (ops.length > 0 ? linearize(messages) : []);
	const kept = blocks ? memo?.byId : undefined;
	let at: Map<unknown, number> | undefined;
	const contents = new Map<number, unknown[]>();
	const applied: string[] = [];
	const refused: Refusal[] = [];
	const seen = new Set<string>();
	for (const op of ops) {
		if (!op || typeof op !== "object" || typeof op.id !== "string") {
			refused.push({ id: String((op as Partial<FoldOp> | null | undefined)?.id ?? op), reason: "bad-op" });
			continue;
		}
		if (seen.has(op.id)) {
			refused.push({ id: op.id, reason: "duplicate-op" });
			continue;
		}
		seen.add(op.id);
		let entry = kept?.get(op.id);
		if (!entry || entry.op !== op || all[entry.index] !== entry.block) {
			at ??= positions(all, ops);
			const index = at.get(op.id);
			const block = index === undefined ? undefined : all[index];
			const reason = checkOp(op, block, block && messages[block.msg]);
			if (!block || index === undefined) {
				refused.push({ id: op.id, reason: reason ?? "unknown-id" });
				continue;
			}
			entry = { op, block, index, reason };
			kept?.set(op.id, entry);
		}
		if (entry.reason) {
			refused.push({ id: op.id, reason: entry.reason });
			continue;
		}
		const { block } = entry;
		contents.set(block.msg, rewrite(messages[block.msg], block, op, kept && entry, contents.get(block.msg)));
		applied.push(op.id);
	}
	// Something moved or changed: keep only this call's ids, so blocks that left history are let go.
	if (kept && at) for (const id of kept.keys()) if (!seen.has(id)) kept.delete(id);
	return { contents, applied, refused };
}

/** `messages` with each rewritten message replaced by a copy holding its new content; the others keep their identity. */
export function withContents(
	messages: readonly MessageLike[],
	contents: ReadonlyMap<number, unknown[]>,
): MessageLike[] {
	const out = messages.slice();
	for (const [i, content] of contents) out[i] = { ...messages[i], content };
	return out;
}

/**
 * Applies fold ops to `messages` without mutating them, as new messages: applyOps's rewrite (ops on
 * unknown, non-durable or unfoldable ids, malformed ops and repeated ids are refused; each id is
 * applied at most once), for tests and tools that want the whole array. `blocks` and `memo` are as
 * for applyOps.
 */
export function applyPlan(
	messages: readonly MessageLike[],
	ops: readonly FoldOp[],
	blocks?: readonly Block[],
	memo?: ApplyMemo,
): ApplyResult {
	const { contents, applied, refused } = applyOps(messages, ops, blocks, memo);
	return { messages: withContents(messages, contents), applied, refused };
}
