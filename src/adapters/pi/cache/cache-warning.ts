/**
 * The idle cache-risk warning. It predicts, from the active branch's assistant responses (stamped
 * when their request started) and Pi's own idle refreshes (`usage` entries of kind `cache_warm`)
 * for the current provider and model, whether the next prompt finds the prompt cache cold, with the
 * cache lifetime the host gives the model (see cache/lifetime.ts: a saved one, else the model's
 * own). It notices this once per idle streak: when the interval runs out while Pi is idle (a
 * timer), on resuming a session, or at the next prompt. With `confirmColdSend` on, the `input` hook
 * asks before a likely-cold interactive prompt is sent: "Keep draft" puts the text back in the
 * editor and keeps its images for the next prompt (until `discardImages()`, or a session change,
 * which says it dropped them), "Send anyway" sends it. Automation, RPC and queued input pass
 * untouched. If the estimate or the dialog throws, the input proceeds and the failure is announced
 * once; if the editor refuses the draft, nothing is sent and the notice says the draft was not kept
 * and quotes its text. The timer, the notice bookkeeping and the kept images live only here;
 * session start, navigation and shutdown reset them.
 */
import type { ExtensionContext, InputEvent, InputEventResult } from "@earendil-works/pi-coding-agent";
import {
	ADVICE,
	COLD_INPUT_MIN_TOKENS,
	figuresOf,
	type IdlePrediction,
	KEEP_DRAFT,
	predictIdle,
	promptOf,
	SEND_ANYWAY,
} from "../../../core/cache-advice.ts";
import { unfoldedSinceReply } from "../../../core/session-history.ts";
import { errorText } from "../error-text.ts";
import { ENTRY_TYPE } from "../fold/persistence.ts";
import type { FoldConfig } from "../settings-schema.ts";
import { CACHE_WARM, timeOf, type UsageLike } from "./telemetry.ts";

type Image = NonNullable<InputEvent["images"]>[number];

/**
 * The longest delay Node's setTimeout keeps (2^31-1 ms, about 24.8 days); a longer one fires after
 * 1 ms. An idle interval past it is waited out in steps: each recheck re-arms for the rest.
 */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** What the warning needs from its host. */
export interface WarningDeps {
	notify: (message: string, level: "warning" | "info") => void;
	/** Announces a failure of the confirmation path once and lists it among the status's Failures. */
	fail: (message: string) => void;
	/** Announces a lost draft every time (the notice holds its text) and lists it among the Failures. */
	lost: (message: string) => void;
	/**
	 * Shows the notice found when a session is opened where Pi's redraw of the restored transcript
	 * cannot scroll it away (the terminal UI's widget above the editor); false when it cannot, and
	 * the notice then goes to `notify`.
	 */
	stand?: (message: string) => boolean;
	config: () => FoldConfig;
	/** The cache lifetime assumed for `model`, in ms. */
	ttlMs: (model: Place["model"]) => number;
	/** The adapter's clock (epoch ms). */
	now: () => number;
	/**
	 * Whether the provider caches the current model's prompts (a response read from or wrote to the
	 * cache); where it never does, a pause makes no prompt dearer and nothing is said.
	 */
	caches: () => boolean;
	/** The tokens unfolding the blocks `ids` puts back into the next request (their folds' saving). */
	unfoldedBack?: (ids: readonly string[]) => number;
}

/** What the prediction reads from Pi's context. */
type Place = Pick<ExtensionContext, "sessionManager" | "model">;

/** The prediction for the current provider and model, with what it was computed from. */
export interface Risk {
	provider: string;
	prediction: IdlePrediction;
	ttlMs: number;
	carried: number;
}

/** The idle cache-risk warning of one session. */
export class CacheWarning {
	private readonly deps: WarningDeps;
	private timer: ReturnType<typeof setTimeout> | undefined;
	private noticed: number | undefined;
	private place: Place | undefined;
	/** Images of prompts the user kept as drafts, re-attached to the next interactive prompt. */
	private readonly kept: Image[] = [];

	constructor(deps: WarningDeps) {
		this.deps = deps;
	}

	/** Clears the images kept from cancelled prompts (`/context-fold discard-images`); returns how many there were. */
	discardImages(): number {
		const n = this.kept.length;
		this.kept.length = 0;
		return n;
	}

	/** How many images are kept from cancelled prompts. */
	keptImages(): number {
		return this.kept.length;
	}

	/**
	 * Forgets the timer, the notices and the kept images (session start, navigation); images it drops
	 * are said through `lost`, since the user was told they would go with the next prompt: while Pi
	 * restores a session that notice stands above the editor, where Pi's redraw cannot wipe it.
	 */
	reset(): void {
		this.stop();
		const dropped = this.discardImages();
		if (dropped > 0) this.deps.lost(ADVICE.imagesDropped(dropped));
	}

	/**
	 * Forgets the timer and the notices, keeping the kept images (session shutdown): the next session's
	 * start drops them and says so where it can be read (a notice at shutdown went with the old
	 * session's screen).
	 */
	stop(): void {
		this.disarm();
		this.noticed = undefined;
		this.place = undefined;
	}

	/**
	 * The prediction for `place`'s provider and model; undefined without a completed response of it,
	 * when a compaction came after that response, or where the provider never caches.
	 */
	risk(place: Place): Risk | undefined {
		const provider = place.model?.provider;
		const model = place.model?.id;
		if (provider === undefined || !this.deps.caches()) return undefined;
		let completedAt: number | undefined;
		let warmedAt: number | undefined;
		let carried = 0;
		const branch = place.sessionManager.getBranch() as EntryLike[];
		for (let i = branch.length - 1; i >= 0 && completedAt === undefined; i--) {
			const entry = branch[i];
			// A compaction since the latest response changed the prompt's head: the next request writes it
			// whole however long the pause, so a warning would only quote the size from before it.
			if (entry.type === "compaction") return undefined;
			// Pi records a refresh under the response's model name, which may be an alias: the provider decides.
			if (entry.type === "usage" && entry.kind === CACHE_WARM && entry.provider === provider) {
				const at = timeOf(entry.timestamp);
				if (at !== undefined && (warmedAt === undefined || at > warmedAt)) warmedAt = at;
			}
			const m = entry.type === "message" ? entry.message : undefined;
			if (m?.role !== "assistant" || m.provider !== provider || (model !== undefined && m.model !== model)) continue;
			// A reply cut short (aborted, or an error mid-stream) whose usage reports a prompt touched the
			// cache as any other did; one that reports none never reached it.
			const prompt = promptOf(figuresOf(m.usage));
			if (prompt === 0) continue;
			completedAt = timeOf(m.timestamp) ?? timeOf(entry.timestamp);
			carried = prompt;
		}
		// Blocks unfolded since that response come back raw in the next prompt, which its figure predates.
		carried += this.deps.unfoldedBack?.(unfoldedSinceReply(branch, ENTRY_TYPE)) ?? 0;
		const ttlMs = this.deps.ttlMs(place.model);
		const minutes = this.deps.config().cacheIdleMinutes;
		if (minutes === 0) return undefined;
		const prediction = predictIdle({
			now: this.deps.now(),
			completedAt,
			warmedAt,
			ttlMs,
			carried,
			quietMs: minutes === "auto" ? 0 : minutes * 60_000,
		});
		return prediction
			? { provider: model ? `${provider}/${model}` : provider, prediction, ttlMs, carried }
			: undefined;
	}

	/**
	 * The agent went idle, or a session was `opened`: notices a cold cache now (on opening, where Pi's
	 * redraw cannot scroll it away, see WarningDeps.stand), else arms a timer for when the interval
	 * runs out. The timer re-checks then, so a refresh by Pi's cache warming postpones the notice; an
	 * interval past Node's longest timer is waited out in steps (LONGEST_TIMER_MS).
	 */
	idle(place: Place, opened = false): void {
		this.disarm();
		this.place = place;
		const risk = this.risk(place);
		if (!risk) return;
		if (risk.prediction.risky) {
			this.noticeOnce(risk, opened);
			return;
		}
		if (risk.carried < COLD_INPUT_MIN_TOKENS || this.noticed === risk.prediction.since) return;
		const wait = Math.max(0, risk.prediction.leftMs) + 1_000;
		this.timer = setTimeout(() => this.recheck(), Math.min(wait, LONGEST_TIMER_MS));
		this.timer.unref?.();
	}

	/** A request is starting: the idle timer stops. */
	busy(): void {
		this.disarm();
	}

	/**
	 * The `input` hook. Interactive prompts typed while idle are checked; images kept from a cancelled
	 * prompt are attached to the next one that is sent.
	 */
	async onInput(event: InputEvent, ctx: ExtensionContext): Promise<InputEventResult | undefined> {
		if (event.source !== "interactive" || event.streamingBehavior !== undefined) return undefined;
		const images = this.kept.length > 0 ? [...(event.images ?? []), ...this.kept] : event.images;
		const send: InputEventResult =
			images === event.images ? { action: "continue" } : { action: "transform", text: event.text, images };
		let risk: Risk | undefined;
		try {
			risk = this.risk(ctx);
		} catch (error) {
			this.deps.fail(
				`context-fold: the cold-cache check failed, the prompt was sent unchecked: ${errorText(error)}`,
			);
			return this.sent(send);
		}
		if (!risk?.prediction.risky) return this.sent(send);
		if (!this.deps.config().confirmColdSend || ctx.mode !== "tui" || !ctx.hasUI) {
			this.noticeOnce(risk);
			return this.sent(send);
		}
		let choice: string | undefined;
		try {
			choice = await ctx.ui.select(ADVICE.confirmTitle(risk.provider, risk.prediction, risk.carried), [
				KEEP_DRAFT,
				SEND_ANYWAY,
			]);
		} catch (error) {
			this.deps.fail(
				`context-fold: the cold-send confirmation could not be shown, the prompt was sent: ${errorText(error)}`,
			);
			return this.sent(send);
		}
		this.noticed = risk.prediction.since;
		if (choice === SEND_ANYWAY) return this.sent(send);
		// Keep draft, or the dialog dismissed: an explicit cancellation consumes the input.
		this.kept.length = 0;
		this.kept.push(...(images ?? []));
		try {
			ctx.ui.setEditorText(event.text);
		} catch (error) {
			// The editor refused the text: nothing is sent, as asked, and the notice carries the text itself.
			this.deps.lost(draftNotKept(event.text, this.kept.length, error));
			return { action: "handled" };
		}
		// Also redraws the editor, which setEditorText alone leaves to the next render.
		this.deps.notify(ADVICE.keptDraft(this.kept.length), "info");
		return { action: "handled" };
	}

	private sent(result: InputEventResult): InputEventResult | undefined {
		if (result.action === "transform") this.kept.length = 0;
		return result.action === "continue" ? undefined : result;
	}

	private recheck(): void {
		this.timer = undefined;
		const place = this.place;
		if (!place) return;
		try {
			this.idle(place);
		} catch (error) {
			// Shutdown and navigation disarm the timer first, so a live session failed here: said as the
			// agent_settled check says it.
			this.deps.fail(`context-fold: idle cache check skipped: ${errorText(error)}`);
		}
	}

	private noticeOnce(risk: Risk, opened = false): void {
		if (this.noticed === risk.prediction.since) return;
		this.noticed = risk.prediction.since;
		const message = ADVICE.idle(risk.provider, risk.prediction, risk.ttlMs, risk.carried);
		if (opened && this.deps.stand?.(message)) return;
		this.deps.notify(message, "warning");
	}

	private disarm(): void {
		if (this.timer !== undefined) clearTimeout(this.timer);
		this.timer = undefined;
	}
}

/**
 * The notice when Keep draft could not put the text back in the editor: says the draft was not kept
 * and nothing was sent, and quotes the text so that it is not lost.
 */
function draftNotKept(text: string, images: number, error: unknown): string {
	const kept = images > 0 ? `; ${images} image${images === 1 ? "" : "s"} kept for the next prompt` : "";
	return `context-fold: draft NOT kept, the editor refused it (${errorText(error)}); nothing was sent${kept}. Your text was:\n${text}`;
}

/** The fields of a branch entry the prediction reads. */
interface EntryLike {
	type?: string;
	timestamp?: unknown;
	kind?: string;
	provider?: string;
	message?: {
		role?: string;
		provider?: string;
		model?: string;
		usage?: UsageLike;
		stopReason?: string;
		timestamp?: unknown;
	};
}
