/**
 * Reference visibility: how much of what the recorded model wrote it could still see. For every
 * recorded assistant message, its references are the distinctive strings (identifiers, paths and
 * numbers of 6+ characters: a token with a digit, `_`, `/`, `.`, `$` or an inner capital) in its text
 * and tool-call arguments that first appeared earlier in a tool result or tool-call argument. A
 * reference is visible when the request that produced the message holds the same token in any
 * block. Unseen references point at the recorded block where they first appeared; each distinct
 * such block is one recall, priced as one extra request at the first point it was needed. Pure.
 */
import type { MessageLike } from "../core/block.ts";
import { distinctiveTokens } from "../core/distinctive.ts";
import { type BlockTable, messageBlockTexts, type RequestShape, tokensOf } from "./request-shape.ts";
import { parts } from "./script.ts";

/** The distinct distinctive tokens of a text: the strings the working set counts as uses, too. */
export const referencesOf = distinctiveTokens;

/** One produced message: the index of the recorded assistant message in the script, and the request that produced it. */
export interface Produced {
	message: number;
	request: number;
	shape: RequestShape;
}

/** Visibility of one run. */
export interface Visibility {
	references: number;
	visible: number;
	/** visible / references (1 when there are none). */
	visibility: number;
	/** Distinct recorded blocks holding a reference the model could not see. */
	recalls: number;
	/** For each recall: the request it is needed at, the prompt tokens of that request, and the tokens of the recalled block. */
	recallPoints: { request: number; prompt: number; blockTokens: number }[];
	/**
	 * Block id → the request of each visible reference it served (the smallest block of the request
	 * holding the token), ascending, one entry per reference: a policy with foresight keeps the block
	 * raw until the last of them.
	 */
	needs: Map<number, number[]>;
}

/** Measures visibility over the recorded `messages` for the requests that produced them. */
export function measureVisibility(
	messages: readonly MessageLike[],
	produced: readonly Produced[],
	table: BlockTable,
): Visibility {
	const byMessage = new Map<number, Produced>();
	for (const p of produced) byMessage.set(p.message, p);
	/** token → the block ids holding it, over every block indexed so far (each block once). */
	const where = new Map<string, number[]>();
	const indexed = new Set<number>();
	const index = (id: number): void => {
		if (indexed.has(id)) return;
		indexed.add(id);
		for (const ref of referencesOf(table.search[id])) {
			const list = where.get(ref);
			if (list) list.push(id);
			else where.set(ref, [id]);
		}
	};
	/** token → where it first appeared: a tool block ("i:j" and its tokens) or elsewhere (undefined). */
	const first = new Map<string, { block: string; tokens: number } | undefined>();
	const recalled = new Set<string>();
	const out: Visibility = {
		references: 0,
		visible: 0,
		visibility: 1,
		recalls: 0,
		recallPoints: [],
		needs: new Map(),
	};
	messages.forEach((message, i) => {
		const blocks = messageBlockTexts(message);
		if (message.role === "assistant") {
			const p = byMessage.get(i);
			const own = new Set<string>();
			parts(message).forEach((part, j) => {
				if (part.type === "text" || part.type === "toolCall")
					for (const ref of referencesOf(blocks[j].search)) own.add(ref);
			});
			if (p) {
				let ids: Set<number> | undefined;
				for (const ref of own) {
					const source = first.get(ref);
					if (!source) continue;
					out.references++;
					if (!ids) {
						ids = new Set(p.shape.ids);
						for (const id of ids) index(id);
					}
					const inRequest = ids;
					const holders = where.get(ref)?.filter((id) => inRequest.has(id)) ?? [];
					if (holders.length > 0) {
						out.visible++;
						const smallest = holders.reduce((a, b) => (table.tokens[b] < table.tokens[a] ? b : a));
						const uses = out.needs.get(smallest);
						if (uses) uses.push(p.request);
						else out.needs.set(smallest, [p.request]);
					} else if (!recalled.has(source.block)) {
						recalled.add(source.block);
						const prompt = p.shape.tokens.reduce((a, b) => a + b, 0);
						out.recallPoints.push({ request: p.request, prompt, blockTokens: source.tokens });
					}
				}
			}
		}
		const fromTool = message.role === "toolResult";
		parts(message).forEach((part, j) => {
			const block = blocks[j];
			if (!block) return;
			const tool = fromTool || (message.role === "assistant" && part.type === "toolCall");
			for (const ref of referencesOf(block.search)) {
				if (!first.has(ref))
					first.set(ref, tool ? { block: `${i}:${j}`, tokens: tokensOf(block.text) } : undefined);
			}
		});
	});
	out.recalls = out.recallPoints.length;
	out.visibility = out.references === 0 ? 1 : out.visible / out.references;
	return out;
}
