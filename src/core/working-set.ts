/**
 * The working set: which blocks the model is still using, read from what it wrote. A block is used
 * by a model message (its text and tool-call arguments) that repeats one of the block's distinctive
 * strings (identifiers, paths and numbers of six or more characters), since a model refers to what it
 * works on by name. Each repeated string counts for the newest earlier tool result, argument or
 * user message that holds it: keeping that one raw keeps the string in the context. A block's use
 * age is how many model messages back its latest use, or its arrival, was. Pure: messages and blocks
 * in, ages out.
 */
import type { Block, MessageLike } from "./block.ts";

const TOKEN = /[A-Za-z0-9_$][A-Za-z0-9_$./-]*[A-Za-z0-9_$]/g;

/** The distinct distinctive strings of a text: six or more characters with a digit, `_`, `/`, `.`, `$` or an inner capital. */
export function distinctiveTokens(text: string): Set<string> {
	const out = new Set<string>();
	for (const match of text.matchAll(TOKEN)) {
		const token = match[0];
		if (token.length >= 6 && (/[\d_/.$]/.test(token) || /[a-z][A-Z]/.test(token))) out.add(token);
	}
	return out;
}

/** Model messages looked back at for uses: no policy may ask for more. */
export const USE_LOOKBACK = 24;

/** Distinctive strings of blocks seen before, by block object (a BlockMemo serves one while its message is unchanged). */
export type TokensMemo = WeakMap<Block, Set<string>>;

/** Distinctive strings of `block`, memoized. */
function tokensOf(block: Block, memo: TokensMemo): Set<string> {
	let set = memo.get(block);
	if (!set) {
		set = distinctiveTokens(block.text);
		memo.set(block, set);
	}
	return set;
}

/** How the model used each block, by block position (see useOf). */
export interface Use {
	/** Model messages after the newest one that used the block or first saw it; Infinity beyond the lookback. */
	ages: number[];
	/** The strings each block was used for over the lookback (absent: none). */
	strings: Map<number, Set<string>>;
}

/**
 * Each block's use, by block position: its age, the number of model messages after the newest one
 * that used it (0: the latest model message did), or Infinity when none of the last USE_LOOKBACK
 * did, and the strings it was used for. A block's arrival counts as a use by the first model message
 * that saw it, so a result the model has not referred to yet is as fresh as one it just used.
 */
export function useOf(
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	memo: TokensMemo = new WeakMap(),
): Use {
	const ages: number[] = new Array(blocks.length).fill(Number.POSITIVE_INFINITY);
	const strings = new Map<number, Set<string>>();
	// The model's messages, newest first, as the positions of their blocks.
	const models: { msg: number; from: number; to: number }[] = [];
	for (let i = blocks.length - 1; i >= 0 && models.length <= USE_LOOKBACK; i--) {
		const msg = blocks[i].msg;
		if (messages[msg]?.role !== "assistant") continue;
		const last = models[models.length - 1];
		if (last && last.msg === msg) last.from = i;
		else models.push({ msg, from: i, to: i });
	}
	// Arrival: a block after model message `age` (and before the next) was first seen by the one after it.
	let seen = 0;
	for (let i = blocks.length - 1; i >= 0 && seen < models.length; i--) {
		while (seen < models.length && i < models[seen].from) seen++;
		if (seen >= models.length) break;
		ages[i] = Math.max(0, i > models[seen].to ? seen - 1 : seen);
	}
	// Where each string is held: the positions of the blocks holding it, ascending.
	const holders = new Map<string, number[]>();
	for (let i = 0; i < blocks.length; i++) {
		// The model's own prose and thinking only repeat what it used; the strings come from elsewhere.
		if (blocks[i].kind === "text" || blocks[i].kind === "thinking") continue;
		for (const t of tokensOf(blocks[i], memo)) {
			const list = holders.get(t);
			if (list) list.push(i);
			else holders.set(t, [i]);
		}
	}
	for (let age = 0; age < Math.min(models.length, USE_LOOKBACK); age++) {
		const { from, to } = models[age];
		const said = new Set<string>();
		for (let i = from; i <= to; i++) {
			const kind = blocks[i].kind;
			if (kind === "text" || kind === "toolArgs") for (const t of tokensOf(blocks[i], memo)) said.add(t);
		}
		// Each string counts for the newest earlier block holding it.
		for (const token of said) {
			const at = newestBefore(holders.get(token), from);
			if (at < 0) continue;
			if (ages[at] > age) ages[at] = age;
			const set = strings.get(at);
			if (set) set.add(token);
			else strings.set(at, new Set([token]));
		}
	}
	return { ages, strings };
}

/** The largest position in ascending `list` below `limit`, or -1. */
function newestBefore(list: readonly number[] | undefined, limit: number): number {
	if (!list) return -1;
	let lo = 0;
	let hi = list.length - 1;
	let found = -1;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		if (list[mid] < limit) {
			found = list[mid];
			lo = mid + 1;
		} else hi = mid - 1;
	}
	return found;
}
