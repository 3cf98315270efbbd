/**
 * When the model is told about recall_folded and unfold. Both are registered inactive: a session with
 * nothing folded, nothing compacted by context-fold and no handoff seed declares neither, so it
 * costs what plain Pi costs. They join the active tools (added to whatever is active, never removing
 * anything) once there is something to recall, and stay for the rest of the session: a removal would
 * change the declarations again.
 *
 * Pi 1.6 fixes a request's declarations before the `context` hook folds it: the tools a run's first
 * request declares are settled after `before_agent_start`, those of a later request in the run once
 * the previous turn has ended (and after any compaction Pi runs in between, whose `session_compact`
 * comes first). So at `before_agent_start`, at the `message_end` of the last tool result a
 * response asked for, and at that of a response without tool calls while a follow-up or steering
 * message is queued (Pi delivers it in the same run), the engine plans the next request's pass on the conversation as Pi will send
 * it, and when that pass would fold, the tools are activated for the very request that carries the
 * first digest. No `turn_end` handler: Pi rebuilds a preview of the whole branch for each one an
 * extension registers, every turn. Should the plan miss (a steering message that arrived after it,
 * the cache going cold in between, another extension's `context` handler making the conversation
 * larger than the session holds it), the fold pass holds that request's folds and activates the
 * tools, so the first digest goes out with them in the next request: no digest is ever sent
 * without a tool to read it back. A compaction that recorded blocks, a resumed branch with fold
 * records, a branch whose branch summary names codes another branch folded, and a session seeded
 * from a parent session (by /fold-handoff's seed message, or a seed naming its parent passed as a
 * prompt, from that prompt's request on) activate them at once (a session Pi forked or cloned names
 * a parent too, but no code of it).
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../../../core/block.ts";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import type { ParentSession } from "../fold/parent-session.ts";
import type { Ledger } from "../fold/session-ledger.ts";
import { FOLD_TOOLS } from "./codes.ts";
import { registerRecallFolded } from "./recall-folded.ts";
import { registerUnfold } from "./unfold.ts";

/** What the fold tools and their activation read. */
export interface FoldToolsDeps {
	engine: FoldEngine;
	ledger: Ledger;
	parent: () => ParentSession | undefined;
	/** Whether the pass over `messages`, the next request's conversation, would start a fold event. */
	foldsNext: (messages: MessageLike[], ctx: ExtensionContext) => boolean;
	/** Told when the tools join the active tools: the next request Pi builds declares them (the wire watchdog). */
	declared: () => void;
	/** Failures worked around: announced once per distinct message and listed in the status. */
	warn: (message: string) => void;
}

/** The conversation of the next request as Pi holds it now (its system messages aside). */
function nextMessages(ctx: ExtensionContext): MessageLike[] {
	const messages = ctx.sessionManager.buildSessionProjection().messages as unknown as MessageLike[];
	return messages.filter((m) => m.role !== "system");
}

/**
 * A fold code as a branch summary may name it (a tag's or a pointer's): `#` and eight base-36
 * characters, or six for a code context-fold 0.5.1 gave.
 */
const CODE_MENTION = /#([0-9a-z]{8}|[0-9a-z]{6})(?![0-9a-z])/g;

/**
 * True when a branch summary on the branch names a code that a branch of this session folded: Pi's
 * summary of the branch a `/tree` move left may copy the pointers of context-fold's digests and
 * compaction summary, which recall_folded serves from the other branch.
 */
function summaryNamesFolds(ctx: ExtensionContext, ledger: Ledger): boolean {
	const branch = ctx.sessionManager.getBranch() as { type?: unknown; summary?: unknown }[];
	return branch.some(
		(entry) =>
			entry.type === "branch_summary" &&
			typeof entry.summary === "string" &&
			Array.from(entry.summary.matchAll(CODE_MENTION)).some((m) => ledger.recordOf(m[1]) !== undefined),
	);
}

/** What the fold pass asks of the fold tools. */
export interface FoldTools {
	/**
	 * True when the tools are settled but not all active (the tool selection, `--tools`, or another
	 * extension left them out): the model could not read a folded block back, so nothing new folds.
	 */
	withheld(): boolean;
	/**
	 * Asked by a pass that would fold: true when the request it rewrites declares the tools (or they
	 * are settled otherwise); false when they were never activated, which activates them now, so
	 * that the next request declares them and its pass folds.
	 */
	mayFold(): boolean;
}

/** Registers recall_folded and unfold inactive, and activates them once the session has something to recall. */
export function registerFoldTools(pi: ExtensionAPI, deps: FoldToolsDeps): FoldTools {
	const { engine, ledger, parent, foldsNext, declared, warn } = deps;
	registerRecallFolded(pi, engine, ledger, parent);
	registerUnfold(pi, engine, parent, ledger, warn);

	// Whether this session branch has had its activation, or needs none (the tools are active already,
	// or the user's tool selection left them out): from then on nothing is checked, and nothing is added
	// again should another extension remove them.
	let settled = false;
	const activate = (): void => {
		settled = true;
		const active = pi.getActiveTools();
		const missing = FOLD_TOOLS.filter((name) => !active.includes(name));
		if (missing.length === 0) return;
		pi.setActiveTools([...active, ...missing]);
		declared();
	};
	// A parent's codes reach this session through a handoff seed (its message, or a seed passed as a
	// prompt): only a seeded session has a parent to read (a session Pi forked or cloned names its
	// parent too, but carries no seed, and declares nothing for it: a rewrite).
	let summarized = false;
	const recallable = (): boolean => parent() !== undefined || summarized || engine.registry.allRecords().length > 0;
	const guarded = (step: () => void): void => {
		try {
			step();
		} catch (error) {
			warn(`context-fold: recall_folded and unfold could not be activated: ${errorText(error)}`);
		}
	};
	// On a session's start and on a /tree move, Pi has restored the active tools the branch declared.
	const restore = (_event: unknown, ctx: ExtensionContext): void =>
		guarded(() => {
			summarized = summaryNamesFolds(ctx, ledger);
			const active = pi.getActiveTools();
			const registered = new Set(pi.getAllTools().map((tool) => tool.name));
			settled = FOLD_TOOLS.every((name) => active.includes(name) || !registered.has(name));
			if (!settled && recallable()) activate();
		});
	const onceRecallable = (): void =>
		guarded(() => {
			if (!settled && recallable()) activate();
		});
	/** Activates the tools when the next request, carrying `messages`, would fold. */
	const ahead = (ctx: ExtensionContext, extra: MessageLike[] = []): void =>
		guarded(() => {
			if (!settled && foldsNext([...nextMessages(ctx), ...extra], ctx)) activate();
		});

	pi.on("session_start", restore);
	pi.on("session_tree", restore);
	pi.on("session_compact", onceRecallable);
	pi.on("before_agent_start", (event, ctx) => {
		const start: MessageLike =
			event.messageType === "custom"
				? (event.message as unknown as MessageLike)
				: {
						role: "user",
						content: [{ type: "text", text: event.prompt }, ...(event.images ?? [])],
						timestamp: Date.now(),
					};
		// A seed passed as this prompt linked its parent (index.ts, before this handler): declared at once.
		onceRecallable();
		ahead(ctx, [start]);
		return undefined;
	});
	// The tool results the latest response still waits for. Pi emits a message_end for each tool call
	// of a response (a call it did not run, or one cut off by the output limit, gets an error result),
	// and none after a failed or aborted response. The last of them completes the next request's
	// conversation; Pi runs message_end handlers before it stores the message, so it is added to the
	// conversation the plan reads. A batch whose every tool asked to end the run is planned too: a
	// queued follow-up continues it without a before_agent_start. So does a response without tool
	// calls while a message is queued: Pi fixes the declarations of the request that carries it before
	// it emits that message, so the plan reads the conversation up to the response.
	let awaited = 0;
	pi.on("message_end", (event, ctx) =>
		guarded(() => {
			if (settled) return;
			const message = event.message as { role?: unknown; stopReason?: unknown; content?: unknown };
			if (message.role === "assistant") {
				const failed = message.stopReason === "error" || message.stopReason === "aborted";
				const parts = Array.isArray(message.content) ? (message.content as { type?: unknown }[]) : [];
				awaited = failed ? 0 : parts.filter((part) => part.type === "toolCall").length;
				if (!failed && awaited === 0 && ctx.hasPendingMessages())
					ahead(ctx, [event.message as unknown as MessageLike]);
			} else if (message.role === "toolResult" && awaited > 0) {
				awaited--;
				if (awaited === 0) ahead(ctx, [event.message as unknown as MessageLike]);
			}
		}),
	);
	// After the fold pass (registered before this one): what became recallable otherwise (a fold of a
	// pass that had no mayFold to ask) is declared from the next request on.
	pi.on("context", () => {
		onceRecallable();
		return undefined;
	});
	return {
		mayFold: () => {
			if (settled) return true;
			guarded(activate);
			return false;
		},
		withheld: () => {
			if (!settled) return false;
			const active = pi.getActiveTools();
			return FOLD_TOOLS.some((name) => !active.includes(name));
		},
	};
}
