/**
 * Cache telemetry: what the provider's prompt cache did, read from Pi's usage reports (assistant
 * `message_end` usage and `usage` session entries of kind `cache_warm`, Pi 1.6's idle refreshes).
 * It is kept for one provider and model at a time and starts over when the model changes. It holds
 * plain data only (times in epoch milliseconds, as Pi records them), so the user's view can render
 * it and the policy can read the facts it needs (`CacheFacts`) without a clock of its own.
 */
import { figuresOf, promptOf } from "../../../core/cache-advice.ts";
import type { CacheFacts } from "../../../core/contract.ts";
import type { LedgerSource } from "../fold/session-ledger.ts";

/** A usage report as Pi gives it (every field optional: Pi's shapes are read tolerantly). */
export interface UsageLike {
	input?: number;
	output?: number;
	cacheRead?: number;
	cacheWrite?: number;
	cacheWrite1h?: number;
}

/** One response's cache figures. */
export interface ResponseFigures {
	/** When the response ended (epoch ms); undefined when Pi recorded no time. */
	at: number | undefined;
	/** Uncached prompt tokens. */
	input: number;
	cacheRead: number;
	/** Tokens written to the cache (the 1-hour share included). */
	cacheWrite: number;
	/** The part of cacheWrite written with 1-hour retention (Anthropic only; 0 otherwise). */
	cacheWrite1h: number;
	/** cacheRead / (input + cacheRead + cacheWrite); 0 for an empty prompt. */
	hitRatio: number;
}

/** One fold event as the cache saw it. */
export interface FoldEventFigures {
	seq: number;
	/** When the event was committed (epoch ms). */
	at: number;
	/** Tokens the event kept out of the request (its projected saving). */
	masked: number;
	/** The rewrite it caused: input + cacheWrite of the first response after it; undefined until then. */
	rewrite: number | undefined;
	/** Responses since the event. */
	responses: number;
	/** Tokens ahead since the event: masked × responses since it, minus its rewrite. */
	netAhead: number;
}

/** Everything the telemetry holds for the current provider and model: plain data. */
export interface CacheSnapshot {
	provider: string | undefined;
	model: string | undefined;
	responses: number;
	/** Responses that read anything from the cache. */
	hits: number;
	/** A response read from or wrote to the cache: the provider caches this model's prompts. */
	cached: boolean;
	last: ResponseFigures | undefined;
	/** When a response last read from the cache (epoch ms). */
	lastHitAt: number | undefined;
	/** Pi's idle refreshes (`cache_warm` usage entries) seen, and when the latest one ran. */
	warms: number;
	lastWarmAt: number | undefined;
	events: FoldEventFigures[];
}

/** The cache telemetry of one session branch, for its current provider and model. */
export class CacheTelemetry {
	private state: CacheSnapshot = blank(undefined, undefined);
	/** How many of the session's entries catchUp has read. */
	private seenEntries = 0;

	/**
	 * Reads the `cache_warm` refreshes Pi appended to the session since the last call: Pi's idle
	 * refreshes reach no extension event, only the session's entries.
	 */
	catchUp(source: LedgerSource): void {
		const count = source.getEntryCount?.();
		if (count !== undefined && count <= this.seenEntries) {
			this.seenEntries = count;
			return;
		}
		const entries = source.getEntries();
		for (let i = this.seenEntries; i < entries.length; i++) {
			const entry = entries[i] as { type?: string; kind?: string };
			if (entry.type === "usage" && entry.kind === CACHE_WARM) this.observeEntry(entry);
		}
		this.seenEntries = entries.length;
	}

	/** Counts every entry of the session as read by catchUp (after a restore from the branch). */
	skipEntries(source: LedgerSource): void {
		this.seenEntries = source.getEntryCount?.() ?? source.getEntries().length;
	}

	/** Starts over (session start, tree navigation). */
	reset(): void {
		this.state = blank(undefined, undefined);
	}

	/** Names the provider and model; a change from the current one starts the telemetry over. */
	select(provider: string | undefined, model: string | undefined): void {
		if (provider === undefined && model === undefined) return;
		const s = this.state;
		if (s.provider === provider && s.model === model) return;
		if (s.provider === undefined && s.model === undefined && s.responses === 0 && s.warms === 0) {
			s.provider = provider;
			s.model = model;
			return;
		}
		this.state = blank(provider, model);
	}

	/**
	 * Feeds one assistant response's usage, ended at `at`. A reply that reports no prompt (a provider
	 * error, a request aborted before the provider answered) is no response: it read nothing, wrote
	 * nothing and touched no cache, as the cache warning and the advisor count it too.
	 */
	observeResponse(usage: UsageLike | undefined, at: number | undefined): void {
		if (!usage) return;
		const { input, cacheRead, cacheWrite } = figuresOf(usage);
		const prompt = promptOf({ input, cacheRead, cacheWrite });
		if (prompt === 0) return;
		const figures: ResponseFigures = {
			at,
			input,
			cacheRead,
			cacheWrite,
			cacheWrite1h: count(usage.cacheWrite1h),
			hitRatio: cacheRead / prompt,
		};
		const s = this.state;
		s.responses++;
		s.last = figures;
		if (cacheRead > 0 || cacheWrite > 0) s.cached = true;
		if (cacheRead > 0) {
			s.hits++;
			if (at !== undefined) s.lastHitAt = at;
		}
		for (const event of s.events) {
			if (event.rewrite === undefined) event.rewrite = input + cacheWrite;
			event.responses++;
			event.netAhead = event.masked * event.responses - event.rewrite;
		}
	}

	/** Feeds one of Pi's idle refreshes (a `cache_warm` usage entry) that ran at `at`. */
	observeWarm(at: number): void {
		const s = this.state;
		s.warms++;
		if (s.lastWarmAt === undefined || at > s.lastWarmAt) s.lastWarmAt = at;
	}

	/** Records a committed fold event that kept `masked` tokens out of the request. */
	observeFold(seq: number, masked: number, at: number): void {
		this.state.events.push({ seq, at, masked, rewrite: undefined, responses: 0, netAhead: 0 });
	}

	/**
	 * True once a response read from or wrote to the cache: the provider caches. A provider that
	 * never does (a local endpoint, Pi's caching off) makes no prompt dearer than another by a pause.
	 */
	get caches(): boolean {
		return this.state.cached;
	}

	/** True once two responses reported a prompt and none of them read from the cache. */
	get neverCacheRead(): boolean {
		return this.state.responses >= 2 && this.state.hits === 0;
	}

	/**
	 * The facts the policy reads at `now`: the cache is cold once the latest response and the latest
	 * idle refresh are both older than `ttlMs`; unknown before the first response, or when the
	 * latest response has no recorded time.
	 */
	facts(now: number, ttlMs: number): CacheFacts {
		const s = this.state;
		if (s.last?.at === undefined) return { warm: undefined };
		const touched = Math.max(s.last.at, s.lastWarmAt ?? Number.NEGATIVE_INFINITY);
		const idleMs = Math.max(0, now - touched);
		return { warm: idleMs <= ttlMs, idleMs, ttlMs };
	}

	/**
	 * Rebuilds the telemetry from a branch's entries, oldest first: assistant responses, model
	 * changes and `cache_warm` refreshes, each at the time Pi recorded it.
	 */
	restore(entries: readonly unknown[]): void {
		this.reset();
		for (const raw of entries) this.observeEntry(raw);
	}

	/**
	 * Feeds one session entry: a model change, an assistant response, or a `cache_warm` usage
	 * entry. Anything else is ignored. A refresh is counted only for the current provider (Pi records
	 * it under the response's model name, which may be an alias of the selected one).
	 */
	observeEntry(raw: unknown): void {
		const entry = raw as EntryLike | undefined;
		if (!entry || typeof entry !== "object") return;
		if (entry.type === "model_change") {
			this.select(entry.provider, entry.modelId);
		} else if (entry.type === "message" && entry.message?.role === "assistant") {
			this.select(entry.message.provider, entry.message.model);
			this.observeResponse(entry.message.usage, timeOf(entry.timestamp) ?? timeOf(entry.message.timestamp));
		} else if (entry.type === "usage" && entry.kind === CACHE_WARM) {
			const current = this.state.provider;
			if (current !== undefined && entry.provider !== undefined && entry.provider !== current) return;
			const at = timeOf(entry.timestamp);
			if (at !== undefined) this.observeWarm(at);
		}
	}

	/** A copy of everything held, for display. */
	snapshot(): CacheSnapshot {
		return structuredClone(this.state);
	}
}

/** The `usage` entry kind Pi 1.6 gives its idle cache refreshes. */
export const CACHE_WARM = "cache_warm";

/** The fields of a session entry the telemetry reads. */
interface EntryLike {
	type?: string;
	timestamp?: unknown;
	kind?: string;
	provider?: string;
	modelId?: string;
	message?: { role?: string; provider?: string; model?: string; usage?: UsageLike; timestamp?: unknown };
}

/** An ISO date-time with no zone (Date.parse reads it in the machine's own). */
const ZONELESS = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/**
 * Epoch ms from a number or an ISO date string, a date-time without a zone read as UTC (as every
 * machine reads it alike); undefined when neither.
 */
export function timeOf(value: unknown): number | undefined {
	if (typeof value === "number" && Number.isFinite(value)) return value;
	if (typeof value === "string") {
		const ms = Date.parse(ZONELESS.test(value) ? `${value.replace(" ", "T")}Z` : value);
		return Number.isFinite(ms) ? ms : undefined;
	}
	return undefined;
}

function blank(provider: string | undefined, model: string | undefined): CacheSnapshot {
	return {
		provider,
		model,
		responses: 0,
		hits: 0,
		cached: false,
		last: undefined,
		lastHitAt: undefined,
		warms: 0,
		lastWarmAt: undefined,
		events: [],
	};
}

function count(value: unknown): number {
	return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
