/**
 * When recall_folded and unfold are declared, over the stub host: inactive while the session has
 * nothing to recall, active from the request that carries the first digest on (the last tool result
 * before it plans that request), added to the tools already active without removing any, and active
 * at once in a session resumed with fold records or started from a parent session.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateTokens } from "@earendil-works/pi-coding-agent";
import { HANDOFF_MESSAGE_TYPE } from "../../src/adapters/pi/compaction/handoff.ts";
import { bashSession, loadStub, resultTexts, type StubPi } from "./stub-pi.ts";

const FOLDED = /^\{#[0-9a-z]{8} FOLDED\}/;
const FOLD_TOOLS = ["recall_folded", "unfold"];
/** Pi's built-in tools and another extension's, active before context-fold does anything. */
const OTHERS = ["read", "bash", "edit", "other_extension_tool"];

/** A bash call of check `i`. */
function bashCall(i: number): Record<string, unknown> {
	return { type: "toolCall", id: `call_${i}`, name: "bash", arguments: { command: `check ${i}` } };
}

/** The 200-line result of check `i`. */
function bashResult(i: number, at: number): Record<string, unknown> {
	return {
		role: "toolResult",
		toolCallId: `call_${i}`,
		toolName: "bash",
		content: [{ type: "text", text: Array.from({ length: 200 }, (_, k) => `line ${k} of check ${i} ok`).join("\n") }],
		isError: false,
		timestamp: at,
	};
}

/** A response asking for the bash calls of `checks`. */
function bashResponse(checks: number[], at: number): Record<string, unknown> {
	return {
		role: "assistant",
		content: checks.map(bashCall),
		usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
		stopReason: "toolUse",
		timestamp: at,
	};
}

/** One agent turn after its request, as Pi ends it: a bash call and its 200-line result, each message ended and stored. */
async function bashTurn(stub: StubPi, i: number, at: number): Promise<void> {
	await stub.endMessage(bashResponse([i], at));
	await stub.endMessage(bashResult(i, at + 1));
}

/** The fold tools among `names`. */
function foldTools(names: readonly string[]): string[] {
	return names.filter((name) => FOLD_TOOLS.includes(name));
}

/** The tools active when a request is sent, and whether its `context` pass folded something. */
async function send(stub: StubPi): Promise<{ active: string[]; folded: boolean }> {
	const active = [...stub.active];
	const sent = await stub.request();
	return { active, folded: resultTexts(sent).some((t) => FOLDED.test(t)) };
}

/**
 * One agent run of bash turns, driven as Pi drives it: before_agent_start, then per request the tools
 * active when it is sent and its `context` pass, then the response's and the tool result's
 * message_end (each stored after its handlers ran).
 */
async function run(stub: StubPi, turns: number) {
	const requests: { active: string[]; folded: boolean }[] = [];
	await stub.emit("before_agent_start", { messageType: "user", prompt: "run the checks" });
	let at = 1_700_000_000_000;
	await stub.endMessage({ role: "user", content: "run the checks", timestamp: at });
	for (let i = 0; i < turns; i++) {
		requests.push(await send(stub));
		at += 10;
		await bashTurn(stub, i, at);
	}
	return requests;
}

/**
 * What the two declarations may cost a request, in tokens as Pi estimates them (chars/4 of each tool's
 * name, description and parameters as JSON, as the status counts them): 158 today, cut from 265 and
 * 435 before (issue 24: as short as clarity allows). A longer description must earn its tokens here.
 */
const DECLARATION_TOKENS = 160;

describe("fold tool declarations", () => {
	it(`cost at most ${DECLARATION_TOKENS} tokens a request together`, () => {
		const stub = loadStub();
		let tokens = 0;
		for (const name of FOLD_TOOLS) {
			const tool = stub.tools.get(name) as { name: string; description: string; parameters: unknown } | undefined;
			assert.ok(tool, `${name} is registered`);
			const json = JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters });
			tokens += Math.ceil(json.length / 4);
		}
		assert.ok(tokens <= DECLARATION_TOKENS, `${tokens} tokens of declarations`);
	});
	it("are registered inactive", () => {
		const stub = loadStub({ toolsAsRegistered: true });
		assert.deepEqual([...stub.tools.keys()].sort(), FOLD_TOOLS);
		for (const tool of stub.tools.values()) assert.equal(tool.defaultActive, false, tool.name);
		assert.deepEqual(stub.active, []);
	});

	it("are absent before the first fold and present in the request that carries it; other tools stay", async () => {
		const stub = loadStub({ toolsAsRegistered: true });
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "startup" });
		const requests = await run(stub, 10);
		const first = requests.findIndex((r) => r.folded);
		assert.ok(first > 1, `first digest in request ${first}`);
		for (const [i, r] of requests.slice(0, first).entries()) assert.deepEqual(r.active, OTHERS, `request ${i}`);
		for (const [i, r] of requests.slice(first).entries()) {
			assert.deepEqual(r.active, [...OTHERS, ...FOLD_TOOLS], `request ${first + i}`);
		}
		// One change, made before the request it serves: only the two names added to what was active.
		assert.deepEqual(stub.toolSets, [[...OTHERS, ...FOLD_TOOLS]]);
	});

	it("are planned at the last tool result of a response that asked for several, not at an earlier one", async () => {
		const plain = loadStub({ toolsAsRegistered: true });
		await plain.emit("session_start", { reason: "startup" });
		const first = (await run(plain, 10)).findIndex((r) => r.folded);
		// The same run up to two requests before the first fold, then a response asking for three checks:
		// its first result alone brings the next request to a fold.
		const stub = loadStub({ toolsAsRegistered: true });
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "startup" });
		await run(stub, first - 1);
		assert.equal((await send(stub)).folded, false);
		const at = 1_800_000_000_000;
		await stub.endMessage(bashResponse([first - 1, first, first + 1], at));
		for (const [k, check] of [first - 1, first].entries()) {
			await stub.endMessage(bashResult(check, at + 1 + k));
			assert.deepEqual(stub.toolSets, [], `nothing planned at result ${k + 1} of 3: Pi still waits for the rest`);
		}
		await stub.endMessage(bashResult(first + 1, at + 3));
		assert.deepEqual(stub.toolSets, [[...OTHERS, ...FOLD_TOOLS]], "planned at the last result");
		const next = await send(stub);
		assert.ok(next.folded, "the next request folds");
		assert.deepEqual(next.active, [...OTHERS, ...FOLD_TOOLS], "and declares the fold tools");
	});

	it("are planned at a response without tool calls while a follow-up is queued, which Pi sends in the same run", async () => {
		const plain = loadStub({ toolsAsRegistered: true });
		await plain.emit("session_start", { reason: "startup" });
		const first = (await run(plain, 10)).findIndex((r) => r.folded);
		// The same run up to the request before the first fold, whose response is a long text in place
		// of a bash call: with it, the next request is the first to fold.
		const answer = async (stub: StubPi) => {
			stub.active = [...OTHERS];
			await stub.emit("session_start", { reason: "startup" });
			await run(stub, first - 1);
			const sent = await stub.request();
			assert.equal(
				resultTexts(sent).some((t) => FOLDED.test(t)),
				false,
			);
			const text = Array.from({ length: 200 }, (_, k) => `line ${k} of the summary: all checks pass`).join("\n");
			// As a provider reports it: the request's prompt, and the response's own tokens as output.
			const prompt = sent.reduce((n, m) => n + estimateTokens(m as never), 0);
			await stub.endMessage({
				role: "assistant",
				content: [{ type: "text", text }],
				usage: { input: prompt, output: Math.ceil(text.length / 4), cacheRead: 0, cacheWrite: 0 },
				stopReason: "stop",
				timestamp: 1_800_000_000_000,
			});
		};
		const idle = loadStub({ toolsAsRegistered: true });
		await answer(idle);
		assert.deepEqual(idle.toolSets, [], "nothing queued: the run ends, the next one's before_agent_start plans");
		const stub = loadStub({ toolsAsRegistered: true });
		stub.pending = true;
		await answer(stub);
		assert.deepEqual(stub.toolSets, [[...OTHERS, ...FOLD_TOOLS]], "planned at the response");
		await stub.endMessage({ role: "user", content: "and the lint too", timestamp: 1_800_000_000_001 });
		const next = await send(stub);
		assert.ok(next.folded, "the follow-up's request folds");
		assert.deepEqual(next.active, [...OTHERS, ...FOLD_TOOLS], "and declares the fold tools");
	});

	it("stay absent through a session that never folds", async () => {
		const stub = loadStub({ toolsAsRegistered: true, window: 1_000_000 });
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "startup" });
		const requests = await run(stub, 8);
		assert.ok(requests.every((r) => !r.folded));
		assert.deepEqual(stub.active, OTHERS);
		assert.deepEqual(stub.toolSets, []);
	});

	it("hold a fold no turn planned: that request goes out raw and declares them, the next folds with them", async () => {
		const stub = loadStub({ toolsAsRegistered: true });
		bashSession(stub, 6);
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "startup" });
		assert.deepEqual(stub.active, OTHERS);
		assert.ok(
			!resultTexts(await stub.request()).some((t) => FOLDED.test(t)),
			"no digest goes out in a request without recall_folded",
		);
		assert.deepEqual(stub.active, [...OTHERS, ...FOLD_TOOLS]);
		assert.ok(
			resultTexts(await stub.request()).some((t) => FOLDED.test(t)),
			"the next request, which declares them, folds",
		);
	});

	it("are never removed, nor added again once another extension removed one", async () => {
		const stub = loadStub({ toolsAsRegistered: true });
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "startup" });
		await run(stub, 6);
		assert.deepEqual(foldTools(stub.active), FOLD_TOOLS);
		stub.active = stub.active.filter((name) => name !== "unfold");
		await run(stub, 3);
		assert.deepEqual(foldTools(stub.active), ["recall_folded"]);
		assert.equal(stub.toolSets.length, 1);
	});

	it("are present from the start of a session resumed with fold records", async () => {
		const stub = loadStub({ toolsAsRegistered: true });
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		// The first request declares the tools, the second folds.
		await stub.request();
		await stub.request();
		assert.ok(
			stub.entries.some((e) => (e.data as { kind?: string })?.kind === "records"),
			"folded",
		);
		// Pi restores the active tools the session file declared; say it declared only the others.
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(stub.active, [...OTHERS, ...FOLD_TOOLS]);
	});

	it("are present from the start of a session seeded by /fold-handoff from its parent", async () => {
		const stub = loadStub({ toolsAsRegistered: true, parentSession: "/nonexistent/parent-session.jsonl" });
		stub.entries.push({
			type: "custom_message",
			id: "seed",
			parentId: null,
			timestamp: "2026-12-05T10:00:00.000Z",
			customType: HANDOFF_MESSAGE_TYPE,
			content: "# context-fold handoff seed",
			display: true,
		});
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "new" });
		assert.deepEqual(stub.active, [...OTHERS, ...FOLD_TOOLS]);
	});

	it("stay absent in a session Pi forked or cloned: it names a parent, but no code of it", async () => {
		const stub = loadStub({ toolsAsRegistered: true, parentSession: "/nonexistent/parent-session.jsonl" });
		bashSession(stub, 1);
		stub.active = [...OTHERS];
		await stub.emit("session_start", { reason: "fork" });
		assert.deepEqual(stub.active, [...OTHERS]);
	});
});
