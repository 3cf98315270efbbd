/**
 * Session files of shapes the project's own recordings never have, as converters and other harnesses
 * write them: each is replayed through the real Pi SDK, and the test checks that the replay neither
 * crashes nor loses a recorded turn silently: what the recording holds reaches the requests, and
 * what the replay cannot follow is counted among the divergences. A recorded error reply is retried
 * by Pi's auto-retry exactly where the recording retried it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isRetryableAssistantError } from "@earendil-works/pi-ai";
import type { MessageLike } from "../../src/core/block.ts";
import type { PolicyRun } from "../../src/replay/policy-run.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { replayScript } from "../../src/replay/script.ts";
import { parseSessionText } from "../../src/replay/session-file.ts";
import { errorAsRecorded, FINAL_ERROR, RETRIED_ERROR } from "../../src/replay/session-input.ts";
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

test("a tool result's part that is neither text nor an image with its data is left out and counted, and every turn replayed", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "read the spec and the log" }] });
	const round = (at: number, id: string, content: unknown[]) => {
		session.add(at, {
			role: "assistant",
			content: [{ type: "toolCall", id, name: "read", arguments: { path: `${id}.pdf` } }],
			stopReason: "toolUse",
		});
		session.add(at + 1, { role: "toolResult", toolCallId: id, toolName: "read", content, isError: false });
	};
	// A PDF as a converter kept it from Claude Code, and an image part that lost its data.
	round(2, "c1", [
		{ type: "text", text: "SPEC page one" },
		{ type: "document", source: { data: "JVBERi0x" } },
	]);
	round(4, "c2", [
		{ type: "image", mimeType: "image/png" },
		{ type: "text", text: "LOG tail" },
	]);
	session.add(6, { role: "assistant", content: [{ type: "text", text: "both read" }], stopReason: "stop" });
	const run = await replay(session);
	assert.equal(run.requests.length, 3, "every recorded reply requested");
	assert.deepEqual(run.divergences, {
		"tool result document part not replayed": 1,
		"tool result image part not replayed": 1,
	});
	assert.match(lastRequestText(run), /SPEC page one/);
	assert.match(lastRequestText(run), /LOG tail/);
});

test("a user message's parts that are neither text nor image are left out and named, its text kept", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
	session.add(2, { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" });
	// Claude Code's raw shape: a tool result and a document inside the user's message.
	session.add(3, {
		role: "user",
		content: [
			{ type: "text", text: "USER TEXT kept" },
			{ type: "tool_result", content: "x".repeat(400) },
			{ type: "document", source: { data: "y".repeat(400) } },
			{ kind: "odd" },
		],
	});
	session.add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const run = await replay(session);
	assert.equal(run.requests.length, 2, "every recorded reply requested");
	assert.deepEqual(run.divergences, {
		"user tool_result part not replayed": 1,
		"user document part not replayed": 1,
		"user untyped part not replayed": 1,
	});
	assert.match(lastRequestText(run), /USER TEXT kept/);
});

test("a recorded reply in shapes the faux provider cannot stream reaches the session as recorded", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "search the web" }] });
	session.add(2, {
		role: "assistant",
		content: [
			null,
			{ type: "server_tool_use", id: "s1", name: "web_search" },
			{ type: 42, text: "a part without a type name" },
			{ type: "thinking", redacted: true, thinkingSignature: "sig" },
			{ type: "text" },
			{ type: "toolCall", id: "c1", name: "web_fetch_src" },
		],
		stopReason: "toolUse",
	});
	session.add(3, {
		role: "toolResult",
		toolCallId: "c1",
		toolName: "web_fetch_src",
		content: [{ type: "text", text: "PAGE BODY" }],
		isError: false,
	});
	session.add(4, { role: "assistant", content: "the page says hello", stopReason: "stop" });
	session.add(5, { role: "user", content: [{ type: "text", text: "thanks" }] });
	session.add(6, { role: "assistant", content: [{ type: "text", text: "welcome" }], stopReason: "stop" });
	const run = await replay(session);
	assert.equal(run.requests.length, 3);
	assert.deepEqual(run.divergences, {
		"assistant server_tool_use part not replayed": 1,
		"assistant untyped part not replayed": 1,
	});
	const sent = lastRequestText(run);
	assert.match(sent, /"name":"web_fetch_src","arguments":\{\}/);
	assert.match(sent, /PAGE BODY/);
	assert.match(sent, /the page says hello/);
});

test("a recorded reply the replay still loses to an error is counted, not dropped silently", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
	session.add(2, { role: "assistant", content: [{ type: "text", text: "half a reply" }], stopReason: "pending" });
	session.add(3, { role: "user", content: [{ type: "text", text: "again" }] });
	session.add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const run = await replay(session);
	assert.equal(run.requests.length, 2);
	assert.deepEqual(run.divergences, {
		"recorded reply lost to an error in the replay: Faux response ended without a stop reason": 1,
	});
});

test("a call id used twice gets each call's own result; a result that answers no call is counted", async () => {
	const session = new SyntheticSession(T0);
	const call = (command: string) => ({
		role: "assistant",
		content: [{ type: "toolCall", id: "call_0", name: "run_shell_command_src", arguments: { command } }],
		stopReason: "toolUse",
	});
	const result = (text: string, id = "call_0") => ({
		role: "toolResult",
		toolCallId: id,
		toolName: "run_shell_command_src",
		content: [{ type: "text", text }],
		isError: false,
	});
	session.add(1, { role: "user", content: [{ type: "text", text: "first" }] });
	session.add(2, call("ls"));
	session.add(3, result("OUTPUT OF LS"));
	session.add(4, { role: "assistant", content: [{ type: "text", text: "listed" }], stopReason: "stop" });
	session.add(5, { role: "user", content: [{ type: "text", text: "second" }] });
	session.add(6, result("ANSWERS NOTHING", "call_9"));
	session.add(7, call("pwd"));
	session.add(8, result("OUTPUT OF PWD"));
	session.add(9, { role: "assistant", content: [{ type: "text", text: "printed" }], stopReason: "stop" });
	const run = await replay(session);
	assert.deepEqual(run.divergences, { "toolResult message not replayed": 1 });
	const sent = lastRequestText(run);
	assert.ok(sent.indexOf("OUTPUT OF LS") < sent.indexOf("OUTPUT OF PWD"), sent);
	assert.equal(sent.split("OUTPUT OF LS").length, 2);
	assert.doesNotMatch(sent, /ANSWERS NOTHING/);
});

test("a line Pi skips that breaks the chain: the replies before it are counted, not lost silently", async () => {
	const session = new SyntheticSession(T0);
	for (let k = 0; k < 3; k++) {
		session.add(10 * k + 1, { role: "user", content: [{ type: "text", text: `ask ${k}` }] });
		session.add(10 * k + 2, {
			role: "assistant",
			content: [{ type: "text", text: `answer ${k}` }],
			stopReason: "stop",
		});
	}
	// The fourth entry (the second answer) is torn: Pi skips the line, and the branch starts after it.
	const lines = session.text().split("\n");
	lines[4] = lines[4].slice(0, 40);
	const run = await replayPolicy(
		replayScript(parseSessionText(lines.join("\n"))),
		{ name: "pi", kind: "pi" },
		{ window: 200_000 },
	);
	assert.deepEqual(run.divergences, {
		"session file line not JSON, skipped as Pi skips it": 1,
		"recorded replies before a missing entry, off the branch Pi replays": 1,
	});
	const whole = await replay(session);
	assert.deepEqual(whole.divergences, {}, "an intact file: nothing counted");
});

test("a message without a role is counted as such", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
	session.add(2, { content: [{ type: "text", text: "WHO SAID THIS" }] });
	session.add(3, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const run = await replay(session);
	assert.deepEqual(run.divergences, { "role-less message not replayed": 1 });
	assert.doesNotMatch(lastRequestText(run), /WHO SAID THIS/);
});

test("a reply's time written as a date string (with or without a zone), or only on its entry, is the same time on the replay's clock", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "start" }] });
	session.add(2, { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" });
	session.add(3, { role: "user", content: [{ type: "text", text: "after lunch" }] });
	session.add(3600, { role: "assistant", content: [{ type: "text", text: "back" }], stopReason: "stop" });
	/** The session with each reply's time rewritten by `retime` (undefined: none); `undated` drops its entry's. */
	const retimed = (retime: (at: number) => unknown, undated?: unknown) => {
		const lines = session
			.text()
			.split("\n")
			.map((line) => JSON.parse(line));
		for (const line of lines) {
			if (line.message?.role !== "assistant") continue;
			const at = retime(line.message.timestamp);
			if (at === undefined) delete line.message.timestamp;
			else line.message.timestamp = at;
			if (undated !== undefined && at === undated) delete line.timestamp;
		}
		return replayScript(parseSessionText(lines.map((l) => JSON.stringify(l)).join("\n")));
	};
	const pi = { name: "pi", kind: "pi" } as const;
	const times = async (script: ReturnType<typeof retimed>) =>
		(await replayPolicy(script, pi, { window: 200_000 })).requests.map((r) => r.at);
	const recorded = [T0 + 2000, T0 + 3_600_000];
	assert.deepEqual(await times(session.script()), recorded);
	assert.deepEqual(await times(retimed((at) => new Date(at).toISOString())), recorded);
	assert.deepEqual(await times(retimed(() => undefined)), recorded);
	// Written without a zone, it is UTC on every machine, whatever the machine's own zone.
	const zone = process.env.TZ;
	process.env.TZ = "America/New_York";
	try {
		assert.deepEqual(await times(retimed((at) => new Date(at).toISOString().slice(0, -1))), recorded);
		const spaced = (at: number) => new Date(at).toISOString().slice(0, -1).replace("T", " ");
		assert.deepEqual(await times(retimed(spaced)), recorded, "a space for the T too");
	} finally {
		if (zone === undefined) delete process.env.TZ;
		else process.env.TZ = zone;
	}
	// No time the replay can read, on the message or its entry: the time of the reply before.
	const undated = retimed((at) => (at === recorded[1] ? "after lunch" : at), "after lunch");
	assert.deepEqual(await times(undated), [T0 + 2000, T0 + 2000]);
});

test("a call whose arguments Pi's schema refuses: a stand-in answers anyway, a built-in's refusal is counted", async () => {
	const session = new SyntheticSession(T0);
	const result = (id: string, toolName: string, text: string) => ({
		role: "toolResult",
		toolCallId: id,
		toolName,
		content: [{ type: "text", text }],
		isError: false,
	});
	session.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
	session.add(2, {
		role: "assistant",
		content: [
			{ type: "toolCall", id: "c1", name: "exec_command_src", arguments: '{"cmd":"ls"}' },
			{ type: "toolCall", id: "c2", name: "read", arguments: { file_path: "/src/a.ts" } },
		],
		stopReason: "toolUse",
	});
	session.add(3, result("c1", "exec_command_src", "LISTING"));
	session.add(4, result("c2", "read", "FILE BODY"));
	session.add(5, { role: "assistant", content: [{ type: "text", text: "read" }], stopReason: "stop" });
	const run = await replay(session);
	// The refusal's first line ends in a colon: its reason, on the next line, is named with it.
	assert.deepEqual(run.divergences, {
		'recorded call refused by Pi: Validation failed for tool "read": - path: missing': 1,
	});
	const sent = lastRequestText(run);
	assert.match(sent, /LISTING/);
	assert.doesNotMatch(sent, /FILE BODY/);
});

test("a refusal longer than its line is cut after a whole word, and says so", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
	// A reply cut off by the output limit: Pi does not run the call it holds.
	session.add(2, {
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "/src/a.ts" } }],
		stopReason: "length",
	});
	session.add(3, {
		role: "toolResult",
		toolCallId: "c1",
		toolName: "read",
		content: [{ type: "text", text: "FILE BODY" }],
		isError: false,
	});
	session.add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const run = await replay(session);
	const [kind] = Object.keys(run.divergences).filter((k) => k.startsWith("recorded call refused by Pi: "));
	assert.ok(kind, JSON.stringify(run.divergences));
	const said = kind.slice("recorded call refused by Pi: ".length);
	assert.ok(said.length <= 80, said);
	assert.match(said, /[A-Za-z.,:]…$/, "ends on a whole word, marked as cut");
	assert.match(said, /^Tool call "read" was not executed: /);
});

test("a refusal Pi recorded itself is replayed as recorded, not counted", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
	session.add(2, {
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "read", arguments: { file_path: "/src/a.ts" } }],
		stopReason: "toolUse",
	});
	const refusal =
		'Validation failed for tool "read":\n  - path: missing\n\nReceived arguments:\n{\n  "file_path": "/src/a.ts"\n}';
	session.add(3, {
		role: "toolResult",
		toolCallId: "c1",
		toolName: "read",
		content: [{ type: "text", text: refusal }],
		isError: true,
	});
	session.add(4, { role: "assistant", content: [{ type: "text", text: "retrying" }], stopReason: "stop" });
	const run = await replay(session);
	assert.deepEqual(run.divergences, {});
	assert.ok(lastRequestText(run).includes(JSON.stringify(refusal).slice(1, -1)));
});

test("an error result reaches the session as recorded: every part, images too, flagged an error", async () => {
	const session = new SyntheticSession(T0);
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
	const content = [
		{ type: "text", text: "page failed to load" },
		{ type: "image", data: png, mimeType: "image/png" },
		{ type: "text", text: "timeout after 30 s" },
	];
	session.add(1, { role: "user", content: [{ type: "text", text: "open the page" }] });
	session.add(2, {
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "browser_src", arguments: { url: "http://x" } }],
		stopReason: "toolUse",
	});
	session.add(3, { role: "toolResult", toolCallId: "c1", toolName: "browser_src", content, isError: true });
	session.add(4, { role: "assistant", content: [{ type: "text", text: "it timed out" }], stopReason: "stop" });
	const run = await replay(session);
	const result = run.requests.at(-1)?.messages?.find((m) => m.role === "toolResult");
	assert.deepEqual(result?.content, content);
	assert.equal(result?.isError, true);
});

/** A recorded error reply, with no content, as Pi records a failed request. */
function failed(errorMessage: string): Record<string, unknown> {
	return { role: "assistant", content: [], stopReason: "error", errorMessage };
}

test("a recorded error is retried where the recording retried it, and final where the user spoke next", async () => {
	const session = new SyntheticSession(T0);
	session.add(1, { role: "user", content: [{ type: "text", text: "summarize the log" }] });
	// Pi retried a dropped connection, and a request its own classifier would not retry: both retried.
	session.add(2, failed("Connection error."));
	session.add(3, failed("400 the request was malformed"));
	session.add(4, { role: "assistant", content: [{ type: "text", text: "the log is clean" }], stopReason: "stop" });
	session.add(5, { role: "user", content: [{ type: "text", text: "and the other one?" }] });
	// A timeout Pi would retry, after which the recording has the user speak: final.
	session.add(6, failed("Request timed out."));
	session.add(7, { role: "user", content: [{ type: "text", text: "try again" }] });
	session.add(8, { role: "assistant", content: [{ type: "text", text: "also clean" }], stopReason: "stop" });
	const run = await replay(session);
	assert.deepEqual(run.divergences, {}, "every recorded reply requested, no request beyond the recording");
	assert.equal(run.requests.length, 5);
	assert.match(lastRequestText(run), /also clean|try again/);
	assert.match(lastRequestText(run), /the log is clean/);
	// The errors used nothing (no usage recorded): the provider refused those requests, billing nothing.
	assert.deepEqual(
		run.requests.map((r) => r.refused === true),
		[true, true, false, true, false],
	);
	session.add(9, { role: "user", content: [{ type: "text", text: "a third one" }] });
	session.add(10, { ...failed("Request was aborted."), stopReason: "aborted" });
	session.add(11, { role: "user", content: [{ type: "text", text: "go on" }] });
	session.add(12, failed("429 rate limited"));
	session.add(13, { ...failed("overloaded"), usage: { input: 0, output: 3, cacheRead: 0, cacheWrite: 0 } });
	session.add(14, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const more = await replay(session);
	const script = session.script();
	// An aborted reply's request was read by the provider, and so was one that reported any usage.
	const byReply = more.requests.flatMap((r) =>
		r.produced === undefined ? [] : [[script.messages[r.produced].errorMessage ?? "", r.refused === true]],
	);
	assert.deepEqual(byReply.slice(5), [
		["Request was aborted.", false],
		["429 rate limited", true],
		["overloaded", false],
		["", false],
	]);
});

test("the stand-in errors classify as Pi's retry takes them, and a recorded text that already does is kept", () => {
	const recorded = (errorMessage: string) => failed(errorMessage) as MessageLike;
	assert.equal(isRetryableAssistantError(recorded(RETRIED_ERROR) as never), true);
	assert.equal(isRetryableAssistantError(recorded(FINAL_ERROR) as never), false);
	const timeout = recorded("Request timed out.");
	assert.equal(errorAsRecorded(timeout, true), timeout);
	assert.equal(errorAsRecorded(timeout, false).errorMessage, FINAL_ERROR);
	const malformed = recorded("400 the request was malformed");
	assert.equal(errorAsRecorded(malformed, false), malformed);
	assert.equal(errorAsRecorded(malformed, true).errorMessage, RETRIED_ERROR);
	const reply = { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" };
	assert.equal(errorAsRecorded(reply, false), reply);
});
