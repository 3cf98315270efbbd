/**
 * The request as a price model sees it: a list of blocks (the system message with its tool
 * declarations, then one block per content part of every message, as a provider counts content
 * blocks), each interned to a small id by its exact text, with its token count (ceil(chars/4), the
 * faux provider's estimate) and the id of the prefix it ends. Equal prefix ids mean byte-identical
 * prefixes, so cache matching compares integers. Pure (the table is plain in-memory state).
 */
import type { MessageLike } from "../core/block.ts";
import { parts, unsent } from "./script.ts";

/** A request reduced to blocks: ids, token counts, prefix ids, and Anthropic-style breakpoints (prefix lengths). */
export interface RequestShape {
	ids: number[];
	tokens: number[];
	/** keys[i]: the id of the prefix made of blocks 0..i. */
	keys: number[];
	/**
	 * Prefix lengths (in blocks) of the cache breakpoints: Pi's after the leading system prompt and
	 * after the whole request, and any an extension placed (see shape).
	 */
	breakpoints: number[];
}

/** Tokens of a text: ceil(chars/4). */
export function tokensOf(text: string): number {
	return Math.ceil(text.length / 4);
}

function stringsOf(value: unknown, out: string[]): void {
	if (typeof value === "string") out.push(value);
	else if (typeof value === "number" || typeof value === "boolean") out.push(String(value));
	else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
	else if (value && typeof value === "object") for (const v of Object.values(value)) stringsOf(v, out);
}

/**
 * One block of a message: its exact text (what is priced), the text references are looked for in,
 * and whether no fold may ever touch it (user text, summaries, signed or redacted thinking: a
 * provider verifies the signature, so its text cannot be rewritten).
 */
export interface BlockText {
	text: string;
	search: string;
	fixed?: boolean;
	/**
	 * An image part's base64 data. Its text is a placeholder naming the data's length, so two images of
	 * the same length share a text; they are told apart by their data.
	 */
	image?: string;
}

/** The blocks of one message. A tool call's text is its name and JSON arguments; its searchable text is the argument values. */
export function messageBlockTexts(message: MessageLike): BlockText[] {
	if (message.role === "system") {
		// Its prompt, sections and tools as sent; its timestamp is never sent.
		const text = JSON.stringify({ ...message, timestamp: undefined });
		return [{ text, search: text }];
	}
	if (message.role === "compactionSummary" || message.role === "branchSummary") {
		const text = String(message.summary ?? "");
		return [{ text, search: text, fixed: true }];
	}
	const out: BlockText[] = [];
	const user = message.role === "user";
	for (const part of parts(message)) {
		if (part.type === "text") {
			const text = String(part.text ?? "");
			out.push(user ? { text, search: text, fixed: true } : { text, search: text });
		} else if (part.type === "thinking") {
			const text = String(part.thinking ?? "");
			const signed =
				(typeof part.thinkingSignature === "string" && part.thinkingSignature.length > 0) || part.redacted === true;
			out.push(signed ? { text, search: text, fixed: true } : { text, search: text });
		} else if (part.type === "toolCall") {
			const values: string[] = [];
			stringsOf(part.arguments, values);
			out.push({ text: `${part.name}:${JSON.stringify(part.arguments ?? {})}`, search: values.join("\n") });
		} else if (part.type === "image") {
			const data = String(part.data ?? "");
			out.push({ text: `[image:${data.length}]`, search: "", image: data });
		} else {
			const text = JSON.stringify(part);
			out.push({ text, search: text });
		}
	}
	if (out.length === 0) out.push({ text: "", search: "" });
	return out;
}

/** Ids below this fit a pair key: 2^26 each, so a key stays an exact integer (under 2^53). */
const PAIR_ID_LIMIT = 2 ** 26;

/**
 * One number for the pair (prefix id `prev`, -1 for none; block id `id`), where a string key cost an
 * allocation per block of every request.
 */
function pairKey(prev: number, id: number): number {
	if (prev + 1 >= PAIR_ID_LIMIT || id >= PAIR_ID_LIMIT)
		throw new Error("replay: more than 2^26 distinct blocks or prefixes");
	return (prev + 1) * PAIR_ID_LIMIT + id;
}

/** Interns block texts and prefixes across the requests of one run. */
export class BlockTable {
	private readonly byText = new Map<string, number>();
	/** Tokens of an image part from its data; without it an image costs its placeholder text. */
	private readonly imageTokens: ((data: string) => number) | undefined;
	/** Prefix ids by (id of the prefix before, block id), keyed as one number (see pairKey). */
	private readonly prefixes = new Map<number, number>();
	/** Searchable text of each block id. */
	readonly search: string[] = [];
	/** Tokens of each block id. */
	readonly tokens: number[] = [];
	/** Whether no fold may touch each block id (see BlockText.fixed), as first interned. */
	readonly fixed: boolean[] = [];

	constructor(imageTokens?: (data: string) => number) {
		this.imageTokens = imageTokens;
	}

	/**
	 * The shape of a request made of `messages` as a provider is sent them (see unsent; a leading
	 * system message, if any, is the first block). `marked` holds the messages after which an
	 * extension placed a breakpoint of its own (wire.ts).
	 */
	shape(messages: readonly MessageLike[], marked?: ReadonlySet<number>): RequestShape {
		const ids: number[] = [];
		const tokens: number[] = [];
		const keys: number[] = [];
		// Pi marks the leading system prompt (and tools); a later system message (a tool or prompt
		// change a model takes mid-conversation) is part of the conversation and gets no mark of its own.
		let systemEnd = 0;
		let leading = true;
		let prev = -1;
		const extra: number[] = [];
		for (let m = 0; m < messages.length; m++) {
			const message = messages[m];
			if (unsent(message)) continue;
			if (message.role !== "system") leading = false;
			for (const block of messageBlockTexts(message)) {
				const interned = block.image === undefined ? block.text : `${block.text}${block.image}`;
				let id = this.byText.get(interned);
				if (id === undefined) {
					id = this.search.length;
					this.byText.set(interned, id);
					this.search.push(block.search);
					const image = block.image !== undefined && this.imageTokens ? this.imageTokens(block.image) : undefined;
					this.tokens.push(image ?? tokensOf(block.text));
					this.fixed.push(block.fixed === true);
				}
				const pair = pairKey(prev, id);
				let key = this.prefixes.get(pair);
				if (key === undefined) {
					key = this.prefixes.size;
					this.prefixes.set(pair, key);
				}
				ids.push(id);
				tokens.push(this.tokens[id]);
				keys.push(key);
				prev = key;
			}
			if (leading) systemEnd = ids.length;
			else if (marked?.has(m) && ids.length > systemEnd) extra.push(ids.length);
		}
		const own = systemEnd > 0 && systemEnd < ids.length ? [systemEnd, ids.length] : [ids.length];
		const breakpoints = extra.length === 0 ? own : [...new Set([...own, ...extra])].sort((a, b) => a - b);
		return { ids, tokens, keys, breakpoints };
	}
}
