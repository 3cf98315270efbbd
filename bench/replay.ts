/**
 * Replay bench: drives every recorded session of every available corpus turn by turn through the
 * fold pass (planTurn, commit, renderTurn: linearize + the default policy + applyOps, with the
 * engine's memos: blocks, argument texts, call facts, frozen answers and applied ops) exactly as the engine would, and times each turn beside one `structuredClone` of the same message array, measured in the
 * same run. Also reports, per session, the fold events, the tokens they saved and the peak context
 * with and without folding. A session is replayed as the whole conversation of its active branch
 * (a compaction in the file is ignored): what folding does over the full history, uncompacted.
 *
 * Run with `npm run bench`. Knobs: BENCH_REPS (timed replays per session, default 7),
 * BENCH_WINDOWS (comma-separated context windows, default "200000,128000").
 */
import { ApplyMemo } from "../src/core/apply.ts";
import { type ArgsCache, type Block, BlockMemo, linearize, type MessageLike } from "../src/core/block.ts";
import type { CallFactsMemo } from "../src/core/call-facts.ts";
import {
	DEFAULT_ECONOMIC,
	DEFAULT_LADDER,
	DEFAULT_WORKING_SET,
	type PolicyView,
	WORKING_SET_ECONOMIC,
} from "../src/core/contract.ts";
import { FoldRegistry } from "../src/core/fold-registry.ts";
import { commitEvent, planTurn, recordsFor, renderTurn } from "../src/core/pass.ts";
import { workingSet } from "../src/core/policy/working-set.ts";
import { UseMemo } from "../src/core/use-ages.ts";
import { FrozenMemo, type SavingsMemo } from "../src/core/view.ts";
import { corporaLine, loadSessions, type Session } from "../test/corpus/corpora.ts";
import { requestCuts } from "../test/corpus/session.ts";

const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 7) || 7);
/**
 * The shipped defaults: the working-set policy's knobs over the budget knobs every profile shares,
 * less the horizon, which the extension leaves out while it is the default (policyConfigOf).
 */
const CONFIG: PolicyView["config"] = {
	...DEFAULT_LADDER,
	...DEFAULT_ECONOMIC,
	...WORKING_SET_ECONOMIC,
	...DEFAULT_WORKING_SET,
};
delete CONFIG.horizon;
const WINDOWS = (process.env.BENCH_WINDOWS ?? "200000,128000")
	.split(",")
	.map((w) => Number(w.trim()))
	.filter((w) => w > 0);

function tokensOf(blocks: readonly Block[]): number {
	let sum = 0;
	for (const block of blocks) sum += block.tokens;
	return sum;
}

/** The q-quantile (0..1) of `values` by nearest rank. */
function quantile(values: readonly number[], q: number): number {
	if (values.length === 0) return Number.NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
	return sorted[rank];
}

function median(values: readonly number[]): number {
	return quantile(values, 0.5);
}

/** One timed replay: per-turn pass and clone times (ms), in turn order. */
function timedReplay(messages: readonly MessageLike[], cuts: readonly number[], window: number) {
	const registry = new FoldRegistry();
	const savings: SavingsMemo = new WeakMap();
	const use = new UseMemo();
	const blockMemo = new BlockMemo();
	const argsCache: ArgsCache = new Map();
	const calls: CallFactsMemo = new WeakMap();
	const frozenMemo = new FrozenMemo();
	const applyMemo = new ApplyMemo();
	const pass: number[] = [];
	const clone: number[] = [];
	let seq = 0;
	let sink = 0;
	for (const cut of cuts) {
		const slice = messages.slice(0, cut);
		const t0 = performance.now();
		const plan = planTurn({
			messages: slice,
			registry,
			policy: workingSet,
			window,
			neverCacheRead: false,
			config: CONFIG,
			savings,
			use,
			blockMemo,
			argsCache,
			calls,
			frozenMemo,
		});
		if (plan.event.length > 0) {
			seq++;
			commitEvent(registry, plan, recordsFor(plan, seq), seq);
		}
		const rendered = renderTurn(slice, plan.blocks, plan.frozen, plan.event, applyMemo);
		const t1 = performance.now();
		const copy = structuredClone(slice);
		const t2 = performance.now();
		sink += rendered.messages.length + copy.length;
		pass.push(t1 - t0);
		clone.push(t2 - t1);
	}
	if (sink < 0) console.log(sink);
	return { pass, clone };
}

/** Folding figures of one replay (untimed): events, tokens they saved, peak and final contexts. */
function foldFigures(messages: readonly MessageLike[], cuts: readonly number[], window: number) {
	const registry = new FoldRegistry();
	const savings: SavingsMemo = new WeakMap();
	const use = new UseMemo();
	const blockMemo = new BlockMemo();
	const argsCache: ArgsCache = new Map();
	let seq = 0;
	let saved = 0;
	let folded = 0;
	let peakRaw = 0;
	let peakFolded = 0;
	let lastRaw = 0;
	let lastFolded = 0;
	const events: string[] = [];
	for (const cut of cuts) {
		const slice = messages.slice(0, cut);
		const plan = planTurn({
			messages: slice,
			registry,
			policy: workingSet,
			window,
			neverCacheRead: false,
			config: CONFIG,
			savings,
			use,
			blockMemo,
			argsCache,
		});
		const before = renderTurn(slice, plan.blocks, plan.frozen, []);
		const beforeTokens = tokensOf(linearize(before.messages));
		let rendered = before;
		if (plan.event.length > 0) {
			seq++;
			commitEvent(registry, plan, recordsFor(plan, seq), seq);
			rendered = renderTurn(slice, plan.blocks, plan.frozen, plan.event);
			const afterTokens = tokensOf(linearize(rendered.messages));
			saved += beforeTokens - afterTokens;
			folded += plan.event.length;
			events.push(`#${seq} @msg ${cut}: ${beforeTokens} → ${afterTokens} (${plan.event.length} blocks)`);
		}
		lastRaw = tokensOf(plan.blocks);
		lastFolded = tokensOf(linearize(rendered.messages));
		peakRaw = Math.max(peakRaw, lastRaw);
		peakFolded = Math.max(peakFolded, lastFolded);
	}
	return { events, saved, folded, peakRaw, peakFolded, lastRaw, lastFolded };
}

const ms = (v: number): string => v.toFixed(2).padStart(8);
const int = (v: number): string => String(v).padStart(8);

function pad(text: string, width: number): string {
	return text.length >= width ? text : text + " ".repeat(width - text.length);
}

function benchSession(session: Session, window: number): string[] {
	const { messages } = session;
	const cuts = requestCuts(messages);
	// Warm-up: one full untimed replay (JIT, inline caches, string interning).
	timedReplay(messages, cuts, window);
	const passRuns: number[][] = [];
	const cloneRuns: number[][] = [];
	for (let r = 0; r < REPS; r++) {
		const { pass, clone } = timedReplay(messages, cuts, window);
		passRuns.push(pass);
		cloneRuns.push(clone);
	}
	// Per turn, the median over repetitions; then quantiles over turns.
	const pass = cuts.map((_, t) => median(passRuns.map((run) => run[t])));
	const clone = cuts.map((_, t) => median(cloneRuns.map((run) => run[t])));
	const ratios = cuts.map((_, t) => pass[t] / Math.max(clone[t], 1e-6));
	const figures = foldFigures(messages, cuts, window);
	return [
		`${pad(session.name, 32)} ${int(window)} ${int(cuts.length)} ${ms(quantile(pass, 0.5))} ${ms(quantile(pass, 0.99))} ${ms(quantile(clone, 0.5))} ${ms(quantile(clone, 0.99))} ${(quantile(pass, 0.5) / quantile(clone, 0.5)).toFixed(2).padStart(8)} ${median(ratios).toFixed(2).padStart(8)}`,
		`${" ".repeat(33)}fold events ${figures.events.length}, blocks folded ${figures.folded}, tokens saved by events ${figures.saved}`,
		`${" ".repeat(33)}peak context: raw ${figures.peakRaw}, folded ${figures.peakFolded} (${((1 - figures.peakFolded / figures.peakRaw) * 100).toFixed(1)}% less); final: raw ${figures.lastRaw}, folded ${figures.lastFolded}`,
		...figures.events.map((e) => `${" ".repeat(35)}${e}`),
	];
}

function main(): void {
	const sessions = loadSessions();
	console.log(corporaLine());
	console.log(`context-fold replay bench — node ${process.version}, ${REPS} timed replays per row after 1 warm-up`);
	console.log(
		"per turn: pass = planTurn + commitEvent + renderTurn; clone = one structuredClone of the same messages (ms)",
	);
	console.log("ratio = p50(pass) / p50(clone); turn ratio = median over turns of pass/clone\n");
	console.log(
		`${pad("session", 32)} ${"window".padStart(8)} ${"turns".padStart(8)} ${"pass p50".padStart(8)} ${"pass p99".padStart(8)} ${"clon p50".padStart(8)} ${"clon p99".padStart(8)} ${"ratio".padStart(8)} ${"turn rat".padStart(8)}`,
	);
	for (const window of WINDOWS) {
		for (const session of sessions) {
			for (const line of benchSession(session, window)) console.log(line);
		}
	}
}

main();
