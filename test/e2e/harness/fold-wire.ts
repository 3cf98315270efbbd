/**
 * Reading context-fold's effects off captured request bodies: which tool results went out folded
 * (as `{#code FOLDED}` digests) in each request, per-message JSON for byte-level prefix checks, and
 * call/result pairing. Everything here looks only at the wire, never at the extension's internals.
 */
import {
	type CapturedRequest,
	type JsonObject,
	messagesOf,
	type ReportedUsage,
	toolResultsOf,
} from "./model-server.ts";

/** A fold tag at the very start of a text; group 1 is the code. */
export const TAG_AT_HEAD = /^\{#([0-9a-z]{8}) FOLDED\}/;

/** Any fold tag anywhere in a text. */
export const ANY_TAG = /\{#[0-9a-z]{8} FOLDED\}/;

/** The fold state of one request, as seen on the wire. */
export interface RequestFolds {
	index: number;
	/** Tool results in request order: call id and the text sent. */
	results: { id: string; text: string }[];
	/** Results that went out as a digest: call id → code and digest text. */
	folded: Map<string, { code: string; text: string }>;
	/** Results that differ from their first delivery without being a digest (should never happen). */
	mutated: string[];
	/** Results delivered for the first time in this request. */
	fresh: string[];
	/** Sorted `id=code` list of `folded`: equal signatures mean no fold/unfold event in between. */
	signature: string;
}

/**
 * Follows tool results across requests in arrival order. A result's first delivery is its raw
 * text; later it is "folded" when its text is replaced by a text headed by a fold tag, and raw
 * again when it equals the first delivery.
 */
export class FoldTracker {
	/** First text seen per tool-call id. */
	readonly raw = new Map<string, string>();
	/** The code of the first digest seen per tool-call id. */
	readonly codes = new Map<string, string>();
	private readonly seen = new Map<number, RequestFolds>();

	/** Analyzes one request (idempotent per request index; call in arrival order). */
	observe(req: CapturedRequest): RequestFolds {
		const known = this.seen.get(req.index);
		if (known) return known;
		const results = toolResultsOf(req).map((r) => ({ id: r.toolCallId, text: r.text }));
		const folded = new Map<string, { code: string; text: string }>();
		const mutated: string[] = [];
		const fresh: string[] = [];
		for (const { id, text } of results) {
			const raw = this.raw.get(id);
			if (raw === undefined) {
				this.raw.set(id, text);
				fresh.push(id);
				continue;
			}
			if (text === raw) continue;
			const code = TAG_AT_HEAD.exec(text)?.[1];
			if (!code) {
				mutated.push(id);
				continue;
			}
			folded.set(id, { code, text });
			if (!this.codes.has(id)) this.codes.set(id, code);
		}
		const signature = [...folded]
			.map(([id, f]) => `${id}=${f.code}`)
			.sort()
			.join(",");
		const out: RequestFolds = { index: req.index, results, folded, mutated, fresh, signature };
		this.seen.set(req.index, out);
		return out;
	}
}

/** Runs a fresh tracker over `requests` in order. */
export function analyze(requests: readonly CapturedRequest[]): RequestFolds[] {
	const tracker = new FoldTracker();
	return requests.map((r) => tracker.observe(r));
}

/** A deep copy of `value` without Anthropic `cache_control` keys (Pi moves those every turn). */
export function withoutCacheControl(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(withoutCacheControl);
	if (value && typeof value === "object") {
		const out: JsonObject = {};
		for (const [k, v] of Object.entries(value as JsonObject))
			if (k !== "cache_control") out[k] = withoutCacheControl(v);
		return out;
	}
	return value;
}

/**
 * Per-message JSON of the request's `messages` (Anthropic: `cache_control` stripped; chat completions:
 * as is, which includes the leading system message), per-item JSON of a Responses `input` (as is:
 * the developer message first, then every message, reasoning item, call and call output), or
 * per-content JSON of Gemini `contents` (as is).
 */
export function messageJson(req: CapturedRequest): string[] {
	const list = req.api === "responses" ? req.body.input : req.api === "gemini" ? req.body.contents : req.body.messages;
	const messages = Array.isArray(list) ? (list as unknown[]) : [];
	return messages.map((m) => JSON.stringify(req.api === "anthropic" ? withoutCacheControl(m) : m));
}

/**
 * JSON of what precedes the messages: Anthropic `system` + `tools`, OpenAI (both APIs) `tools`, Gemini
 * `systemInstruction` + `tools`.
 */
export function headJson(req: CapturedRequest): string {
	const b = req.body;
	const head =
		req.api === "anthropic" ? [b.system, b.tools] : req.api === "gemini" ? [b.systemInstruction, b.tools] : [b.tools];
	return JSON.stringify(withoutCacheControl(head));
}

/** Index of the first message where `a` is not a prefix of `b`, or -1 when it is. */
export function prefixBreak(a: readonly string[], b: readonly string[]): number {
	if (b.length < a.length) return Math.min(a.length, b.length);
	for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
	return -1;
}

/** Tool calls without a result and results without a call in one request (both empty when paired). */
export function unpaired(req: CapturedRequest): { callsWithoutResult: string[]; resultsWithoutCall: string[] } {
	const calls = new Set<string>();
	const results = new Set<string>();
	for (const m of messagesOf(req)) {
		for (const c of m.toolCalls ?? []) calls.add(c.id);
		if (m.role === "tool" && m.toolCallId !== undefined) results.add(m.toolCallId);
	}
	return {
		callsWithoutResult: [...calls].filter((id) => !results.has(id)),
		resultsWithoutCall: [...results].filter((id) => !calls.has(id)),
	};
}

/**
 * Roughly the context usage Pi saw before request `i`: the previous response's reported prompt and
 * output tokens plus chars/4 of the tool results delivered for the first time in request `i`.
 */
export function usageSeenBefore(
	i: number,
	usages: readonly (ReportedUsage | undefined)[],
	folds: readonly RequestFolds[],
): number {
	const prev = usages[i - 1];
	const freshChars = folds[i].results
		.filter((r) => folds[i].fresh.includes(r.id))
		.reduce((n, r) => n + r.text.length, 0);
	return (prev ? prev.promptTokens + prev.output : 0) + Math.ceil(freshChars / 4);
}

/** The text of the result for call `id` in a request, or undefined. */
export function resultText(folds: RequestFolds, id: string): string | undefined {
	return folds.results.find((r) => r.id === id)?.text;
}

/** The lines of a text, for exact line membership checks. */
export function linesOf(text: string): string[] {
	return text.split("\n");
}
