/**
 * Building the policy's view of one request: per-block cost as it will be sent (frozen folds
 * applied), eligibility, first-delivery holds, and lazily computed savings.
 */
import type { FoldOp } from "./apply.ts";
import { type Block, isModelReply, type MessageLike } from "./block.ts";
import { type CallFactsMemo, readStarts } from "./call-facts.ts";
import type { CacheFacts, PolicyView, ViewBlock } from "./contract.ts";
import type { FoldRegistry } from "./fold-registry.ts";
import { foldedCost, savingOf } from "./lower.ts";
import { supersededReads } from "./supersede.ts";
import { estTokens, tokenBound } from "./tokens.ts";
import { type Use, UseMemo, useAges, useOf } from "./use-ages.ts";

/**
 * The index of the newest model reply (see isModelReply: one that failed or was aborted answered
 * nothing), -1 when there is none. With `lastReply`, the time of the newest reply Pi stored, the
 * newest reply of that time: an assistant message after it that Pi never stored (one another
 * extension's context handler added) answered nothing. Without a reply of that time, the newest.
 */
function lastAssistantOf(messages: readonly MessageLike[], lastReply?: number): number {
	let newest = -1;
	for (let i = messages.length - 1; i >= 0; i--) {
		if (!isModelReply(messages[i])) continue;
		if (lastReply === undefined || messages[i].timestamp === lastReply) return i;
		if (newest < 0) newest = i;
	}
	return newest;
}

/**
 * Which blocks no fold may take now, given the index of the latest assistant message: what the model
 * has not seen yet (tool results after it, a parallel batch held together, and the arguments of any
 * call whose result is held or missing), and every part of a model message of the current turn that
 * holds a signed call (Gemini's `thoughtSignature`): Google asks for the current turn's calls back
 * unchanged until a user message ends the turn, and the thinking and text beside a call belong to the
 * step it signs. The delivered calls and the signed messages are gathered on the first question.
 */
class Holds {
	private readonly lastAssistant: number;
	private readonly blocks: readonly Block[];
	/** By call id, the latest message holding a result of it that the model has seen. */
	private delivered: Map<string, number> | undefined;
	private signed: Set<number> | undefined;

	constructor(lastAssistant: number, blocks: readonly Block[]) {
		this.lastAssistant = lastAssistant;
		this.blocks = blocks;
	}

	/** True when no fold may take `block` now (see Holds). */
	held(block: Block): boolean {
		if (block.kind === "toolResult") return block.msg > this.lastAssistant;
		if (block.kind !== "toolArgs" && block.kind !== "text" && block.kind !== "thinking") return false;
		if (this.signedSteps().has(block.msg)) return true;
		if (block.kind !== "toolArgs") return false;
		if (!this.delivered) {
			this.delivered = new Map();
			for (const b of this.blocks) {
				if (b.kind === "toolResult" && b.msg <= this.lastAssistant && b.toolCallId !== undefined)
					this.delivered.set(b.toolCallId, b.msg);
			}
		}
		// A result after the call's own message answers it, not one of an earlier call with the same id.
		const answered = block.toolCallId === undefined ? undefined : this.delivered.get(block.toolCallId);
		return !(answered !== undefined && answered > block.msg);
	}

	/** The model messages of the current turn (the newest block's) that hold a signed call. */
	private signedSteps(): Set<number> {
		if (!this.signed) {
			this.signed = new Set();
			const turn = this.blocks.at(-1)?.turn;
			for (let i = this.blocks.length - 1; i >= 0 && this.blocks[i].turn === turn; i--)
				if (this.blocks[i].signed) this.signed.add(this.blocks[i].msg);
		}
		return this.signed;
	}
}

/**
 * Ids no fold may take now: what the model has not seen yet (tool results after the latest
 * assistant message, a parallel batch held together, and the arguments of any call whose result is
 * held or missing), and every part of a current-turn model message holding a signed call. The set
 * form of what a view's Holds answers block by block, for tests and the bench.
 */
export function heldIds(messages: readonly MessageLike[], blocks: readonly Block[]): Set<string> {
	const holds = new Holds(lastAssistantOf(messages), blocks);
	const held = new Set<string>();
	for (const block of blocks) if (holds.held(block)) held.add(block.id);
	return held;
}

/** What frozenFor finds: the frozen ops in force, and the registry's say on each block by position. */
export interface Frozen {
	/** The frozen ops that still apply, in block order. */
	ops: FoldOp[];
	/** The op in force on each block (undefined: none). */
	byBlock: (FoldOp | undefined)[];
	/** Frozen ids whose block no longer has its recorded extent: they render raw. */
	stale: string[];
	/** Each block's cost as it will be sent: its folded cost while an op is in force. */
	tokens: number[];
	/** Each block's eligibility: a durable id, a foldable kind, and plannable in the registry. */
	eligible: boolean[];
}

/**
 * What frozenFor keeps between requests over one conversation, by block position: the block there,
 * and what the registry (`registry` as of `version`) made of it. A position is reused while it holds
 * the same block object and the registry is unchanged; a BlockMemo serves a block object again only
 * while its message is unchanged, so a reused position is what a fresh look would find. Owned by one caller.
 */
export class FrozenMemo {
	registry: FoldRegistry | undefined;
	version = -1;
	blocks: (Block | undefined)[] = [];
	ops: (FoldOp | undefined)[] = [];
	stale: boolean[] = [];
	tokens: number[] = [];
	eligible: boolean[] = [];
}

/**
 * The registry's say on each block: the frozen op in force (present, and with the extent recorded at
 * fold time, and its fold-time sha256 given `sha256`, see hasExtent; else it is stale), the cost as sent, and eligibility. `memo` carries the
 * answers for unchanged blocks over from the previous request (see FrozenMemo).
 */
export function frozenFor(
	blocks: readonly Block[],
	registry: FoldRegistry,
	memo?: FrozenMemo,
	sha256?: (text: string) => string,
): Frozen {
	const reuse = memo?.registry === registry && memo.version === registry.version;
	const ops: FoldOp[] = [];
	const byBlock: (FoldOp | undefined)[] = [];
	const stale: string[] = [];
	const tokens: number[] = [];
	const eligible: boolean[] = [];
	for (let i = 0; i < blocks.length; i++) {
		const block = blocks[i];
		if (reuse && memo.blocks[i] === block) {
			const op = memo.ops[i];
			if (op) ops.push(op);
			else if (memo.stale[i]) stale.push(block.id);
			byBlock[i] = op;
			tokens[i] = memo.tokens[i];
			eligible[i] = memo.eligible[i];
			continue;
		}
		let op = block.durable ? registry.frozenOp(block.id) : undefined;
		const lost = op !== undefined && !registry.hasExtent(block.id, block.text, sha256);
		if (lost) {
			stale.push(block.id);
			op = undefined;
		} else if (op) ops.push(op);
		byBlock[i] = op;
		// A block no request carries (see messageBlocks) costs nothing folded either.
		tokens[i] = op && block.tokens > 0 ? foldedCost(block, op) : block.tokens;
		eligible[i] = block.durable && block.foldable && registry.plannable(block.id);
		if (memo) {
			memo.blocks[i] = block;
			memo.ops[i] = op;
			memo.stale[i] = lost;
			memo.tokens[i] = tokens[i];
			memo.eligible[i] = eligible[i];
		}
	}
	if (memo) {
		memo.registry = registry;
		memo.version = registry.version;
		memo.blocks.length = blocks.length;
	}
	// After a change (an event, a compaction's records) every block was looked at again: the registry
	// lets go of the texts of blocks that left.
	if (!reuse) registry.retainMatched(new Set(ops.map((op) => op.id)));
	return { ops, byBlock, stale, tokens, eligible };
}

/** A block's saving (see ViewBlock.saving), and once asked for, its provider's count (ViewBlock.providerSaving). */
export interface BlockSaving {
	saving: number;
	provider?: number;
}

/**
 * Savings of blocks seen in earlier requests, by block object. A BlockMemo serves a block object again
 * only while its message is unchanged, so a block edited in place (same id, new text) gets a new
 * object and its saving is worked out again. Owned by one caller.
 */
export type SavingsMemo = WeakMap<Block, BlockSaving>;

/** Inputs of buildView. `savings` memoizes savings across turns (see SavingsMemo). */
export interface ViewInput {
	messages: readonly MessageLike[];
	blocks: readonly Block[];
	/** What frozenFor found for `blocks`. */
	frozen: Frozen;
	window: number;
	/** Context tokens as Pi reports them; null or undefined means use the local estimate. */
	usage?: number | null;
	neverCacheRead: boolean;
	cache?: CacheFacts;
	/** Tokens Pi's compaction cut keeps raw (see PolicyView.keepRecent). */
	keepRecent?: number;
	/** Pi's reserveTokens while its compaction is on (see PolicyView.reserve). */
	reserve?: number;
	/** Assistant messages compaction removed before `messages` (see PolicyView.requests). */
	requestBase?: number;
	config: PolicyView["config"];
	savings?: SavingsMemo;
	/** Call facts of blocks from earlier requests (see CallFactsMemo). */
	calls?: CallFactsMemo;
	/** Distinctive strings of blocks from earlier requests and where they are held (see UseMemo). */
	use?: UseMemo;
	/** The time of the newest model reply Pi stored, when the session can say (see lastAssistantOf). */
	lastReply?: number;
}

/** What the view blocks of one request share: its messages and blocks, and what is worked out on first read. */
class ViewShared {
	/** The request's messages as they were when the view was built (the array may be edited later). */
	readonly messages: readonly MessageLike[];
	/**
	 * What the model has not seen yet. Block ids are unique (as linearize gives them), so a block is
	 * held exactly when heldIds holds its id.
	 */
	readonly holds: Holds;
	readonly superseded: Set<string>;
	readonly savings: SavingsMemo;
	private readonly blocks: readonly Block[];
	private readonly useMemo: UseMemo;
	private ages: number[] | undefined;
	private use: Use | undefined;
	private starts: Map<string, number> | undefined;
	private readonly calls: CallFactsMemo | undefined;

	constructor(input: ViewInput, superseded: Set<string>) {
		this.messages = input.messages.slice();
		this.blocks = input.blocks;
		this.holds = new Holds(lastAssistantOf(input.messages, input.lastReply), input.blocks);
		this.superseded = superseded;
		this.savings = input.savings ?? new WeakMap();
		this.useMemo = input.use ?? new UseMemo();
		this.calls = input.calls;
	}

	/** The file line the read result `id` starts at, when its call read from an offset (see readStarts). */
	readStart(id: string): number | undefined {
		this.starts ??= readStarts(this.messages, this.blocks, this.calls);
		return this.starts.get(id);
	}

	/** The use age of the block at `index`, working out every block's on the first question. */
	useAge(index: number): number {
		this.ages ??= useAges(this.messages, this.blocks, this.useMemo);
		return this.ages[index];
	}

	/** The strings the block at `index` was used for over the lookback, sorted (empty: none). */
	usedStrings(index: number): readonly string[] {
		this.use ??= useOf(this.messages, this.blocks, this.useMemo);
		return [...(this.use.strings.get(index) ?? [])].sort();
	}
}

const ELIGIBLE = 1;
const FROZEN = 2;

/**
 * A view block: its block, cost and gates, and what it shares with the rest of the view. Held and
 * saving are computed on first read (most turns never read a saving) and the saving is memoized by
 * block object (SavingsMemo). One is made per block per request, so its fields are declared only (no
 * field initializers).
 */
class LazyViewBlock implements ViewBlock {
	declare readonly tokens: number;
	private declare readonly block: Block;
	private declare readonly flags: number;
	private declare readonly shared: ViewShared;
	private declare readonly index: number;

	constructor(block: Block, tokens: number, flags: number, shared: ViewShared, index: number) {
		this.block = block;
		this.tokens = tokens;
		this.flags = flags;
		this.shared = shared;
		this.index = index;
	}

	get id(): string {
		return this.block.id;
	}

	get kind(): ViewBlock["kind"] {
		return this.block.kind;
	}

	get eligible(): boolean {
		return (this.flags & ELIGIBLE) !== 0;
	}

	get frozen(): boolean {
		return (this.flags & FROZEN) !== 0;
	}

	get held(): boolean {
		return this.shared.holds.held(this.block);
	}

	get superseded(): boolean {
		return this.shared.superseded.has(this.block.id);
	}

	get toolName(): string | undefined {
		return this.block.toolName;
	}

	get useAge(): number {
		return this.shared.useAge(this.index);
	}

	get usedStrings(): readonly string[] {
		return this.shared.usedStrings(this.index);
	}

	get saving(): number {
		return this.flags === ELIGIBLE ? this.savingEntry().saving : 0;
	}

	get providerSaving(): number {
		if (this.flags !== ELIGIBLE) return 0;
		const entry = this.savingEntry();
		entry.provider ??= providerScaled(entry.saving, this.block.text);
		return entry.provider;
	}

	/** The memo's entry for this block, its saving worked out the first time. */
	private savingEntry(): BlockSaving {
		const memo = this.shared.savings;
		let entry = memo.get(this.block);
		if (entry === undefined) {
			entry = {
				saving: savingOf(this.block, this.shared.messages[this.block.msg], this.shared.readStart(this.block.id)),
			};
			memo.set(this.block, entry);
		}
		return entry;
	}
}

/**
 * The least scale providerScaled applies: text at least a sixth of whose characters are outside ASCII
 * (a script other than Latin). A few symbols in English text (a test runner's ✔) are within the
 * error of chars/4 itself, and scaling them moved a corpus session's backstop compaction later for
 * no real gain (codex-civitas-employer 0.858x to 0.867x plain Pi, whose replay counts chars/4).
 */
const LEAST_SCALE = 1.5;

/**
 * `saving` of a block of `text` as a provider may count it: scaled by what the text counts with a
 * character outside ASCII as a token of its own (tokenBound) over what it counts at chars/4, where
 * that is LEAST_SCALE or more. CJK text counts about four times its chars/4; ASCII text is not scaled.
 */
function providerScaled(saving: number, text: string): number {
	if (saving <= 0) return saving;
	const scale = tokenBound(text) / Math.max(1, estTokens(text.length));
	return scale >= LEAST_SCALE ? Math.ceil(saving * scale) : saving;
}

/** The model's replies (assistant messages) in `messages`: one per request made. */
function repliesIn(messages: readonly MessageLike[]): number {
	let n = 0;
	for (const message of messages) if (message.role === "assistant") n++;
	return n;
}

/** The policy view of one request. Savings are computed only when a policy reads them. */
export function buildView(input: ViewInput): PolicyView {
	const shared = new ViewShared(input, supersededReads(input.messages, input.blocks, input.calls));
	const blocks: ViewBlock[] = [];
	let local = 0;
	let masked = 0;
	const { byBlock, tokens, eligible } = input.frozen;
	for (let i = 0; i < input.blocks.length; i++) {
		local += tokens[i];
		masked += input.blocks[i].tokens - tokens[i];
		const flags = (eligible[i] ? ELIGIBLE : 0) | (byBlock[i] ? FROZEN : 0);
		blocks.push(new LazyViewBlock(input.blocks[i], tokens[i], flags, shared, i));
	}
	const reported = input.usage;
	const usage = typeof reported === "number" && Number.isFinite(reported) && reported >= 0 ? reported : local;
	const { window, neverCacheRead, cache, config } = input;
	const view: PolicyView = cache
		? { blocks, usage, window, neverCacheRead, cache, config }
		: { blocks, usage, window, neverCacheRead, config };
	view.masked = masked;
	if (input.messages[0]?.role === "compactionSummary") view.compacted = true;
	view.requests = (input.requestBase ?? 0) + repliesIn(input.messages);
	if (input.keepRecent !== undefined) view.keepRecent = input.keepRecent;
	if (input.reserve !== undefined) view.reserve = input.reserve;
	return view;
}
