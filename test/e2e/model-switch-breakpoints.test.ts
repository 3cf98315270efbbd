/**
 * One session across wire formats through the real `pi` CLI (RPC `set_model`): Anthropic Messages,
 * then OpenAI Responses, then Anthropic again, a bash call a prompt, folding under the ladder. On
 * every captured request each tool call keeps its result, and two requests in a row on one wire with
 * no fold layer written between them send the same message prefix. Back on Anthropic, every request
 * carries context-fold's frontier mark (a `cache_control` on a tool result other than the last
 * block): a frontier on a result of the Responses leg names its call `call_x|fc_y`, which pi-ai
 * sends to Anthropic as `call_x_fc_y`, and a mark looked up by the raw id never landed, so the next
 * fold event rewrote the whole conversation instead of its suffix.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { analyze, messageJson, prefixBreak, unpaired } from "./harness/fold-wire.ts";
import { type CapturedRequest, lastUserText, messagesOf, type Reply, toolResultsOf } from "./harness/model-server.ts";
import { readSessionFile } from "./harness/pi-runner.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

/** A prompt `go …` runs one bash call of 250 lines and an error line; anything else is answered. */
function script(req: CapturedRequest): Reply {
	const ran = toolResultsOf(req).length;
	if (req.index > 80) return { text: "guard: too many requests" };
	if ((lastUserText(req) ?? "").startsWith("go") && messagesOf(req).at(-1)?.role === "user") {
		const command = `for i in $(seq 1 250); do echo "r${ran} line $i ok padding"; done; echo "Error: planted ${ran}"`;
		return { toolCalls: [{ name: "bash", args: { command } }] };
	}
	return { text: "ok" };
}

/** Marks on tool results that are not the request's last block: context-fold's frontiers. */
function frontierMarks(req: CapturedRequest): number {
	const messages = (req.body.messages as { content: unknown }[]) ?? [];
	let n = 0;
	messages.forEach((m, mi) => {
		if (!Array.isArray(m.content)) return;
		m.content.forEach((b: { type?: string; cache_control?: unknown }, bi: number) => {
			const last = mi === messages.length - 1 && bi === (m.content as unknown[]).length - 1;
			if (b.type === "tool_result" && b.cache_control && !last) n++;
		});
	});
	return n;
}

describe("a session switching wire formats through pi --mode rpc", () => {
	const run = rpcFixture(
		script,
		{
			provider: "fa",
			modelId: "model-a",
			contextWindow: 20_000,
			maxTokens: 8_000,
			settings: {
				compaction: { enabled: false },
				"context-fold": { policy: "ladder", foldAt: 0.3, step: 0.1, tail: 1000 },
			},
		},
		{ extensions: ["."], timeoutMs: 120_000 },
		async ({ server, sandbox }) => {
			// A second provider on the same server, speaking OpenAI Responses.
			const file = join(sandbox.agentDir, "models.json");
			const models = JSON.parse(await readFile(file, "utf8"));
			const first = models.providers.fa;
			models.providers.fr = {
				...first,
				baseUrl: `${server.url}/v1`,
				api: "openai-responses",
				models: [{ ...first.models[0], id: "model-r", name: "model-r" }],
			};
			await writeFile(file, JSON.stringify(models, null, 2));
		},
	);

	it("keeps calls paired, prefixes whole between fold events, and frontier marks landing after the switch back", async () => {
		const { server, rpc } = run;
		const layers = async () => {
			const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
			return (await readSessionFile(state.sessionFile)).filter(
				(e) => e.customType === "contextfold.fold" && (e.data as { kind?: string })?.kind === "layer",
			).length;
		};
		for (let k = 0; k < 6; k++) await rpc.prompt(`go a${k}`);
		assert.ok((await layers()) > 0, "folded on the first Anthropic leg");
		await rpc.call({ type: "set_model", provider: "fr", modelId: "model-r" });
		for (let k = 0; k < 5; k++) await rpc.prompt(`go r${k}`);
		assert.ok(
			server.requests.some((r) => r.api === "responses"),
			"the Responses leg went over its wire",
		);
		await rpc.call({ type: "set_model", provider: "fa", modelId: "model-a" });
		const from = server.requests.length;
		for (let k = 0; k < 5; k++) await rpc.prompt(`go b${k}`);
		const folds = analyze(server.requests);
		server.requests.forEach((req, i) => {
			const u = unpaired(req);
			assert.deepEqual(u, { callsWithoutResult: [], resultsWithoutCall: [] }, `request ${i} (${req.api})`);
			const prev = server.requests[i - 1];
			if (prev && prev.api === req.api && folds[i - 1].signature === folds[i].signature)
				assert.equal(
					prefixBreak(messageJson(prev), messageJson(req)),
					-1,
					`request ${i} (${req.api}): prefix moved`,
				);
		});
		const after = server.requests.slice(from);
		assert.ok(after.length > 0 && after.every((r) => r.api === "anthropic"));
		assert.deepEqual(
			after.map((r) => frontierMarks(r) > 0),
			after.map(() => true),
			`frontier marks per request after the switch back: ${after.map(frontierMarks).join(",")}`,
		);
	});
});
