/**
 * The compaction hooks: Pi's `session_before_compact` answered with the deterministic compaction
 * (no model call; Pi's own runs if building it throws), the seed-index record retracted when the
 * compaction fails, the turn numbering carried past a compaction, and the over-budget trigger that
 * compacts once the agent's run is over when folding cannot hold the context (past the budget, or
 * above the economic or working-set policy's backstop), once for each such state. That compaction, under those
 * policies, keeps only the policy's hot tail raw instead of Pi's `keepRecentTokens` (see kept-tail.ts);
 * a compaction the user or Pi starts keeps Pi's cut. It is announced once it has happened, with why;
 * Pi refusing it for want of older messages is said once a session. Instructions given to `/compact`
 * are not applied by the deterministic summary, and the user is told so.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../../../core/block.ts";
import { compactionNotice } from "../../../core/status.ts";
import type { Advisor } from "../cache/advisor.ts";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import { ENTRY_TYPE, type FoldEntry } from "../fold/persistence.ts";
import type { FoldConfig } from "../settings-schema.ts";
import { buildCompaction, recordRemoved } from "./deterministic-compaction.ts";
import { type LaterCut, laterCut } from "./kept-tail.ts";
import type { IndexStore } from "./seed-index-store.ts";

/** Said when `/compact <instructions>` meets the deterministic summary, which follows none. */
export const INSTRUCTIONS_NOT_APPLIED =
	"context-fold: the compaction instructions were not applied: context-fold's summary is extracted, not written, and follows none; with compact set to native (/context-fold settings compact native, or CONTEXTFOLD_COMPACT=native) Pi's summarizer applies them";

/** What the compaction hooks work with. */
export interface CompactionDeps {
	engine: FoldEngine;
	index: IndexStore;
	advisor: Pick<Advisor, "willForceCompaction" | "observeCompaction">;
	config: () => FoldConfig;
	/** Tells the user something worth knowing, each time (a notice). */
	warn: (message: string, level?: "warning" | "info") => void;
	/** Announces a failure context-fold works around: once per distinct message, listed in the status. */
	fail: (message: string) => void;
	/** Pi's `compaction.keepRecentTokens` for the model in use. */
	keepRecent: () => number;
	/**
	 * True while recall_folded is left out of the active tools (the user's selection, another
	 * extension): a summary that points at it would send the model to a tool it does not have.
	 */
	withheld?: () => boolean;
}

/** Registers the compaction hooks with Pi. */
export function registerCompaction(pi: ExtensionAPI, deps: CompactionDeps): void {
	const { engine, index, advisor, config, warn, fail, keepRecent } = deps;
	let pendingCompaction: number | undefined;
	// Tokens the compaction context-fold itself starts keeps raw; undefined for any other compaction.
	let ownKeep: number | undefined;
	// Why context-fold started the compaction under way, for its notice; undefined for any other.
	let ownWhy: string | undefined;
	// Whether the compaction under way was given instructions its summary does not follow (told in the
	// terminal UI once it happened: a notice before then is wiped by Pi's redraw).
	let instructionsIgnored = false;
	// Whether this session was told that Pi refused context-fold's compaction (said once a session).
	let refusalSaid = false;
	pi.on("session_start", () => {
		refusalSaid = false;
	});
	/** Retracts the seed-index record of compaction `seq`, which never happened, saying why. */
	const retract = (seq: number, reason: string): void => {
		try {
			index.retract(seq, reason);
		} catch (error) {
			fail(`context-fold: could not retract seed-index record ${seq}: ${errorText(error)}`);
		}
	};

	// The over-budget state the latest passes report was already compacted or announced (`actedOn`).
	// A compaction starts a new state, but one that leaves the context where it was is not repeated:
	// `left` is the usage of the first over-budget pass after it, and only growth past that counts.
	let actedOn = false;
	let compacted = false;
	let left: number | undefined;
	// Read after each response, which follows its request's pass and comes before agent_settled (not at
	// turn_end: Pi rebuilds a preview of the whole branch for each turn_end handler, every turn).
	pi.on("message_end", (event) => {
		if (event.message.role !== "assistant") return;
		const over = engine.overBudget;
		if (!over) {
			actedOn = false;
			left = undefined;
		} else if (compacted) left = over.usage;
		compacted = false;
	});
	// Pi's compact() aborts the agent's run in progress and never resumes it, so the compaction waits
	// until the run is over (as Pi's own threshold compaction does); the policy keeps folding meanwhile.
	// The handler returns once the compaction has ended: Pi awaits agent_settled handlers before its
	// prompt() returns, so print and json modes send their next message only then (Pi refuses a prompt
	// while a compaction runs) and RPC clients see agent_settled after it.
	pi.on("agent_settled", async (_event, ctx) => {
		let ended: Promise<void> | undefined;
		try {
			const over = engine.overBudget;
			// A compaction since the latest response (Pi's own, at its threshold) left that request's
			// over-budget state behind: the next response's pass tells whether one is still due.
			if (!over || actedOn || compacted || (left !== undefined && over.usage <= left)) return;
			// Pi prepares a compaction only when the messages hold more than its keepRecentTokens (a large
			// system prompt can put usage past the backstop before they do): until then it would refuse.
			if (engine.rawTokens() <= keepRecent()) return;
			actedOn = true;
			const where =
				over.usage > over.budget
					? `the context (~${over.usage} tokens) is past the fold budget (${over.budget}) and nothing left is worth folding`
					: `folding alone cannot bring the context (~${over.usage} tokens) below the ${config().policy} policy's backstop (backstopAt ${config().backstopAt} tokens)`;
			if (config().compact === "native") {
				warn(`context-fold: ${where}; /compact or /fold-handoff frees it (compact=native leaves compaction to Pi)`);
				return;
			}
			advisor.willForceCompaction();
			ownKeep = config().policy !== "ladder" ? config().hotTail : undefined;
			ownWhy = where;
			const tui = ctx.mode === "tui";
			let end = (): void => {};
			ended = new Promise<void>((resolve) => {
				end = resolve;
			});
			ctx.compact({
				onComplete: (result) => {
					end();
					// The terminal UI is told on session_compact (below); headless runs here, once it happened.
					const ours = contextFoldDetails(result.details);
					if (!tui && ours) warn(compactionNotice(result.tokensBefore, blockCount(ours), where), "info");
				},
				onError: (error) => {
					end();
					// Pi refused (too little to compact, say): try again once the context has grown. Its
					// "Nothing to compact" means the newest messages, which it keeps raw, hold nearly all of it.
					ownKeep = undefined;
					ownWhy = undefined;
					actedOn = false;
					left = over.usage;
					// "Already compacted": a compaction came first (Pi's own), which is what this one was for.
					if (/already compacted/i.test(error.message)) return;
					if (!/nothing to compact/i.test(error.message))
						fail(`context-fold: the over-budget compaction failed: ${error.message}`);
					else if (!refusalSaid || config().debug) {
						refusalSaid = true;
						warn(
							`context-fold: ${where}, but Pi cannot compact yet: it keeps the newest messages raw (compaction.keepRecentTokens, ${keepRecent()} tokens) and they are nearly all there is; context-fold asks again as the context grows (said once a session)`,
							"info",
						);
					}
				},
			});
		} catch (error) {
			ended = undefined;
			fail(`context-fold: over-budget check skipped: ${errorText(error)}`);
		}
		await ended;
	});

	pi.on("session_before_compact", (event, ctx) => {
		const append = (entry: FoldEntry) => pi.appendEntry(ENTRY_TYPE, entry);
		const native = config().compact === "native";
		const withheld = deps.withheld?.() === true;
		if (withheld && !native)
			fail(
				"context-fold: recall_folded is not active: the compaction summary is still context-fold's, written without a model, but the model cannot read its codes back until the tool is active again",
			);
		if (native) {
			// Pi's own summary runs; what it takes out of live history is recorded all the same, so that
			// recall_folded's search and /context-fold recall still read it (a record folds nothing).
			try {
				const prep = event.preparation;
				recordRemoved(
					[...prep.messagesToSummarize, ...prep.turnPrefixMessages] as MessageLike[],
					engine,
					append,
					fail,
				);
			} catch (error) {
				fail(
					`context-fold: what Pi's compaction removes was not recorded, search cannot find it: ${errorText(error)}`,
				);
			}
			return undefined;
		}
		try {
			const prep = event.preparation;
			const entries = event.branchEntries ?? ctx.sessionManager.getBranch();
			const branch = { leaf: ctx.sessionManager.getLeafId?.() ?? undefined, ids: new Set(entries.map((e) => e.id)) };
			const keep = ownKeep;
			ownKeep = undefined;
			let later: LaterCut | undefined;
			try {
				if (keep !== undefined) later = laterCut(entries, prep.firstKeptEntryId, keep);
			} catch (error) {
				fail(`context-fold: this compaction keeps Pi's cut (keepRecentTokens): ${errorText(error)}`);
			}
			// The compaction entry whose summary Pi passes on: a foreign one is recorded (see buildCompaction).
			const previousEntry = prep.previousSummary
				? entries.findLast(
						(e) => e.type === "compaction" && (e as { summary?: unknown }).summary === prep.previousSummary,
					)
				: undefined;
			// context-fold's own earlier compactions on the branch, by the number their entries carry.
			const earlierOwn = entries.flatMap((e) => {
				const seq = (e as { details?: { contextFold?: { seq?: unknown } } }).details?.contextFold?.seq;
				return e.type === "compaction" && typeof seq === "number" ? [seq] : [];
			});
			const input = {
				earlierOwn,
				...(later
					? {
							messagesToSummarize: [
								...prep.messagesToSummarize,
								...prep.turnPrefixMessages,
								...later.moreToSummarize,
							],
							turnPrefixMessages: [],
							previousSummary: prep.previousSummary,
						}
					: prep),
				previousEntry,
				...(withheld ? { toolsWithheld: true } : {}),
			};
			const built = buildCompaction(input, engine, index, append, fail, branch, ctx.model?.contextWindow);
			pendingCompaction = built.seq;
			instructionsIgnored = false;
			if (event.customInstructions?.trim()) {
				if (ctx.mode === "tui") instructionsIgnored = true;
				else warn(INSTRUCTIONS_NOT_APPLIED);
			}
			return {
				compaction: {
					summary: built.summary,
					firstKeptEntryId: later?.firstKeptEntryId ?? prep.firstKeptEntryId,
					tokensBefore: prep.tokensBefore,
					details: { contextFold: { v: 1, seq: built.seq, codes: built.codes } },
				},
			};
		} catch (error) {
			fail(`context-fold: deterministic compaction failed, Pi's own compaction runs instead: ${errorText(error)}`);
			return undefined;
		}
	});
	pi.on("session_compact", (event, ctx) => {
		// Another extension's summary took the place of the one context-fold built: its record describes
		// a compaction that never happened. Only an entry without context-fold's details says so: Pi hands
		// over the first entry with the summary's text, which may be an earlier one of ours alike (a
		// deterministic summary can repeat), and an event that names no entry tells nothing either way.
		const built = pendingCompaction;
		pendingCompaction = undefined;
		const entry = event.compactionEntry as { details?: unknown } | undefined;
		if (built !== undefined && entry && contextFoldDetails(entry.details) === undefined)
			retract(built, "another extension's summary was used");
		actedOn = false;
		compacted = true;
		// The status shows the compacted context (a preview) until the next request, not the one before;
		// what is live (unfold's completions) is the compacted context too.
		engine.forgetPass();
		try {
			engine.observeLive(ctx.sessionManager.buildSessionProjection().messages as unknown as MessageLike[]);
		} catch (error) {
			fail(`context-fold: the compacted context was not read, unfold may offer removed blocks: ${errorText(error)}`);
		}
		advisor.observeCompaction(event.reason !== "manual");
		// Told in the terminal UI, below Pi's own "Compacted from" line; headless runs stay quiet but for
		// context-fold's own compaction (told when ctx.compact() completes, above). Pi clears and redraws
		// the transcript on compaction_end, which it emits right after this event (agent-session.js), so
		// a notice now would vanish: it waits for the next turn of the loop.
		const why = ownWhy;
		ownWhy = undefined;
		const ignored = instructionsIgnored;
		instructionsIgnored = false;
		const ours = contextFoldDetails(event.compactionEntry?.details);
		if (ours && ctx.mode === "tui") {
			const notice = compactionNotice(event.compactionEntry.tokensBefore ?? 0, blockCount(ours), why);
			setTimeout(() => {
				try {
					ctx.ui.notify(notice, "info");
					if (ignored) ctx.ui.notify(INSTRUCTIONS_NOT_APPLIED, "warning");
				} catch (error) {
					fail(`context-fold: the compaction notice could not be shown: ${errorText(error)}`);
				}
			}, 0);
		}
		try {
			engine.rebase(ctx.sessionManager.getBranch());
		} catch (error) {
			fail(`context-fold: turn and request numbering after compaction may restart: ${errorText(error)}`);
		}
	});
	// The record of a compaction context-fold built is retracted when that compaction never happened:
	// it failed or was aborted, or another extension cancelled it (Pi then reports it failed, but not
	// as an extension's, since it throws before it takes one's result).
	pi.on("session_compact_failed", (event) => {
		const seq = pendingCompaction;
		pendingCompaction = undefined;
		if (seq === undefined) return;
		retract(seq, event.aborted ? "aborted" : (event.errorMessage ?? "failed"));
	});
}

/** What context-fold wrote into a compaction's details, if it built the compaction. */
function contextFoldDetails(details: unknown): { codes?: unknown } | undefined {
	const ours = (details as { contextFold?: unknown } | undefined)?.contextFold;
	return typeof ours === "object" && ours !== null ? ours : undefined;
}

/** How many blocks the compaction whose details are `ours` summarised. */
function blockCount(ours: { codes?: unknown }): number {
	return Array.isArray(ours.codes) ? ours.codes.length : 0;
}
