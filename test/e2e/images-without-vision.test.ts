/**
 * Images sent to a model without image input, through the real `pi` CLI (the harness's model takes
 * text only): pi-ai sends a short placeholder in each image's place, so context-fold weighs an image
 * as that placeholder, not as a picture. Ten screenshots read with `read` then leave the context
 * figure of `/context-fold status` near what the requests carry, where each image counted 1,600
 * tokens before (the status read 17k of a 40k window for what was about 2k).
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type CapturedRequest, messagesOf, type Reply, toolResultsOf } from "./harness/model-server.ts";
import type { PiRpc } from "./harness/pi-runner.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

/** A 1×1 PNG. */
const PNG = Buffer.from(
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
	"base64",
);
const SHOTS = 10;

/** "look": a read of each screenshot in turn, then a short answer. */
function script(req: CapturedRequest): Reply {
	const ran = toolResultsOf(req).length;
	if (messagesOf(req).at(-1)?.role === "assistant" || ran >= SHOTS) return { text: "seen" };
	return { toolCalls: [{ name: "read", args: { path: `shot${ran + 1}.png` } }] };
}

/** The tokens of the status's "Context" line, in thousands. */
async function contextK(rpc: PiRpc): Promise<number> {
	const { events } = await rpc.prompt("/context-fold status", { timeoutMs: 60_000 });
	const note = events.find((e) => e.type === "extension_ui_request" && e.method === "notify");
	const line = /Context +([\d.]+)(k?) of/.exec(String(note?.message ?? ""));
	assert.ok(line, String(note?.message));
	return Number(line[1]) / (line[2] === "k" ? 1 : 1000);
}

describe("screenshots read by a model without image input", () => {
	const run = rpcFixture(
		script,
		{ contextWindow: 40_000, settings: { compaction: { enabled: false } } },
		{ extensions: ["."], timeoutMs: 60_000 },
		async ({ sandbox }) => {
			for (let i = 1; i <= SHOTS; i++) await writeFile(join(sandbox.cwd, `shot${i}.png`), PNG);
		},
	);

	it("weigh what pi-ai sends in their place", async () => {
		const { server, rpc } = run;
		await rpc.prompt("look");
		const last = server.requests.at(-1) as CapturedRequest;
		assert.equal(toolResultsOf(last).length, SHOTS);
		assert.match(last.raw, /image omitted: model does not support images/, "pi-ai sent placeholders");
		const context = await contextK(rpc);
		assert.ok(context < 5, `the status counts ${context}k for ten placeholders and a few prompts`);
	});
});
