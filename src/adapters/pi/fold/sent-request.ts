/**
 * The latest request as it went out, which the fold engine builds on: its blocks, its messages (with
 * the content its folded ones had before the fold) and its pass, and the queries the tools and the
 * user's view make of it between requests: its rows, the room an unfold has, whether a block is live.
 */
import { type Block, linearize, type MessageLike } from "../../../core/block.ts";
import { unfoldable } from "../../../core/cache-advice.ts";
import { budgetOf, type PolicyView } from "../../../core/contract.ts";
import type { FoldRegistry } from "../../../core/fold-registry.ts";
import { type PassSnapshot, passRows } from "../../../core/latest-request.ts";
import { tokenBound } from "../../../core/tokens.ts";

/** What unfolding adds to the next request, by block id, and the tokens of room left for it. */
export interface UnfoldRoom {
	/** Tokens left in the window. */
	left: number;
	back: ReadonlyMap<string, number>;
	/** The window, and the fold budget in it (past the budget an event folds what it can, then a compaction comes). */
	window: number;
	budget: number;
}

/**
 * The most the unfold room scales its estimates by to meet the provider's count of the latest request:
 * chars/4 counts English prose and code about a tenth low (JSON framing more); a larger gap is some
 * other cause (images counted apart, a usage that is not this request's), not a rate for every block.
 */
const TOKEN_RATIO_MOST = 1.25;

/** A raw block seen in the latest request, for recall of blocks still in live history. */
export interface LiveBlock {
	block: Block;
	message: MessageLike;
}

/** The latest request as it went out, and the queries over it; FoldEngine records each request here. */
export abstract class SentRequest {
	/** The engine's fold registry, which leftContext reads. */
	abstract registry: FoldRegistry;
	/** The engine's turn base (see FoldEngine.turnBase), which observeLive linearizes live history by. */
	abstract turnBase: number;
	protected lastBlocks: readonly Block[] = [];
	protected lastMessages: readonly MessageLike[] = [];
	/** The content the latest request's folded messages had before the fold, by index. */
	protected rawContents: ReadonlyMap<number, unknown> = new Map();
	protected lastPass:
		| { view: PolicyView; blocks: readonly Block[]; event: Set<string>; unfoldable?: number; snapshot?: PassSnapshot }
		| undefined;
	/** What unfolds may still add before the next request (see unfoldRoom). */
	protected room: UnfoldRoom | undefined;

	/**
	 * The latest request as it went out (for the user's view); undefined before any request and after
	 * a compaction, until the next one. Built
	 * once per request (the footer reads it after the pass and again after the response) and shared:
	 * callers only read it.
	 */
	pass(): PassSnapshot | undefined {
		const last = this.lastPass;
		if (!last) return undefined;
		last.snapshot ??= {
			rows: passRows(
				last.view.blocks,
				last.blocks.map((b) => b.tokens),
				last.event,
			),
			usage: last.view.usage,
			window: last.view.window,
			requests: last.view.requests,
		};
		return last.snapshot;
	}

	/**
	 * Takes `messages`, the context as Pi now projects it, as the live history until the next request:
	 * after a compaction, which removed blocks the latest request still carried (liveBlock, mayBeLive).
	 */
	observeLive(messages: readonly MessageLike[]): void {
		this.lastBlocks = linearize(messages, this.turnBase);
		this.lastMessages = messages.slice();
		this.rawContents = new Map();
	}

	/**
	 * The tokens unfolding each block the latest request carried folded would add to the next request,
	 * and the room left in the window (past it the provider refuses the request), less what unfolds
	 * since that request took; undefined before any request and after a compaction, until the next one.
	 * Both err on the safe side where chars/4 counts too few (CJK): a raw block counts at least its
	 * tokenBound, and unfolding a block adds at least its tokenBound less its digest. `system` is what
	 * the request carries besides its messages (the system prompt and the tools' declarations), which
	 * the rows leave out; it counts toward the window and the budget alike. Where the provider counted
	 * the latest request as more tokens than these estimates (its usage, as Pi sizes a reply by it),
	 * every figure is scaled up by that ratio, up to TOKEN_RATIO_MOST.
	 */
	unfoldRoom(system: number): UnfoldRoom | undefined {
		if (this.room) return this.room;
		const snapshot = this.pass();
		const last = this.lastPass;
		const view = last?.view;
		if (!snapshot || !last || !view || !(view.window > 0)) return undefined;
		let sent = 0;
		const back = new Map<string, number>();
		snapshot.rows.forEach((row, i) => {
			const bound = last.blocks[i]?.id === row.id ? tokenBound(last.blocks[i].text) : 0;
			if (!row.folded) {
				// A block no request carries (an aborted reply, another model's thinking) costs nothing.
				sent += row.tokens > 0 ? Math.max(row.tokens, bound) : 0;
				return;
			}
			sent += row.tokens;
			back.set(row.id, Math.max(0, row.raw - row.tokens, bound - row.tokens));
		});
		// The provider's count of the latest request against the estimate of what it carried.
		let estimated = Math.max(0, system);
		for (const block of view.blocks) estimated += block.tokens;
		const ratio = estimated > 0 ? Math.min(TOKEN_RATIO_MOST, Math.max(1, view.usage / estimated)) : 1;
		if (ratio > 1) for (const [id, tokens] of back) back.set(id, Math.ceil(tokens * ratio));
		this.room = {
			left: view.window - Math.ceil((sent + Math.max(0, system)) * ratio),
			back,
			window: view.window,
			budget: budgetOf(view.config, view.window),
		};
		return this.room;
	}

	/**
	 * Tokens of the latest request that no fold could take out (core `unfoldable`), when they may
	 * exceed `limit`; undefined before any request or when the request's usage is at most `limit`
	 * (no more than that can be unfoldable). Computed on demand, once per request: it reads every
	 * eligible block's saving, which the hook itself computes only when the policy asks. The view
	 * was built before the event's blocks turned frozen, so their saving counts as foldable.
	 */
	unfoldableOver(limit: number): number | undefined {
		const last = this.lastPass;
		if (!last || last.view.usage <= limit) return undefined;
		last.unfoldable ??= unfoldable(last.view.usage, last.view.blocks);
		return last.unfoldable;
	}

	/** Tokens of the latest request's blocks as Pi stores them, unfolded (chars/4, as Pi estimates them). */
	rawTokens(): number {
		let tokens = 0;
		for (const block of this.lastBlocks) tokens += block.tokens;
		return tokens;
	}

	/** The raw block with `id` as the latest request carried it, if it is still live. */
	liveBlock(id: string): LiveBlock | undefined {
		const block = this.lastBlocks.find((b) => b.durable && b.id === id);
		if (!block) return undefined;
		const message = this.lastMessages[block.msg];
		const raw = this.rawContents.get(block.msg);
		return { block, message: raw === undefined ? message : { ...message, content: raw } };
	}

	/**
	 * False when the latest request did not carry `id` (a compaction removed it from live history);
	 * true before this process has seen any request, when nothing is known either way.
	 */
	mayBeLive(id: string): boolean {
		return this.lastBlocks.length === 0 || this.liveBlock(id) !== undefined;
	}

	/**
	 * True when a compaction took the block `id` out of the context, folded or put back: it is not
	 * `live` (by default: mayBeLive); or, while no context was read yet to say so, it is neither
	 * unfolded nor frozen. A live block with a record and no fold (0.5.1 recorded some without a
	 * layer) is in the context, raw.
	 */
	leftContext(id: string, live = this.mayBeLive(id)): boolean {
		if (!live) return true;
		return this.lastBlocks.length === 0 && !this.registry.isUnfolded(id) && !this.registry.frozenOp(id);
	}
}
