/**
 * A session whose last fold event's layer entry cannot be read (damaged on disk), resumed with
 * `pi -c` against the scripted model server. The restore skips the entry, so the blocks it folded
 * would go out raw; the branch's last response counted them folded, so its size says the context is
 * smaller than what would be sent. The first request after the resume folds them again as its policy
 * needs (its size worked out from the request itself), not a raw request the next one rewrites again.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import {
	type CapturedRequest,
	lastUserText,
	type ModelServer,
	startModelServer,
	toolResultOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox, type RunResult } from "./harness/pi-runner.ts";

const WAIT_MS = 90_000;
const BATCHES = 5;
const batchId = (k: number) => `toolu_lost_${k}`;
const TAG = /^\{#[0-9a-z]{8} FOLDED\}/;

/** "run" runs BATCHES bash commands of 400 lines, one a turn, then answers; anything else is answered. */
function script(req: CapturedRequest) {
	if (lastUserText(req) !== "run") return { text: "noted" };
	const sent = JSON.stringify(req.body);
	for (let k = 1; k <= BATCHES; k++) {
		if (!sent.includes(batchId(k)))
			return {
				toolCalls: [
					{
						id: batchId(k),
						name: "bash",
						args: { command: `for i in $(seq 1 400); do echo "lost batch ${k} output line $i ok"; done` },
					},
				],
			};
	}
	return { text: "batches done" };
}

describe("a resumed session whose last fold entry cannot be read", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let resumed: RunResult;
	let lost: string[] = [];
	let firstAfter: CapturedRequest | undefined;

	before(async () => {
		server = await startModelServer(script);
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: 20_000,
			settings: { compaction: { enabled: false }, "context-fold": { policy: "ladder", tail: 1000 } },
		});
		const first = await sandbox.runPrint({ prompt: "run", extensions: ["."], timeoutMs: WAIT_MS });
		assert.equal(first.code, 0, first.stderr);
		const file = await sandbox.latestSessionFile();
		assert.ok(file, "no session file");
		const lines = (await readFile(file, "utf8")).split("\n");
		const at = lines.findLastIndex((l) => l.includes('"customType":"contextfold.fold"') && l.includes('"layer"'));
		assert.ok(at > 0, "the first run folded nothing");
		// Its ops unreadable, every line after it kept: the final answer's request carried the fold.
		const entry = JSON.parse(lines[at]);
		lost = (entry.data.ops as { id: string }[]).map((op) => op.id.replace(/^r:/, ""));
		entry.data.ops = "unreadable";
		lines[at] = JSON.stringify(entry);
		await writeFile(file, lines.join("\n"));
		const from = server.requests.length;
		resumed = await sandbox.runPrint({
			prompt: "and now?",
			extensions: ["."],
			continueSession: true,
			timeoutMs: WAIT_MS,
		});
		firstAfter = server.requests[from];
	});

	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	it("folds the blocks of the unreadable event again in the first request after the resume", () => {
		assert.equal(resumed.code, 0, resumed.stderr);
		assert.match(resumed.stderr, /skipped 1 unreadable fold entry/);
		assert.ok(firstAfter, "the resumed run sent no request");
		assert.ok(lost.length > 0, "the damaged event folded nothing");
		// As many as bring the request under the policy's line again (the ladder's step), the oldest first.
		const again = lost.filter((id) => TAG.test(toolResultOf(firstAfter as CapturedRequest, id) ?? ""));
		assert.ok(again.length > 0, `none of ${lost.join(", ")} went out folded again`);
		assert.equal(again[0], lost[0]);
		assert.doesNotMatch(resumed.stderr, /did not reach the wire/);
	});
});
