/**
 * The footer status and the facts of `/context-fold status`, gathered from the engine (the latest
 * request, fold records), the session branch (fold events, responses, cache figures) and Pi (system
 * prompt, active tools), read into figures by core/latest-request.ts and core/session-history.ts,
 * then turned into text by core/status.ts. The footer is set under the key `context-fold` after every
 * context pass, response, unfold and session change.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../../../core/block.ts";
import { blockWhat } from "../../../core/block-line.ts";
import type { Lifetime } from "../../../core/cache-advice.ts";
import { budgetOf, tailOf } from "../../../core/contract.ts";
import { contextParts, keptOut, type PassRow, type PassSnapshot } from "../../../core/latest-request.ts";
import {
	backstopFor,
	COLD_LEAST_SHARE,
	economicTails,
	leastEventFor,
	paybackHorizon,
} from "../../../core/policy/cache-economic.ts";
import { protectedTail } from "../../../core/policy/fold-ladder.ts";
import { PROFILES, type Profile } from "../../../core/policy/profiles.ts";
import {
	cacheByModel,
	eventLines,
	eventSaving,
	hitRateSince,
	opSaving,
	unfoldedSinceReply,
} from "../../../core/session-history.ts";
import { type FoldedBlock, type FoldPoint, footerText, type StatusFacts } from "../../../core/status.ts";
import { estTokens, percent } from "../../../core/tokens.ts";
import { blockFacts } from "../fold/block-facts.ts";
import type { FoldEngine } from "../fold/engine.ts";
import { ENTRY_TYPE } from "../fold/persistence.ts";
import { modelKeyOf } from "../fold/request-facts.ts";
import type { Ledger } from "../fold/session-ledger.ts";
import type { FoldConfig } from "../settings-schema.ts";

/** The footer's status key. */
const STATUS_KEY = "context-fold";

/** What the user's view reads besides Pi. */
export interface ViewSources {
	engine: FoldEngine;
	/** The session's entries by block id, where a folded block's tool call is found (its command or path). */
	ledger?: Ledger;
	config: () => FoldConfig;
	/** True once two responses came back and none read from the cache (the ladder's cold threshold applies). */
	neverCacheRead: () => boolean;
	/**
	 * Pi's compaction figures as they stand: `keepRecentTokens`, which puts a floor under the economic
	 * backstop, and `reserveTokens` while its compaction is on, which caps the least event in a small
	 * window; none when absent.
	 */
	piCompaction?: () => { keepRecent: number; reserve: number | undefined };
	/** Whether an advisory is active (the footer flags it); the cache advisor's, false when absent. */
	advisoryActive?: () => boolean;
	/** The active advisories, one line each, for the status (the cache advisor's). */
	advisories?: () => readonly string[];
	/** The failures announced this session, each once (see StatusFacts.failures). */
	failures?: () => readonly string[];
	/** Whether the user set `horizon` (else an event repays within a share of the requests so far). */
	horizonSet?: () => boolean;
	/** The cache lifetime assumed for a model, and its source (cache/lifetime.ts). */
	lifetime?: (model: ExtensionContext["model"]) => Lifetime;
}

/** Folds in a pass's rows and the tokens they keep out; from the fold records when there is no pass. */
function foldFigures(engine: FoldEngine, pass = engine.pass()): { folds: number; tokens: number } {
	if (pass) return keptOut(pass.rows);
	const ops = engine.registry.frozenOps();
	return { folds: ops.length, tokens: eventSaving(ops, (id) => engine.registry.record(id)) };
}

/** The footer text for the current branch, from `pass` (the latest request's by default); undefined before the first fold. */
function footerFor(sources: ViewSources, branch: readonly unknown[], pass = sources.engine.pass()): string | undefined {
	const { folds, tokens } = foldFigures(sources.engine, pass);
	return footerText({
		folds,
		keptOut: tokens,
		hitRate: folds > 0 ? hitRateSince(branch, ENTRY_TYPE) : undefined,
		advisory: sources.advisoryActive?.() ?? false,
	});
}

/** Sets (or clears) the footer status; a no-op without a UI. Never throws. */
export function updateFooter(sources: ViewSources, ctx: ExtensionContext): void {
	if (!ctx.hasUI) return;
	try {
		ctx.ui.setStatus(STATUS_KEY, footerFor(sources, ctx.sessionManager.getBranch(), viewPass(sources, ctx)));
	} catch {
		// The footer is a convenience: a failure here must not disturb the turn.
	}
}

/** Estimated tokens of the system prompt and the active tools' declarations (0 for what Pi cannot say). */
export function systemTokens(pi: Pick<ExtensionAPI, "getActiveTools" | "getAllTools">, ctx: ExtensionContext): number {
	let tokens = 0;
	try {
		tokens += estTokens(ctx.getSystemPrompt() ?? "");
	} catch {
		// no system prompt known
	}
	try {
		const active = new Set(pi.getActiveTools());
		for (const tool of pi.getAllTools()) {
			if (!active.has(tool.name)) continue;
			tokens += estTokens(
				JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }),
			);
		}
	} catch {
		// no tool list known
	}
	return tokens;
}

/** What an ordinary event of the economic profiles must repay its rewrite within: a horizon the user set, or the requests so far. */
interface Payback {
	horizonSet: boolean;
	requests?: number;
	/** The context now, in tokens: near Pi's compaction or the budget the whole horizon counts (see horizonOf). */
	usage?: number;
}

/**
 * The clause naming the requests an event must repay its rewrite within (see horizonOf): `near` says
 * what would come before another `least` event could gather (Pi's compaction, or the fold budget),
 * where the whole horizon counts.
 */
function paybackText(config: FoldConfig, payback: Payback, near: string | undefined): string {
	if (!payback.horizonSet && payback.requests === undefined) return "";
	if (near && !payback.horizonSet) return ` within ${config.horizon} requests (horizon: ${near})`;
	const n = payback.requests === undefined ? config.horizon : paybackHorizon(config.horizon, payback.requests);
	if (payback.horizonSet || n >= config.horizon) return ` within ${config.horizon} requests (horizon)`;
	const within = Number.isInteger(n) ? `${n}` : `~${Math.round(n)}`;
	return ` within ${within} request${within === "1" ? "" : "s"} (a quarter of the ${payback.requests} so far)`;
}

/**
 * What the context at `usage` would reach before another `least` event could gather, as horizonOf
 * reads it (Pi's compaction at `piCompactsAt`, then the fold `budget`), or undefined: neither.
 */
function nearOf(usage: number | undefined, least: number, budget: number, piCompactsAt?: number): string | undefined {
	if (usage === undefined) return undefined;
	if (piCompactsAt !== undefined && usage >= piCompactsAt - least) return "Pi would compact before another such event";
	if (usage >= budget - least) return "the context would pass the fold budget before another such event";
	return undefined;
}

/**
 * Where the next fold may happen under the policy in force (`neverCacheRead`: the session never read
 * from the cache, so the economic profiles need no least event and the ladder folds at coldFoldAt;
 * `payback`: what an event must repay its rewrite within; `keepRecent`: Pi's, for the backstop's
 * floor; `reserve`: Pi's while its compaction is on, for the least event).
 */
function foldPoint(
	config: FoldConfig,
	window: number,
	neverCacheRead: boolean,
	payback: Payback,
	keepRecent?: number,
	reserve?: number,
): FoldPoint {
	const budget = budgetOf(config, window);
	const piCompactsAt = reserve === undefined ? undefined : Math.max(0, window - reserve);
	if (config.policy !== "ladder") {
		const least = leastEventFor(config.minEvent, window, reserve);
		// A session that never read from the cache rewrites it on every request anyway, so an event need
		// save only a share of the least one (policy/cache-economic.ts).
		const event = neverCacheRead
			? [
					`an event of ${Math.floor(COLD_LEAST_SHARE * least)}+ tokens: this session never read from the cache, so its rewrite costs nothing`,
				]
			: [
					`an event of ${Math.floor(least)}+ tokens that repays its rewrite${paybackText(
						config,
						payback,
						nearOf(payback.usage, least, budget, piCompactsAt),
					)}`,
				];
		if (!neverCacheRead && least < config.minEvent)
			event.push(`minEvent ${config.minEvent} capped at a fifth of where Pi compacts`);
		return {
			policy: config.policy,
			at: Math.min(config.foldFrom, budget),
			knob: `foldFrom ${config.foldFrom}`,
			event,
			budget,
			backstop: Math.floor(backstopFor(config.backstopAt, keepRecent)),
			piCompactsAt,
		};
	}
	const share = neverCacheRead ? config.coldFoldAt : config.foldAt;
	return {
		policy: "ladder",
		at: Math.floor(share * window),
		knob: `${neverCacheRead ? "coldFoldAt" : "foldAt"} ${percent(share)}`,
		budget,
		piCompactsAt,
	};
}

/** The protected tail of a request's rows under the policy in force. */
export function tailIds(rows: readonly PassRow[], config: FoldConfig, window: number): Set<string> {
	const profile: Profile = PROFILES[config.policy];
	return profile.hot
		? economicTails(rows, config.hotTail, config.coldTail, profile.hot)
		: protectedTail(rows, tailOf(config, window));
}

/**
 * The largest folded blocks, with their codes and what each was (the tool call's command or path,
 * found through `ledger`): from the latest request, or, before this process sent one, from the fold
 * records and frozen ops (estimated).
 */
function largestFolded(
	engine: FoldEngine,
	rows: readonly PassRow[] | undefined,
	ledger?: Ledger,
	limit = 5,
): FoldedBlock[] {
	const out: FoldedBlock[] = [];
	const add = (id: string, tokens: number, kind: string) => {
		const record = engine.registry.record(id);
		if (!record) return;
		const facts = blockFacts(record, engine, ledger);
		out.push({ code: record.code, what: blockWhat({ ...facts, kind: facts.kind ?? kind }), tokens });
	};
	if (rows) {
		for (const row of rows) if (row.folded) add(row.id, Math.max(0, row.raw - row.tokens), row.kind);
	} else {
		for (const op of engine.registry.frozenOps()) add(op.id, opSaving(engine.registry.record(op.id), op), "block");
	}
	return out.sort((a, b) => b.tokens - a.tokens).slice(0, limit);
}

/** Everything the status shows, for the current branch. */
export function statusFacts(
	sources: ViewSources,
	pi: Pick<ExtensionAPI, "getActiveTools" | "getAllTools">,
	ctx: ExtensionContext,
): StatusFacts {
	const { engine } = sources;
	const config = sources.config();
	const branch = ctx.sessionManager.getBranch();
	const sent = engine.pass();
	const window = sent?.window || windowOf(ctx);
	const pass = sent ?? previewPass(engine, ctx, window);
	const figures = foldFigures(engine, pass);
	const system = systemTokens(pi, ctx);
	const rows = pass?.rows ?? [];
	const compaction = sources.piCompaction?.();
	const usage = pass ? system + rows.reduce((n, r) => n + r.tokens, 0) : undefined;
	return {
		usage,
		window,
		point: window
			? foldPoint(
					config,
					window,
					sources.neverCacheRead(),
					{ horizonSet: sources.horizonSet?.() ?? false, requests: pass?.requests, usage },
					compaction?.keepRecent,
					compaction?.reserve,
				)
			: undefined,
		parts: pass && window ? contextParts(rows, tailIds(rows, config, window), system) : undefined,
		folds: figures.folds,
		keptOut: figures.tokens,
		sinceFold: figures.folds > 0 ? hitRateSince(branch, ENTRY_TYPE) : undefined,
		events: eventLines(
			branch,
			ENTRY_TYPE,
			(id) => engine.registry.record(id),
			(id) => engine.registry.opOf(id),
		),
		cache: cacheByModel(branch),
		lifetime: sources.lifetime?.(ctx.model),
		largest: largestFolded(engine, pass?.rows, sources.ledger),
		advisories: sources.advisories?.() ?? [],
		failures: sources.failures?.() ?? [],
		preview: sent === undefined && pass !== undefined,
		// Pi's count is the latest response's: an unfold since makes the next request larger than it says.
		piUsage: unfoldedSinceReply(branch, ENTRY_TYPE).length > 0 ? undefined : piUsageOf(ctx),
	};
}

/**
 * The request the user's view reads: the latest one sent, or, while the engine holds none (before
 * this process sent any, or after a compaction), the conversation as the next request would send it.
 */
export function viewPass(sources: ViewSources, ctx: ExtensionContext): PassSnapshot | undefined {
	return sources.engine.pass() ?? previewPass(sources.engine, ctx, windowOf(ctx));
}

/** Pi's own count of the context, if it has one (none right after a compaction). */
function piUsageOf(ctx: ExtensionContext): number | undefined {
	try {
		const tokens = ctx.getContextUsage()?.tokens;
		return typeof tokens === "number" && tokens > 0 ? tokens : undefined;
	} catch {
		return undefined;
	}
}

/** The current model's context window, if Pi knows it. */
function windowOf(ctx: ExtensionContext): number | undefined {
	return ctx.model?.contextWindow || ctx.getContextUsage()?.contextWindow || undefined;
}

/**
 * While the engine holds no request's rows (before this process sent any, or after a compaction), the
 * conversation as Pi would send it next (its session projection), passed through the engine without a
 * fold event; undefined when there is nothing to show or it cannot be read.
 */
function previewPass(engine: FoldEngine, ctx: ExtensionContext, window: number | undefined): PassSnapshot | undefined {
	if (!window) return undefined;
	try {
		const messages = ctx.sessionManager.buildSessionProjection().messages as unknown as MessageLike[];
		return messages.length > 0 ? engine.preview(messages, window, modelKeyOf(ctx.model)) : undefined;
	} catch {
		return undefined;
	}
}
