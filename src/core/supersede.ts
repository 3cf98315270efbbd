/**
 * Superseded file versions: the result of a `read` that a later call made stale. A read of a file
 * is superseded once a later successful `write` or `edit` changed that file, or a later successful
 * `read` showed the same lines again (the same offset and limit, or the whole file: a read without
 * either that Pi cut short, see readCut, showed only its first lines). Paths compare as written, less
 * a leading `./`. Pure: the facts come from the messages alone.
 */
import { type Block, type MessageLike, resultAfter } from "./block.ts";
import { type CallFactsMemo, callFactsOf } from "./call-facts.ts";
import { readCut } from "./output-notices.ts";

const WHOLE_FILE = ":";

/** Result ids of `read` calls that a later call superseded (see the file comment); `memo` keeps call facts. */
export function supersededReads(
	messages: readonly MessageLike[],
	blocks: readonly Block[],
	memo?: CallFactsMemo,
): Set<string> {
	// Call ids some failed result carries: only a call under one of them may have failed itself.
	const failing = new Set<string>();
	for (const block of blocks) {
		if (block.kind === "toolResult" && block.isError && block.toolCallId !== undefined) failing.add(block.toolCallId);
	}
	// What later calls did: changed a file, read it whole, or read these lines of it.
	const changed = new Set<string>();
	const whole = new Set<string>();
	const read = new Set<string>();
	const out = new Set<string>();
	for (let i = blocks.length - 1; i >= 0; i--) {
		const block = blocks[i];
		const callId = block.toolCallId;
		if (block.kind !== "toolArgs" || !callId) continue;
		const name = block.toolName;
		if (name !== "read" && name !== "write" && name !== "edit") continue;
		// A call that failed read or changed nothing (its own result: a provider may repeat call ids).
		if (failing.has(callId)) {
			const answer = resultAfter(blocks, i);
			if (answer >= 0 && blocks[answer].isError) continue;
		}
		const facts = callFactsOf(messages, block, memo);
		if (!facts) continue;
		if (name !== "read") {
			changed.add(facts.path);
			continue;
		}
		const stale = changed.has(facts.path) || whole.has(facts.path) || read.has(facts.lines);
		const wholeRange = facts.range === WHOLE_FILE;
		// Its own result, looked up once: what it supersedes by and what a stale read is named by.
		const answer = stale || wholeRange ? resultAfter(blocks, i) : -1;
		if (stale) out.add(answer < 0 ? facts.result : blocks[answer].id);
		if (wholeRange && (answer < 0 || !readCut(blocks[answer].text))) whole.add(facts.path);
		read.add(facts.lines);
	}
	return out;
}
