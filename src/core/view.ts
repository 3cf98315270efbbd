/**
 * Building the policy's view of one request: per-block cost as it will be sent (frozen folds
 * applied), eligibility, first-delivery holds, and lazily computed savings.
 */
import type { FoldOp } from "./apply.ts";
import type { Block, MessageLike } from "./block.ts";
import type { LadderConfig, PolicyView, ViewBlock } from "./contract.ts";
import type { FoldRegistry } from "./fold-registry.ts";
import { foldedCost, savingOf } from "./lower.ts";

/**
 * Ids the model has not seen yet: tool results after the latest assistant message (a parallel
 * batch is held together), and the arguments of any call whose result is held or missing.
 */
export function heldIds(messages: readonly MessageLike[], blocks: readonly Block[]): Set<string> {
	let lastAssistant = -1;
	for (let i = messages.length - 1; i >= 0; i--) {
		if (messages[i]?.role === "assistant") {
			lastAssistant = i;
			break;
		}
	}
	const delivered = new Set<string>();
	const held = new Set<string>();
	for (const block of blocks) {
		if (block.kind !== "toolResult") continue;
		if (block.msg > lastAssistant) held.add(block.id);
		else if (block.toolCallId) delivered.add(block.toolCallId);
	}
	for (const block of blocks) {
		if (block.kind === "toolArgs" && !(block.toolCallId && delivered.has(block.toolCallId))) held.add(block.id);
	}
	return held;
}

/** Frozen ops that still apply: the block is present and has the extent recorded at fold time. */
export function frozenFor(blocks: readonly Block[], registry: FoldRegistry): { ops: FoldOp[]; stale: string[] } {
	const ops: FoldOp[] = [];
	const stale: string[] = [];
	for (const block of blocks) {
		if (!block.durable) continue;
		const op = registry.frozenOp(block.id);
		if (!op) continue;
		const record = registry.record(block.id);
		if (record && record.chars !== block.text.length) stale.push(block.id);
		else ops.push(op);
	}
	return { ops, stale };
}

/** Inputs of buildView. `savings` memoizes per-id savings across turns (ids are content-anchored). */
export interface ViewInput {
	messages: readonly MessageLike[];
	blocks: readonly Block[];
	registry: FoldRegistry;
	frozen: readonly FoldOp[];
	window: number;
	/** Context tokens as Pi reports them; null or undefined means use the local estimate. */
	usage?: number | null;
	neverCacheRead: boolean;
	config: LadderConfig;
	savings?: Map<string, number>;
}

/** The policy view of one request. Savings are computed only when a policy reads them. */
export function buildView(input: ViewInput): PolicyView {
	const held = heldIds(input.messages, input.blocks);
	const frozenById = new Map(input.frozen.map((op) => [op.id, op] as const));
	const memo = input.savings ?? new Map<string, number>();
	const blocks: ViewBlock[] = [];
	let local = 0;
	for (const block of input.blocks) {
		const op = frozenById.get(block.id);
		const tokens = op ? foldedCost(block, op) : block.tokens;
		local += tokens;
		const eligible = block.durable && block.foldable && input.registry.plannable(block.id);
		const message = input.messages[block.msg];
		blocks.push({
			id: block.id,
			kind: block.kind,
			tokens,
			eligible,
			frozen: op !== undefined,
			held: held.has(block.id),
			get saving(): number {
				if (!eligible || op) return 0;
				let value = memo.get(block.id);
				if (value === undefined) {
					value = savingOf(block, message);
					memo.set(block.id, value);
				}
				return value;
			},
		});
	}
	const reported = input.usage;
	return {
		blocks,
		usage: typeof reported === "number" && Number.isFinite(reported) && reported >= 0 ? reported : local,
		window: input.window,
		neverCacheRead: input.neverCacheRead,
		config: input.config,
	};
}
