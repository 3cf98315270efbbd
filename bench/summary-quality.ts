/**
 * Summary-quality report: replays both shared sessions with planted facts, forces compactions at
 * 25, 50, 75 and 100 % (see test/eval/quality.ts), and prints, per session and fact category, how
 * many facts left live history and which share of them is in the last summary verbatim, or in the
 * summary or returned by `recall_folded search=`, plus the worst compaction, each compaction's cut,
 * examples of missed facts and timings. Run with `node bench/summary-quality.ts`.
 */
import {
	evaluateSession,
	formatCompactions,
	formatMissed,
	formatTable,
	REPLAY_DEFAULTS,
	SESSION_FILES,
	type SessionResult,
} from "../test/eval/quality.ts";

const results: SessionResult[] = [];
for (const file of SESSION_FILES) results.push(await evaluateSession(file));

console.log(
	`Summary quality: compactions at 25/50/75/100 %, window ${REPLAY_DEFAULTS.window}, fold pass every ${REPLAY_DEFAULTS.foldEvery} assistant messages\n`,
);
console.log(formatTable(results));
console.log("");
for (const result of results) console.log(formatCompactions(result));
console.log("");
const missed = formatMissed(results, 8);
console.log(missed ? `Missed facts:\n${missed}` : "Missed facts: none");
console.log("");
for (const result of results) {
	console.log(
		`${result.session}: ${result.messages} messages (${result.planted} planted facts, ${result.natural} natural), ${result.foldEvents} fold events, ${result.searches} recall_folded searches, ${Math.round(result.ms)} ms`,
	);
}
