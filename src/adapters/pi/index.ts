/**
 * context-fold's Pi extension entry point: wires the engine to Pi's `context` hook, rebuilds
 * fold state on session start and tree navigation, and registers the recall/unfold tools.
 * Every hook is fail-open: a failure is announced and the turn proceeds raw.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../../core/block.ts";
import { ratiosOf, ttlMsFor } from "../../core/cache-advice.ts";
import { extractSeedRecord } from "../../core/index/extract.ts";
import { economize } from "../../core/policy/cache-economic.ts";
import { conduct } from "../../core/policy/fold-ladder.ts";
import { Advisor } from "./cache/advisor.ts";
import { CacheWarning } from "./cache/cache-warning.ts";
import { clockFrom } from "./cache/clock.ts";
import { CACHE_WARM, CacheTelemetry, type UsageLike } from "./cache/telemetry.ts";
import { buildCompaction } from "./compaction/compact-hook.ts";
import { registerHandoff } from "./compaction/handoff.ts";
import { IndexStore, type SessionPlace } from "./compaction/seed-index-store.ts";
import { DEFAULT_CONFIG, disabledByEnv, resolveConfig } from "./config.ts";
import { ContextUsage } from "./fold/context-usage.ts";
import { errorText, FoldEngine } from "./fold/engine.ts";
import { ParentSession } from "./fold/parent-session.ts";
import { ENTRY_TYPE, type FoldEntry, turnBaseOf } from "./fold/persistence.ts";
import { Ledger, type LedgerSource } from "./fold/session-ledger.ts";
import { type FoldConfig, SETTINGS_SECTION } from "./settings-schema.ts";
import { registerRecallFolded } from "./tools/recall-folded.ts";
import { registerUnfold } from "./tools/unfold.ts";
import { registerUserView } from "./ui/register.ts";
import { FoldRecords, labelEntry } from "./ui/renderers.ts";
import { SavedSettings } from "./ui/settings.ts";

/** Registers context-fold's hooks, tools and commands with Pi (nothing when CONTEXTFOLD=0). */
export default function contextFold(pi: ExtensionAPI): void {
	register(pi, clockFrom(process.env));
}

/**
 * context-fold on a given clock (epoch ms) instead of wall time: the replay runs it on the
 * recording's clock, so that it sees the recorded idle gaps as Pi's users lived them.
 */
export function contextFoldOnClock(now: () => number): (pi: ExtensionAPI) => void {
	return (pi) => register(pi, now);
}

function register(pi: ExtensionAPI, now: () => number): void {
	if (disabledByEnv(process.env)) return;
	let config: FoldConfig = { ...DEFAULT_CONFIG };
	const reported = new Set<string>();
	let session: (LedgerSource & SessionPlace) | undefined;

	let tui: ExtensionContext["ui"] | undefined;
	const warn = (message: string, level: "warning" | "info" = "warning"): void => {
		if (tui) {
			try {
				tui.notify(message, level);
				return;
			} catch {
				tui = undefined;
			}
		}
		process.stderr.write(`${message}\n`);
	};
	const index = new IndexStore(warn);
	const savedHere = new SavedSettings();
	const loadConfig = (): void => {
		let saved: unknown;
		try {
			saved = (pi.getSettings() as Record<string, unknown>)[SETTINGS_SECTION];
		} catch {
			saved = undefined;
		}
		saved = savedHere.section(saved);
		const resolved = resolveConfig(saved, process.env);
		config = resolved.config;
		for (const problem of resolved.problems) {
			if (reported.has(problem)) continue;
			reported.add(problem);
			warn(`context-fold: ${problem}`);
		}
	};

	const telemetry = new CacheTelemetry();
	// Pi's idle refreshes reach no extension event: they are read from the session's entry growth.
	let seenEntries = 0;
	const catchUpWarms = (ctx: ExtensionContext): void => {
		const manager = ctx.sessionManager as LedgerSource;
		const count = manager.getEntryCount?.();
		if (count !== undefined && count <= seenEntries) {
			seenEntries = count;
			return;
		}
		const entries = manager.getEntries();
		for (let i = seenEntries; i < entries.length; i++) {
			const entry = entries[i] as { type?: string; kind?: string };
			if (entry.type === "usage" && entry.kind === CACHE_WARM) telemetry.observeEntry(entry);
		}
		seenEntries = entries.length;
	};
	const cacheFacts = (ctx: ExtensionContext) => {
		catchUpWarms(ctx);
		return telemetry.facts(now(), ttlMsFor(ctx.model?.provider, config.cacheTtlByProvider, config.cacheTtlSeconds));
	};
	const advisor = new Advisor({ notify: warn, config: () => config });
	const warning = new CacheWarning({ notify: warn, config: () => config, now });

	const contextUsage = new ContextUsage();
	const engine = new FoldEngine({
		config: () => config,
		policy: (view) => (config.policy === "economic" ? economize(view) : conduct(view)),
		append: (entry) => {
			records.note(entry);
			pi.appendEntry(ENTRY_TYPE, entry);
			labelEntry(pi, entry, leafOf(), records.record);
		},
		beforeCommit: (seq, records, messages) => {
			const scope = new Set(records.map((r) => r.id));
			const record = extractSeedRecord({
				kind: "fold",
				seq,
				messages,
				spans: records,
				scope,
				turnBase: engine.turnBase,
			});
			const leaf = leafOf();
			if (leaf !== undefined) record.leaf = leaf;
			index.append(record);
		},
		rejected: (seq, reason) => index.retract(seq, reason, "fold"),
		committed: (seq, masked) => {
			telemetry.observeFold(seq, masked, now());
			advisor.observeFold(seq, masked);
		},
		unfolded: (codes) => advisor.observeUnfold(codes),
		warn,
		debug: (message) => {
			if (config.debug) warn(message, "info");
		},
	});
	const records = new FoldRecords(engine);
	const ledger = new Ledger(() => session);
	let parent: ParentSession | undefined;
	let leafOf: () => string | undefined = () => undefined;
	let pendingCompaction: number | undefined;

	const restore = (ctx: ExtensionContext): void => {
		tui = ctx.mode === "tui" && ctx.hasUI ? ctx.ui : undefined;
		try {
			loadConfig();
			session = ctx.sessionManager;
			leafOf = () => ctx.sessionManager.getLeafId?.() ?? undefined;
			ledger.reset();
			const parentFile = ctx.sessionManager.getHeader?.()?.parentSession;
			parent = parentFile ? new ParentSession(parentFile) : undefined;
			const { skipped } = index.open(session);
			if (skipped > 0)
				warn(`context-fold: skipped ${skipped} unreadable seed-index line${skipped === 1 ? "" : "s"}`);
			const branch = ctx.sessionManager.getBranch();
			engine.rebuild(branch);
			telemetry.restore(branch);
			telemetry.select(ctx.model?.provider, ctx.model?.id);
			advisor.restore(branch);
			seenEntries = session.getEntryCount?.() ?? session.getEntries().length;
			warning.reset();
			warning.idle(ctx);
		} catch (error) {
			engine.reset();
			telemetry.reset();
			advisor.reset();
			warning.reset();
			warn(`context-fold: could not restore fold state, prior folds render raw this session: ${errorText(error)}`);
		}
	};

	pi.on("session_start", (_event, ctx) => {
		contextUsage.reset();
		restore(ctx);
	});
	pi.on("session_tree", (_event, ctx) => {
		contextUsage.reset();
		restore(ctx);
	});

	pi.on("session_shutdown", () => warning.reset());

	pi.on("message_end", (event, ctx) => {
		try {
			const message = event.message as { role?: string; provider?: string; model?: string; usage?: UsageLike };
			if (message.role !== "assistant") return;
			telemetry.select(message.provider, message.model);
			telemetry.observeResponse(message.usage, now());
			const window = ctx.model?.contextWindow;
			advisor.observeResponse(message.usage, {
				window,
				// The reset flag asks only whether more than half the window cannot fold.
				unfoldable: window ? engine.unfoldableOver(window / 2) : undefined,
				ratios: ratiosOf(ctx.model?.cost),
			});
		} catch (error) {
			warn(`context-fold: usage telemetry skipped: ${errorText(error)}`);
		}
	});
	pi.on("tool_result", (event) => {
		try {
			advisor.observeToolResult(event.toolName, event.input, engine.registry);
		} catch (error) {
			warn(`context-fold: recall churn check skipped: ${errorText(error)}`);
		}
		return undefined;
	});

	// The idle cache-risk warning: a timer while idle, and the opt-in confirmation before a cold send.
	pi.on("agent_start", () => warning.busy());
	pi.on("agent_settled", (_event, ctx) => {
		try {
			warning.idle(ctx);
		} catch (error) {
			warn(`context-fold: idle cache check skipped: ${errorText(error)}`);
		}
	});
	pi.on("input", async (event, ctx) => {
		try {
			return await warning.onInput(event, ctx);
		} catch {
			return undefined;
		}
	});
	pi.on("model_select", (event) => {
		try {
			telemetry.select(event.model?.provider, event.model?.id);
			advisor.observeModelChange();
		} catch (error) {
			warn(`context-fold: usage telemetry skipped: ${errorText(error)}`);
		}
	});

	// Pi 1.6 asks before each idle refresh of the prompt cache. When a fold event is due, the next
	// request rewrites the cached suffix anyway, so keeping it warm buys nothing: stop.
	pi.on("cache_warming_decision", (event, ctx) => {
		try {
			if (event.action !== "warm") return undefined;
			catchUpWarms(ctx);
			const last = telemetry.snapshot().last;
			const prompt = last ? last.input + last.cacheRead + last.cacheWrite : 0;
			if (!engine.foldDue(prompt)) return undefined;
			if (config.debug)
				warn(
					"context-fold: cache warming stopped: a fold event is due, the next request rewrites the cache anyway",
					"info",
				);
			return { action: "stop" as const };
		} catch (error) {
			warn(`context-fold: cache warming decision left to Pi: ${errorText(error)}`);
			return undefined;
		}
	});

	pi.on("context", (event, ctx) => {
		try {
			const messages = event.messages as unknown as MessageLike[];
			const window = ctx.model?.contextWindow || ctx.getContextUsage()?.contextWindow;
			engine.run(messages, {
				window,
				usage: contextUsage.tokens(messages, () => ctx.getContextUsage()?.tokens),
				neverCacheRead: telemetry.neverCacheRead,
				cache: cacheFacts(ctx),
			});
		} catch (error) {
			warn(`context-fold: fold pass failed, this turn goes out raw: ${errorText(error)}`);
		}
		return undefined;
	});

	// Past the budget with nothing worth folding, or (economic policy) above its backstop even once all is
	// folded: compact now with the deterministic summary (no model call), once per streak of such turns;
	// with native compaction, say so once and leave it to the user.
	let overBudgetStreak = false;
	pi.on("turn_end", (_event, ctx) => {
		try {
			const over = engine.overBudget;
			if (!over) {
				overBudgetStreak = false;
				return;
			}
			if (overBudgetStreak) return;
			overBudgetStreak = true;
			const where =
				over.usage > over.budget
					? `the context (~${over.usage} tokens) is past the fold budget (${over.budget}) and nothing left is worth folding`
					: `folding alone cannot bring the context (~${over.usage} tokens) below the economic policy's backstop (backstopAt ${config.backstopAt})`;
			if (config.compact === "native") {
				warn(`context-fold: ${where}; /compact or /fold-handoff frees it (compact=native leaves compaction to Pi)`);
				return;
			}
			warn(`context-fold: ${where}; compacting now with the deterministic summary (no model call)`, "info");
			advisor.willForceCompaction();
			ctx.compact({ onError: (error) => warn(`context-fold: the over-budget compaction failed: ${error.message}`) });
		} catch (error) {
			warn(`context-fold: over-budget check skipped: ${errorText(error)}`);
		}
	});

	pi.on("session_before_compact", (event, ctx) => {
		if (config.compact === "native") return undefined;
		try {
			const prep = event.preparation;
			const append = (entry: FoldEntry) => pi.appendEntry(ENTRY_TYPE, entry);
			const entries = event.branchEntries ?? ctx.sessionManager.getBranch();
			const branch = { leaf: ctx.sessionManager.getLeafId?.() ?? undefined, ids: new Set(entries.map((e) => e.id)) };
			const built = buildCompaction(prep, engine, index, append, warn, branch, ctx.model?.contextWindow);
			pendingCompaction = built.seq;
			return {
				compaction: {
					summary: built.summary,
					firstKeptEntryId: prep.firstKeptEntryId,
					tokensBefore: prep.tokensBefore,
					details: { contextFold: { v: 1, seq: built.seq, codes: built.codes } },
				},
			};
		} catch (error) {
			warn(`context-fold: deterministic compaction failed, Pi's own compaction runs instead: ${errorText(error)}`);
			return undefined;
		}
	});
	pi.on("session_compact", (event, ctx) => {
		pendingCompaction = undefined;
		advisor.observeCompaction(event.reason !== "manual");
		try {
			engine.turnBase = turnBaseOf(ctx.sessionManager.getBranch());
		} catch (error) {
			warn(`context-fold: turn numbering after compaction may restart: ${errorText(error)}`);
		}
	});
	pi.on("session_compact_failed", (event) => {
		const seq = pendingCompaction;
		pendingCompaction = undefined;
		if (seq === undefined || !event.fromExtension) return;
		try {
			index.retract(seq, event.aborted ? "aborted" : (event.errorMessage ?? "failed"));
		} catch (error) {
			warn(`context-fold: could not retract seed-index record ${seq}: ${errorText(error)}`);
		}
	});

	registerRecallFolded(pi, engine, ledger, () => parent);
	registerUnfold(pi, engine, () => parent);
	registerHandoff(pi, engine, index);
	registerUserView(
		pi,
		{
			engine,
			config: () => config,
			neverCacheRead: () => telemetry.neverCacheRead,
			ledger,
			parent: () => parent,
			settings: savedHere,
			reload: loadConfig,
			advisoryActive: () => advisor.active().length > 0 || advisor.watchdogTripped(),
			advisories: () => advisor.active().map((a) => a.text),
			discardImages: () => {
				const n = warning.discardImages();
				return n > 0
					? `context-fold: dropped ${n} image${n === 1 ? "" : "s"} kept from a cancelled prompt`
					: "context-fold: nothing to discard";
			},
		},
		records,
	);
}
