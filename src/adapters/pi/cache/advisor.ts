/**
 * The advisor: watches each response's cache figures, fold events, unfolds, recalls and forced
 * compactions, and raises the cache advisories (cold input, wire watchdog, reset flag, recall
 * churn) through one notification sink, once per streak. It keeps what is active for the footer
 * (`active()`, `watchdogTripped()`); the decisions and texts are core's (core/cache-advice.ts).
 *
 * The watchdog judges a fold event by the cache read of the response after it, except when the
 * event's request is also the first to declare recall_folded and unfold: that changes the prompt at
 * the tool list, ahead of every message, so the read stops there whether the fold reached the wire
 * or not. That event is judged by the request itself: whether the provider payload, as every
 * extension's `context` handler left it, carries any of the event's tags.
 */
import {
	ADVICE,
	CHURN_CALLS,
	figuresOf,
	foldMissedWire,
	handoffPayback,
	isColdInput,
	type PriceRatios,
	promptOf,
	rawOnWire,
	resetReason,
	Streaks,
} from "../../../core/cache-advice.ts";
import { foldTag } from "../../../core/digest.ts";
import type { FoldRegistry } from "../../../core/fold-registry.ts";
import { ENTRY_TYPE } from "../fold/persistence.ts";
import type { FoldConfig } from "../settings-schema.ts";
import { codeList } from "../tools/codes.ts";
import type { UsageLike } from "./telemetry.ts";

/** An active advisory, for the footer and the status view. */
export interface Advisory {
	id: string;
	text: string;
}

/** What the advisor needs from its host. */
export interface AdvisorDeps {
	/** Shows one advisory (a notification in the terminal UI, stderr elsewhere). */
	notify: (message: string, level: "warning" | "info") => void;
	config: () => FoldConfig;
}

/** Facts about the request a response answered, read from Pi and the engine by the host. */
export interface ResponseContext {
	/** The model's context window. */
	window: number | undefined;
	/** Tokens of that request no fold can take out (see core `unfoldable`); undefined when unknown. */
	unfoldable: number | undefined;
	/** The model's price ratios (core `ratiosOf`). */
	ratios: PriceRatios;
	/**
	 * Whether this provider and model has read from or written to the cache (this response
	 * included): a provider that never caches reads nothing on every response, which is no cold input.
	 */
	caches: boolean;
	/** The response's provider and model (see modelOf); undefined when it names none. */
	model?: string;
}

/** A reply's provider and model as one key, or undefined when it names neither. */
export function modelOf(message: { provider?: unknown; model?: unknown } | undefined): string | undefined {
	if (typeof message?.provider !== "string" && typeof message?.model !== "string") return undefined;
	return `${String(message?.provider ?? "")}/${String(message?.model ?? "")}`;
}

/** How a fold code stands in the current branch, for recall churn. */
export type CodeState = { unfolded: boolean; what?: string } | undefined;

/** A fold event awaiting the watchdog's judgment on the first response after it. */
interface PendingFold {
	seq: number;
	/** The prompt of the response before the event. */
	prefold: number;
	masked: number;
	/**
	 * The event's codes, when the cache cannot judge it: its request also first declared the fold tools,
	 * or the prompt before it is a stored one (see Advisor.storedPrompt).
	 */
	codes?: readonly string[];
	/** With `codes`: probes for its blocks' raw text (see wireProbes). */
	probes?: readonly string[];
	/** False when that request's payload carried the blocks raw (see rawOnWire); undefined until it is seen. */
	onWire?: boolean;
}

/** Advisories notified once per session (opened or moved in its tree), then only listed while they hold. */
const SAID_ONCE = new Set(["reset"]);

/** The advisor of one session branch. */
export class Advisor {
	private readonly deps: AdvisorDeps;
	private readonly streaks = new Streaks();
	private readonly notices = new Map<string, string>();
	/**
	 * Advisories said once per session, by id and reason (see SAID_ONCE): the reset flag's condition
	 * breaks at every fold event and holds again as the context grows, while its advice for one reason
	 * stays the same; another reason (forced compactions after a pay-back) is said in its turn.
	 */
	private readonly said = new Set<string>();
	/** The reason each advisory holds for now (see check). */
	private readonly reasons = new Map<string, string | undefined>();
	private readonly calls = new Map<string, number>();
	/** Codes the unfold call now finishing put back (see observeUnfold). */
	private unfolding = new Set<string>();
	private rewriteExpected = false;
	private pendingFold: PendingFold | undefined;
	/** The fold tools joined the active tools since the last request's pass: the next request declares them. */
	private declaring = false;
	/** The request being sent declares the fold tools for the first time. */
	private declared = false;
	private lastPrompt = 0;
	/**
	 * The latest prompt is a stored response's (a resumed or navigated branch), not one this process saw
	 * sent: it may already have carried folds the branch no longer records (a torn last entry), and a
	 * fold event that restores them reads the whole cache, so the cache cannot judge that event.
	 */
	private storedPrompt = false;
	/** The provider and model of the latest response with a prompt (see modelOf). */
	private lastModel: string | undefined;
	private base: number | undefined;
	private forced = 0;
	private forcing = false;
	private tripped = false;

	constructor(deps: AdvisorDeps) {
		this.deps = deps;
	}

	/** Forgets everything (session start, tree navigation). */
	reset(): void {
		this.streaks.clear();
		this.notices.clear();
		this.said.clear();
		this.reasons.clear();
		this.calls.clear();
		// A session's first response has no earlier prompt to read from the cache: it writes it, by design.
		this.rewriteExpected = true;
		this.pendingFold = undefined;
		this.declaring = false;
		this.declared = false;
		this.lastPrompt = 0;
		this.storedPrompt = false;
		this.lastModel = undefined;
		this.base = undefined;
		this.forced = 0;
		this.forcing = false;
		this.tripped = false;
	}

	/**
	 * Starts over on a branch: its assistant responses give the latest prompt and the smallest one (the
	 * base). The next response is expected to rewrite the cache when none came before it, or when a
	 * compaction, a model change or a fold entry (an event, an unfold) came after the latest one.
	 */
	restore(entries: readonly unknown[]): void {
		this.reset();
		for (const raw of entries) {
			const entry = raw as {
				type?: string;
				customType?: string;
				message?: { role?: string; usage?: UsageLike; provider?: unknown; model?: unknown };
			};
			if (entry?.type === "compaction" || entry?.type === "model_change") this.rewriteExpected = true;
			else if (entry?.type === "custom" && entry.customType === ENTRY_TYPE) this.rewriteExpected = true;
			if (entry?.type !== "message" || entry.message?.role !== "assistant") continue;
			const prompt = promptOf(figuresOf(entry.message.usage));
			if (prompt > 0) {
				this.remember(prompt);
				this.storedPrompt = true;
				this.lastModel = modelOf(entry.message);
				this.rewriteExpected = false;
			}
		}
	}

	/** recall_folded and unfold joined the active tools: the next request Pi builds declares them. */
	observeDeclarations(): void {
		this.declaring = true;
	}

	/**
	 * A request's `context` pass begins: the tools it declares are settled by now. A request that first
	 * declares the fold tools changes the prompt at the tool list, ahead of everything cached: its
	 * response is expected to read nothing, fold event or not (a look-ahead that missed, a block that
	 * became recallable without one).
	 */
	beginRequest(): void {
		this.declared = this.declaring;
		this.declaring = false;
		if (this.declared) this.rewriteExpected = true;
	}

	/**
	 * A fold event was committed, keeping `masked` tokens out of the request now being sent, whose
	 * folded blocks carry `codes`; `probes` gives what tells their raw text on the wire (see wireProbes),
	 * asked only for the request that first declares the fold tools.
	 */
	observeFold(seq: number, masked: number, codes: readonly string[] = [], probes: () => string[] = () => []): void {
		this.pendingFold = { seq, prefold: this.lastPrompt, masked };
		if ((this.declared || this.storedPrompt) && codes.length > 0)
			Object.assign(this.pendingFold, { codes, probes: probes() });
		this.rewriteExpected = true;
		for (const id of [...this.notices.keys()]) if (id.startsWith("churn:")) this.notices.delete(id);
	}

	/**
	 * The agent unfolded blocks with these codes: the next request rewrites the cache by design. The
	 * unfold is churn's remedy: its own call does not count, and asking again starts a new count.
	 */
	observeUnfold(codes: readonly string[]): void {
		this.rewriteExpected = true;
		for (const code of codes) {
			this.notices.delete(`churn:${code}`);
			this.calls.delete(code);
			this.streaks.update(`churn:${code}`, false);
			this.unfolding.add(code);
		}
	}

	/** Context-fold is about to compact on its own (over budget): the compaction that follows is forced. */
	willForceCompaction(): void {
		this.forcing = true;
	}

	/** A compaction completed (its new prompt is written to the cache by design); `forced` when Pi started it at its threshold or on overflow. */
	observeCompaction(forced: boolean): void {
		if (forced || this.forcing) this.forced++;
		this.forcing = false;
		this.rewriteExpected = true;
	}

	/** The model changed: its first response finds no cache of its own, by design. */
	observeModelChange(): void {
		this.rewriteExpected = true;
	}

	/**
	 * A recall_folded or unfold call named `codes`; `state` says which are fold codes of this branch.
	 * A code asked for CHURN_CALLS times raises recall churn, once.
	 */
	observeRecall(codes: readonly string[], state: (code: string) => CodeState): void {
		const config = this.deps.config();
		const tailKnob = config.policy !== "ladder" ? "hotTail / coldTail" : "tail";
		for (const code of new Set(codes)) {
			const known = state(code);
			if (!known) continue;
			const calls = (this.calls.get(code) ?? 0) + 1;
			this.calls.set(code, calls);
			if (this.streaks.update(`churn:${code}`, calls >= CHURN_CALLS)) {
				this.raise(`churn:${code}`, ADVICE.churn(code, calls, known.unfolded, tailKnob, known.what), "info");
			}
		}
	}

	/**
	 * A tool finished: a recall_folded or unfold call counts toward recall churn for the codes it named.
	 * `live` says whether a block is still in the context: one a compaction removed (or a summary Pi
	 * wrote) can only be recalled, which neither an unfold nor a wider tail would spare, so it does not count.
	 * `describe` says what a block was (`bash: npm test (9.8k tokens)`), for the notice.
	 */
	observeToolResult(
		toolName: string,
		input: unknown,
		registry: FoldRegistry,
		live: (id: string) => boolean = () => true,
		describe: (id: string) => string | undefined = () => undefined,
	): void {
		if (toolName !== "recall_folded" && toolName !== "unfold") return;
		const parsed = codeList((input as { codes?: unknown } | undefined)?.codes);
		const unfolding = this.unfolding;
		this.unfolding = new Set();
		if (typeof parsed === "string") return;
		const asked = toolName === "unfold" ? parsed.codes.filter((code) => !unfolding.has(code)) : parsed.codes;
		this.observeRecall(asked, (code) => {
			const id = registry.idOf(code);
			return id === undefined || !live(id) ? undefined : { unfolded: registry.isUnfolded(id), what: describe(id) };
		});
	}

	/**
	 * The provider payload of the request being sent, after every extension's `context` handler: for a
	 * fold event the cache cannot judge, whether its blocks went out raw instead of folded. Blocks
	 * another extension left out altogether are no missed fold.
	 */
	observePayload(payload: unknown): void {
		const fold = this.pendingFold;
		if (!fold?.codes || fold.onWire !== undefined) return;
		const wire = JSON.stringify(payload) ?? "";
		fold.onWire = !rawOnWire(wire, fold.codes.map(foldTag), fold.probes ?? []);
	}

	/** One assistant response's usage: checks the watchdog, cold input and the reset flag, and logs the debug line. */
	observeResponse(usage: UsageLike | undefined, facts: ResponseContext): void {
		const f = figuresOf(usage);
		const prompt = promptOf(f);
		if (prompt === 0) {
			// A reply without usage (a stream that failed or was cut before its end, where OpenAI-style
			// providers send usage): its request went out and may have cached the folded prompt, so the
			// cache read of the next response judges nothing. A verdict from the payload still stands.
			if (this.pendingFold && !this.pendingFold.codes) this.pendingFold = undefined;
			return;
		}
		if (this.deps.config().debug) this.deps.notify(ADVICE.debugCache(f), "info");
		const fold = this.pendingFold;
		this.pendingFold = undefined;
		if (fold) {
			this.tripped = fold.codes ? fold.onWire === false : foldMissedWire(fold.prefold, fold.masked, f.cacheRead);
			if (this.streaks.update("watchdog", this.tripped)) {
				const text = fold.codes
					? ADVICE.watchdogRequest(fold.seq)
					: ADVICE.watchdog(fold.prefold, f.cacheRead, fold.seq);
				this.raise("watchdog", text, "warning");
			} else if (!this.tripped) this.notices.delete("watchdog");
		}
		// Another model than the latest response's (chosen on the command line, which Pi records as no
		// model change) starts its own cache: its first write is expected.
		if (facts.model !== undefined && this.lastModel !== undefined && facts.model !== this.lastModel)
			this.rewriteExpected = true;
		if (facts.model !== undefined) this.lastModel = facts.model;
		const cold = facts.caches && isColdInput(f, this.rewriteExpected);
		this.rewriteExpected = false;
		this.check("cold-input", cold, () => ADVICE.coldInput(f), "warning");
		const reason = resetReason({
			payback: this.base === undefined ? undefined : handoffPayback(prompt, this.base, facts.ratios),
			forcedCompactions: this.forced,
			unfoldable: facts.unfoldable,
			window: facts.window,
		});
		this.check("reset", reason !== undefined, () => (reason ? ADVICE.reset(reason) : ""), "warning", reason?.kind);
		this.remember(prompt);
	}

	/** The advisories active now, oldest first. */
	active(): Advisory[] {
		return [...this.notices].map(([id, text]) => ({ id, text }));
	}

	/** True while the latest fold event's first response showed the fold never reached the wire. */
	watchdogTripped(): boolean {
		return this.tripped;
	}

	private remember(prompt: number): void {
		this.lastPrompt = prompt;
		this.storedPrompt = false;
		this.base = this.base === undefined ? prompt : Math.min(this.base, prompt);
	}

	/**
	 * `reason` tells apart the advice of an advisory said once a session (see SAID_ONCE): one that holds
	 * on for another reason (forced compactions while a handoff already paid) is said for it.
	 */
	private check(id: string, holds: boolean, text: () => string, level: "warning" | "info", reason?: string): void {
		const started = this.streaks.update(id, holds);
		const before = this.reasons.get(id);
		if (holds) this.reasons.set(id, reason);
		else this.reasons.delete(id);
		if (started || (holds && reason !== before)) this.raise(id, text(), level, reason);
		else if (!holds) this.notices.delete(id);
		// Said once, but listed (the status's Advisories) with the figures of the latest response.
		else if (this.notices.has(id)) this.notices.set(id, text());
	}

	private raise(id: string, text: string, level: "warning" | "info", reason?: string): void {
		this.notices.set(id, text);
		const said = `${id}:${reason ?? ""}`;
		if (this.said.has(said)) return;
		if (SAID_ONCE.has(id)) this.said.add(said);
		this.deps.notify(text, level);
	}
}
