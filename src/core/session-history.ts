/**
 * The session's history as the user's view reads it, pure: from the branch's entries as Pi stores
 * them (read tolerantly), the cache hit rate since the latest fold event or unfold, the cache
 * figures per provider and model, and each fold event, unfold and compaction with the rewrite the
 * next response paid; and the tokens a fold keeps out, estimated from its record.
 */
import type { FoldOp } from "./apply.ts";
import { fromLegacyId } from "./block.ts";
import { figuresOf, promptOf } from "./cache-advice.ts";
import { codesIn } from "./digest.ts";
import type { FoldRecord } from "./fold-registry.ts";
import { isOwnSummary } from "./summary.ts";
import { blockCost } from "./tokens.ts";

/** The fields of a session entry the status reads (Pi's shapes, read tolerantly). */
export interface EntryLike {
	type?: string;
	customType?: string;
	kind?: string;
	provider?: string;
	model?: string;
	data?: unknown;
	/** A compaction entry's size before it, its summary, and its details (context-fold's own carry `contextFold`). */
	tokensBefore?: number;
	summary?: unknown;
	details?: { contextFold?: { codes?: unknown } };
	message?: {
		role?: string;
		provider?: string;
		model?: string;
		usage?: { input?: number; cacheRead?: number; cacheWrite?: number };
	};
}

function count(value: unknown): number {
	return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** What a fold event's layer or an unfold entry says, this version's or context-fold 0.5.1's. */
export type FoldMark =
	| { kind: "layer"; seq: number | undefined; ops: FoldOp[] }
	| { kind: "unfold"; seq: undefined; ids: string[] };

/**
 * A fold entry's data read as a layer (this version's `{seq, ops}`, or 0.5.1's `{layer: {seq,
 * entries: [{id, digestText}]}}`, whose ops take the code heading each digest) or an unfold (block
 * ids, 0.5.1's mapped to this version's, see fromLegacyId); undefined for anything else.
 */
export function readFoldMark(data: unknown): FoldMark | undefined {
	if (!data || typeof data !== "object") return undefined;
	const d = data as Record<string, unknown>;
	if (d.kind === "unfold" && Array.isArray(d.ids)) {
		const ids = d.ids.filter((id): id is string => typeof id === "string");
		return { kind: "unfold", seq: undefined, ids: typeof d.v === "number" ? ids : ids.map(fromLegacyId) };
	}
	if (d.kind !== "layer") return undefined;
	if (Array.isArray(d.ops)) return { kind: "layer", seq: typeof d.seq === "number" ? d.seq : undefined, ops: d.ops };
	const layer = d.layer as { seq?: unknown; entries?: unknown } | undefined;
	if (!layer || typeof layer !== "object" || !Array.isArray(layer.entries)) return undefined;
	const ops: FoldOp[] = [];
	for (const e of layer.entries as { id?: unknown; digestText?: unknown }[]) {
		const code = typeof e?.digestText === "string" ? codesIn(e.digestText.slice(0, 32))[0] : undefined;
		if (typeof e?.id === "string" && code) ops.push({ id: fromLegacyId(e.id), code, text: e.digestText as string });
	}
	return { kind: "layer", seq: typeof layer.seq === "number" ? layer.seq : undefined, ops };
}

/** The fold payload of an entry of `entryType` (see readFoldMark), else undefined. */
function foldMark(entry: EntryLike, entryType: string): FoldMark | undefined {
	if (entry.type !== "custom" || entry.customType !== entryType) return undefined;
	return readFoldMark(entry.data);
}

/**
 * The ids unfolded after the latest model reply that reported a prompt on `branch`: that prompt
 * predates them, and the next request carries them raw.
 */
export function unfoldedSinceReply(branch: readonly unknown[], entryType: string): string[] {
	const ids: string[] = [];
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i] as EntryLike;
		if (entry.type === "message" && entry.message?.role === "assistant") {
			if (promptOf(figuresOf(entry.message.usage)) > 0) break;
			continue;
		}
		const mark = foldMark(entry, entryType);
		if (mark?.kind === "unfold") ids.push(...mark.ids);
	}
	return ids;
}

/**
 * A block's cost when it was folded, from its record: its characters, or for a 0.5.1 record (which
 * kept UTF-8 bytes instead) its bytes; 0 when neither is known.
 */
export function recordCost(record: FoldRecord | undefined): number {
	if (!record) return 0;
	if (record.chars >= 0) return blockCost(record.chars);
	return record.bytes !== undefined ? blockCost(record.bytes) : 0;
}

/**
 * The cache hit rate (cache reads over prompt tokens) of the responses after the latest fold event
 * or unfold on `branch`; undefined when no response with a prompt came back since.
 */
export function hitRateSince(branch: readonly unknown[], entryType: string): number | undefined {
	let read = 0;
	let prompt = 0;
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i] as EntryLike;
		if (foldMark(entry, entryType)) break;
		if (entry.type === "message" && entry.message?.role === "assistant") {
			read += count(entry.message.usage?.cacheRead);
			prompt += promptOf(figuresOf(entry.message.usage));
		}
	}
	return prompt > 0 ? read / prompt : undefined;
}

/** Cache figures of one provider and model over a branch. */
export interface CacheLine {
	provider: string;
	model: string;
	/** Responses that report a prompt (a provider error's reply reports none). */
	responses: number;
	/** Responses that read anything from the cache. */
	hits: number;
	input: number;
	cacheRead: number;
	cacheWrite: number;
	/** Pi's idle refreshes (`usage` entries of kind `cache_warm`). */
	warms: number;
}

/**
 * Cache figures per provider and model, in order of first use on `branch`. Pi records an idle refresh
 * under the model name its response gave, which may be an alias of the model requested (a dated id):
 * a refresh under a model no response of its provider names counts for that provider's latest
 * response before it, the cache it kept warm.
 */
export function cacheByModel(branch: readonly unknown[]): CacheLine[] {
	const lines = new Map<string, CacheLine>();
	const keyOf = (provider = "?", model = "?"): string => `${provider}/${model}`;
	const line = (provider = "?", model = "?"): CacheLine => {
		const key = keyOf(provider, model);
		let found = lines.get(key);
		if (!found) {
			found = { provider, model, responses: 0, hits: 0, input: 0, cacheRead: 0, cacheWrite: 0, warms: 0 };
			lines.set(key, found);
		}
		return found;
	};
	/** Each provider's line of its latest response so far. */
	const latest = new Map<string, CacheLine>();
	for (const raw of branch) {
		const entry = raw as EntryLike;
		if (
			entry.type === "message" &&
			entry.message?.role === "assistant" &&
			promptOf(figuresOf(entry.message.usage)) > 0
		) {
			const l = line(entry.message.provider, entry.message.model);
			latest.set(l.provider, l);
			const u = entry.message.usage ?? {};
			l.responses++;
			if (count(u.cacheRead) > 0) l.hits++;
			l.input += count(u.input);
			l.cacheRead += count(u.cacheRead);
			l.cacheWrite += count(u.cacheWrite);
		} else if (entry.type === "usage" && entry.kind === "cache_warm") {
			const named = lines.get(keyOf(entry.provider, entry.model));
			(named ?? latest.get(entry.provider ?? "?") ?? line(entry.provider, entry.model)).warms++;
		}
	}
	return [...lines.values()];
}

/** One fold event or unfold on a branch, with the rewrite the next response paid. */
export interface EventLine {
	/** The layer's sequence number; undefined for an unfold or a compaction. */
	seq: number | undefined;
	kind: "fold" | "unfold" | "compaction";
	/** A compaction's summary was context-fold's deterministic one (no model call). */
	ours?: boolean;
	codes: string[];
	/** Tokens kept out (a fold event's estimate) or put back (an unfold's), from the fold records. */
	tokens: number;
	/** input + cacheWrite of the first response after it: the part of the prompt written again. */
	rewrite: number | undefined;
	/** That response's cache hit rate. */
	hitRate: number | undefined;
}

/**
 * Tokens a fold keeps out, estimated from its record and op: the block's cost at fold time (see
 * recordCost) minus the cost of what replaced it. 0 when the record is unknown or has no extent.
 */
export function opSaving(record: FoldRecord | undefined, op: FoldOp): number {
	const cost = recordCost(record);
	if (cost === 0) return 0;
	const folded = op.args ? (JSON.stringify(op.args) ?? "").length : (op.text?.length ?? 0);
	return Math.max(0, cost - blockCost(folded));
}

/**
 * The estimated tokens an unfold puts back into the context, given the blocks' records and the ops
 * that had folded them, in the same order: each fold's saving (the block less its digest), or the
 * block's whole cost where its op is not known.
 */
export function unfoldBack(records: readonly (FoldRecord | undefined)[], ops: readonly (FoldOp | undefined)[]): number {
	return records.reduce((n, r, i) => {
		const op = ops[i];
		return n + (op ? opSaving(r, op) : recordCost(r));
	}, 0);
}

/** The estimated tokens a fold event's ops keep out, given its records by id. */
export function eventSaving(ops: readonly FoldOp[], record: (id: string) => FoldRecord | undefined): number {
	return ops.reduce((n, op) => n + opSaving(record(op.id), op), 0);
}

/**
 * The fold events and unfolds on `branch`, oldest first, each with the rewrite of the first
 * response after it. `record` resolves a block id to its fold record (codes and sizes), `op` to the
 * op that folded it (an unfold puts back the block less its digest).
 */
export function eventLines(
	branch: readonly unknown[],
	entryType: string,
	record: (id: string) => FoldRecord | undefined,
	op: (id: string) => FoldOp | undefined = () => undefined,
): EventLine[] {
	const lines: EventLine[] = [];
	let open: EventLine[] = [];
	for (const raw of branch) {
		const entry = raw as EntryLike;
		const mark = foldMark(entry, entryType);
		if (mark?.kind === "layer") {
			const ops = mark.ops;
			const line: EventLine = {
				seq: mark.seq,
				kind: "fold",
				codes: ops.map((op) => op.code),
				tokens: eventSaving(ops, record),
				rewrite: undefined,
				hitRate: undefined,
			};
			lines.push(line);
			open.push(line);
		} else if (mark?.kind === "unfold") {
			const ids = mark.ids;
			const records = ids.map((id) => record(id));
			const line: EventLine = {
				seq: undefined,
				kind: "unfold",
				codes: records.map((r, i) => r?.code ?? ids[i]),
				tokens: unfoldBack(records, ids.map(op)),
				rewrite: undefined,
				hitRate: undefined,
			};
			lines.push(line);
			open.push(line);
		} else if (entry.type === "compaction") {
			const codes = entry.details?.contextFold?.codes;
			const line: EventLine = {
				seq: undefined,
				kind: "compaction",
				codes: Array.isArray(codes) ? codes.filter((c): c is string => typeof c === "string") : [],
				tokens: count(entry.tokensBefore),
				rewrite: undefined,
				hitRate: undefined,
				ours: entry.details?.contextFold !== undefined || isOwnSummary(entry.summary),
			};
			lines.push(line);
			open.push(line);
		} else if (entry.type === "message" && entry.message?.role === "assistant" && open.length > 0) {
			// A reply that reports no prompt (a provider error) paid nothing: the request that carried the event comes later.
			const u = entry.message.usage ?? {};
			const prompt = promptOf(figuresOf(u));
			if (prompt === 0) continue;
			for (const line of open) {
				line.rewrite = count(u.input) + count(u.cacheWrite);
				line.hitRate = count(u.cacheRead) / prompt;
			}
			open = [];
		}
	}
	return lines;
}
