/**
 * The kept tail of context-fold's own compaction (compaction/kept-tail.ts) over Pi-shaped session
 * entries, with Pi's own projection and token estimate: the cut only ever moves later than Pi's, lands
 * where Pi itself could cut (never on a tool result: a kept result keeps its call), keeps what ends
 * within the hot tail, and hands every message between the two cuts to the summary.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateTokens, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { laterCut } from "../../src/adapters/pi/compaction/kept-tail.ts";

type Message = Record<string, unknown>;

/** One branch of entries, oldest first, each the parent of the next. */
function branch(items: ({ message: Message } | Record<string, unknown>)[]): SessionEntry[] {
	let parentId: string | null = null;
	return items.map((item, i) => {
		const id = `e${i}`;
		const entry = ("message" in item ? { type: "message", ...item } : item) as Record<string, unknown>;
		const out = { ...entry, id, parentId, timestamp: new Date(1_700_000_000_000 + i * 1000).toISOString() };
		parentId = id;
		return out as unknown as SessionEntry;
	});
}

const user = (text: string): { message: Message } => ({ message: { role: "user", content: text, timestamp: 1 } });
const call = (id: string): { message: Message } => ({
	message: {
		role: "assistant",
		content: [{ type: "toolCall", id, name: "bash", arguments: { command: `run ${id}` } }],
		stopReason: "toolUse",
		timestamp: 1,
	},
});
const done = (): { message: Message } => ({
	message: { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop", timestamp: 1 },
});
const result = (id: string, chars: number): { message: Message } => ({
	message: {
		role: "toolResult",
		toolCallId: id,
		toolName: "bash",
		content: [{ type: "text", text: "x".repeat(chars) }],
		isError: false,
		timestamp: 1,
	},
});

/** Eight steps of a 4000-character (1000-token) result each after one user prompt: e0 user, then call/result pairs. */
function steps(n = 8): SessionEntry[] {
	const items: { message: Message }[] = [user("start")];
	for (let i = 0; i < n; i++) items.push(call(`c${i}`), result(`c${i}`, 4000));
	return branch(items);
}

function tokensFrom(entries: SessionEntry[], id: string): number {
	const at = entries.findIndex((e) => e.id === id);
	let tokens = 0;
	for (const e of entries.slice(at)) if (e.type === "message") tokens += estimateTokens(e.message);
	return tokens;
}

describe("laterCut", () => {
	it("keeps what ends within `keep` tokens from a call, and hands everything before it to the summary", () => {
		const entries = steps();
		const cut = laterCut(entries, "e0", 2500);
		assert.ok(cut);
		const at = entries.findIndex((e) => e.id === cut.firstKeptEntryId);
		const kept = entries[at] as { type: string; message?: { role?: string } };
		assert.equal(kept.message?.role, "assistant", "a tail starts at a call, never at its result");
		const tail = tokensFrom(entries, cut.firstKeptEntryId);
		assert.ok(tail >= 2500 && tail <= 2500 + 1100, `2500 tokens and the rest of a step kept: ${tail}`);
		assert.deepEqual(
			cut.moreToSummarize,
			entries.slice(0, at).map((e) => (e as { message: unknown }).message),
			"every message between the two cuts, in order",
		);
	});

	it("never moves the cut earlier: undefined when Pi's cut keeps no more than `keep`", () => {
		const entries = steps();
		assert.equal(laterCut(entries, "e13", 5000), undefined, "Pi keeps ~2000 tokens: less than 5000");
		assert.equal(laterCut(entries, "e0", 100_000), undefined, "the whole branch is under `keep`");
		assert.equal(laterCut(entries, "nowhere", 2500), undefined, "Pi's cut is not in the branch");
	});

	it("counts a message Pi's estimate cannot read by its JSON, instead of failing the compaction", () => {
		const odd = { message: { role: "toolResult", toolCallId: "b", toolName: "bash", content: 5, timestamp: 1 } };
		const entries = branch([user("start"), call("a"), result("a", 4000), call("b"), odd, done()]);
		const cut = laterCut(entries, "e0", 20);
		assert.ok(cut);
		assert.equal(cut.firstKeptEntryId, "e3", "b's call starts the tail, its odd result kept with it");
	});

	it("keeps a result that ends within `keep` with its call", () => {
		const entries = branch([user("start"), call("a"), result("a", 4000), call("b"), result("b", 400), done()]);
		const cut = laterCut(entries, "e0", 50);
		assert.ok(cut);
		assert.equal(cut.firstKeptEntryId, "e3", "b's result ends within 50 tokens, so b's call starts the tail");
		const roles = cut.moreToSummarize.map((m) => (m as Message).role);
		assert.deepEqual(roles, ["user", "assistant", "toolResult"]);
	});

	it("keeps state-only entries just before the cut with the tail", () => {
		const entries = branch([
			user("start"),
			call("a"),
			result("a", 4000),
			{ type: "model_change", provider: "p", modelId: "m" },
			call("b"),
			result("b", 400),
		]);
		const cut = laterCut(entries, "e0", 50);
		assert.equal(cut?.firstKeptEntryId, "e3", "the model change before b's call stays");
		assert.equal(cut?.moreToSummarize.length, 3);
	});

	it("after an earlier compaction, cuts within its kept range", () => {
		const entries = steps();
		const compaction = {
			type: "compaction",
			summary: "earlier work",
			firstKeptEntryId: "e5",
			tokensBefore: 9000,
		};
		const more = branch([...entries.map((e) => e as unknown as Record<string, unknown>), compaction]);
		const withAfter = branch([
			...more.map((e) => e as unknown as Record<string, unknown>),
			call("z"),
			result("z", 4000),
			user("go on"),
		]);
		const cut = laterCut(withAfter, "e5", 1500);
		assert.ok(cut);
		const roles = cut.moreToSummarize.map((m) => (m as Message).role);
		assert.ok(!roles.includes("compactionSummary"), "the earlier summary is not summarized again");
		assert.ok(cut.moreToSummarize.length > 0);
		assert.ok(tokensFrom(withAfter, cut.firstKeptEntryId) <= 1500 + 1100);
	});
});
