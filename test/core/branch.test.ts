/**
 * Branch-exact summaries, as a property over generated session trees: a trunk and two branches
 * (as `/tree` makes them), fold events and compactions written at random points of either branch,
 * each record extracted for real from the messages on the path to its leaf. The summary of one
 * branch states no fact that exists only on the other, keeps every record written on its own path,
 * and every pointer it carries names a fold record of that branch.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { codesIn, foldCode } from "../../src/core/digest.ts";
import type { FoldRecord } from "../../src/core/fold-registry.ts";
import { type BranchView, recordsOnBranch } from "../../src/core/index/branch.ts";
import { extractSeedRecord } from "../../src/core/index/extract.ts";
import { summarizeIndex } from "../../src/core/index/merge.ts";
import type { SeedRecord } from "../../src/core/index/seed-index.ts";
import { renderSummary } from "../../src/core/summary.ts";

const RUNS = Math.max(200, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

interface Entry {
	id: string;
	message: MessageLike;
}

let clock = 1_700_000_000_000;

/** One user turn on `tag`'s side: an intent, a write call with a side-specific path, its result. */
function turn(tag: string, k: number): Entry[] {
	const ts = clock++;
	const call = `call_${tag}_${k}_${ts}`;
	return [
		{
			id: `u_${tag}_${k}_${ts}`,
			message: { role: "user", content: `intent ${tag}${k}: build part ${k}`, timestamp: ts },
		},
		{
			id: `a_${tag}_${k}_${ts}`,
			message: {
				role: "assistant",
				content: [
					{ type: "toolCall", id: call, name: "write", arguments: { path: `${tag}/file${k}.ts`, content: "x" } },
				],
				responseId: `resp_${call}`,
				timestamp: ts,
			},
		},
		{
			id: `r_${tag}_${k}_${ts}`,
			message: {
				role: "toolResult",
				toolCallId: call,
				toolName: "write",
				content: [{ type: "text", text: `Error: failure_${tag}_${k} while writing\n${"ok line\n".repeat(40)}` }],
				isError: false,
				timestamp: ts,
			},
		},
	];
}

interface Tree {
	trunk: Entry[];
	sides: { a: Entry[]; b: Entry[] };
}

function tree(trunkTurns: number, aTurns: number, bTurns: number): Tree {
	const make = (tag: string, n: number) => Array.from({ length: n }, (_, k) => turn(tag, k)).flat();
	return { trunk: make("trunk", trunkTurns), sides: { a: make("sidea", aTurns), b: make("sideb", bTurns) } };
}

interface Event {
	side: "a" | "b";
	/** Position along that side's path (trunk then side), as a fraction. */
	at: number;
	kind: "fold" | "compaction";
	/** Which durable blocks up to there a fold event folds (bit mask over their order). */
	pick: number;
}

function recordFor(path: readonly Entry[], event: Event, seq: number): { record: SeedRecord; spans: FoldRecord[] } {
	const upTo = Math.min(path.length - 1, Math.floor(event.at * path.length));
	const messages = path.slice(0, upTo + 1).map((e) => e.message);
	const blocks = linearize(messages).filter((b) => b.durable && b.text);
	const chosen = event.kind === "compaction" ? blocks : blocks.filter((_, i) => (event.pick >> (i % 30)) & 1);
	const spans: FoldRecord[] = chosen.map((b) => ({
		id: b.id,
		code: foldCode(b.id),
		chars: b.text.length,
		seq,
		kind: b.kind,
		tool: b.toolName,
		turn: b.turn,
	}));
	const scope = event.kind === "fold" ? new Set(spans.map((s) => s.id)) : undefined;
	const record = extractSeedRecord({ kind: event.kind, seq, messages, spans, scope });
	record.leaf = path[upTo].id;
	return { record, spans };
}

const events = fc.array(
	fc.record({
		side: fc.constantFrom<"a" | "b">("a", "b"),
		at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
		kind: fc.constantFrom<"fold" | "compaction">("fold", "compaction"),
		pick: fc.nat(),
	}),
	{ minLength: 1, maxLength: 8 },
);

describe("recordsOnBranch over generated session trees", () => {
	it("a branch's summary holds none of the other branch's facts, all of its own records, and only pointers that resolve", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 1, max: 3 }),
				fc.integer({ min: 1, max: 3 }),
				fc.integer({ min: 1, max: 3 }),
				events,
				(t, a, b, evs) => {
					const session = tree(t, a, b);
					const path = { a: [...session.trunk, ...session.sides.a], b: [...session.trunk, ...session.sides.b] };
					const written: { record: SeedRecord; spans: FoldRecord[] }[] = evs.map((e, i) =>
						recordFor(path[e.side], e, i + 1),
					);
					for (const side of ["a", "b"] as const) {
						const other = side === "a" ? "b" : "a";
						const ids = new Set(path[side].map((e) => e.id));
						// The branch's fold records: those appended at a point on its own path.
						const codes = new Map<string, string>();
						for (const w of written)
							if (ids.has(w.record.leaf ?? "")) for (const s of w.spans) codes.set(s.id, s.code);
						const view: BranchView = { hasEntry: (id) => ids.has(id), codeOf: (id) => codes.get(id) };
						const kept = recordsOnBranch(
							written.map((w) => w.record),
							view,
						);
						assert.deepEqual(
							kept,
							written.filter((w) => ids.has(w.record.leaf ?? "")).map((w) => w.record),
							"every record written on the branch's path, and only those",
						);
						const summary = renderSummary({ summary: summarizeIndex(kept), scope: "Scope." });
						assert.ok(
							!summary.includes(`side${other}`),
							`side ${side}'s summary states a fact of side ${other}:\n${summary}`,
						);
						const known = new Set(codes.values());
						for (const code of codesIn(summary))
							assert.ok(known.has(code), `pointer #${code} does not resolve on ${side}`);
					}
				},
			),
			{ numRuns: RUNS },
		);
	});

	it("a record without a leaf (older files, context-fold 0.5.1) is kept only when every pointer resolves", () => {
		const session = tree(2, 1, 1);
		const trunkAndA = [...session.trunk, ...session.sides.a];
		const { record } = recordFor(trunkAndA, { side: "a", at: 0.99, kind: "compaction", pick: 0 }, 1);
		delete record.leaf;
		const all = new Map(record.spans.map((s) => [s.id, s.code] as const));
		const view = (codes: Map<string, string>): BranchView => ({
			hasEntry: () => false,
			codeOf: (id) => codes.get(id),
		});
		assert.equal(recordsOnBranch([record], view(all)).length, 1);
		const missing = new Map(all);
		missing.delete(record.spans[0].id);
		assert.equal(recordsOnBranch([record], view(missing)).length, 0);
		const wrongCode = new Map(all);
		wrongCode.set(record.spans[0].id, "zzzzzzzz");
		assert.equal(recordsOnBranch([record], view(wrongCode)).length, 0);
	});
});
