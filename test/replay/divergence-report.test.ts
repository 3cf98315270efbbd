/**
 * A replay that drifted from its recording is visible in the report: the table gives each policy's
 * divergence count, and names each kind with its count under the table, in the terminal and in the
 * HTML page; a replay that followed its recording shows 0 and no such line. End to end, a recording
 * that stops after a tool result (Pi asks for one more reply) and holds a message the replay does
 * not feed counts both; a session file line that is not JSON is skipped, as Pi skips it, and counted;
 * a file of a newer format than Pi 1.6 writes is read as Pi 1.6 reads it, and says so.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { renderHtml } from "../../src/replay/html.ts";
import { PRICE_MODELS } from "../../src/replay/price.ts";
import { policyFigures } from "../../src/replay/report.ts";
import { NOT_REQUESTED, table, tableCells } from "../../src/replay/report-text.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { replayScript } from "../../src/replay/script.ts";
import { parseSessionText } from "../../src/replay/session-file.ts";
import { FIXED_REPORT } from "./report-fixture.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const drifted = structuredClone(FIXED_REPORT);
drifted[0].policies[1].divergences = { "request beyond the recorded turn": 2, "recorded replies not requested": 5 };

/** The divergences cell of each policy's row. */
function counts(figures: (typeof drifted)[0]["policies"]): Record<string, string> {
	const { head, rows } = tableCells(figures);
	const at = head.indexOf("divergences");
	assert.ok(at > 0, "the table has a divergences column");
	return Object.fromEntries(rows.map((r) => [r[0], r[at]]));
}

test("the table counts each policy's divergences and names their kinds under it", () => {
	assert.deepEqual(counts(drifted[0].policies), {
		pi: "0",
		"context-fold": "7",
		"mask-last-2": "0",
		"compact-only": "0",
		"clear-tool-uses": "0",
	});
	const text = table(drifted[0].policies);
	assert.match(
		text,
		/\ncontext-fold diverged: request beyond the recorded turn ×2, recorded replies not requested ×5$/,
	);
	assert.doesNotMatch(table(FIXED_REPORT[0].policies), /diverged/);
});

test("a kind holding a recording's control characters is printed inert, not sent to the terminal", () => {
	const hostile = structuredClone(FIXED_REPORT);
	hostile[0].policies[1].divergences = { "tool result \u001b]0;pwned\u0007\u001b[2J part not replayed": 1 };
	const text = table(hostile[0].policies);
	assert.ok(!text.includes("\u001b") && !text.includes("\u0007"), "no control character reaches the output");
	assert.match(text, /diverged: tool result \\u001b\]0;pwned\\u0007\\u001b\[2J part not replayed ×1$/);
});

test("the HTML page shows the same count and kinds", () => {
	const html = renderHtml(drifted);
	const head = /<thead><tr>(.*?)<\/tr><\/thead>/.exec(html)?.[1] ?? "";
	const at = [...head.matchAll(/<th>(.*?)<\/th>/g)].findIndex((m) => m[1] === "divergences");
	const row = /<tr data-policy="context-fold">(.*?)<\/tr>/.exec(html)?.[1] ?? "";
	assert.equal([...row.matchAll(/<td>(.*?)<\/td>/g)][at]?.[1], "7");
	assert.match(
		html,
		/<p class="note divergences">context-fold diverged: request beyond the recorded turn ×2, recorded replies not requested ×5<\/p>/,
	);
	assert.doesNotMatch(renderHtml(FIXED_REPORT), /class="note divergences"/);
});

test("a replayed session that ends after a tool result and holds an unfed message reports both", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "list" }] });
	synthetic.add(2, { role: "assistant", content: [{ type: "text", text: "sure" }], stopReason: "stop" });
	synthetic.add(3, { role: "custom", customType: "note", content: "an extension's note", display: true });
	synthetic.add(4, { role: "user", content: [{ type: "text", text: "now" }] });
	synthetic.add(5, {
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "ls", arguments: {} }],
		stopReason: "toolUse",
	});
	synthetic.add(6, { role: "toolResult", toolCallId: "c1", toolName: "ls", content: [{ type: "text", text: "a" }] });
	const script = synthetic.script();
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 100_000 });
	const figures = policyFigures(script, run, PRICE_MODELS["anthropic-5m"], true, 100_000);
	assert.deepEqual(figures.divergences, {
		"request after the recording ends": 1,
		"custom message not replayed": 1,
	});
	assert.deepEqual(counts([figures]), { pi: "2" });
	assert.match(
		table([figures]),
		/\npi diverged: request after the recording ends ×1, custom message not replayed ×1$/,
	);
});

test("a context edit changes only the requests after it, and the replay, which does not make it, counts it", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "read it" }] });
	synthetic.read(2, "r1", [{ type: "text", text: "the file as read" }]);
	const result = `e${Number(synthetic.nextId().slice(1)) - 1}`;
	synthetic.add(3, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	synthetic.entry(4, "context_edit", { targetId: result, replacement: { content: "[pruned by an extension]" } });
	synthetic.add(5, { role: "user", content: [{ type: "text", text: "more" }] });
	synthetic.add(6, { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" });
	const script = synthetic.script();
	assert.ok(
		script.messages.some((m) => JSON.stringify(m.content).includes("the file as read")),
		"the result as recorded",
	);
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 100_000, keepMessages: true });
	const second = JSON.stringify(run.requests[1].messages);
	assert.ok(second.includes("the file as read") && !second.includes("pruned"), second);
	assert.deepEqual(run.divergences, {
		"context edit not replayed (the requests after it carry the message as recorded)": 1,
	});
});

test("a recorded compaction plain Pi does not repeat (a /compact typed) is counted for plain Pi", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "list" }] });
	const first = `e${Number(synthetic.nextId().slice(1)) - 1}`;
	synthetic.add(2, { role: "assistant", content: [{ type: "text", text: "sure" }], stopReason: "stop" });
	synthetic.entry(3, "compaction", {
		summary: "the user asked for a list",
		firstKeptEntryId: first,
		tokensBefore: 900,
	});
	synthetic.add(4, { role: "user", content: [{ type: "text", text: "now" }] });
	synthetic.add(5, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const script = synthetic.script();
	const pi = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 100_000 });
	assert.deepEqual(pi.divergences, {
		"recorded compaction plain Pi did not repeat (a /compact typed is not replayed)": 1,
	});
	const fold = await replayPolicy(
		script,
		{ name: "context-fold", kind: "context-fold", settings: {} },
		{ window: 100_000 },
	);
	assert.deepEqual(fold.divergences, {}, "a fold policy compacts by its own rule");
});

test("lines of the session file that are not JSON are skipped as Pi skips them, and counted", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "list" }] });
	synthetic.add(2, { role: "assistant", content: [{ type: "text", text: "sure" }], stopReason: "stop" });
	synthetic.add(3, { role: "user", content: [{ type: "text", text: "now" }] });
	synthetic.add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const lines = synthetic.text().split("\n");
	// A torn last write: Pi opens the session without it, and so does the replay.
	const torn = replayScript(parseSessionText(`${lines.join("\n")}\n{"type":"message","id":"e5`));
	const run = await replayPolicy(torn, { name: "pi", kind: "pi" }, { window: 100_000 });
	assert.deepEqual(run.divergences, { "session file line not JSON, skipped as Pi skips it": 1 });
	assert.equal(run.requests.length, 2);
	assert.match(
		table([policyFigures(torn, run, PRICE_MODELS["anthropic-5m"], true, 100_000)]),
		/\npi diverged: session file line not JSON, skipped as Pi skips it ×1$/,
	);
	// A bad escape in the second entry: it is on no branch, so the branch starts after it, as in Pi.
	const escaped = lines.with(2, lines[2].replace('"sure"', '"su\\qre"'));
	const cut = replayScript(parseSessionText(escaped.join("\n")));
	assert.equal(cut.unreadLines, 1);
	assert.deepEqual(
		cut.messages.map((m) => m.role),
		["user", "assistant"],
	);
	assert.deepEqual(cut.turns.length, 1);
});

test("a session file of a newer format than Pi 1.6 writes is replayed as Pi 1.6 reads it, and the report says so", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "list" }] });
	synthetic.add(2, { role: "assistant", content: [{ type: "text", text: "sure" }], stopReason: "stop" });
	const [header, ...rest] = synthetic.text().split("\n");
	const newer = [header.replace('"version":3', '"version":99'), ...rest].join("\n");
	assert.notEqual(newer, synthetic.text(), "the fixture's header names version 3");
	const script = replayScript(parseSessionText(newer));
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 100_000 });
	assert.equal(run.requests.length, 1);
	assert.deepEqual(run.divergences, { "session file format 99, newer than Pi 1.6's 3: read as Pi 1.6 reads it": 1 });
	const current = replayScript(parseSessionText(synthetic.text()));
	assert.deepEqual((await replayPolicy(current, { name: "pi", kind: "pi" }, { window: 100_000 })).divergences, {});
});

test("a request whose prompt is larger than the window is counted as an overflow, and only then", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "cat it" }] });
	synthetic.add(2, {
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "cat big" } }],
		stopReason: "toolUse",
	});
	synthetic.add(3, {
		role: "toolResult",
		toolCallId: "c1",
		toolName: "bash",
		content: [{ type: "text", text: "x".repeat(12_000) }],
	});
	synthetic.add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
	const script = synthetic.script();
	const figures = async (window: number) =>
		policyFigures(
			script,
			await replayPolicy(script, { name: "pi", kind: "pi" }, { window }),
			PRICE_MODELS["anthropic-5m"],
			true,
			window,
		);
	const small = await figures(2000);
	assert.ok(small.peakPrompt > 2000, `peak ${small.peakPrompt}`);
	assert.equal(small.overflowRejections, 1, "the request after the 3k-token result");
	assert.equal((await figures(100_000)).overflowRejections, 0);
});

test("a run that ends before its recorded replies do counts every reply it never asked for", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	const answer = (second: number, text: string) =>
		synthetic.add(second, { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" });
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
	// Three replies to one prompt: Pi's run ends with the first (it stopped), so two are never asked for.
	answer(2, "first");
	answer(3, "second");
	answer(4, "third");
	synthetic.add(5, { role: "user", content: [{ type: "text", text: "next" }] });
	answer(6, "done");
	const script = synthetic.script();
	assert.deepEqual(
		script.turns.map((t) => t.assistants.length),
		[3, 1],
	);
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 100_000 });
	assert.deepEqual(
		run.requests.map((r) => r.produced),
		[1, 5],
	);
	assert.equal(run.divergences[NOT_REQUESTED], 2);
	assert.deepEqual(run.divergences, { "recorded replies not requested": 2 });
	assert.match(
		table([policyFigures(script, run, PRICE_MODELS["anthropic-5m"], true, 100_000)]),
		/\npi diverged: recorded replies not requested ×2$/,
	);
});
