/**
 * The seed index: one small, deterministic record per fold event or compaction, holding the facts a
 * later reader (the compaction summary, a handoff seed) needs after the blocks left live history:
 * files touched, commands run, verbatim error lines, exact identifiers, user intents and the spans
 * folded. Records are plain JSON, one per line in `seed-index.jsonl`. This module holds the schema
 * (types and caps) and the list helpers; `extract.ts` makes records, `merge.ts` unions them,
 * `reader.ts` reads and writes the lines, and `branch.ts` picks the ones of a session branch.
 *
 * Schema (version 1), one JSON object per line:
 * - `{ v, kind: "fold" | "compaction", seq, files, commands, errors, identifiers, intents, spans, dropped?, leaf? }`
 *   (see SeedRecord for each field);
 * - `{ v, kind: "retraction", seq, reason, target? }`: cancels the record of kind `target` (default
 *   "compaction") and the same `seq`
 *   written before it (a compaction Pi reported as failed).
 * Writers only ever append. Readers ignore fields they do not know and read the known fields of
 * records with a higher `v`.
 */
/** Schema version written by this module. */
export const SEED_INDEX_VERSION = 1;

/** A file a file tool touched: the path exactly as the tool received it. */
export interface SeedFile {
	path: string;
	/** Names of the tools that touched it, sorted, unique. */
	tools: string[];
	/** Turn of the first call that named it. */
	turn: number;
}

/** A shell command: a `bash` tool call, or a user `!` command (bashExecution). */
export interface SeedCommand {
	/** The command verbatim, or its head followed by a clip marker when very long. */
	command: string;
	turn: number;
	/** Fold code of the block holding its output, when that block can carry a fold record. */
	code?: string;
	/** The result was an error (tool result `isError`, or a non-zero exit of a user command). */
	error?: boolean;
}

/** One verbatim error line of a tool result or a user command's output. */
export interface SeedError {
	/** The line verbatim (clipped with `…` only when very long). */
	line: string;
	turn: number;
	/** Fold code of the block it came from, when that block can carry a fold record. */
	code?: string;
	/** Tool whose result held it; absent for a user `!` command. */
	tool?: string;
}

/** The first non-empty line of a user message. */
export interface SeedIntent {
	turn: number;
	text: string;
}

/** A span (block) covered by a fold record. */
export interface SeedSpan {
	id: string;
	code: string;
	kind: string;
	tool?: string;
	turn: number;
	/** Characters of the block text at fold time. */
	chars: number;
	tokens: number;
	sha256?: string;
}

/** One seed-index record: what a fold event or a compaction took out of live history. */
export interface SeedRecord {
	/** Schema version the writer used (SEED_INDEX_VERSION when written by this module). */
	v: number;
	kind: "fold" | "compaction";
	/** The fold event's layer sequence number, or the compaction's sequence number. */
	seq: number;
	files: SeedFile[];
	commands: SeedCommand[];
	errors: SeedError[];
	/** Exact identifiers (hashes, UUIDs, versions, long numbers, code symbols), first occurrence first. */
	identifiers: string[];
	intents: SeedIntent[];
	spans: SeedSpan[];
	/** How many entries each capped list left out, by list name; absent when nothing was left out. */
	dropped?: Record<string, number>;
	/**
	 * The session entry that was the leaf when the record was written: the record's facts come from
	 * the path to it, so it belongs to every branch through that entry. Absent in older records.
	 */
	leaf?: string;
}

/**
 * A retraction: cancels the records of kind `target` (absent: "compaction") with the same `seq`
 * written before it: a compaction Pi reported as failed, or a fold event rejected after its record
 * was written.
 */
export interface SeedRetraction {
	v: number;
	kind: "retraction";
	seq: number;
	reason: string;
	target?: "fold" | "compaction";
	/**
	 * The leaf of the record it cancels: sequence numbers restart on each branch, so only the record
	 * of that seq written at that leaf is cancelled (absent: every record of its kind and seq before it).
	 */
	leaf?: string;
}

/** Bounds that keep a record small whatever the session's length. */
export interface SeedCaps {
	files: number;
	commands: number;
	/** A longer command keeps this many characters and a clip marker. */
	commandChars: number;
	errors: number;
	/** At most this many error lines per block, so one noisy output cannot fill the list. */
	errorsPerBlock: number;
	errorChars: number;
	identifiers: number;
	/** Longer candidate identifiers are noise (encoded blobs), never kept. */
	identifierChars: number;
	intents: number;
	intentChars: number;
	spans: number;
}

/** The shipped caps. */
export const SEED_CAPS: Readonly<SeedCaps> = Object.freeze({
	files: 200,
	commands: 200,
	commandChars: 500,
	errors: 100,
	errorsPerBlock: 20,
	errorChars: 400,
	identifiers: 300,
	identifierChars: 96,
	intents: 100,
	intentChars: 300,
	spans: 500,
});

/** Order of the `dropped` keys, fixed so the JSON bytes are deterministic. */
export const LISTS = ["files", "commands", "errors", "identifiers", "intents", "spans"] as const;
/** One of a record's capped lists. */
export type ListName = (typeof LISTS)[number];

/**
 * Keeps at most `cap` items: the first half and the last half, since a session's opening states
 * its task and its end holds the live state. `dropped` is how many were left out.
 */
export function keepEnds<T>(items: T[], cap: number): { kept: T[]; dropped: number } {
	const limit = Math.max(0, Math.floor(cap));
	if (items.length <= limit) return { kept: items, dropped: 0 };
	const head = Math.ceil(limit / 2);
	const tail = limit - head;
	return {
		kept: items.slice(0, head).concat(tail > 0 ? items.slice(items.length - tail) : []),
		dropped: items.length - limit,
	};
}

/** Sets an optional field only when it has a value, so absent fields stay absent in the JSON. */
export function setIf<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
	if (value !== undefined) target[key] = value;
}

/** The non-zero counts of left-out entries, keyed in LISTS order; undefined when none. */
export function droppedOf(counts: Partial<Record<string, number>>): Record<string, number> | undefined {
	const out: Record<string, number> = {};
	for (const name of LISTS) {
		const n = counts[name] ?? 0;
		if (n > 0) out[name] = n;
	}
	return Object.keys(out).length > 0 ? out : undefined;
}

/** A span with its keys in schema order and absent optional fields left out (stable JSON bytes). */
export function makeSpan(f: SeedSpan): SeedSpan {
	return {
		id: f.id,
		code: f.code,
		kind: f.kind,
		...(f.tool === undefined ? {} : { tool: f.tool }),
		turn: f.turn,
		chars: f.chars,
		tokens: f.tokens,
		...(f.sha256 === undefined ? {} : { sha256: f.sha256 }),
	};
}
