/**
 * The mechanism: applyPlan swaps the rendered content of folded blocks and nothing else. The
 * message count never changes, every tool call keeps its id, name, keys and result, and the engine
 * alone writes the `{#code FOLDED}` tag.
 */
import { type Block, isDurableId, linearize, type MessageLike } from "./block.ts";
import { foldTag } from "./digest.ts";

/** One fold: the block id, its code, and the replacement (text for results and thinking, args for tool calls). */
export interface FoldOp {
	id: string;
	code: string;
	text?: string;
	args?: Record<string, unknown>;
}

/** An op applyPlan would not apply, and why. */
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

/** `text` headed by the authoritative tag of `code`, any leading tag the op carried removed. */
export function retag(code: string, text: string): string {
	return `${foldTag(code)} ${text.replace(LEADING_TAGS, "")}`;
}

function retagArgs(code: string, value: unknown): unknown {
	if (typeof value === "string") return LEADING_TAGS.test(value) ? retag(code, value) : value;
	if (Array.isArray(value)) return value.map((inner) => retagArgs(code, inner));
	if (value && typeof value === "object") {
		const out: Record<string, unknown> = {};
		for (const [key, inner] of Object.entries(value)) out[key] = retagArgs(code, inner);
		return out;
	}
	return value;
}

function checkOp(op: FoldOp, block: Block | undefined): Refusal["reason"] | null {
	if (!block) return "unknown-id";
	if (!block.durable || !isDurableId(op.id)) return "not-durable";
	if (!block.foldable) return "not-foldable";
	if (typeof op.code !== "string" || !/^[0-9a-z]{6,8}$/.test(op.code)) return "bad-op";
	if (block.kind === "toolArgs") return op.args && typeof op.args === "object" ? null : "bad-op";
	return typeof op.text === "string" ? null : "bad-op";
}

function rewrite(message: MessageLike, block: Block, op: FoldOp): MessageLike {
	if (block.kind === "toolResult") {
		return { ...message, content: [{ type: "text", text: retag(op.code, op.text ?? "") }] };
	}
	const content = Array.isArray(message.content) ? [...message.content] : [];
	const part = content[block.part] as Record<string, unknown>;
	content[block.part] =
		block.kind === "toolArgs"
			? { ...part, arguments: retagArgs(op.code, op.args) }
			: { ...part, thinking: retag(op.code, op.text ?? "") };
	return { ...message, content };
}

/**
 * Applies fold ops to `messages` without mutating them. Ops on unknown, non-durable or unfoldable
 * ids, malformed ops and repeated ids are refused; each id is applied at most once. `blocks` may be
 * passed when the caller already linearized the same array.
 */
export function applyPlan(
	messages: readonly MessageLike[],
	ops: readonly FoldOp[],
	blocks?: readonly Block[],
): ApplyResult {
	const byId = new Map<string, Block>();
	for (const block of blocks ?? linearize(messages)) byId.set(block.id, block);
	const out = messages.slice();
	const applied: string[] = [];
	const refused: Refusal[] = [];
	const seen = new Set<string>();
	for (const op of ops) {
		if (seen.has(op.id)) {
			refused.push({ id: op.id, reason: "duplicate-op" });
			continue;
		}
		seen.add(op.id);
		const block = byId.get(op.id);
		const reason = checkOp(op, block);
		if (reason || !block) {
			refused.push({ id: op.id, reason: reason ?? "unknown-id" });
			continue;
		}
		out[block.msg] = rewrite(out[block.msg], block, op);
		applied.push(op.id);
	}
	return { messages: out, applied, refused };
}
