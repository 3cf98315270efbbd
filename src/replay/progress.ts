/**
 * The replay's progress line: on a terminal, one line of stderr rewritten in place (a carriage return,
 * the status cut to the terminal's width in columns so it never wraps, a wide character counting two,
 * the rest of the line erased), and erased
 * once the replay is over so that only the report stays; on anything that is not a terminal (a file, a
 * pipe, a test), or when the user asked for quiet, nothing at all.
 */

import { clipColumns } from "../core/block-line.ts";

/** What the progress line writes to: stderr, or a stand-in with the same fields. */
export interface StatusStream {
	isTTY?: boolean;
	/** The terminal's width in characters, where known (0 or absent: unknown, taken as 80). */
	columns?: number;
	write(text: string): unknown;
}

/** Erases the rest of the line from the cursor (ANSI "erase in line"). */
const ERASE = "\x1b[K";

/** One status line that updates in place on a terminal, and is silent elsewhere. */
export class ProgressLine {
	private readonly stream: StatusStream;
	private readonly live: boolean;
	private shown = false;

	constructor(stream: StatusStream, quiet = false) {
		this.stream = stream;
		this.live = !quiet && stream.isTTY === true;
	}

	/** Shows `status` in place of the previous one (cut to the terminal's width in columns). */
	update(status: string): void {
		if (!this.live) return;
		const width = Math.max(20, (this.stream.columns || 80) - 1);
		const shown = clipColumns(status, width);
		this.stream.write(`\r${shown}${ERASE}`);
		this.shown = true;
	}

	/** Erases the line, leaving the cursor at its start (before the report, or an error). */
	clear(): void {
		if (!this.shown) return;
		this.stream.write(`\r${ERASE}`);
		this.shown = false;
	}
}
