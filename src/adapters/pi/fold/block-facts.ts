/**
 * What the user's view knows of a folded block beyond its fold record, for the lines core/block-line.ts
 * makes: the arguments of the tool call it came from (found in the session entries by the call's id,
 * or in the latest request), and its size at fold time.
 */

import { argsId, splitRepeatedId } from "../../../core/block.ts";
import type { BlockFacts } from "../../../core/block-line.ts";
import type { FoldRecord } from "../../../core/fold-registry.ts";
import { blockCost } from "../../../core/tokens.ts";
import type { FoldEngine } from "./engine.ts";
import type { Ledger } from "./session-ledger.ts";

/** The tool call id a block id is anchored on (`r:<call>` for a result, `a:<call>:args` for arguments). */
function callIdOf(id: string): string | undefined {
	if (id.startsWith("r:")) return id.slice(2);
	return /^a:(.+):args$/.exec(id)?.[1];
}

/** The arguments of the tool call block `id` belongs to, if the call is found; never throws. */
function callArgs(id: string, engine: FoldEngine, ledger: Ledger | undefined): unknown {
	// A later result under a repeated call id (see repeatedId) came from the newest call with the id before it.
	const repeated = splitRepeatedId(id);
	const callId = callIdOf(repeated?.id ?? id);
	if (!callId) return undefined;
	try {
		const calls = ledger?.lookup(argsId(callId)) ?? [];
		const hit = repeated
			? calls.filter((c) => typeof c.message.timestamp === "number" && c.message.timestamp <= repeated.ts).at(-1)
			: (calls.at(-1) ?? engine.liveBlock(argsId(callId)));
		const content = hit?.message.content;
		const part = Array.isArray(content) && hit ? (content[hit.block.part] as { arguments?: unknown }) : undefined;
		return part?.arguments;
	} catch {
		return undefined;
	}
}

/** A record's facts for its line: kind, tool, the call's arguments, and its size at fold time. */
export function blockFacts(record: FoldRecord, engine: FoldEngine, ledger: Ledger | undefined): BlockFacts {
	const extent = record.chars >= 0 ? record.chars : record.bytes;
	return {
		code: record.code,
		kind: record.kind,
		tool: record.tool,
		args: callArgs(record.id, engine, ledger),
		tokens: extent === undefined ? undefined : blockCost(extent),
	};
}
