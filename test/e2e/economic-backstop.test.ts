/**
 * The economic policy's backstop through real `pi`: when even folding every candidate would leave the
 * context above `backstopAt` tokens (here a big user message, which never folds, holds it
 * there) while it is still under the fold budget, context-fold compacts with its deterministic
 * summary: a fromHook compaction entry, no summarization request at the model server, and a notice
 * naming the backstop. The compaction waits until the agent's run is over: Pi's compact() aborts a run
 * in progress and never resumes it, so every step of the run must still reach the model. That
 * compaction keeps only the policy's hot tail raw, not Pi's keepRecentTokens. Pi's own threshold
 * compaction is off here: with it on, a context with nothing to fold is plain Pi's, and no profile
 * compacts it before Pi's own point (over-budget.test.ts).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import {
	isSummarizationRequest,
	lastUserText,
	type ModelServer,
	messagesOf,
	type Script,
	startModelServer,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiRpc, type PiSandbox, parseJsonl, waitForEntries } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const OUR_HEADER = "[context-fold deterministic compaction summary]";
const BIG = `Constraints, keep verbatim:\n${"the parser must keep every byte of the input. ".repeat(700)}`;

/** Asserts that the model server saw no summarization request (Pi's LLM compaction never ran). */
function assertNoSummarization(server: ModelServer): void {
	assert.deepEqual(
		server.requests.filter((r) => isSummarizationRequest(r)).map((r) => r.index),
		[],
		"no summarization request",
	);
}

/** Sends a short prompt, then BIG, and returns the session's state once both runs are over. */
async function startThenBig(rpc: PiRpc): Promise<{ sessionFile: string }> {
	await rpc.prompt("Start: note the plan.");
	await rpc.prompt(BIG);
	return rpc.call<{ sessionFile: string }>({ type: "get_state" });
}

/** Real `pi` over RPC against `script`, with the economic policy's backstop at 4.8k tokens (30 % of a 16k window), Pi's own compaction off. */
function backstopPi(
	script: Script,
	settings: Record<string, unknown> = {
		compaction: { enabled: false, keepRecentTokens: 1_000 },
		"context-fold": { policy: "economic", backstopAt: 4_800, budgetFraction: 0.95 },
	},
): { server: () => ModelServer; rpc: () => PiRpc } {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let rpc: PiRpc;
	before(async () => {
		server = await startModelServer(script);
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings,
		});
		rpc = await sandbox.startRpc({ extensions: ["."], timeoutMs: 60_000 });
	});
	after(async () => {
		await rpc?.close();
		await server?.close();
		await sandbox?.cleanup();
	});
	return { server: () => server, rpc: () => rpc };
}

describe("economic policy: the backstop", () => {
	const pi = backstopPi((req) =>
		isSummarizationRequest(req) ? { text: "MODEL SUMMARY" } : { text: `reply ${req.index}` },
	);

	it("compacts deterministically above the backstop, calls no model for it, and names the backstop", async () => {
		const rpc = pi.rpc();
		const server = pi.server();
		const state = await startThenBig(rpc);
		const compactions = await waitForEntries(state.sessionFile, "compaction");
		const usage = server.usages.at(-1)?.promptTokens ?? 0;
		assert.ok(usage > 0.3 * WINDOW && usage < 0.95 * WINDOW, `above the backstop, under the budget: ${usage}`);
		assert.equal(compactions.length, 1, rpc.stderr());
		assert.equal(compactions[0].fromHook, true);
		assert.ok(String(compactions[0].summary).startsWith(OUR_HEADER));
		assertNoSummarization(server);
		assert.match(rpc.stderr(), /below the economic policy's backstop \(backstopAt 4800 tokens\)/);
		assert.match(
			rpc.stderr(),
			/, so it compacted the context from ~[\d.]+k? tokens with its deterministic summary \(no model call\)/,
		);
	});
});

describe("economic policy: the backstop waits for the agent's run to end", () => {
	// After the big prompt, the model runs two commands before it answers: three requests in one run,
	// each above the backstop. Pi's compact() would abort the run at once and never resume it.
	const pi = backstopPi((req) => {
		if (isSummarizationRequest(req)) return { text: "MODEL SUMMARY" };
		const results = toolResultsOf(req).length;
		if (!lastUserText(req)?.startsWith("Constraints")) return { text: `reply ${req.index}` };
		if (results === 0) return { toolCalls: [{ name: "bash", args: { command: "echo step-one" } }] };
		if (results === 1) return { toolCalls: [{ name: "bash", args: { command: "echo step-two" } }] };
		return { text: "BOTH STEPS DONE" };
	});

	it("lets the run finish every step, then compacts deterministically", async () => {
		const rpc = pi.rpc();
		const server = pi.server();
		const state = await startThenBig(rpc);
		const [compaction] = await waitForEntries(state.sessionFile, "compaction");
		const afterBig = server.requests.filter((r) => lastUserText(r)?.startsWith("Constraints"));
		assert.equal(afterBig.length, 3, `every step of the run was requested: ${rpc.stderr()}`);
		assert.ok(
			afterBig.every((r) => (server.usages[r.index]?.promptTokens ?? 0) > 0.3 * WINDOW),
			"each step was above the backstop",
		);
		const entries = parseJsonl(readFileSync(state.sessionFile, "utf8"));
		const answered = entries.findIndex(
			(e) => e.type === "message" && JSON.stringify(e.message).includes("BOTH STEPS DONE"),
		);
		const compacted = entries.findIndex((e) => e.id === compaction.id);
		assert.ok(answered >= 0 && compacted > answered, "the compaction comes after the run's last answer");
		assert.equal(compaction.fromHook, true);
		assertNoSummarization(server);
	});
});

describe("economic policy: the backstop compaction keeps the hot tail, not Pi's keepRecentTokens", () => {
	// Prompts of ~1.1k tokens (user text never folds) until the context passes the backstop (4.8k,
	// 30 % of 16k). Pi would keep its keepRecentTokens (2k: the newest two prompts) raw; the backstop keeps
	// hotTail (1k): the newest prompt only.
	const pi = backstopPi((req) => ({ text: `reply ${req.index}` }), {
		compaction: { enabled: false, keepRecentTokens: 2_000 },
		"context-fold": { policy: "economic", backstopAt: 4_800, budgetFraction: 0.95, hotTail: 1_000 },
	});
	const prompt = (i: number) => `Prompt ${i}: ${"the parser must keep every byte of the input. ".repeat(100)}`;

	it("sends only the summary and the newest prompt raw after the compaction", async () => {
		const rpc = pi.rpc();
		const server = pi.server();
		for (let i = 1; i <= 4; i++) await rpc.prompt(prompt(i));
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		const [compaction] = await waitForEntries(state.sessionFile, "compaction");
		assert.equal(compaction?.fromHook, true, rpc.stderr());
		const entries = parseJsonl(readFileSync(state.sessionFile, "utf8"));
		const before = entries.slice(
			0,
			entries.findIndex((e) => e.id === compaction.id),
		);
		const prompts = before.filter((e) => e.type === "message" && (e.message as { role?: string }).role === "user");
		const newest = prompts.at(-1);
		assert.ok(prompts.length >= 3 && newest, `three prompts or more before it: ${prompts.length}`);
		assert.equal(compaction.firstKeptEntryId, newest.id, "the kept tail starts at the newest prompt");
		const head = (entry: (typeof entries)[number] | undefined) =>
			(JSON.stringify((entry?.message as { content?: unknown }).content).match(/Prompt \d+:/) ?? [""])[0];
		const newestText = head(newest);
		const previousText = head(prompts.at(-2));
		assert.ok(String(compaction.summary).includes(previousText), "the prompt it took out is in the summary");

		await rpc.prompt("Next: go on.");
		const next = server.requests.at(-1);
		assert.ok(next && lastUserText(next) === "Next: go on.");
		const texts = messagesOf(next)
			.filter((m) => m.role === "user")
			.map((m) => m.text);
		const users = texts.map((t) => (t.startsWith("Prompt") ? (t.match(/Prompt \d+:/) ?? [""])[0] : t.slice(0, 9)));
		assert.ok(texts[0]?.includes(OUR_HEADER), `the deterministic summary first: ${JSON.stringify(users)}`);
		assert.equal(users[1], newestText, "then the newest prompt before the compaction");
		assert.ok(!users.includes(previousText), "the prompt before it is not sent raw (Pi's cut would keep it)");
		assertNoSummarization(server);
	});
});
