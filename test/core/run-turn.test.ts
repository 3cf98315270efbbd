/**
 * One turn, one pass (runTurn, src/core/pass.ts): replaying the project's recorded sessions request by
 * request under the working-set policy with every memo the engine keeps, runTurn renders the bytes,
 * commits the registry and hands the adapter the records and blocks that a fresh planTurn, recordsFor,
 * commitEvent and renderTurn without any memo give, and the seed-index record made from the turn's
 * own blocks is the one a fresh linearization gives. A rejected event commits nothing and leaves the
 * turn with its frozen ops alone.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApplyMemo, withContents } from "../../src/core/apply.ts";
import { type ArgsCache, BlockMemo } from "../../src/core/block.ts";
import type { CallFactsMemo } from "../../src/core/call-facts.ts";
import { DEFAULT_ECONOMIC, DEFAULT_LADDER, DEFAULT_WORKING_SET, type PolicyView } from "../../src/core/contract.ts";
import type { FoldRecord } from "../../src/core/fold-registry.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { extractSeedRecord } from "../../src/core/index/extract.ts";
import { commitEvent, type PassInput, planTurn, recordsFor, renderTurn, runTurn } from "../../src/core/pass.ts";
import { workingSet } from "../../src/core/policy/working-set.ts";
import { UseMemo } from "../../src/core/use-ages.ts";
import { FrozenMemo } from "../../src/core/view.ts";
import { loadSession, PROJECT_SESSIONS } from "../corpus/corpora.ts";
import { branchRequests } from "../corpus/session.ts";

const config: PolicyView["config"] = { ...DEFAULT_LADDER, ...DEFAULT_ECONOMIC, ...DEFAULT_WORKING_SET };

/** A stand-in hash: the records carry it, so a wrong block text would show. */
const hash = (text: string): string => `${text.length}:${text.slice(0, 16)}`;

/** The memos the engine keeps across turns. */
function memos(): Partial<PassInput> {
	return {
		savings: new WeakMap(),
		use: new UseMemo(),
		argsCache: new Map() as ArgsCache,
		blockMemo: new BlockMemo(),
		calls: new WeakMap() as CallFactsMemo,
		frozenMemo: new FrozenMemo(),
	};
}

const sessions = ["debug-branchy.jsonl", "refactor-long.jsonl"].map((file) =>
	loadSession({ corpus: "project", file, path: `${PROJECT_SESSIONS}/${file}` }),
);

describe("runTurn", () => {
	for (const session of sessions) {
		test(`${session.name}: renders, commits and records what a fresh pass does, request after request`, () => {
			const requests = branchRequests(session.branch);
			const window = 40_000;
			const kept = memos();
			const applyMemo = new ApplyMemo();
			const registry = new FoldRegistry();
			const reference = new FoldRegistry();
			let events = 0;
			for (const slice of requests) {
				const request = structuredClone(slice);
				const facts = { window, neverCacheRead: false, config, policy: workingSet };
				let persisted: { seq: number; records: FoldRecord[]; seed: unknown } | undefined;
				const turn = runTurn(
					{ ...facts, ...kept, messages: request, registry },
					{
						persist: ({ seq, records, plan }) => {
							const seed = extractSeedRecord({
								kind: "fold",
								seq,
								messages: request,
								spans: records,
								scope: new Set(records.map((r) => r.id)),
								blocks: plan.blocks,
							});
							persisted = { seq, records, seed };
						},
						rejected: (_seq, error) => assert.fail(`rejected: ${String(error)}`),
						sha256: hash,
						applyMemo,
					},
				);
				const fresh = structuredClone(slice);
				const plan = planTurn({ ...facts, messages: fresh, registry: reference });
				assert.deepEqual(turn.plan.blocks, plan.blocks);
				assert.deepEqual(turn.event, plan.event);
				if (plan.event.length > 0) {
					events++;
					const seq = reference.seq + 1;
					const records = recordsFor(plan, seq, hash);
					assert.deepEqual(persisted?.records, records);
					assert.deepEqual(
						persisted?.seed,
						extractSeedRecord({
							kind: "fold",
							seq,
							messages: fresh,
							spans: records,
							scope: new Set(records.map((r) => r.id)),
						}),
					);
					commitEvent(reference, plan, records, seq);
				} else assert.equal(persisted, undefined);
				assert.deepEqual(
					withContents(request, turn.contents),
					renderTurn(fresh, plan.blocks, plan.frozen, plan.event).messages,
				);
				assert.deepEqual(registry.frozenOps(), reference.frozenOps());
			}
			assert.ok(events > 0, "no fold event at this window: the commit path went untested");
		});
	}

	test("a rejected event commits nothing, and the turn goes out with its frozen ops alone", () => {
		const requests = branchRequests(sessions[1].branch);
		const registry = new FoldRegistry();
		const window = 40_000;
		let rejections = 0;
		for (const slice of requests) {
			const request = structuredClone(slice);
			const before = registry.frozenOps();
			const turn = runTurn(
				{ messages: request, registry, policy: workingSet, window, neverCacheRead: false, config },
				{
					persist: () => {
						throw new Error("disk full");
					},
					rejected: (seq, error) => {
						rejections++;
						assert.equal(seq, registry.seq + 1);
						assert.match(String(error), /disk full/);
					},
				},
			);
			assert.deepEqual(turn.event, []);
			assert.deepEqual(registry.frozenOps(), before);
			assert.equal(turn.contents.size, 0);
			if (turn.plan.event.length > 0) assert.ok(rejections > 0);
		}
		assert.ok(rejections > 0, "no event fired at this window: the rejection path went untested");
	});
});
