/**
 * Fold codes that reach a branch through Pi's branch summary, through the real `pi` CLI: a trunk,
 * then branch A whose writes a compaction folds (its summary points at them), then a `/tree` move
 * back to the trunk with "summarize the branch left" (the `/goto-summarized` test extension), whose
 * scripted summary copies the pointers it was shown. On the new branch, which folded nothing, the
 * next request declares recall_folded, a recall of A's code is served from the session file,
 * sha256-verified and named as another branch's, and unfold of it puts nothing back, saying why.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
	type CapturedRequest,
	isSummarizationRequest,
	lastUserText,
	messagesOf,
	toolNamesOf,
	toolResultOf,
} from "./harness/model-server.ts";
import { readSessionFile } from "./harness/pi-runner.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

const GOTO = join(import.meta.dirname, "fixtures", "goto-extension.ts");
const TAG = /\{#([0-9a-z]{8}) FOLDED\}/g;

/** "WRITE <path>" gets one write call; "RECALL <code>" and "UNFOLD <code>" one call of that tool. */
function script(req: CapturedRequest) {
	if (isSummarizationRequest(req)) {
		const tags = [...new Set(JSON.stringify(req.body).match(TAG) ?? [])];
		return { text: `The branch left wrote side A. Its folded blocks: ${tags.join(" ")}` };
	}
	const last = messagesOf(req).at(-1);
	const user = lastUserText(req) ?? "";
	if (last?.role !== "user") return { text: "done" };
	const path = /^WRITE (\S+)/.exec(user)?.[1];
	if (path) {
		const body = `${Array.from({ length: 80 }, (_, i) => `export const v${i} = ${i};`).join("\n")}\n`;
		return { toolCalls: [{ name: "write", args: { path, content: body } }] };
	}
	const tool = /^(RECALL|UNFOLD) (\S+)/.exec(user);
	if (tool)
		return {
			toolCalls: [
				{
					id: `toolu_${tool[1]}`,
					name: tool[1] === "RECALL" ? "recall_folded" : "unfold",
					args: { codes: [tool[2]] },
				},
			],
		};
	return { text: "ok" };
}

describe("fold codes a branch summary carries to another branch", () => {
	const run = rpcFixture(
		script,
		{ contextWindow: 64_000, settings: { compaction: { keepRecentTokens: 400 } } },
		{ extensions: [".", GOTO], timeoutMs: 60_000 },
	);

	it("are declared, recalled from the other branch sha256-verified, and not unfolded", async () => {
		const { server, rpc } = run;
		await rpc.prompt("WRITE trunk/base.ts");
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		const trunkLeaf = (await readSessionFile(state.sessionFile)).at(-1)?.id as string;
		await rpc.prompt("WRITE sidea/alpha.ts");
		await rpc.prompt("WRITE sidea/beta.ts");
		const compacted = await rpc.call<{ summary: string }>({ type: "compact" });
		const codes = [...compacted.summary.matchAll(TAG)].map((m) => m[1]);
		assert.ok(codes.length > 0, compacted.summary);

		await rpc.prompt(`/goto-summarized ${trunkLeaf}`);
		const summaries = server.requests.filter((r) => isSummarizationRequest(r));
		assert.equal(summaries.length, 1, "Pi asked for one branch summary");
		const entries = await readSessionFile(state.sessionFile);
		const summary = entries.findLast((e) => e.type === "branch_summary");
		const carried = [...String(summary?.summary).matchAll(TAG)].map((m) => m[1]);
		const foreign = carried.find((code) => codes.includes(code));
		assert.ok(foreign, `the branch summary carries none of branch A's codes: ${summary?.summary}`);
		const byId = new Map(entries.map((e) => [e.id, e] as const));
		let folds = 0;
		for (let e = entries.at(-1); e; e = byId.get(e.parentId as string))
			if (e.customType === "contextfold.fold") folds++;
		assert.equal(folds, 0, "the new branch has folded nothing of its own");

		const before = server.requests.length;
		await rpc.prompt(`RECALL ${foreign}`);
		const asked = server.requests[before];
		assert.ok(toolNamesOf(asked).includes("recall_folded"), `declared: ${toolNamesOf(asked).join(", ")}`);
		const recalled = toolResultOf(server.requests.at(-1) as CapturedRequest, "toolu_RECALL") ?? "";
		assert.match(
			recalled,
			new RegExp(`^Recalled #${foreign}: .*\\(from another branch of this session, sha256 verified\\)\\n`),
		);
		assert.ok(recalled.includes("export const v79 = 79;"), recalled.slice(0, 300));

		await rpc.prompt(`UNFOLD ${foreign}`);
		const unfolded = toolResultOf(server.requests.at(-1) as CapturedRequest, "toolu_UNFOLD") ?? "";
		// Unfold puts back nothing: a block of branch A's alone cannot come back here, and one of the
		// trunk's that A folded is in this branch's context as it was read (hooks.test.ts holds each case).
		assert.match(
			unfolded,
			new RegExp(
				`^#${foreign} (was folded on another branch of this session; it cannot be unfolded here, recall_folded reads it|is not folded on this branch \\(another branch folded it\\): it is in the context as it was read)$`,
			),
		);
	});
});
