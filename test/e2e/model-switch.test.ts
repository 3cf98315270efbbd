/**
 * Thinking another model wrote, through the real `pi` CLI: a reply with long unsigned thinking from an
 * Anthropic-API model, then RPC `set_model` to an OpenAI-completions model. pi-ai drops thinking
 * another model wrote from every request it sends, so context-fold counts it as nothing: no fold
 * event fires whose only saving would be that thinking (a cache rewrite for nothing), the thinking
 * never reaches the wire, and no fold record names it.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type CapturedRequest, lastUserText, messagesOf, type Reply, toolResultsOf } from "./harness/model-server.ts";
import { readSessionFile } from "./harness/pi-runner.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

const MARK = "THINKMARK";

/** "think": long thinking and a short answer; "go": three bash calls of 300 lines; anything else: "ok". */
function script(req: CapturedRequest): Reply {
	const user = lastUserText(req) ?? "";
	if (user === "think") return { thinking: `${MARK} ${"deliberate reasoning word ".repeat(1_600)}`, text: "thought." };
	const ran = toolResultsOf(req).length;
	if (user === "go" && messagesOf(req).at(-1)?.role !== "assistant" && ran < 3) {
		const command = `for i in $(seq 1 300); do echo "b${ran} line $i ok some padding text here"; done`;
		return { toolCalls: [{ name: "bash", args: { command } }] };
	}
	return { text: "ok" };
}

describe("a switch of model after a reply with thinking", () => {
	const run = rpcFixture(
		script,
		{
			provider: "fa",
			modelId: "model-a",
			contextWindow: 20_000,
			maxTokens: 16_000,
			settings: {
				compaction: { enabled: false },
				"context-fold": { policy: "working-set", foldFrom: 8000, minEvent: 8000, hotTail: 1000 },
			},
		},
		{ extensions: ["."], timeoutMs: 60_000 },
		async ({ server, sandbox }) => {
			// A second provider and model beside the harness's one, on the same server's OpenAI route.
			const file = join(sandbox.agentDir, "models.json");
			const models = JSON.parse(await readFile(file, "utf8"));
			const first = models.providers.fa;
			models.providers.fo = {
				...first,
				baseUrl: `${server.url}/v1`,
				api: "openai-completions",
				models: [{ ...first.models[0], id: "model-b", name: "model-b" }],
			};
			await writeFile(file, JSON.stringify(models, null, 2));
		},
	);

	it("counts the thinking pi-ai no longer sends as nothing, and folds none of it", async () => {
		const { server, rpc } = run;
		await rpc.prompt("think");
		await rpc.call({ type: "set_model", provider: "fo", modelId: "model-b" });
		assert.equal(server.requests.at(-1)?.api, "anthropic", "the first model answered on its route");
		await rpc.prompt("go");
		for (let k = 0; k < 6; k++) await rpc.prompt("next");
		const after = server.requests.slice(1);
		assert.ok(after.length >= 6);
		assert.ok(
			after.every((req) => req.api === "openai"),
			"the second model answered the rest",
		);
		for (const req of after)
			assert.ok(!req.raw.includes(MARK), `request ${req.index} carries the other model's thinking`);
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		const folds = (await readSessionFile(state.sessionFile)).filter((e) => e.customType === "contextfold.fold");
		assert.deepEqual(folds, [], "no fold event for thinking that is never sent");
	});
});
