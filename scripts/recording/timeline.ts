/**
 * Moves a recorded session onto a plausible wall clock. A recording runs in seconds; a real session
 * has the user reading and typing between turns, the model streaming at a finite speed, and idle
 * breaks. The rewrite walks the entries in file order (which is Pi's append order) and gives each a
 * new time from a deterministic model of its kind:
 *
 * - user message: think time 25-205 s (hash of the text), or the task's scripted idle gap;
 * - assistant message: request start 40-240 ms after the previous entry; streaming time
 *   1.2 s + 22 ms per output token (+2.5 s with thinking); `durationMs` is set to it; an aborted
 *   message lasts 6.5 s (the user watched it stream, then pressed Escape);
 * - tool result: the recorded gap (the command really ran that long), at least 3 ms;
 * - compaction / branch summary: 4 s + 20 ms per summary token (a summarization call);
 * - everything else (model and thinking level changes, the system prompt entry): the recorded gap.
 *
 * Entry `timestamp` (ISO) and `message.timestamp` (ms) move together: a message keeps its recorded
 * offset before its entry (an assistant message's timestamp is its request start). Order is kept
 * strictly, so Pi's compaction checks (which compare message and entry times) behave as they did
 * while recording. The header timestamp becomes the start time and the time bits of its UUIDv7 id
 * are set to match.
 */
import { createHash } from "node:crypto";

type Json = Record<string, unknown>;

/** A scripted idle gap: the user message starting with `prompt` comes `seconds` after the previous entry. */
export interface IdleGap {
	prompt: string;
	seconds: number;
}

function unit(seed: string): number {
	return createHash("sha256").update(seed).digest().readUInt32BE(0) / 0x1_0000_0000;
}

function textOf(message: Json): string {
	const c = message.content;
	if (typeof c === "string") return c;
	if (!Array.isArray(c)) return "";
	return c
		.map((b) => (b && typeof b === "object" && typeof (b as Json).text === "string" ? (b as Json).text : ""))
		.join("");
}

function ms(iso: unknown): number {
	return new Date(String(iso)).getTime();
}

/** Rewrites the timestamps of `entries` (header first) in place; see the file comment. */
export function rewriteTimeline(entries: Json[], startIso: string, gaps: IdleGap[]): void {
	const header = entries[0];
	const start = ms(startIso);
	const recorded = entries.map((e) => ms(e.timestamp));
	header.timestamp = new Date(start).toISOString();
	if (typeof header.id === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(header.id)) {
		const hex = start.toString(16).padStart(12, "0");
		header.id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}${header.id.slice(13)}`;
	}
	let clock = start;
	for (let i = 1; i < entries.length; i++) {
		const entry = entries[i];
		const recordedGap = Math.max(3, recorded[i] - recorded[i - 1]);
		const message = entry.type === "message" ? (entry.message as Json) : undefined;
		const role = message?.role;
		let entryTime: number;
		let messageTime: number | undefined;
		if (role === "user") {
			const text = textOf(message as Json);
			const gap = gaps.find((g) => text.startsWith(g.prompt));
			const think = gap ? gap.seconds * 1000 : Math.round(25_000 + unit(`think:${i}:${text}`) * 180_000);
			entryTime = clock + think;
			messageTime = entryTime - Math.max(0, Math.min(50, recorded[i] - Number(message?.timestamp)));
		} else if (role === "assistant") {
			const m = message as Json;
			const usage = (m.usage ?? {}) as Json;
			const output = Number(usage.output ?? 0);
			const content = Array.isArray(m.content) ? (m.content as Json[]) : [];
			const thinks = content.some((b) => b.type === "thinking");
			const streaming = m.stopReason === "aborted" ? 6_500 : Math.round(1_200 + output * 22 + (thinks ? 2_500 : 0));
			messageTime = clock + 40 + Math.round(unit(`start:${i}`) * 200);
			entryTime = messageTime + streaming;
			m.durationMs = streaming;
		} else if (entry.type === "compaction" || entry.type === "branch_summary") {
			entryTime = clock + 4_000 + Math.ceil(String(entry.summary ?? "").length / 4) * 20;
		} else {
			entryTime = clock + recordedGap;
			if (message) {
				const offset = recorded[i] - Number(message.timestamp);
				messageTime = entryTime - Math.max(0, Math.min(offset, recordedGap - 1));
			}
		}
		entry.timestamp = new Date(entryTime).toISOString();
		if (message && messageTime !== undefined) message.timestamp = messageTime;
		clock = entryTime;
	}
}
