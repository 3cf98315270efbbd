/**
 * Replay fidelity for what a user does while the agent works, on small synthetic sessions through
 * the real Pi SDK: a user message steered in between tool results and the next reply is delivered
 * as Pi's steering (so the steered turn's replies are requested, after the tool results), as is one
 * recorded between a call and its result, a user
 * message that got no reply goes out with the one after it, a `!cmd` result recorded between two
 * runs reaches the next request as Pi renders it (`!!` keeps it out), and what the replay cannot
 * follow is counted by kind. A prompt or steered message that reads as a command of the replayed
 * extension went to the model as text when it was recorded, and is replayed so.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageLike } from "../../src/core/block.ts";
import type { ReplayPolicy } from "../../src/replay/policy-run.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const POLICIES: ReplayPolicy[] = [
	{ name: "pi", kind: "pi" },
	{ name: "context-fold", kind: "context-fold", settings: {} },
];

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const reply = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], stopReason: "stop" });
const call = (id: string) => ({
	role: "assistant",
	content: [{ type: "toolCall", id, name: "bash", arguments: { command: `echo ${id}` } }],
	stopReason: "toolUse",
});
const result = (id: string) => ({
	role: "toolResult",
	toolCallId: id,
	toolName: "bash",
	content: [{ type: "text", text: `output of ${id}` }],
	isError: false,
});
const bash = (command: string, output: string, extra: Record<string, unknown> = {}) => ({
	role: "bashExecution",
	command,
	output,
	exitCode: 0,
	cancelled: false,
	truncated: false,
	...extra,
});

/** Each message of a request as role and text, system message left out. */
function transcript(messages: readonly MessageLike[] | undefined): string[] {
	return (messages ?? [])
		.filter((m) => m.role !== "system")
		.map((m) => {
			const content = Array.isArray(m.content) ? (m.content as Record<string, unknown>[]) : [];
			return `${m.role}: ${content.map((p) => String(p.text ?? p.id ?? "")).join(" ")}`;
		});
}

function session(build: (add: (message: Record<string, unknown>) => void) => void) {
	const synthetic = new SyntheticSession(T0);
	let second = 0;
	build((message) => synthetic.add(++second, message));
	return synthetic.script();
}

/** A run with a message steered in after call c2: recorded after its result, or between the call and the result. */
function steeredRun(beforeResult: boolean) {
	return session((add) => {
		add(user("run two commands"));
		add(call("c1"));
		add(result("c1"));
		add(call("c2"));
		if (beforeResult) add(user("also print the date"));
		add(result("c2"));
		if (!beforeResult) add(user("also print the date"));
		add(call("c3"));
		add(result("c3"));
		add(reply("done"));
		add(user("thanks"));
		add(reply("you are welcome"));
	});
}

/** The steered turn is flagged, replayed without divergence, and delivered after c2's result. */
async function assertSteered(script: ReturnType<typeof session>, policy: ReplayPolicy): Promise<void> {
	assert.deepEqual(
		script.turns.map((t) => t.steered),
		[false, true, false],
	);
	const run = await replayPolicy(script, policy, { window: 200_000, keepMessages: true });
	assert.deepEqual(run.divergences, {});
	assert.deepEqual(
		run.requests.map((r) => r.produced),
		[1, 3, 6, 8, 10],
	);
	assert.deepEqual(transcript(run.requests[2].messages), [
		"user: run two commands",
		"assistant: c1",
		"toolResult: output of c1",
		"assistant: c2",
		"toolResult: output of c2",
		"user: also print the date",
	]);
}

test("a message recorded between a call and its result was steered in too, and replays as Pi delivers it", async () => {
	await assertSteered(steeredRun(true), POLICIES[0]);
});

for (const policy of POLICIES) {
	test(`${policy.name}: a message steered in while tools ran gets its recorded replies, after the tool results`, async () => {
		await assertSteered(steeredRun(false), policy);
	});
}

test("a user message with no recorded reply goes out with the next one, in one request", async () => {
	const script = session((add) => {
		add(user("first"));
		add(reply("one"));
		add(user("stop that"));
		add(user("write a poem instead"));
		add(reply("a poem"));
	});
	assert.deepEqual(
		script.turns.map((t) => t.steered),
		[false, false, true],
	);
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 200_000, keepMessages: true });
	assert.deepEqual(run.divergences, {});
	assert.deepEqual(
		run.requests.map((r) => r.produced),
		[1, 4],
	);
	assert.deepEqual(transcript(run.requests[1].messages).slice(2), ["user: stop that", "user: write a poem instead"]);
});

for (const policy of POLICIES) {
	test(`${policy.name}: a !cmd result recorded between runs reaches the next request as Pi renders it`, async () => {
		const script = session((add) => {
			add(user("look"));
			add(reply("looked"));
			add(bash("git status --short", " M src/a.ts"));
			add(bash("npm test", "1 failing", { exitCode: 1 }));
			add(bash("ls secret", "hidden", { excludeFromContext: true }));
			add(user("fix the failing test"));
			add(reply("fixed"));
		});
		assert.equal(script.turns[1].before.length, 3);
		const run = await replayPolicy(script, policy, { window: 200_000, keepMessages: true });
		assert.deepEqual(run.divergences, {});
		assert.deepEqual(
			run.requests.map((r) => r.produced),
			[1, 6],
		);
		assert.deepEqual(transcript(run.requests[1].messages), [
			"user: look",
			"assistant: looked",
			"user: Ran `git status --short`\n```\n M src/a.ts\n```",
			"user: Ran `npm test`\n```\n1 failing\n```\n\nCommand exited with code 1",
			"user: fix the failing test",
		]);
	});
}

for (const policy of POLICIES) {
	test(`${policy.name}: a prompt and a steered message that read as the extension's command go to the model as recorded`, async () => {
		// Recorded with context-fold off (CONTEXTFOLD=0): Pi sent the typed commands to the model as text.
		const script = session((add) => {
			add(user("/context-fold status"));
			add(call("c1"));
			add(result("c1"));
			add(user("/context-fold settings"));
			add(reply("that is not a command I know"));
		});
		assert.deepEqual(
			script.turns.map((t) => t.steered),
			[false, true],
		);
		const run = await replayPolicy(script, policy, { window: 200_000, keepMessages: true });
		assert.deepEqual(run.divergences, {});
		assert.deepEqual(
			run.requests.map((r) => r.produced),
			[1, 4],
		);
		assert.deepEqual(transcript(run.requests[1].messages), [
			"user: /context-fold status",
			"assistant: c1",
			"toolResult: output of c1",
			"user: /context-fold settings",
		]);
	});
}

test("what the replay cannot follow is counted by kind", async () => {
	const script = session((add) => {
		add(user("go"));
		add(call("c1"));
		add(bash("ls", "a"));
		add(result("c1"));
		add(reply("ok"));
		add({ role: "custom", customType: "note", content: "a note", display: true });
		add(user("more"));
		add(call("c2"));
		add(result("c2"));
	});
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 200_000 });
	assert.deepEqual(run.divergences, {
		"request after the recording ends": 1,
		"bashExecution message not replayed": 1,
		"custom message not replayed": 1,
	});
	assert.equal(run.requests.length, 3);
});

test("a !cmd result recorded just before a steered message is counted: Pi adds one only between runs", async () => {
	const script = session((add) => {
		add(user("run it"));
		add(call("c1"));
		add(result("c1"));
		add(bash("ls", "a.ts"));
		add(user("also print the date"));
		add(reply("done"));
	});
	assert.deepEqual(
		script.turns.map((t) => t.steered),
		[false, true],
	);
	assert.equal(script.turns[1].before.length, 0, "a steered message carries no !cmd result");
	const run = await replayPolicy(script, { name: "pi", kind: "pi" }, { window: 200_000, keepMessages: true });
	assert.deepEqual(run.divergences, { "bashExecution message not replayed": 1 });
	assert.deepEqual(
		run.requests.map((r) => r.produced),
		[1, 5],
	);
	assert.deepEqual(transcript(run.requests[1].messages), [
		"user: run it",
		"assistant: c1",
		"toolResult: output of c1",
		"user: also print the date",
	]);
});
