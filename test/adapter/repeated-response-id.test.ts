/**
 * A provider that repeats its response ids (a gateway stamping `chatcmpl-1` on every reply): a reply's
 * text folds under the id, and once a compaction takes that reply out, a later reply with the same id
 * takes its place under it. The later reply is another message, not a changed one: the notice says
 * the provider repeats ids, never that a folded block changed, and the code still reads what was
 * folded.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadStub, resultTexts } from "./stub-pi.ts";

const REPLY = (k: number) =>
	`Reply ${k}: ${"the parser keeps every rule it was given and reports each one it drops. ".repeat(40)}`;

/**
 * Twelve bash calls of one turn that all carry the id `call_0` (a provider numbering its calls afresh
 * in each reply), each result with an error line, and the request that folds the older ones: the stub
 * and the codes its results folded under, oldest first.
 */
async function sameIdChecks() {
	const body = (i: number) =>
		Array.from({ length: 200 }, (_, k) =>
			k === 7 ? `Error: check ${i} failed` : `line ${k} of check ${i} output ok`,
		).join("\n");
	const stub = loadStub({ window: 40_000 });
	let ts = 1_700_000_000_000;
	stub.addMessage({ role: "user", content: "run the checks", timestamp: ts++ });
	for (let i = 0; i < 12; i++) {
		const content = [{ type: "toolCall", id: "call_0", name: "bash", arguments: { command: `check ${i}` } }];
		stub.addMessage({ role: "assistant", content, stopReason: "toolUse", timestamp: ts++ });
		const text = [{ type: "text", text: body(i) }];
		stub.addMessage({ role: "toolResult", toolCallId: "call_0", toolName: "bash", content: text, timestamp: ts++ });
	}
	stub.addMessage({
		role: "assistant",
		content: [{ type: "text", text: "all ran" }],
		stopReason: "stop",
		timestamp: ts++,
	});
	stub.addMessage({ role: "user", content: "thanks, next", timestamp: ts++ });
	stub.settings = {
		compaction: { enabled: false },
		"context-fold": {
			policy: "economic",
			coldTail: 1000,
			hotTail: 1000,
			horizon: 1000,
			foldFrom: 1920,
			minEvent: 320,
		},
	};
	await stub.emit("session_start", { reason: "startup" });
	const folded = resultTexts(await stub.request()).flatMap((t) => /^\{#([0-9a-z]{8}) FOLDED\}/.exec(t)?.[1] ?? []);
	assert.ok(folded.length >= 6, `folded ${folded.length}`);
	return { stub, folded };
}

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
		assert.match(
			said,
			/a later block carries the id of the block folded as #[0-9a-z]{8}: the provider repeats response or call ids/,
		);
		assert.doesNotMatch(said, /changed since it was folded/);
		assert.match(await stub.call("recall_folded", { codes: [code] }), /Reply 1: /);
	});

	it("says so, not that a block changed, when a compaction takes out the first of calls that share one id in a turn", async () => {
		const { stub, folded } = await sameIdChecks();
		const messages = stub.entries.filter((e) => e.type === "message");
		const keepFrom = messages.findIndex((e, i) => i > 2 && (e.message as { role: string }).role === "assistant");
		stub.compact(String(messages[keepFrom].id), "what happened so far");
		await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: false });
		stub.stderr.length = 0;
		await stub.request();
		const said = stub.stderr.join("");
		assert.doesNotMatch(said, /changed since it was folded/);
		assert.match(said, new RegExp(`carries the id of the block folded as #${folded[0]}: the provider repeats`));
		assert.match(await stub.call("recall_folded", { codes: [folded[0]] }), /^line 0 of check 0 output ok$/m);
	});

	it("names each folded block under a repeated call id by its own call's command", async () => {
		const { stub } = await sameIdChecks();
		const { stdout } = await stub.command("context-fold", "search of check 5 output");
		assert.match(stdout, /^#[0-9a-z]{8} bash: check 5 \(/m, stdout.slice(0, 400));
	});
});
