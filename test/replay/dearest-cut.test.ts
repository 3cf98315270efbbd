/**
 * The dearest end of a run: had the session ended after some turn (the tenth or later), how many
 * times plain Pi's cost with recalls up to that turn the run's came to, at worst. An event's rewrite
 * is paid at once and its saving comes after, so the dearest end is just after an event; summaries
 * and recalls count at the turn they come before or at, and the terminal report prints it per policy.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CUT_FROM, dearestCut, type PolicyFigures, withRatios } from "../../src/replay/report.ts";
import { report } from "../../src/replay/report-text.ts";
import { FIXED_REPORT } from "./report-fixture.ts";

type Step = PolicyFigures["series"][number];

const turn = (cost: number, recallCost = 0): Step => ({
	prompt: 0,
	read: 0,
	write: 0,
	cost,
	recallCost,
	kind: "turn",
	rewrite: false,
	compaction: false,
});

const run = (policy: string, series: Step[]): PolicyFigures => ({ ...FIXED_REPORT[0].policies[0], policy, series });

test("the dearest end is the turn after which the run's cost came nearest to plain Pi's, or furthest past it", () => {
	const pi = run(
		"pi",
		Array.from({ length: 16 }, () => turn(10)),
	);
	// Nine turns as Pi's, an event at the tenth (30 instead of 10), then 5 a turn: 120/100 at 10 turns.
	const fold = run("context-fold", [
		...Array.from({ length: 9 }, () => turn(10)),
		turn(30),
		...Array(6).fill(turn(5)),
	]);
	assert.deepEqual(dearestCut(fold, pi), { ratio: 1.2, turns: 10 });
	// A recall at the twelfth turn (priced there): 120 + 5 + 5 + 40 = 170 over 120.
	const recalled = run("context-fold", [...fold.series.slice(0, 11), turn(5, 40), ...fold.series.slice(12)]);
	assert.deepEqual(dearestCut(recalled, pi), { ratio: 170 / 120, turns: 12 });
	// Plain Pi's summary request counts toward the turn after it.
	const summarised = run("pi", [...pi.series.slice(0, 10), { ...turn(60), kind: "summary" }, ...pi.series.slice(10)]);
	assert.deepEqual(dearestCut(fold, summarised), { ratio: 1.2, turns: 10 });
	// With the summary, plain Pi has caught up by the twelfth turn: the event's turn is dearest again.
	assert.deepEqual(dearestCut(recalled, summarised), { ratio: 1.2, turns: 10 });
});

test("no dearest end before CUT_FROM turns, on plain Pi's own run, or without one", () => {
	const short = Array.from({ length: CUT_FROM - 1 }, () => turn(10));
	assert.equal(dearestCut(run("context-fold", short), run("pi", short)), null);
	const pi = run(
		"pi",
		Array.from({ length: CUT_FROM }, () => turn(10)),
	);
	const fold = run(
		"context-fold",
		Array.from({ length: CUT_FROM }, () => turn(12)),
	);
	const [withPi, withFold] = withRatios([pi, fold]);
	assert.equal(withPi.dearestCut, null);
	assert.ok(withFold.dearestCut !== null && Math.abs(withFold.dearestCut.ratio - 1.2) < 1e-12);
	assert.equal(withRatios([fold])[0].dearestCut, null);
	const text = report([{ ...FIXED_REPORT[0], policies: [withPi, withFold] }]);
	assert.match(
		text,
		/dearest end \(had the session ended after that many turns[^)]*\):\s+context-fold 1\.200× after 10/,
	);
});
