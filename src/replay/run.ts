/**
 * The in-process replay of one recorded session under one policy, through the real Pi SDK: an
 * in-memory `AgentSession` whose model is pi-ai's faux provider (each step returns the next recorded
 * assistant message, or filler for a compaction's summary request), whose tools keep the built-in
 * definitions but return the recorded results (no filesystem), and whose extensions are the policy's
 * (`context-fold`'s own factory, or a peer's context transform). A user message the recording shows
 * steered in while the agent ran is queued as Pi's steering when the run reaches it, and a user `!`
 * command's recorded result enters the session between runs, as Pi records one. Each request is captured as sent:
 * the faux provider receives the messages after every `context` hook, and reduced to its block shape
 * there, so a long replay does not hold every request's messages. Where a recorded gap is long
 * enough for cache warming to refresh, the replay asks the extensions Pi's own question for that gap
 * (`cache_warming_decision`, with Pi's decision by its rule at the price model's reference prices,
 * through the session's extension runner) and records a `stop` the extensions gave where Pi would
 * warm on the request after it. context-fold runs on the recording's clock (a prompt typed, a tool's
 * result arriving, a request sent, each at its recorded time), and the refreshes Pi would
 * have sent in each gap reach its session as `cache_warm` entries, so it sees the cache warm or
 * cold as the price model does. What context-fold would tell the replayed session's user (its
 * advisories, on stderr in a real headless Pi) is counted, not printed. Nothing touches the network
 * or the disk. The extensions loaded around the policy's are in extensions.ts, the hook timing in
 * hook-timer.ts, what is fed to the session from the recording in session-input.ts, the faux
 * model and the session over it in replay-session.ts, and the policy, the options and what the run
 * captures in policy-run.ts.
 */

import { posix } from "node:path";
import { type FauxResponseFactory, fauxAssistantMessage, type ImageContent } from "@earendil-works/pi-ai";
import type { CacheWarmingDecisionEvent, ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { CACHE_WARM, timeOf } from "../adapters/pi/cache/telemetry.ts";
import { withoutOwnVariables } from "../adapters/pi/config.ts";
import { contextFoldOnClock } from "../adapters/pi/index.ts";
import type { MessageLike } from "../core/block.ts";
import { FIRST_REFRESH_MS, fixedDocsPaths, peerFactory, warmingProbe, warmQuestion } from "./extensions.ts";
import { HookTimer, timed } from "./hook-timer.ts";
import { ClearToolUses, maskLastN } from "./peers.ts";
import {
	failedWithoutUsage,
	type PolicyRun,
	type ReplayPolicy,
	type RunOptions,
	refusedByProvider,
} from "./policy-run.ts";
import { PRICE_MODELS, piWarming, refreshTimes, shapePrompt, type WarmingPhase, warmingDelayMs } from "./price.ts";
import { AGENT_DIR, replayModel, replaySession } from "./replay-session.ts";
import { CUT_OFF, NOT_REQUESTED } from "./report-text.ts";
import { BlockTable, type RequestShape } from "./request-shape.ts";
import { parts, type ReplayScript, SESSION_FORMAT } from "./script.ts";
import {
	errorAsRecorded,
	FINAL_ERROR,
	recordBash,
	replayTools,
	settled,
	streamableReply,
	textAndImages,
} from "./session-input.ts";
import { markedMessages, replayWire } from "./wire.ts";

/**
 * A fixed working directory for a session that records none usable, so that the requests of a
 * replay do not depend on where it runs (the agent directory is fixed too: replay-session.ts).
 */
const FALLBACK_CWD = "/replay";

/**
 * Pi's auto-retry runs in a replay, at once (no backoff), as often as the recording retried: a
 * recorded error reply is retried exactly where the recording has another reply after it
 * (errorAsRecorded), so the bound only has to exceed any recorded run of errors.
 */
const MAX_RETRIES = 1000;

/** Settings that make context-fold never fold: only its deterministic compaction remains. */
const COMPACT_ONLY = {
	policy: "ladder",
	foldAt: 1,
	coldFoldAt: 1,
	step: 1,
	floor: 1,
	budgetFraction: 1,
	budgetCap: 0,
};
/** The text parts of a message or tool result, joined by newlines. */
function textOf(message: MessageLike): string {
	return parts(message)
		.filter((p) => p.type === "text")
		.map((p) => String(p.text ?? ""))
		.join("\n");
}

/** Replays `script` under `policy` and returns every request as sent. */
export async function replayPolicy(
	script: ReplayScript,
	policy: ReplayPolicy,
	options: RunOptions,
): Promise<PolicyRun> {
	// The recorded working directory where this machine can take it as given (a POSIX absolute path).
	const cwd = script.cwd !== undefined && posix.isAbsolute(script.cwd) ? script.cwd : FALLBACK_CWD;
	const index = new Map<MessageLike, number>();
	script.messages.forEach((m, i) => {
		index.set(m, i);
	});
	const total = script.turns.reduce((n, t) => n + t.assistants.length, 0);
	const run: PolicyRun = {
		policy: policy.name,
		requests: [],
		table: new BlockTable(options.imageTokens),
		compactions: 0,
		divergences: {},
		advisories: 0,
	};
	const captured = (
		messages: MessageLike[],
		marked?: ReadonlySet<number>,
	): { shape: RequestShape; messages?: MessageLike[] } => ({
		shape: run.table.shape(messages, marked),
		...(options.keepMessages ? { messages } : {}),
	});
	const diverge = (kind: string): void => {
		run.divergences[kind] = (run.divergences[kind] ?? 0) + 1;
	};
	const userPartSkipped = (type: string): void => diverge(`user ${type} part not replayed`);
	const hooks = new HookTimer();
	const time = (factory: ExtensionFactory, onInput?: (messages: MessageLike[]) => void): ExtensionFactory =>
		options.timeHooks === false ? factory : timed(factory, hooks, undefined, onInput);
	const factories: ExtensionFactory[] = [];
	let settings: Record<string, unknown> = {
		retry: { enabled: true, maxRetries: MAX_RETRIES, baseDelayMs: 0 },
		cacheWarming: "off",
		steeringMode: "all",
	};
	const cache = options.cache ?? { model: PRICE_MODELS["anthropic-5m"], warming: true };
	const { ttlMs } = cache.model;
	// context-fold runs on the recording's clock: at each request the time of the reply it produced.
	let clock = 0;
	if (policy.kind === "context-fold" || policy.kind === "compact-only") {
		factories.push(
			time(
				contextFoldOnClock(
					() => clock,
					() => {
						run.advisories++;
					},
					// The knobs are the policy's alone: the user's CONTEXTFOLD_* variables would change the figures unseen.
					withoutOwnVariables(process.env),
					// And no file of the user's agent directory (a 0.5.1 settings file) is looked at.
					AGENT_DIR,
				),
				options.onHookInput,
			),
		);
		const knobs = policy.kind === "context-fold" ? policy.settings : COMPACT_ONLY;
		settings = { ...settings, "context-fold": { cacheTtlSeconds: Math.ceil(ttlMs / 1000), ...knobs } };
	} else if (policy.kind === "mask") {
		const keep = policy.keep;
		factories.push(time(peerFactory((m) => maskLastN(m, keep))));
	} else if (policy.kind === "clear") {
		const clear = new ClearToolUses(policy.settings);
		factories.push(time(peerFactory((m) => clear.apply(m))));
	}

	const { faux, runtime } = await replayModel(options.window, cache.model);

	let turn = 0;
	let cursor = 0;
	let compacting = false;
	let compactedSinceLast = false;
	let summaries = 0;
	let lastAt = 0;
	let done = 0;
	// Turns whose user message is queued as steering, and the promise of the last one queued.
	const queued = new Set<number>();
	let steering: Promise<unknown> = Promise.resolve();
	// The recorded reply last handed to the faux provider.
	let delivered: MessageLike | undefined;
	// The reply just served was lost to an error the recording does not have; Pi is retrying it (see step).
	let lost = false;
	let retryingLost = false;
	let steerAfter: (t: number) => void = () => {};
	/** The recorded reply the next request gets: past the end of a turn, the first of a steered turn queued into its run. */
	const upcoming = (): MessageLike | undefined => {
		while (cursor >= (script.turns[turn]?.assistants.length ?? 0) && queued.has(turn + 1)) {
			turn++;
			cursor = 0;
		}
		return script.turns[turn]?.assistants[cursor];
	};
	// Before each request: the warming question after a gap long enough to warm (asked with the state
	// the extensions hold in it), the gap's refreshes, then the clock moved to the request's time.
	let pendingStop = false;
	let sentTurn = false;
	let decide: (event: CacheWarmingDecisionEvent) => Promise<"warm" | "stop"> = async (event) => event.action;
	let recordWarm: (at: number) => void = () => {};
	const warmDelay = cache.warming ? warmingDelayMs(ttlMs) : undefined;
	factories.unshift(
		fixedDocsPaths(),
		warmingProbe(async () => {
			pendingStop = false;
			if (compacting) return;
			const next = upcoming();
			if (!next) return;
			const at = timeOf(next.timestamp) ?? lastAt;
			// The next reply opens a run (a prompt, not one steered into the run) after Pi's idle phase.
			const phase: WarmingPhase = cursor === 0 && !queued.has(turn) ? "idle" : "streaming";
			const last = run.requests.findLast((r) => r.kind === "turn");
			// A compaction at the end of the previous run gave Pi a new context, which ended its warming.
			const stopped = phase === "idle" && compactedSinceLast;
			const prompt = last?.failedWithoutUsage ? 0 : last && shapePrompt(last.shape);
			const decision = last && !stopped && piWarming(cache.model, prompt ?? 0, phase);
			let warms = false;
			if (sentTurn && decision && at - lastAt >= FIRST_REFRESH_MS) {
				clock = lastAt + FIRST_REFRESH_MS;
				const answer = await decide(warmQuestion(decision));
				pendingStop = decision.action === "warm" && answer === "stop";
				warms = decision.action === "warm" && answer === "warm";
			}
			// Pi's refreshes of the gap, as the price model sends them, reach the session as `cache_warm`
			// usage entries, which context-fold reads to tell a warm cache from a cold one.
			if (warms && warmDelay !== undefined) {
				for (const t of refreshTimes(lastAt, at, warmDelay, phase)) recordWarm(t);
			}
			clock = at;
		}),
	);
	const step: FauxResponseFactory = async (context, stream, _state, model) => {
		faux.appendResponses([step]);
		const messages = context.messages as unknown as MessageLike[];
		if (compacting) {
			const chars = script.summaryChars[Math.min(summaries, script.summaryChars.length - 1)] ?? 8000;
			summaries++;
			run.requests.push({ kind: "summary", at: lastAt, ...captured(messages), afterCompaction: false });
			return fauxAssistantMessage("x".repeat(chars));
		}
		// Pi retries a reply the replay lost to a transient-looking error; the recording has no retry.
		if (retryingLost) {
			retryingLost = false;
			const final = fauxAssistantMessage([], { stopReason: "error", errorMessage: FINAL_ERROR });
			delivered = final as unknown as MessageLike;
			return final;
		}
		lost = false;
		const recorded = upcoming();
		if (!recorded) {
			diverge(
				turn < script.turns.length - 1 ? "request beyond the recorded turn" : "request after the recording ends",
			);
			return fauxAssistantMessage([], { stopReason: "stop" });
		}
		// The first reply of a turn whose prompt was not steered into a run opens one.
		const opensRun = cursor === 0 && !queued.has(turn);
		cursor++;
		lastAt = timeOf(recorded.timestamp) ?? lastAt;
		// The extensions' provider-request handlers see the request as an Anthropic payload (wire.ts).
		const wire = replayWire(messages);
		const sent = (await stream?.onPayload?.(wire.request, model)) ?? wire.request;
		run.requests.push({
			kind: "turn",
			at: lastAt,
			...captured(messages, markedMessages(sent, wire)),
			produced: index.get(recorded),
			...hooks.take(),
			afterCompaction: compactedSinceLast,
			...(pendingStop ? { warmingStopped: true } : {}),
			...(opensRun ? { opensRun: true } : {}),
			...(failedWithoutUsage(recorded) ? { failedWithoutUsage: true } : {}),
			...(refusedByProvider(recorded) ? { refused: true } : {}),
		});
		pendingStop = false;
		sentTurn = true;
		compactedSinceLast = false;
		done++;
		options.onProgress?.(done, total);
		// The recording's next user message came in while this reply's tools ran: Pi delivers a
		// steering message after the tool results, before the next request.
		const isLast = cursor === script.turns[turn].assistants.length;
		const hasCalls = parts(recorded).some((p) => p.type === "toolCall");
		if (isLast && hasCalls && recorded.stopReason === "toolUse" && script.turns[turn + 1]?.steered) steerAfter(turn);
		delivered = recorded;
		// Pi retries an error reply it deems transient: the recording says whether it did.
		const reply = errorAsRecorded(recorded, script.turns[turn].assistants[cursor] !== undefined);
		return streamableReply(reply, (type) => diverge(`assistant ${type} part not replayed`)) as never;
	};
	faux.setResponses([step]);

	const ran = new Set<string>();
	// A tool's result arrives when its run ended: what the extensions do on it (context-fold plans the
	// next request there) happens then, as in a live session, not at the previous request's time.
	const arrived = (at: number) => {
		if (at > clock) clock = at;
	};
	const tools = replayTools(script, cwd, { steering: () => steering, diverge, reply: () => delivered, ran, arrived });

	const session = await replaySession({ cwd, settings, factories, runtime, model: faux.getModel(), tools });
	decide = (event) => session.extensionRunner.emitCacheWarmingDecision(event);
	recordWarm = (at) => {
		const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
		const entry = session.sessionManager.appendUsage(CACHE_WARM, "replay", "recorded", {
			...usage,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		});
		// Pi stamps the entry with wall time; the refresh happened at `at` on the recording's clock.
		entry.timestamp = new Date(at).toISOString();
	};
	// A steered text that reads as a command went to the model as text when it was recorded; Pi's steer
	// refuses a command of the replayed extension, so such a text is queued as the message itself.
	const steerAsRecorded = async (text: string, images: ImageContent[]): Promise<void> => {
		if (!text.startsWith("/")) {
			await session.steer(text, images.length > 0 ? images : undefined);
			return;
		}
		session.agent.steer({ role: "user", content: [{ type: "text", text }, ...images], timestamp: Date.now() });
	};
	// Queues the steered turns the recording delivered into turn t's run, in order: the next one,
	// and on through those that got no reply of their own (delivered together, as steeringMode "all").
	steerAfter = (t) => {
		for (let n = t + 1; script.turns[n]?.steered && !queued.has(n); n++) {
			queued.add(n);
			const { text, images } = textAndImages(script.turns[n].user, userPartSkipped);
			steering = steering.then(() => steerAsRecorded(text, images));
			if (script.turns[n].assistants.length > 0) break;
		}
	};
	session.subscribe((event) => {
		// A recorded reply Pi ended in an error its recording does not have was lost on the way.
		if (event.type === "message_end" && event.message.role === "assistant") {
			const { stopReason, errorMessage } = event.message;
			if (stopReason === "error" && delivered?.stopReason !== "error") {
				diverge(
					`recorded reply lost to an error in the replay: ${(errorMessage ?? "").split("\n")[0].slice(0, 80)}`,
				);
				lost = true;
			}
		}
		// Pi's auto-retry of the reply the replay lost: the next request is that retry.
		if (event.type === "auto_retry_start" && lost) {
			lost = false;
			retryingLost = true;
		}
		// A call Pi answered itself, without the replay's tool: a divergence unless the recording holds
		// the same answer (a session Pi recorded holds its own refusals).
		if (event.type === "tool_execution_end" && !ran.delete(event.toolCallId)) {
			const said = textOf(event.result as MessageLike);
			const recorded = delivered && script.results.get(delivered)?.get(event.toolCallId);
			if (!recorded || textOf(recorded) !== said) diverge(`recorded call refused by Pi: ${firstWords(said)}`);
		}
		if (event.type === "compaction_start") compacting = true;
		if (event.type === "compaction_end") {
			// Pi stamps its compaction entry with wall time, and takes a reply stamped at or before its latest
			// compaction for one that predates it, which it never checks for a compaction again: the served
			// replies carry the recording's clock, so the entry goes on it too (as a refresh's does).
			const entry = session.sessionManager
				.getEntries()
				.findLast((e): e is typeof e & { timestamp: string } => e.type === "compaction");
			if (entry && Date.parse(entry.timestamp) > lastAt) entry.timestamp = new Date(lastAt).toISOString();
			compacting = false;
			compactedSinceLast = true;
			run.compactions++;
		}
	});
	try {
		for (let next = 0; next < script.turns.length; next = turn + 1) {
			turn = next;
			cursor = 0;
			const current = script.turns[turn];
			for (const bash of current.before) recordBash(session, bash);
			// A user message with no reply of its own went out with the steered ones after it.
			if (current.assistants.length === 0) steerAfter(turn);
			await steering;
			const { text, images } = textAndImages(current.user, userPartSkipped);
			// The prompt is typed at its recorded time: what the extensions do on it (context-fold plans
			// the run's first request there) happens then, not at the previous request's time.
			const typed = timeOf(current.user.timestamp);
			if (typed !== undefined && typed > clock) clock = typed;
			// As recorded: a text that reads as a command or template went to the model as it stands (no
			// extension claimed it then), so nothing here may run it as the replayed extension's command.
			await session.prompt(
				text,
				images.length > 0 ? { images, expandPromptTemplates: false } : { expandPromptTemplates: false },
			);
			await settled(session);
			// Steering still queued when the run ended was never delivered: its turns are prompted instead.
			session.clearQueue();
			for (const n of queued) {
				if (n <= turn) continue;
				diverge("steered message not delivered");
				queued.delete(n);
			}
		}
		const left = total - done;
		if (left > 0) run.divergences[NOT_REQUESTED] = left;
		for (const [role, count] of Object.entries(script.skipped))
			run.divergences[`${role} message not replayed`] = count;
		if (script.contextEdits > 0)
			run.divergences["context edit not replayed (the requests after it carry the message as recorded)"] =
				script.contextEdits;
		// Plain Pi compacts by its own rule: a recorded compaction it did not repeat was one the user asked
		// for (`/compact`), or came in another window; its figures are of a session without it.
		const unrepeated = policy.kind === "pi" ? script.compactions - run.compactions : 0;
		if (unrepeated > 0)
			run.divergences["recorded compaction plain Pi did not repeat (a /compact typed is not replayed)"] = unrepeated;
		if (script.unreadLines > 0)
			run.divergences["session file line not JSON, skipped as Pi skips it"] = script.unreadLines;
		if (script.newerFormat !== undefined)
			run.divergences[
				`session file format ${script.newerFormat}, newer than Pi 1.6's ${SESSION_FORMAT}: read as Pi 1.6 reads it`
			] = 1;
		if (script.cutOff > 0) run.divergences[CUT_OFF] = script.cutOff;
	} finally {
		session.dispose();
	}
	return run;
}

/**
 * A refusal's first line, with the next one where the first ends in a colon (a validation's reason):
 * at most 80 characters, cut after a whole word and marked with "…" where it was longer.
 */
function firstWords(said: string): string {
	const lines = said
		.split("\n")
		.map((line) => line.trim())
		.filter(Boolean);
	const words = lines[0]?.endsWith(":") && lines[1] ? `${lines[0]} ${lines[1]}` : (lines[0] ?? "");
	if (words.length <= 80) return words;
	const cut = words.slice(0, 79);
	const space = cut.lastIndexOf(" ");
	return `${space > 40 ? cut.slice(0, space) : cut}…`;
}
