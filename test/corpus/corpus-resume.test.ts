/**
 * Every recorded session resumes in the real `pi` CLI (plain Pi, no extension): a copy with its
 * header cwd pointed at a sandbox is opened with `--session` in print mode against the scripted
 * model server, and the request Pi sends carries exactly the active branch as the corpus tests read
 * it: the tool results after the last compaction's first kept entry are there, the ones compacted
 * away or left on an abandoned branch are not, and the compaction and branch summaries are. The
 * project's own recordings only (test/fixtures/sessions, as `npm run record-sessions` makes them:
 * each with a compaction or an abandoned branch, in a window Pi does not compact in on resume);
 * test/e2e/real-sessions.test.ts resumes every corpus session, the optional folders' too.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { lastUserText, startModelServer } from "../e2e/harness/model-server.ts";
import { createPiSandbox } from "../e2e/harness/pi-runner.ts";
import { type CorpusSession, type Entry, loadCorpus } from "./session-tree.ts";

/** Tool-call ids of the tool results Pi must send (kept) and must not send (dropped). */
function expectedContext(s: CorpusSession): { kept: string[]; dropped: string[]; summaries: string[] } {
	const compaction = s.branch.findLast((e) => e.type === "compaction");
	const firstKept = compaction ? s.branch.findIndex((e) => e.id === compaction.firstKeptEntryId) : 0;
	const live = new Set(s.branch.slice(firstKept).map((e) => e.id));
	const idOf = (e: Entry) => (e.message?.role === "toolResult" ? e.message.toolCallId : undefined);
	const kept: string[] = [];
	const dropped: string[] = [];
	for (const e of s.entries) {
		const id = idOf(e);
		if (id) (live.has(e.id) ? kept : dropped).push(id);
	}
	const summaries = s.branch
		.filter((e) => e.type === "compaction" || e.type === "branch_summary")
		.map((e) => (e.summary ?? "").split("\n").find((l) => l.length > 40) ?? "");
	return { kept, dropped, summaries };
}

describe("the recorded sessions resume in pi", () => {
	for (const s of loadCorpus()) {
		it(`${s.name}: pi sends the active branch after its compaction and nothing else`, async () => {
			const server = await startModelServer(() => ({ text: "Resumed." }));
			const sandbox = await createPiSandbox({
				serverUrl: server.url,
				contextWindow: 200_000,
				maxTokens: 32_000,
				modelExtra: { input: ["text", "image"] },
				settings: { compaction: { reserveTokens: 16_384 } },
			});
			try {
				const file = join(sandbox.sessionDir, s.name);
				const lines = [
					JSON.stringify({ ...s.header, cwd: sandbox.cwd }),
					...s.entries.map((e) => JSON.stringify(e)),
				];
				writeFileSync(file, `${lines.join("\n")}\n`);
				const run = await sandbox.runPrint({ prompt: "Where were we?", session: file, timeoutMs: 60_000 });
				assert.equal(run.code, 0, run.stderr);
				assert.equal(run.stdout.trim(), "Resumed.");
				assert.equal(server.requests.length, 1, "one request, no compaction or retry");
				const req = server.requests[0];
				assert.equal(lastUserText(req), "Where were we?");
				const { kept, dropped, summaries } = expectedContext(s);
				assert.ok(kept.length > 0 && dropped.length > 0, `${s.name}: nothing compacted or abandoned`);
				for (const id of kept) assert.ok(req.raw.includes(id), `kept result ${id} missing`);
				for (const id of dropped) assert.ok(!req.raw.includes(id), `dropped result ${id} sent`);
				for (const line of summaries)
					assert.ok(req.raw.includes(JSON.stringify(line).slice(1, -1)), `summary line missing: ${line}`);
			} finally {
				await server.close();
				await sandbox.cleanup();
			}
		});
	}
});
