/**
 * Which seed-index records belong to a session branch. The index file is one per session and also
 * holds records written on branches the user navigated away from with `/tree`; a summary or a
 * handoff of one branch must state only that branch's facts and carry only pointers that resolve
 * there.
 */
import type { SeedRecord } from "./seed-index.ts";

/** What a branch is, for the filter: its entry ids, and the code each of its fold records has. */
export interface BranchView {
	/** True when the session entry `id` lies on the branch (root to current leaf). */
	hasEntry(id: string): boolean;
	/** The code of the branch's fold record for block `id`, if it has one. */
	codeOf(id: string): string | undefined;
}

/**
 * The records of `branch`. A record that names the leaf it was written at belongs to the branch
 * when that entry does: every message it was extracted from lies on the path to that leaf. A
 * record without a leaf (written before leaves were recorded, or by context-fold 0.5.1) belongs when
 * every one of its spans is a fold record of the branch under the same code, so that each of its
 * pointers resolves there.
 */
export function recordsOnBranch(records: readonly SeedRecord[], branch: BranchView): SeedRecord[] {
	return records.filter((record) =>
		record.leaf !== undefined
			? branch.hasEntry(record.leaf)
			: record.spans.every((span) => branch.codeOf(span.id) === span.code),
	);
}
