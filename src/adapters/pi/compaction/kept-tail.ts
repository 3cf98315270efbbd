/**
 * The kept tail of context-fold's own compaction. Pi cuts a compaction where its
 * `compaction.keepRecentTokens` (20k by default) of the newest messages stay raw; under the economic
 * policy the backstop compaction keeps only what the policy itself keeps raw, its hot tail: every
 * entry that ends within the newest `keep` tokens (Pi's estimate), as the policy's tail keeps every
 * block that does. The cut lies at the oldest such entry, or before it at the nearest entry Pi itself
 * could cut at (one carrying a user, assistant, bash, custom or summary message; never a tool result,
 * so a kept result keeps its call), and never before Pi's own cut. The messages between Pi's cut and
 * this one join those the summary covers, so every one of them stays recallable.
 */
import {
	buildSessionProjection,
	estimateTokens,
	type ProjectedSessionEntry,
	type SessionEntry,
} from "@earendil-works/pi-coding-agent";

/** Roles of the messages a kept tail may start at (the roles Pi's own cut accepts). */
const CUT_ROLES: ReadonlySet<string> = new Set([
	"user",
	"assistant",
	"bashExecution",
	"custom",
	"branchSummary",
	"compactionSummary",
]);

function cuttable(entry: ProjectedSessionEntry): boolean {
	return entry.sourceEntry.type !== "compaction" && entry.messages.some((m) => CUT_ROLES.has(m.role));
}

/** What an entry adds to the compacted span, as Pi's own preparation takes it (no system messages). */
function compacted(entry: ProjectedSessionEntry): unknown[] {
	return entry.sourceEntry.type === "compaction" ? [] : entry.messages.filter((m) => m.role !== "system");
}

/**
 * Pi's estimate of a message; for one Pi's estimate cannot read (a malformed message another tool
 * wrote), its JSON at four characters a token, so that one odd message does not fail the compaction.
 */
function tokensOf(message: unknown): number {
	try {
		return estimateTokens(message as Parameters<typeof estimateTokens>[0]);
	} catch {
		return Math.ceil((JSON.stringify(message) ?? "").length / 4);
	}
}

/** A cut later than Pi's: the entry the kept tail starts at, and the messages between Pi's cut and it. */
export interface LaterCut {
	firstKeptEntryId: string;
	moreToSummarize: unknown[];
}

/**
 * The cut that keeps the entries of `entries` (the branch, oldest first) ending within the newest
 * `keep` tokens raw, when it lies after Pi's cut at `piFirstKept`; undefined when Pi's cut keeps no
 * more than that already, or when Pi's cut is not in the branch's context.
 */
export function laterCut(entries: SessionEntry[], piFirstKept: string, keep: number): LaterCut | undefined {
	const projected = buildSessionProjection(entries).entries;
	const piCut = projected.findIndex((entry) => entry.sourceEntry.id === piFirstKept);
	if (piCut < 0) return undefined;
	let after = 0;
	let cut = projected.length;
	for (let i = projected.length - 1; i > piCut && after < keep; i--) {
		cut = i;
		for (const message of projected[i].messages) after += tokensOf(message);
	}
	if (after < keep) return undefined;
	while (cut > piCut && !cuttable(projected[cut])) cut--;
	if (cut <= piCut) return undefined;
	// State-only entries just before the cut (a model or thinking-level change) stay with the tail.
	while (
		cut - 1 > piCut &&
		projected[cut - 1].messages.length === 0 &&
		projected[cut - 1].sourceEntry.type !== "compaction"
	)
		cut--;
	return {
		firstKeptEntryId: projected[cut].sourceEntry.id,
		moreToSummarize: projected.slice(piCut, cut).flatMap(compacted),
	};
}
