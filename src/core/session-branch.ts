/**
 * A session's branch as Pi reads one from its file: the entries on the path from a root to the last
 * entry, found by following each entry's `parentId`. Pure; the session reader of the replay and the
 * parent session of a seeded one both walk a file's entries with it.
 */

/** The fields a branch is walked by. */
export interface Linked {
	id?: unknown;
	parentId?: unknown;
}

/**
 * The branch that ends at the last of `entries`, root first. With ids (v2/v3) each step goes to the
 * entry its `parentId` names (a branch left with /tree is not on it), until an entry without one or
 * whose parent is not among them (Pi takes such an orphan as a root: a converter may drop the
 * entries a chain passed through); an entry without an id is on no branch but as the last. Without
 * any ids (pre-v2), every entry, in order, as Pi's migration chains them. `looped` names the id at
 * which a chain of `parentId`s came back on itself (a damaged file): the branch ends before it.
 */
export function lastBranch<E extends Linked>(entries: readonly E[]): { branch: E[]; looped?: string } {
	if (!entries.some((e) => typeof e.id === "string")) return { branch: [...entries] };
	const byId = new Map<string, E>();
	for (const entry of entries) if (typeof entry.id === "string") byId.set(entry.id, entry);
	const branch: E[] = [];
	const seen = new Set<E>();
	for (let entry = entries.at(-1); entry; ) {
		if (seen.has(entry)) return { branch: branch.reverse(), looped: String(entry.id) };
		seen.add(entry);
		branch.push(entry);
		const parent = entry.parentId;
		entry = typeof parent === "string" ? byId.get(parent) : undefined;
	}
	return { branch: branch.reverse() };
}
