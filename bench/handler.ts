/**
 * Handler bench: replays every recorded session of every available corpus (the whole conversation
 * of its active branch, as bench/replay.ts does) through context-fold's `context` handlers (the
 * real extension entry: the fold pass and the terminal UI's footer refresh, over a stub Pi host
 * with an in-memory session) and times each request beside one `structuredClone` of the same
 * messages in the same run, as Pi makes before calling handlers: once fresh (the session alone in a
 * new worker thread, whose isolate has compiled nothing yet, as in a new pi process) and once warm
 * (after every session has been replayed in this thread). Then measures the handler at 1x, 4x and
 * 16x a session's length (the session concatenated with renamed anchors) to show its cost grows no
 * faster than linearly.
 *
 * Run with `npm run bench` (after bench/replay.ts), which passes --expose-gc so the scaling samples
 * start from a collected heap. Knobs: BENCH_WINDOW (default 200000).
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { calculateContextTokens, estimateTokens } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../src/core/block.ts";
import { loadStub, type StubPi } from "../test/adapter/stub-pi.ts";
import { corporaLine, loadSessions } from "../test/corpus/corpora.ts";
import { requestCuts } from "../test/corpus/session.ts";

const WINDOW = Number(process.env.BENCH_WINDOW ?? 200_000) || 200_000;

/** Collects garbage before a timed step when run with --expose-gc, so one step's debt is not billed to the next. */
const settle: () => void = (globalThis as { gc?: () => void }).gc ?? (() => {});

type Handler = (event: unknown, ctx: unknown) => unknown;

function quantile(values: readonly number[], q: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * A fresh extension instance over a stub host, started like a new session. `handle` runs every
 * `context` handler the extension registered (the fold pass, then the footer refresh) with a UI
 * context whose branch is the request's messages as entries, as in Pi's terminal UI.
 */
async function freshHandler(): Promise<{
	stub: StubPi;
	handle: (messages: MessageLike[], branch: readonly unknown[]) => Promise<void>;
}> {
	const stub = loadStub({ window: WINDOW });
	stub.settings = {}; // the shipped defaults (the stub host pins the ladder for hook tests)
	await stub.emit("session_start", { reason: "startup" });
	const handlers = (stub.handlers.get("context") ?? []) as Handler[];
	let branch: readonly unknown[] = [];
	const ctx = {
		hasUI: true,
		ui: { setStatus: () => {} },
		sessionManager: { getBranch: () => branch, getEntries: () => branch, getEntryCount: () => branch.length },
		model: { contextWindow: WINDOW },
		getContextUsage: () => undefined,
	};
	return {
		stub,
		handle: async (messages, entries) => {
			branch = entries;
			for (const handler of handlers) await handler({ type: "context", messages }, ctx);
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

/** Per-request handler and clone times (ms) over a turn-by-turn replay of `messages`. */
async function replay(messages: readonly MessageLike[], cuts: readonly number[]) {
	const { handle } = await freshHandler();
	const working = messages.slice();
	const handler: number[] = [];
	const clone: number[] = [];
	for (const cut of cuts) {
		const slice = working.slice(0, cut);
		const branch = entriesOf(slice);
		const c0 = performance.now();
		const copy = structuredClone(slice) as MessageLike[];
		const c1 = performance.now();
		const contents = copy.map((m) => m.content);
		await handle(copy, branch);
		const c2 = performance.now();
		clone.push(c1 - c0);
		handler.push(c2 - c1);
		reportSent(working, cut, contentsOf(copy, contents), copy);
	}
	return { handler, clone };
}

/** `messages` with the contents they held before the handler rewrote them in place. */
function contentsOf(messages: readonly MessageLike[], contents: readonly unknown[]): MessageLike[] {
	return messages.map((m, i) => (m.content === contents[i] ? m : ({ ...m, content: contents[i] } as MessageLike)));
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

/** Handler time at the full length of `messages`, after a sparse warm-up replay (fold events happen). */
async function atLength(messages: readonly MessageLike[], samples = 21) {
	const { handle } = await freshHandler();
	const cuts = requestCuts(messages);
	const stride = Math.max(1, Math.floor(cuts.length / 40));
	const working = messages.slice();
	// Every stride-th request, and the last two: the latest response then reports what was sent.
	const sparse = cuts.filter((_, i) => i % stride === 0 || i >= cuts.length - 2);
	for (const cut of sparse) {
		const slice = working.slice(0, cut);
		const copy = structuredClone(slice) as MessageLike[];
		const contents = copy.map((m) => m.content);
		await handle(copy, entriesOf(slice));
		reportSent(working, cut, contentsOf(copy, contents), copy);
	}
	const branch = entriesOf(working);
	const handler: number[] = [];
	const clone: number[] = [];
	for (let i = 0; i < samples; i++) {
		settle();
		const c0 = performance.now();
		const copy = structuredClone(working) as MessageLike[];
		const c1 = performance.now();
		const c2 = performance.now();
		await handle(copy, branch);
		handler.push(performance.now() - c2);
		clone.push(c1 - c0);
	}
	return { handler: quantile(handler, 0.5), best: Math.min(...handler), clone: quantile(clone, 0.5) };
}

const fmt = (n: number, w = 9) => n.toFixed(2).padStart(w);

/** A turn-by-turn replay of one session in a fresh worker thread: its own V8 isolate, no code compiled yet. */
function freshReplay(name: string): Promise<{ handler: number[]; clone: number[] }> {
	return new Promise((resolve, reject) => {
		const worker = new Worker(new URL(import.meta.url), { workerData: { session: name } });
		worker.once("message", resolve);
		worker.once("error", reject);
	});
}

if (!isMainThread) {
	const { session: name } = workerData as { session: string };
	const session = loadSessions().find((s) => s.name === name);
	if (!session) throw new Error(`no session ${name}`);
	parentPort?.postMessage(await replay(session.messages, requestCuts(session.messages)));
	process.exit(0);
}

console.log(corporaLine());
console.log(`context handler bench (window ${WINDOW}); times in ms`);
console.log(
	"turn by turn: fresh = the session alone in a new worker thread (nothing compiled yet, as in a new pi process);",
);
console.log("warm = after every session has been replayed once in this thread (a long-running pi process)\n");
console.log(
	`${"session".padEnd(32)}${"turns".padStart(7)}${"fresh hdl".padStart(10)}${"clone".padStart(8)}${"ratio".padStart(8)}${"warm hdl".padStart(10)}${"hdl p99".padStart(9)}${"clone".padStart(8)}${"ratio".padStart(8)}`,
);
const sessions = loadSessions();
const fresh = [];
for (const session of sessions) fresh.push(await freshReplay(session.name));
for (const session of sessions) await replay(session.messages, requestCuts(session.messages));
for (const [i, session] of sessions.entries()) {
	const cuts = requestCuts(session.messages);
	const { handler, clone } = await replay(session.messages, cuts);
	const f50 = quantile(fresh[i].handler, 0.5);
	const fc50 = quantile(fresh[i].clone, 0.5);
	const h50 = quantile(handler, 0.5);
	const c50 = quantile(clone, 0.5);
	console.log(
		`${session.name.padEnd(32)}${String(cuts.length).padStart(7)}${fmt(f50, 10)}${fmt(fc50, 8)}${fmt(f50 / fc50, 8)}${fmt(h50, 10)}${fmt(quantile(handler, 0.99))}${fmt(c50, 8)}${fmt(h50 / c50, 8)}`,
	);
}

console.log(`\nscaling: handler p50 at the full length of the session concatenated k times\n`);
console.log(
	`${"session".padEnd(32)}${"k".padStart(4)}${"messages".padStart(10)}${"hdl p50".padStart(9)}${"hdl min".padStart(9)}${"µs/msg".padStart(8)}${"clone".padStart(9)}${"ratio".padStart(8)}${"vs 1x".padStart(8)}`,
);
for (const session of sessions) {
	let base = 0;
	for (const k of [1, 4, 16]) {
		const messages = concatenated(session.messages, k);
		const { handler, best, clone } = await atLength(messages);
		if (k === 1) base = handler;
		const perMessage = (handler * 1000) / messages.length;
		console.log(
			`${session.name.padEnd(32)}${String(k).padStart(4)}${String(messages.length).padStart(10)}${fmt(handler)}${fmt(best)}${fmt(perMessage, 8)}${fmt(clone)}${fmt(handler / clone, 8)}${fmt(handler / base, 8)}`,
		);
	}
}
