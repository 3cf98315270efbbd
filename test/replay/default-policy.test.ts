/**
 * Issue 10's acceptance, replayed in CI: every corpus session (the project's always, the shared ones
 * when present) through `context-fold replay`'s own path (`parseArgs` + `runReplay`), anthropic-5m
 * with idle warming, a 140k window, plain Pi, the default policy and the three peers (not the other
 * fold profiles: the bar is the default's). For the default policy: no overflow rejection, no summary
 * request (Pi's LLM compaction never runs), visibility at least plain Pi's minus 5 points, and no
 * peer both cheaper and more visible. Cost with recalls is at most 0.5x plain
 * Pi on every session where that is reachable at all. It is not where folding is the only lever and
 * cannot get there: a session whose context never reaches the backstop (so no compaction can help)
 * and whose foresight figure at the visibility bar (what a fold policy that knew every later
 * reference would cost, rewrites free, nothing folded that no fold may touch, hiding at most the 5 %
 * of references the bar allows, those whose loss saves most; foresight.ts) is above 0.5x (the
 * project's debug-branchy: its context peaks at 15 % of the window). No session may cost more
 * than 0.9x plain Pi (README "Defaults and why"). Every recorded reply must reach the model as under
 * plain Pi. In a window five times larger (about a real 1M one) the default policy folds and compacts
 * exactly as in 140k, since its sizes are tokens, and still costs at most 0.9x plain Pi. In a 32k
 * window, where Pi compacts on its own past 15.6k, it still costs at most 0.9x plain Pi, sees within 5
 * points of what plain Pi sees, and never asks Pi's LLM for a summary.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import { DEFAULT_ECONOMIC } from "../../src/core/contract.ts";
import { KEPT_OVERHEAD } from "../../src/core/policy/cache-economic.ts";
import { parseArgs, runReplay } from "../../src/replay/cli.ts";
import { listSessions } from "../corpus/corpora.ts";

const WINDOW = 140_000;
/** Where the default policy compacts in this window (backstopOf with Pi's default keepRecentTokens). */
const BACKSTOP = Math.max(DEFAULT_ECONOMIC.backstopAt, KEPT_OVERHEAD * DEFAULT_COMPACTION_SETTINGS.keepRecentTokens);

/** The replay of every corpus session in `window`, under the given policies. */
function replayIn(window: number, policies: string) {
	const args = [...listSessions().map((s) => s.path), "--window", String(window), "--policy", policies];
	return runReplay(parseArgs(args), () => {});
}

const inWindow = replayIn(WINDOW, "pi,context-fold,compact-only,mask-last-5,clear-tool-uses");

test("the default policy against plain Pi and the peers, on every corpus session", async (t) => {
	const sessions = listSessions();
	const reports = await inWindow;
	assert.equal(reports.length, sessions.length);
	for (const report of reports) {
		await t.test(report.session, () => {
			const pi = report.policies.find((p) => p.policy === "pi");
			const fold = report.policies.find((p) => p.policy === "context-fold");
			assert.ok(pi && fold);
			const ratio = fold.costWithRecalls / pi.costWithRecalls;
			assert.ok(pi.foresight !== null && pi.foresightAtBar !== null);
			assert.ok(pi.foresightAtBar <= pi.foresight, "hiding references never makes the floor dearer");
			assert.ok(
				pi.foresightScheduled && pi.foresightScheduled.ratio >= pi.foresightAtBar,
				"paid rewrites never make it cheaper",
			);
			const foldingOnly = pi.peakPrompt < BACKSTOP;
			const reachable = !foldingOnly || pi.foresightAtBar <= 0.5;
			t.diagnostic(
				`${report.session}: ${ratio.toFixed(3)}x pi, visibility ${(100 * fold.visibility).toFixed(1)}%, foresight ${pi.foresight.toFixed(3)}x (${pi.foresightAtBar.toFixed(3)}x at the bar, ${pi.foresightScheduled?.ratio.toFixed(3)}x with rewrites priced), peak ${pi.peakPrompt}`,
			);
			assert.ok(ratio <= (reachable ? 0.5 : 0.9), `cost ${ratio.toFixed(4)}x plain Pi`);
			assert.ok(fold.visibility >= pi.visibility - 0.05, `visibility ${fold.visibility} vs ${pi.visibility}`);
			// Every recorded reply reaches the model as under plain Pi: a compaction never cuts a run short.
			assert.equal(fold.requests, pi.requests - pi.summaryRequests, "requests");
			const dropped = (p: typeof pi) => p.divergences["recorded replies not requested"] ?? 0;
			assert.equal(dropped(fold), dropped(pi), "recorded replies not requested");
			assert.equal(fold.overflowRejections, 0);
			assert.equal(fold.summaryRequests, 0, "no LLM compaction");
			for (const peer of report.policies) {
				if (peer === fold) continue;
				const dominates = peer.costWithRecalls < fold.costWithRecalls && peer.visibility > fold.visibility;
				assert.ok(!dominates, `${peer.policy} is both cheaper and more visible`);
			}
		});
	}
});

test("the default policy folds alike in a 700k window, and still costs at most 0.9x plain Pi there", async (t) => {
	const large = await replayIn(5 * WINDOW, "pi,context-fold");
	const reports = await inWindow;
	for (const report of large) {
		await t.test(report.session, () => {
			const pi = report.policies.find((p) => p.policy === "pi");
			const fold = report.policies.find((p) => p.policy === "context-fold");
			const there = reports
				.find((r) => r.session === report.session)
				?.policies.find((p) => p.policy === "context-fold");
			assert.ok(pi && fold && there);
			const ratio = fold.costWithRecalls / pi.costWithRecalls;
			t.diagnostic(`${report.session}: ${ratio.toFixed(3)}x pi, visibility ${(100 * fold.visibility).toFixed(1)}%`);
			assert.ok(ratio <= 0.9, `cost ${ratio.toFixed(4)}x plain Pi`);
			assert.deepEqual(
				fold.rewriteEvents.map((e) => e.request),
				there.rewriteEvents.map((e) => e.request),
				"the same fold events and compactions, at the same requests",
			);
			assert.equal(fold.visibility, there.visibility);
		});
	}
});

test("the default policy in a 32k window: at most 0.9x plain Pi, visibility within 5 points, no LLM summary", async (t) => {
	for (const report of await replayIn(32_000, "pi,context-fold")) {
		await t.test(report.session, () => {
			const pi = report.policies.find((p) => p.policy === "pi");
			const fold = report.policies.find((p) => p.policy === "context-fold");
			assert.ok(pi && fold);
			const ratio = fold.costWithRecalls / pi.costWithRecalls;
			t.diagnostic(`${report.session}: ${ratio.toFixed(3)}x pi, visibility ${(100 * fold.visibility).toFixed(1)}%`);
			assert.ok(ratio <= 0.9, `cost ${ratio.toFixed(4)}x plain Pi`);
			assert.ok(fold.visibility >= pi.visibility - 0.05, `visibility ${fold.visibility} vs ${pi.visibility}`);
			assert.equal(fold.summaryRequests, 0, "no LLM compaction");
			assert.equal(fold.overflowRejections, 0);
		});
	}
});
