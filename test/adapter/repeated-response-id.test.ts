/**
 * A provider that repeats its response ids (a gateway stamping `chatcmpl-1` on every reply): a reply's
 * text folds under the id, and once a compaction takes that reply out, a later reply with the same id
 * takes its place under it. The later reply is another message, not a changed one: the notice says
 * the provider repeats ids, never that a folded block changed, and the code still reads what was
 * folded.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadStub } from "./stub-pi.ts";

const REPLY = (k: number) =>
	`Reply ${k}: ${"the parser keeps every rule it was given and reports each one it drops. ".repeat(40)}`;

describe("a provider that repeats response ids", () => {
	it("says so when a later reply takes a folded reply's id after a compaction, not that the block changed", async () => {
		const stub = loadStub({ window: 20_000 });
		let ts = 1_700_000_000_000;
		for (let k = 1; k <= 16; k++) {
			stub.addMessage({ role: "user", content: `question ${k}`, timestamp: ts++ });
			stub.addMessage({
				role: "assistant",
				content: [{ type: "text", text: REPLY(k) }],
				responseId: "chatcmpl-1",
				stopReason: "stop",
				timestamp: ts++,
			});
		}
		stub.addMessage({ role: "user", content: "next", timestamp: ts++ });
		// Small tails and thresholds, a long horizon: the replies outside the cold tail fold at once.
		stub.settings = {
			compaction: { enabled: false },
			"context-fold": {
				policy: "economic",
				coldTail: 1000,
				horizon: 1000,
				foldFrom: 1920,
				minEvent: 320,
				backstopAt: 14400,
			},
		};
		await stub.emit("session_start", { reason: "startup" });
		const sent = await stub.request();
		const first = sent.find((m) => m.role === "assistant") as { content: { text: string }[] };
		const code = /^\{#([0-9a-z]{8}) FOLDED\}/.exec(first.content[0].text)?.[1];
		assert.ok(code, `the first reply folded: ${first.content[0].text.slice(0, 80)}`);
		// A compaction keeps from the second question on: the first reply leaves, the second takes its id.
		const messages = stub.entries.filter((e) => e.type === "message");
		stub.compact(String(messages[2].id), "what happened so far");
		await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: false });
		await stub.request();
		const said = stub.stderr.join("");
		assert.match(said, /a later reply carries the id of #[0-9a-z]{8} .*: the provider repeats response ids/);
		assert.doesNotMatch(said, /changed since it was folded/);
		assert.match(await stub.call("recall_folded", { codes: [code] }), /Reply 1: /);
	});
});
