/**
 * The ledger read route: re-locates a folded block in Pi's append-only session entries by
 * recomputing the same durable ids, so recall serves the original bytes after the block left live
 * history, after compaction and after a restart. It also keeps the fold records of every branch of
 * the file by code, for a code that reached this branch from another one (a branch summary written
 * after a `/tree` move). Linearization is cached and extended only by the entries appended since
 * the last lookup.
 */
import { type SessionEntry, sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import {
	type Block,
	laterId,
	type MessageLike,
	messageBlocks,
	repeatedId,
	splitRepeatedId,
} from "../../../core/block.ts";
import type { FoldRecord } from "../../../core/fold-registry.ts";
import { recordsOfEveryBranch } from "./persistence.ts";

/** One place a durable id occurs in the ledger. */
export interface LedgerHit {
	block: Block;
	message: MessageLike;
}

/** The parts of Pi's session manager that the ledger and the cache telemetry (catchUp) read its entries through. */
export interface LedgerSource {
	getEntries(): readonly unknown[];
	getEntryCount?(): number;
	/** The entries of the current branch (to tell a record of this branch from another's). */
	getBranch?(): readonly unknown[];
}

/** A fold record found in the session file, with the id of the entry that holds it. */
export interface PlacedRecord {
	record: FoldRecord;
	entryId?: string;
}

interface EntryLike {
	type?: unknown;
	message?: unknown;
}

/**
 * The messages an entry puts in the context, as Pi's own projection builds them
 * (`sessionEntryToContextMessages`): a `message` entry's, a `custom_message` entry's (another
 * extension's message, context-fold's handoff seed) as a `custom` message stamped with the entry's
 * time, and a `compaction` entry's summary (a summary Pi's model wrote, which a later compaction of
 * context-fold's may record), so that each durable id is the one linearize gave it in the request.
 * None for any other entry.
 */
export function contextMessagesOf(entry: EntryLike): MessageLike[] {
	if (
		entry.type === "message" ? !entry.message || typeof entry.message !== "object" : !CONTEXT_ENTRIES.has(entry.type)
	)
		return [];
	return sessionEntryToContextMessages(entry as SessionEntry) as unknown as MessageLike[];
}

/** The entries besides `message` whose context messages the ledger indexes (see contextMessagesOf). */
const CONTEXT_ENTRIES = new Set<unknown>(["custom_message", "compaction"]);

/** Lazily built id → occurrences index over the messages a session's entries put in the context. */
export class Ledger {
	private index = new Map<string, LedgerHit[]>();
	/** Fold records of every branch by code, the newest for a code recorded more than once. */
	private records = new Map<string, PlacedRecord>();
	private seen = 0;
	private turn = 0;

	private readonly source: () => LedgerSource | undefined;
	private readonly failed: (error: unknown) => void;

	/** `failed` hears each error reading the session's entries; the lookup still throws it. */
	constructor(source: () => LedgerSource | undefined, failed: (error: unknown) => void = () => {}) {
		this.source = source;
		this.failed = failed;
	}

	private refresh(): void {
		const source = this.source();
		if (!source) return;
		let entries: readonly unknown[];
		try {
			const count = source.getEntryCount?.();
			if (count !== undefined && count === this.seen) return;
			entries = source.getEntries();
		} catch (error) {
			this.failed(error);
			throw error;
		}
		if (entries.length < this.seen) this.reset();
		for (let i = this.seen; i < entries.length; i++) {
			const entry = entries[i] as EntryLike | undefined;
			if (!entry || typeof entry !== "object") continue;
			const entryId = typeof (entry as { id?: unknown }).id === "string" ? (entry as { id: string }).id : undefined;
			for (const record of recordsOfEveryBranch([entry])) this.records.set(record.code, { record, entryId });
			for (const message of contextMessagesOf(entry)) {
				if (message.role === "user") this.turn++;
				for (const block of messageBlocks(message, i, this.turn)) {
					if (!block.durable) continue;
					const hits = this.index.get(block.id);
					if (!hits) {
						this.index.set(block.id, [{ block, message }]);
						continue;
					}
					hits.push({ block, message });
					// A later occurrence of an id (a provider that repeats call ids) is known by the id
					// linearize gives it too, so that ids() lists it (a seed may cite it by its code).
					const ts = message.timestamp;
					if (typeof ts !== "number" || !Number.isFinite(ts)) continue;
					const again = laterId(block.id, ts, (id) => this.index.has(id));
					if (again === undefined) continue;
					this.index.set(again, [{ block, message }]);
					// Its stamp names every occurrence in that millisecond, as a lookup by the stamp reads it.
					if (again !== repeatedId(block.id, ts))
						this.index.get(repeatedId(block.id, ts))?.push({ block, message });
				}
			}
		}
		this.seen = entries.length;
	}

	/** Forgets everything (a different session). */
	reset(): void {
		this.index = new Map();
		this.records = new Map();
		this.seen = 0;
		this.turn = 0;
	}

	/** The fold record of `code` on any branch of the session file, the newest if recorded more than once. */
	recordOf(code: string): PlacedRecord | undefined {
		this.refresh();
		return this.records.get(code);
	}

	/** The fold records written on the session's current branch, as the file holds them, by code. */
	branchRecords(): PlacedRecord[] {
		this.refresh();
		const ids = this.branchIds();
		return [...this.records.values()].filter((placed) => ids.has(placed.entryId));
	}

	/** True when the entry `id` is on the session's current branch (false when the branch cannot be read). */
	onBranch(id: string): boolean {
		return this.branchIds().has(id);
	}

	/** The ids of the current branch's entries (none when the source has no branch). */
	private branchIds(): Set<unknown> {
		const branch = this.source()?.getBranch?.() ?? [];
		return new Set(branch.map((entry) => (entry as { id?: unknown } | undefined)?.id));
	}

	/** Every durable id the entries hold, in order of first occurrence. */
	ids(): string[] {
		this.refresh();
		return [...this.index.keys()];
	}

	/**
	 * False when the session's entries, as Pi read them, hold no copy of durable id `id`; true when they
	 * do, or cannot be read (the constructor's `failed` hears why).
	 */
	holds(id: string): boolean {
		try {
			return this.lookup(id).length > 0;
		} catch {
			return true;
		}
	}

	/**
	 * Every ledger occurrence of a durable id, oldest first. A repeated id (see repeatedId) names the
	 * occurrences of its anchor in messages of its stamp: the entries hold the anchor once per message.
	 */
	lookup(id: string): LedgerHit[] {
		this.refresh();
		const hits = this.index.get(id);
		if (hits) return hits;
		const repeated = splitRepeatedId(id);
		if (!repeated) return [];
		return (this.index.get(repeated.id) ?? []).filter((hit) => hit.message.timestamp === repeated.ts);
	}
}
