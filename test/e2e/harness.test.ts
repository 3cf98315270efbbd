/**
 * Smoke test of the e2e harness: the real `pi` CLI against the scripted model server, for both
 * wire APIs, in print mode and RPC mode, plus resuming a session, and the server's thinking,
 * stalled-stream and cache-expiry replies as Pi records them.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
	type CapturedRequest,
	isSummarizationRequest,
	lastUserText,
	type ModelServer,
	messagesOf,
	type Reply,
	startModelServer,
	toolNamesOf,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiApi, type PiSandbox, parseJsonl, readSessionFile } from "./harness/pi-runner.ts";

const MARKER_EXTENSION = "test/e2e/fixtures/marker-extension.ts";
const MARKER = "[e2e-marker]";
/** Only a hang: the runner kills pi and rejects past it, so a slow machine never fails a figure. */
const TIMEOUT_MS = 120_000;

/** After a user prompt: run `seq 1 50` through the bash tool. After the tool result: answer with text. */
function seqScript(finalText: string) {
	return (req: CapturedRequest): Reply => {
		if (isSummarizationRequest(req)) return { text: "E2E SUMMARY" };
		if (messagesOf(req).at(-1)?.role === "user") {
			return { toolCalls: [{ name: "bash", args: { command: "seq 1 50" } }] };
		}
		return { text: finalText };
	};
}

for (const api of ["anthropic-messages", "openai-completions"] as PiApi[]) {
	describe(`pi -p against the scripted ${api} server`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;

		before(async () => {
			server = await startModelServer(seqScript("All done: fifty lines."));
			sandbox = await createPiSandbox({ serverUrl: server.url, api, contextWindow: 16000, maxTokens: 1024 });
		});
		after(async () => {
			await server.close();
			await sandbox.cleanup();
		});

		it("loads the -e extension, runs bash, sends the tool result back, and exits by itself", async () => {
			const usageLog = join(sandbox.root, "usage.jsonl");
			const result = await sandbox.runPrint({
				prompt: "Count to fifty please",
				extensions: [MARKER_EXTENSION],
				env: { E2E_MARKER_LOG: usageLog, CONTEXTFOLD: "0" },
				timeoutMs: TIMEOUT_MS,
			});
			assert.equal(result.code, 0, `pi exited with ${result.code}\n${result.stderr}`);
			assert.equal(result.stdout.trim(), "All done: fifty lines.");
			assert.deepEqual(server.errors, []);

			assert.equal(server.requests.length, 2);
			const [first, second] = server.requests;
			assert.equal(first.api, api === "anthropic-messages" ? "anthropic" : "openai");
			assert.ok(toolNamesOf(first).includes("bash"), `tools: ${toolNamesOf(first)}`);
			// The extension's `context` handler ran before each request.
			assert.equal(lastUserText(first), `Count to fifty please ${MARKER}`);
			assert.equal(toolResultsOf(first).length, 0);

			const results = toolResultsOf(second);
			assert.equal(results.length, 1);
			const lines = results[0].text.trim().split("\n");
			assert.equal(lines[0], "1");
			assert.equal(lines[49], "50");
			assert.ok(second.raw.includes("50"));
			const call = messagesOf(second).find((m) => m.role === "assistant")?.toolCalls?.[0];
			assert.equal(call?.name, "bash");
			assert.equal(call?.id, results[0].toolCallId);

			// Prefix cache simulation: the second prompt extends the first.
			const u1 = server.usages[1]!;
			assert.ok(u1.cacheRead > 0 && u1.cacheRead < u1.promptTokens, JSON.stringify(u1));
			assert.equal(u1.input + u1.cacheRead + u1.cacheWrite, u1.promptTokens);

			// ctx.getContextUsage() reflects the reported usage and the configured window.
			const usage = parseJsonl(await readFile(usageLog, "utf8"));
			assert.equal(usage.length, 2);
			const last = usage[1].usage as { tokens: number; contextWindow: number };
			assert.equal(last.contextWindow, 16000);
			assert.equal(last.tokens, u1.promptTokens + u1.output);

			// A session file was written; the marker (a context rewrite) is not persisted.
			const files = await sandbox.sessionFiles();
			assert.equal(files.length, 1);
			const raw = await readFile(files[0], "utf8");
			assert.ok(raw.includes("Count to fifty please"));
			assert.ok(!raw.includes(MARKER));
		});

		it("resumes the same session with --session <file>", async () => {
			const file = (await sandbox.latestSessionFile())!;
			const before = server.requests.length;
			const result = await sandbox.runPrint({
				prompt: "again",
				session: file,
				extensions: [MARKER_EXTENSION],
				timeoutMs: TIMEOUT_MS,
			});
			assert.equal(result.code, 0, result.stderr);
			assert.equal(server.requests.length, before + 2);
			const resumed = server.requests[before];
			const texts = messagesOf(resumed).map((m) => `${m.role}:${m.text}`);
			assert.ok(texts.includes(`user:Count to fifty please ${MARKER}`), texts.join("\n"));
			assert.equal(lastUserText(resumed), "again");
			assert.equal(toolResultsOf(resumed).length, 1);
			assert.equal(result.stdout.trim(), "All done: fifty lines.");
			// Still one session file, now with both prompts.
			assert.deepEqual(await sandbox.sessionFiles(), [file]);
			const entries = await readSessionFile(file);
			const userTexts = entries
				.filter((e) => e.type === "message")
				.map((e) => e.message as { role: string; content: unknown })
				.filter((m) => m.role === "user")
				.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
			assert.equal(userTexts.length, 2);
		});
	});
}

describe("pi --mode rpc against the scripted server", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;

	before(async () => {
		server = await startModelServer(seqScript("RPC done."));
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			api: "anthropic-messages",
			contextWindow: 16000,
			// Small enough that a manual compaction has something to summarize.
			settings: { compaction: { keepRecentTokens: 10 } },
		});
	});
	after(async () => {
		await server.close();
		await sandbox.cleanup();
	});

	it("prompts, waits for agent_settled, reads entries/stats, compacts, and shuts down on stdin EOF", async () => {
		const rpc = await sandbox.startRpc({ extensions: [MARKER_EXTENSION], timeoutMs: TIMEOUT_MS });
		try {
			const { response, events } = await rpc.prompt("Count to fifty please");
			assert.equal((response.data as { disposition: string }).disposition, "started");
			const types = events.map((e) => e.type);
			assert.ok(types.includes("agent_end"));
			assert.ok(types.includes("tool_execution_end"));
			assert.equal(types.at(-1), "agent_settled");

			const state = await rpc.call<{ model: { id: string; contextWindow: number }; sessionFile: string }>({
				type: "get_state",
			});
			assert.equal(state.model.id, sandbox.modelId);
			assert.equal(state.model.contextWindow, 16000);
			assert.ok(state.sessionFile.startsWith(sandbox.sessionDir));

			const { entries } = await rpc.call<{
				entries: { type: string; message?: { role: string; content: unknown } }[];
			}>({ type: "get_entries" });
			const roles = entries.filter((e) => e.type === "message").map((e) => e.message!.role);
			// Pi 1.6 persists the system prompt as the first message entry.
			assert.deepEqual(roles, ["system", "user", "assistant", "toolResult", "assistant"]);
			const toolResult = entries.find((e) => e.message?.role === "toolResult")!;
			assert.ok(JSON.stringify(toolResult.message!.content).includes("50"));

			const stats = await rpc.call<{ contextUsage: { tokens: number; contextWindow: number } }>({
				type: "get_session_stats",
			});
			assert.equal(stats.contextUsage.contextWindow, 16000);
			assert.ok(stats.contextUsage.tokens > 0);

			assert.equal(server.requests.length, 2);
			assert.ok(toolResultsOf(server.requests[1])[0].text.includes("50"));
			assert.equal(lastUserText(server.requests[0]), `Count to fifty please ${MARKER}`);

			// Manual compaction: Pi sends a summarization request to the same model.
			const compacted = await rpc.call<{ summary: string; tokensBefore: number }>({ type: "compact" });
			assert.ok(compacted.summary.includes("E2E SUMMARY"), compacted.summary);
			assert.equal(server.requests.length, 3);
			const summaryReq = server.requests[2];
			assert.ok(isSummarizationRequest(summaryReq));
			assert.deepEqual(toolNamesOf(summaryReq), []);
			assert.ok(lastUserText(summaryReq)?.includes("seq 1 50"));
			const after = await rpc.call<{ contextUsage: { tokens: number | null } }>({ type: "get_session_stats" });
			assert.equal(after.contextUsage.tokens, null, "context tokens are unknown right after compaction");
		} finally {
			const exit = await rpc.close();
			assert.equal(exit.code, 0, rpc.stderr());
		}
	});
});

describe("scripted server: thinking, stalled streams, cache expiry", () => {
	for (const api of ["anthropic-messages", "openai-completions"] as PiApi[]) {
		it(`${api}: Pi stores unsigned thinking, records an abort mid-stream, and sees a cold cache after expiry`, async () => {
			const replies: Reply[] = [
				{ thinking: "Plan: answer briefly.", text: "First answer." },
				{ text: "Second answer." },
				{ thinking: "Long plan", text: "This answer is cut off", stall: true },
			];
			let stalled = () => {};
			const stalledNow = new Promise<void>((resolve) => {
				stalled = resolve;
			});
			const server = await startModelServer((_req, i) => {
				if (replies[i]?.stall) stalled();
				return replies[i] ?? { text: "?" };
			});
			const sandbox = await createPiSandbox({ serverUrl: server.url, api, modelExtra: { reasoning: true } });
			const rpc = await sandbox.startRpc({ timeoutMs: TIMEOUT_MS, args: ["--thinking", "medium"] });
			try {
				await rpc.prompt("one");
				server.expireCache();
				await rpc.prompt("two");
				assert.equal(server.usages[1]?.cacheRead, 0, "expired cache reads nothing");
				await rpc.send({ type: "prompt", message: "three" });
				await stalledNow;
				await rpc.waitFor((r) => r.type === "message_update", { from: rpc.records.length });
				await rpc.call({ type: "abort" });
				await rpc.waitFor((r) => r.type === "agent_settled");
				const { entries } = await rpc.call<{
					entries: {
						type: string;
						message?: { role: string; content: Record<string, unknown>[]; stopReason?: string };
					}[];
				}>({ type: "get_entries" });
				const answers = entries.flatMap((e) => (e.message?.role === "assistant" ? [e.message] : []));
				assert.equal(answers.length, 3);
				const thinking = answers[0].content.find((b) => b.type === "thinking");
				assert.equal(thinking?.thinking, "Plan: answer briefly.");
				assert.ok(
					!thinking?.thinkingSignature || api === "openai-completions",
					"Anthropic thinking has no signature",
				);
				assert.equal(answers[2].stopReason, "aborted");
				assert.ok(JSON.stringify(answers[2].content).includes("This answer is cut off"));
			} finally {
				await rpc.close();
				await server.close();
				await sandbox.cleanup();
			}
		});
	}
});
