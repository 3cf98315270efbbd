/**
 * Building the policy's view of one request: per-block cost as it will be sent (frozen folds
 * applied), eligibility, first-delivery holds, and lazily computed savings.
 */
import type { FoldOp } from "./apply.ts";
import type { Block, MessageLike } from "./block.ts";
import type { CacheFacts, PolicyView, ViewBlock } from "./contract.ts";
import type { FoldRegistry } from "./fold-registry.ts";
import { foldedCost, savingOf } from "./lower.ts";
import { supersededReads } from "./supersede.ts";

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

/** Frozen ops that still apply: the block is present and has the extent recorded at fold time (see hasExtent). */
export function frozenFor(blocks: readonly Block[], registry: FoldRegistry): { ops: FoldOp[]; stale: string[] } {
	const ops: FoldOp[] = [];
	const stale: string[] = [];
	for (const block of blocks) {
		if (!block.durable) continue;
		const op = registry.frozenOp(block.id);
		if (!op) continue;
		if (registry.hasExtent(block.id, block.text)) ops.push(op);
		else stale.push(block.id);
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
	cache?: CacheFacts;
	config: PolicyView["config"];
	savings?: Map<string, number>;
}

/** A view block whose saving is computed on first read (most turns never read it) and memoized by id. */
class LazyViewBlock implements ViewBlock {
	id: string;
	kind: ViewBlock["kind"];
	tokens: number;
	eligible: boolean;
	frozen: boolean;
	held: boolean;
	superseded: boolean;
	private readonly block: Block;
	private readonly message: MessageLike | undefined;
	private readonly memo: Map<string, number>;

	constructor(
		block: Block,
		message: MessageLike | undefined,
		tokens: number,
		eligible: boolean,
		frozen: boolean,
		held: boolean,
		superseded: boolean,
		memo: Map<string, number>,
	) {
		this.id = block.id;
		this.kind = block.kind;
		this.tokens = tokens;
		this.eligible = eligible;
		this.frozen = frozen;
		this.held = held;
		this.superseded = superseded;
		this.block = block;
		this.message = message;
		this.memo = memo;
	}

	get saving(): number {
		if (!this.eligible || this.frozen) return 0;
		let value = this.memo.get(this.id);
		if (value === undefined) {
			value = savingOf(this.block, this.message);
			this.memo.set(this.id, value);
		}
		return value;
	}
}

/** The policy view of one request. Savings are computed only when a policy reads them. */
export function buildView(input: ViewInput): PolicyView {
	const held = heldIds(input.messages, input.blocks);
	const superseded = supersededReads(input.messages, input.blocks);
	const frozenById = input.frozen.length > 0 ? new Map(input.frozen.map((op) => [op.id, op] as const)) : undefined;
	const memo = input.savings ?? new Map<string, number>();
	const blocks: ViewBlock[] = [];
	let local = 0;
	for (const block of input.blocks) {
		const op = frozenById?.get(block.id);
		const tokens = op ? foldedCost(block, op) : block.tokens;
		local += tokens;
		const eligible = block.durable && block.foldable && input.registry.plannable(block.id);
		blocks.push(
			new LazyViewBlock(
				block,
				input.messages[block.msg],
				tokens,
				eligible,
				op !== undefined,
				held.has(block.id),
				superseded.has(block.id),
				memo,
			),
		);
	}
	const reported = input.usage;
	return {
		blocks,
		usage: typeof reported === "number" && Number.isFinite(reported) && reported >= 0 ? reported : local,
		window: input.window,
		neverCacheRead: input.neverCacheRead,
		...(input.cache ? { cache: input.cache } : {}),
		config: input.config,
	};
}
