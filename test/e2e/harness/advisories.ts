/**
 * Telling context-fold's cache advisories apart from its warnings on stderr: in headless modes both
 * go there, and a test that asserts "no warning" should not count an advisory (a cold input, recall
 * churn, the reset flag, an idle cache) that its scripted session raises by design.
 */

/** The openings of the advisory lines (src/core/cache-advice.ts ADVICE). */
const ADVISORY =
	/^context-fold: (cold input: |recall churn: |reset flag: |fold event \d+ did not reach the wire: |the prompt cache of .* is likely cold |draft kept, |cache read \d+ · )/;

/** `stderr` without its advisory lines. */
export function withoutAdvisories(stderr: string): string {
	return stderr
		.split("\n")
		.filter((line) => !ADVISORY.test(line))
		.join("\n");
}
