/**
 * The working set: which blocks the model is still using, read from what it wrote. A block is used
 * by a model message (its text and tool-call arguments) that repeats one of the block's distinctive
 * strings (identifiers, paths and numbers of six or more characters), since a model refers to what it
 * works on by name. Each repeated string counts for the newest earlier tool result, argument or
 * user message that holds it: keeping that one raw keeps the string in the context. A call that
 * changes a file also uses its working copy, even when each edit repeats only the previous edit's
 * strings: of the successful `read`s of it and, for a partial edit, the calls that wrote it whole
 * (the newest COPIES), the one holding most of the edit's strings (the part of a file read in parts
 * that the edit changes), the newest on a tie; where no `read` tool read it, the newest shell command
 * that printed it (file-calls.ts says which, whatever the tools are called). And a model
 * message whose prose cites a step of a plan the model wrote (see plan-phrases.ts) uses the newest
 * `write` holding that step, up to CITED_PLAN_TOKENS. A block's use age is how many model messages
 * back its latest use, or its arrival, was. Pure: messages and blocks in, ages out.
 */
import { type Block, isModelReply, type MessageLike, resultAfter } from "./block.ts";
import { distinctiveTokens } from "./distinctive.ts";
import { type FileCalls, type FileCallsMemo, fileCallsOf } from "./file-calls.ts";
import { cites, citingProse, stepPhrases } from "./plan-phrases.ts";

/** Model messages looked back at for uses: no policy may ask for more. */
export const USE_LOOKBACK = 24;

/**
 * The largest plan a citation of its steps uses, in tokens: a step's plain words are a weaker sign of
 * use than an identifier, and past some size keeping a document raw on them costs more than
 * recalling it. Large enough for the 12.6k-token plan issue 24 names, which the model implemented
 * over a hundred requests; the corpus replays alike at 4,000 and 16,000 (no plan of theirs is cited
 * between), and dexter-v3, a public session beyond the corpus whose 9-12k-token plans the model cites
 * by step, measured 7.3 points below plain Pi uncapped against 6.9 at 4,000 (its visibility counts no
 * citation in plain words).
 */
export const CITED_PLAN_TOKENS = 16000;

/** Distinctive strings of blocks seen before, by block object (a BlockMemo serves one while its message is unchanged). */
type TokensMemo = WeakMap<Block, Set<string>>;

/** Distinctive strings of `block`, memoized. */
function tokensOf(block: Block, memo: TokensMemo): Set<string> {
	let set = memo.get(block);
	if (!set) {
		set = distinctiveTokens(block.text);
		memo.set(block, set);
	}
	return set;
}

/** True for a block whose strings a use can count for: the model's own prose and thinking only repeat them. */
function holds(block: Block): boolean {
	return block.kind !== "text" && block.kind !== "thinking";
}

/** A model message as the positions of its blocks, `from` to `to`. */
interface Model {
	msg: number;
	from: number;
	to: number;
}

/**
 * What useOf keeps between requests over one conversation: each block's distinctive strings, by
 * block object; the index of where each string is held over the blocks of the previous request;
 * and what each model message in the lookback used. The index is brought up to date from the first
 * position whose block object changed (a BlockMemo serves the same object while its message is
 * unchanged), and a model message's uses are kept while every block up to its own is unchanged
 * (they depend on nothing later), so a request that only appended messages costs the strings of its
 * new blocks, not those of the whole conversation. Owned by one caller.
 */
export class UseMemo {
	readonly tokens: TokensMemo = new WeakMap();
	/** The files each call read or changed, by block object. */
	private readonly files: FileCallsMemo = new WeakMap();
	/** The step phrases of each `write` call's document (see stepPhrases), by block object. */
	private readonly steps = new WeakMap<Block, readonly string[]>();
	/** Each step phrase → the positions in `indexed` of the `write` calls holding it, ascending. */
	private readonly stepHolders = new Map<string, number[]>();
	/** The blocks `holders` indexes, by position; undefined while an update is under way. */
	private indexed: Block[] | undefined = [];
	/** Each string → the positions in `indexed` of the blocks holding it, ascending. */
	private readonly holders = new Map<string, number[]>();
	/**
	 * Each file's last two path parts (see fileKey) → the positions in `indexed` of calls holding a copy
	 * of it (printing it, or writing it whole), ascending.
	 */
	private readonly copies = new Map<string, number[]>();
	/** What the model message whose blocks start at a position used (see usesOf), and where they end. */
	private readonly uses = new Map<number, { to: number; uses: Map<number, string[]> }>();

	/** Brings the index and the kept uses up to date with `blocks`, the blocks of `messages`. */
	update(messages: readonly MessageLike[], blocks: readonly Block[]): void {
		const prev = this.indexed;
		// Taken while the update runs: one that throws leaves an index the next call rebuilds.
		this.indexed = undefined;
		if (!prev) {
			this.holders.clear();
			this.stepHolders.clear();
			this.copies.clear();
			this.uses.clear();
		}
		const before = prev ?? [];
		let same = 0;
		const shared = Math.min(before.length, blocks.length);
		while (same < shared && before[same] === blocks[same]) same++;
		// Positions from `same` on leave the index, newest first: each is then its strings' last position.
		for (let i = before.length - 1; i >= same; i--) {
			if (!holds(before[i])) continue;
			for (const t of tokensOf(before[i], this.tokens)) unindex(this.holders, t);
			for (const phrase of this.steps.get(before[i]) ?? []) unindex(this.stepHolders, phrase);
			// Indexed with its facts in hand: the memo holds them (no reading of the new messages).
			const facts = this.files.get(before[i]);
			if (facts) for (const key of copyKeys(before[i], facts)) unindex(this.copies, key);
		}
		for (let i = same; i < blocks.length; i++) {
			const block = blocks[i];
			if (!holds(block)) continue;
			for (const t of tokensOf(block, this.tokens)) index(this.holders, t, i);
			for (const phrase of this.stepsOf(messages, block)) index(this.stepHolders, phrase, i);
			if (block.kind === "toolArgs")
				for (const key of copyKeys(block, fileCallsOf(messages, block, this.files))) index(this.copies, key, i);
		}
		for (const [from, kept] of this.uses) if (kept.to >= same) this.uses.delete(from);
		this.indexed = blocks.slice();
	}

	/**
	 * What the model message at `model` used, in the blocks of the latest update: the position of each
	 * block a string it repeats counts for (the newest earlier one holding it), with those strings in
	 * the order the message says them.
	 */
	usesOf(
		messages: readonly MessageLike[],
		blocks: readonly Block[],
		model: Model,
	): ReadonlyMap<number, readonly string[]> {
		const { from, to } = model;
		const known = this.uses.get(from);
		if (known?.to === to) return known.uses;
		const said = new Set<string>();
		for (let i = from; i <= to; i++) {
			const kind = blocks[i].kind;
			if (kind === "text" || kind === "toolArgs") for (const t of tokensOf(blocks[i], this.tokens)) said.add(t);
		}
		const uses = new Map<number, string[]>();
		for (const token of said) {
			const at = newestBefore(this.holders.get(token), from);
			if (at < 0) continue;
			const list = uses.get(at);
			if (list) list.push(token);
			else uses.set(at, [token]);
		}
		if (this.stepHolders.size > 0) {
			let text = "";
			for (let i = from; i <= to; i++) if (blocks[i].kind === "text") text += `\n${blocks[i].text}`;
			const prose = citingProse(text);
			for (const [phrase, list] of this.stepHolders) {
				if (!cites(prose, phrase)) continue;
				const at = newestBefore(list, from);
				if (at >= 0 && !uses.has(at) && blocks[at].tokens <= CITED_PLAN_TOKENS) uses.set(at, []);
			}
		}
		for (let i = from; i <= to; i++) {
			const block = blocks[i];
			if (block.kind !== "toolArgs") continue;
			for (const change of fileCallsOf(messages, block, this.files).changes) {
				const copies = this.copiesOf(messages, blocks, normalPath(change.path), from, !change.whole);
				// A whole-file write holds every string itself: it used the newest copy. A partial edit used the
				// copy holding most of its strings (the part of a file read in parts that it changes; the newest
				// on a tie), for the strings it shares with it.
				let at = copies[0] ?? -1;
				let shared: string[] = [];
				if (!change.whole) {
					// The strings of the file's path name the file, not a part of it: a write's arguments hold
					// them where a read's text does not, so they weigh nothing in the choice.
					const named = distinctiveTokens(change.path);
					const own = tokensOf(block, this.tokens);
					let most = -1;
					for (const copy of copies) {
						const held = tokensOf(blocks[copy], this.tokens);
						const common = [...own].filter((t) => held.has(t));
						const weight = common.filter((t) => !named.has(t)).length;
						if (weight > most) [at, shared, most] = [copy, common, weight];
					}
				}
				if (at < 0 || uses.has(at)) continue;
				uses.set(at, shared);
			}
		}
		this.uses.set(from, { to, uses });
		return uses;
	}

	/** The step phrases of `block` when it is a `write` call's arguments (see stepPhrases), memoized. */
	private stepsOf(messages: readonly MessageLike[], block: Block): readonly string[] {
		let phrases = this.steps.get(block);
		if (phrases) return phrases;
		phrases = [];
		if (block.kind === "toolArgs" && block.toolName === "write") {
			const content = messages[block.msg]?.content;
			const args = Array.isArray(content) ? (content[block.part] as { arguments?: unknown })?.arguments : undefined;
			const { path, content: text } = (args ?? {}) as { path?: unknown; content?: unknown };
			if (typeof path === "string" && typeof text === "string") phrases = stepPhrases(path, text);
		}
		this.steps.set(block, phrases);
		return phrases;
	}

	/**
	 * The copies of the file at `path` (see normalPath) the model had before position `before`, newest
	 * first, up to COPIES: the successful result of each `read` of it, and with `written` the arguments
	 * of each call that wrote it whole and succeeded; where no `read` tool read it, the newest shell
	 * command that printed it (see fileCallsOf) as well: a few lines a shell shows of a file the model
	 * read whole are no copy to edit from.
	 */
	private copiesOf(
		messages: readonly MessageLike[],
		blocks: readonly Block[],
		path: string,
		before: number,
		written: boolean,
	): number[] {
		const calls = this.copies.get(fileKey(path)) ?? [];
		const reads: number[] = [];
		const writes: number[] = [];
		let shell = -1;
		for (let k = newestIndexBefore(calls, before); k >= 0 && reads.length + writes.length < COPIES; k--) {
			const i = calls[k];
			const facts = fileCallsOf(messages, blocks[i], this.files);
			if (facts.reads === undefined) {
				const wrote = written && facts.changes.some((c) => c.whole && samePath(normalPath(c.path), path));
				if (wrote && resultOf(blocks, i, before) >= 0) writes.push(i);
				continue;
			}
			if ((facts.shell && shell >= 0) || !samePath(normalPath(facts.reads), path)) continue;
			const at = resultOf(blocks, i, before);
			if (at < 0) continue;
			if (facts.shell) shell = at;
			else reads.push(at);
		}
		const copies = reads.length === 0 && shell >= 0 ? [...writes, shell] : [...reads, ...writes];
		return copies.sort((a, b) => b - a);
	}

	/** Forgets the uses of model messages that start before `from`: they left the lookback. */
	forgetBefore(from: number): void {
		for (const at of this.uses.keys()) if (at < from) this.uses.delete(at);
	}
}

/** The most copies of one file an edit is matched against (see copiesOf). */
const COPIES = 8;

/**
 * The fileKeys of the files the call whose arguments are `block` holds a copy of: the file it prints
 * (a read, or a shell command printing one file), and each file it writes whole.
 */
function copyKeys(block: Block, facts: FileCalls): string[] {
	const keys: string[] = [];
	if (facts.reads !== undefined && block.toolCallId !== undefined) keys.push(fileKey(normalPath(facts.reads)));
	for (const change of facts.changes) if (change.whole) keys.push(fileKey(normalPath(change.path)));
	return keys;
}

/** How the model used each block, by block position (see useOf). */
export interface Use {
	/** Model messages after the newest one that used the block or first saw it; Infinity beyond the lookback. */
	ages: number[];
	/** The strings each block was used for over the lookback (absent: none). */
	strings: Map<number, Set<string>>;
}

/** Each block's use age (see useOf), and what each model message of the lookback used, newest first. */
function lookback(
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	memo: UseMemo,
): { ages: number[]; used: ReadonlyMap<number, readonly string[]>[] } {
	const ages: number[] = new Array(blocks.length).fill(Number.POSITIVE_INFINITY);
	// The model's messages, newest first, as the positions of their blocks.
	const models: Model[] = [];
	for (let i = blocks.length - 1; i >= 0 && models.length <= USE_LOOKBACK; i--) {
		const msg = blocks[i].msg;
		if (!isModelReply(messages[msg])) continue;
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
	memo.update(messages, blocks);
	const used: ReadonlyMap<number, readonly string[]>[] = [];
	const count = Math.min(models.length, USE_LOOKBACK);
	for (let age = 0; age < count; age++) {
		const uses = memo.usesOf(messages, blocks, models[age]);
		for (const at of uses.keys()) if (ages[at] > age) ages[at] = age;
		used.push(uses);
	}
	if (count > 0) memo.forgetBefore(models[count - 1].from);
	return { ages, used };
}

/**
 * Each block's use age, by block position: the number of model messages after the newest one that
 * used it (0: the latest model message did), or Infinity when none of the last USE_LOOKBACK did. A
 * block's arrival counts as a use by the first model message that saw it, so a result the model has
 * not referred to yet is as fresh as one it just used. `memo` carries the strings, their index and
 * each model message's uses over from the previous request (see UseMemo).
 */
export function useAges(messages: readonly MessageLike[], blocks: readonly Block[], memo = new UseMemo()): number[] {
	return lookback(messages, blocks, memo).ages;
}

/** Each block's use (see useAges) and the strings it was used for over the lookback. */
export function useOf(messages: readonly MessageLike[], blocks: readonly Block[], memo = new UseMemo()): Use {
	const { ages, used } = lookback(messages, blocks, memo);
	const strings = new Map<number, Set<string>>();
	for (const uses of used) {
		for (const [at, tokens] of uses) {
			const set = strings.get(at);
			if (set) for (const token of tokens) set.add(token);
			else strings.set(at, new Set(tokens));
		}
	}
	return { ages, strings };
}

/**
 * A path as written, in one spelling: Pi's own `@` and `file://` prefixes off, `/` for `\\`, a
 * drive letter in lower case, no empty or `.` folders, a folder and the `..` after it cancelled. A
 * `..` left at the start stays (outside the working folder).
 */
function normalPath(path: string): string {
	const plain = path
		.replace(/^@/, "")
		.replace(/^file:\/\//, "")
		.replaceAll("\\", "/");
	const spelled = plain.replace(/^([A-Za-z]):\//, (_, drive: string) => `${drive.toLowerCase()}:/`);
	const out: string[] = [];
	spelled.split("/").forEach((part, i) => {
		if (part === "." || (part === "" && i > 0)) return;
		const last = out[out.length - 1];
		if (part === ".." && out.length > 0 && last !== ".." && last !== "" && last !== "~" && !/^[a-z]:$/.test(last))
			out.pop();
		else out.push(part);
	});
	return out.join("/");
}

/** True for a path from the root or a drive (a home folder's `~/` is neither: its root is unknown here). */
function rooted(path: string): boolean {
	return path.startsWith("/") || /^[a-z]:\//.test(path);
}

/**
 * True when two paths, each spelled as normalPath spells it, name one file: equal, or one rooted
 * (`/repo/src/a.ts`) or in the home folder (`~/repo/src/a.ts`) and the other ending it with a folder
 * and a name at least (`src/a.ts`, `repo/src/a.ts`): a bare name (`a.ts`) may be any folder's, and
 * two relative paths, or two rooted ones, must be equal.
 */
function samePath(x: string, y: string): boolean {
	if (x === y) return true;
	const relative = (p: string) => !rooted(p) && !p.startsWith("~/");
	const ends = (whole: string, part: string) =>
		part.includes("/") && !part.startsWith("../") && whole.endsWith(`/${part}`);
	const home = (p: string) => (p.startsWith("~/") ? p.slice(2) : undefined);
	const [hx, hy] = [home(x), home(y)];
	if (hx !== undefined && rooted(y)) return ends(y, hx);
	if (hy !== undefined && rooted(x)) return ends(x, hy);
	if (relative(x) === relative(y)) return false;
	return relative(y) ? ends(x, y) : ends(y, x);
}

/** A path's last two parts (`src/a.ts` of `/repo/src/a.ts`): two paths samePath takes for one file share it. */
function fileKey(path: string): string {
	const parts = path.split("/");
	return parts.slice(-2).join("/");
}

/** The position of the successful result of the call whose arguments are at `call`, before `before`; else -1. */
function resultOf(blocks: readonly Block[], call: number, before: number): number {
	const j = resultAfter(blocks, call, before);
	return j >= 0 && blocks[j].isError !== true ? j : -1;
}

/** Adds position `at`, past every position indexed, to `key`'s list. */
function index(lists: Map<string, number[]>, key: string, at: number): void {
	const list = lists.get(key);
	if (list) list.push(at);
	else lists.set(key, [at]);
}

/** Takes the last position off `key`'s list. */
function unindex(lists: Map<string, number[]>, key: string): void {
	const list = lists.get(key);
	list?.pop();
	if (list?.length === 0) lists.delete(key);
}

/** The largest position in ascending `list` below `limit`, or -1. */
function newestBefore(list: readonly number[] | undefined, limit: number): number {
	if (!list) return -1;
	const k = newestIndexBefore(list, limit);
	return k < 0 ? -1 : list[k];
}

/** The index in ascending `list` of its largest position below `limit`, or -1. */
function newestIndexBefore(list: readonly number[], limit: number): number {
	let lo = 0;
	let hi = list.length - 1;
	let found = -1;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		if (list[mid] < limit) {
			found = mid;
			lo = mid + 1;
		} else hi = mid - 1;
	}
	return found;
}
