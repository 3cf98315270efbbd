/**
 * The answer to Pi 1.6's `cache_warming_decision`, asked before each idle refresh of the prompt
 * cache. When a fold event is due, the next request rewrites the cached suffix anyway, so keeping it
 * warm buys nothing: stop. Otherwise (or on any failure) the decision is left to Pi.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import type { LedgerSource } from "../fold/session-ledger.ts";
import type { CacheTelemetry } from "./telemetry.ts";

/** What the warming answer reads. */
export interface WarmingAnswerDeps {
	engine: Pick<FoldEngine, "foldDue">;
	telemetry: Pick<CacheTelemetry, "snapshot" | "catchUp">;
	debug: () => boolean;
	warn: (message: string, level?: "warning" | "info") => void;
	/** Announces a failure context-fold works around: once per distinct message, listed in the status. */
	fail: (message: string) => void;
}

/** Registers the `cache_warming_decision` answer with Pi. */
export function registerWarmingAnswer(pi: ExtensionAPI, deps: WarmingAnswerDeps): void {
	pi.on("cache_warming_decision", (event, ctx) => {
		try {
			if (event.action !== "warm") return undefined;
			deps.telemetry.catchUp(ctx.sessionManager as LedgerSource);
			const last = deps.telemetry.snapshot().last;
			const prompt = last ? last.input + last.cacheRead + last.cacheWrite : 0;
			if (!deps.engine.foldDue(prompt)) return undefined;
			if (deps.debug())
				deps.warn(
					"context-fold: cache warming stopped: a fold event is due, the next request rewrites the cache anyway",
					"info",
				);
			return { action: "stop" as const };
		} catch (error) {
			deps.fail(`context-fold: cache warming decision left to Pi: ${errorText(error)}`);
			return undefined;
		}
	});
}
