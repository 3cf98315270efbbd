/**
 * Event-sourced fold state. Every fold event, unfold decision and compaction-time record is a
 * `contextfold.fold` custom entry in Pi's session; the registry is rebuilt from the current
 * branch's entries (context-fold 0.5.1's included) on session start and tree navigation.
 */
import type { FoldOp } from "../../core/apply.ts";
import { type FoldRecord, FoldRegistry } from "../../core/fold-registry.ts";
import { isLegacyEntry, legacyState, readLegacyEntry, replayLegacy } from "./legacy-entries.ts";

/** customType of every entry this extension appends. */
export const ENTRY_TYPE = "contextfold.fold";

/** Version of the entry payloads written now. */
export const ENTRY_VERSION = 1;

/** The payloads of `contextfold.fold` entries. */
export type FoldEntry =
	| { v: number; kind: "records"; seq: number; records: FoldRecord[] }
	| { v: number; kind: "layer"; seq: number; ops: FoldOp[] }
	| { v: number; kind: "unfold"; ids: string[] };

interface EntryLike {
	type?: unknown;
	customType?: unknown;
	data?: unknown;
}

function isRecord(value: unknown): value is FoldRecord {
	const r = value as FoldRecord;
	return !!r && typeof r.id === "string" && typeof r.code === "string" && typeof r.chars === "number";
}

function isOp(value: unknown): value is FoldOp {
	const op = value as FoldOp;
	return (
		!!op && typeof op.id === "string" && typeof op.code === "string" && (typeof op.text === "string" || !!op.args)
	);
}

/**
 * Rebuilds the registry from session entries in branch order; malformed entries are skipped.
 * Entries context-fold 0.5.1 wrote (see legacy-entries.ts) are replayed first, as they predate
 * this version's own entries in any session that switched over.
 */
export function rebuildRegistry(entries: readonly unknown[]): { registry: FoldRegistry; skipped: number } {
	const registry = new FoldRegistry();
	const legacy = legacyState();
	const own: Record<string, unknown>[] = [];
	let skipped = 0;
	for (const raw of entries) {
		const entry = raw as EntryLike;
		if (entry?.type !== "custom" || entry.customType !== ENTRY_TYPE) continue;
		const data = entry.data as Record<string, unknown> | undefined;
		if (!data || typeof data !== "object") skipped++;
		else if (!isLegacyEntry(data)) own.push(data);
		else if (!readLegacyEntry(data, legacy)) skipped++;
	}
	replayLegacy(legacy, registry);
	const recorded = new Set<number>();
	for (const data of own) {
		const kind = data.kind;
		if (kind === "records" && Array.isArray(data.records) && typeof data.seq === "number") {
			for (const record of data.records) if (isRecord(record)) registry.addRecord(record);
			recorded.add(data.seq);
		} else if (kind === "layer" && Array.isArray(data.ops) && typeof data.seq === "number") {
			if (!recorded.has(data.seq)) {
				skipped++;
				continue;
			}
			registry.commitLayer(data.seq, data.ops.filter(isOp));
		} else if (kind === "unfold" && Array.isArray(data.ids)) {
			for (const id of data.ids) if (typeof id === "string") registry.unfold(id);
		} else {
			skipped++;
		}
	}
	return { registry, skipped };
}

/**
 * User messages of the branch that the latest compaction removed from live history (those before
 * its first kept entry): the base that keeps turn numbers session-absolute after a compaction.
 */
export function turnBaseOf(branch: readonly unknown[]): number {
	let firstKept: unknown;
	for (const raw of branch) {
		const entry = raw as { type?: unknown; firstKeptEntryId?: unknown };
		if (entry?.type === "compaction") firstKept = entry.firstKeptEntryId;
	}
	if (typeof firstKept !== "string") return 0;
	let users = 0;
	for (const raw of branch) {
		const entry = raw as { type?: unknown; id?: unknown; message?: { role?: unknown } };
		if (entry?.id === firstKept) return users;
		if (entry?.type === "message" && entry.message?.role === "user") users++;
	}
	return 0;
}
