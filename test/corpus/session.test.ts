/**
 * The session-corpus loader: a synthetic v3 session (an abandoned /tree branch, a branch summary, a
 * compaction, a context edit) loads along its active branch only, root to leaf, in the three
 * sequences the replays use; a pre-v2 session loads in file order; every sequence matches Pi's own
 * `buildSessionProjection` (after Pi's in-memory migration) on the synthetic sessions and on every
 * session of every available corpus; the corpora are found (or reported absent) as documented.
 *
 * This file also prints the corpora line once per `npm test` run (which folders were found, each
 * session of them checked against Pi's projection, and how to add an absent one).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { buildSessionProjection, migrateSessionEntries, parseSessionEntries } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../../src/core/block.ts";
import { corporaLine, listCorpora, listSessions, loadSession, PROJECT_SESSIONS } from "./corpora.ts";
import {
	activeBranch,
	branchMessages,
	branchRequests,
	contextMessages,
	type Entry,
	parseSessionText,
	readSessionFile,
} from "./session.ts";

/** The corpora as found when the file loads, before any test points the variables elsewhere. */
const found = corporaLine();

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Entry `id` (parent `parent`), n seconds after T0. */
function base(id: string, parent: string | null, n: number): Entry {
	return { id, parentId: parent, timestamp: new Date(T0 + n * 1000).toISOString() };
}

function user(id: string, parent: string | null, n: number, text: string): Entry {
	return {
		type: "message",
		...base(id, parent, n),
		message: { role: "user", content: [{ type: "text", text }], timestamp: T0 + n * 1000 },
	};
}

function assistant(id: string, parent: string, n: number, text: string, call?: string): Entry {
	const content: unknown[] = [{ type: "text", text }];
	if (call) content.push({ type: "toolCall", id: call, name: "bash", arguments: { command: `echo ${call}` } });
	return {
		type: "message",
		...base(id, parent, n),
		message: { role: "assistant", content, stopReason: call ? "toolUse" : "stop", timestamp: T0 + n * 1000 },
	};
}

function result(id: string, parent: string, n: number, call: string): Entry {
	return {
		type: "message",
		...base(id, parent, n),
		message: {
			role: "toolResult",
			toolCallId: call,
			toolName: "bash",
			content: [{ type: "text", text: `out ${call}` }],
			isError: false,
			timestamp: T0 + n * 1000,
		},
	};
}

/**
 * A v3 session: u1 → a1 (call c1) → r1 → a2; then u2 → a3, abandoned with /tree back to a2, whose
 * summary starts the active branch: bs → u3 → a4 (call c4) → r4 → compaction (kept from u3) → u4 →
 * a5, plus a context edit of r4 and a custom (state) entry that is never a message.
 */
const V3: Entry[] = [
	{ type: "session", version: 3, id: "s-1", timestamp: new Date(T0).toISOString(), cwd: "/tmp/x" },
	{ type: "model_change", ...base("m0", null, 0), provider: "p", modelId: "m" },
	user("u1", "m0", 1, "first task"),
	assistant("a1", "u1", 2, "running", "c1"),
	result("r1", "a1", 3, "c1"),
	assistant("a2", "r1", 4, "done one"),
	user("u2", "a2", 5, "abandoned ask"),
	assistant("a3", "u2", 6, "abandoned answer"),
	{ type: "branch_summary", ...base("bs", "a2", 7), fromId: "a3", summary: "tried the abandoned ask" },
	user("u3", "bs", 8, "second task"),
	assistant("a4", "u3", 9, "running", "c4"),
	result("r4", "a4", 10, "c4"),
	{ type: "custom", ...base("x1", "r4", 11), customType: "state", data: { n: 1 } },
	{ type: "context_edit", ...base("e1", "x1", 12), targetId: "r4", replacement: { content: "edited c4" } },
	{
		type: "compaction",
		...base("k1", "e1", 13),
		summary: "compacted u1..a2",
		firstKeptEntryId: "u3",
		tokensBefore: 1234,
		systemMessage: { role: "system", content: "checkpoint", timestamp: T0 + 13_000 },
	},
	user("u4", "k1", 14, "third task"),
	assistant("a5", "u4", 15, "done three"),
];

const jsonl = (entries: readonly Entry[]): string => `${entries.map((e) => JSON.stringify(e)).join("\n")}\n`;

/** A compact label per message: role and text (or summary) for reading the sequences in asserts. */
function labels(messages: readonly MessageLike[]): string[] {
	return messages.map((m) => {
		if (typeof m.summary === "string") return `${m.role}:${m.summary}`;
		const parts = (Array.isArray(m.content) ? m.content : []) as { type?: string; text?: string }[];
		return `${m.role}:${parts.find((p) => p.type === "text")?.text ?? ""}`;
	});
}

/**
 * Pi's projection of a session text (parsed and migrated by Pi) with the `leaf`-th entry of the
 * file (header not counted; default: the last) as the leaf, system messages left out.
 */
function piContext(text: string, leaf?: number): MessageLike[] {
	const entries = parseSessionEntries(text);
	migrateSessionEntries(entries);
	const body = entries.filter((e) => e.type !== "session") as Parameters<typeof buildSessionProjection>[0];
	const leafId = body[leaf ?? body.length - 1]?.id ?? null;
	const messages = buildSessionProjection(body, leafId).messages as unknown as MessageLike[];
	return messages.filter((m) => m.role !== "system");
}

/**
 * Asserts that two message sequences are equal, naming the first message that differs: a real
 * session holds a thousand messages, and a diff of all of them takes gigabytes to print.
 */
function sameMessages(actual: readonly MessageLike[], expected: readonly MessageLike[], what: string): void {
	const differs = actual.findIndex((m, i) => !isDeepStrictEqual(m, expected[i]));
	if (differs < 0 && actual.length === expected.length) return;
	const at = differs < 0 ? Math.min(actual.length, expected.length) : differs;
	assert.fail(
		`${what}: ${actual.length} messages where Pi has ${expected.length}; the first to differ is message ${at}: ${labels(actual.slice(at, at + 1))} where Pi has ${labels(expected.slice(at, at + 1))}`,
	);
}

/**
 * Where requests are made on `branch`: the file position (in `entries`) of each assistant message's
 * parent, in branch order.
 */
function requestLeaves(entries: readonly Entry[], branch: readonly Entry[]): number[] {
	const position = new Map(entries.map((e, i) => [e, i] as const));
	const leaves: number[] = [];
	for (let i = 1; i < branch.length; i++) {
		const m = branch[i].message as MessageLike | undefined;
		if (branch[i].type === "message" && m?.role === "assistant") leaves.push(position.get(branch[i - 1])!);
	}
	return leaves;
}

describe("a synthetic v3 session with an abandoned branch and a compaction", () => {
	const parsed = parseSessionText(jsonl(V3));
	const branch = activeBranch(parsed, "synthetic");

	it("follows the active branch from the last entry to the root", () => {
		assert.equal(parsed.header?.type, "session");
		assert.deepEqual(
			branch.map((e) => e.id),
			["m0", "u1", "a1", "r1", "a2", "bs", "u3", "a4", "r4", "x1", "e1", "k1", "u4", "a5"],
		);
	});

	it("branchMessages: the whole branch root to leaf as recorded, the abandoned branch, the compaction and the context edit left out", () => {
		const messages = labels(branchMessages(branch));
		assert.deepEqual(messages, [
			"user:first task",
			"assistant:running",
			"toolResult:out c1",
			"assistant:done one",
			"branchSummary:tried the abandoned ask",
			"user:second task",
			"assistant:running",
			"toolResult:out c4",
			"user:third task",
			"assistant:done three",
		]);
		assert.ok(!messages.some((m) => m.includes("abandoned ask") && m.startsWith("user")));
		assert.ok(!messages.some((m) => m.includes("abandoned answer")));
	});

	it("contextMessages: the compaction summary, the kept entries from firstKeptEntryId, then the rest", () => {
		assert.deepEqual(labels(contextMessages(branch)), [
			"compactionSummary:compacted u1..a2",
			"user:second task",
			"assistant:running",
			"toolResult:edited c4",
			"user:third task",
			"assistant:done three",
		]);
	});

	it("branchRequests: the context before each assistant message, compacted from the compaction on", () => {
		assert.deepEqual(branchRequests(branch).map(labels), [
			["user:first task"],
			["user:first task", "assistant:running", "toolResult:out c1"],
			[
				"user:first task",
				"assistant:running",
				"toolResult:out c1",
				"assistant:done one",
				"branchSummary:tried the abandoned ask",
				"user:second task",
			],
			[
				"compactionSummary:compacted u1..a2",
				"user:second task",
				"assistant:running",
				"toolResult:edited c4",
				"user:third task",
			],
		]);
	});

	it("keeps one object per message across requests (identity marks the unchanged prefix)", () => {
		const [, second, third] = branchRequests(branch);
		for (let i = 0; i < second.length; i++) assert.equal(third[i], second[i]);
		assert.equal(branchRequests(branch)[3][0], branchRequests(branch)[3][0]);
	});

	it("matches Pi's own projection at the leaf and at every request point", () => {
		const text = jsonl(V3);
		assert.deepEqual(contextMessages(branch), piContext(text));
		const requests = branchRequests(branch);
		const leaves = requestLeaves(parsed.entries, branch);
		assert.equal(leaves.length, requests.length);
		leaves.forEach((leaf, i) => {
			assert.deepEqual(requests[i], piContext(text, leaf), `request ${i}`);
		});
	});

	it("a branch that ends on a user message gets one more request: the context at the leaf", () => {
		const open = [...V3, user("u5", "a5", 16, "fourth task")];
		const requests = branchRequests(activeBranch(parseSessionText(jsonl(open))));
		assert.equal(requests.length, 5);
		assert.deepEqual(labels(requests[4]).slice(-2), ["assistant:done three", "user:fourth task"]);
	});
});

describe("a pre-v2 session (no ids)", () => {
	const PRE_V2: Entry[] = [
		{ type: "session", timestamp: new Date(T0).toISOString(), cwd: "/tmp/x" },
		...[
			user("", null, 1, "one"),
			assistant("", "", 2, "two", "c1"),
			result("", "", 3, "c1"),
			{ type: "thinking_level_change", timestamp: new Date(T0 + 3500).toISOString(), thinkingLevel: "high" },
			assistant("", "", 4, "four"),
			{
				type: "message",
				timestamp: new Date(T0 + 5000).toISOString(),
				message: { role: "hookMessage", customType: "h", content: "five", display: true, timestamp: T0 + 5000 },
			},
		].map(({ id: _id, parentId: _parent, ...rest }) => rest as Entry),
	];

	it("loads every entry in file order, migrated the way Pi migrates it", () => {
		const parsed = parseSessionText(jsonl(PRE_V2));
		const branch = activeBranch(parsed);
		assert.equal(branch.length, PRE_V2.length - 1);
		const messages = branchMessages(branch);
		assert.deepEqual(labels(messages), [
			"user:one",
			"assistant:two",
			"toolResult:out c1",
			"assistant:four",
			"custom:",
		]);
		assert.equal(messages[4].content, "five");
		assert.deepEqual(contextMessages(branch), messages);
		assert.deepEqual(messages, piContext(jsonl(PRE_V2)));
	});

	it("a compaction keeps from the entry its firstKeptEntryIndex names, as Pi's migration reads it", () => {
		const compaction = (index: number): Entry => ({
			type: "compaction",
			timestamp: new Date(T0 + 6000).toISOString(),
			summary: "SUMMARY",
			firstKeptEntryIndex: index,
			tokensBefore: 10,
		});
		const later = { ...PRE_V2[1], timestamp: new Date(T0 + 7000).toISOString() };
		// Position 3 of the file's lines, the header counted: the tool result.
		const text = jsonl([...PRE_V2, compaction(3), later]);
		const context = contextMessages(activeBranch(parseSessionText(text)));
		assert.deepEqual(labels(context), [
			"compactionSummary:SUMMARY",
			"toolResult:out c1",
			"assistant:four",
			"custom:",
			"user:one",
		]);
		assert.deepEqual(context, piContext(text));
		// A position past the file, or the header's: Pi keeps nothing before the compaction.
		for (const index of [0, 99]) {
			const bad = jsonl([...PRE_V2, compaction(index), later]);
			const kept = contextMessages(activeBranch(parseSessionText(bad)));
			assert.deepEqual(labels(kept), ["compactionSummary:SUMMARY", "user:one"], `index ${index}`);
			assert.deepEqual(kept, piContext(bad), `index ${index}`);
		}
	});
});

describe("a header that names no version, over entries with ids and a branch", () => {
	it("is one branch in file order, as Pi migrates a version 1 file whatever ids it holds", () => {
		const header = { type: "session", id: "h", timestamp: new Date(T0).toISOString(), cwd: "/tmp/x" };
		const entries = [
			user("e1", null, 1, "one"),
			assistant("e2", "e1", 2, "two"),
			// A branch left with /tree in a v2+ file: e3 goes back to e1.
			user("e3", "e1", 3, "three"),
			assistant("e4", "e3", 4, "four"),
		];
		const text = jsonl([header, ...entries]);
		const context = contextMessages(activeBranch(parseSessionText(text)));
		assert.deepEqual(labels(context), ["user:one", "assistant:two", "user:three", "assistant:four"]);
		assert.deepEqual(context, piContext(text));
		const versioned = jsonl([{ ...header, version: 3 }, ...entries]);
		assert.deepEqual(labels(contextMessages(activeBranch(parseSessionText(versioned)))), [
			"user:one",
			"user:three",
			"assistant:four",
		]);
	});
});

describe("a parentId that names no entry", () => {
	it("starts the branch there, as Pi takes an orphan for a root", () => {
		const text = jsonl([
			V3[0],
			user("u0", null, 1, "dropped by the converter"),
			assistant("a1", "gone", 2, "reply to a dropped entry"),
			user("u2", "a1", 3, "next ask"),
			assistant("a3", "u2", 4, "answer"),
		]);
		const branch = activeBranch(parseSessionText(text), "d.jsonl");
		assert.deepEqual(
			branch.map((e) => e.id),
			["a1", "u2", "a3"],
		);
		assert.deepEqual(contextMessages(branch), piContext(text));
	});
});

describe("entries without an id among entries with one", () => {
	it("are on no branch, as in Pi, unless the last one", () => {
		const modelChange = { type: "model_change", provider: "p", modelId: "m" };
		const text = jsonl([
			V3[0],
			modelChange,
			user("u1", null, 1, "ask"),
			{ type: "message", parentId: "u1", message: { role: "assistant", content: [{ type: "text", text: "lost" }] } },
			assistant("a2", "u1", 2, "answer"),
		]);
		const branch = activeBranch(parseSessionText(text), "m.jsonl");
		assert.deepEqual(
			branch.map((e) => e.id),
			["u1", "a2"],
		);
		assert.deepEqual(contextMessages(branch), piContext(text));
		const trailing = parseSessionText(jsonl([...V3, { ...modelChange, parentId: "a5" }]));
		assert.deepEqual(activeBranch(trailing).slice(0, -1), activeBranch(parseSessionText(jsonl(V3))));
	});
});

describe("lines that are not JSON are skipped, as Pi 1.6 skips them", () => {
	it("a torn last line and a bad escape: the same entries as Pi's own parser, their line numbers kept", () => {
		const lines = jsonl(V3).trimEnd().split("\n");
		const bad = '{"type":"message","id":"zz","text":"C:\\q"}';
		const text = [...lines.slice(0, 3), bad, ...lines.slice(3), '{"type":"message","id":"9'].join("\n");
		const parsed = parseSessionText(text);
		assert.deepEqual(parsed.unread, [4, lines.length + 2]);
		assert.deepEqual([parsed.header, ...parsed.entries], parseSessionEntries(text));
		assert.deepEqual(parsed, { ...parseSessionText(jsonl(V3)), unread: parsed.unread });
	});

	it("a line that is JSON but no object is skipped too", () => {
		const parsed = parseSessionText('{"type":"session","id":"s"}\n42\n[1]\nnull\n{"type":"message","id":"a"}\n');
		assert.deepEqual(parsed.unread, [2, 3, 4]);
		assert.deepEqual(
			parsed.entries.map((e) => e.id),
			["a"],
		);
	});
});

describe("the corpora", () => {
	const saved = { shared: process.env.CONTEXTFOLD_SESSIONS, more: process.env.CONTEXTFOLD_SESSIONS_MORE };
	const dir = mkdtempSync(join(tmpdir(), "cf-corpora-"));
	const restore = (variable: string, value: string | undefined): void => {
		if (value === undefined) delete process.env[variable];
		else process.env[variable] = value;
	};
	after(() => {
		restore("CONTEXTFOLD_SESSIONS", saved.shared);
		restore("CONTEXTFOLD_SESSIONS_MORE", saved.more);
		rmSync(dir, { recursive: true, force: true });
	});
	const folderOf = (name: string, files: string[]): string => {
		const folder = join(dir, name);
		mkdirSync(folder, { recursive: true });
		for (const file of files)
			writeFileSync(join(folder, file), file.endsWith(".jsonl") ? jsonl(V3) : "not a session");
		return folder;
	};

	it("variables naming missing folders mean both optional corpora are absent, and the line says so", () => {
		process.env.CONTEXTFOLD_SESSIONS = join(dir, "missing");
		process.env.CONTEXTFOLD_SESSIONS_MORE = join(dir, "missing-more");
		const [, shared, more] = listCorpora();
		assert.equal(shared.present, false);
		assert.deepEqual(shared.sessions, []);
		assert.equal(more.present, false);
		assert.ok(listSessions().every((s) => s.corpus === "project"));
		assert.match(
			corporaLine(),
			/; shared: absent \(CONTEXTFOLD_SESSIONS=.*missing is not a folder\); more: absent \(CONTEXTFOLD_SESSIONS_MORE=.*missing-more is not a folder\)$/,
		);
	});

	it("a shared folder lists every *.jsonl in it by name, whatever the names", () => {
		const folder = folderOf("sessions", ["b.jsonl", "a.jsonl", "notes.md"]);
		process.env.CONTEXTFOLD_SESSIONS = folder;
		process.env.CONTEXTFOLD_SESSIONS_MORE = join(dir, "missing-more");
		const shared = listCorpora().find((c) => c.name === "shared");
		assert.deepEqual(
			shared?.sessions.map((s) => s.file),
			["a.jsonl", "b.jsonl"],
		);
		assert.ok(corporaLine().includes(`; shared (2 sessions, ${folder}: a.jsonl, b.jsonl); more: absent`));
		const loaded = loadSession(shared!.sessions[0]);
		assert.equal(loaded.name, "shared/a.jsonl");
		assert.equal(loaded.messages.length, 10);
		assert.equal(loaded.context.length, 6);
	});

	it("the more folder is a third corpus after shared, its sessions named more/<file>", () => {
		const shared = folderOf("both-shared", ["a.jsonl"]);
		const folder = folderOf("both-more", ["c.jsonl", "readme.md"]);
		process.env.CONTEXTFOLD_SESSIONS = shared;
		process.env.CONTEXTFOLD_SESSIONS_MORE = folder;
		assert.deepEqual(
			listCorpora().map((c) => c.name),
			["project", "shared", "more"],
		);
		assert.deepEqual(
			listSessions()
				.filter((s) => s.corpus !== "project")
				.map((s) => `${s.corpus}/${s.file}`),
			["shared/a.jsonl", "more/c.jsonl"],
		);
		assert.ok(
			corporaLine().endsWith(`; shared (1 session, ${shared}: a.jsonl); more (1 session, ${folder}: c.jsonl)`),
		);
	});

	it("a folder named by both variables is read once, as shared", () => {
		const folder = folderOf("same", ["a.jsonl"]);
		process.env.CONTEXTFOLD_SESSIONS = folder;
		process.env.CONTEXTFOLD_SESSIONS_MORE = folder;
		assert.deepEqual(
			listSessions()
				.filter((s) => s.corpus !== "project")
				.map((s) => `${s.corpus}/${s.file}`),
			["shared/a.jsonl"],
		);
		assert.ok(corporaLine().endsWith("; more: absent (same folder as shared)"));
	});

	it("the project corpus is test/fixtures/sessions of this repository", () => {
		const project = listCorpora()[0];
		assert.equal(project.name, "project");
		assert.equal(project.dir, PROJECT_SESSIONS);
		assert.match(corporaLine(), /^corpora: project(: absent | \(\d+ sessions?)/);
	});
});

describe("every available session loads as Pi loads it", () => {
	it("covers the project's sessions always, the others where present", (t) => {
		t.diagnostic(found);
		assert.match(found, /^corpora: project \(\d+ sessions?/, "test/fixtures/sessions holds no session");
	});
	for (const ref of listSessions()) {
		it(`${ref.corpus}/${ref.file}: the context at the leaf and at request points is Pi's projection`, () => {
			const session = loadSession(ref);
			assert.ok(session.messages.length > 0, "no messages on the active branch");
			const text = readFileSync(ref.path, "utf8");
			sameMessages(session.context, piContext(text), "at the leaf");
			const parsed = readSessionFile(ref.path);
			const branch = activeBranch(parsed, ref.path);
			const requests = branchRequests(branch);
			const leaves = requestLeaves(parsed.entries, branch);
			const stride = Math.max(1, Math.floor(leaves.length / 25));
			for (let i = 0; i < leaves.length; i += stride) {
				sameMessages(requests[i], piContext(text, leaves[i]), `request ${i}`);
			}
		});
	}
});
