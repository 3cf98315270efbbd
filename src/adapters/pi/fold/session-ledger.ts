/**
 * The ledger read route: re-locates a folded block in Pi's append-only session entries by
 * recomputing the same durable ids, so recall serves the original bytes after the block left live
 * history, after compaction and after a restart. Linearization is cached and extended only by the
 * entries appended since the last lookup.
 */
import { type SessionEntry, sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import { type Block, type MessageLike, messageBlocks } from "../../../core/block.ts";

/** One place a durable id occurs in the ledger. */
export interface LedgerHit {
	block: Block;
	message: MessageLike;
}

/** The parts of Pi's session manager that the ledger and the cache telemetry (catchUp) read its entries through. */
export interface LedgerSource {
	getEntries(): readonly unknown[];
	getEntryCount?(): number;
}

interface EntryLike {
	type?: unknown;
	message?: unknown;
}

/**
 * The messages an entry puts in the context, as Pi's own projection builds them
 * (`sessionEntryToContextMessages`): a `message` entry's, and a `custom_message` entry's (another
 * extension's message, context-fold's handoff seed) as a `custom` message stamped with the entry's
 * time, so its durable id is the one linearize gave it in the request. None for any other entry.
 */
function contextMessagesOf(entry: EntryLike): MessageLike[] {
	if (entry.type === "message" ? !entry.message || typeof entry.message !== "object" : entry.type !== "custom_message")
		return [];
	return sessionEntryToContextMessages(entry as SessionEntry) as unknown as MessageLike[];
}

/** Lazily built id → occurrences index over the messages a session's entries put in the context. */
export class Ledger {
	private index = new Map<string, LedgerHit[]>();
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
		const count = source.getEntryCount?.();
		if (count !== undefined && count === this.seen) return;
		let entries: readonly unknown[];
		try {
			entries = source.getEntries();
		} catch (error) {
			this.failed(error);
			throw error;
		}
		if (entries.length < this.seen) this.reset();
		for (let i = this.seen; i < entries.length; i++) {
			const entry = entries[i] as EntryLike | undefined;
			if (!entry || typeof entry !== "object") continue;
			for (const message of contextMessagesOf(entry)) {
				if (message.role === "user") this.turn++;
				for (const block of messageBlocks(message, i, this.turn)) {
					if (!block.durable) continue;
					const hits = this.index.get(block.id);
					if (hits) hits.push({ block, message });
					else this.index.set(block.id, [{ block, message }]);
				}
			}
		}
		this.seen = entries.length;
	}

	/** Forgets everything (a different session). */
	reset(): void {
		this.index = new Map();
		this.seen = 0;
		this.turn = 0;
	}

	/** Every ledger occurrence of a durable id, oldest first. */
	lookup(id: string): LedgerHit[] {
		this.refresh();
		return this.index.get(id) ?? [];
	}
}
