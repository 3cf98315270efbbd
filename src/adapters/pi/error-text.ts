/**
 * How context-fold words a failure it announces or answers with: the message of an Error, or any
 * other thrown value as a string.
 */

/** A short message for any thrown value. */
export function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
