/**
 * One turn of the fold pipeline, pure: `runTurn` linearizes the messages once and works from those
 * blocks throughout: re-apply frozen layers, build the view, ask the policy, lower its commands,
 * screen them for code collisions (`planTurn`), number the event and make its records, hand them to
 * the adapter to persist, commit the event to the registry, and render the frozen ops and the event
 * as new contents. The pieces are exported for tests and tools that stop halfway.
 */
import { type ApplyMemo, type ApplyResult, applyOps, type ContentResult, type FoldOp, withContents } from "./apply.ts";
import { type ArgsCache, type Block, type BlockMemo, linearize, type MessageLike, type ModelKey } from "./block.ts";
import { readStarts } from "./call-facts.ts";
import type { FoldCommand, PolicyView } from "./contract.ts";
import type { FoldRecord, FoldRegistry, Screened } from "./fold-registry.ts";
import { contentKey, lower } from "./lower.ts";
import { buildView, type FrozenMemo, frozenFor, type ViewInput } from "./view.ts";

/** A policy: reads a view, returns commands. */
export type Policy = (view: PolicyView) => FoldCommand[];

/**
 * Inputs of one pass: the view's inputs but the blocks and frozen ops the pass works out itself,
 * plus the registry, the policy and the memos linearize and frozenFor keep across turns.
 */
export interface PassInput extends Omit<ViewInput, "blocks" | "frozen"> {
	registry: FoldRegistry;
	policy: Policy;
	/** User messages before the array (removed by compaction), for session-absolute turns. */
	turnBase?: number;
	/** Tool-call argument texts from earlier turns (see ArgsCache). */
	argsCache?: ArgsCache;
	/** Blocks of messages from earlier turns, reused while a message is unchanged (see BlockMemo). */
	blockMemo?: BlockMemo;
	/** The registry's say on those blocks (see FrozenMemo); only with `blockMemo`. */
	frozenMemo?: FrozenMemo;
	/** Hashes a block text, to tell a frozen block edited to the same length (the adapter passes node:crypto). */
	sha256?: (text: string) => string;
	/** The model the request goes to: a reply's thinking from another one is not sent (see messageBlocks). */
	model?: ModelKey;
}

/** What one pass decided. `event` is empty when no fold event fires. */
export interface TurnPlan {
	blocks: Block[];
	frozen: FoldOp[];
	/** Frozen ids whose block no longer has its recorded extent; they render raw. */
	stale: string[];
	view: PolicyView;
	commands: FoldCommand[];
	/** The file line each read result from an offset starts at (see readStarts); empty when nothing folds. */
	starts: ReadonlyMap<string, number>;
	event: FoldOp[];
	collisions: Screened["collisions"];
	refused: { id: string; reason: string }[];
}

/** Plans one turn without side effects. */
export function planTurn(input: PassInput): TurnPlan {
	const blocks = linearize(input.messages, input.turnBase, input.argsCache, input.blockMemo, input.model);
	const frozen = frozenFor(blocks, input.registry, input.frozenMemo, input.sha256);
	// Spelled out: spreading `input` into a literal that adds keys costs microseconds in V8.
	const view = buildView({
		messages: input.messages,
		blocks,
		frozen,
		window: input.window,
		usage: input.usage,
		neverCacheRead: input.neverCacheRead,
		cache: input.cache,
		keepRecent: input.keepRecent,
		reserve: input.reserve,
		requestBase: input.requestBase,
		config: input.config,
		savings: input.savings,
		calls: input.calls,
		use: input.use,
		lastReply: input.lastReply,
	});
	const commands = input.policy(view);
	// Only an event's digests and records number a read's lines from its call's offset.
	const starts = commands.some((c) => c.type === "fold") ? readStarts(input.messages, blocks, input.calls) : new Map();
	const lowered = lower(
		commands,
		input.messages,
		blocks,
		(id) => input.registry.plannable(id),
		input.registry.knownContent(),
		starts,
	);
	const screened = input.registry.screen(lowered.ops);
	return {
		blocks,
		frozen: frozen.ops,
		stale: frozen.stale,
		view,
		commands,
		starts,
		event: screened.ops,
		collisions: screened.collisions,
		refused: lowered.refused,
	};
}

/**
 * A turn's rewrite as new contents by message index: frozen bytes first, then the committed
 * event's ops for ids not already frozen. `memo` carries verdicts and bytes over from the previous
 * turn (see ApplyMemo).
 */
function renderContents(
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	frozen: readonly FoldOp[],
	event: readonly FoldOp[],
	memo?: ApplyMemo,
): ContentResult {
	if (event.length === 0) return applyOps(messages, frozen, blocks, memo);
	const taken = new Set(frozen.map((op) => op.id));
	return applyOps(messages, [...frozen, ...event.filter((op) => !taken.has(op.id))], blocks, memo);
}

/**
 * Renders a turn (see renderContents) as the messages to send, without mutating `messages`: the
 * whole-array form for tests and the bench (the engine applies renderContents in place).
 */
export function renderTurn(
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	frozen: readonly FoldOp[],
	event: readonly FoldOp[],
	memo?: ApplyMemo,
): ApplyResult {
	const { contents, applied, refused } = renderContents(messages, blocks, frozen, event, memo);
	return { messages: withContents(messages, contents), applied, refused };
}

/**
 * The fold records of a planned event, numbered `seq`. `sha256` hashes a block text (the adapter
 * passes node:crypto; the core never hashes by itself).
 */
export function recordsFor(plan: TurnPlan, seq: number, sha256?: (text: string) => string): FoldRecord[] {
	const byId = new Map(plan.blocks.map((b) => [b.id, b] as const));
	const records: FoldRecord[] = [];
	for (const op of plan.event) {
		const block = byId.get(op.id);
		if (!block) continue;
		records.push({
			id: op.id,
			code: op.code,
			chars: block.text.length,
			sha256: sha256?.(block.text),
			seq,
			kind: block.kind,
			tool: block.toolName,
			turn: block.turn,
			key: block.kind === "toolResult" ? contentKey(block.text) : undefined,
			from: plan.starts.get(block.id),
		});
	}
	return records;
}

/** A planned fold event, numbered, with its records: what the adapter persists before it commits. */
export interface PendingEvent {
	seq: number;
	records: FoldRecord[];
	/** The turn's plan: its blocks (the one linearization of its messages), view and event. */
	plan: TurnPlan;
}

/** What runTurn asks of its caller. */
export interface TurnHooks {
	/** Called with the plan before anything is committed (for notices of stale ids and collisions). */
	planned?: (plan: TurnPlan) => void;
	/** Persists an event's records, then its layer, durably; throws to reject it. Called only when an event fires. */
	persist: (event: PendingEvent) => void;
	/** Called when the event numbered `seq` was rejected: the turn then goes out with the frozen ops alone. */
	rejected: (seq: number, error: unknown) => void;
	/** Hashes a block text for the records (the adapter passes node:crypto; the core never hashes by itself). */
	sha256?: (text: string) => string;
	/** Carries applied ops over from the previous turn (see ApplyMemo). */
	applyMemo?: ApplyMemo;
}

/** What one turn did: its plan, the event committed (empty: none fired, or it was rejected) and the rewrite. */
export interface Turn {
	plan: TurnPlan;
	event: FoldOp[];
	/** The new content of each rewritten message, by index (see renderContents). */
	contents: Map<number, unknown[]>;
}

/**
 * One turn over one linearization of `input.messages`: plans it (planTurn), holds the blocks whose
 * codes collide raw, and when an event fires numbers it, makes its records and hands them to
 * `hooks.persist`; an event is committed to the registry only once persisted, and any failure on the
 * way rejects it whole. Renders the frozen ops and the committed event from the plan's blocks,
 * without mutating `input.messages`. Side effects are the registry's and the hooks' alone.
 */
export function runTurn(input: PassInput, hooks: TurnHooks): Turn {
	const plan = planTurn(input);
	hooks.planned?.(plan);
	for (const c of plan.collisions) input.registry.holdRaw(c.id);
	let event: FoldOp[] = [];
	if (plan.event.length > 0) {
		const seq = input.registry.seq + 1;
		try {
			const records = recordsFor(plan, seq, hooks.sha256);
			hooks.persist({ seq, records, plan });
			commitEvent(input.registry, plan, records, seq);
			event = plan.event;
		} catch (error) {
			hooks.rejected(seq, error);
		}
	}
	const { contents } = renderContents(input.messages, plan.blocks, plan.frozen, event, hooks.applyMemo);
	return { plan, event, contents };
}

/** Commits a planned event to the registry in memory: records first, then the frozen layer. */
export function commitEvent(registry: FoldRegistry, plan: TurnPlan, records: readonly FoldRecord[], seq: number): void {
	for (const record of records) registry.addRecord(record);
	registry.commitLayer(seq, plan.event);
}
