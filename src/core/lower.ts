/**
 * Lowering: turning a policy's fold commands into concrete fold ops (code + digest bytes). This is
 * mechanism: it decides how a block reads once folded, never whether it folds.
 */
import type { FoldOp } from "./apply.ts";
import type { Block, MessageLike } from "./block.ts";
import type { FoldCommand } from "./contract.ts";
import {
	duplicateDigest,
	focusSection,
	foldArgs,
	foldCode,
	foldTag,
	quoteTags,
	stripTags,
	textDigest,
	thinkingDigest,
	toolResultDigest,
} from "./digest.ts";
import { blockCost } from "./tokens.ts";

/** Identity of a block's bytes for duplicate detection: length plus two 32-bit FNV-1a hashes. */
export function contentKey(text: string): string {
	let a = 0x811c9dc5;
	let b = 0x01000193;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		a = Math.imul(a ^ c, 0x01000193);
		b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
	}
	return `${text.length}:${(a >>> 0).toString(36)}:${(b >>> 0).toString(36)}`;
}

function toolCallPart(message: MessageLike | undefined, block: Block): { arguments?: unknown } | undefined {
	const content = message?.content;
	return Array.isArray(content) ? (content[block.part] as { arguments?: unknown }) : undefined;
}

/**
 * The fold op for `block` under its own code; `duplicateOf` names the code of an already-folded
 * block with the same bytes (tool results only), whose pointer replaces the block's digest where it
 * is no longer (so folding a duplicate never saves less than the block's saving says: a policy
 * counts on it, the urgent floor among others). Null if the block cannot be folded (its kind or
 * shape forbids it: signed or redacted thinking, signed or short text, a result with an image,
 * arguments with nothing to fold). `from` is the file line a read result starts at (see readStarts).
 */
export function renderFold(
	block: Block,
	message: MessageLike | undefined,
	duplicateOf?: string,
	from?: number,
): FoldOp | null {
	if (!block.foldable) return null;
	const code = foldCode(block.id);
	switch (block.kind) {
		case "toolResult": {
			const label = block.toolName ?? "tool";
			const isError = block.isError === true;
			const own = toolResultDigest({ code, toolName: label, text: block.text, isError, from });
			if (!duplicateOf || duplicateOf === code) return { id: block.id, code, text: own };
			const pointer = duplicateDigest(code, label, block.text, duplicateOf, isError, from);
			return { id: block.id, code, text: pointer.length <= own.length ? pointer : own };
		}
		case "thinking":
			return { id: block.id, code, text: thinkingDigest(code, block.text) };
		case "text":
			return { id: block.id, code, text: textDigest(code, block.text) };
		case "toolArgs": {
			const args = foldArgs(code, toolCallPart(message, block)?.arguments);
			return args ? { id: block.id, code, args } : null;
		}
		default:
			return null;
	}
}

/**
 * JSON length of each args op's arguments: a frozen op is costed on every request, and its
 * arguments never change once the op exists (ops are plain data, never mutated).
 */
const argsLength = new WeakMap<FoldOp, number>();

/** Token cost of a block once `op` replaces its content. */
export function foldedCost(block: Block, op: FoldOp): number {
	if (op.args) {
		let length = argsLength.get(op);
		if (length === undefined) {
			length = (JSON.stringify(op.args) ?? "").length;
			argsLength.set(op, length);
		}
		return blockCost(length + (block.toolName?.length ?? 0));
	}
	return blockCost(op.text?.length ?? 0);
}

/** Tokens saved by folding `block` now (0 when the digest is not smaller); `from` as for renderFold. */
export function savingOf(block: Block, message: MessageLike | undefined, from?: number): number {
	const op = renderFold(block, message, undefined, from);
	return op ? Math.max(0, block.tokens - foldedCost(block, op)) : 0;
}

/** What lowering produced: the ops of the event, and commands it would not lower. */
export interface Lowered {
	ops: FoldOp[];
	refused: { id: string; reason: string }[];
}

/**
 * Lowers fold commands to ops. `known` maps content keys of already-folded blocks to their codes,
 * so a block with the same bytes becomes a pointer. A digest supplied by the policy loses any tag
 * it carries; the engine writes the tag. Non-fold commands are ignored here. `starts` gives the
 * file line each read result from an offset starts at (see readStarts).
 */
export function lower(
	commands: readonly FoldCommand[],
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	plannable: (id: string) => boolean,
	known: ReadonlyMap<string, string> = new Map(),
	starts: ReadonlyMap<string, number> = new Map(),
): Lowered {
	if (!commands.some((command) => command.type === "fold")) return { ops: [], refused: [] };
	const byId = new Map(blocks.map((b) => [b.id, b] as const));
	const seenKeys = new Map(known);
	const done = new Set<string>();
	const ops: FoldOp[] = [];
	const refused: Lowered["refused"] = [];
	for (const command of commands) {
		if (command.type !== "fold") continue;
		const block = byId.get(command.id);
		let reason: string | null = null;
		if (done.has(command.id)) reason = "duplicate-command";
		else if (!block) reason = "unknown-id";
		else if (!block.durable) reason = "not-durable";
		else if (!block.foldable) reason = "not-foldable";
		else if (!plannable(block.id)) reason = "not-plannable";
		if (reason || !block) {
			refused.push({ id: command.id, reason: reason ?? "unknown-id" });
			continue;
		}
		done.add(block.id);
		const key = block.kind === "toolResult" ? contentKey(block.text) : undefined;
		const from = starts.get(block.id);
		const op = renderFold(block, messages[block.msg], key ? seenKeys.get(key) : undefined, from);
		if (!op) {
			refused.push({ id: block.id, reason: "not-foldable" });
			continue;
		}
		if (command.digest !== undefined && op.text !== undefined) {
			op.text = `${foldTag(op.code)} ${quoteTags(stripTags(command.digest).trim())}`;
		}
		if (command.focus && command.focus.length > 0 && block.kind === "toolResult" && op.text !== undefined) {
			op.text += focusSection(block.text, command.focus, { tool: block.toolName ?? "tool", from });
		}
		if (key && !seenKeys.has(key)) seenKeys.set(key, op.code);
		ops.push(op);
	}
	return { ops, refused };
}
