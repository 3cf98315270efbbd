/**
 * The project's own recorded Pi sessions (test/fixtures/sessions/, made by
 * scripts/record-sessions.ts) really have what the replay, real-session and summary tests need: a
 * few hundred model requests, a context that crosses every fold threshold of a 200k window and
 * reaches Pi's compaction threshold, a compaction, a branch abandoned with /tree, an aborted turn,
 * images, parallel tool calls, unsigned thinking, failing commands with stack traces, large reads
 * and writes, real cache usage and a realistic clock. Each feature is its own test, so removing it
 * from the corpus turns exactly that test red.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../e2e/harness/pi-runner.ts";
import {
	blocksOf,
	type CorpusSession,
	type Entry,
	loadCorpus,
	type Message,
	messagesOf,
	textOf,
	toolCallsOf,
} from "./session-tree.ts";

const corpus = loadCorpus();
const all = <T>(f: (s: CorpusSession) => T[]): T[] => corpus.flatMap(f);
const assistants = (s: CorpusSession) => messagesOf(s).filter((m) => m.role === "assistant");
const toolResults = (s: CorpusSession, tool?: string) =>
	messagesOf(s).filter((m) => m.role === "toolResult" && (tool === undefined || m.toolName === tool));
const calls = (s: CorpusSession, tool: string) =>
	assistants(s)
		.flatMap(toolCallsOf)
		.filter((c) => c.name === tool);
const ms = (iso: string) => new Date(iso).getTime();

describe("recorded session corpus", () => {
	it("has at least two sessions, at most 4 MB in all", () => {
		assert.ok(corpus.length >= 2, `sessions: ${corpus.map((s) => s.name).join(", ")}`);
		const total = corpus.reduce((n, s) => n + s.bytes, 0);
		assert.ok(total <= 4 * 1024 * 1024, `${total} bytes`);
	});

	it("is in the current session format (v3 header, ids and parent ids)", () => {
		for (const s of corpus) {
			assert.equal(s.header.type, "session", s.name);
			assert.equal(s.header.version, 3, s.name);
			const ids = new Set(s.entries.map((e) => e.id));
			for (const e of s.entries) {
				assert.match(e.id, /^[0-9a-f]{8}$/, `${s.name}: ${JSON.stringify(e).slice(0, 120)}`);
				assert.ok(e.parentId === null || ids.has(e.parentId), `${s.name}: dangling parent of ${e.id}`);
			}
		}
	});

	it("holds a few hundred model requests", () => {
		const requests = (s: CorpusSession) =>
			assistants(s).length + s.entries.filter((e) => e.type === "compaction" || e.type === "branch_summary").length;
		for (const s of corpus) assert.ok(requests(s) >= 50, `${s.name}: ${requests(s)} requests`);
		const total = corpus.reduce((n, s) => n + requests(s), 0);
		assert.ok(total >= 200, `${total} requests in all`);
	});

	it("reports usage with cache reads and writes on every completed response", () => {
		for (const s of corpus) {
			const done = assistants(s).filter((m) => m.stopReason !== "aborted");
			assert.ok(
				done.every((m) => m.usage && m.usage.totalTokens > 0),
				`${s.name}: a response without usage`,
			);
			assert.ok(
				done.some((m) => (m.usage?.cacheRead ?? 0) > 0),
				`${s.name}: no cache read`,
			);
			assert.ok(
				done.some((m) => (m.usage?.cacheWrite ?? 0) > 0),
				`${s.name}: no cache write`,
			);
		}
	});

	it("reaches Pi's compaction threshold of a 200k window in one session (peak context >= 185k tokens)", () => {
		const peak = Math.max(...all((s) => assistants(s).map((m) => m.usage?.totalTokens ?? 0)));
		assert.ok(peak >= 185_000, `peak ${peak}`);
	});

	it("has a compaction entry whose first kept entry is on its branch", () => {
		const compactions = all((s) => s.entries.filter((e) => e.type === "compaction").map((e) => ({ s, e })));
		assert.ok(compactions.length >= 1, "no compaction");
		for (const { s, e } of compactions) {
			assert.ok((e.summary ?? "").length > 200, `${s.name}: short summary`);
			assert.ok(
				s.branch.some((b) => b.id === e.firstKeptEntryId),
				`${s.name}: firstKeptEntryId ${e.firstKeptEntryId} is not on the branch`,
			);
		}
	});

	it("has a branch point whose abandoned side the active branch leaves out", () => {
		const found = corpus.filter((s) => {
			const onBranch = new Set(s.branch.map((e) => e.id));
			const forks = [...s.children.values()].filter((kids) => kids.length >= 2);
			const abandoned = s.entries.filter((e) => e.type === "message" && !onBranch.has(e.id));
			return forks.length > 0 && abandoned.length > 0;
		});
		assert.ok(found.length >= 1, "no session with an abandoned branch");
		assert.ok(
			found.some((s) => s.entries.some((e) => e.type === "branch_summary")),
			"no branch summary (the /tree navigation was made without one)",
		);
	});

	it("has an aborted assistant message", () => {
		assert.ok(all(assistants).some((m) => m.stopReason === "aborted"));
	});

	it("has an image tool result", () => {
		const images = all((s) => toolResults(s)).flatMap((m) =>
			blocksOf(m).filter((b) => b.type === "image" && b.mimeType === "image/png" && (b.data ?? "").length > 100),
		);
		assert.ok(images.length >= 1);
	});

	it("has parallel tool calls (an assistant message with several)", () => {
		assert.ok(all(assistants).some((m) => toolCallsOf(m).length >= 2));
	});

	it("has unsigned thinking", () => {
		const unsigned = all(assistants).flatMap((m) =>
			blocksOf(m).filter(
				(b) => b.type === "thinking" && (b.thinking ?? "").length > 0 && !b.thinkingSignature && !b.redacted,
			),
		);
		assert.ok(unsigned.length >= 10, `${unsigned.length} unsigned thinking blocks`);
	});

	it("has failing tool results (isError)", () => {
		const errors = all((s) => toolResults(s)).filter((m) => m.isError === true);
		assert.ok(errors.length >= 10, `${errors.length} error results`);
		assert.ok(
			errors.some((m) => m.toolName === "edit"),
			"no failed edit",
		);
	});

	it("has bash output with stack traces and warnings", () => {
		const bash = all((s) => toolResults(s, "bash")).map(textOf);
		assert.ok(
			bash.some((t) => /^\s+at \S.*:\d+:\d+\)?$/m.test(t)),
			"no stack-trace line",
		);
		assert.ok(
			bash.some((t) => /\bDeprecationWarning\b/.test(t)),
			"no warning",
		);
		assert.ok(
			bash.some((t) => /error TS\d+/.test(t)),
			"no compiler error",
		);
	});

	it("has large reads and long write and edit arguments", () => {
		const reads = all((s) => toolResults(s, "read")).map((m) => textOf(m).length);
		assert.ok(Math.max(...reads) >= 20_000, `largest read ${Math.max(...reads)} chars`);
		const writes = all((s) => calls(s, "write")).map((c) => String(c.arguments?.content ?? "").length);
		assert.ok(Math.max(...writes) >= 8_000, `longest write ${Math.max(...writes)} chars`);
		const edits = all((s) => calls(s, "edit")).map((c) =>
			((c.arguments?.edits ?? []) as { oldText: string; newText: string }[]).reduce(
				(n, e) => n + e.oldText.length + e.newText.length,
				0,
			),
		);
		assert.ok(Math.max(...edits) >= 4_000, `longest edit ${Math.max(...edits)} chars`);
	});

	it("uses a variety of tools and user requests", () => {
		const used = new Set(all((s) => assistants(s).flatMap(toolCallsOf)).map((c) => c.name));
		for (const tool of ["bash", "read", "write", "edit", "grep", "find", "ls"]) assert.ok(used.has(tool), tool);
		for (const s of corpus) {
			const users = messagesOf(s).filter((m) => m.role === "user");
			assert.ok(users.length >= 10, `${s.name}: ${users.length} user messages`);
		}
		assert.ok(
			all(messagesOf).some((m) => m.role === "bashExecution"),
			"no user ! command",
		);
	});

	it("has a plausible clock: ordered, think time, and idle gaps past the cache TTL", () => {
		for (const s of corpus) {
			let previous = ms(s.header.timestamp ?? "");
			const gaps: number[] = [];
			for (const e of s.entries) {
				const t = ms(e.timestamp);
				assert.ok(t >= previous, `${s.name}: ${e.id} goes back in time`);
				const m: Message | undefined = e.message;
				if (m?.timestamp !== undefined) assert.ok(m.timestamp <= t, `${s.name}: message ${e.id} after its entry`);
				if (isUserTurn(e)) gaps.push(t - previous);
				previous = t;
			}
			assert.ok(gaps.filter((g) => g > 5 * 60_000).length >= 2, `${s.name}: fewer than two breaks over 5 minutes`);
			assert.ok(
				gaps.some((g) => g > 60 * 60_000),
				`${s.name}: no break over an hour`,
			);
			assert.ok(gaps.filter((g) => g >= 10_000).length >= gaps.length / 2, `${s.name}: users answer instantly`);
		}
	});

	it("carries no path of the machine it was recorded on", () => {
		for (const s of corpus) {
			const text = JSON.stringify(s.entries);
			assert.ok(!text.includes(REPO_ROOT), `${s.name} mentions ${REPO_ROOT}`);
		}
	});
});

function isUserTurn(e: Entry): boolean {
	return e.type === "message" && e.message?.role === "user";
}
