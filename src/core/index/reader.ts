/**
 * Reading and writing `seed-index.jsonl` lines: serialization of records and retractions, and a
 * tolerant reader that skips malformed lines and a last line cut mid-write, ignores unknown fields,
 * reads the known fields of newer versions, and reads the lines context-fold 0.5.1 wrote.
 */
import { blockCost } from "../tokens.ts";
import { isLegacyIndexKind, readLegacyLine } from "./legacy-seed-index.ts";
import {
	droppedOf,
	LISTS,
	makeSpan,
	SEED_INDEX_VERSION,
	type SeedCommand,
	type SeedError,
	type SeedFile,
	type SeedIntent,
	type SeedRecord,
	type SeedRetraction,
	type SeedSpan,
	setIf,
} from "./seed-index.ts";

/**
 * A retraction record for the compaction (or, with `target`, the fold event) numbered `seq`, written
 * at `leaf` when the record it cancels names one.
 */
export function retraction(seq: number, reason: string, target?: "fold" | "compaction", leaf?: string): SeedRetraction {
	const record: SeedRetraction = { v: SEED_INDEX_VERSION, kind: "retraction", seq, reason };
	if (target === "fold") record.target = "fold";
	if (leaf !== undefined) record.leaf = leaf;
	return record;
}

/** True when `retraction` cancels `record`: its kind and seq, and its leaf when the retraction names one. */
export function cancels(retraction: SeedRetraction, record: SeedRecord): boolean {
	const kind = retraction.target ?? "compaction";
	return (
		record.kind === kind &&
		record.seq === retraction.seq &&
		(retraction.leaf === undefined || record.leaf === retraction.leaf)
	);
}

/** One record (or retraction) as one JSON line, newline included, ready to append. */
export function serializeRecord(record: SeedRecord | SeedRetraction): string {
	return `${JSON.stringify(record)}\n`;
}

/** What parseSeedIndex read. */
export interface ParsedSeedIndex {
	/** Fold and compaction records in file order, retracted compactions removed. */
	records: SeedRecord[];
	/** Retraction records in file order. */
	retracted: SeedRetraction[];
	/** Lines that were not a readable record: malformed, truncated, unknown kind, missing fields. */
	skipped: number;
	/** Records (and retractions) read from a newer schema version, by the fields this version knows. */
	newer: number;
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
	return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function asString(value: unknown): string | undefined {
	return typeof value === "string" ? value : undefined;
}

function objects(value: unknown): Obj[] {
	return Array.isArray(value) ? value.filter(isObj) : [];
}

function readFiles(value: unknown): SeedFile[] {
	const out: SeedFile[] = [];
	for (const entry of objects(value)) {
		const path = asString(entry.path);
		if (path === undefined) continue;
		const tools = Array.isArray(entry.tools) ? entry.tools.filter((t): t is string => typeof t === "string") : [];
		out.push({ path, tools, turn: num(entry.turn) ?? 0 });
	}
	return out;
}

function readCommands(value: unknown): SeedCommand[] {
	const out: SeedCommand[] = [];
	for (const entry of objects(value)) {
		const command = asString(entry.command);
		if (command === undefined) continue;
		const item: SeedCommand = { command, turn: num(entry.turn) ?? 0 };
		setIf(item, "code", asString(entry.code));
		if (typeof entry.error === "boolean") item.error = entry.error;
		out.push(item);
	}
	return out;
}

function readErrors(value: unknown): SeedError[] {
	const out: SeedError[] = [];
	for (const entry of objects(value)) {
		const line = asString(entry.line);
		if (line === undefined) continue;
		const item: SeedError = { line, turn: num(entry.turn) ?? 0 };
		setIf(item, "code", asString(entry.code));
		setIf(item, "tool", asString(entry.tool));
		out.push(item);
	}
	return out;
}

function readIntents(value: unknown): SeedIntent[] {
	const out: SeedIntent[] = [];
	for (const entry of objects(value)) {
		const t = asString(entry.text);
		if (t !== undefined) out.push({ turn: num(entry.turn) ?? 0, text: t });
	}
	return out;
}

function readSpans(value: unknown): SeedSpan[] {
	const out: SeedSpan[] = [];
	for (const entry of objects(value)) {
		const id = asString(entry.id);
		const code = asString(entry.code);
		if (id === undefined || code === undefined) continue;
		const chars = num(entry.chars) ?? 0;
		out.push(
			makeSpan({
				id,
				code,
				kind: asString(entry.kind) ?? "other",
				tool: asString(entry.tool),
				turn: num(entry.turn) ?? 0,
				chars,
				tokens: num(entry.tokens) ?? blockCost(chars),
				sha256: asString(entry.sha256),
			}),
		);
	}
	return out;
}

function readDropped(value: unknown): Record<string, number> | undefined {
	if (!isObj(value)) return undefined;
	const counts: Record<string, number> = {};
	for (const name of LISTS) {
		const n = num(value[name]);
		if (n !== undefined && n > 0) counts[name] = n;
	}
	return droppedOf(counts);
}

/**
 * Reads a seed-index JSONL text without throwing. Blank lines are ignored; a line that is not a
 * JSON object with a positive integer `v`, a known `kind` and a numeric `seq` (a malformed line, a
 * last line cut mid-write) is counted in `skipped`. Unknown fields are ignored; a record with a
 * newer `v` is read by the fields this version knows and counted in `newer`. A retraction removes
 * every record of its target kind (compaction unless it says fold) and `seq` that precedes it, of
 * its `leaf` when it names one (see cancels).
 * Lines context-fold 0.5.1 wrote are read too (see legacy-seed-index.ts) by 0.5.1's own rules:
 * among them the latest record per `seq` wins, and a `fold-retract` voids the one before it.
 */
export function parseSeedIndex(input: string): ParsedSeedIndex {
	const records: SeedRecord[] = [];
	const retracted: SeedRetraction[] = [];
	const legacy = new Map<number, SeedRecord>();
	const dropLegacy = (seq: number): void => {
		const earlier = legacy.get(seq);
		if (earlier) records.splice(records.indexOf(earlier), 1);
		legacy.delete(seq);
	};
	let skipped = 0;
	let newer = 0;
	const lines = input.replace(/^\uFEFF/, "").split("\n");
	for (const raw of lines) {
		const line = raw.trim();
		if (!line) continue;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch {
			skipped++;
			continue;
		}
		if (isObj(value) && isLegacyIndexKind(value.kind)) {
			const read = readLegacyLine(value);
			if (!read) skipped++;
			else {
				dropLegacy(read.kind === "retract" ? read.seq : read.record.seq);
				if (read.kind === "record") {
					legacy.set(read.record.seq, read.record);
					records.push(read.record);
				}
			}
			continue;
		}
		const v = isObj(value) ? num(value.v) : undefined;
		const seq = isObj(value) ? num(value.seq) : undefined;
		if (!isObj(value) || v === undefined || !Number.isInteger(v) || v < 1 || seq === undefined) {
			skipped++;
			continue;
		}
		const kind = value.kind;
		if (kind === "retraction") {
			const item: SeedRetraction = { v, kind, seq, reason: asString(value.reason) ?? "" };
			if (value.target === "fold") item.target = "fold";
			setIf(item, "leaf", asString(value.leaf));
			retracted.push(item);
			for (let i = records.length - 1; i >= 0; i--) if (cancels(item, records[i])) records.splice(i, 1);
		} else if (kind === "fold" || kind === "compaction") {
			const record: SeedRecord = {
				v,
				kind,
				seq,
				files: readFiles(value.files),
				commands: readCommands(value.commands),
				errors: readErrors(value.errors),
				identifiers: Array.isArray(value.identifiers)
					? value.identifiers.filter((i): i is string => typeof i === "string")
					: [],
				intents: readIntents(value.intents),
				spans: readSpans(value.spans),
			};
			setIf(record, "dropped", readDropped(value.dropped));
			setIf(record, "leaf", asString(value.leaf));
			records.push(record);
		} else {
			skipped++;
			continue;
		}
		if (v > SEED_INDEX_VERSION) newer++;
	}
	return { records, retracted, skipped, newer };
}
