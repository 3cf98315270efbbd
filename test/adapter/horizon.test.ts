/**
 * The fold horizon through the extension's own settings: left at its default, a fold event's saving
 * is counted over no more than a quarter of the requests the session has made so far, so a young
 * session's event must repay its cache rewrite within that; a horizon the user set is taken as given.
 * The session below has made 10 requests over a warm cache: folding its one old read (15k tokens,
 * then 20k tokens of user text no fold may touch) repays the rewrite in about 15 requests, within a
 * horizon of 20 but not of 2.5.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { policyConfigOf, resolveConfig } from "../../src/adapters/pi/config.ts";
import { loadStub, resultTexts } from "./stub-pi.ts";

const FOLDED = /^\{#[0-9a-z]{8} FOLDED\}/;

/** A session of 10 requests: one 15k-token read, then nine short replies to long user messages. */
function youngSession(settings: Record<string, unknown>) {
	const stub = loadStub({ window: 200_000 });
	stub.settings = { "context-fold": { policy: "working-set", ...settings } };
	let ts = Date.now() - 60_000;
	const usage = { input: 50, output: 5, cacheRead: 2_000, cacheWrite: 50 };
	const reply = (content: unknown[], i: number, stopReason: string) => ({
		role: "assistant",
		content,
		responseId: `resp_${i}`,
		provider: "fake",
		model: "fake-model",
		usage,
		stopReason,
		timestamp: ts++,
	});
	stub.addMessage({ role: "user", content: "read the notes", timestamp: ts++ });
	stub.addMessage(
		reply([{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "notes" } }], 0, "toolUse"),
	);
	stub.addMessage({
		role: "toolResult",
		toolCallId: "call_0",
		toolName: "read",
		content: [{ type: "text", text: "lorem ipsum dolor sit amet\n".repeat(2_200) }],
		isError: false,
		timestamp: ts++,
	});
	for (let i = 1; i < 10; i++) {
		stub.addMessage(reply([{ type: "text", text: "noted" }], i, "stop"));
		stub.addMessage({ role: "user", content: "and then some more words ".repeat(350), timestamp: ts++ });
	}
	return stub;
}

async function foldsTheRead(settings: Record<string, unknown>): Promise<boolean> {
	const stub = youngSession(settings);
	await stub.emit("session_start", { reason: "startup" });
	const [read] = resultTexts(await stub.request());
	return FOLDED.test(read);
}

describe("the fold horizon", () => {
	it("left at its default, a young session's event must repay within a quarter of the requests it has made", async () => {
		assert.equal(await foldsTheRead({}), false);
	});

	it("set by the user, it is taken as given, even at the default's value", async () => {
		assert.equal(await foldsTheRead({ horizon: 20 }), true);
	});

	it("reaches the policy only when the user set it", () => {
		assert.equal(policyConfigOf(resolveConfig({}, {})).horizon, undefined);
		assert.equal(policyConfigOf(resolveConfig({ horizon: 30 }, {})).horizon, 30);
		assert.equal(policyConfigOf(resolveConfig({}, { CONTEXTFOLD_HORIZON: "12" })).horizon, 12);
		assert.equal(resolveConfig({}, {}).config.horizon, 20, "the settings still show the default");
		assert.equal(policyConfigOf(resolveConfig({}, {})).hotTail, undefined, "a default hot tail: the profile's");
		assert.equal(policyConfigOf(resolveConfig({ hotTail: 6000 }, {})).hotTail, 6000);
		assert.equal(resolveConfig({}, {}).config.hotTail, 4000);
	});
});
