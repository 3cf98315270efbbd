/**
 * An idle gap without waiting for it: every time a session file records (the header's, each entry's,
 * each message's) moves back by the gap, so the next `pi` resuming it, and context-fold inside that
 * `pi`, read the last response as that long past on the wall clock. The shipped extension reads no
 * test clock; this is how end-to-end tests stand a session after a pause.
 */
import { readFile, writeFile } from "node:fs/promises";

/** Moves every recorded time in the session file `file` back by `ms`; lines that are not JSON stay as they are. */
export async function ageSession(file: string, ms: number): Promise<void> {
	const lines = (await readFile(file, "utf8")).split("\n").map((line) => {
		if (!line.trim()) return line;
		let record: { timestamp?: unknown; message?: { timestamp?: unknown } };
		try {
			record = JSON.parse(line);
		} catch {
			return line;
		}
		record.timestamp = earlier(record.timestamp, ms);
		if (record.message && typeof record.message === "object")
			record.message.timestamp = earlier(record.message.timestamp, ms);
		return JSON.stringify(record);
	});
	await writeFile(file, lines.join("\n"));
}

/** A time (epoch ms or an ISO string) `ms` earlier; anything else unchanged. */
function earlier(time: unknown, ms: number): unknown {
	if (typeof time === "number") return time - ms;
	if (typeof time === "string" && !Number.isNaN(Date.parse(time)))
		return new Date(Date.parse(time) - ms).toISOString();
	return time;
}
