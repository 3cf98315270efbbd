/**
 * The fold registry: which durable ids are folded, under which code, with which frozen bytes, and
 * which ids the agent unfolded or a code collision holds raw. It is plain data rebuilt from
 * persisted records; the adapter owns persistence and hashing.
 */
import type { FoldOp } from "./apply.ts";
import { utf8Length } from "./tokens.ts";

/** What is recorded per folded block; `sha256` is of the block text the hook saw at fold time. */
export interface FoldRecord {
	id: string;
	code: string;
	/** Characters (UTF-16 units) of the block text at fold time (its extent); -1 when unknown. */
	chars: number;
	/**
	 * UTF-8 bytes of the block text at fold time: the extent context-fold 0.5.1 recorded. Present
	 * only on records read from 0.5.1 entries, whose `chars` is then -1.
	 */
	bytes?: number;
	sha256?: string;
	/** The layer (fold event) that folded it; 0 for a record made when the block left history. */
	seq: number;
	kind?: string;
	tool?: string;
	turn?: number;
	/** Content key of the block's bytes (see contentKey), for duplicate pointers. */
	key?: string;
	/**
	 * The file line a read result's text starts at, when its call read from an offset past line 1 (see
	 * readStarts): its digest numbered its lines from there, and a recall numbers them alike.
	 */
	from?: number;
}

/** Result of screening a prepared event for code collisions. */
export interface Screened {
	ops: FoldOp[];
	collisions: { id: string; code: string; holder: string }[];
}

/** Folded ids, frozen layer bytes, and unfold/collision decisions for one session branch. */
export class FoldRegistry {
	private readonly records = new Map<string, FoldRecord>();
	private readonly frozen = new Map<string, FoldOp>();
	private readonly owners = new Map<string, string>();
	private readonly unfolded = new Set<string>();
	private readonly raw = new Set<string>();
	/**
	 * Every id that is frozen, unfolded or held raw (those only grow): one lookup answers for the
	 * many ids that are none of these, which every request asks about.
	 */
	private readonly marked = new Set<string>();
	private readonly keys = new Map<string, string>();
	/** Ids of records → the text that last matched them (see hasExtent). */
	private readonly matched = new Map<string, string>();
	private newestSeq = 0;
	private changes = 0;

	/** Counts the changes to what frozenOp, hasExtent and plannable answer: equal, they answer the same. */
	get version(): number {
		return this.changes;
	}

	/** The newest committed layer sequence number (0 before the first event). */
	get seq(): number {
		return this.newestSeq;
	}

	/** The id that owns `code`, if any block has been recorded under it. */
	idOf(code: string): string | undefined {
		return this.owners.get(code);
	}

	/** The fold record of `id`, if any. */
	record(id: string): FoldRecord | undefined {
		return this.records.get(id);
	}

	/** Every fold record, in the order recorded. */
	allRecords(): FoldRecord[] {
		return [...this.records.values()];
	}

	/** The frozen op of `id` while it is folded and not unfolded. */
	frozenOp(id: string): FoldOp | undefined {
		if (!this.marked.has(id)) return undefined;
		return this.unfolded.has(id) ? undefined : this.frozen.get(id);
	}

	/** The op an event froze for `id`, in force or unfolded since; undefined when none did. */
	opOf(id: string): FoldOp | undefined {
		return this.marked.has(id) ? this.frozen.get(id) : undefined;
	}

	/** Every frozen op still in force, in commit order. */
	frozenOps(): FoldOp[] {
		return [...this.frozen.values()].filter((op) => !this.unfolded.has(op.id));
	}

	/** True when the id may be planned: not folded, not unfolded by the agent, not held raw. */
	plannable(id: string): boolean {
		return !this.marked.has(id);
	}

	/** True when the agent unfolded the id. */
	isUnfolded(id: string): boolean {
		return this.unfolded.has(id);
	}

	/** True when a code collision holds the id raw for the session. */
	isHeldRaw(id: string): boolean {
		return this.raw.has(id);
	}

	/**
	 * Splits a prepared event: an op whose code already belongs to another id (or to an earlier op
	 * of the same event) is a collision and is dropped; the rest may commit.
	 */
	screen(ops: readonly FoldOp[]): Screened {
		const claimed = new Map<string, string>();
		const kept: FoldOp[] = [];
		const collisions: Screened["collisions"] = [];
		for (const op of ops) {
			const holder = this.owners.get(op.code) ?? claimed.get(op.code);
			if (holder !== undefined && holder !== op.id) {
				collisions.push({ id: op.id, code: op.code, holder });
				continue;
			}
			claimed.set(op.code, op.id);
			kept.push(op);
		}
		return { ops: kept, collisions };
	}

	/** Marks `id` as held raw for the session after a code collision. */
	holdRaw(id: string): void {
		this.raw.add(id);
		this.marked.add(id);
		this.changes++;
	}

	/** Adds a fold record (idempotent per id; a later record for the same id replaces the first). */
	addRecord(record: FoldRecord): void {
		this.changes++;
		const holder = this.owners.get(record.code);
		if (holder !== undefined && holder !== record.id) {
			this.raw.add(record.id);
			this.marked.add(record.id);
			return;
		}
		this.records.set(record.id, record);
		this.matched.delete(record.id);
		this.owners.set(record.code, record.id);
		if (record.key && !this.keys.has(record.key)) this.keys.set(record.key, record.code);
	}

	/**
	 * True when `text` is still the block recorded for `id` at fold time: its UTF-16 length, or, for a
	 * 0.5.1 record, its UTF-8 byte length; and, given `sha256` (the adapter's hash: the core never
	 * hashes by itself), the record's fold-time sha256 where it has one, so that an edit of the same
	 * length is caught too. An id without a record always matches; a record whose extent is unknown
	 * (a 0.5.1 record without `bytes`) matches on its hash alone. A text that matched is remembered,
	 * so an unchanged block (the same string, or an equal one) is checked once, not on every request.
	 */
	hasExtent(id: string, text: string, sha256?: (text: string) => string): boolean {
		const record = this.records.get(id);
		if (!record) return true;
		if (this.matched.get(id) === text) return true;
		const extent =
			record.bytes === undefined
				? record.chars < 0 || record.chars === text.length
				: text.length <= record.bytes && utf8Length(text) === record.bytes;
		if (!extent) return false;
		if (sha256 && record.sha256 && sha256(text) !== record.sha256.toLowerCase()) return false;
		this.matched.set(id, text);
		return true;
	}

	/**
	 * Forgets the matched texts of ids not in `live` (see hasExtent): a block a compaction removed is
	 * never checked again, and its text should not outlive it here.
	 */
	retainMatched(live: ReadonlySet<string>): void {
		for (const id of this.matched.keys()) if (!live.has(id)) this.matched.delete(id);
	}

	/** How many matched texts hasExtent keeps (for tests of what the registry holds on to). */
	get matchedCount(): number {
		return this.matched.size;
	}

	/** Content keys of recorded blocks → the code of the first block with those bytes. */
	knownContent(): ReadonlyMap<string, string> {
		return this.keys;
	}

	/** Freezes a committed layer's ops. Ids already frozen keep their first bytes. */
	commitLayer(seq: number, ops: readonly FoldOp[]): void {
		this.changes++;
		for (const op of ops) {
			if (this.frozen.has(op.id) || this.raw.has(op.id)) continue;
			this.frozen.set(op.id, op);
			this.marked.add(op.id);
		}
		if (seq > this.newestSeq) this.newestSeq = seq;
	}

	/** Records the agent's unfold of `id`: it renders raw from now on and is never folded again. */
	unfold(id: string): void {
		this.unfolded.add(id);
		this.marked.add(id);
		this.changes++;
	}
}
