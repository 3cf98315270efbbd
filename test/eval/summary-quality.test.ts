/**
 * Summary-quality evaluation over both shared sessions (see quality.ts for the method): compactions
 * forced at 25, 50, 75 and 100 % of each session; every planted or natural fact that left live
 * history must be in the summary verbatim or returned by `recall_folded search=`. The floors below
 * are the shares measured when this test was written, rounded down to the percent: the test fails
 * when recoverability drops below them. Planted error lines and planted file paths must be found at
 * every compaction (nothing lost). Run `node bench/summary-quality.ts` for the full report.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SUMMARY_LIMITS } from "../../src/core/summary.ts";
import {
	CHECKPOINTS,
	evaluateSession,
	formatCompactions,
	formatMissed,
	formatTable,
	PLANT_COUNT,
	ROWS,
	rowsOf,
	SESSION_FILES,
} from "./quality.ts";

/**
 * Least share (in the last summary, or recoverable through recall_folded search) per session and
 * row, as measured: every row reached 100 % once compaction recorded every block leaving history
 * (user messages included) and search ranked exact-case hits first.
 */
const FLOORS: Record<(typeof SESSION_FILES)[number], Record<string, number>> = {
	"large-session.jsonl": {
		"planted error lines": 1,
		"planted file paths": 1,
		"planted identifiers": 1,
		"planted user constraints": 1,
		"error lines": 1,
		"file paths": 1,
		"exact identifiers": 1,
		"code symbols": 1,
		"user intents": 1,
	},
	"accordion-sample.jsonl": {
		"planted error lines": 1,
		"planted file paths": 1,
		"planted identifiers": 1,
		"planted user constraints": 1,
		"error lines": 1,
		"file paths": 1,
		"exact identifiers": 1,
		"code symbols": 1,
		"user intents": 1,
	},
};

/** Rows that must be whole at every compaction, whatever was measured. */
const NOTHING_LOST = new Set(["planted error lines", "planted file paths"]);

const PLANTED: Record<string, number> = {
	"planted error lines": PLANT_COUNT.error,
	"planted file paths": PLANT_COUNT.path,
	"planted identifiers": PLANT_COUNT.identifier,
	"planted user constraints": PLANT_COUNT.intent,
};

describe("summary quality over the shared sessions", () => {
	for (const file of SESSION_FILES) {
		it(`${file}: facts that left history stay findable through the summary or recall_folded search`, async (t) => {
			const result = await evaluateSession(file);
			for (const line of formatTable([result]).split("\n")) t.diagnostic(line);
			for (const line of formatCompactions(result).split("\n")) t.diagnostic(line);
			const missed = formatMissed([result], 3);
			if (missed) for (const line of missed.split("\n")) t.diagnostic(line);
			t.diagnostic(
				`${Math.round(result.ms)} ms, ${result.searches} recall_folded searches, ${result.foldEvents} fold events`,
			);

			assert.equal(result.compactions.length, CHECKPOINTS.length, "every checkpoint compacted");
			for (const c of result.compactions) {
				assert.ok(
					c.summary.length <= SUMMARY_LIMITS.total,
					`summary of ${c.summary.length} chars exceeds the bound`,
				);
			}
			assert.ok(result.foldEvents > 0, "the fold passes committed fold events between compactions");
			for (const control of result.controls) {
				assert.ok(!control.recoverable, `a fact that never occurred was reported found: ${control.fact.text}`);
			}

			const rows = rowsOf(result);
			assert.deepEqual(
				rows.map((r) => r.label),
				ROWS.map((r) => r.label),
			);
			const floors = FLOORS[file];
			for (const row of rows) {
				const planted = PLANTED[row.label];
				if (planted !== undefined) assert.equal(row.count, planted, `${row.label}: all planted facts left history`);
				else assert.ok(row.count > 0, `${row.label}: the session yields facts of this kind`);
				const examples = row.missed
					.slice(0, 3)
					.map((f) => JSON.stringify(f.key.slice(0, 100)))
					.join(", ");
				assert.ok(
					row.recoverable >= floors[row.label],
					`${row.label}: ${(row.recoverable * 100).toFixed(1)} % recoverable, floor ${floors[row.label] * 100} %; missed ${examples}`,
				);
				if (NOTHING_LOST.has(row.label)) {
					assert.equal(row.worst, 1, `${row.label}: lost at some compaction; missed ${examples}`);
				}
			}
		});
	}
});
