/**
 * The ledger read route: re-locates a folded block in Pi's append-only session entries by
 * recomputing the same durable ids, so recall serves the original bytes after the block left live
 * history, after compaction and after a restart. Linearization is cached and extended only by the
 * entries appended since the last lookup.
 */
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
	customType?: unknown;
	content?: unknown;
	display?: unknown;
	details?: unknown;
	timestamp?: unknown;
}

/**
 * The message an entry puts in the context, as Pi builds it: a `message` entry's own, and a
 * `custom_message` entry (another extension's message, context-fold's handoff seed) as Pi's
 * `createCustomMessage` makes it, a `custom` message stamped with the entry's time in ms, so its
 * durable id is the one linearize gave it in the request. Undefined for any other entry.
 */
function contextMessageOf(entry: EntryLike): MessageLike | undefined {
	if (entry.type === "message") {
		return entry.message && typeof entry.message === "object" ? (entry.message as MessageLike) : undefined;
	}
	if (entry.type !== "custom_message") return undefined;
	return {
		role: "custom",
		customType: entry.customType,
		content: entry.content ?? [],
		display: entry.display,
		details: entry.details,
		timestamp: new Date(entry.timestamp as string | number).getTime(),
	};
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
			const message = entry && typeof entry === "object" ? contextMessageOf(entry) : undefined;
			if (!message) continue;
			if (message.role === "user") this.turn++;
			for (const block of messageBlocks(message, i, this.turn)) {
				if (!block.durable) continue;
				const hits = this.index.get(block.id);
				if (hits) hits.push({ block, message });
				else this.index.set(block.id, [{ block, message }]);
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
