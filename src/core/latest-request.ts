/**
 * The latest request as the user's view reads it, pure: its rows (each block as sent and raw,
 * folded or not), the folds it carries and the tokens they keep out, its split into the parts of
 * the context picture and the bar that draws them, and what unfolding one of its blocks would cost.
 */
import type { ViewBlock } from "./contract.ts";

/** One block of the latest request as it went out (the fold event of that request applied). */
export interface PassRow extends ViewBlock {
	/** Tokens of the block unfolded. */
	raw: number;
	/** Folded in this request (by an earlier event or by this request's). */
	folded: boolean;
}

/** The latest request, as the status reads it. */
export interface PassSnapshot {
	rows: PassRow[];
	/** Context tokens of the request before this request's fold event. */
	usage: number;
	window: number;
	/** Model requests the session had made before it (PolicyView.requests), where known. */
	requests?: number;
}

/**
 * The rows of a pass: each view block with its raw cost, and the blocks `event` folds now marked
 * folded at their folded cost (their saving taken off).
 */
export function passRows(blocks: readonly ViewBlock[], raw: readonly number[], event: ReadonlySet<string>): PassRow[] {
	return blocks.map((b, i) => {
		const now = event.has(b.id);
		return {
			id: b.id,
			kind: b.kind,
			tokens: now ? Math.max(0, b.tokens - b.saving) : b.tokens,
			eligible: b.eligible,
			frozen: b.frozen || now,
			held: b.held,
			saving: 0,
			superseded: b.superseded,
			raw: raw[i] ?? b.tokens,
			folded: b.frozen || now,
		};
	});
}

/** Folds in the request and the tokens they keep out of it. */
export function keptOut(rows: readonly PassRow[]): { folds: number; tokens: number } {
	let folds = 0;
	let tokens = 0;
	for (const row of rows) {
		if (!row.folded) continue;
		folds++;
		tokens += Math.max(0, row.raw - row.tokens);
	}
	return { folds, tokens };
}

/** The parts of the context picture, in the order the bar draws them. */
export const PARTS = ["system", "summary", "digests", "fixed", "raw", "tail"] as const;
/** One part of the context picture. */
export type Part = (typeof PARTS)[number];

/** What each part is called, and the character the bar draws it with. */
export const PART_LABELS: Readonly<Record<Part, { label: string; glyph: string }>> = {
	system: { label: "system and tools", glyph: "S" },
	summary: { label: "summary", glyph: "C" },
	digests: { label: "folded digests", glyph: "#" },
	fixed: { label: "never folds", glyph: "=" },
	raw: { label: "raw foldable", glyph: "~" },
	tail: { label: "protected tail", glyph: "T" },
};

/**
 * Splits the request by part: `system` tokens as given, compaction summaries, folded digests, the
 * protected tail (`tail` ids not folded), foldable blocks outside it, and the rest (user text,
 * signed thinking and whatever else never folds).
 */
export function contextParts(
	rows: readonly PassRow[],
	tail: ReadonlySet<string>,
	system: number,
): Record<Part, number> {
	const parts: Record<Part, number> = { system, summary: 0, digests: 0, fixed: 0, raw: 0, tail: 0 };
	for (const row of rows) {
		const part: Part =
			row.kind === "summary"
				? "summary"
				: row.folded
					? "digests"
					: tail.has(row.id)
						? "tail"
						: row.eligible
							? "raw"
							: "fixed";
		parts[part] += row.tokens;
	}
	return parts;
}

/** One bar of `width` characters, each part's share drawn with its glyph (a non-empty part gets at least one). */
export function bar(parts: Readonly<Record<Part, number>>, width: number): string {
	const total = PARTS.reduce((n, p) => n + Math.max(0, parts[p]), 0);
	if (total <= 0 || width <= 0) return "";
	const present = PARTS.filter((p) => parts[p] > 0);
	const cells = present.map((p) => Math.max(1, Math.floor((parts[p] / total) * width)));
	let extra = width - cells.reduce((n, c) => n + c, 0);
	// Hand leftover cells to the largest parts; take surplus from them likewise.
	const order = present.map((_, i) => i).sort((a, b) => parts[present[b]] - parts[present[a]]);
	for (let k = 0; extra !== 0 && k < order.length * width; k++) {
		const i = order[k % order.length];
		if (extra > 0) {
			cells[i]++;
			extra--;
		} else if (cells[i] > 1) {
			cells[i]--;
			extra++;
		}
	}
	return present.map((p, i) => PART_LABELS[p].glyph.repeat(cells[i])).join("");
}

/**
 * What unfolding `id` costs, from the latest request's rows: the tokens it puts back into every
 * later request, and the tokens the next request writes to the cache again (the block, raw, and
 * everything after it). Undefined when the block is not folded in that request.
 */
export function unfoldCost(rows: readonly PassRow[], id: string): { back: number; rewrite: number } | undefined {
	const at = rows.findIndex((r) => r.id === id);
	if (at < 0 || !rows[at].folded) return undefined;
	let after = 0;
	for (let i = at + 1; i < rows.length; i++) after += rows[i].tokens;
	const row = rows[at];
	return { back: Math.max(0, row.raw - row.tokens), rewrite: row.raw + after };
}
