/**
 * The corpus replay the default policy's acceptance files share (default-policy.test.ts,
 * default-policy-variants.test.ts): every corpus session through `context-fold replay`'s own path
 * (`parseArgs` + `runReplay`), and plain Pi's and the default's figures in one session's report.
 * The jobs run one at a time in the test's own thread: Pi is loaded once and each session read once
 * per file, where a worker thread per job loaded both afresh (about 2.5 s of CPU each, 130 jobs, half
 * of what these files cost). Neither file reads the hook column, which a worker per job is for, so
 * none is measured.
 * They live in test/acceptance/ because `node --test` starts files in path order: the two longest
 * files of the suite start first, beside the short ones, instead of last, after them.
 */
import assert from "node:assert/strict";
import { runReplay } from "../../src/replay/cli.ts";
import { parseArgs } from "../../src/replay/options.ts";
import { listSessions } from "../corpus/corpora.ts";

/** The window issue 24's acceptance is replayed in. */
export const WINDOW = 140_000;

/**
 * The replay of every corpus session in `window`, under the given policies and price model, without
 * the hook column (neither file reads it, and its clone of every request costs about 6 % of a replay)
 * and, unless `foresight`, without the foresight floors (about a tenth of a replay).
 */
export function replayIn(window: number, policies: string, price = "anthropic-5m", foresight = false) {
	const args = [...listSessions().map((s) => s.path), "--window", String(window), "--policy", policies];
	const options = parseArgs([...args, "--price", price, "--jobs", "1"]);
	return runReplay({ ...options, timeHooks: false, foresight }, () => {});
}

/** One session's report. */
export type Report = Awaited<ReturnType<typeof replayIn>>[number];

/** Plain Pi's and the default policy's figures in a report. */
export function pair(report: Report) {
	const pi = report.policies.find((p) => p.policy === "pi");
	const fold = report.policies.find((p) => p.policy === "context-fold");
	assert.ok(pi && fold);
	return { pi, fold, ratio: fold.costWithRecalls / pi.costWithRecalls };
}
