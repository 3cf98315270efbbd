/**
 * What the fold pass reads about one request besides its messages, gathered from Pi's context and
 * context-fold's own state at the moment the request goes out: the model's context window, the
 * context's size (fold/context-usage.ts), whether the session never read from the cache and whether
 * the cache is cold anyway (cache telemetry, on the extension's clock, at the model's cache lifetime
 * and rewrite price), and Pi's compaction figures for the model in use, read again from Pi's settings
 * before each run (ActiveSettings).
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { isModelReply, type MessageLike, type ModelKey } from "../../../core/block.ts";
import type { CacheFacts } from "../../../core/contract.ts";
import type { ActiveSettings } from "../active-settings.ts";
import { lifetimeFor, retentionOf, rewriteInReadsFor } from "../cache/lifetime.ts";
import type { CacheTelemetry } from "../cache/telemetry.ts";
import { ContextUsage } from "./context-usage.ts";
import type { TurnFacts } from "./engine.ts";
import type { LedgerSource } from "./session-ledger.ts";

/** The model a request goes to, as pi-ai compares models, and whether it takes images (undefined when Pi names none). */
export function modelKeyOf(
	model: { provider?: unknown; api?: unknown; id?: unknown; input?: unknown } | undefined,
): ModelKey | undefined {
	if (typeof model?.provider !== "string" || typeof model.api !== "string" || typeof model.id !== "string")
		return undefined;
	const key: ModelKey = { provider: model.provider, api: model.api, id: model.id };
	if (Array.isArray(model.input) && !model.input.includes("image")) key.images = false;
	return key;
}

/** A model's cache lifetime and rewrite price, with what they were worked out from. */
interface ModelPrices {
	model: ExtensionContext["model"];
	config: unknown;
	secondsSet: boolean;
	retention: string | undefined;
	ms: number;
	rewriteInReads: number | undefined;
}

/**
 * Pi's figure of the context, or undefined where Pi cannot work it out: its estimator throws on a
 * message it cannot read (content missing or not a list, say, from another extension's hook or a
 * damaged session), which the fold pass itself reads; the pass then estimates the request, as it
 * does whenever no figure is known.
 */
function piUsage(ctx: ExtensionContext): ReturnType<ExtensionContext["getContextUsage"]> {
	try {
		return ctx.getContextUsage();
	} catch {
		return undefined;
	}
}

/** A request's facts for the fold pass, from Pi's context at the request. */
export class RequestFacts {
	private readonly usage = new ContextUsage();
	private readonly settings: ActiveSettings;
	private readonly telemetry: CacheTelemetry;
	private readonly now: () => number;
	/** The latest request's cache lifetime and rewrite price, and what they were worked out from (see pricesOf). */
	private prices: ModelPrices | undefined;

	constructor(settings: ActiveSettings, telemetry: CacheTelemetry, now: () => number) {
		this.settings = settings;
		this.telemetry = telemetry;
		this.now = now;
	}

	/** Forgets what the context size was read from (after `/tree` or a session change). */
	reset(): void {
		this.usage.reset();
	}

	/** A fold event was committed on the request just read (see ContextUsage.folded). */
	folded(): void {
		this.usage.folded();
	}

	/** Blocks were unfolded (see ContextUsage.unfolded). */
	unfolded(): void {
		this.usage.unfolded();
	}

	/**
	 * A restore skipped fold entries it could not read: the blocks they folded go out raw, where the
	 * branch's last response counted them folded, so its figure predates them, as after an unfold.
	 */
	lostFolds(): void {
		this.usage.unfolded();
	}

	/** The facts of the request that carries `messages`. */
	of(messages: readonly MessageLike[], ctx: ExtensionContext): TurnFacts {
		const window = ctx.model?.contextWindow || piUsage(ctx)?.contextWindow;
		this.settings.forModel(ctx.model);
		const model = modelKeyOf(ctx.model);
		return {
			window,
			usage: this.usage.tokens(messages, () => piUsage(ctx)?.tokens, model),
			neverCacheRead: this.telemetry.neverCacheRead,
			cache: this.cache(ctx),
			keepRecent: this.settings.keepRecent,
			reserve: this.settings.reserve,
			...(model ? { model } : {}),
			...lastStoredReply(ctx.sessionManager),
		};
	}

	/**
	 * The cache as telemetry sees it now, with the model's rewrite price when it has its own. Pi's idle
	 * refreshes are read from the session (a copy of all its entries) only when the cache looks cold
	 * without them: a refresh can only make it warm, and on most requests the latest response is
	 * recent enough that it is warm anyway.
	 */
	private cache(ctx: ExtensionContext): CacheFacts {
		const { ms, rewriteInReads } = this.pricesOf(ctx.model);
		let facts = this.telemetry.facts(this.now(), ms);
		if (facts.warm === false) {
			this.telemetry.catchUp(ctx.sessionManager as LedgerSource);
			facts = this.telemetry.facts(this.now(), ms);
		}
		return rewriteInReads === undefined ? facts : { ...facts, rewriteInReads };
	}

	/**
	 * The cache lifetime and rewrite price for `model`, worked out again only when the model object,
	 * the settings in force or Pi's cache retention for it (`PI_CACHE_RETENTION`, see retentionOf)
	 * changed since the last request: as ActiveSettings.forModel, a model object is taken as unchanged
	 * while it is the same object. Most requests then read the retention once instead of parsing the
	 * settings and reading it three times.
	 */
	private pricesOf(model: ExtensionContext["model"]): ModelPrices {
		const { config, ttlSecondsSet } = this.settings;
		const retention = retentionOf(model);
		const last = this.prices;
		if (
			last !== undefined &&
			last.model === model &&
			last.config === config &&
			last.secondsSet === ttlSecondsSet &&
			last.retention === retention
		)
			return last;
		const { ms } = lifetimeFor(model, config, ttlSecondsSet);
		this.prices = {
			model,
			config,
			secondsSet: ttlSecondsSet,
			retention,
			ms,
			rewriteInReads: rewriteInReadsFor(model),
		};
		return this.prices;
	}
}

/** Entries walked back from the leaf looking for the newest stored reply: a parallel batch's results, a steer. */
const REPLY_WALK = 400;

/**
 * The time of the newest model reply Pi stored on the branch, walked back from its leaf (tool results,
 * steering and custom entries come after it), as `{ lastReply }`; none when the session cannot say
 * (no leaf, no reply within REPLY_WALK entries, a reply without a time). A message another
 * extension's context handler adds is never stored: it cannot pass for what the model last answered.
 */
function lastStoredReply(session: ExtensionContext["sessionManager"]): { lastReply?: number } {
	const sm = session as Partial<Pick<ExtensionContext["sessionManager"], "getLeafEntry" | "getEntry">>;
	if (!sm.getLeafEntry || !sm.getEntry) return {};
	let entry = sm.getLeafEntry() as { type?: string; parentId?: string | null; message?: MessageLike } | undefined;
	for (let steps = 0; entry && steps < REPLY_WALK; steps++) {
		const message = entry.type === "message" ? entry.message : undefined;
		if (message && isModelReply(message)) {
			const at = message.timestamp;
			return typeof at === "number" && Number.isFinite(at) ? { lastReply: at } : {};
		}
		entry = entry.parentId ? (sm.getEntry(entry.parentId) as typeof entry) : undefined;
	}
	return {};
}
