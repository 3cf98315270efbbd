/**
 * The figures of a replay, per session and policy: request counts and sizes, compactions, cache
 * reads and writes with their cost (also as a ratio to `pi`), idle warming and the refreshes the
 * policy's extension stopped (with what they would have cost and what stopping them saved), rewrite
 * events and their cost, hook time against one structuredClone, reference visibility with the
 * cost of the recalls it implies, and where the replay could not follow the recording (a drifted
 * replay shows a divergence count beside its figures, and each kind under the table).
 * Pure over captured runs, plus the terminal table.
 */
import { foresightFloor, scheduledFloor, VISIBILITY_BAR_LOSS } from "./foresight.ts";
import type { ImagePricing } from "./jobs.ts";
import { type PriceInput, type PriceModel, priceRun } from "./price.ts";
import type { PolicyRun } from "./run.ts";
import type { ReplayScript } from "./script.ts";
import { measureVisibility, type Produced, type Visibility } from "./visibility.ts";

/** Every figure of one policy on one session. */
export interface PolicyFigures {
	policy: string;
	requests: number;
	summaryRequests: number;
	promptTokens: number;
	peakPrompt: number;
	overflowRejections: number;
	compactions: number;
	cacheRead: number;
	cacheWrite: number;
	warmRefreshes: number;
	warmCost: number;
	/** Refreshes the extension's `cache_warming_decision` answer stopped. */
	warmStopped: number;
	/** What the stopped refreshes would have cost, priced in the run where Pi sends them all. */
	warmStoppedCost: number;
	/** That run's cost minus `cost`: the refreshes saved, less the cache reads lost to expiry after them. */
	warmStopSaving: number;
	cost: number;
	costRatio: number | null;
	rewriteEvents: { request: number; firstChangedBlock: number; tokens: number; cost: number; compaction: boolean }[];
	foldEvents: number;
	rewriteCost: number;
	hookMsP50: number | null;
	hookMsP99: number | null;
	cloneMsP50: number | null;
	references: number;
	visibility: number;
	recallsNeeded: number;
	recallCost: number;
	costWithRecalls: number;
	/**
	 * On the `pi` run only (null elsewhere): the foresight floor's cost over the same formula's cost
	 * of the run as sent (foresight.ts), the least share of its cost any fold policy could reach
	 * while keeping every reference visible.
	 */
	foresight: number | null;
	/**
	 * On the `pi` run only: the same floor allowed to leave unseen as many references as the
	 * visibility bar lets a policy lose (VISIBILITY_BAR_LOSS of them): the least share of its cost any
	 * fold policy passing the bar could reach.
	 */
	foresightAtBar: number | null;
	/**
	 * On the `pi` run only: the floor at the visibility bar with folds priced as the cache prices them
	 * (a rewrite from the first changed block), at the cheapest times for fold events (foresight.ts
	 * `scheduledFloor`), and how many events that takes.
	 */
	foresightScheduled: { ratio: number; events: number } | null;
	divergences: Record<string, number>;
	/** Prompt tokens, cache read and write per request, for charts. */
	series: {
		prompt: number;
		read: number;
		write: number;
		kind: "turn" | "summary";
		rewrite: boolean;
		compaction: boolean;
	}[];
}

/** The scheduled floor at the visibility bar (see PolicyFigures.foresightScheduled). */
function scheduledAtBar(
	produced: readonly Produced[],
	vis: Visibility,
	model: PriceModel,
	fixed: readonly boolean[],
): { ratio: number; events: number } {
	const floor = scheduledFloor({ produced, needs: vis.needs, model, fixed, lose: barLoss(vis.references) });
	return { ratio: floor.ratio, events: floor.events.length };
}

/** How many of `references` a policy may leave unseen and still pass the visibility bar. */
export function barLoss(references: number): number {
	return Math.floor(references * VISIBILITY_BAR_LOSS + 1e-9);
}

function percentile(values: number[], p: number): number | null {
	if (values.length === 0) return null;
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The figures of one run under one price model. */
export function figuresOf(
	script: ReplayScript,
	run: PolicyRun,
	model: PriceModel,
	warming: boolean,
	window: number,
): PolicyFigures {
	const table = run.table;
	const inputs: PriceInput[] = run.requests.map((r) => ({
		at: r.at,
		kind: r.kind,
		shape: r.shape,
		...(r.warmingStopped ? { warmingStopped: true } : {}),
	}));
	const price = priceRun(inputs, model, warming);
	const warmedAll =
		price.warmStopped > 0
			? priceRun(
					inputs.map((input) => ({ ...input, warmingStopped: false })),
					model,
					warming,
				)
			: price;
	const warmStoppedCost = warmedAll.requests.reduce((c, p, i) => (inputs[i].warmingStopped ? c + p.warmCost : c), 0);
	const produced: Produced[] = [];
	run.requests.forEach((r, i) => {
		if (r.kind === "turn" && r.produced !== undefined)
			produced.push({ message: r.produced, request: i, shape: inputs[i].shape });
	});
	const vis = measureVisibility(script.messages, produced, table);
	const recallCost = vis.recallPoints.reduce((c, p) => c + p.prompt * model.read + p.blockTokens * model.write, 0);
	const rewriteEvents = price.requests.flatMap((p, i) =>
		p.rewriteTokens > 0
			? [
					{
						request: i,
						firstChangedBlock: p.firstChanged,
						tokens: p.rewriteTokens,
						cost: p.rewriteCost,
						compaction: run.requests[i].afterCompaction,
					},
				]
			: [],
	);
	const hooks = run.requests.flatMap((r) => (r.hookMs === undefined ? [] : [r.hookMs]));
	const clones = run.requests.flatMap((r) => (r.cloneMs === undefined ? [] : [r.cloneMs]));
	return {
		policy: run.policy,
		requests: run.requests.length,
		summaryRequests: run.requests.filter((r) => r.kind === "summary").length,
		promptTokens: price.requests.reduce((n, p) => n + p.prompt, 0),
		peakPrompt: price.requests.reduce((n, p) => Math.max(n, p.prompt), 0),
		overflowRejections: price.requests.filter((p) => p.prompt > window).length,
		compactions: run.compactions,
		cacheRead: price.read,
		cacheWrite: price.write,
		warmRefreshes: price.warmRefreshes,
		warmCost: price.warmCost,
		warmStopped: price.warmStopped,
		warmStoppedCost,
		warmStopSaving: warmedAll.cost - price.cost,
		cost: price.cost,
		costRatio: null,
		rewriteEvents,
		foldEvents: rewriteEvents.filter((e) => !e.compaction).length,
		rewriteCost: rewriteEvents.reduce((c, e) => c + e.cost, 0),
		hookMsP50: percentile(hooks, 50),
		hookMsP99: percentile(hooks, 99),
		cloneMsP50: percentile(clones, 50),
		references: vis.references,
		visibility: vis.visibility,
		recallsNeeded: vis.recalls,
		recallCost,
		costWithRecalls: price.cost + recallCost,
		foresight:
			run.policy === "pi" ? foresightFloor({ produced, needs: vis.needs, model, fixed: table.fixed }).ratio : null,
		foresightAtBar:
			run.policy === "pi"
				? foresightFloor({ produced, needs: vis.needs, model, fixed: table.fixed, lose: barLoss(vis.references) })
						.ratio
				: null,
		foresightScheduled: run.policy === "pi" ? scheduledAtBar(produced, vis, model, table.fixed) : null,
		divergences: run.divergences,
		series: price.requests.map((p, i) => ({
			prompt: p.prompt,
			read: p.read,
			write: p.write,
			kind: run.requests[i].kind,
			rewrite: p.rewriteTokens > 0 && !run.requests[i].afterCompaction,
			compaction: run.requests[i].afterCompaction,
		})),
	};
}

/** One session's figures. */
export interface SessionReport {
	session: string;
	price: string;
	warming: boolean;
	window: number;
	/** How images were priced (see ReplayJob.images). */
	images: ImagePricing;
	policies: PolicyFigures[];
}

/** Fills each policy's cost ratio against the `pi` run of the same session (null without one). */
export function withRatios(figures: PolicyFigures[]): PolicyFigures[] {
	const base = figures.find((f) => f.policy === "pi")?.cost;
	return figures.map((f) => ({ ...f, costRatio: base ? f.cost / base : null }));
}

/** How many times the replay could not follow the recording, over every kind. */
export function divergenceCount(figures: PolicyFigures): number {
	return Object.values(figures.divergences).reduce((n, c) => n + c, 0);
}

/** One line per policy whose replay diverged, naming each kind and its count. */
export function divergenceLines(figures: readonly PolicyFigures[]): string[] {
	return figures.flatMap((f) => {
		const kinds = Object.entries(f.divergences).filter(([, c]) => c > 0);
		return kinds.length === 0
			? []
			: [`${f.policy} diverged: ${kinds.map(([kind, c]) => `${kind} ×${c}`).join(", ")}`];
	});
}

const k = (n: number): string => `${(n / 1000).toFixed(1)}k`;
const ms = (n: number | null): string => (n === null ? "-" : n.toFixed(2));

/** The table's header and one row of formatted cells per policy (the terminal and HTML tables). */
export function tableCells(figures: readonly PolicyFigures[]): { head: string[]; rows: string[][] } {
	const head = [
		"policy",
		"requests",
		"divergences",
		"Σ prompt",
		"peak",
		"overflow",
		"compactions",
		"cache read",
		"cache write",
		"cost",
		"× pi",
		"fold events",
		"rewrite cost",
		"hook p50/p99 ms",
		"clone p50 ms",
		"visibility",
		"recalls",
		"cost+recalls",
		"warm stopped",
		"stop saving",
	];
	const rows = figures.map((f) => [
		f.policy,
		f.summaryRequests > 0 ? `${f.requests} (${f.summaryRequests} summary)` : String(f.requests),
		String(divergenceCount(f)),
		k(f.promptTokens),
		k(f.peakPrompt),
		String(f.overflowRejections),
		String(f.compactions),
		k(f.cacheRead),
		k(f.cacheWrite),
		k(f.cost),
		f.costRatio === null ? "-" : f.costRatio.toFixed(3),
		String(f.foldEvents),
		k(f.rewriteCost),
		`${ms(f.hookMsP50)}/${ms(f.hookMsP99)}`,
		ms(f.cloneMsP50),
		`${(f.visibility * 100).toFixed(1)}%`,
		String(f.recallsNeeded),
		k(f.costWithRecalls),
		f.warmStopped > 0 ? `${f.warmStopped} (${k(f.warmStoppedCost)})` : "0",
		k(f.warmStopSaving),
	]);
	return { head, rows };
}

/** The terminal table of one session's figures, and under it each divergence by kind. */
export function table(figures: readonly PolicyFigures[]): string {
	const { head, rows } = tableCells(figures);
	const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
	const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
	return [
		line(head),
		`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
		...rows.map(line),
		...divergenceLines(figures),
	].join("\n");
}
