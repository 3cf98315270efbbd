/**
 * The real recorded sessions through the real `pi` CLI: each shared session is resumed in a sandbox
 * (its header's cwd pointed at the sandbox), and the first request already folds the old tool
 * results of the long history; a recall of one of those codes is served from the session file,
 * sha-verified. The pre-v2 large session also proves the ledger route works on a migrated file.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sessionsDir } from "../../bench/sessions.ts";
import { startModelServer, toolResultsOf } from "./harness/model-server.ts";
import { createPiSandbox } from "./harness/pi-runner.ts";

const TAG = /^\{#([0-9a-z]{8}) FOLDED\}/;

for (const [file, window] of [
	["large-session.jsonl", 200_000],
	["accordion-sample.jsonl", 160_000],
] as const) {
	describe(`resuming ${file} in pi`, () => {
		it("folds old results on the first request and recalls one sha-verified", async () => {
			const server = await startModelServer((req, i) => {
				if (i === 0) {
					const code = toolResultsOf(req)
						.map((r) => TAG.exec(r.text)?.[1])
						.find(Boolean);
					if (code) return { toolCalls: [{ name: "recall_folded", args: { codes: [code], lines: "1-3" } }] };
				}
				return { text: "done" };
			});
			const sandbox = await createPiSandbox({
				serverUrl: server.url,
				contextWindow: window,
				settings: { compaction: { enabled: false } },
			});
			try {
				const lines = readFileSync(join(sessionsDir(), file), "utf8").split("\n");
				const header = JSON.parse(lines[0]);
				header.cwd = sandbox.cwd;
				lines[0] = JSON.stringify(header);
				const session = join(sandbox.sessionDir, file);
				writeFileSync(session, lines.join("\n"));
				const run = await sandbox.runPrint({ prompt: "continue", extensions: ["."], session, timeoutMs: 60_000 });
				assert.equal(run.code, 0, run.stderr);
				assert.equal(server.requests.length, 2, "one recall, then the answer");
				const first = toolResultsOf(server.requests[0]);
				const folded = first.filter((r) => TAG.test(r.text));
				assert.ok(folded.length >= 20, `only ${folded.length} of ${first.length} results folded`);
				assert.ok(!TAG.test(first.at(-1)?.text ?? ""), "the newest result stays raw");
				const recall = toolResultsOf(server.requests[1]).at(-1)?.text ?? "";
				assert.match(recall, /^Recalled #[0-9a-z]{8}: \w+, \d+ lines \(sha256 verified\)\n1: /);
			} finally {
				await server.close();
				await sandbox.cleanup();
			}
		});
	});
}
