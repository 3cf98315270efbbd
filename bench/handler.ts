/**
 * Handler bench: what the `context` handling costs a user, against the `structuredClone` Pi makes of
 * every request, measured in the state the replay's hook column measures it in. For each recorded
 * session of every available corpus, the replay runs it through real Pi under context-fold (in a new
 * worker thread) and hands over every request's messages as context-fold's first `context` handler
 * got them, compactions included. A fresh extension over a stub Pi host, alone in another new worker
 * thread (its own V8 isolate, nothing compiled yet: a new pi process), then takes those requests in
 * order as Pi sends them: Pi's own `structuredClone` of its stored messages (untimed), then, timed,
 * one `structuredClone` of that copy (the replay's baseline, `HookTimer`) and every `context` handler
 * the extension registered (the fold pass, the fold tools' declaration check, the terminal UI's footer
 * refresh). Beside each session, unless BENCH_REPLAY=0, the hook column of a clean replay of the same
 * session (`context-fold replay --policy context-fold`, real Pi, a third new worker). Then the handler
 * at 1x, 4x and 16x a session's length (the recorded conversation concatenated with renamed anchors,
 * each response reporting the size of what its request sent), to show its cost grows no faster than
 * the clone's.
 *
 * Each figure is the median over BENCH_RUNS runs (default 3), each in fresh workers: a session of a
 * few dozen requests has a p50 that a few slow requests move, in the bench as in one replay.
 *
 * Run with `npm run bench` (after bench/replay.ts), which passes --expose-gc so the scaling samples
 * start from a collected heap. Knobs: BENCH_WINDOW (default 200000, the replay's default too),
 * BENCH_RUNS (default 3), BENCH_REPLAY (0: no replay column), BENCH_SCALING (0: no scaling table),
 * BENCH_ONLY (only the sessions whose path holds this text, e.g. `sweagent`).
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { calculateContextTokens, estimateTokens } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../src/core/block.ts";
import { type JobMessage, type ReplayJob, sessionScript } from "../src/replay/jobs.ts";
import type { ReplayPolicy } from "../src/replay/policy-run.ts";
import { PRICE_MODELS } from "../src/replay/price.ts";
import type { PolicyFigures } from "../src/replay/report.ts";
import { replayPolicy } from "../src/replay/run.ts";
import { loadStub } from "../test/adapter/stub-pi.ts";
import { corporaLine, loadSessions } from "../test/corpus/corpora.ts";
import { requestCuts } from "../test/corpus/session.ts";

const WINDOW = Number(process.env.BENCH_WINDOW ?? 200_000) || 200_000;
const RUNS = Math.max(1, Math.floor(Number(process.env.BENCH_RUNS ?? 3)) || 3);

/** context-fold under its shipped defaults, as `context-fold replay --policy context-fold` runs it. */
const REPLAY_POLICY: ReplayPolicy = { name: "context-fold", kind: "context-fold", settings: {} };

/** Collects garbage before a timed step when run with --expose-gc, so one step's debt is not billed to the next. */
const settle: () => void = (globalThis as { gc?: () => void }).gc ?? (() => {});

type Handler = (event: unknown, ctx: unknown) => unknown;

function quantile(values: readonly number[], q: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** A fresh extension over a stub host: `handle` runs a request's `context` handlers, `emit` any other event's. */
interface Extension {
	/** Runs every `context` handler on `messages`, with a branch of `entries` (the footer reads it). */
	handle: (messages: MessageLike[], entries: readonly unknown[]) => Promise<void>;
	/** Runs every handler of `event`, while Pi would send `next` as the next request's conversation. */
	emit: (event: string, payload: Record<string, unknown>, next: readonly MessageLike[]) => Promise<void>;
}

/**
 * A fresh extension instance over a stub host, started like a new session, with a UI context whose
 * branch is the request's messages as entries, as in Pi's terminal UI.
 */
async function freshHandler(): Promise<Extension> {
	const stub = loadStub({ window: WINDOW });
	stub.settings = {}; // the shipped defaults (the stub host pins the ladder for hook tests)
	await stub.emit("session_start", { reason: "startup" });
	const handlers = (name: string) => (stub.handlers.get(name) ?? []) as Handler[];
	let branch: readonly unknown[] = [];
	let projection: readonly MessageLike[] = [];
	const ctx = {
		hasUI: true,
		ui: { setStatus: () => {} },
		sessionManager: {
			getBranch: () => branch,
			getEntries: () => branch,
			getEntryCount: () => branch.length,
			buildSessionProjection: () => ({ messages: projection }),
		},
		model: { contextWindow: WINDOW },
		getContextUsage: () => undefined,
	};
	return {
		handle: async (messages, entries) => {
			branch = entries;
			for (const handler of handlers("context")) await handler({ type: "context", messages }, ctx);
		},
		emit: async (event, payload, next) => {
			projection = next;
			for (const handler of handlers(event)) await handler({ type: event, ...payload }, ctx);
		},
	};
}

/** The session entries of a request's messages, as the footer reads them from Pi's branch. */
function entriesOf(messages: readonly MessageLike[]): unknown[] {
	return messages.map((message, i) => ({ type: "message", id: `m${i}`, message }));
}

type Usage = Parameters<typeof calculateContextTokens>[0];

/**
 * Makes the response to the request `sent` (the handler's output for `raw`, the messages before
 * `working[cut]`) report the size of what was sent, as a provider does: its recorded usage less the
 * tokens the folds took out. The recording is plain Pi's, so without this every response reports the
 * raw size, and the policy would weigh an event on every request past `foldFrom` where, folded, it
 * stays under it. Rewrites `working[cut]` (a copy: the caller owns `working`).
 */
function reportSent(
	working: MessageLike[],
	cut: number,
	raw: readonly MessageLike[],
	sent: readonly MessageLike[],
): void {
	const response = working[cut] as { role?: string; usage?: Usage } | undefined;
	if (response?.role !== "assistant" || !response.usage) return;
	let masked = 0;
	for (let i = 0; i < sent.length; i++) {
		if (sent[i].content !== raw[i].content)
			masked += estimateTokens(raw[i] as never) - estimateTokens(sent[i] as never);
	}
	if (masked <= 0) return;
	const total = Math.max(1, calculateContextTokens(response.usage) - masked);
	working[cut] = { ...working[cut], usage: { ...response.usage, totalTokens: total } } as MessageLike;
}

/** `messages` with the contents they held before the handler rewrote them in place. */
function contentsOf(messages: readonly MessageLike[], contents: readonly unknown[]): MessageLike[] {
	return messages.map((m, i) => (m.content === contents[i] ? m : ({ ...m, content: contents[i] } as MessageLike)));
}

/**
 * One request as Pi makes it: Pi's clone of the conversation (untimed) without its system
 * messages, then, timed, the baseline clone of that copy and the handlers on it. Returns both
 * times (ms); the response after the request then reports what was sent.
 */
async function request(
	extension: Extension,
	working: MessageLike[],
	cut: number,
): Promise<{ handler: number; clone: number }> {
	const slice = working.slice(0, cut);
	const branch = entriesOf(slice);
	const sent = (structuredClone(slice) as MessageLike[]).filter((m) => m.role !== "system");
	const contents = sent.map((m) => m.content);
	const c0 = performance.now();
	structuredClone(sent);
	const c1 = performance.now();
	await extension.handle(sent, branch);
	const c2 = performance.now();
	reportSent(working, cut, contentsOf(sent, contents), sent);
	return { handler: c2 - c1, clone: c1 - c0 };
}

/**
 * The requests of a replay as the hook got them: each a list of positions in `table`, which holds
 * every distinct message once (as Pi stores a message once and sends it with every later request).
 */
interface Captured {
	table: MessageLike[];
	requests: number[][];
}

/** Replays the session in `file` through real Pi under context-fold and captures its requests (see Captured). */
async function capture(file: string): Promise<Captured> {
	const table: MessageLike[] = [];
	const requests: number[][] = [];
	const index = new Map<string, number>();
	const model = PRICE_MODELS["anthropic-5m"];
	await replayPolicy(sessionScript(file), REPLAY_POLICY, {
		window: WINDOW,
		cache: { model, warming: true },
		onHookInput: (messages) => {
			requests.push(
				messages.map((message) => {
					const key = JSON.stringify(message);
					let at = index.get(key);
					if (at === undefined) {
						at = table.push(message) - 1;
						index.set(key, at);
					}
					return at;
				}),
			);
		},
	});
	return { table, requests };
}

/**
 * Tells the extension what Pi tells it before a request (untimed): the previous response's
 * `message_end`, then `before_agent_start` when the request opens a run (it ends with the user's
 * prompt), else the `message_end` of each tool result the request ends with, each while Pi's session
 * holds the messages before it (Pi stores a message after its handlers ran). Until the fold tools are
 * declared, `before_agent_start` and the last tool result plan the next request.
 */
async function beforeRequest(extension: Extension, stored: readonly MessageLike[]): Promise<void> {
	const last = stored.at(-1);
	let from = stored.length;
	if (last?.role === "user") from--;
	else while (from > 0 && stored[from - 1].role === "toolResult") from--;
	const response = stored[from - 1];
	if (response?.role === "assistant")
		await extension.emit("message_end", { message: response }, stored.slice(0, from - 1));
	if (last?.role === "user") {
		const content = Array.isArray(last.content) ? (last.content as { type?: string; text?: string }[]) : [];
		const prompt = typeof last.content === "string" ? last.content : content.map((p) => p.text ?? "").join("\n");
		await extension.emit("before_agent_start", { prompt, images: [] }, stored.slice(0, -1));
		return;
	}
	for (let i = from; i < stored.length; i++)
		await extension.emit("message_end", { message: stored[i] }, stored.slice(0, i));
}

/** Per-request handler and clone times (ms) of a fresh extension over the captured requests, in order. */
async function replayCaptured({ table, requests }: Captured): Promise<{ handler: number[]; clone: number[] }> {
	const extension = await freshHandler();
	const handler: number[] = [];
	const clone: number[] = [];
	for (const [i, positions] of requests.entries()) {
		const stored = positions.map((at) => table[at]);
		if (i > 0) await beforeRequest(extension, stored);
		const sent = structuredClone(stored);
		const entries = entriesOf(sent);
		const c0 = performance.now();
		structuredClone(sent);
		const c1 = performance.now();
		await extension.handle(sent, entries);
		handler.push(performance.now() - c1);
		clone.push(c1 - c0);
		// What Pi's provider does with the request next (untimed): serialize it for the wire.
		JSON.stringify(sent);
	}
	return { handler, clone };
}

/** `messages` repeated `times` times, each copy's anchors renamed so ids stay unique. */
function concatenated(messages: readonly MessageLike[], times: number): MessageLike[] {
	const out: MessageLike[] = [];
	for (let k = 0; k < times; k++) {
		const shift = k * 10_000_000_000;
		for (const m of messages) {
			const copy = structuredClone(m) as Record<string, unknown>;
			if (typeof copy.timestamp === "number") copy.timestamp += shift;
			if (typeof copy.responseId === "string") copy.responseId = `${copy.responseId}~${k}`;
			if (typeof copy.toolCallId === "string") copy.toolCallId = `${copy.toolCallId}~${k}`;
			if (Array.isArray(copy.content)) {
				for (const part of copy.content as Record<string, unknown>[]) {
					if (part?.type === "toolCall" && typeof part.id === "string") part.id = `${part.id}~${k}`;
				}
			}
			out.push(copy as MessageLike);
		}
	}
	return out;
}

/** Handler and clone time at the full length of `messages`, after a sparse warm-up replay (fold events happen). */
async function atLength(messages: readonly MessageLike[], samples = 21) {
	const extension = await freshHandler();
	const cuts = requestCuts(messages);
	const stride = Math.max(1, Math.floor(cuts.length / 40));
	const working = messages.slice();
	// Every stride-th request, and the last two: the latest response then reports what was sent.
	for (const [i, cut] of cuts.entries())
		if (i % stride === 0 || i >= cuts.length - 2) await request(extension, working, cut);
	const handler: number[] = [];
	const clone: number[] = [];
	for (let i = 0; i < samples; i++) {
		settle();
		const times = await request(extension, working, working.length);
		handler.push(times.handler);
		clone.push(times.clone);
	}
	return { handler: quantile(handler, 0.5), best: Math.min(...handler), clone: quantile(clone, 0.5) };
}

/** Runs `data` in a new worker thread of `url` and resolves with its first message. */
function inWorker<T>(url: URL, data: unknown, settled: (message: unknown) => T | undefined): Promise<T> {
	return new Promise((resolve, reject) => {
		const worker = new Worker(url, { workerData: data });
		worker.on("message", (message) => {
			try {
				const value = settled(message);
				if (value === undefined) return;
				resolve(value);
			} catch (error) {
				reject(error);
			}
			void worker.terminate();
		});
		worker.once("error", reject);
	});
}

/** The replay's figures for one session under context-fold, in a new worker thread (as in a new pi process). */
function replayFigures(file: string): Promise<PolicyFigures> {
	const job: ReplayJob = {
		file,
		policy: REPLAY_POLICY,
		price: "anthropic-5m",
		window: WINDOW,
		warming: true,
		images: "text",
	};
	return inWorker(new URL("../src/replay/worker.ts", import.meta.url), job, (message) => {
		const m = message as JobMessage;
		if (m.type === "error") throw new Error(m.message);
		return m.type === "figures" ? m.figures : undefined;
	});
}

if (!isMainThread) {
	const task = workerData as { capture: string } | { bench: Captured };
	parentPort?.postMessage("capture" in task ? await capture(task.capture) : await replayCaptured(task.bench));
	process.exit(0);
}

const fmt = (n: number | null | undefined, w = 9) => (n == null ? "-" : n.toFixed(2)).padStart(w);
const withReplay = process.env.BENCH_REPLAY !== "0";

console.log(corporaLine());
console.log(`context handler bench (window ${WINDOW}); times in ms, each the median over ${RUNS} runs`);
console.log("bench: each session's requests as real Pi sent them, through a fresh extension alone in a new worker");
console.log(
	"thread: handler p50 and p99, the clone's p50, and each handler figure over the clone's p50 (x p50, x p99)",
);
if (withReplay) {
	console.log("replay: the same figures from the hook column of a clean replay of the session through real Pi (in");
	console.log("another new worker); agree: the bench's x p50 over the replay's");
}
console.log(
	`\n${"session".padEnd(36)}${"reqs".padStart(5)}${"hdl p50".padStart(8)}${"p99".padStart(7)}${"clone".padStart(7)}${"x p50".padStart(7)}${"x p99".padStart(7)}${
		withReplay ? `${"replay x p50".padStart(13)}${"x p99".padStart(7)}${"agree".padStart(7)}` : ""
	}`,
);
const only = process.env.BENCH_ONLY;
const sessions = loadSessions().filter((session) => !only || session.path.includes(only));
if (only && sessions.length === 0) {
	console.error(`bench: no corpus session's path holds BENCH_ONLY=${only} (${corporaLine()})`);
	process.exit(2);
}
for (const session of sessions) {
	const self = new URL(import.meta.url);
	const captured = await inWorker(self, { capture: session.path }, (message) => message as Captured);
	// Each run in fresh workers; every figure the median over the runs.
	const runs: { h50: number; h99: number; c50: number; requests: number }[] = [];
	const replays: { x50: number; x99: number }[] = [];
	for (let run = 0; run < RUNS; run++) {
		const bench = await inWorker(
			self,
			{ bench: captured },
			(message) => message as { handler: number[]; clone: number[] },
		);
		runs.push({
			h50: quantile(bench.handler, 0.5),
			h99: quantile(bench.handler, 0.99),
			c50: quantile(bench.clone, 0.5),
			requests: bench.handler.length,
		});
		if (withReplay) {
			const f = await replayFigures(session.path);
			const clone = f.cloneMsP50 ?? Number.NaN;
			replays.push({ x50: (f.hookMsP50 ?? Number.NaN) / clone, x99: (f.hookMsP99 ?? Number.NaN) / clone });
		}
	}
	const median = (values: number[]) => quantile(values, 0.5);
	const h50 = median(runs.map((r) => r.h50));
	const c50 = median(runs.map((r) => r.c50));
	const ratio = median(runs.map((r) => r.h50 / r.c50));
	let cells = "";
	if (withReplay) {
		const replayRatio = median(replays.map((r) => r.x50));
		cells = `${fmt(replayRatio, 13)}${fmt(median(replays.map((r) => r.x99)), 7)}${fmt(ratio / replayRatio, 7)}`;
	}
	console.log(
		`${session.name.padEnd(36)}${String(runs[0].requests).padStart(5)}${fmt(h50, 8)}${fmt(median(runs.map((r) => r.h99)), 7)}${fmt(c50, 7)}${fmt(ratio, 7)}${fmt(median(runs.map((r) => r.h99 / r.c50)), 7)}${cells}`,
	);
}

if (process.env.BENCH_SCALING !== "0") {
	console.log(`\nscaling: handler p50 at the full length of the session concatenated k times\n`);
	console.log(
		`${"session".padEnd(36)}${"k".padStart(4)}${"messages".padStart(10)}${"hdl p50".padStart(9)}${"hdl min".padStart(9)}${"µs/msg".padStart(8)}${"clone".padStart(9)}${"ratio".padStart(8)}${"vs 1x".padStart(8)}`,
	);
	for (const session of sessions) {
		let base = 0;
		for (const k of [1, 4, 16]) {
			const messages = concatenated(session.messages, k);
			const { handler, best, clone } = await atLength(messages);
			if (k === 1) base = handler;
			const perMessage = (handler * 1000) / messages.length;
			console.log(
				`${session.name.padEnd(36)}${String(k).padStart(4)}${String(messages.length).padStart(10)}${fmt(handler)}${fmt(best)}${fmt(perMessage, 8)}${fmt(clone)}${fmt(handler / clone, 8)}${fmt(handler / base, 8)}`,
			);
		}
	}
}
