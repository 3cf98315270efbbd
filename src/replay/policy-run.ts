/**
 * One policy's replay as run.ts takes and gives it: the policy replayed under (ReplayPolicy), the
 * run's options (RunOptions), each request as sent (CapturedRequest), with what the recording says
 * of the reply it produced (failedWithoutUsage, refusedByProvider), and the run (PolicyRun).
 */
import type { MessageLike } from "../core/block.ts";
import type { ClearSettings } from "./peers.ts";
import type { PriceModel } from "./price.ts";
import type { BlockTable, RequestShape } from "./request-shape.ts";

/** A policy to replay under. */
export type ReplayPolicy =
	| { name: string; kind: "pi" }
	| { name: string; kind: "context-fold"; settings: Record<string, unknown> }
	| { name: string; kind: "compact-only" }
	| { name: string; kind: "mask"; keep: number }
	| { name: string; kind: "clear"; settings: ClearSettings };

/** One request as sent. */
export interface CapturedRequest {
	kind: "turn" | "summary";
	/** Recorded time of the request (ms): the timestamp of the recorded assistant message it produced. */
	at: number;
	/** The request as blocks, interned in the run's `table` when it was sent. */
	shape: RequestShape;
	/** The messages as sent, kept only with `keepMessages` (they dominate a long replay's memory). */
	messages?: MessageLike[];
	/** Index in `script.messages` of the recorded assistant message returned (turn requests). */
	produced?: number;
	/** Milliseconds in the policy's `context` hook, and in one structuredClone of its input. */
	hookMs?: number;
	cloneMs?: number;
	/** A compaction ran since the previous request. */
	afterCompaction: boolean;
	/** Asked whether to warm the previous turn request in the gap before this one, the extensions said stop. */
	warmingStopped?: boolean;
	/** The request opens an agent run: the gap before it is Pi's idle phase (see price.ts WarmingPhase). */
	opensRun?: boolean;
	/** Its reply failed (an error, an abort) and reported no prompt: Pi weighs a refresh of it at 0 tokens. */
	failedWithoutUsage?: boolean;
	/** Its reply is an error with no usage at all: the provider refused the request (a rate limit, an overload). */
	refused?: boolean;
}

/** One policy's replay. */
export interface PolicyRun {
	policy: string;
	requests: CapturedRequest[];
	/** The block table every request's shape is interned in. */
	table: BlockTable;
	compactions: number;
	/** Where the replay could not follow the recording, counted by kind. */
	divergences: Record<string, number>;
	/**
	 * Notices the policy's extension gave the replayed session's user (context-fold's advisories and
	 * warnings), counted instead of printed: they advise that user, not whoever runs the replay.
	 */
	advisories: number;
}

/**
 * Whether a recorded reply failed (an error, an abort) without reporting its prompt: Pi weighs the
 * refreshes after it by the last reply's usage, and at 0 tokens it sends none.
 */
export function failedWithoutUsage(reply: MessageLike): boolean {
	if (reply.stopReason !== "error" && reply.stopReason !== "aborted") return false;
	const usage = (reply as { usage?: { input?: number; cacheRead?: number; cacheWrite?: number } }).usage;
	return (usage?.input ?? 0) + (usage?.cacheRead ?? 0) + (usage?.cacheWrite ?? 0) === 0;
}

/**
 * Whether a recorded reply is an error that used nothing (no prompt read, no output): the provider
 * refused the request (a rate limit, an overload) and billed nothing. An aborted reply is not one:
 * the provider had read its prompt.
 */
export function refusedByProvider(reply: MessageLike): boolean {
	if (reply.stopReason !== "error") return false;
	const usage = (reply as { usage?: Record<string, unknown> }).usage ?? {};
	return ["input", "output", "cacheRead", "cacheWrite"].every((k) => !usage[k]);
}

/** Options of a replay. */
export interface RunOptions {
	window: number;
	/**
	 * The cache the run is priced under, as context-fold should see it in the idle gaps: its price
	 * model and whether Pi warms it (default: anthropic-5m, warming on, the CLI's defaults).
	 */
	cache?: { model: PriceModel; warming: boolean };
	onProgress?: (done: number, total: number) => void;
	/** Keep each request's messages (tests); by default only their shape is kept. */
	keepMessages?: boolean;
	/** Tokens of an image part from its data (`--images size`); by default its placeholder text's. */
	imageTokens?: (data: string) => number;
	/**
	 * Receives each request's messages as the policy's first `context` handler got them (the copy the
	 * hook column's clone makes, handed over once the handlers are timed): the handler bench replays
	 * them through a stub host.
	 */
	onHookInput?: (messages: MessageLike[]) => void;
	/**
	 * False: the policy's `context` handlers are not timed, so the run has no hook column and makes no
	 * clone of each request for it (callers that read neither, such as the acceptance tests).
	 */
	timeHooks?: boolean;
}
