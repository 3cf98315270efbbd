/**
 * Deterministic compaction: on `session_before_compact`, every foldable block leaving live history
 * gets a fold record (so recall covers the whole compacted span), the seed index gets a
 * compaction record, and Pi receives a summary built only from the index and the compacted
 * messages. No model call on any path; if anything here throws, Pi's own compaction runs.
 */
import type { MessageLike } from "../../../core/block.ts";
import { linearize } from "../../../core/block.ts";
import { readStarts } from "../../../core/call-facts.ts";
import { foldCode } from "../../../core/digest.ts";
import type { FoldRecord } from "../../../core/fold-registry.ts";
import { type BranchView, recordsOnBranch } from "../../../core/index/branch.ts";
import { extractSeedRecord } from "../../../core/index/extract.ts";
import { summarizeIndex } from "../../../core/index/merge.ts";
import type { SeedRecord } from "../../../core/index/seed-index.ts";
import { contentKey } from "../../../core/lower.ts";
import {
	carriedOver,
	handoffSeedIn,
	isOwnSummary,
	renderSummary,
	seedParentOf,
	summaryCapFor,
} from "../../../core/summary.ts";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import { ENTRY_VERSION, type FoldEntry } from "../fold/persistence.ts";
import { contextMessagesOf } from "../fold/session-ledger.ts";
import { sha256 } from "../fold/sha256.ts";
import type { IndexStore } from "./seed-index-store.ts";

/** What the compaction hook needs from Pi's event. */
export interface CompactionInput {
	messagesToSummarize: readonly unknown[];
	turnPrefixMessages: readonly unknown[];
	previousSummary?: string;
	/** The compaction entry that holds `previousSummary` (its id and time name the block that reads it back). */
	previousEntry?: unknown;
	/** The numbers of context-fold's own earlier compactions on the branch, from their entries. */
	earlierOwn?: readonly number[];
	/** recall_folded is not active: the summary says its codes cannot be read back yet (see SummaryInput). */
	toolsWithheld?: boolean;
}

/** Result of building a deterministic compaction. */
export interface BuiltCompaction {
	summary: string;
	seq: number;
	codes: string[];
	recorded: number;
}

/**
 * Gives every durable block of `messages` with text or images (summaries aside) that has no fold record one
 * now (per block fail-open), appends them as one `records` entry, and adds them to the registry: a
 * record only makes the block recallable by code and by search; it folds nothing.
 */
function recordLeavers(
	messages: readonly MessageLike[],
	engine: FoldEngine,
	append: (entry: FoldEntry) => void,
	warn: (message: string) => void,
	summaries = false,
): FoldRecord[] {
	const fresh = unrecordedBlocks(messages, engine, warn, engine.turnBase, summaries);
	if (fresh.length === 0) return [];
	append({ v: ENTRY_VERSION, kind: "records", seq: 0, records: fresh });
	for (const record of fresh) engine.registry.addRecord(record);
	return fresh;
}

/**
 * Records the blocks a compaction context-fold does not build (Pi's own summary) takes out of live
 * history, as recordLeavers does: search and recall by code still read what it removed. Returns how
 * many blocks were recorded now.
 */
export function recordRemoved(
	messages: readonly MessageLike[],
	engine: FoldEngine,
	append: (entry: FoldEntry) => void,
	warn: (message: string) => void,
): number {
	return recordLeavers(messages, engine, append, warn).length;
}

/**
 * The records the durable blocks of `messages` with text or images (compaction summaries aside, which
 * recordSummaryOf records; a /tree branch summary is one of the blocks) would get if recorded now, for
 * those without one: each under its own fold code (foldCode of its id), which a block colliding with
 * another's code cannot have (said through `warn`). Nothing is written.
 * `turnBase`: user messages before `messages` (by default those a compaction took out of live history).
 */
export function unrecordedBlocks(
	messages: readonly MessageLike[],
	engine: FoldEngine,
	warn: (message: string) => void,
	turnBase = engine.turnBase,
	summaries = false,
): FoldRecord[] {
	const fresh: FoldRecord[] = [];
	const blocks = linearize(messages, turnBase);
	const starts = readStarts(messages, blocks);
	for (const block of blocks) {
		try {
			const compacted = block.kind === "summary" && messages[block.msg]?.role !== "branchSummary";
			if (!block.durable || (compacted && !summaries) || engine.registry.record(block.id)) continue;
			if (!block.text && block.images === 0) continue;
			const code = foldCode(block.id);
			const holder = engine.registry.idOf(code);
			if (holder !== undefined && holder !== block.id) {
				warn(
					`context-fold: fold code ${code} of ${block.id} collides with ${holder}; it cannot be recalled by code`,
				);
				continue;
			}
			fresh.push({
				id: block.id,
				code,
				chars: block.text.length,
				sha256: sha256(block.text),
				seq: 0,
				kind: block.kind,
				tool: block.toolName,
				turn: block.turn,
				key: block.kind === "toolResult" ? contentKey(block.text) : undefined,
				from: starts.get(block.id),
			});
		} catch (error) {
			warn(`context-fold: block ${block.id} has no fold code: ${errorText(error)}`);
		}
	}
	return fresh;
}

/**
 * Gives the summary a compaction `entry` holds a fold record (appended, and added to the registry),
 * so that recall and search read it whole; its code, or undefined when it has no durable block.
 * For a summary carried whole (Pi's model wrote it, or the seed index lost the records of ours), which
 * the new summary cuts to its budget where it does not fit.
 */
function recordSummaryOf(
	entry: unknown,
	engine: FoldEngine,
	append: (entry: FoldEntry) => void,
	warn: (message: string) => void,
): string | undefined {
	const messages = contextMessagesOf(entry as { type?: unknown }).filter((m) => m.role === "compactionSummary");
	const block = linearize(messages).find((b) => b.kind === "summary" && b.durable);
	if (!block) return undefined;
	recordLeavers(messages, engine, append, warn, true);
	return engine.registry.record(block.id)?.code;
}

/** The current branch as the record filter sees it: its entry ids and its fold records' codes. */
export function branchView(branchIds: ReadonlySet<string>, engine: FoldEngine): BranchView {
	return { hasEntry: (id) => branchIds.has(id), codeOf: (id) => engine.registry.record(id)?.code };
}

/** The index records of the current branch (see recordsOnBranch). */
export function branchRecords(index: IndexStore, branch: BranchView): SeedRecord[] {
	return recordsOnBranch(index.all(), branch);
}

/**
 * Builds the compaction: records leavers, appends the seed-index record, renders the summary. When
 * anything after the record fails (Pi's own compaction then runs), the record is retracted.
 */
export function buildCompaction(
	input: CompactionInput,
	engine: FoldEngine,
	index: IndexStore,
	append: (entry: FoldEntry) => void,
	warn: (message: string) => void,
	branch: { leaf?: string; ids: ReadonlySet<string> },
	window?: number,
): BuiltCompaction {
	const messages = [...input.messagesToSummarize, ...input.turnPrefixMessages] as MessageLike[];
	const fresh = recordLeavers(messages, engine, append, warn);
	const blocks = linearize(messages);
	const ids = new Set(blocks.map((b) => b.id));
	// The seed a /fold-handoff session started from leaves with this compaction: carried, not lost; so
	// does one the user pasted as a prompt (this version's or 0.5.1's).
	let seed: { text: string; id: string; unlinked: boolean } | undefined;
	for (const b of blocks) {
		const text = b.kind === "custom" || b.kind === "user" ? handoffSeedIn(b.text) : undefined;
		if (text) {
			// A seed passed as a prompt is read from the parent it names, as a seed message's is (seedSource).
			seed = { text, id: b.id, unlinked: b.kind === "user" && seedParentOf(text) === undefined };
			break;
		}
	}
	const spans = engine.registry.allRecords().filter((r) => ids.has(r.id));
	const seq = index.nextCompactionSeq();
	const record: SeedRecord = extractSeedRecord({
		kind: "compaction",
		seq,
		messages,
		spans,
		turnBase: engine.turnBase,
	});
	if (branch.leaf !== undefined) record.leaf = branch.leaf;
	index.append(record);
	try {
		const records = branchRecords(index, branchView(branch.ids, engine));
		const prior = new Set(records.filter((r) => r.kind === "compaction" && r.seq !== seq).map((r) => r.seq));
		const previous = input.previousSummary;
		// A summary of ours whose facts the index holds again hands on only what it carried itself; while
		// the index lacks the record of any earlier compaction of ours on the branch (its file was lost or
		// deleted), the summary it cannot rebuild is carried whole.
		const held = prior.size > 0 && (input.earlierOwn ?? []).every((n) => prior.has(n));
		const whole = !!previous && (!isOwnSummary(previous) || !held);
		// A summary carried whole (Pi's model wrote it, or the index cannot rebuild ours) is cut to a
		// budget where it does not fit: the rest is read back by its own code.
		const previousCode =
			whole && input.previousEntry !== undefined
				? recordSummaryOf(input.previousEntry, engine, append, warn)
				: undefined;
		const summary = renderSummary({
			summary: summarizeIndex(records),
			previousSummary: whole ? previous : undefined,
			previousCode,
			carried: !whole && previous ? carriedOver(previous) : undefined,
			seed: seed && {
				text: seed.text,
				code: engine.registry.record(seed.id)?.code,
				...(seed.unlinked ? { unread: "unlinked" as const } : {}),
			},
			scope: `This compaction removed ${messages.length} messages from live history.`,
			...(input.toolsWithheld ? { toolsWithheld: true } : {}),
			maxChars: summaryCapFor(window),
		});
		return { summary, seq, codes: spans.map((s) => s.code), recorded: fresh.length };
	} catch (error) {
		// Pi's own compaction runs instead: the index must not describe a compaction that never happened.
		try {
			index.retract(seq, `not used: ${errorText(error)}`);
		} catch (retractError) {
			throw new Error(`${errorText(error)}; its seed-index record was not retracted: ${errorText(retractError)}`);
		}
		throw error;
	}
}
