/**
 * What Pi's bash tool adds to a command's output, read from the text alone: the notice that ends a
 * truncated result (`[Showing lines 3448-5000 of 5000. Full output: …]`), which says where the
 * session's copy sits in the bash tool's full output file, and the status line it appends when a
 * command fails or stops (`Command exited with code 2`). A digest and a recall both number such a
 * copy's lines as in that file, so that the line a digest names is the line a recall serves.
 */

/** Where a truncated bash result's session copy sits in the bash tool's full output file. */
export interface OutputFilePlace {
	/** The file's lines the copy holds, 1-based, inclusive, and how many the file has. */
	first: number;
	last: number;
	total: number;
	/** The copy's text of those lines (everything before the notice). */
	held: string;
	/** The copy's lines after them: Pi's notice, then its status line for a failed or stopped command. */
	trailer: string[];
	/** Pi's status line after the notice, when there is one. */
	status?: string;
}

const NOTICE = /\n\n\[Showing lines (\d+)-(\d+) of (\d+)[^\n\]]*\. Full output: [^\n]+\](?:\n\n(Command [^\n]*))?$/;

/**
 * Where a bash result's `text` sits in the bash tool's full output file, from the notice Pi's bash
 * tool ends a truncated result with; undefined for a text without one, or whose notice does not
 * match the lines before it.
 */
export function outputFilePlace(text: string): OutputFilePlace | undefined {
	const m = NOTICE.exec(text);
	if (!m) return undefined;
	const [first, last, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
	const held = text.slice(0, m.index);
	if (!(first >= 1 && last >= first && last <= total && held.split("\n").length === last - first + 1))
		return undefined;
	const trailer = text
		.slice(m.index + 2)
		.split("\n")
		.filter((line) => line.length > 0);
	return m[4] ? { first, last, total, held, trailer, status: m[4] } : { first, last, total, held, trailer };
}

const STATUS =
	/^Command (?:exited with code -?\d+|aborted|timed out after \d+ seconds\b.*|terminated without an exit code)$/;

/**
 * True for a status line Pi's bash tool appends to a failed or stopped command's output: it says
 * that the command failed, never why.
 */
export function isBashStatusLine(line: string): boolean {
	return STATUS.test(line);
}
