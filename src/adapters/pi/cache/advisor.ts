/**
 * The advisor: watches each response's cache figures, fold events, unfolds, recalls and forced
 * compactions, and raises the cache advisories (cold input, wire watchdog, reset flag, recall
 * churn) through one notification sink, once per streak. It keeps what is active for the footer
 * (`active()`, `watchdogTripped()`); the decisions and texts are core's (core/cache-advice.ts).
 */
import {
	ADVICE,
	CHURN_CALLS,
	foldMissedWire,
	handoffPayback,
	isColdInput,
	type PriceRatios,
	type PromptFigures,
	promptOf,
	resetReason,
	Streaks,
} from "../../../core/cache-advice.ts";
import type { FoldRegistry } from "../../../core/fold-registry.ts";
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
}

/** How a fold code stands in the current branch, for recall churn. */
export type CodeState = { unfolded: boolean } | undefined;

/** The advisor of one session branch. */
export class Advisor {
	private readonly deps: AdvisorDeps;
	private readonly streaks = new Streaks();
	private readonly notices = new Map<string, string>();
	private readonly calls = new Map<string, number>();
	private rewriteExpected = false;
	private pendingFold: { seq: number; prefold: number; masked: number } | undefined;
	private lastPrompt = 0;
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
		this.calls.clear();
		this.rewriteExpected = false;
		this.pendingFold = undefined;
		this.lastPrompt = 0;
		this.base = undefined;
		this.forced = 0;
		this.forcing = false;
		this.tripped = false;
	}

	/** Starts over on a branch: its assistant responses give the latest prompt and the smallest one (the base). */
	restore(entries: readonly unknown[]): void {
		this.reset();
		for (const raw of entries) {
			const entry = raw as { type?: string; message?: { role?: string; usage?: UsageLike } };
			if (entry?.type !== "message" || entry.message?.role !== "assistant") continue;
			const prompt = promptOf(figuresOf(entry.message.usage));
			if (prompt > 0) this.remember(prompt);
		}
	}

	/** A fold event was committed, keeping `masked` tokens out of the request now being sent. */
	observeFold(seq: number, masked: number): void {
		this.pendingFold = { seq, prefold: this.lastPrompt, masked };
		this.rewriteExpected = true;
		for (const id of [...this.notices.keys()]) if (id.startsWith("churn:")) this.notices.delete(id);
	}

	/** The agent unfolded blocks with these codes: the next request rewrites the cache by design. */
	observeUnfold(codes: readonly string[]): void {
		this.rewriteExpected = true;
		for (const code of codes) this.notices.delete(`churn:${code}`);
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
				this.raise(`churn:${code}`, ADVICE.churn(code, calls, known.unfolded, tailKnob), "info");
			}
		}
	}

	/** A tool finished: a recall_folded or unfold call counts toward recall churn for the codes it named. */
	observeToolResult(toolName: string, input: unknown, registry: FoldRegistry): void {
		if (toolName !== "recall_folded" && toolName !== "unfold") return;
		const parsed = codeList((input as { codes?: unknown } | undefined)?.codes);
		if (typeof parsed === "string") return;
		this.observeRecall(parsed.codes, (code) => {
			const id = registry.idOf(code);
			return id === undefined ? undefined : { unfolded: registry.isUnfolded(id) };
		});
	}

	/** One assistant response's usage: checks the watchdog, cold input and the reset flag, and logs the debug line. */
	observeResponse(usage: UsageLike | undefined, facts: ResponseContext): void {
		const f = figuresOf(usage);
		const prompt = promptOf(f);
		if (prompt === 0) return;
		if (this.deps.config().debug) this.deps.notify(ADVICE.debugCache(f), "info");
		const fold = this.pendingFold;
		this.pendingFold = undefined;
		if (fold) {
			this.tripped = foldMissedWire(fold.prefold, fold.masked, f.cacheRead);
			if (this.streaks.update("watchdog", this.tripped)) {
				this.raise("watchdog", ADVICE.watchdog(fold.prefold, f.cacheRead, fold.seq), "warning");
			} else if (!this.tripped) this.notices.delete("watchdog");
		}
		const cold = isColdInput(f, this.rewriteExpected);
		this.rewriteExpected = false;
		this.check("cold-input", cold, () => ADVICE.coldInput(f), "warning");
		const reason = resetReason({
			payback: this.base === undefined ? undefined : handoffPayback(prompt, this.base, facts.ratios),
			forcedCompactions: this.forced,
			unfoldable: facts.unfoldable,
			window: facts.window,
		});
		this.check("reset", reason !== undefined, () => (reason ? ADVICE.reset(reason) : ""), "warning");
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
		this.base = this.base === undefined ? prompt : Math.min(this.base, prompt);
	}

	private check(id: string, holds: boolean, text: () => string, level: "warning" | "info"): void {
		if (this.streaks.update(id, holds)) this.raise(id, text(), level);
		else if (!holds) this.notices.delete(id);
	}

	private raise(id: string, text: string, level: "warning" | "info"): void {
		this.notices.set(id, text);
		this.deps.notify(text, level);
	}
}

/** A usage report's prompt figures (missing or invalid counts are 0). */
export function figuresOf(usage: UsageLike | undefined): PromptFigures {
	return { input: count(usage?.input), cacheRead: count(usage?.cacheRead), cacheWrite: count(usage?.cacheWrite) };
}

function count(value: unknown): number {
	return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
