/**
 * Summary-quality evaluation over every recorded session of every available corpus (see quality.ts
 * for the method): compactions forced at 25, 50, 75 and 100 % of each session; every planted or
 * natural fact that left live history must be in the summary verbatim or returned by
 * `recall_folded search=`. The expectation is the same for every session: each row 100 %
 * recoverable (the floor measured on the shared sessions, where every row reached 100 % once
 * compaction recorded every block leaving history and search ranked exact-case hits first), and
 * planted error lines and file paths found at every compaction (nothing lost). The fold passes must
 * commit fold events in every session whose live context outgrew both the window (so the policy is
 * past its budget and folds what it can) and the default hot tail (so something lies outside what it
 * keeps raw); a shorter session needs none, and its facts leave history through the compactions
 * alone. Sessions whose shape is known (FULL_SHAPE, by name) must also yield every kind of fact and
 * lose all their planted facts from history. A last test prints which sessions each check ran on,
 * and fails unless every project session took every check (a fresh clone has no other corpus). Run
 * `npm run bench:quality` for the full report.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_ECONOMIC } from "../../src/core/contract.ts";
import { SUMMARY_LIMITS } from "../../src/core/summary.ts";
import { corpusNote, listSessions, loadSessions, type Session } from "../corpus/corpora.ts";
import {
	CHECKPOINTS,
	evaluateSession,
	formatCompactions,
	formatMissed,
	formatTable,
	harvestFacts,
	PLANT_COUNT,
	ROWS,
	rowsOf,
} from "./quality.ts";

/** Least share (in the last summary, or recoverable through recall_folded search) of every row, every session. */
const FLOOR = 1;

/** Rows that must be whole at every compaction. */
const NOTHING_LOST = new Set(["planted error lines", "planted file paths"]);

const PLANTED: Record<string, number> = {
	"planted error lines": PLANT_COUNT.error,
	"planted file paths": PLANT_COUNT.path,
	"planted identifiers": PLANT_COUNT.identifier,
	"planted user constraints": PLANT_COUNT.intent,
};

/**
 * Sessions long enough that all planted facts leave history by the last compaction and every natural
 * row has facts, by name (`corpus/file`): the project's own, so a fresh clone runs these checks too,
 * and those of the shared folders known to have that shape. Any other session is checked without
 * these two expectations.
 */
const FULL_SHAPE = new Set([
	"project/debug-branchy.jsonl",
	"project/refactor-long.jsonl",
	"shared/large-session.jsonl",
	"shared/accordion-sample.jsonl",
	"more/pimono-2025-12-17-skills.jsonl",
]);

/**
 * Error lines read by hand from each session (verbatim, as its tools printed them), by name: the
 * natural error lines the eval measures are those the product's own lexicon finds, so these hold
 * that harvest to an oracle apart from it. A lexicon that stopped knowing them would otherwise shrink
 * the row it is measured by and still pass.
 */
const KNOWN_ERROR_LINES: Readonly<Record<string, readonly string[]>> = {
	"project/debug-branchy.jsonl": ["RangeError: Invalid array length", "TypeError: not a finite value: null"],
	"project/refactor-long.jsonl": ["RangeError: invalid month: 2024-13"],
	"more/gjc-youtube-transcripts.jsonl": [
		"Failed: HTTP_429",
		"ModuleNotFoundError: No module named 'youtube_transcript_api'",
	],
};

describe("summary quality over the recorded sessions", () => {
	const sessions = loadSessions();
	/** The sessions whose live context outgrew the window and the hot tail, so fold events were required. */
	const folding: Session[] = [];
	/** The sessions evaluated, as each evaluation starts. */
	const evaluated: string[] = [];
	for (const session of sessions) {
		it(`${session.name}: facts that left history stay findable through the summary or recall_folded search`, async (t) => {
			evaluated.push(session.path);
			const harvested = new Set(
				harvestFacts(session.messages)
					.filter((f) => f.category === "error")
					.map((f) => f.text.trim()),
			);
			for (const line of KNOWN_ERROR_LINES[session.name] ?? [])
				assert.ok(harvested.has(line), `a known error line is measured: ${line}`);
			const result = await evaluateSession(session);
			t.diagnostic(`window ${result.window}`);
			for (const line of formatTable([result]).split("\n")) t.diagnostic(line);
			for (const line of formatCompactions(result).split("\n")) t.diagnostic(line);
			const missed = formatMissed([result], 3);
			if (missed) for (const line of missed.split("\n")) t.diagnostic(line);
			t.diagnostic(
				`${Math.round(result.ms)} ms, ${result.searches} recall_folded searches, ${result.foldEvents} fold events, live context at most ${result.peakLive} tokens`,
			);

			assert.equal(result.compactions.length, CHECKPOINTS.length, "every checkpoint compacted");
			for (const c of result.compactions) {
				assert.ok(
					c.summary.length <= SUMMARY_LIMITS.total,
					`summary of ${c.summary.length} chars exceeds the bound`,
				);
			}
			if (result.peakLive > Math.max(result.window, DEFAULT_ECONOMIC.hotTail)) {
				folding.push(session);
				assert.ok(result.foldEvents > 0, "the fold passes committed fold events between compactions");
			}
			for (const control of result.controls) {
				assert.ok(!control.recoverable, `a fact that never occurred was reported found: ${control.fact.text}`);
			}

			const rows = rowsOf(result);
			assert.deepEqual(
				rows.map((r) => r.label),
				ROWS.map((r) => r.label),
			);
			const plantedLeft = rows.filter((r) => PLANTED[r.label] !== undefined).reduce((n, r) => n + r.count, 0);
			assert.ok(plantedLeft > 0, "no planted fact left history: nothing was measured");
			const fullShape = FULL_SHAPE.has(session.name);
			for (const row of rows) {
				const planted = PLANTED[row.label];
				if (fullShape) {
					if (planted !== undefined)
						assert.equal(row.count, planted, `${row.label}: all planted facts left history`);
					else assert.ok(row.count > 0, `${row.label}: the session yields facts of this kind`);
				}
				const examples = row.missed
					.slice(0, 3)
					.map((f) => JSON.stringify(f.key.slice(0, 100)))
					.join(", ");
				assert.ok(
					row.recoverable >= FLOOR,
					`${row.label}: ${(row.recoverable * 100).toFixed(1)} % recoverable, floor ${FLOOR * 100} %; missed ${examples}`,
				);
				if (NOTHING_LOST.has(row.label)) {
					assert.equal(row.worst, 1, `${row.label}: lost at some compaction; missed ${examples}`);
				}
			}
		});
	}
	it("covers the project's sessions with every check, the others where present", (t) => {
		const full = sessions.filter((s) => FULL_SHAPE.has(s.name));
		t.diagnostic(
			corpusNote([
				["recoverable, bounded", sessions],
				["fold events", folding],
				["full shape", full],
			]),
		);
		assert.deepEqual(
			evaluated,
			listSessions().map((s) => s.path),
			"every session of every corpus present is evaluated",
		);
		const project = sessions.filter((s) => s.corpus === "project");
		assert.ok(project.length > 0, "test/fixtures/sessions holds no session");
		for (const s of project) {
			assert.ok(full.includes(s), `${s.name} is not of the full shape`);
			assert.ok(folding.includes(s), `${s.name} required no fold event`);
		}
	});
});

describe("the facts a session holds", () => {
	it("come from what the model saw: an aborted or failed reply gives none (no request carries it)", () => {
		const call = (id: string, path: string, stopReason: string) => ({
			role: "assistant",
			content: [{ type: "toolCall", id, name: "read", arguments: { path } }],
			stopReason,
		});
		const facts = harvestFacts([
			{ role: "user", content: "look at the config" },
			call("c1", "/srv/app/aborted_reply.yaml", "aborted"),
			call("c2", "/srv/app/failed_reply.yaml", "error"),
			call("c3", "/srv/app/config.yaml", "toolUse"),
		]);
		const paths = facts.filter((f) => f.category === "path").map((f) => f.text);
		assert.deepEqual(paths, ["/srv/app/config.yaml"]);
	});
});
