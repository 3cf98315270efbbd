/**
 * The figures of a replay, per session and policy: request counts and sizes, compactions, cache
 * reads and writes with their cost (also as a ratio to `pi`), idle warming and the refreshes the
 * policy's extension stopped (with what they would have cost and what stopping them saved), rewrite
 * events and their cost, hook time against one structuredClone, reference visibility with the
 * cost of the recalls it implies, where the replay could not follow the recording (a drifted
 * replay shows a divergence count beside its figures, and each kind under the table), and how many
 * advisories the replayed extension gave its user (counted, never printed). Pure over captured runs;
 * their text is report-text.ts's.
 */
import { foresightFloor, scheduledFloor, VISIBILITY_BAR_LOSS } from "./foresight.ts";
import type { ImagePricing } from "./image-size.ts";
import type { PolicyRun } from "./policy-run.ts";
import { type PriceInput, type PriceModel, priceRun } from "./price.ts";
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
	/**
	 * Where the session would have cost most had it ended there (see dearestCut): the largest multiple
	 * of plain Pi's cost with recalls up to a turn that this run's came to, and that turn's count; null
	 * on plain Pi's run, without one, or before CUT_FROM turns.
	 */
	dearestCut: { ratio: number; turns: number } | null;
	rewriteEvents: { request: number; firstChangedBlock: number; tokens: number; cost: number; compaction: boolean }[];
	foldEvents: number;
	/** What every rewrite cost: the fold events' and the compactions' (see rewriteEvents). */
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
	 * On the `pi` run only (null elsewhere): the foresight floor's cost (foresight.ts) over the run's
	 * own cost with recalls, the denominator of every policy's cost+recalls × pi (the table's × pi
	 * leaves recalls out): about the least share of plain Pi's cost any fold policy could reach
	 * while keeping every reference visible.
	 */
	foresight: number | null;
	/**
	 * On the `pi` run only: the same floor allowed to leave unseen as many references as the
	 * visibility bar lets a policy lose (VISIBILITY_BAR_LOSS of them), over the same denominator: the
	 * least share of plain Pi's cost any fold policy passing the bar could reach.
	 */
	foresightAtBar: number | null;
	/**
	 * On the `pi` run only: the floor at the visibility bar with folds priced as the cache prices them
	 * (a rewrite from the first changed block), at the cheapest times for fold events (foresight.ts
	 * `scheduledFloor`), over the same denominator, and how many events that takes.
	 */
	foresightScheduled: { ratio: number; events: number } | null;
	divergences: Record<string, number>;
	/** Notices the policy's extension gave the replayed session's user, counted, not shown (PolicyRun.advisories). */
	advisories: number;
	/**
	 * Per request, for charts: prompt tokens, cache read and write, and cost: the request's own with
	 * the idle refreshes sent in the gap before it (`cost`, summing to the run's), and the recalls
	 * first needed at it (`recallCost`, summing to `recallCost`).
	 */
	series: {
		prompt: number;
		read: number;
		write: number;
		cost: number;
		recallCost: number;
		kind: "turn" | "summary";
		rewrite: boolean;
		compaction: boolean;
	}[];
}

/**
 * The three foresight floors of the `pi` run (see PolicyFigures.foresight), each over `plain`, the
 * run's cost with recalls: the floors' own baseline prices neither Pi's compactions nor expiry, so
 * over it they would not compare with any policy's × pi.
 */
function floorsOf(
	produced: readonly Produced[],
	vis: Visibility,
	model: PriceModel,
	fixed: readonly boolean[],
	plain: number,
): Pick<PolicyFigures, "foresight" | "foresightAtBar" | "foresightScheduled"> {
	const over = (cost: number) => (plain > 0 ? cost / plain : 1);
	const lose = barLoss(vis.references);
	const scheduled =
		produced.length <= SCHEDULED_FLOOR_REQUESTS
			? scheduledFloor({ produced, needs: vis.needs, model, fixed, lose })
			: undefined;
	return {
		foresight: over(foresightFloor({ produced, needs: vis.needs, model, fixed }).cost),
		foresightAtBar: over(foresightFloor({ produced, needs: vis.needs, model, fixed, lose }).cost),
		foresightScheduled: scheduled ? { ratio: over(scheduled.cost), events: scheduled.events.length } : null,
	};
}

/**
 * The longest session (in requests that produced a reply) whose scheduled floor is worked out: its
 * work grows with the cube of the length (every event time against every request, each priced
 * block by block), a few seconds at 600 requests and minutes at 3,000, in one run that Ctrl-C
 * cannot interrupt. Every corpus session is shorter (the longest, 454 requests).
 */
export const SCHEDULED_FLOOR_REQUESTS = 600;

/** How many of `references` a policy may leave unseen and still pass the visibility bar. */
export function barLoss(references: number): number {
	return Math.floor(references * VISIBILITY_BAR_LOSS + 1e-9);
}

function percentile(values: number[], p: number): number | null {
	if (values.length === 0) return null;
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * The figures of one run under one price model. `foresight` false leaves the foresight floors null
 * on the `pi` run too (callers that read none; they cost about a tenth of a replay).
 */
export function policyFigures(
	script: ReplayScript,
	run: PolicyRun,
	model: PriceModel,
	warming: boolean,
	window: number,
	foresight = true,
): PolicyFigures {
	const table = run.table;
	const inputs: PriceInput[] = run.requests.map((r) => ({
		at: r.at,
		kind: r.kind,
		shape: r.shape,
		...(r.warmingStopped ? { warmingStopped: true } : {}),
		...(r.opensRun ? { opensRun: true } : {}),
		...(r.afterCompaction ? { afterCompaction: true } : {}),
		...(r.failedWithoutUsage ? { failedWithoutUsage: true } : {}),
		...(r.refused ? { refused: true } : {}),
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
	const recallPrice = (p: Visibility["recallPoints"][number]): number =>
		p.prompt * model.read + p.blockTokens * model.write;
	const recallCost = vis.recallPoints.reduce((c, p) => c + recallPrice(p), 0);
	const recallAt = new Map<number, number>();
	for (const p of vis.recallPoints) recallAt.set(p.request, (recallAt.get(p.request) ?? 0) + recallPrice(p));
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
	const floors = foresight && run.policy === "pi";
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
		dearestCut: null,
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
		...(floors
			? floorsOf(produced, vis, model, table.fixed, price.cost + recallCost)
			: { foresight: null, foresightAtBar: null, foresightScheduled: null }),
		divergences: run.divergences,
		advisories: run.advisories,
		series: price.requests.map((p, i) => ({
			prompt: p.prompt,
			read: p.read,
			write: p.write,
			cost: p.cost + p.warmCost,
			recallCost: recallAt.get(i) ?? 0,
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

/** Fills each policy's cost ratio and dearest cut against the `pi` run of the same session (null without one). */
export function withRatios(figures: PolicyFigures[]): PolicyFigures[] {
	const pi = figures.find((f) => f.policy === "pi");
	const base = pi?.cost;
	return figures.map((f) => ({
		...f,
		costRatio: base ? f.cost / base : null,
		dearestCut: pi && f !== pi ? dearestCut(f, pi) : null,
	}));
}

/** The turns a session must have made before a cut of it counts: a ratio of a few requests' costs says little. */
export const CUT_FROM = 10;

/**
 * The dearest point for a session to have ended: over every turn from the CUT_FROM-th on, the cost
 * with recalls of `run` up to that turn over `pi`'s up to the same turn (summaries and idle refreshes
 * before it included). A fold event's rewrite is paid at once and its saving comes after, so a
 * session that ends just after an event costs more than plain Pi; this says how much more at worst.
 * Null when the runs have fewer turns than CUT_FROM.
 */
export function dearestCut(run: PolicyFigures, pi: PolicyFigures): { ratio: number; turns: number } | null {
	const totals = (f: PolicyFigures): number[] => {
		const out: number[] = [];
		let sum = 0;
		for (const step of f.series) {
			sum += step.cost + step.recallCost;
			if (step.kind === "turn") out.push(sum);
		}
		return out;
	};
	const mine = totals(run);
	const theirs = totals(pi);
	let worst: { ratio: number; turns: number } | null = null;
	for (let turns = CUT_FROM; turns <= Math.min(mine.length, theirs.length); turns++) {
		const ratio = mine[turns - 1] / theirs[turns - 1];
		if (theirs[turns - 1] > 0 && (worst === null || ratio > worst.ratio)) worst = { ratio, turns };
	}
	return worst;
}
