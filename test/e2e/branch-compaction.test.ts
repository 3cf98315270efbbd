/**
 * Branch-exact compaction through the real `pi` CLI: a trunk, then branch A, then `/tree`
 * navigation (the `/goto` test extension calls `navigateTree`) back to the trunk and branch B. A
 * compaction on B and then one on A each state only their own branch's files, intents and error
 * lines, and every `{#code FOLDED}` pointer in a summary names a fold record of that branch.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { withoutAdvisories } from "./harness/advisories.ts";
import { isSummarizationRequest, lastUserText, messagesOf, type startModelServer } from "./harness/model-server.ts";
import { type JsonRecord, readSessionFile } from "./harness/pi-runner.ts";
import { rpcFixture } from "./harness/rpc-fixture.ts";

const GOTO = join(import.meta.dirname, "fixtures", "goto-extension.ts");
const TAG = /\{#([0-9a-z]{6,8}) FOLDED\}/g;

/** Replies: a prompt "WRITE <path> ..." gets one write call of that path, then a short answer. */
function script(req: Parameters<Parameters<typeof startModelServer>[0]>[0]) {
	if (isSummarizationRequest(req)) return { text: "MODEL SUMMARY" };
	const last = messagesOf(req).at(-1);
	const path = /WRITE (\S+)/.exec(lastUserText(req) ?? "")?.[1];
	if (last?.role === "user" && path) {
		const body = `${Array.from({ length: 60 }, (_, i) => `export const v${i} = ${i};`).join("\n")}\n`;
		return { toolCalls: [{ name: "write", args: { path, content: body } }] };
	}
	return { text: `done with ${path ?? "that"}` };
}

/** Entries on the path from the root to `leaf`. */
function branchOf(entries: readonly JsonRecord[], leaf: string): JsonRecord[] {
	const byId = new Map(entries.map((e) => [e.id, e] as const));
	const out: JsonRecord[] = [];
	for (let e = byId.get(leaf); e; e = byId.get(e.parentId as string)) out.unshift(e);
	return out;
}

/** Codes of the fold records on a branch. */
function codesOn(branch: readonly JsonRecord[]): Set<string> {
	const codes = new Set<string>();
	for (const e of branch) {
		const data = e.data as { kind?: string; records?: { code: string }[] } | undefined;
		if (e.type === "custom" && e.customType === "contextfold.fold" && data?.kind === "records") {
			for (const r of data.records ?? []) codes.add(r.code);
		}
	}
	return codes;
}

describe("compaction on two branches of one session", () => {
	const run = rpcFixture(
		script,
		{ contextWindow: 64_000, settings: { compaction: { keepRecentTokens: 400 } } },
		{ extensions: [".", GOTO], timeoutMs: 60_000 },
	);

	it("each branch's summary holds its own facts only, with pointers that resolve on it", async () => {
		const { server, rpc } = run;
		await rpc.prompt("WRITE trunk/base.ts to start the shared work");
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		const trunkLeaf = (await readSessionFile(state.sessionFile)).at(-1)?.id as string;
		await rpc.prompt("WRITE sidea/alpha.ts intent-alpha-one");
		await rpc.prompt("WRITE sidea/alpha2.ts intent-alpha-two");
		const aLeaf = (await readSessionFile(state.sessionFile)).at(-1)?.id as string;

		await rpc.prompt(`/goto ${trunkLeaf}`);
		await rpc.prompt("WRITE sideb/beta.ts intent-beta-one");
		await rpc.prompt("WRITE sideb/beta2.ts intent-beta-two");
		const onB = await rpc.call<{ summary: string }>({ type: "compact" });

		const entriesAfterB = await readSessionFile(state.sessionFile);
		const bLeaf = entriesAfterB.at(-1)?.id as string;
		await rpc.prompt(`/goto ${aLeaf}`);
		const onA = await rpc.call<{ summary: string }>({ type: "compact" });
		const entries = await readSessionFile(state.sessionFile);
		const aAfter = entries.at(-1)?.id as string;

		assert.deepEqual(
			server.requests.filter((r) => isSummarizationRequest(r)).map((r) => r.index),
			[],
		);
		for (const [name, summary, own, other, leaf] of [
			["B", onB.summary, "sideb", "sidea", bLeaf],
			["A", onA.summary, "sidea", "sideb", aAfter],
		] as const) {
			assert.ok(summary.includes(`${own}/`), `${name}'s summary lacks its own files:\n${summary}`);
			assert.ok(summary.includes("trunk/base.ts"), `${name}'s summary lacks the shared trunk:\n${summary}`);
			assert.ok(!summary.includes(other), `${name}'s summary states the other branch's facts:\n${summary}`);
			const codes = codesOn(branchOf(entries, leaf));
			for (const [, code] of summary.matchAll(TAG)) {
				assert.ok(codes.has(code), `${name}'s pointer #${code} is not a fold record of branch ${name}`);
			}
		}
		assert.doesNotMatch(withoutAdvisories(rpc.stderr()), /context-fold/, rpc.stderr());
	});
});
