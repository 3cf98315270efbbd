/**
 * Event-sourced fold state. Every fold event, unfold decision and compaction-time record is a
 * `contextfold.fold` custom entry in Pi's session; the registry is rebuilt from the current
 * branch's entries (context-fold 0.5.1's included) on session start and tree navigation.
 */

import { Type } from "typebox";
import { Value } from "typebox/value";
import type { FoldOp } from "../../../core/apply.ts";
import { type MessageLike, messageBlocks } from "../../../core/block.ts";
import { type FoldRecord, FoldRegistry } from "../../../core/fold-registry.ts";
import { isLegacyEntry, legacyRecordOf, legacyState, readLegacyEntry, replayLegacy } from "./legacy-entries.ts";

/** customType of every entry this extension appends. */
export const ENTRY_TYPE = "contextfold.fold";

/** Version of the entry payloads written now. */
export const ENTRY_VERSION = 1;

/** The payloads of `contextfold.fold` entries. */
export type FoldEntry =
	| { v: number; kind: "records"; seq: number; records: FoldRecord[] }
	| { v: number; kind: "layer"; seq: number; ops: FoldOp[] }
	| { v: number; kind: "unfold"; ids: string[] };

/** A `contextfold.fold` custom entry of Pi's session, its payload still unread. */
const FoldEntrySchema = Type.Object({
	type: Type.Literal("custom"),
	customType: Type.Literal(ENTRY_TYPE),
	data: Type.Optional(Type.Unknown()),
});

/**
 * The three payloads' envelopes. Their lists are read item by item below (records and ops by their
 * own schemas), so that one malformed item costs that item, not the whole entry.
 */
const RecordsPayload = Type.Object({
	kind: Type.Literal("records"),
	seq: Type.Number(),
	records: Type.Array(Type.Unknown()),
});
const LayerPayload = Type.Object({ kind: Type.Literal("layer"), seq: Type.Number(), ops: Type.Array(Type.Unknown()) });
const UnfoldPayload = Type.Object({ kind: Type.Literal("unfold"), ids: Type.Array(Type.Unknown()) });

/**
 * The payload of `raw` when it is a `contextfold.fold` entry: an object, or null for one that is
 * none (unreadable); undefined for any other entry.
 */
function foldPayload(raw: unknown): Record<string, unknown> | null | undefined {
	if (!Value.Check(FoldEntrySchema, raw)) return undefined;
	const data = raw.data;
	return data && typeof data === "object" ? (data as Record<string, unknown>) : null;
}

/** The shape of a persisted fold record (unknown fields are tolerated, as a newer writer may add some). */
const RecordSchema = Type.Object({
	id: Type.String(),
	code: Type.String(),
	chars: Type.Number(),
	seq: Type.Optional(Type.Number()),
	sha256: Type.Optional(Type.String()),
	kind: Type.Optional(Type.String()),
	tool: Type.Optional(Type.String()),
	turn: Type.Optional(Type.Number()),
	key: Type.Optional(Type.String()),
	from: Type.Optional(Type.Integer({ minimum: 2 })),
});

/** The shape of a persisted fold op: replacement text, or replacement arguments. */
const OpSchema = Type.Union([
	Type.Object({ id: Type.String(), code: Type.String(), text: Type.String() }),
	Type.Object({ id: Type.String(), code: Type.String(), args: Type.Record(Type.String(), Type.Unknown()) }),
]);

const isRecord = (value: unknown): value is FoldRecord => Value.Check(RecordSchema, value);
const isOp = (value: unknown): value is FoldOp => Value.Check(OpSchema, value);

/** What a restore could not read: whole entries, and single records or ops inside readable entries. */
export interface Skipped {
	entries: number;
	records: number;
	ops: number;
	/** Readable ops with no fold record of their id and code: their code would not resolve. */
	unbacked: number;
}

/** One line naming what a restore skipped, or undefined when it skipped nothing. */
export function skippedText(skipped: Skipped): string | undefined {
	const parts: string[] = [];
	const count = (n: number, one: string, many: string) => {
		if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
	};
	count(skipped.entries, "unreadable fold entry", "unreadable fold entries");
	count(
		skipped.records,
		"malformed fold record (its code does not resolve until that block folds again)",
		"malformed fold records (their codes do not resolve until those blocks fold again)",
	);
	count(
		skipped.ops,
		"malformed frozen op (that block is sent raw)",
		"malformed frozen ops (those blocks are sent raw)",
	);
	count(
		skipped.unbacked,
		"frozen op without its fold record (that block is sent raw)",
		"frozen ops without their fold records (those blocks are sent raw)",
	);
	return parts.length > 0 ? `context-fold: restoring fold state skipped ${parts.join(", ")}` : undefined;
}

/** Durable ids that name more than one block of the messages among `entries` (see linearize). */
function repeatedIds(entries: readonly unknown[]): Set<string> {
	const seen = new Set<string>();
	const repeated = new Set<string>();
	let at = 0;
	for (const raw of entries) {
		const entry = raw as { type?: unknown; message?: MessageLike };
		if (entry?.type !== "message" || !entry.message) continue;
		for (const block of messageBlocks(entry.message, at++, 0)) {
			if (!block.durable) continue;
			if (seen.has(block.id)) repeated.add(block.id);
			else seen.add(block.id);
		}
	}
	return repeated;
}

/**
 * Rebuilds the registry from session entries in branch order; malformed entries are skipped.
 * Entries context-fold 0.5.1 wrote (see legacy-entries.ts) are replayed first, as they predate
 * this version's own entries in any session that switched over.
 */
export function rebuildRegistry(entries: readonly unknown[]): { registry: FoldRegistry; skipped: Skipped } {
	const registry = new FoldRegistry();
	const legacy = legacyState();
	const own: Record<string, unknown>[] = [];
	const skipped: Skipped = { entries: 0, records: 0, ops: 0, unbacked: 0 };
	for (const raw of entries) {
		const data = foldPayload(raw);
		if (data === undefined) continue;
		if (data === null) skipped.entries++;
		else if (!isLegacyEntry(data)) own.push(data);
		else if (!readLegacyEntry(data, legacy)) skipped.entries++;
	}
	replayLegacy(legacy, registry, legacy.layers.size > 0 ? repeatedIds(entries) : undefined);
	skipped.ops += legacy.malformedOps;
	skipped.unbacked += legacy.unbacked;
	const recorded = new Set<number>();
	for (const data of own) {
		if (Value.Check(RecordsPayload, data)) {
			for (const record of data.records) {
				if (isRecord(record)) registry.addRecord({ ...record, seq: record.seq ?? data.seq });
				else skipped.records++;
			}
			recorded.add(data.seq);
		} else if (Value.Check(LayerPayload, data)) {
			const ops = data.ops.filter(isOp);
			skipped.ops += data.ops.length - ops.length;
			// A layer whose records entry is missing is readable: its blocks are sent raw, and said so.
			if (!recorded.has(data.seq)) {
				skipped.unbacked += ops.length;
				continue;
			}
			// A digest whose code no record resolves could never be recalled (nor checked for a changed
			// block): that block is sent raw, as a legacy op without its record is.
			const backed = ops.filter((op) => registry.record(op.id)?.code === op.code);
			skipped.unbacked += ops.length - backed.length;
			registry.commitLayer(data.seq, backed);
		} else if (Value.Check(UnfoldPayload, data)) {
			for (const id of data.ids) if (typeof id === "string") registry.unfold(id);
		} else {
			skipped.entries++;
		}
	}
	return { registry, skipped };
}

/**
 * Every well-formed fold record in `entries` (0.5.1's included), whatever branch its entry is on, in file order: what a
 * session's codes named on any of its branches (a code is made from its block's durable id, so it
 * names the same block on every branch).
 */
export function recordsOfEveryBranch(entries: readonly unknown[]): FoldRecord[] {
	const out: FoldRecord[] = [];
	for (const raw of entries) {
		const data = foldPayload(raw);
		if (data && isLegacyEntry(data)) {
			// A fold 0.5.1 recorded: its code is served from this file as this version's are.
			const record = legacyRecordOf(data);
			if (record) out.push(record);
			continue;
		}
		if (!Value.Check(RecordsPayload, data)) continue;
		for (const record of data.records) if (isRecord(record)) out.push({ ...record, seq: record.seq ?? data.seq });
	}
	return out;
}

/** What the latest compaction removed from live history: its user messages and its model replies. */
export interface CompactedBase {
	/** User messages: the base that keeps turn numbers session-absolute after a compaction. */
	turns: number;
	/** Assistant messages (one per model request): the base of the session's request count. */
	requests: number;
}

/**
 * The messages of the branch that the latest compaction removed from live history, by role; none
 * without a compaction. As in Pi's projection: those before its first kept entry, or every message
 * before the compaction when no earlier entry has that id (Pi then keeps none of them).
 */
export function compactedBaseOf(branch: readonly unknown[]): CompactedBase {
	let at = -1;
	for (let i = 0; i < branch.length; i++) if ((branch[i] as { type?: unknown })?.type === "compaction") at = i;
	const base = { turns: 0, requests: 0 };
	if (at < 0) return base;
	const firstKept = (branch[at] as { firstKeptEntryId?: unknown }).firstKeptEntryId;
	for (let i = 0; i < at; i++) {
		const entry = branch[i] as { type?: unknown; id?: unknown; message?: { role?: unknown } };
		if (entry?.id === firstKept) break;
		if (entry?.type !== "message") continue;
		if (entry.message?.role === "user") base.turns++;
		else if (entry.message?.role === "assistant") base.requests++;
	}
	return base;
}
