/**
 * Summary-quality report: replays every recorded session of every available corpus with planted
 * facts, forces compactions at 25, 50, 75 and 100 % (see test/eval/quality.ts), and prints, per
 * session and fact category, how many facts left live history and which share of them is in the
 * last summary verbatim, or in the summary or returned by `recall_folded search=`, plus the worst
 * compaction, each compaction's cut, examples of missed facts and timings. Run with
 * `npm run bench:quality`.
 */
import { corporaLine, loadSessions } from "../test/corpus/corpora.ts";
import {
	evaluateSession,
	formatCompactions,
	formatMissed,
	formatTable,
	REPLAY_DEFAULTS,
	type SessionResult,
} from "../test/eval/quality.ts";

console.log(corporaLine());
const results: SessionResult[] = [];
for (const session of loadSessions()) results.push(await evaluateSession(session));

console.log(
	`Summary quality: compactions at 25/50/75/100 %, window a quarter of the session (at most ${REPLAY_DEFAULTS.window}), fold pass every ${REPLAY_DEFAULTS.foldEvery} assistant messages\n`,
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
		`${result.session}: ${result.messages} messages, window ${result.window} (${result.planted} planted facts, ${result.natural} natural), ${result.foldEvents} fold events, ${result.searches} recall_folded searches, ${Math.round(result.ms)} ms`,
	);
}
