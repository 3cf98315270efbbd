/**
 * The adapter's clock for cache decisions: wall time, shifted by `CONTEXTFOLD_TEST_CLOCK_OFFSET_MS`
 * when that is set to an integer. The shift exists so end-to-end tests can stand a resumed session
 * after an idle gap without waiting for it; nothing else reads it.
 */

/** The environment variable that shifts the clock (tests only). */
export const CLOCK_OFFSET_ENV = "CONTEXTFOLD_TEST_CLOCK_OFFSET_MS";

/** A clock reading epoch milliseconds, shifted by the offset named in `env` (0 when unset or not an integer). */
export function clockFrom(env: Readonly<Record<string, string | undefined>>): () => number {
	const raw = env[CLOCK_OFFSET_ENV];
	const offset = raw !== undefined && /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : 0;
	return () => Date.now() + offset;
}
