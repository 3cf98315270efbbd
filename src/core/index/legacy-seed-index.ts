/**
 * The seed-index lines context-fold 0.5.1 wrote to the same `seed-index.jsonl`: `fold-index`
 * records (v2 from 0.4.0 on, v1 before) and `fold-retract` lines. Each record is read into a
 * SeedRecord of this version, its span ids mapped with fromLegacyId, so the compaction summary and
 * the handoff seed use it like one of ours. 0.5.1 kept no per-item turns for files, commands and
 * error lines: they read with turn 0 (unknown). UTF-8 byte extents stand in for span characters.
 */
import { fromLegacyId } from "../block.ts";
import { blockCost } from "../tokens.ts";
import type { SeedCommand, SeedError, SeedFile, SeedIntent, SeedRecord, SeedSpan } from "./seed-index.ts";

type Obj = Record<string, unknown>;

/** What one 0.5.1 line says: a record, a retraction of every earlier record with its `seq`, or nothing readable. */
export type LegacyLine = { kind: "record"; record: SeedRecord } | { kind: "retract"; seq: number } | null;

/** True for the line kinds 0.5.1 wrote (`fold-index`, `fold-retract`). */
export function isLegacyIndexKind(kind: unknown): boolean {
	return kind === "fold-index" || kind === "fold-retract";
}

function isObj(value: unknown): value is Obj {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
	return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
	return typeof value === "string" ? value : undefined;
}

function list(value: unknown): unknown[] {
	return Array.isArray(value) ? value : [];
}

/** A 0.5.1 list entry: a string, or (v3, unreleased) an object holding it under `key`. */
function entryText(item: unknown, key: string): { text: string; turn: number } | undefined {
	if (typeof item === "string") return { text: item, turn: 0 };
	if (!isObj(item)) return undefined;
	const text = str(item[key]);
	return text === undefined ? undefined : { text, turn: num(item.turn) ?? 0 };
}

/** 0.5.1 named a span by its tool, or by the block kind for assistant thinking and text. */
function spanKind(tool: string | undefined): { kind: string; tool?: string } {
	if (tool === "thinking" || tool === "text") return { kind: tool };
	return { kind: "toolResult", tool: tool ?? "tool" };
}

function readSpan(item: unknown): SeedSpan | undefined {
	if (!isObj(item)) return undefined;
	const blockId = str(item.blockId);
	const code = str(item.code)?.toLowerCase();
	if (blockId === undefined || code === undefined) return undefined;
	const log = isObj(item.log) ? item.log : {};
	const chars = Math.max(0, num(log.bytes) ?? (num(log.byteEnd) ?? 0) - (num(log.byteStart) ?? 0));
	const { kind, tool } = spanKind(str(item.tool));
	const sha256 = str(item.sha256);
	return {
		id: fromLegacyId(blockId),
		code,
		kind,
		...(tool === undefined ? {} : { tool }),
		turn: num(item.turn) ?? 0,
		chars,
		tokens: blockCost(chars),
		...(sha256 === undefined ? {} : { sha256 }),
	};
}

function defined<T>(items: (T | undefined)[]): T[] {
	return items.filter((item): item is T => item !== undefined);
}

/**
 * Reads one parsed 0.5.1 line. A `fold-index` line needs a numeric `seq` and a `spans` array (as
 * 0.5.1's own reader required); `v` is ignored. `trigger: "compact"` makes a compaction record,
 * any other trigger (`threshold`, `cap`, v1's `consolidation`) a fold record. Null when unreadable.
 */
export function readLegacyLine(value: Obj): LegacyLine {
	const seq = num(value.seq);
	if (seq === undefined) return null;
	if (value.kind === "fold-retract") return { kind: "retract", seq };
	if (value.kind !== "fold-index" || !Array.isArray(value.spans)) return null;
	const files: SeedFile[] = defined(
		list(value.files).map((f) => (typeof f === "string" ? { path: f, tools: [], turn: 0 } : undefined)),
	);
	const commands: SeedCommand[] = defined(
		list(value.commands).map((c) => {
			const e = entryText(c, "command");
			return e && { command: e.text, turn: e.turn };
		}),
	);
	const errors: SeedError[] = defined(
		list(value.errors).map((c) => {
			const e = entryText(c, "line");
			return e && { line: e.text, turn: e.turn };
		}),
	);
	const intents: SeedIntent[] = defined(
		list(value.userMessages).map((u) => {
			if (!isObj(u)) return undefined;
			const text = str(u.firstLine);
			return text === undefined ? undefined : { turn: num(u.turn) ?? 0, text };
		}),
	);
	return {
		kind: "record",
		record: {
			v: num(value.v) ?? 0,
			kind: value.trigger === "compact" ? "compaction" : "fold",
			seq,
			files,
			commands,
			errors,
			identifiers: list(value.identifiers).filter((i): i is string => typeof i === "string"),
			intents,
			spans: defined(value.spans.map(readSpan)),
		},
	};
}
