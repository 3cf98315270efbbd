/**
 * Replays every recorded Pi session of every available corpus (test/corpus/corpora.ts) turn by turn
 * through the pure pass, as the engine drives it (planTurn → commitEvent → renderTurn), on the
 * requests the session really made on its active branch: the context Pi built before each assistant
 * message, so a compaction on the branch replaces the summarised prefix where it happened. Checks
 * the core's invariants on every turn: message count and call/result pairing kept, frozen bytes
 * immutable, requests append-only between fold events (and compactions), no fold of tail or held
 * blocks, every event really saving at least the floor, and folding actually lowering the peak.
 * The windows are derived from each session's peak request.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Block, isDurableId, isModelReply, linearize, type MessageLike } from "../../src/core/block.ts";
import { DEFAULT_LADDER, tailOf } from "../../src/core/contract.ts";
import { foldableArg } from "../../src/core/digest.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { commitEvent, planTurn, recordsFor, renderTurn } from "../../src/core/pass.ts";
import { conduct } from "../../src/core/policy/fold-ladder.ts";
import { BLOCK_OVERHEAD } from "../../src/core/tokens.ts";
import type { SavingsMemo } from "../../src/core/view.ts";
import { corpusNote, loadSessions } from "../corpus/corpora.ts";
import { branchRequests } from "../corpus/session.ts";

const sessions = loadSessions().map((session) => ({ ...session, requests: branchRequests(session.branch) }));

function tokensOf(blocks: readonly Block[]): number {
	let sum = 0;
	for (const block of blocks) sum += block.tokens;
	return sum;
}

const json = new WeakMap<object, string>();
/** JSON of one message, cached per object: untouched messages keep their identity across turns. */
function messageJson(message: MessageLike): string {
	let text = json.get(message);
	if (text === undefined) {
		text = JSON.stringify(message);
		json.set(message, text);
	}
	return text;
}

/** Rendered bytes of one block: its content part, or the whole message. */
function blockBytes(messages: readonly MessageLike[], block: Block): string {
	const message = messages[block.msg];
	return block.part < 0 ? messageJson(message) : JSON.stringify((message.content as unknown[])[block.part]);
}

interface Part {
	type?: string;
	id?: string;
	name?: string;
	arguments?: unknown;
}

/** Folded arguments keep every key, array length, non-string leaf and unfoldable string of the original. */
function assertArgsKept(before: unknown, after: unknown, where: string, key?: string): void {
	if (typeof before === "string") {
		if (!foldableArg(key, before)) assert.equal(after, before, `${where}: small value changed`);
		else assert.equal(typeof after, "string", `${where}: large value is no longer a string`);
	} else if (Array.isArray(before)) {
		assert.ok(Array.isArray(after) && after.length === before.length, `${where}: array changed`);
		for (let i = 0; i < before.length; i++) assertArgsKept(before[i], after[i], `${where}[${i}]`, key);
	} else if (before && typeof before === "object") {
		const a = before as Record<string, unknown>;
		const b = after as Record<string, unknown>;
		assert.deepEqual(Object.keys(b ?? {}).sort(), Object.keys(a).sort(), `${where}: keys changed`);
		for (const inner of Object.keys(a)) assertArgsKept(a[inner], b[inner], `${where}.${inner}`, inner);
	} else {
		assert.equal(after, before, `${where}: leaf changed`);
	}
}

/** Same length and roles; every call keeps id, name and argument structure; every result its call id. */
function assertPairing(before: readonly MessageLike[], after: readonly MessageLike[]): void {
	assert.equal(after.length, before.length, "message count changed");
	for (let i = 0; i < before.length; i++) {
		const a = before[i];
		const b = after[i];
		if (a === b) continue;
		assert.equal(b.role, a.role, `role of message ${i}`);
		if (a.role === "toolResult") {
			assert.equal(b.toolCallId, a.toolCallId, `toolCallId of message ${i}`);
			assert.equal(b.toolName, a.toolName, `toolName of message ${i}`);
		} else if (a.role === "assistant") {
			const pa = a.content as Part[];
			const pb = b.content as Part[];
			assert.equal(pb.length, pa.length, `part count of message ${i}`);
			pa.forEach((part, j) => {
				assert.equal(pb[j].type, part.type, `part type ${i}:${j}`);
				if (part.type === "toolCall") {
					assert.equal(pb[j].id, part.id, `call id ${i}:${j}`);
					assert.equal(pb[j].name, part.name, `call name ${i}:${j}`);
					assertArgsKept(part.arguments, pb[j].arguments, `arguments ${i}:${j}`);
				}
			});
		} else {
			assert.fail(`message ${i} (${a.role}) was rewritten`);
		}
	}
}

describe("the recorded sessions linearize", () => {
	for (const session of sessions) {
		test(`${session.name}: every message linearizes, ids are unique and anchored`, () => {
			const { messages } = session;
			assert.ok(messages.length > 0, `${session.name} has no messages on its active branch`);
			for (let i = 0; i < messages.length; i++) {
				const blocks = linearize([messages[i]]);
				// A reply that failed or was aborted is sent in no request: it costs nothing.
				const least = isModelReply(messages[i]) || messages[i].role !== "assistant" ? BLOCK_OVERHEAD : 0;
				for (const block of blocks) {
					assert.ok(Number.isInteger(block.tokens) && block.tokens >= least, `tokens of message ${i}`);
					assert.equal(typeof block.text, "string");
				}
			}
			const blocks = linearize(messages);
			const ids = new Set(blocks.map((b) => b.id));
			assert.equal(ids.size, blocks.length, "block ids are not unique");
			for (const block of blocks) {
				if (block.kind === "toolResult" && block.toolCallId && block.durable) {
					assert.equal(block.id, `r:${block.toolCallId}`);
				}
				if (block.kind === "toolArgs" && block.durable) assert.equal(block.id, `a:${block.toolCallId}:args`);
				if (block.durable) assert.ok(isDurableId(block.id));
			}
			// Every tool result of a recorded session has a durable id, so all of them can fold.
			const results = blocks.filter((b) => b.kind === "toolResult");
			assert.ok(results.length > 0, "a recorded session without tool results");
			assert.ok(
				results.every((b) => b.durable),
				"tool results without durable ids",
			);
		});
	}
});

interface Outcome {
	events: number;
	peakRaw: number;
	peakFolded: number;
}

/** True when `request` starts with every message of `previous` (same objects): nothing left history in between. */
function extendsRequest(request: readonly MessageLike[], previous: readonly MessageLike[]): boolean {
	return previous.length <= request.length && previous.every((m, i) => request[i] === m);
}

/** Replays `requests` (each the messages of one request, in order) with `window`; asserts every invariant on every turn. */
function replayAndCheck(requests: readonly MessageLike[][], window: number): Outcome {
	const config = DEFAULT_LADDER;
	const floor = config.floor * window;
	const tailTokens = tailOf(config, window);
	const registry = new FoldRegistry();
	const savings: SavingsMemo = new WeakMap();
	const frozenBytes = new Map<string, string>();
	let prev: string[] | null = null;
	let prevRaw: readonly MessageLike[] = [];
	let seq = 0;
	let peakRaw = 0;
	let peakFolded = 0;
	for (const [cut, slice] of requests.entries()) {
		// A request that does not extend the previous one follows a compaction: it opens with its summary.
		const appendOnly = extendsRequest(slice, prevRaw);
		if (!appendOnly) assert.equal(slice[0]?.role, "compactionSummary", `request ${cut} dropped history`);
		prevRaw = slice;
		const plan = planTurn({
			messages: slice,
			registry,
			policy: conduct,
			window,
			neverCacheRead: false,
			config,
			savings,
		});
		assert.deepEqual(plan.collisions, [], "fold-code collision in a real session");
		assert.deepEqual(plan.stale, [], "a frozen block lost its extent in an append-only replay");

		const base = renderTurn(slice, plan.blocks, plan.frozen, []);
		const baseBlocks = linearize(base.messages);
		const before = tokensOf(baseBlocks);
		assert.equal(plan.view.usage, before, "the view does not cost the request as it is sent");

		let rendered = base;
		let after = before;
		if (plan.event.length > 0) {
			// Nothing in the tail or held may fold: check against tail and holds computed here.
			let lastAssistant = -1;
			for (let i = slice.length - 1; i >= 0; i--) {
				if (slice[i].role === "assistant") {
					lastAssistant = i;
					break;
				}
			}
			const delivered = new Set<unknown>();
			for (let i = 0; i < lastAssistant; i++) if (slice[i].role === "toolResult") delivered.add(slice[i].toolCallId);
			const tail = new Set<string>();
			let suffix = 0;
			for (let i = baseBlocks.length - 1; i >= 0; i--) {
				if (i === baseBlocks.length - 1 || suffix < tailTokens) tail.add(baseBlocks[i].id);
				suffix += baseBlocks[i].tokens;
			}
			const byId = new Map(plan.blocks.map((b) => [b.id, b] as const));
			for (const op of plan.event) {
				const block = byId.get(op.id)!;
				assert.ok(!tail.has(op.id), `folded tail block ${op.id} at ${cut}`);
				if (block.kind === "toolResult") assert.ok(block.msg < lastAssistant, `folded held result ${op.id}`);
				if (block.kind === "toolArgs") assert.ok(delivered.has(block.toolCallId), `folded undelivered ${op.id}`);
				assert.ok(!frozenBytes.has(op.id), `re-planned frozen ${op.id}`);
			}
			seq++;
			commitEvent(registry, plan, recordsFor(plan, seq), seq);
			rendered = renderTurn(slice, plan.blocks, plan.frozen, plan.event);
			after = tokensOf(linearize(rendered.messages));
			assert.ok(before - after >= floor, `event ${seq} at ${cut} saves ${before - after} < floor ${floor}`);
		}

		assertPairing(slice, rendered.messages);
		assert.deepEqual(rendered.refused, [], `ops refused at ${cut}`);
		const byId = new Map(plan.blocks.map((b) => [b.id, b] as const));
		for (const id of rendered.applied) {
			const block = byId.get(id);
			assert.ok(block && isDurableId(id) && block.durable && block.foldable, `folded ${id}`);
		}
		// Frozen bytes: a block keeps the bytes it got when it first folded, in every later turn it is in
		// (only a compaction takes a block out of the request).
		for (const [id, bytes] of frozenBytes) {
			const block = byId.get(id);
			if (!block && !appendOnly) {
				frozenBytes.delete(id);
				continue;
			}
			assert.ok(block, `frozen ${id} vanished at ${cut}`);
			assert.equal(blockBytes(rendered.messages, block), bytes, `frozen ${id} moved at ${cut}`);
		}
		for (const id of rendered.applied) {
			if (!frozenBytes.has(id)) frozenBytes.set(id, blockBytes(rendered.messages, byId.get(id)!));
		}
		// Between events (and compactions), each request is a byte-identical prefix of the next.
		const current = rendered.messages.map(messageJson);
		if (prev && appendOnly && plan.event.length === 0) {
			for (let i = 0; i < prev.length; i++) assert.equal(current[i], prev[i], `message ${i} moved at ${cut}`);
		}
		prev = current;
		peakRaw = Math.max(peakRaw, tokensOf(plan.blocks));
		peakFolded = Math.max(peakFolded, after);
	}
	return { events: seq, peakRaw, peakFolded };
}

/** The largest request of a replay (the first, on a tie) and its size in tokens as the pass counts them. */
function peakOf(requests: readonly MessageLike[][]): { request: MessageLike[]; tokens: number } {
	let peak = { request: [] as MessageLike[], tokens: 0 };
	for (const request of requests) {
		const tokens = tokensOf(linearize(request));
		if (tokens > peak.tokens) peak = { request, tokens };
	}
	return peak;
}

/**
 * True when the ladder must fold in `request` with `window`, read off the blocks alone, not the
 * planner: the request is past the first-fold threshold, and the tool results the model has seen
 * that end before the protected tail hold, less a generous digest each, at least one and a half
 * steps of the window (the ladder fires for one).
 */
function mustFoldIn(request: MessageLike[], window: number): boolean {
	const blocks = linearize(request);
	const total = tokensOf(blocks);
	if (total < DEFAULT_LADDER.foldAt * window) return false;
	const tail = tailOf(DEFAULT_LADDER, window);
	const lastAssistant = request.findLastIndex((m) => m.role === "assistant");
	let end = 0;
	let mass = 0;
	for (const block of blocks) {
		end += block.tokens;
		const seen = block.msg < lastAssistant;
		if (block.kind === "toolResult" && block.foldable && seen && end <= total - tail) {
			mass += Math.max(0, block.tokens - 100);
		}
	}
	return mass >= 1.5 * DEFAULT_LADDER.step * window;
}

/**
 * The windows a session is replayed in, from its largest request: one that request fills to 65 %
 * (ordinary fold events; a short session may offer too little foldable mass outside the protected
 * tail for one), and one it fills completely (past the budget: urgent events, which any session with
 * old tool results gets), in whole thousands; with whether the replay must fold in it.
 */
function windowsFor(requests: readonly MessageLike[][]): { window: number; mustFold: boolean }[] {
	const peak = peakOf(requests);
	const ordinary = Math.ceil(peak.tokens / 0.65 / 1000) * 1000;
	return [
		{ window: ordinary, mustFold: mustFoldIn(peak.request, ordinary) },
		{ window: Math.ceil(peak.tokens / 1000) * 1000, mustFold: true },
	];
}

describe("turn-by-turn replay of the recorded sessions", () => {
	const windows = new Map(sessions.map((session) => [session, windowsFor(session.requests)] as const));
	test("covers the project's sessions always, the others where present", (t) => {
		const folding = sessions.filter((s) => windows.get(s)?.[0].mustFold);
		t.diagnostic(
			corpusNote([
				["invariants and a fold at full fill", sessions],
				["a fold at 65 % fill", folding],
			]),
		);
		assert.ok(
			folding.some((s) => s.corpus === "project"),
			"no project session must fold at 65 % fill",
		);
	});
	for (const [session, sized] of windows) {
		for (const { window, mustFold } of sized) {
			const what = mustFold ? "keeps every invariant and folds" : "keeps every invariant";
			test(`${session.name} in a ${window}-token window ${what}`, (t) => {
				const outcome = replayAndCheck(session.requests, window);
				t.diagnostic(
					`${session.requests.length} requests; ${outcome.events} events; peak context ${outcome.peakRaw} raw, ${outcome.peakFolded} folded`,
				);
				if (!mustFold) return;
				assert.ok(outcome.events >= 1, "no fold event in a whole session");
				assert.ok(outcome.peakFolded < outcome.peakRaw, "folding did not lower the peak context");
			});
		}
	}
});
