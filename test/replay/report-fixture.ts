/**
 * A small fixed replay report for the HTML renderer's tests: one session (its name full of HTML
 * metacharacters), five policies (one that sends exactly what plain Pi sends, one that sends it
 * until it clears where Pi compacts), fold events, compactions, a recall, two stopped warming refreshes and
 * the cost ratios to `pi`, no replay needed.
 */
import { type PolicyFigures, type SessionReport, withRatios } from "../../src/replay/report.ts";

type Step = PolicyFigures["series"][number];

function figures(policy: string, series: Step[], extra: Partial<PolicyFigures>): PolicyFigures {
	const cost = series.reduce((c, s) => c + s.cost, 0);
	const recallCost = series.reduce((c, s) => c + s.recallCost, 0);
	return {
		policy,
		requests: series.length,
		summaryRequests: series.filter((s) => s.kind === "summary").length,
		promptTokens: series.reduce((n, s) => n + s.prompt, 0),
		peakPrompt: Math.max(...series.map((s) => s.prompt)),
		overflowRejections: 0,
		compactions: series.filter((s) => s.compaction).length,
		cacheRead: series.reduce((n, s) => n + s.read, 0),
		cacheWrite: series.reduce((n, s) => n + s.write, 0),
		warmRefreshes: 0,
		warmCost: 0,
		warmStopped: 0,
		warmStoppedCost: 0,
		warmStopSaving: 0,
		cost,
		costRatio: null,
		dearestCut: null,
		rewriteEvents: [],
		foldEvents: series.filter((s) => s.rewrite).length,
		rewriteCost: 0,
		hookMsP50: null,
		hookMsP99: null,
		cloneMsP50: null,
		references: 10,
		visibility: 1,
		recallsNeeded: series.filter((s) => s.recallCost > 0).length,
		recallCost,
		costWithRecalls: cost + recallCost,
		foresight: policy === "pi" ? 0.5 : null,
		foresightAtBar: policy === "pi" ? 0.45 : null,
		foresightScheduled: policy === "pi" ? { ratio: 0.6, events: 3 } : null,
		divergences: {},
		advisories: 0,
		series,
		...extra,
	};
}

const step = (prompt: number, read: number, flags: Partial<Step> = {}): Step => ({
	prompt,
	read,
	write: prompt - read,
	cost: read * 0.1 + (prompt - read) * 1.25,
	recallCost: 0,
	kind: "turn",
	rewrite: false,
	compaction: false,
	...flags,
});

/** Plain Pi's requests: it compacts once, before its fifth. */
const PI_SERIES = [
	step(4000, 0),
	step(9000, 4000),
	step(15000, 9000),
	step(15500, 15000, { kind: "summary" }),
	step(5000, 0, { compaction: true }),
	step(8000, 5000),
];

/**
 * The fixed report: `pi` compacts once, `context-fold` folds twice and needs one recall,
 * `mask-last-2` folds three times, `compact-only` sends what `pi` sends (its compaction too), and
 * `clear-tool-uses` sends it for three requests, then clears where Pi summarises.
 */
export const FIXED_REPORT: SessionReport[] = [
	{
		session: `<script>alert("x")</script> & 'co'.jsonl`,
		price: "anthropic-5m",
		warming: true,
		images: "text",
		window: 20_000,
		policies: withRatios([
			figures("pi", PI_SERIES, {}),
			figures(
				"context-fold",
				[
					step(4000, 0),
					step(9000, 4000),
					step(7000, 2000, { rewrite: true }),
					step(9000, 7000),
					step(6000, 3000, { rewrite: true, recallCost: 1500 }),
				],
				{
					visibility: 0.9,
					warmStopped: 2,
					warmStoppedCost: 1500,
					warmStopSaving: 1200,
				},
			),
			figures(
				"mask-last-2",
				[
					step(4000, 0),
					step(6000, 2000, { rewrite: true }),
					step(7000, 3000, { rewrite: true }),
					step(8000, 3000, { rewrite: true }),
					step(9000, 4000),
				],
				{ visibility: 0.8 },
			),
			figures("compact-only", structuredClone(PI_SERIES), {}),
			figures(
				"clear-tool-uses",
				[...structuredClone(PI_SERIES.slice(0, 3)), step(11000, 2000, { rewrite: true }), step(13000, 11000)],
				{ visibility: 0.95 },
			),
		]),
	},
];
