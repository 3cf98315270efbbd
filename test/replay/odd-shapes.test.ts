/**
 * Session files of shapes the project's own recordings never have, as converters and other harnesses
 * write them: each is replayed through the real Pi SDK, and the test checks that the replay neither
 * crashes nor loses a recorded turn silently: what the recording holds reaches the requests, and
 * what the replay cannot follow is counted among the divergences.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageLike } from "../../src/core/block.ts";
import { type PolicyRun, replayPolicy } from "../../src/replay/run.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Replays `session` under plain Pi, keeping every request's messages. */
function replay(session: SyntheticSession): Promise<PolicyRun> {
	return replayPolicy(session.script(), { name: "pi", kind: "pi" }, { window: 200_000, keepMessages: true });
}

/** The text of every part of every message the last request sent. */
function lastRequestText(run: PolicyRun): string {
	const messages: MessageLike[] = run.requests.at(-1)?.messages ?? [];
	return JSON.stringify(messages.filter((m) => m.role !== "system"));
}

test("a null entry in a message's content is no part: the rest of the message is replayed", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [null, { type: "text", text: "look at the log" }] });
	session.add(2, {
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "cat log" } }],
		stopReason: "toolUse",
	});
	session.add(3, {
		role: "toolResult",
		toolCallId: "c1",
		toolName: "bash",
		content: [null, { type: "text", text: "ERROR disk full" }],
		isError: false,
	});
	session.add(4, { role: "assistant", content: [{ type: "text", text: "the disk is full" }], stopReason: "stop" });
	const run = await replay(session);
	assert.equal(run.requests.length, 2);
	assert.deepEqual(run.divergences, {});
	assert.match(lastRequestText(run), /look at the log/);
	assert.match(lastRequestText(run), /ERROR disk full/);
});
