/**
 * The cache breakpoints context-fold adds to an Anthropic request (src/core/cache-breakpoints.ts):
 * where the frontier lies in a turn's blocks, which blocks get a mark and which never do, the limit
 * of four marks, and, as properties over generated requests, that marking only ever adds Pi's mark
 * to blocks (every other byte unchanged, the input untouched), stays within the limit, and is
 * deterministic. Requests and blocks are built by hand, so each expected mark is read off the case.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Block } from "../../src/core/block.ts";
import {
	frontierAnchors,
	LOOKBACK_BLOCKS,
	lastPlaceOf,
	MAX_BREAKPOINTS,
	markBreakpoints,
	type WireBlock,
	type WireRequest,
} from "../../src/core/cache-breakpoints.ts";
import type { ViewBlock } from "../../src/core/contract.ts";

const MARK = { type: "ephemeral", ttl: "1h" };

type Spec = {
	kind: Block["kind"];
	call?: string;
	eligible?: boolean;
	frozen?: boolean;
	held?: boolean;
	saving?: number;
};

/** Blocks and their view from a list of specs (message i holds block i). */
function turn(specs: Spec[]): { blocks: Block[]; view: ViewBlock[] } {
	const blocks = specs.map(
		(s, i): Block => ({
			id: `b${i}`,
			durable: true,
			kind: s.kind,
			msg: i,
			part: -1,
			text: "x",
			images: 0,
			tokens: 100,
			foldable: true,
			turn: 1,
			...(s.call ? { toolCallId: s.call } : {}),
		}),
	);
	const view = specs.map(
		(s, i): ViewBlock => ({
			id: `b${i}`,
			kind: s.kind,
			tokens: 100,
			eligible: s.eligible ?? false,
			frozen: s.frozen ?? false,
			held: s.held ?? false,
			saving: s.saving ?? 90,
		}),
	);
	return { blocks, view };
}

const result = (id: string, extra: Partial<WireBlock> = {}): WireBlock => ({
	type: "tool_result",
	tool_use_id: id,
	content: [{ type: "text", text: `result of ${id}` }],
	...extra,
});

/** A request as Pi builds it: marks on the last tool, the system prompt and the last message's last block. */
function piRequest(turns: string[][]): WireRequest {
	const messages: WireRequest["messages"] = [{ role: "user", content: [{ type: "text", text: "do it" }] }];
	for (const ids of turns) {
		messages.push({
			role: "assistant",
			content: ids.map((id) => ({ type: "tool_use", id, name: "read", input: {} })),
		});
		messages.push({ role: "user", content: ids.map((id) => result(id)) });
	}
	const last = messages[messages.length - 1].content as WireBlock[];
	last[last.length - 1] = { ...last[last.length - 1], cache_control: MARK };
	return {
		model: "claude",
		system: [{ type: "text", text: "You are Pi.", cache_control: MARK }],
		tools: [{ name: "read" }, { name: "write", cache_control: MARK }],
		messages,
	};
}

/** Every marked block of a request, as "message:block" (tools and system apart). */
function marked(request: WireRequest): string[] {
	const out: string[] = [];
	request.messages.forEach((m, i) => {
		if (!Array.isArray(m.content)) return;
		m.content.forEach((b, j) => {
			if (b.cache_control !== undefined) out.push(`${i}:${j}`);
		});
	});
	return out;
}

function markCount(request: WireRequest): number {
	const count = (blocks: unknown) =>
		Array.isArray(blocks)
			? blocks.filter((b: { cache_control?: unknown }) => b.cache_control !== undefined).length
			: 0;
	return count(request.system) + count(request.tools) + request.messages.reduce((n, m) => n + count(m.content), 0);
}

describe("frontierAnchors", () => {
	test("is the last tool result before the first block a fold may still change", () => {
		const { blocks, view } = turn([
			{ kind: "user" },
			{ kind: "toolResult", call: "c1", eligible: true, frozen: true },
			{ kind: "toolResult", call: "c2", eligible: true, frozen: true },
			{ kind: "text", eligible: true },
			{ kind: "toolResult", call: "c3", eligible: true },
		]);
		assert.deepEqual(frontierAnchors(blocks, view), ["c2"]);
	});

	test("passes over blocks no fold changes: not eligible, held raw, or no smaller folded", () => {
		const { blocks, view } = turn([
			{ kind: "toolResult", call: "c1", eligible: true, frozen: true },
			{ kind: "thinking", eligible: true, saving: 0 },
			{ kind: "toolResult", call: "c2", eligible: true, held: true },
			{ kind: "user" },
			{ kind: "toolResult", call: "c3", eligible: false },
			{ kind: "toolResult", call: "c4", eligible: true },
		]);
		assert.deepEqual(frontierAnchors(blocks, view), ["c3"]);
	});

	test("counts first from the newest event's first folded block, then from the start", () => {
		const { blocks, view } = turn([
			{ kind: "toolResult", call: "c0", eligible: true, frozen: true },
			{ kind: "toolResult", call: "c1", eligible: true },
			{ kind: "toolResult", call: "c2", eligible: true, frozen: true },
			{ kind: "toolResult", call: "c3", eligible: true, frozen: true },
			{ kind: "text", eligible: true },
		]);
		assert.deepEqual(
			frontierAnchors(blocks, view, (id) => id === "b2"),
			["c3", "c0"],
			"c1 was passed over by the event at b2",
		);
		assert.deepEqual(frontierAnchors(blocks, view), ["c0"]);
		assert.deepEqual(
			frontierAnchors(blocks, view, (id) => id === "gone"),
			["c0"],
			"a block no longer there counts from the start",
		);
	});

	test("leaves out a frontier with no tool result before it, and is the newest result when nothing may change", () => {
		const first = turn([{ kind: "user" }, { kind: "toolResult", call: "c1", eligible: true }]);
		assert.deepEqual(frontierAnchors(first.blocks, first.view), []);
		const done = turn([
			{ kind: "toolResult", call: "c1", eligible: true, frozen: true },
			{ kind: "toolResult", call: "c2" },
		]);
		assert.deepEqual(
			frontierAnchors(done.blocks, done.view, (id) => id === "b0"),
			["c2"],
		);
	});
});

describe("frontiers where a provider repeats call ids", () => {
	test("name the result by its count under the id, and the mark lands on that one", () => {
		const { blocks, view } = turn([
			{ kind: "user" },
			{ kind: "toolResult", call: "c", eligible: true, frozen: true },
			{ kind: "toolResult", call: "c", eligible: true, frozen: true },
			{ kind: "text", eligible: true },
			{ kind: "toolResult", call: "c", eligible: true },
		]);
		const frontiers = frontierAnchors(blocks, view);
		assert.deepEqual(frontiers, ["c\u00001"]);
		const request = piRequest([["c"], ["c"], ["c"]]);
		const { marked: placed } = markBreakpoints(request, { frontiers });
		assert.deepEqual(placed, [{ message: 4, block: 0 }], "the second result, not the newest");
	});
});

/** A turn of `n` parallel calls named `${prefix}0…`. */
const batch = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("markBreakpoints", () => {
	test("marks both frontiers' results with Pi's mark, making room by the tools' mark", () => {
		const request = piRequest([["a"], ["b", "c"], ["d"]]);
		const { request: out, marked: placed } = markBreakpoints(request, { frontiers: ["c", "a"] });
		assert.deepEqual(placed, [
			{ message: 4, block: 1 },
			{ message: 2, block: 0 },
		]);
		assert.deepEqual(marked(out), ["2:0", "4:1", "6:0"]);
		assert.equal(markCount(out), MAX_BREAKPOINTS);
		assert.equal(out.tools?.[1].cache_control, undefined, "Pi's mark on the last tool gave way");
		assert.deepEqual(out.messages[2].content, [result("a", { cache_control: MARK })], "Pi's own mark, copied");
	});

	test("drops Pi's mark on the last tool it declared up front, before deferred tools", () => {
		const request = piRequest([["a"], ["b", "c"], ["d"]]);
		request.tools = [{ name: "read" }, { name: "write", cache_control: MARK }, { name: "deferred" }];
		const { request: out } = markBreakpoints(request, { frontiers: ["c", "a"] });
		assert.deepEqual(marked(out), ["2:0", "4:1", "6:0"]);
		assert.deepEqual(out.tools, [{ name: "read" }, { name: "write" }, { name: "deferred" }]);
		assert.equal(markCount(out), MAX_BREAKPOINTS);
	});

	test("finds a result whose call id the wire spells otherwise (another provider's id after a model switch)", () => {
		// pi-ai sends an OpenAI Responses id `call_x|fc_y` to Anthropic as `call_x_fc_y`, 64 characters at most.
		const long = `call_${"x".repeat(70)}|fc_y`;
		const wire = long.replace("|", "_").slice(0, 64);
		const { marked: placed } = markBreakpoints(piRequest([["call_a_fc_b"], [wire], ["d"]]), {
			frontiers: ["call_a|fc_b", long],
		});
		assert.deepEqual(placed, [
			{ message: 2, block: 0 },
			{ message: 4, block: 0 },
		]);
		// A reply of the model the request goes to keeps its own id on the wire (Kimi's `functions.read:40`).
		const same = markBreakpoints(piRequest([["functions.read:40"], ["functions.bash:41"], ["d"]]), {
			frontiers: ["functions.read:40"],
		});
		assert.deepEqual(same.marked, [{ message: 2, block: 0 }]);
	});

	test("keeps Pi's tool mark when one mark is all it adds", () => {
		const { request: out } = markBreakpoints(piRequest([["a"], ["b"]]), { frontiers: ["a"] });
		assert.deepEqual(marked(out), ["2:0", "4:0"]);
		assert.deepEqual(out.tools?.[1].cache_control, MARK);
		assert.equal(markCount(out), 4);
	});

	test("marks the previous request's last block only when the turn appended more than the lookback", () => {
		// A turn of k calls appends 2k blocks: k tool uses and k results.
		const before = piRequest([["a"], ["b"]]);
		const near = piRequest([["a"], ["b"], batch("n", LOOKBACK_BLOCKS / 2)]);
		assert.deepEqual(markBreakpoints(near, { frontiers: [], previous: lastPlaceOf(before) }).marked, []);
		const far = piRequest([["a"], ["b"], batch("f", LOOKBACK_BLOCKS / 2 + 1)]);
		const { marked: placed } = markBreakpoints(far, { frontiers: ["a"], previous: lastPlaceOf(before) });
		assert.deepEqual(placed, [
			{ message: 2, block: 0 },
			{ message: 4, block: 0 },
		]);
		const both = markBreakpoints(far, { frontiers: ["b", "a"], previous: lastPlaceOf(before) });
		assert.deepEqual(
			both.marked,
			[
				{ message: 4, block: 0 },
				{ message: 2, block: 0 },
			],
			"b is the previous last block: marked once, and a comes next",
		);
	});

	test("the previous request's last block is found again by its text, or its JSON", () => {
		const first: WireRequest = {
			system: [{ type: "text", text: "s", cache_control: MARK }],
			messages: [{ role: "user", content: [{ type: "text", text: "do it", cache_control: MARK }] }],
		};
		const next = piRequest([batch("r", LOOKBACK_BLOCKS)]);
		const { marked: placed } = markBreakpoints(next, { frontiers: [], previous: lastPlaceOf(first) });
		assert.deepEqual(placed, [{ message: 0, block: 0 }]);
		const addition: WireRequest = {
			...first,
			messages: [{ role: "system", content: [{ type: "tool_addition", tools: ["unfold"], cache_control: MARK }] }],
		};
		const grown = piRequest([batch("r", LOOKBACK_BLOCKS)]);
		grown.messages[0] = { role: "system", content: [{ type: "tool_addition", tools: ["unfold"] }] };
		const found = markBreakpoints(grown, { frontiers: [], previous: lastPlaceOf(addition) });
		assert.deepEqual(found.marked, [{ message: 0, block: 0 }], "a block with neither call nor text: by its JSON");
		const edited = piRequest([batch("r", LOOKBACK_BLOCKS)]);
		edited.messages[0] = { role: "user", content: [{ type: "text", text: "do something else" }] };
		assert.deepEqual(markBreakpoints(edited, { frontiers: [], previous: lastPlaceOf(first) }).marked, []);
	});

	test("makes room by the system marks before the last one, as an OAuth login's identity block carries", () => {
		// With an Anthropic OAuth token Pi marks the identity block and the system prompt: four marks with the tools' and the last block's.
		const before = piRequest([["a"], ["b"]]);
		const request = piRequest([["a"], ["b"], batch("w", LOOKBACK_BLOCKS / 2 + 1)]);
		const identity = { type: "text", text: "You are Claude Code.", cache_control: MARK };
		request.system = [identity, { type: "text", text: "You are Pi.", cache_control: MARK }];
		const { request: out, marked: placed } = markBreakpoints(request, {
			frontiers: ["a"],
			previous: lastPlaceOf(before),
		});
		assert.deepEqual(placed, [
			{ message: 2, block: 0 },
			{ message: 4, block: 0 },
		]);
		assert.equal(markCount(out), MAX_BREAKPOINTS);
		assert.deepEqual(out.system, [
			{ type: "text", text: "You are Claude Code." },
			{ type: "text", text: "You are Pi.", cache_control: MARK },
		]);
		assert.equal(out.tools?.[1].cache_control, undefined);
		assert.deepEqual(request.system[0], identity, "the input is left as it was");
		const one = markBreakpoints({ ...piRequest([["a"], ["b"]]), system: request.system }, { frontiers: ["a"] });
		assert.deepEqual(one.request.system, request.system, "one mark fits by the tools' alone: the system keeps both");
	});

	test("adds only what fits when the system prompt carries no mark to cover the tools", () => {
		const request = { ...piRequest([["a"], ["b"], ["c"]]), system: "You are Pi." };
		// Another extension marked the user's prompt: with the tools' and the last message's, three.
		request.messages[0] = { role: "user", content: [{ type: "text", text: "do it", cache_control: MARK }] };
		const { request: out } = markBreakpoints(request, { frontiers: ["b", "a"] });
		assert.deepEqual(marked(out), ["0:0", "4:0", "6:0"], "the first frontier, then no room");
		assert.deepEqual(out.tools?.[1].cache_control, MARK, "the tools' mark stays: nothing else covers them");
		assert.equal(markCount(out), MAX_BREAKPOINTS);
	});

	test("finds Pi's mark before the content-less effort messages Pi adds for the newest Claude models", () => {
		// Pi's insertThinkingLevelMessages: an effort message before each assistant message and one after the last.
		const effort = (level: string): WireRequest["messages"][number] => ({
			role: "system",
			content: [],
			output_config: { effort: level },
		});
		const plain = piRequest([["a"], ["b"], ["c"]]);
		const request = { ...plain, messages: [...plain.messages, effort("high")] };
		request.messages.splice(3, 0, effort("low"));
		const { request: out, marked: placed } = markBreakpoints(request, { frontiers: ["b", "a"] });
		assert.deepEqual(placed, [
			{ message: 5, block: 0 },
			{ message: 2, block: 0 },
		]);
		assert.deepEqual(marked(out), ["2:0", "5:0", "7:0"]);
		assert.equal(markCount(out), MAX_BREAKPOINTS);
		assert.deepEqual(lastPlaceOf(request), { message: 7, block: 0, type: "tool_result", toolUseId: "c" });
		const grown = piRequest([["a"], ["b"], ["c"], batch("x", 11)]);
		const next = { ...grown, messages: [...grown.messages, effort("high")] };
		next.messages.splice(3, 0, effort("low"));
		const far = markBreakpoints(next, { frontiers: [], previous: lastPlaceOf(request) });
		assert.deepEqual(
			far.marked,
			[{ message: 7, block: 0 }],
			"the previous request's last block, found past the lookback",
		);
	});

	test("marks nothing where Pi marked no message: caching off, or another wire format", () => {
		const request = piRequest([["a"], ["b"]]);
		(request.messages[4].content as WireBlock[])[0] = result("b");
		const out = markBreakpoints(request, { frontiers: ["a"] });
		assert.equal(out.request, request);
		assert.deepEqual(out.marked, []);
	});

	test("leaves the last block, an already marked one, an unknown call, and a previous place gone", () => {
		const request = piRequest([["a"], ["b"], batch("x", LOOKBACK_BLOCKS + 1)]);
		assert.deepEqual(markBreakpoints(request, { frontiers: [`x${LOOKBACK_BLOCKS}`] }).marked, [], "the last block");
		assert.deepEqual(markBreakpoints(request, { frontiers: ["nope"] }).marked, [], "an unknown call");
		const moved = { ...lastPlaceOf(piRequest([["a"], ["b"]]))!, toolUseId: "z" };
		assert.deepEqual(markBreakpoints(request, { frontiers: [], previous: moved }).marked, [], "another block");
		const empty = piRequest([batch("e", LOOKBACK_BLOCKS)]);
		empty.messages[0] = { role: "user", content: [{ type: "text", text: "" }] };
		const emptyPlace = { message: 0, block: 0, type: "text", text: "" };
		assert.deepEqual(markBreakpoints(empty, { frontiers: [], previous: emptyPlace }).marked, [], "an empty text");
		const once = markBreakpoints(request, { frontiers: ["a"] }).request;
		assert.deepEqual(markBreakpoints(once, { frontiers: ["a"] }).marked, [], "already marked");
	});
});

/** Requests of 1-6 turns of 1-24 calls each, as Pi builds them, with frontiers and a previous request drawn from them. */
const requests = fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 1, maxLength: 6 }).chain((sizes) => {
	let n = 0;
	const turns = sizes.map((k) => batch(`t${n++}_`, k));
	const ids = turns.flat();
	return fc.record({
		turns: fc.constant(turns),
		frontiers: fc.uniqueArray(fc.constantFrom(...ids, "unknown"), { maxLength: 2 }),
		previousTurns: fc.integer({ min: 0, max: turns.length }),
	});
});

/** The request with every cache_control removed. */
function bare(request: WireRequest): string {
	return JSON.stringify(request, (key, value) => (key === "cache_control" ? undefined : value));
}

test("property: marking adds Pi's mark only, within the limit, deterministically, leaving the input as it was", () => {
	fc.assert(
		fc.property(requests, ({ turns, frontiers, previousTurns }) => {
			const request = piRequest(turns);
			const before = JSON.stringify(request);
			const previous = previousTurns > 0 ? lastPlaceOf(piRequest(turns.slice(0, previousTurns))) : undefined;
			const anchors = { frontiers, previous };
			const out = markBreakpoints(request, anchors);
			assert.equal(JSON.stringify(request), before, "the input is never mutated");
			assert.equal(bare(out.request), bare(request), "nothing but marks changes");
			assert.ok(markCount(out.request) <= MAX_BREAKPOINTS);
			assert.equal(
				markCount(out.request),
				markCount(request) + out.marked.length - (out.request.tools === request.tools ? 0 : 1),
			);
			for (const { message, block } of out.marked) {
				assert.deepEqual((out.request.messages[message].content as WireBlock[])[block].cache_control, MARK);
			}
			assert.equal(JSON.stringify(markBreakpoints(request, anchors).request), JSON.stringify(out.request));
			const last = turns[turns.length - 1];
			const first = frontiers[0];
			if (first !== undefined && first !== "unknown" && first !== last[last.length - 1]) {
				const at = out.marked.map(
					({ message, block }) => (out.request.messages[message].content as WireBlock[])[block],
				);
				assert.ok(
					at.some((b) => b.tool_use_id === first),
					"the first frontier is always marked",
				);
			}
		}),
	);
});
