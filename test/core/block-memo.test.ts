/**
 * The linearize memo (BlockMemo over MessageMemo): over randomized conversations that grow, are
 * edited in place (same-length edits in the middle of a text or an argument, reordered keys, reused
 * ids and anchors, a role or timestamp changed, odd values such as holes, `undefined` or extra array
 * keys), shrink from the front as a compaction would, and come back, linearize with the memo gives
 * exactly the blocks (ids, kinds, texts, costs, gates, turns) and the render of a fresh linearize of
 * the same request, request after request. applyPlan with an ApplyMemo over those blocks, given the
 * same op objects request after request (as frozen ops are), renders exactly what a fresh applyPlan
 * renders, even when the previous request's output was edited in place downstream; supersededReads
 * with a CallFactsMemo and frozenFor with a FrozenMemo (over a registry that changes between
 * requests) find what fresh calls find.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ApplyMemo, applyPlan, type FoldOp } from "../../src/core/apply.ts";
import {
	type ArgsCache,
	BlockMemo,
	blockFields,
	linearize,
	type MessageLike,
	messageBlocks,
} from "../../src/core/block.ts";
import type { CallFactsMemo } from "../../src/core/call-facts.ts";
import { ARG_FOLD_CHARS } from "../../src/core/digest.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { renderFold } from "../../src/core/lower.ts";
import { MessageMemo } from "../../src/core/message-memo.ts";
import { supersededReads } from "../../src/core/supersede.ts";
import { FrozenMemo, frozenFor } from "../../src/core/view.ts";

const RUNS = Math.max(200, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

/** Few distinct anchors and texts, so that ids repeat and same-length variants are common. */
const word = fc.constantFrom("a", "b", "ab", "ba", "x".repeat(ARG_FOLD_CHARS), `y${"x".repeat(ARG_FOLD_CHARS)}`);
const text = fc.array(word, { maxLength: 3 }).map((words) => words.join("\n"));
const anchor = fc.constantFrom("c1", "c2", "c3");
const stamp = fc.option(fc.constantFrom(1, 2, 3), { nil: undefined });

const part = fc.oneof(
	text.map((t) => ({ type: "text", text: t })),
	fc.record({ t: text, signed: fc.boolean() }).map(({ t, signed }) => ({
		type: "thinking",
		thinking: t,
		...(signed ? { thinkingSignature: "sig" } : {}),
	})),
	fc
		.record({ id: anchor, name: fc.constantFrom("read", "write"), big: text, path: word })
		.map(({ id, name, big, path }) => ({
			type: "toolCall",
			id,
			name,
			arguments: { path, content: big, list: [path, big] },
		})),
	fc.constant({ type: "image", data: "aGVsbG8=", mimeType: "image/png" }),
);

const message: fc.Arbitrary<MessageLike> = fc.oneof(
	fc.record({
		role: fc.constant("user"),
		content: fc.oneof(text, fc.array(part, { maxLength: 2 })),
		timestamp: stamp,
	}),
	fc.record({
		role: fc.constant("assistant"),
		content: fc.array(part, { maxLength: 3 }),
		responseId: fc.option(anchor, { nil: undefined }),
		timestamp: stamp,
		usage: fc.record({ input: fc.nat(9), output: fc.nat(9) }),
	}),
	fc.record({
		role: fc.constant("toolResult"),
		toolCallId: anchor,
		toolName: fc.constantFrom("read", "bash"),
		content: fc.array(part, { maxLength: 2 }),
		isError: fc.boolean(),
		timestamp: stamp,
	}),
	fc.record({ role: fc.constant("bashExecution"), command: word, output: text, timestamp: stamp }),
	fc.record({ role: fc.constant("compactionSummary"), summary: text, timestamp: stamp }),
);

/** Same length, different middle: the edit a length-and-ends signature could not see. */
function editMiddle(value: string): string {
	if (value.length < 3) return `${value}!`;
	const mid = value.length >> 1;
	return `${value.slice(0, mid)}${value[mid] === "z" ? "w" : "z"}${value.slice(mid + 1)}`;
}

type Edit = (messages: MessageLike[], at: number, extra: MessageLike) => MessageLike[] | undefined;

function partsOf(m: MessageLike | undefined): Record<string, unknown>[] {
	const content: unknown[] = Array.isArray(m?.content) ? m.content : [];
	return content.filter((p): p is Record<string, unknown> => typeof p === "object" && p !== null);
}

/** Edits applied to an earlier message (or the array) between two requests. */
const EDITS: Record<string, Edit> = {
	append: (ms, _at, extra) => [...ms, extra],
	replace: (ms, at, extra) => ms.map((m, i) => (i === at ? extra : m)),
	textMiddle: (ms, at) => {
		const m = ms[at];
		if (typeof m?.content === "string") m.content = editMiddle(m.content);
		for (const p of partsOf(m)) {
			if (typeof p.text === "string") p.text = editMiddle(p.text);
			if (typeof p.thinking === "string") p.thinking = editMiddle(p.thinking);
		}
		if (typeof m?.output === "string") m.output = editMiddle(m.output);
		if (typeof m?.summary === "string") m.summary = editMiddle(m.summary);
		return ms;
	},
	argsMiddle: (ms, at) => {
		for (const p of partsOf(ms[at])) {
			const args = p.arguments as { content?: string; list?: unknown[] } | undefined;
			if (typeof args?.content === "string") args.content = editMiddle(args.content);
			if (Array.isArray(args?.list) && typeof args.list[1] === "string") args.list[1] = editMiddle(args.list[1]);
		}
		return ms;
	},
	argsPath: (ms, at) => {
		for (const p of partsOf(ms[at])) {
			const args = p.arguments as { path?: string } | undefined;
			if (args && typeof args.path === "string") args.path = args.path === "a" ? "b" : "a";
		}
		return ms;
	},
	reorderArgs: (ms, at) => {
		for (const p of partsOf(ms[at])) {
			const args = p.arguments as Record<string, unknown> | undefined;
			if (args) p.arguments = Object.fromEntries(Object.entries(args).reverse());
		}
		return ms;
	},
	reuseId: (ms, at) => {
		for (const p of partsOf(ms[at])) if (p.type === "toolCall") p.id = "c1";
		const m = ms[at];
		if (m && typeof m.toolCallId === "string") m.toolCallId = "c1";
		if (m?.role === "assistant") m.responseId = "c1";
		return ms;
	},
	role: (ms, at) => {
		const m = ms[at];
		if (m) m.role = m.role === "user" ? "custom" : "user";
		return ms;
	},
	timestamp: (ms, at) => {
		const m = ms[at];
		if (m) m.timestamp = typeof m.timestamp === "number" ? m.timestamp + 1 : 7;
		return ms;
	},
	usage: (ms, at) => {
		const m = ms[at];
		if (m) m.usage = { input: 1, output: 2, note: "only a field linearize never reads" };
		return ms;
	},
	hole: (ms, at) => {
		const m = ms[at];
		if (m && Array.isArray(m.content)) {
			const content = [...(m.content as unknown[])];
			content.length += 1;
			m.content = content;
		}
		return ms;
	},
	undefinedPart: (ms, at) => {
		const m = ms[at];
		if (m && Array.isArray(m.content)) m.content = [...(m.content as unknown[]), undefined];
		return ms;
	},
	undefinedKey: (ms, at) => {
		const m = ms[at];
		if (m) m.isError = undefined;
		return ms;
	},
	extraArrayKey: (ms, at) => {
		for (const p of partsOf(ms[at])) {
			const list = (p.arguments as { list?: unknown[] } | undefined)?.list;
			if (list) Object.assign(list, { extra: "x".repeat(ARG_FOLD_CHARS) });
		}
		return ms;
	},
	notAnObject: (ms, at) => ms.map((m, i) => (i === at ? (null as unknown as MessageLike) : m)),
	compact: (ms, at) => ms.slice(Math.min(at, ms.length - 1)),
	same: (ms) => ms,
};

const step = fc.record({
	edit: fc.constantFrom(...Object.keys(EDITS)),
	at: fc.nat(12),
	extra: message,
	turnBase: fc.constantFrom(0, 0, 0, 2),
});

/** Fold ops for every block a fold could take, so the render covers rewritten messages too. */
function opsFor(messages: readonly MessageLike[], blocks: ReturnType<typeof linearize>): FoldOp[] {
	const ops: FoldOp[] = [];
	for (const block of blocks) {
		if (!block.durable) continue;
		const op = renderFold(block, messages[block.msg]);
		if (op) ops.push(op);
	}
	return ops;
}

/**
 * For each random start and edits, makes a fresh `check` (its memos new) and runs it on the
 * conversation request after request: once at the start, then twice after each edit (the second
 * time with nothing changed).
 */
function eachRequest(fresh: () => (history: MessageLike[], turnBase: number) => void): void {
	fc.assert(
		fc.property(fc.array(message, { maxLength: 10 }), fc.array(step, { maxLength: 8 }), (start, steps) => {
			const check = fresh();
			let history = structuredClone(start);
			check(history, 0);
			for (const { edit, at, extra, turnBase } of steps) {
				history = EDITS[edit](history, Math.min(at, Math.max(0, history.length - 1)), extra) ?? history;
				check(history, turnBase);
				check(history, turnBase);
			}
		}),
		{ numRuns: RUNS },
	);
}

describe("linearize with a BlockMemo", () => {
	it("gives the blocks and the render of a fresh linearize, request after request", () => {
		eachRequest(() => {
			const memo = new BlockMemo();
			const cache: ArgsCache = new Map();
			return (history, turnBase) => {
				const request = structuredClone(history);
				const fresh = linearize(structuredClone(history), turnBase);
				const memoized = linearize(request, turnBase, cache, memo);
				assert.deepEqual(memoized, fresh);
				const ops = opsFor(request, fresh);
				assert.deepEqual(applyPlan(request, ops, memoized), applyPlan(structuredClone(history), ops));
			};
		});
	});

	it("with an ApplyMemo, renders what a fresh applyPlan renders, request after request", () => {
		eachRequest(() => {
			const memo = new BlockMemo();
			const applyMemo = new ApplyMemo();
			/** One op object per id, made when the id is first seen and reused after, as a frozen layer's are. */
			const frozen = new Map<string, FoldOp>();
			return (history, turnBase) => {
				const request = structuredClone(history);
				const blocks = linearize(request, turnBase, undefined, memo);
				for (const op of opsFor(request, blocks)) if (!frozen.has(op.id)) frozen.set(op.id, op);
				const ops = [...frozen.values()];
				const memoized = applyPlan(request, ops, blocks, applyMemo);
				assert.deepEqual(memoized, applyPlan(structuredClone(history), ops));
				// A later handler edits what went out in place: nothing of it may come back next request.
				for (const m of memoized.messages) {
					for (const p of partsOf(m)) {
						if (typeof p.text === "string") p.text = editMiddle(p.text);
						if (typeof p.thinking === "string") p.thinking = editMiddle(p.thinking);
						const args = p.arguments as Record<string, unknown> | undefined;
						if (args && typeof args.content === "string") args.content = editMiddle(args.content);
					}
				}
			};
		});
	});

	it("with a CallFactsMemo, finds the superseded reads a fresh supersededReads finds, request after request", () => {
		eachRequest(() => {
			const memo = new BlockMemo();
			const calls: CallFactsMemo = new WeakMap();
			return (history, turnBase) => {
				const request = structuredClone(history);
				const blocks = linearize(request, turnBase, undefined, memo);
				const fresh = structuredClone(history);
				assert.deepEqual(
					supersededReads(request, blocks, calls),
					supersededReads(fresh, linearize(fresh, turnBase)),
				);
			};
		});
	});

	it("with a FrozenMemo, frozenFor finds what a fresh frozenFor finds, as the registry changes too", () => {
		eachRequest(() => {
			const memo = new BlockMemo();
			const frozenMemo = new FrozenMemo();
			const registry = new FoldRegistry();
			let request = 0;
			return (history, turnBase) => {
				const copy = structuredClone(history);
				const blocks = linearize(copy, turnBase, undefined, memo);
				const fresh = structuredClone(history);
				const freshBlocks = linearize(fresh, turnBase);
				assert.deepEqual(frozenFor(blocks, registry, frozenMemo), frozenFor(freshBlocks, registry));
				// The registry moves between requests: a layer (one extent recorded wrong), an unfold, a raw hold.
				request++;
				const ops = opsFor(copy, blocks).filter((op) => registry.plannable(op.id));
				const [first, second, third] = ops;
				if (first && request % 2 === 1) {
					const block = blocks.find((b) => b.id === first.id);
					const chars = (block?.text.length ?? 0) + (request % 3 === 0 ? 1 : 0);
					registry.addRecord({ id: first.id, code: first.code, chars, seq: request });
					registry.commitLayer(request, [first]);
				}
				if (second && request % 4 === 0) registry.holdRaw(second.id);
				if (third && request % 5 === 0) {
					registry.commitLayer(request, [third]);
					registry.unfold(third.id);
				}
			};
		});
	});

	it("starts over cleanly after a call that threw", () => {
		const memo = new BlockMemo();
		const good: MessageLike[] = [
			{ role: "user", content: "hi", timestamp: 1 },
			{ role: "assistant", responseId: "r1", content: [{ type: "text", text: "hello" }] },
		];
		linearize(structuredClone(good), 0, undefined, memo);
		const bad = [...structuredClone(good), { role: "assistant", content: [{ type: "mystery", n: 1n }] }];
		assert.throws(() => linearize(bad as MessageLike[], 0, undefined, memo));
		const edited = structuredClone(good);
		(edited[1].content as { text: string }[])[0].text = "hellp";
		assert.deepEqual(linearize(structuredClone(edited), 0, undefined, memo), linearize(edited));
	});
});

describe("what the memos hold on to after a compaction", () => {
	const call = (id: string, ts: number): MessageLike => ({
		role: "assistant",
		timestamp: ts,
		content: [{ type: "toolCall", id, name: "bash", arguments: { command: `echo ${id} ${"x".repeat(200)}` } }],
	});
	const result = (id: string, ts: number): MessageLike => ({
		role: "toolResult",
		toolCallId: id,
		toolName: "bash",
		timestamp: ts,
		content: [{ type: "text", text: `output of ${id} ${"y".repeat(400)}` }],
	});
	const conversation = (from: number, to: number): MessageLike[] => [
		{ role: "user", content: "go", timestamp: 0 },
		...Array.from({ length: to - from }, (_, k) => [
			call(`c${from + k}`, 2 * (from + k) + 1),
			result(`c${from + k}`, 2 * (from + k) + 2),
		]).flat(),
	];

	it("the argument cache keeps only the calls still in the conversation", () => {
		const cache: ArgsCache = new Map();
		const memo = new BlockMemo();
		linearize(conversation(0, 30), 0, cache, memo);
		assert.equal(cache.size, 30);
		linearize(conversation(0, 31), 0, cache, memo);
		assert.equal(cache.size, 31);
		// A compaction: the head goes, a summary takes its place, the tail stays.
		linearize(
			[{ role: "compactionSummary", summary: "s", timestamp: 0 }, ...conversation(25, 31).slice(1)],
			0,
			cache,
			memo,
		);
		assert.deepEqual([...cache.keys()].sort(), ["c25", "c26", "c27", "c28", "c29", "c30"]);
	});

	it("the registry keeps the matched texts of frozen blocks still in the conversation only", () => {
		const registry = new FoldRegistry();
		const memo = new FrozenMemo();
		const before = linearize(conversation(0, 10));
		const results = before.filter((b) => b.kind === "toolResult");
		const ops: FoldOp[] = results.map((b) => renderFold(b, undefined) as FoldOp);
		for (const [k, op] of ops.entries())
			registry.addRecord({ id: op.id, code: op.code, chars: results[k].text.length, seq: 1 });
		registry.commitLayer(1, ops);
		frozenFor(before, registry, memo);
		assert.equal(registry.matchedCount, 10);
		// The compaction's records change the registry; the next request holds the last three results.
		registry.addRecord({ id: "u:gone", code: "g0ne0000", chars: 2, seq: 0 });
		frozenFor(linearize(conversation(7, 10)), registry, memo);
		assert.equal(registry.matchedCount, 3);
	});
});

describe("blockFields", () => {
	it("lists every message field messageBlocks reads, so the memo may compare only those", () => {
		const roles = [
			"user",
			"assistant",
			"toolResult",
			"custom",
			"bashExecution",
			"compactionSummary",
			"branchSummary",
			"x",
		];
		fc.assert(
			fc.property(message, fc.constantFrom(...roles), (base, role) => {
				const read = new Set<PropertyKey>();
				const watched = new Proxy({ ...base, role, command: "ls", output: "a", summary: "s" } as MessageLike, {
					get(target, key, receiver) {
						read.add(key);
						return Reflect.get(target, key, receiver);
					},
				});
				const known = new Set<PropertyKey>(blockFields(watched));
				read.clear();
				messageBlocks(watched, 0, 1, new Map());
				for (const key of read) assert.ok(known.has(key), `messageBlocks read ${String(key)} of a ${role}`);
			}),
			{ numRuns: RUNS },
		);
	});
});

describe("MessageMemo", () => {
	it("serves a value only for a structurally equal message with the same key", () => {
		const memo = new MessageMemo<string>();
		const message = { role: "user", content: [{ type: "text", text: "abc" }], n: 0 };
		memo.set(0, message, 1, "stored");
		assert.equal(memo.get(0, structuredClone(message), 1), "stored");
		assert.equal(memo.get(0, structuredClone(message), 2), undefined, "another key");
		assert.equal(memo.get(1, structuredClone(message), 1), undefined, "another position");
		assert.equal(memo.get(0, { ...message, content: [{ type: "text", text: "abd" }] }, 1), undefined);
		assert.equal(memo.get(0, { content: message.content, role: "user", n: 0 }, 1), undefined, "key order");
		assert.equal(memo.get(0, { ...message, n: -0 }, 1), undefined, "-0 is not 0");
		assert.equal(memo.get(0, { ...message, extra: undefined }, 1), undefined, "an extra key");
	});

	it("compares arrays by element: a hole or an undefined element misses, a named key beside them is not looked for", () => {
		const memo = new MessageMemo<string>();
		const message = { role: "user", content: [{ type: "text", text: "abc" }, "x"] };
		memo.set(0, message, 0, "stored");
		const holed: unknown[] = [{ type: "text", text: "abc" }];
		holed.length = 2;
		assert.equal(memo.get(0, { role: "user", content: holed }, 0), undefined, "a hole");
		assert.equal(memo.get(0, { role: "user", content: [{ type: "text", text: "abc" }, undefined] }, 0), undefined);
		const named = Object.assign(structuredClone(message.content), { extra: "y" });
		assert.equal(memo.get(0, { role: "user", content: named }, 0), "stored");
		assert.equal(JSON.stringify(named), JSON.stringify(message.content), "JSON does not see the named key");
	});

	it("does not keep a snapshot the caller can change afterwards", () => {
		const memo = new MessageMemo<string>();
		const message = { role: "user", content: [{ type: "text", text: "abc" }] };
		memo.set(0, message, 0, "stored");
		message.content[0].text = "xyz";
		assert.equal(memo.get(0, message, 0), undefined);
		assert.equal(memo.get(0, { role: "user", content: [{ type: "text", text: "abc" }] }, 0), "stored");
	});

	it("never memoizes what it cannot snapshot exactly", () => {
		const memo = new MessageMemo<string>();
		const odd: unknown[] = [
			{ role: "user", at: new Date(0) },
			{ role: "user", content: Object.assign(new Array(3), { 0: 1, 2: 2 }) },
			{ role: "user", content: [undefined] },
			{ role: "user", content: Object.assign(["a"], { extra: 1 }) },
			{ role: "user", f: () => 1 },
		];
		odd.forEach((message, i) => {
			memo.set(i, message, 0, "stored");
			assert.equal(memo.get(i, message, 0), undefined, `case ${i}`);
		});
	});
});
