/**
 * The replay engine through the real Pi SDK on a tiny synthetic session: every recorded assistant
 * message is requested once, in order; the recorded tool result reaches the next request (no
 * filesystem: the path does not exist); and the context-fold policy loads the extension in process.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ReplayPolicy } from "../../src/replay/policy-run.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { replayScript } from "../../src/replay/script.ts";
import { parseSessionText } from "../../src/replay/session-file.ts";

const lines = [
	{ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/nowhere" },
	{
		type: "message",
		id: "e1",
		parentId: null,
		timestamp: "2026-01-01T00:00:01.000Z",
		message: { role: "user", content: [{ type: "text", text: "read it" }], timestamp: 1000 },
	},
	{
		type: "message",
		id: "e2",
		parentId: "e1",
		timestamp: "2026-01-01T00:00:02.000Z",
		message: {
			role: "assistant",
			content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "/no/such/file_x.ts" } }],
			stopReason: "toolUse",
			timestamp: 2000,
		},
	},
	{
		type: "message",
		id: "e3",
		parentId: "e2",
		timestamp: "2026-01-01T00:00:03.000Z",
		message: {
			role: "toolResult",
			toolCallId: "c1",
			toolName: "read",
			content: [{ type: "text", text: "recorded body 424242" }],
			isError: false,
			timestamp: 3000,
		},
	},
	{
		type: "message",
		id: "e4",
		parentId: "e3",
		timestamp: "2026-01-01T00:00:04.000Z",
		message: {
			role: "assistant",
			content: [{ type: "text", text: "it says 424242" }],
			stopReason: "stop",
			timestamp: 4000,
		},
	},
];
const script = replayScript(parseSessionText(lines.map((l) => JSON.stringify(l)).join("\n")));

for (const policy of [
	{ name: "pi", kind: "pi" },
	{ name: "context-fold", kind: "context-fold", settings: {} },
] as ReplayPolicy[]) {
	test(`${policy.name}: one request per recorded reply, the recorded tool result in the next`, async () => {
		const run = await replayPolicy(script, policy, { window: 200_000, keepMessages: true });
		assert.deepEqual(run.divergences, {});
		assert.deepEqual(
			run.requests.map((r) => [r.kind, r.at, r.produced]),
			[
				["turn", 2000, 1],
				["turn", 4000, 3],
			],
		);
		const last = run.requests[1].messages ?? [];
		const result = last.find((m) => m.role === "toolResult");
		assert.deepEqual(result?.content, [{ type: "text", text: "recorded body 424242" }]);
		assert.equal(last[0].role, "system");
		const system = JSON.stringify(last[0]);
		// Nothing folded, so nothing to recall: context-fold declares no tool of its own either.
		assert.ok(!system.includes("recall_folded"), system);
		assert.equal(run.requests[1].hookMs === undefined, policy.kind === "pi");
	});
}
