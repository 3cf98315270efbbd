/**
 * Merging seed-index records into one summary: every list unioned, deduplicated, put in turn order
 * (identifiers, which have no turn, in order of first appearance), and capped again, deterministically.
 */
import {
	droppedOf,
	keepEnds,
	LISTS,
	SEED_CAPS,
	type SeedCaps,
	type SeedCommand,
	type SeedError,
	type SeedFile,
	type SeedIntent,
	type SeedRecord,
	type SeedSpan,
	setIf,
} from "./seed-index.ts";

/**
 * Several records merged: every list unioned, deduplicated, in turn order (see summarizeIndex);
 * identifiers in order of first appearance.
 */
export interface SeedSummary {
	/** The records merged, in the order given. */
	sources: { kind: SeedRecord["kind"]; seq: number }[];
	files: SeedFile[];
	commands: SeedCommand[];
	errors: SeedError[];
	identifiers: string[];
	intents: SeedIntent[];
	spans: SeedSpan[];
	/** Left out by the records' own caps plus the merge's caps; absent when nothing was. */
	dropped?: Record<string, number>;
	/**
	 * The lists whose `dropped` count holds what the records' own caps left out: records count their
	 * drops, not which values, and several records cover the same blocks (a fold event's, a
	 * compaction's), so such a count is at most what was left out, not exactly it. Absent when none.
	 */
	droppedAtMost?: string[];
}

/**
 * Unions several records (in the order given, e.g. the index as read) into one summary: files by
 * path (earliest turn kept, tools merged), commands by command, turn and code, error lines by text
 * (at their newest occurrence, so that an error that came back reads as recent), identifiers by
 * value, intents by turn and text, spans by id. Every list but the identifiers (in order of first
 * appearance) is put in turn order, ties as they first appeared, turn 0 (0.5.1's unknown) first: the
 * first records need not start at the session's start (an index lost mid-session holds the later
 * turns alone, and a handoff merges the whole branch after them). Then each list is capped again
 * like a record. Deterministic.
 */
export function summarizeIndex(records: readonly SeedRecord[], caps: Partial<SeedCaps> = {}): SeedSummary {
	const limits: SeedCaps = { ...SEED_CAPS, ...caps };
	const files = new Map<string, { turn: number; tools: Set<string> }>();
	const commands = new Map<string, SeedCommand>();
	const errors = new Map<string, SeedError>();
	const identifiers = new Set<string>();
	const intents = new Map<string, SeedIntent>();
	const spans = new Map<string, SeedSpan>();
	const dropped: Record<string, number> = {};
	for (const record of records) {
		for (const file of record.files) {
			const known = files.get(file.path);
			if (!known) files.set(file.path, { turn: file.turn, tools: new Set(file.tools) });
			else {
				for (const tool of file.tools) known.tools.add(tool);
				// A known turn outranks 0.5.1's unknown one (0); an earlier one, a later one.
				if (file.turn > 0 && (known.turn === 0 || file.turn < known.turn)) known.turn = file.turn;
			}
		}
		for (const command of record.commands) {
			const key = `${command.command}\u0000${command.turn}\u0000${command.code ?? ""}`;
			if (!commands.has(key)) commands.set(key, command);
		}
		// An error line seen again is listed at its newest occurrence, by turn: a fold event's record
		// may hold a later turn than a compaction's appended after it.
		for (const error of record.errors) {
			const known = errors.get(error.line);
			if (known && known.turn > error.turn) continue;
			errors.delete(error.line);
			errors.set(error.line, error);
		}
		for (const identifier of record.identifiers) identifiers.add(identifier);
		for (const intent of record.intents) {
			const key = `${intent.turn}\u0000${intent.text}`;
			if (!intents.has(key)) intents.set(key, intent);
		}
		for (const span of record.spans) if (!spans.has(span.id)) spans.set(span.id, span);
		for (const name of LISTS) dropped[name] = (dropped[name] ?? 0) + (record.dropped?.[name] ?? 0);
	}
	const fileList = [...files.entries()].map(([path, f]) => ({ path, tools: [...f.tools].sort(), turn: f.turn }));
	const capped = {
		files: keepEnds(byTurn(fileList), limits.files),
		commands: keepEnds(byTurn([...commands.values()]), limits.commands),
		errors: keepEnds(byTurn([...errors.values()]), limits.errors),
		identifiers: keepEnds([...identifiers], limits.identifiers),
		intents: keepEnds(byTurn([...intents.values()]), limits.intents),
		spans: keepEnds(byTurn([...spans.values()]), limits.spans),
	};
	for (const name of LISTS) dropped[name] += capped[name].dropped;
	const summary: SeedSummary = {
		sources: records.map((r) => ({ kind: r.kind, seq: r.seq })),
		files: capped.files.kept,
		commands: capped.commands.kept,
		errors: capped.errors.kept,
		identifiers: capped.identifiers.kept,
		intents: capped.intents.kept,
		spans: capped.spans.kept,
	};
	setIf(summary, "dropped", droppedOf(dropped));
	const atMost = LISTS.filter((name) => records.some((record) => (record.dropped?.[name] ?? 0) > 0));
	if (atMost.length > 0) summary.droppedAtMost = atMost;
	return summary;
}

/** `items` in turn order, those of one turn as given (the sort is stable). */
function byTurn<T extends { turn: number }>(items: T[]): T[] {
	return items.sort((a, b) => a.turn - b.turn);
}
