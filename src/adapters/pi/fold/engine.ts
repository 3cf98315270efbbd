/**
 * The engine: owns one session branch's fold state and runs the per-turn pipeline of the
 * `context` hook. Commit order: a fold event's records, then its layer, are appended to the
 * session before its bytes are frozen and applied; any append failure rejects the whole event.
 */
import { ApplyMemo, type FoldOp } from "../../../core/apply.ts";
import { type ArgsCache, type Block, BlockMemo, type MessageLike, type ModelKey } from "../../../core/block.ts";
import { blockLine } from "../../../core/block-line.ts";
import { wireProbes } from "../../../core/cache-advice.ts";
import { frontierAnchors } from "../../../core/cache-breakpoints.ts";
import type { CallFactsMemo } from "../../../core/call-facts.ts";
import type { CacheFacts, FoldCommand, PolicyView } from "../../../core/contract.ts";
import type { FoldRecord } from "../../../core/fold-registry.ts";
import { FoldRegistry } from "../../../core/fold-registry.ts";
import { type PassSnapshot, passRows } from "../../../core/latest-request.ts";
import { type PassInput, type Policy, planTurn, runTurn, type TurnPlan } from "../../../core/pass.ts";
import { UseMemo } from "../../../core/use-ages.ts";
import { FrozenMemo, type SavingsMemo } from "../../../core/view.ts";
import { errorText } from "../error-text.ts";
import { blockFacts } from "./block-facts.ts";
import { compactedBaseOf, ENTRY_VERSION, type FoldEntry, rebuildRegistry, skippedText } from "./persistence.ts";
import { SentRequest } from "./sent-request.ts";
import { sha256 } from "./sha256.ts";

/** What the engine needs from its host. */
export interface EngineDeps {
	/** The knobs the policy reads (see policyConfigOf). */
	config: () => PolicyView["config"];
	policy: Policy;
	/** Appends one `contextfold.fold` entry durably; throws on failure. */
	append: (entry: FoldEntry) => void;
	/**
	 * Called with each event's records before they are appended (seed index), with the messages and
	 * the turn's blocks (their one linearization); may throw, which rejects the event.
	 */
	beforeCommit?: (
		seq: number,
		records: readonly FoldRecord[],
		messages: readonly MessageLike[],
		blocks: readonly Block[],
	) => void;
	/** Called when an event is rejected after beforeCommit succeeded (retracts its seed-index record). */
	rejected?: (seq: number, reason: string) => void;
	/** Failures worked around: announced once per distinct message and listed in the status. */
	warn: (message: string) => void;
	/** Debug notices, shown only with CONTEXTFOLD_DEBUG. */
	debug: (message: string) => void;
	/**
	 * True when the session file holds more than one block under durable id `id` (a provider that
	 * repeats its ids); never throws.
	 */
	shared?: (id: string) => boolean;
	/**
	 * Called once a fold event is committed, with the tokens it kept out of the request, the codes of
	 * its folded blocks, and a way to probes for their raw text, worked out only when asked (cache
	 * telemetry, the wire watchdog: wireProbes).
	 */
	committed?: (seq: number, masked: number, codes: readonly string[], probes: () => string[]) => void;
	/** Called once the agent's unfold of these codes is recorded (the advisor expects the rewrite). */
	unfolded?: (codes: readonly string[]) => void;
}

/** Per-request facts the hook reads from Pi. */
export interface TurnFacts {
	window: number | undefined;
	usage: number | null | undefined;
	/** From cache telemetry: two responses came back and none read from the cache. */
	neverCacheRead: boolean;
	/** From cache telemetry: whether the cache is cold anyway. */
	cache?: CacheFacts;
	/** Tokens a compaction keeps raw (Pi's `compaction.keepRecentTokens`). */
	keepRecent?: number;
	/** Pi's `compaction.reserveTokens` while its compaction is on; undefined when it is off. */
	reserve?: number;
	/** The model the request goes to (a reply's thinking from another one is not sent). */
	model?: ModelKey;
	/** No new fold event or compaction request: the model could not read a folded block back. */
	hold?: boolean;
	/**
	 * Asked when the policy would fold: false holds this request's folds (its compaction request
	 * stands), as the request carries no fold tool to read a digest back yet.
	 */
	mayFold?: () => boolean;
	/** The time of the newest model reply Pi stored on the branch (core lastAssistantOf). */
	lastReply?: number;
}

/** `policy` with its folds left out while `mayFold` says no (see TurnFacts.mayFold). */
function gated(policy: Policy, mayFold: (() => boolean) | undefined): Policy {
	if (!mayFold) return policy;
	return (view) => {
		const commands = policy(view);
		if (!commands.some((c) => c.type === "fold") || mayFold()) return commands;
		return commands.filter((c) => c.type !== "fold");
	};
}

/** What answersRequest reads of a reply. */
interface ReplyLike {
	stopReason?: string;
	usage?: { input?: number; cacheRead?: number; cacheWrite?: number };
}

/**
 * True when `reply` shows that the provider read its request's prompt (see FoldEngine.answered): it
 * reports prompt tokens, or it is neither an error nor stopped (an abort before the first token, like
 * a refused request, reports none).
 */
export function answersRequest(reply: ReplyLike): boolean {
	const usage = reply.usage;
	if ((usage?.input ?? 0) + (usage?.cacheRead ?? 0) + (usage?.cacheWrite ?? 0) > 0) return true;
	return reply.stopReason !== "error" && reply.stopReason !== "aborted";
}

/**
 * Fold events whose every block another extension changed right after the fold, before the engine
 * stops opening new ones for the session (see FoldEngine.notice): one could be a one-off edit.
 */
export const FUTILE_EVENTS = 2;

/** The fold engine of one session branch. */
export class FoldEngine extends SentRequest {
	registry = new FoldRegistry();
	/** User messages that compaction removed from live history; keeps turns session-absolute. */
	turnBase = 0;
	/** Model replies that compaction removed from live history; keeps the session's request count whole. */
	requestBase = 0;
	/** Set when the latest pass found usage past the budget with nothing worth folding. */
	overBudget: Extract<FoldCommand, { type: "compact" }> | undefined;
	/**
	 * The latest request's frontiers, as its fold state stood before its event: the tool calls whose
	 * results its provider request marks as cache breakpoints (core cache-breakpoints.ts).
	 */
	frontiers: readonly string[] = [];
	/**
	 * The newest fold event while no provider has answered a request carrying it (see answered): a
	 * request Pi retries after an error is still that event's first on the wire, and keeps the event
	 * request's frontiers, so it reads the cache up to them as the refused one would have.
	 */
	private unanswered: number | undefined;
	private savings: SavingsMemo = new WeakMap();
	private use = new UseMemo();
	private argsCache: ArgsCache = new Map();
	private blockMemo = new BlockMemo();
	private applyMemo = new ApplyMemo();
	private calls: CallFactsMemo = new WeakMap();
	private frozenMemo = new FrozenMemo();
	private lastView: PolicyView | undefined;
	private warnedStale = new Set<string>();
	/** The contents the latest request's rewrite put in its messages, by index (see restoreReused). */
	private written: ReadonlyMap<number, unknown> = new Map();
	/** The newest event this engine committed: its number and blocks (see notice). */
	private newest: { seq: number; ids: ReadonlySet<string> } | undefined;
	/** Events whose every block changed after the fold (another extension rewrote them). */
	private undone = new Set<number>();
	/** Set once FUTILE_EVENTS events were undone whole: no fold event for the rest of the session. */
	private futile = false;
	/** Folded blocks whose text the latest pass found changed since the fold (sent raw, see notice). */
	private staleNow = new Set<string>();
	/** The latest preview and what it was of, so footer refreshes before the next request plan once. */
	private previewed: { key: string; snapshot: PassSnapshot } | undefined;

	private readonly deps: EngineDeps;

	constructor(deps: EngineDeps) {
		super();
		this.deps = deps;
	}

	/**
	 * Rebuilds state from the current branch's entries (session start, tree navigation); true when it
	 * skipped fold entries, records or ops it could not read (their blocks go out raw until they fold
	 * again).
	 */
	rebuild(entries: readonly unknown[]): boolean {
		this.reset();
		const { registry, skipped } = rebuildRegistry(entries);
		this.registry = registry;
		this.rebase(entries);
		const skippedNote = skippedText(skipped);
		if (skippedNote) this.deps.warn(skippedNote);
		return skippedNote !== undefined;
	}

	/**
	 * Takes the turn and request bases from the branch's latest compaction (see compactedBaseOf). The
	 * compacted context is rewritten whole by its first request: no event waits for an answer.
	 */
	rebase(branch: readonly unknown[]): void {
		const base = compactedBaseOf(branch);
		this.turnBase = base.turns;
		this.requestBase = base.requests;
		this.unanswered = undefined;
	}

	/** Forgets all state (before a rebuild, or when a rebuild fails: prior folds then render raw). */
	reset(): void {
		this.registry = new FoldRegistry();
		this.turnBase = 0;
		this.requestBase = 0;
		this.savings = new WeakMap();
		this.use = new UseMemo();
		this.argsCache = new Map();
		this.blockMemo = new BlockMemo();
		this.applyMemo = new ApplyMemo();
		this.calls = new WeakMap();
		this.frozenMemo = new FrozenMemo();
		this.lastBlocks = [];
		this.lastMessages = [];
		this.rawContents = new Map();
		this.written = new Map();
		this.overBudget = undefined;
		this.frontiers = [];
		this.unanswered = undefined;
		this.lastView = undefined;
		this.lastPass = undefined;
		this.previewed = undefined;
		this.warnedStale = new Set();
		this.staleNow = new Set();
		this.newest = undefined;
		this.undone = new Set();
		this.futile = false;
	}

	/** Forgets the latest request's status rows: the context changed under them (a compaction, an unfold). */
	forgetPass(): void {
		this.lastPass = undefined;
		this.previewed = undefined;
	}

	/**
	 * Whether the policy, run on the latest request's view with `usage` tokens (the next request's
	 * size, at least) and the cache still warm, would start a fold event: then the next request
	 * rewrites the cached suffix anyway. False before any request.
	 */
	foldDue(usage: number): boolean {
		const view = this.lastView;
		if (!view) return false;
		const next: PolicyView = {
			...view,
			usage: Math.max(view.usage, usage),
			cache: view.cache?.warm === false ? { ...view.cache, warm: true } : view.cache,
		};
		return this.deps.policy(next).some((c) => c.type === "fold");
	}

	/** True when the latest request sent the folded block `id` raw, its text changed since the fold. */
	changedSinceFold(id: string): boolean {
		return this.staleNow.has(id);
	}

	/** One pass's input over `messages` under `policy`, with the engine's state and memos (see planTurn). */
	private input(messages: readonly MessageLike[], facts: TurnFacts, policy: Policy): PassInput {
		return {
			messages,
			registry: this.registry,
			policy,
			window: facts.window ?? 0,
			usage: facts.usage,
			neverCacheRead: facts.neverCacheRead,
			cache: facts.cache,
			keepRecent: facts.keepRecent,
			reserve: facts.reserve,
			config: this.deps.config(),
			savings: this.savings,
			use: this.use,
			turnBase: this.turnBase,
			requestBase: this.requestBase,
			argsCache: this.argsCache,
			blockMemo: this.blockMemo,
			calls: this.calls,
			frozenMemo: this.frozenMemo,
			sha256,
			model: facts.model,
			lastReply: facts.lastReply,
		};
	}

	/**
	 * The status rows of `messages` as the next request would send them, its own fold event aside: for
	 * the user's view while no request's rows are at hand (before this process sent any, or after a
	 * compaction). Nothing is committed, warned or changed in `messages`. Kept until the next request,
	 * a compaction or a reset, and served again for the same conversation (its length, its last
	 * message's time), window, model and fold state: every footer refresh before a request asks for it.
	 * `model` is the one the next request goes to (another's thinking is not sent, an image goes to a
	 * model without image input as a placeholder).
	 */
	preview(messages: readonly MessageLike[], window: number, model?: ModelKey): PassSnapshot {
		const last = messages.at(-1) as { timestamp?: unknown } | undefined;
		const key = `${messages.length}:${String(last?.timestamp)}:${window}:${this.registry.version}:${JSON.stringify(model ?? null)}`;
		if (this.previewed?.key === key) return this.previewed.snapshot;
		const facts: TurnFacts = { window, usage: undefined, neverCacheRead: false, ...(model ? { model } : {}) };
		const plan = planTurn(this.input(messages, facts, () => []));
		const snapshot = {
			rows: passRows(
				plan.view.blocks,
				plan.blocks.map((b) => b.tokens),
				new Set(),
			),
			usage: plan.view.usage,
			window,
			requests: plan.view.requests,
		};
		this.previewed = { key, snapshot };
		return snapshot;
	}

	/**
	 * Whether the pass over `messages` with `facts` would start a fold event: asked before the request
	 * that carries them, while Pi can still change what that request declares. Nothing is committed,
	 * warned or changed in `messages`; the memos it fills serve that request's own pass.
	 */
	foldsNext(messages: readonly MessageLike[], facts: TurnFacts): boolean {
		return planTurn(this.input(messages, facts, this.deps.policy)).event.length > 0;
	}

	/**
	 * Gives back the content the previous request's rewrite replaced in a message object that this
	 * request carries again at its place. Pi hands every request fresh copies, but another extension's
	 * `context` handler before this one may hand on objects it keeps (a memoizing transform): the rewrite
	 * happens in place (Pi keeps its system messages where they are only for the same objects), so those
	 * objects came back holding digests, which read as blocks changed since their fold (sent raw, said
	 * so, and after two such events no more folding). Only a content this engine wrote is given back.
	 */
	restoreReused(messages: MessageLike[]): void {
		for (const [i, raw] of this.rawContents) {
			const message = messages[i];
			if (message !== undefined && message === this.lastMessages[i] && message.content === this.written.get(i))
				message.content = raw;
		}
	}

	/**
	 * The per-turn pipeline: one pass over one linearization of `messages` (core runTurn), whose
	 * event is persisted here before it is committed. Rewrites `messages` in place (same array, same
	 * message objects, new content) and returns true when anything was folded. Throws only what the
	 * caller must treat as "send this turn raw".
	 */
	run(messages: MessageLike[], facts: TurnFacts): boolean {
		this.room = undefined;
		let indexed = false;
		const policy: Policy = facts.hold || this.futile ? () => [] : gated(this.deps.policy, facts.mayFold);
		const { plan, event, contents } = runTurn(this.input(messages, facts, policy), {
			planned: (planned) => this.notice(planned),
			persist: ({ seq, records, plan }) => {
				this.deps.beforeCommit?.(seq, records, messages, plan.blocks);
				indexed = true;
				this.deps.append({ v: ENTRY_VERSION, kind: "records", seq, records });
				this.deps.append({ v: ENTRY_VERSION, kind: "layer", seq, ops: plan.event });
			},
			rejected: (seq, error) => this.rejected(seq, error, indexed),
			sha256,
			applyMemo: this.applyMemo,
		});
		if (event.length > 0) this.committed(plan, event);
		const raw = new Map<number, unknown>();
		for (const [i, content] of contents) {
			raw.set(i, messages[i].content);
			messages[i].content = content;
		}
		this.lastBlocks = plan.blocks;
		this.lastMessages = messages.slice();
		this.rawContents = raw;
		this.written = contents;
		// After an event the view's frozen marks are stale; the next event is a step of growth away anyway.
		this.lastView = event.length > 0 ? undefined : plan.view;
		this.previewed = undefined;
		// Until a provider answers a request carrying the newest event, its request's frontiers stand:
		// a retry reads the cache up to them as the refused request would have.
		if (event.length > 0 || this.unanswered !== this.registry.seq) {
			// The newest event before this turn's: its records carry its number (a rebuilt registry's too).
			const before = this.registry.seq - (event.length > 0 ? 1 : 0);
			const registry = this.registry;
			this.frontiers = frontierAnchors(
				plan.blocks,
				plan.view.blocks,
				before > 0 ? (id) => registry.record(id)?.seq === before : undefined,
			);
			this.unanswered = event.length > 0 ? this.registry.seq : undefined;
		}
		this.lastPass = {
			view: plan.view,
			blocks: plan.blocks,
			event: new Set(event.map((op) => op.id)),
		};
		this.overBudget = plan.commands.find((c) => c.type === "compact");
		return contents.size > 0;
	}

	/** A provider answered the latest request (a reply that is no error): its fold event is on the wire. */
	answered(): void {
		this.unanswered = undefined;
	}

	/**
	 * Announces the plan's stale ids (the first time any goes stale; later ones go to the debug line) and
	 * code collisions (their blocks stay raw). When every block of the newest event has changed since,
	 * for the FUTILE_EVENTS-th event, another extension rewrites old messages after each fold, so a fold
	 * only rewrites the prompt cache: no new event comes for the rest of the session, said once.
	 */
	private notice(plan: TurnPlan): void {
		// Most passes find none: no new set then.
		if (plan.stale.length > 0 || this.staleNow.size > 0) this.staleNow = new Set(plan.stale);
		const newest = this.newest;
		// Most passes find no stale block: the set's size says so before any lookup.
		if (
			newest &&
			this.staleNow.size >= newest.ids.size &&
			!this.undone.has(newest.seq) &&
			[...newest.ids].every((id) => this.staleNow.has(id))
		) {
			this.undone.add(newest.seq);
			if (this.undone.size >= FUTILE_EVENTS && !this.futile) {
				this.futile = true;
				this.deps.warn(
					`context-fold: the blocks of ${this.undone.size} fold events all changed right after they were folded (another extension rewrites old messages), so a fold would only rewrite the prompt cache: no new fold events this session`,
				);
			}
		}
		const said = this.warnedStale.size > 0;
		const stale = plan.stale.filter((id) => !this.warnedStale.has(id));
		for (const id of stale) this.warnedStale.add(id);
		// A block on another turn than the one folded under its id, or under an id the session file gives
		// more than one block, is another block that got the same id (a provider that repeats its ids, the
		// first occurrence compacted away): nothing changed, and it is said so.
		const turns = stale.length > 0 ? new Map(plan.blocks.map((b) => [b.id, b.turn] as const)) : undefined;
		const reused = stale.filter(
			(id) =>
				turns?.get(id) !== (this.registry.record(id)?.turn ?? turns?.get(id)) || this.deps.shared?.(id) === true,
		);
		const fresh = stale.filter((id) => !reused.includes(id));
		if (reused.length > 0)
			this.deps.warn(
				`context-fold: a later block carries the id of the block folded as #${this.registry.record(reused[0])?.code ?? reused[0]}${reused.length > 1 ? ` (and ${reused.length - 1} more)` : ""}: the provider repeats response or call ids, so that block is sent raw and never folds; the code still reads the block folded`,
			);
		if (said && fresh.length > 0)
			this.deps.debug(`context-fold: changed since folded, sent raw: ${fresh.join(", ")}`);
		// One notice a session: an extension that rewrites old messages makes many folds stale at once.
		else if (fresh.length === 1)
			this.deps.warn(`context-fold: ${this.lineOf(fresh[0])} changed since it was folded; it is sent raw`);
		else if (fresh.length > 1) {
			// One block a line: a block's line may hold any separator (a command's `;` or `|`).
			const named = fresh.slice(0, 3).map((id) => `\n  ${this.lineOf(id)}`);
			const more = fresh.length > 3 ? `\n  … ${fresh.length - 3} more` : "";
			this.deps.warn(
				`context-fold: ${fresh.length} folded blocks changed since they were folded; they are sent raw (does another extension rewrite old messages?):${named.join("")}${more}`,
			);
		}
		for (const c of plan.collisions) {
			this.deps.warn(
				`context-fold: fold code ${c.code} of ${c.id} collides with ${c.holder}; that block stays raw for this session`,
			);
		}
	}

	/** A folded block as the user reads it, `#code what (size)` (see blockLine); the block id when no record holds it. */
	private lineOf(id: string): string {
		const record = this.registry.record(id);
		return record ? blockLine(blockFacts(record, this, undefined)) : id;
	}

	/** Tells cache telemetry and the debug line about a committed event. */
	private committed(plan: TurnPlan, event: readonly FoldOp[]): void {
		// The event was numbered one past the newest layer, and committing it made it the newest.
		const seq = this.registry.seq;
		const ids = new Set(event.map((op) => op.id));
		const saved = plan.view.blocks.reduce((n, b) => n + (ids.has(b.id) ? b.saving : 0), 0);
		const probes = () =>
			wireProbes(
				plan.blocks.filter((b) => ids.has(b.id)).map((b) => b.text),
				plan.blocks.filter((b) => !ids.has(b.id)).map((b) => b.text),
			);
		try {
			this.deps.committed?.(
				seq,
				saved,
				event.map((op) => op.code),
				probes,
			);
		} catch (error) {
			this.deps.warn(`context-fold: cache telemetry missed fold event ${seq}: ${errorText(error)}`);
		}
		this.newest = { seq, ids };
		const count = event.length;
		this.deps.debug(
			`context-fold: fold event ${seq}: ${count} block${count === 1 ? "" : "s"}, ~${saved} tokens saved`,
		);
	}

	/** Announces a rejected event, and retracts its seed-index record when one was written. */
	private rejected(seq: number, error: unknown, indexed: boolean): void {
		this.deps.warn(`context-fold: fold event rejected, this turn goes out without it: ${errorText(error)}`);
		if (!indexed) return;
		try {
			this.deps.rejected?.(seq, errorText(error));
		} catch (retractError) {
			this.deps.warn(`context-fold: could not retract seed-index record ${seq}: ${errorText(retractError)}`);
		}
	}

	/** Records the agent's unfold of `ids` durably, then releases them from the next request on. */
	unfold(ids: readonly string[]): void {
		if (ids.length === 0) return;
		this.deps.append({ v: ENTRY_VERSION, kind: "unfold", ids: [...ids] });
		// The room an unfold asked for (see unfoldRoom), less what these put back.
		const room = this.room;
		for (const id of ids) {
			this.registry.unfold(id);
			if (room) room.left -= room.back.get(id) ?? 0;
		}
		// The latest request's rows still show these blocks folded: the user's view previews the next request instead.
		this.forgetPass();
		try {
			this.deps.unfolded?.(ids.map((id) => this.registry.record(id)?.code ?? id));
		} catch (error) {
			this.deps.warn(`context-fold: the cache advisor missed an unfold: ${errorText(error)}`);
		}
	}
}
