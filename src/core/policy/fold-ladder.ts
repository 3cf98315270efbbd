/**
 * The shipped fold policy. Folding breaks the provider's cached prefix from the first changed block
 * on, so it happens in rare, discrete events that each save a lot: an event fires once usage passes
 * the first-fold threshold and at least one ladder step is maskable, or, urgently, once usage is
 * past the budget and at least the floor is maskable. When the cache is cold anyway (an idle gap past
 * its lifetime, with no idle refresh since) and usage is within the budget, the threshold alone
 * suffices: rewriting a cold prefix costs nothing a warm one would not, so any saving is worth
 * taking. An event folds the oldest candidates until usage is one step below the threshold (or
 * candidates run out).
 */
import { budgetOf, type FoldCommand, type PolicyView, plainBeforePi, tailOf, type ViewBlock } from "../contract.ts";

/** Per-block marks the ladder derives from a view. */
export interface LadderMarks {
	/** Ids inside the protected tail (always including the newest block). */
	tail: Set<string>;
	/** Candidates in order, oldest first. */
	candidates: ViewBlock[];
	/** Sum of candidate savings. */
	maskable: number;
}

/** The protected tail: the newest block, and every block that begins within the last `tail` tokens. */
export function protectedTail(blocks: readonly ViewBlock[], tailTokens: number): Set<string> {
	const tail = new Set<string>();
	let after = 0;
	for (let i = blocks.length - 1; i >= 0; i--) {
		if (i < blocks.length - 1 && after >= tailTokens) break;
		tail.add(blocks[i].id);
		after += blocks[i].tokens;
	}
	return tail;
}

/** Tail, candidates (eligible, not frozen, not held, outside the tail, saving > 0) and their mass. */
export function ladderMarks(view: PolicyView): LadderMarks {
	const tail = protectedTail(view.blocks, tailOf(view.config, view.window));
	const candidates: ViewBlock[] = [];
	let maskable = 0;
	for (const block of view.blocks) {
		if (!block.eligible || block.frozen || block.held || block.saving <= 0 || tail.has(block.id)) continue;
		candidates.push(block);
		maskable += block.saving;
	}
	return { tail, candidates, maskable };
}

/** True when the cache is known to be cold anyway, so the next request rewrites the whole prefix. */
function coldAnyway(view: PolicyView): boolean {
	return view.cache?.warm === false;
}

/** Decides whether a fold event fires now and, if so, which blocks it folds. */
export function conduct(view: PolicyView): FoldCommand[] {
	const { config, window, usage } = view;
	if (!(window > 0) || !(usage >= 0)) return [];
	const threshold = (view.neverCacheRead ? config.coldFoldAt : config.foldAt) * window;
	const budget = budgetOf(config, window);
	const urgent = usage > budget;
	if (usage < threshold && !urgent) return [];
	const { candidates, maskable } = ladderMarks(view);
	// Cold anyway: any saving is worth an event, below the budget; past it the floor and compaction rule.
	const cold = !urgent && coldAnyway(view) && maskable > 0;
	const ordinary = usage >= threshold && (maskable >= config.step * window || cold);
	const pressing = urgent && maskable >= config.floor * window;
	if (!ordinary && !pressing) {
		return urgent && !plainBeforePi(view, config.step * window) ? [{ type: "compact", usage, budget, maskable }] : [];
	}
	const target = Math.max(0, Math.min(threshold, budget) - config.step * window);
	const commands: FoldCommand[] = [];
	let projected = usage;
	for (const block of candidates) {
		if (projected <= target) break;
		commands.push({ type: "fold", id: block.id, urgent });
		projected -= block.saving;
	}
	return commands;
}
