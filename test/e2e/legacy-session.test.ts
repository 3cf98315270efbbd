/**
 * A session written under context-fold 0.5.1, resumed in the real `pi` CLI with this extension:
 * the session file holds messages and 0.5.1's `contextfold.fold` entries (fold, layer, a 0.3.x
 * spool record, an unfold, a layer-break) and 0.5.1's `seed-index.jsonl` lies beside it. Asserted on
 * the captured request bodies, Pi's stderr and the compaction Pi records: 0.5.1's frozen bytes go
 * out verbatim, its codes recall (sha-verified, or marked unverified without a hash), its unfold
 * holds, new 8-character folds sit beside its 6-character ones, and a compaction summary carries
 * facts and a pointer from its seed index.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CODES, DIGESTS, L, LEGACY_SESSION_ID, legacyEntries, legacySeedIndex } from "../fixtures/legacy-0.5.1.ts";
import { withoutAdvisories } from "./harness/advisories.ts";
import {
	type CapturedRequest,
	isSummarizationRequest,
	type JsonObject,
	type ModelServer,
	startModelServer,
	toolResultsOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiRpc, type PiSandbox, readSessionFile } from "./harness/pi-runner.ts";

const NEW_TAG = /^\{#([0-9a-z]{8}) FOLDED\}/;
const TIMEOUT_MS = 60_000;

/** The fixture as a Pi v3 session file (header, then entries chained by id/parentId). */
function sessionFile(cwd: string): string {
	const header = { type: "session", version: 3, id: LEGACY_SESSION_ID, timestamp: "2026-09-10T14:00:00.000Z", cwd };
	let parentId: string | null = null;
	const lines = [JSON.stringify(header)];
	legacyEntries().forEach((entry, i) => {
		const id = (0x3f1a9c00 + i).toString(16);
		const timestamp = new Date(Date.UTC(2026, 8, 10, 14, 0, i)).toISOString();
		lines.push(JSON.stringify({ ...entry, id, parentId, timestamp }));
		parentId = id;
	});
	return `${lines.join("\n")}\n`;
}

/** The Anthropic content blocks of the assistant message whose tool call has `callId`. */
function assistantBlocks(req: CapturedRequest, callId: string): JsonObject[] {
	const messages = (req.body.messages ?? []) as JsonObject[];
	const owner = messages.find(
		(m) =>
			m.role === "assistant" && (m.content as JsonObject[]).some((b) => b.type === "tool_use" && b.id === callId),
	);
	return (owner?.content as JsonObject[]) ?? [];
}

describe("a session written by context-fold 0.5.1, resumed in pi", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let rpc: PiRpc;
	let file: string;
	let fresh: string | undefined;
	let summary = "";

	before(async () => {
		server = await startModelServer((req, i) => {
			if (isSummarizationRequest(req)) return { text: "NATIVE SUMMARY" };
			if (i === 0) {
				fresh = toolResultsOf(req)
					.map((r) => NEW_TAG.exec(r.text)?.[1])
					.find(Boolean);
				return {
					toolCalls: [
						{ name: "recall_folded", args: { codes: [CODES.bash, CODES.read, fresh ?? CODES.thinking] } },
					],
				};
			}
			return { text: "done" };
		});
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: 32_000,
			settings: { compaction: { enabled: false, keepRecentTokens: 2_000 } },
		});
		file = join(sandbox.sessionDir, `2026-09-10T14-00-00-000Z_${LEGACY_SESSION_ID}.jsonl`);
		await writeFile(file, sessionFile(sandbox.cwd));
		const indexDir = join(sandbox.sessionDir, "context-fold", LEGACY_SESSION_ID);
		await mkdir(indexDir, { recursive: true });
		await writeFile(join(indexDir, "seed-index.jsonl"), legacySeedIndex());
		rpc = await sandbox.startRpc({ extensions: ["."], session: file, timeoutMs: TIMEOUT_MS });
		await rpc.prompt("continue");
		summary = (await rpc.call<{ summary: string }>({ type: "compact" })).summary;
	});

	after(async () => {
		if (rpc) {
			const exit = await rpc.close();
			assert.equal(exit.code, 0, rpc.stderr());
		}
		await server?.close();
		await sandbox?.cleanup();
	});

	it("restores without any warning: no entry skipped, no seed-index line skipped", () => {
		assert.doesNotMatch(withoutAdvisories(rpc.stderr()), /skipped|context-fold:/, rpc.stderr());
		assert.deepEqual(server.errors, []);
	});

	it("sends 0.5.1's frozen digest bytes verbatim: a tool result, thinking and an assistant text part", () => {
		const first = server.requests[0];
		const bash = toolResultsOf(first).find((r) => r.toolCallId === "toolu_01QmZ7");
		assert.equal(bash?.text, DIGESTS.bash);
		assert.ok(first.raw.includes(JSON.stringify(DIGESTS.bash)), "the digest bytes are in the body as JSON");
		const texts = assistantBlocks(first, "call_9fK2xT")
			.filter((b) => b.type === "text")
			.map((b) => b.text);
		assert.deepEqual(texts, [DIGESTS.thinking, DIGESTS.text], "unsigned thinking goes out as text on this API");
	});

	it("sends the block 0.5.1 unfolded raw, and the spool-only block raw", () => {
		const results = toolResultsOf(server.requests[0]);
		assert.equal(results.find((r) => r.toolCallId === "toolu_unf01")?.text, L.unfoldedText);
		assert.equal(results.find((r) => r.toolCallId === "call_9fK2xT")?.text, L.readText);
	});

	it("folds anew with 8-character codes beside the 6-character ones", () => {
		assert.ok(fresh, "no new fold in the first request");
		const tags = toolResultsOf(server.requests[0])
			.map((r) => /^\{#([0-9a-z]+) FOLDED\}/.exec(r.text)?.[1])
			.filter(Boolean);
		assert.ok(tags.includes(CODES.bash) && tags.some((t) => t?.length === 8), `tags: ${tags}`);
	});

	it("recalls the 0.5.1 code sha-verified, the spool record's code marked unverified, and a new code", () => {
		const recall = toolResultsOf(server.requests[1]).at(-1)?.text ?? "";
		assert.ok(recall.includes(`Recalled #${CODES.bash}: bash, 14 lines (sha256 verified)\n${L.bashText}\n`), recall);
		assert.ok(
			recall.includes(
				`Recalled #${CODES.read}: read, 2 lines (unverified: legacy record without a fold-time sha256)\n${L.readText}`,
			),
			recall,
		);
		assert.match(
			recall,
			new RegExp(`Recalled #${fresh}: bash, 600 lines \\(sha256 verified\\)\\nshard \\d case 1 passed ok`),
		);
	});

	it("compacts with a summary carrying the 0.5.1 index's facts and a pointer to a 0.5.1 code", async () => {
		assert.ok(!server.requests.some(isSummarizationRequest), "Pi's model summary ran");
		assert.ok(summary.includes(`- ${L.indexOnlyFile}\n`), summary);
		assert.ok(summary.includes(L.indexOnlyIdentifier), summary);
		assert.ok(summary.includes(`{#${CODES.bash} FOLDED} bash`), summary);
		assert.ok(!summary.includes(L.retractedIdentifier), summary);
		const compactions = (await readSessionFile(file)).filter((e) => e.type === "compaction");
		assert.equal(compactions.length, 1);
		assert.equal(compactions[0].fromHook, true);
	});
});
