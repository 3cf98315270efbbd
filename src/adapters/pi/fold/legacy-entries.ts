/**
 * The `contextfold.fold` entries context-fold 0.5.1 wrote, and the older ones it still read, so a
 * session started under 0.5.1 keeps its folds here: `fold` records, legacy `spool` and `gate`
 * records (degraded like 0.5.1 did: no sha256, spool files never opened), `layer` entries holding
 * the exact digest bytes sent, `unfold` by block id, and the obsolete `layer-break` (ignored).
 * Ids are mapped to this version's formula (fromLegacyId); codes are taken as recorded, never
 * recomputed. Replay follows 0.5.1's rules: the latest record per block id wins, the latest layer
 * per seq wins, layers apply in ascending seq, unfolds accumulate.
 */
import { Type } from "typebox";
import { Value } from "typebox/value";
import type { FoldOp } from "../../../core/apply.ts";
import { fromLegacyId } from "../../../core/block.ts";
import type { FoldRecord, FoldRegistry } from "../../../core/fold-registry.ts";

/** What the 0.5.1 entries of a branch say, collected before replay. */
export interface LegacyState {
	/** Fold records by (mapped) block id; a later record for an id replaces the earlier one. */
	records: Map<string, FoldRecord>;
	/** Layer entries by seq; a later layer with the same seq replaces the earlier one. */
	layers: Map<number, { id: string; digestText: string }[]>;
	/** Unfolded (mapped) block ids. */
	unfolded: Set<string>;
	/** Layer items that are no `{id, digestText}` (their blocks are sent raw). */
	malformedOps: number;
	/** Layer ops whose block has no fold record (their blocks are sent raw); counted by replayLegacy. */
	unbacked: number;
}

/** An empty LegacyState. */
export function legacyState(): LegacyState {
	return { records: new Map(), layers: new Map(), unfolded: new Set(), malformedOps: 0, unbacked: 0 };
}

type Data = Record<string, unknown>;

const LEGACY_RECORD_KINDS = new Set(["fold", "spool", "gate"]);
const CODE = /^(?:[0-9a-z]{6}|[0-9a-z]{8})$/;

/** A 0.5.1 fold record (`entry` of a fold, spool or gate entry), as far as it is read. */
const LegacyRecord = Type.Object({
	blockId: Type.String({ minLength: 1 }),
	code: Type.String(),
	tool: Type.Optional(Type.Unknown()),
	bytes: Type.Optional(Type.Unknown()),
	sha256: Type.Optional(Type.Unknown()),
});

/** A 0.5.1 layer: its seq and its ops, each read by LegacyOp (a malformed one costs only itself). */
const LegacyLayer = Type.Object({ seq: Type.Integer(), entries: Type.Array(Type.Unknown()) });

/** One op of a 0.5.1 layer: the block and the exact digest bytes sent for it. */
const LegacyOp = Type.Object({ id: Type.String(), digestText: Type.String({ minLength: 1 }) });

/** A byte count 0.5.1 recorded. */
const ByteCount = Type.Integer({ minimum: 0 });

/**
 * True when `data` has the shape of a 0.5.1 entry: a record under `entry`, a layer under `layer`,
 * an unfold without this version's `v`, or a `layer-break`.
 */
export function isLegacyEntry(data: Data): boolean {
	const kind = data.kind;
	if (typeof kind !== "string") return false;
	if (LEGACY_RECORD_KINDS.has(kind)) return true;
	if (kind === "layer") return "layer" in data && !("ops" in data);
	if (kind === "unfold") return typeof data.v !== "number";
	return kind === "layer-break";
}

/** 0.5.1 named a record by its tool, or by the block kind for assistant thinking and text. */
function kindOf(tool: unknown): Pick<FoldRecord, "kind" | "tool"> {
	if (tool === "thinking" || tool === "text") return { kind: tool };
	return { kind: "toolResult", tool: typeof tool === "string" && tool ? tool : "tool" };
}

/** A 0.5.1 FoldEntry (or a spool/gate entry) as a fold record, or null when it has no id or code. */
function legacyRecord(entry: unknown): FoldRecord | null {
	if (!Value.Check(LegacyRecord, entry)) return null;
	const code = entry.code.toLowerCase();
	if (!CODE.test(code)) return null;
	const record: FoldRecord = { id: fromLegacyId(entry.blockId), code, chars: -1, seq: 0, ...kindOf(entry.tool) };
	if (Value.Check(ByteCount, entry.bytes)) record.bytes = entry.bytes;
	if (typeof entry.sha256 === "string") record.sha256 = entry.sha256.toLowerCase();
	return record;
}

/** The fold record a 0.5.1 record entry (`fold`, `spool` or `gate`) holds, or null for any other entry or an unreadable one. */
export function legacyRecordOf(data: Data): FoldRecord | null {
	return typeof data.kind === "string" && LEGACY_RECORD_KINDS.has(data.kind) ? legacyRecord(data.entry) : null;
}

/**
 * Collects one 0.5.1 entry (see isLegacyEntry) into `state`. Returns false when it cannot be read
 * (a record without id or code, a layer without an integer seq or an entries list, an unfold
 * without ids); a `layer-break` is known and read as nothing.
 */
export function readLegacyEntry(data: Data, state: LegacyState): boolean {
	const kind = data.kind;
	if (kind === "layer-break") return true;
	if (kind === "unfold") {
		if (!Array.isArray(data.ids)) return false;
		for (const id of data.ids) if (typeof id === "string") state.unfolded.add(fromLegacyId(id));
		return true;
	}
	if (kind === "layer") {
		const layer = data.layer;
		if (!Value.Check(LegacyLayer, layer)) return false;
		const entries = layer.entries.filter((e) => Value.Check(LegacyOp, e));
		state.malformedOps += layer.entries.length - entries.length;
		state.layers.set(layer.seq, entries);
		return true;
	}
	const record = legacyRecord(data.entry);
	if (!record) return false;
	state.records.delete(record.id);
	state.records.set(record.id, record);
	return true;
}

/**
 * Replays collected 0.5.1 state into `registry`: the records, then the layers in ascending seq
 * (each op under its block's recorded code, its digest bytes as recorded; an op whose block has
 * no record is left out and counted in `state.unbacked`, so that block renders raw), then the unfolds.
 * An op on an id in `repeated` (one that names more than one block, a tool-call id a provider used
 * twice) is left out without a word: 0.5.1 sent every block of such an id raw, whatever its layers said.
 */
export function replayLegacy(
	state: LegacyState,
	registry: FoldRegistry,
	repeated: ReadonlySet<string> = new Set(),
): void {
	const layers = [...state.layers.entries()].sort((a, b) => a[0] - b[0]);
	const firstSeq = new Map<string, number>();
	for (const [seq, entries] of layers) {
		for (const e of entries) {
			const id = fromLegacyId(e.id);
			if (!firstSeq.has(id)) firstSeq.set(id, seq);
		}
	}
	for (const record of state.records.values()) registry.addRecord({ ...record, seq: firstSeq.get(record.id) ?? 0 });
	for (const [seq, entries] of layers) {
		const ops: FoldOp[] = [];
		for (const e of entries) {
			const id = fromLegacyId(e.id);
			if (repeated.has(id)) continue;
			const record = registry.record(id);
			if (record) ops.push({ id, code: record.code, text: e.digestText, legacy: true });
			else state.unbacked++;
		}
		registry.commitLayer(seq, ops);
	}
	for (const id of state.unfolded) registry.unfold(id);
}
