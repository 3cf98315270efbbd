/**
 * The context's size in tokens for the fold policy, worked out from the request's own messages the
 * way Pi's `ctx.getContextUsage()` does (the last valid response's usage plus an estimate of every
 * message after it), without Pi rebuilding its session projection on every request (0.03–0.16 ms
 * on the corpus, as much as the fold pass itself).
 *
 * Pi trusts a response's usage only when the response came after the latest compaction. The
 * request shows a compaction as a leading `compactionSummary` message, but not which responses came
 * after it, so until Pi has once reported a size for that compaction the hook asks Pi; from then on
 * the latest response is always a later one. A `/tree` move or a session change forgets that.
 * Pi also distrusts usage from before a `context_edit` entry (retry recovery, other extensions),
 * which a request does not show: there the figure is off by at most the edit. A reply that failed
 * or was aborted is estimated at nothing: pi-ai sends it in no request; nor is thinking that another
 * model than the request's wrote (pi-ai drops it), which Pi's own figure still counts; right after a
 * switch of model the last response's figure holds such thinking, so none is given. Nor is one
 * while the last response is older than a fold event or an unfold: its figure counts what changed
 * since at the old size (a fold event's request that failed and is retried, the request after an
 * unfold), and the pass estimates the request itself until a response has seen the change.
 */
import { calculateContextTokens, estimateTokens } from "@earendil-works/pi-coding-agent";
import { isModelReply, type MessageLike, type ModelKey, thinkingSentTo } from "../../../core/block.ts";

type Usage = Parameters<typeof calculateContextTokens>[0];

/**
 * The usage of a response Pi would trust the size of, or undefined; and not one that reports no
 * prompt (a provider that sends output tokens alone), which Pi counts as a context of a few tokens:
 * the policy would never fold. Such a response is estimated, as one without usage is.
 */
function validUsage(message: MessageLike): Usage | undefined {
	const usage = usageOf(message);
	return usage && !promptless(usage) ? usage : undefined;
}

/** The usage of a response Pi trusts the size of (see validUsage), promptless or not. */
function usageOf(message: MessageLike): Usage | undefined {
	if (message.role !== "assistant") return undefined;
	const m = message as { stopReason?: unknown; usage?: Usage };
	if (m.stopReason === "aborted" || m.stopReason === "error" || !m.usage) return undefined;
	return calculateContextTokens(m.usage) > 0 ? m.usage : undefined;
}

/** True for a usage that reports no prompt: input, cache read and cache write all 0. */
function promptless(usage: Usage): boolean {
	const { input, cacheRead, cacheWrite } = usage as { input?: number; cacheRead?: number; cacheWrite?: number };
	return !((input ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0) > 0);
}

/** Pi's estimate of a message's tokens, or undefined when its estimator cannot read the message (it throws). */
function estimateOf(message: MessageLike): number | undefined {
	try {
		return estimateTokens(message as never);
	} catch {
		return undefined;
	}
}

/** Pi's estimate of a token: 4 characters (`estimateTokens`, its compaction's and its context figure's). */
const CHARS_PER_TOKEN = 4;

/** Characters Pi's estimator counts for an image (its `ESTIMATED_IMAGE_CHARS`). */
const ESTIMATED_IMAGE_CHARS = 4800;

/** Characters of the placeholder pi-ai sends a model without image input for a run of images (its longer one). */
const IMAGE_PLACEHOLDER_CHARS = "(tool image omitted: model does not support images)".length;

/**
 * Tokens Pi's estimate of `message` counts for images that `model` is not sent: pi-ai sends a model
 * without image input one placeholder for each run of images in a user message or tool result, where
 * Pi's estimator counts every image in full. 0 for a model that takes images, or one not known.
 */
function imagesNotSent(message: MessageLike, model: ModelKey | undefined): number {
	if (model?.images !== false || (message.role !== "user" && message.role !== "toolResult")) return 0;
	if (!Array.isArray(message.content)) return 0;
	let images = 0;
	let runs = 0;
	let inRun = false;
	for (const part of message.content as { type?: unknown }[]) {
		const image = part?.type === "image";
		if (image) images++;
		if (image && !inRun) runs++;
		inRun = image;
	}
	if (images === 0) return 0;
	return Math.floor((images * ESTIMATED_IMAGE_CHARS - runs * IMAGE_PLACEHOLDER_CHARS) / CHARS_PER_TOKEN);
}

/** The model an assistant message came from, or undefined. */
function modelOf(message: MessageLike): ModelKey | undefined {
	const m = message as { role?: unknown; provider?: unknown; api?: unknown; model?: unknown };
	if (m.role !== "assistant" || typeof m.provider !== "string" || typeof m.api !== "string") return undefined;
	return typeof m.model === "string" ? { provider: m.provider, api: m.api, id: m.model } : undefined;
}

/** Pi's estimate of the thinking of `message` that a request to `model` leaves out (0 when it is sent). */
function droppedThinking(message: MessageLike, model: ModelKey | undefined): number {
	if (message.role !== "assistant" || thinkingSentTo(message, model) || !Array.isArray(message.content)) return 0;
	let chars = 0;
	for (const part of message.content as { type?: unknown; thinking?: unknown }[])
		if (part?.type === "thinking" && typeof part.thinking === "string") chars += part.thinking.length;
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** True when a message up to `last` holds an image (a user's, or a tool result's). */
function holdsImage(messages: readonly MessageLike[], last: number): boolean {
	for (let i = 0; i <= last; i++) {
		const content = messages[i].content;
		if (Array.isArray(content) && content.some((part) => (part as { type?: unknown })?.type === "image")) return true;
	}
	return false;
}

/** The key of the compaction whose summary leads `messages`, or "" when none does. */
function compactionKey(messages: readonly MessageLike[]): string {
	const first = messages[0] as { role?: unknown; timestamp?: unknown; tokensBefore?: unknown } | undefined;
	return first?.role === "compactionSummary" ? `${first.timestamp}:${first.tokensBefore}` : "";
}

/** Which response a figure of `size` comes from: its time and that size (requests carry deep copies, not the same objects). */
function responseKey(message: MessageLike, size: number): string {
	return `${(message as { timestamp?: unknown }).timestamp}:${size}`;
}

/** Pi's context size for the request's messages, asking Pi only while a compaction's trust is unknown. */
export class ContextUsage {
	private trusted = "";
	/** The response the latest figure came from. */
	private read = "";
	/** A response whose figure predates a fold event or an unfold (see folded, unfolded). */
	private predates = "";
	/** True after an unfold, until the next request names the response it came after. */
	private unfoldedSince = false;

	/** Forgets which compaction has a later response (after `/tree` or a session change). */
	reset(): void {
		this.trusted = "";
		this.predates = "";
		this.unfoldedSince = false;
	}

	/** A fold event was committed on the request just measured: its figure predates the folds. */
	folded(): void {
		this.predates = this.read;
	}

	/** Blocks were unfolded: the figure of the next request's last response predates them. */
	unfolded(): void {
		this.unfoldedSince = true;
	}

	/**
	 * Tokens of the context `messages` make; `ask` is Pi's own figure (`ctx.getContextUsage()`),
	 * called only after a compaction until a later response is known. Null when Pi cannot tell.
	 */
	tokens(
		messages: readonly MessageLike[],
		ask: () => number | null | undefined,
		model?: ModelKey,
	): number | null | undefined {
		let at = messages.length - 1;
		let usage: Usage | undefined;
		for (; at >= 0; at--) {
			usage = validUsage(messages[at]);
			if (usage) break;
		}
		const size = usage ? calculateContextTokens(usage) : 0;
		this.read = usage ? responseKey(messages[at], size) : "";
		if (this.unfoldedSince) {
			this.predates = this.read;
			this.unfoldedSince = false;
		}
		// Pi's figure and the response's alike count what changed since at the old size.
		if (this.read !== "" && this.read === this.predates) return undefined;
		const key = compactionKey(messages);
		if (key !== "" && key !== this.trusted) {
			const reported = ask();
			if (typeof reported === "number") this.trusted = key;
			return reported;
		}
		// No response yet: Pi estimates every message and the system prompt, which the request lacks.
		// Responses that report no prompt: Pi counts their output alone, so the pass estimates the request.
		if (!usage) return messages.some((m) => usageOf(m) !== undefined) ? undefined : ask();
		// After a switch of model, the last response's figure holds thinking this model is not sent
		// (pi-ai drops thinking another model wrote), raw or folded as the previous request carried it:
		// the pass then estimates the request itself (undefined), until this model answers.
		const before = modelOf(messages[at]);
		if (model && before && !thinkingSentTo(messages[at], model))
			for (let i = 0; i <= at; i++)
				if (
					isModelReply(messages[i]) &&
					thinkingSentTo(messages[i], before) &&
					droppedThinking(messages[i], model) > 0
				)
					return undefined;
		// After a switch of model, an image the last request sent in full goes to a model without image
		// input as pi-ai's placeholder, or the other way round: the pass estimates the request itself.
		if (model && !thinkingSentTo(messages[at], model) && holdsImage(messages, at)) return undefined;
		let tokens = size;
		// A reply that failed or was aborted is in no request (pi-ai leaves it out): it adds nothing.
		for (let i = at + 1; i < messages.length; i++) {
			if (messages[i].role === "assistant" && !isModelReply(messages[i])) continue;
			const added = estimateOf(messages[i]);
			// A message Pi's estimator cannot read: the pass estimates the request itself.
			if (added === undefined) return undefined;
			tokens += added - droppedThinking(messages[i], model) - imagesNotSent(messages[i], model);
		}
		return Math.max(0, tokens);
	}
}
