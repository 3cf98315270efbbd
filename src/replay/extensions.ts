/**
 * The extensions a replay loads into Pi besides context-fold: the one that gives Pi's documentation
 * a fixed install path in the system prompt, the probe that asks the policy's extensions Pi's cache
 * warming question in a recorded gap (with that question, and the shortest gap in which it is
 * asked), and a peer policy's context transform as an extension.
 */
import { type CacheWarmingDecisionEvent, type ExtensionFactory, getPackageDir } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../core/block.ts";
import { PRICE_MODELS, type WarmingDecision, warmingDelayMs } from "./price.ts";

/**
 * Where Pi's documentation is said to be installed (a global npm install, not this checkout), so
 * that the requests of a replay do not depend on where it runs.
 */
const PI_PACKAGE_DIR = "/usr/local/lib/node_modules/@earendil-works/pi-coding-agent";

/**
 * An extension loaded first: Pi's system prompt names its documentation by the path of the
 * installed package, here this checkout's node_modules; the section is given the fixed install
 * path instead, before any policy sees the prompt.
 */
export function fixedDocsPaths(): ExtensionFactory {
	return (pi) => {
		pi.on("before_agent_start", (event) => {
			const docs = /<docs>\n([\s\S]*?)\n<\/docs>/.exec(event.systemPrompt)?.[1];
			if (docs !== undefined)
				event.systemPromptOptions.sections.docs = docs.split(getPackageDir()).join(PI_PACKAGE_DIR);
			return undefined;
		});
	};
}

/** The shortest gap in which any price model sends an idle refresh: a shorter one asks nothing. */
export const FIRST_REFRESH_MS = Math.min(
	...Object.values(PRICE_MODELS).map((m) => warmingDelayMs(m.ttlMs) ?? Number.POSITIVE_INFINITY),
);

/** The question Pi's cache warmer asks the extensions before a refresh, carrying Pi's own decision (price.ts piWarming). */
export function warmQuestion(decision: WarmingDecision): CacheWarmingDecisionEvent {
	const { warmCost, missCost, continuationProbability, action } = decision;
	return { type: "cache_warming_decision", warmCost, missCost, continuationProbability, action };
}

/**
 * An extension loaded ahead of the policy's: its `context` hook runs `ask` before the policy sees the
 * request, while every extension still holds the state of the gap before it.
 */
export function warmingProbe(ask: () => Promise<void>): ExtensionFactory {
	return (pi) => {
		pi.on("context", async () => {
			await ask();
			return undefined;
		});
	};
}

/** A peer policy as an extension: its `context` hook applies `transform` to the request in place. */
export function peerFactory(transform: (messages: MessageLike[]) => void): ExtensionFactory {
	return (pi) => {
		pi.on("context", (event) => {
			transform(event.messages as unknown as MessageLike[]);
			return { messages: event.messages };
		});
	};
}
