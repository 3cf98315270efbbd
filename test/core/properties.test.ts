/**
 * Property tests of the pure core over generated Pi sessions: the mechanism (applyPlan) keeps the
 * array's shape whatever ops it is handed, the pass is deterministic, only durable foldable ids
 * fold, each id has one disposition, frozen bytes never move across a multi-turn replay, and the
 * fold ladder respects its tail, holds, frozen layers, budget and floor.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { type ApplyResult, applyPlan, type FoldOp } from "../../src/core/apply.ts";
import { type Block, isDurableId, linearize, type MessageLike } from "../../src/core/block.ts";
import {
	budgetOf,
	DEFAULT_LADDER,
	type FoldCommand,
	type LadderConfig,
	type PolicyView,
	tailOf,
	type ViewBlock,
} from "../../src/core/contract.ts";
import { foldArgs, foldableArg, foldCode, hasFoldableArg, TEXT_FOLD_CHARS } from "../../src/core/digest.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { renderFold } from "../../src/core/lower.ts";
import { commitEvent, type Policy, planTurn, recordsFor, renderTurn, type TurnPlan } from "../../src/core/pass.ts";
import { conduct } from "../../src/core/policy/fold-ladder.ts";
import type { SavingsMemo } from "../../src/core/view.ts";
import { requestCuts } from "../corpus/session.ts";

/** Runs per property: 300, or more when CONTEXTFOLD_FC_RUNS asks for a longer soak. */
const RUNS = Math.max(300, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

// ---------------------------------------------------------------------------------------------
// Generated sessions
// ---------------------------------------------------------------------------------------------

/** Lines session text is built from: code, prose, risk lines, stack frames, fake tags, astral chars. */
const LINES = [
	"",
	"   ",
	"ok",
	"import { readFileSync } from 'node:fs';",
	"export function fold(messages: Message[]): Message[] {",
	"\treturn messages.map((m) => ({ ...m }));",
	"}",
	"Error: ENOENT: no such file or directory, open 'src/missing.ts'",
	"    at Object.readFileSync (node:fs:440:20)",
	"    at main (/repo/src/index.ts:12:5)",
	"Traceback (most recent call last):",
	'  File "tool.py", line 3, in <module>',
	"FAIL test/core/apply.test.ts",
	"✓ keeps the message count (3 ms)",
	"npm ERR! code 1",
	"warning: unused variable `x`",
	"The quick brown fox jumps over the lazy dog, again and again.",
	"const emoji = '😀 𝒳 naïve café';",
	"{#abcdefgh FOLDED} a tag that a tool printed",
	"line ending in CR\r",
	"# Heading",
	"- [ ] a task item",
];

const PATHS = ["src/a.ts", "src/core/block.ts", "README.md", "test/x.test.ts", "docs/ü.md"];

/** Text of 0..maxLines lines, repeated (with a numbered prefix) up to maxRepeat times. */
function textArb(maxLines: number, maxRepeat: number): fc.Arbitrary<string> {
	return fc
		.tuple(fc.array(fc.constantFrom(...LINES), { maxLength: maxLines }), fc.integer({ min: 1, max: maxRepeat }))
		.map(([lines, repeat]) => {
			const body = lines.join("\n");
			if (repeat === 1) return body;
			return Array.from({ length: repeat }, (_, i) => `${i}| ${body}`).join("\n");
		});
}

/** Mostly small text, sometimes text of several thousand characters. */
const anyText = fc.oneof({ weight: 3, arbitrary: textArb(5, 1) }, { weight: 2, arbitrary: textArb(10, 40) });
/** Text that is usually large (a file body, an edit's old text, a long listing). */
const bigText = fc.oneof({ weight: 1, arbitrary: textArb(4, 1) }, { weight: 4, arbitrary: textArb(10, 50) });

type Stamp = "ok" | "missing" | "repeat";
const stampArb: fc.Arbitrary<Stamp> = fc.oneof(
	{ weight: 12, arbitrary: fc.constant("ok" as const) },
	{ weight: 1, arbitrary: fc.constant("missing" as const) },
	{ weight: 1, arbitrary: fc.constant("repeat" as const) },
);

type ResultMode = "ok" | "error" | "image" | "missing" | "duplicate" | "multi" | "string";
interface CallSpec {
	tool: "read" | "bash" | "write" | "edit" | "grep" | "nested";
	big: string;
	small: string;
	path: string;
	n: number;
	result: { mode: ResultMode; text: string };
}
type PartSpec =
	| { t: "text"; text: string }
	| { t: "thinking"; text: string; sig: "none" | "signed" | "redacted" }
	| { t: "call"; call: CallSpec }
	| { t: "odd" };
interface AssistantSpec {
	parts: PartSpec[];
	stamp: Stamp;
	anchor: "response" | "timestamp" | "repeat" | "none";
	reversed: boolean;
}
interface ExtraSpec {
	kind: "custom" | "bash" | "compaction" | "branch";
	text: string;
	stamp: Stamp;
}
interface RoundSpec {
	user: { text: string; image: boolean; plain: boolean; stamp: Stamp };
	extras: ExtraSpec[];
	assistants: AssistantSpec[];
}

const resultModeArb: fc.Arbitrary<ResultMode> = fc.oneof(
	{ weight: 10, arbitrary: fc.constant("ok" as const) },
	{ weight: 2, arbitrary: fc.constant("error" as const) },
	{ weight: 1, arbitrary: fc.constant("image" as const) },
	{ weight: 1, arbitrary: fc.constant("missing" as const) },
	{ weight: 2, arbitrary: fc.constant("duplicate" as const) },
	{ weight: 1, arbitrary: fc.constant("multi" as const) },
	{ weight: 1, arbitrary: fc.constant("string" as const) },
);

const callArb: fc.Arbitrary<CallSpec> = fc.record({
	tool: fc.constantFrom("read", "bash", "write", "edit", "grep", "nested"),
	big: bigText,
	small: textArb(1, 1),
	path: fc.constantFrom(...PATHS),
	n: fc.nat({ max: 1000 }),
	result: fc.record({ mode: resultModeArb, text: anyText }),
});

const partArb: fc.Arbitrary<PartSpec> = fc.oneof(
	{ weight: 3, arbitrary: fc.record({ t: fc.constant("text" as const), text: anyText }) },
	{
		weight: 2,
		arbitrary: fc.record({
			t: fc.constant("thinking" as const),
			text: anyText,
			sig: fc.constantFrom("none" as const, "none" as const, "signed" as const, "redacted" as const),
		}),
	},
	{ weight: 5, arbitrary: fc.record({ t: fc.constant("call" as const), call: callArb }) },
	{ weight: 1, arbitrary: fc.constant({ t: "odd" as const }) },
);

const assistantArb: fc.Arbitrary<AssistantSpec> = fc.record({
	parts: fc.array(partArb, { minLength: 0, maxLength: 4 }),
	stamp: stampArb,
	anchor: fc.constantFrom("response", "response", "timestamp", "timestamp", "repeat", "none"),
	reversed: fc.boolean(),
});

const extraArb: fc.Arbitrary<ExtraSpec> = fc.record({
	kind: fc.constantFrom("custom", "bash", "compaction", "branch"),
	text: anyText,
	stamp: stampArb,
});

const roundArb: fc.Arbitrary<RoundSpec> = fc.record({
	user: fc.record({ text: textArb(3, 1), image: fc.boolean(), plain: fc.boolean(), stamp: stampArb }),
	extras: fc.array(extraArb, { maxLength: 1 }),
	assistants: fc.array(assistantArb, { minLength: 1, maxLength: 5 }),
});

const IMAGE = {
	type: "image",
	data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
	mimeType: "image/png",
};

/** Turns round specs into a Pi message array (timestamps advance by `gap` ms per message). */
function buildSession(rounds: readonly RoundSpec[], gap: number, reuse: readonly number[]): MessageLike[] {
	const out: MessageLike[] = [];
	let clock = 1_763_681_581_544;
	const last = new Map<string, number>();
	let calls = 0;
	let responses = 0;
	let reuseAt = 0;
	const callIds: string[] = [];
	const resultTexts: string[] = [];
	let lastResponse: string | undefined;
	const stamp = (role: string, mode: Stamp): number | undefined => {
		clock += gap;
		if (mode === "missing") return undefined;
		const prev = last.get(role);
		if (mode === "repeat" && prev !== undefined) return prev;
		last.set(role, clock);
		return clock;
	};
	const push = (message: MessageLike, ts: number | undefined): void => {
		if (ts !== undefined) message.timestamp = ts;
		out.push(message);
	};
	for (const round of rounds) {
		const u = round.user;
		const ts = stamp("user", u.stamp);
		push(
			{
				role: "user",
				content: u.plain ? u.text : [{ type: "text", text: u.text }, ...(u.image ? [IMAGE] : [])],
			},
			ts,
		);
		for (const extra of round.extras) {
			const ets = stamp(extra.kind, extra.stamp);
			if (extra.kind === "custom") {
				push({ role: "custom", customType: "note", content: extra.text, display: true }, ets);
			} else if (extra.kind === "bash") {
				push(
					{
						role: "bashExecution",
						command: "ls -la",
						output: extra.text,
						exitCode: 0,
						cancelled: false,
						truncated: false,
					},
					ets,
				);
			} else if (extra.kind === "compaction") {
				push({ role: "compactionSummary", summary: extra.text, tokensBefore: 1234 }, ets);
			} else {
				push({ role: "branchSummary", summary: extra.text, fromId: "abcd1234" }, ets);
			}
		}
		for (const spec of round.assistants) {
			const content: unknown[] = [];
			const results: MessageLike[] = [];
			for (const part of spec.parts) {
				if (part.t === "text") content.push({ type: "text", text: part.text });
				else if (part.t === "odd") content.push({ type: "audio", data: "zz" });
				else if (part.t === "thinking") {
					if (part.sig === "none") content.push({ type: "thinking", thinking: part.text });
					else if (part.sig === "signed")
						content.push({ type: "thinking", thinking: part.text, thinkingSignature: "EqQBCkYIBxgCKkD" });
					else
						content.push({ type: "thinking", thinking: "", redacted: true, thinkingSignature: "opaque-payload" });
				} else {
					const call = part.call;
					const wantReuse = reuse.length > 0 && reuse[reuseAt++ % reuse.length] === 0 && callIds.length > 0;
					const id = wantReuse ? callIds[call.n % callIds.length] : `toolu_${String(++calls).padStart(4, "0")}`;
					callIds.push(id);
					// One call in three signed, as Gemini signs a step's first call (see Block.signed).
					const signature = call.n % 3 === 0 ? { thoughtSignature: `sig${call.n}` } : {};
					content.push({ type: "toolCall", id, name: call.tool, arguments: argsOf(call), ...signature });
					const r = call.result;
					if (r.mode === "missing") continue;
					let text = r.mode === "error" ? `Error: command failed with exit code 2\n${r.text}` : r.text;
					if (r.mode === "duplicate" && resultTexts.length > 0) text = resultTexts[call.n % resultTexts.length];
					resultTexts.push(text);
					const body =
						r.mode === "string"
							? text
							: r.mode === "image"
								? [{ type: "text", text }, IMAGE]
								: r.mode === "multi"
									? [
											{ type: "text", text },
											{ type: "text", text: "second part" },
										]
									: [{ type: "text", text }];
					results.push({
						role: "toolResult",
						toolCallId: id,
						toolName: call.tool,
						content: body,
						isError: r.mode === "error",
					});
				}
			}
			let responseId: string | undefined;
			if (spec.anchor === "response") responseId = `resp_${++responses}`;
			else if (spec.anchor === "repeat") responseId = lastResponse ?? `resp_${++responses}`;
			if (responseId) lastResponse = responseId;
			const ats = stamp("assistant", spec.anchor === "none" ? "missing" : spec.stamp);
			const hasCalls = results.length > 0 || content.some((p) => (p as { type: string }).type === "toolCall");
			push(
				{
					role: "assistant",
					content,
					api: "anthropic-messages",
					provider: "anthropic",
					model: "claude-sonnet-4-5",
					...(responseId ? { responseId } : {}),
					usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
					stopReason: hasCalls ? "toolUse" : "stop",
				},
				ats,
			);
			if (spec.reversed) results.reverse();
			for (const result of results) push(result, stamp("toolResult", "ok"));
		}
	}
	return out;
}

function argsOf(call: CallSpec): Record<string, unknown> {
	switch (call.tool) {
		case "read":
			return { path: call.path, offset: call.n, limit: 200 };
		case "bash":
			return { command: call.n % 3 === 0 ? call.big : `grep -rn "${call.small.slice(0, 40)}" src`, timeout: 120 };
		case "write":
			return { path: call.path, content: call.big };
		case "edit":
			return {
				path: call.path,
				edits: [
					{ oldText: call.big, newText: `${call.small}\n${call.big.slice(0, call.n)}` },
					{ oldText: call.small, newText: "x" },
				],
			};
		case "grep":
			return { pattern: call.small.slice(0, 30), path: "src", glob: "*.ts", ignoreCase: true };
		default:
			return { query: { deep: [call.big, call.n, null, true], label: call.small }, flag: false };
	}
}

/** A generated Pi session: rounds of user message, optional extras, assistants with their results. */
const sessionArb: fc.Arbitrary<MessageLike[]> = fc
	.tuple(
		fc.array(roundArb, { minLength: 1, maxLength: 6 }),
		fc.integer({ min: 1, max: 5000 }),
		fc.array(fc.nat({ max: 12 }), { maxLength: 6 }),
	)
	.map(([rounds, gap, reuse]) => buildSession(rounds, gap, reuse));

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function totalTokens(messages: readonly MessageLike[]): number {
	let sum = 0;
	for (const block of linearize(messages)) sum += block.tokens;
	return sum;
}

/**
 * Asserts that folded arguments keep the original's structure: the same keys at every depth, the
 * same array lengths, equal non-string leaves and equal unfoldable strings (short, or under a kept
 * key); a foldable string may only be replaced by a string that carries a fold tag.
 */
function assertArgsKept(before: unknown, after: unknown, where: string, key?: string): void {
	if (typeof before === "string") {
		assert.equal(typeof after, "string", `${where}: string became ${typeof after}`);
		if (!foldableArg(key, before) || after === before) assert.equal(after, before, `${where}: small value changed`);
		else
			assert.match(after as string, /^\{#(?:[0-9a-z]{8}|[0-9a-z]{6}) FOLDED\} /, `${where}: replaced without a tag`);
	} else if (Array.isArray(before)) {
		assert.ok(Array.isArray(after), `${where}: array became ${typeof after}`);
		assert.equal(after.length, before.length, `${where}: array length`);
		for (let i = 0; i < before.length; i++) assertArgsKept(before[i], after[i], `${where}[${i}]`, key);
	} else if (before && typeof before === "object") {
		assert.ok(after && typeof after === "object" && !Array.isArray(after), `${where}: object replaced`);
		const a = before as Record<string, unknown>;
		const b = after as Record<string, unknown>;
		assert.deepEqual(Object.keys(b).sort(), Object.keys(a).sort(), `${where}: keys`);
		for (const inner of Object.keys(a)) assertArgsKept(a[inner], b[inner], `${where}.${inner}`, inner);
	} else {
		assert.equal(after, before, `${where}: leaf changed`);
	}
}

interface PartLike {
	type?: string;
	id?: string;
	name?: string;
	arguments?: unknown;
	thinking?: string;
	thinkingSignature?: string;
	text?: string;
	textSignature?: string;
	redacted?: boolean;
}

/**
 * Asserts that `after` is `before` with only rendered content swapped: same length and roles, every
 * tool call with its id, name and argument structure, every tool result with its call id and tool,
 * and unfoldable messages and parts untouched.
 */
function assertShapeKept(before: readonly MessageLike[], after: readonly MessageLike[]): void {
	assert.equal(after.length, before.length, "message count changed");
	for (let i = 0; i < before.length; i++) {
		const a = before[i];
		const b = after[i];
		assert.equal(b.role, a.role, `role of message ${i}`);
		if (a.role === "toolResult") {
			assert.equal(b.toolCallId, a.toolCallId, `toolCallId of message ${i}`);
			assert.equal(b.toolName, a.toolName, `toolName of message ${i}`);
			assert.equal(b.isError, a.isError, `isError of message ${i}`);
		} else if (a.role === "assistant") {
			const pa = a.content as PartLike[];
			const pb = b.content as PartLike[];
			assert.equal(pb.length, pa.length, `part count of message ${i}`);
			for (let j = 0; j < pa.length; j++) {
				assert.equal(pb[j].type, pa[j].type, `type of part ${i}:${j}`);
				if (pa[j].type === "toolCall") {
					assert.equal(pb[j].id, pa[j].id, `call id of part ${i}:${j}`);
					assert.equal(pb[j].name, pa[j].name, `call name of part ${i}:${j}`);
					assertArgsKept(pa[j].arguments, pb[j].arguments, `arguments of part ${i}:${j}`);
				} else if (pa[j].type === "thinking" && !pa[j].thinkingSignature && !pa[j].redacted) {
					if (pb[j] !== pa[j]) assert.match(pb[j].thinking ?? "", /^\{#[0-9a-z]{6,8} FOLDED\} /, "untagged fold");
				} else if (pa[j].type === "text" && !pa[j].textSignature && (pa[j].text ?? "").length >= TEXT_FOLD_CHARS) {
					if (pb[j] !== pa[j]) assert.match(pb[j].text ?? "", /^\{#[0-9a-z]{6,8} FOLDED\} /, "untagged fold");
				} else {
					assert.equal(pb[j], pa[j], `part ${i}:${j} must be untouched`);
				}
			}
		} else {
			assert.equal(b, a, `message ${i} (${a.role}) must be untouched`);
		}
	}
}

/** Applied ids are durable, foldable, unique, and every op is either applied or refused. */
function assertDispositions(result: ApplyResult, blocks: readonly Block[], opCount: number): void {
	const byId = new Map(blocks.map((b) => [b.id, b] as const));
	assert.equal(result.applied.length + result.refused.length, opCount, "every op is applied or refused");
	assert.equal(new Set(result.applied).size, result.applied.length, "an id applied twice");
	for (const id of result.applied) {
		assert.ok(isDurableId(id), `applied a non-durable id ${id}`);
		const block = byId.get(id);
		assert.ok(block, `applied an unknown id ${id}`);
		assert.ok(block.durable && block.foldable, `applied an unfoldable block ${id}`);
	}
}

/** Rendered bytes of the block at (`msg`, `part`) in `messages`: the part, or the whole message. */
function blockBytes(messages: readonly MessageLike[], msg: number, part: number): string {
	const message = messages[msg];
	return JSON.stringify(part < 0 ? message : (message.content as unknown[])[part]);
}

const json = new WeakMap<object, string>();
/** JSON of one message, cached per object (untouched messages keep their identity across turns). */
function messageJson(message: MessageLike): string {
	let text = json.get(message);
	if (text === undefined) {
		text = JSON.stringify(message);
		json.set(message, text);
	}
	return text;
}

/** A cheap deterministic mix of integers, for test-side choices driven by generated seeds. */
function mix(...values: number[]): number {
	let h = 0x9e3779b9;
	for (const v of values) h = Math.imul(h ^ (v | 0), 0x85ebca6b) ^ (h >>> 13);
	return h >>> 0;
}

/**
 * A deliberately careless policy for exercising the mechanism: on some turns it asks to fold a
 * pseudo-random subset of all blocks (ineligible, frozen, held and tail ones included), repeats
 * ids, names unknown ids, and supplies digests carrying forged tags.
 */
function chaosPolicy(seed: number): Policy {
	let call = 0;
	return (view) => {
		call++;
		if (mix(seed, call) % 3 !== 0) return [];
		const commands: FoldCommand[] = [];
		view.blocks.forEach((block, i) => {
			const h = mix(seed, call, i);
			if (h % 4 !== 0) return;
			const digest = h % 3 === 0 ? `{#zzzzzzzz FOLDED} forged ${i}` : h % 3 === 1 ? undefined : "short digest";
			commands.push({ type: "fold", id: block.id, urgent: false, digest });
			if (h % 7 === 0) commands.push({ type: "fold", id: block.id, urgent: true });
		});
		commands.push({ type: "fold", id: "r:no-such-call", urgent: false });
		commands.push({ type: "compact", usage: view.usage, budget: 0, maskable: 0 });
		return commands;
	};
}

interface ReplayOptions {
	window: number;
	config: LadderConfig;
	policy: Policy;
	/** Turn indices (mod turn count) after which one frozen id is unfolded by the agent. */
	unfolds: readonly number[];
}

interface ReplayTurn {
	cut: number;
	plan: TurnPlan;
	rendered: ApplyResult;
	/** A fold event was committed this turn. */
	event: boolean;
	/** Ids unfolded before this turn was planned. */
	unfolded: string[];
}

/** Replays a session turn by turn through planTurn, commitEvent and renderTurn, as the engine does. */
function replay(messages: readonly MessageLike[], options: ReplayOptions): ReplayTurn[] {
	const registry = new FoldRegistry();
	const savings: SavingsMemo = new WeakMap();
	const turns: ReplayTurn[] = [];
	const cuts = requestCuts(messages);
	const unfoldAfter = new Set(options.unfolds.map((u) => u % Math.max(1, cuts.length)));
	let seq = 0;
	let pending: string[] = [];
	for (let t = 0; t < cuts.length; t++) {
		const slice = messages.slice(0, cuts[t]);
		const plan = planTurn({
			messages: slice,
			registry,
			policy: options.policy,
			window: options.window,
			neverCacheRead: false,
			config: options.config,
			savings,
		});
		const event = plan.event.length > 0;
		if (event) {
			seq++;
			commitEvent(registry, plan, recordsFor(plan, seq), seq);
		}
		const rendered = renderTurn(slice, plan.blocks, plan.frozen, plan.event);
		turns.push({ cut: cuts[t], plan, rendered, event, unfolded: pending });
		pending = [];
		if (unfoldAfter.has(t)) {
			const ops = registry.frozenOps();
			if (ops.length > 0) {
				const id = ops[mix(t, ops.length) % ops.length].id;
				registry.unfold(id);
				pending = [id];
			}
		}
	}
	return turns;
}

const configArb: fc.Arbitrary<LadderConfig> = fc.record({
	foldAt: fc.constant(DEFAULT_LADDER.foldAt),
	coldFoldAt: fc.constant(DEFAULT_LADDER.coldFoldAt),
	step: fc.constantFrom(DEFAULT_LADDER.step, 0.05),
	budgetFraction: fc.constant(DEFAULT_LADDER.budgetFraction),
	budgetCap: fc.constant(DEFAULT_LADDER.budgetCap),
	floor: fc.constantFrom(DEFAULT_LADDER.floor, 0.04),
	tail: fc.constantFrom(DEFAULT_LADDER.tail, 4000, 1000, 0),
});

/** A session with a window sized against it (0.5x to 3x its raw tokens), so events do fire. */
const sessionWithWindow = fc
	.tuple(sessionArb, fc.double({ min: 0.5, max: 3, noNaN: true }), configArb)
	.map(([messages, factor, config]) => ({
		messages,
		config,
		window: Math.max(256, Math.round(totalTokens(messages) * factor)),
	}));

// ---------------------------------------------------------------------------------------------
// Ops for applyPlan, from valid engine ops to garbage
// ---------------------------------------------------------------------------------------------

interface OpSeed {
	pick: number;
	source: number;
	code: number;
	text: number;
	args: number;
}

const opSeedArb: fc.Arbitrary<OpSeed> = fc.record({
	pick: fc.nat(),
	source: fc.nat({ max: 5 }),
	code: fc.nat({ max: 7 }),
	text: fc.nat({ max: 5 }),
	args: fc.nat({ max: 8 }),
});

const BOGUS_IDS = ["r:no-such-call", "m0", "m1:0", "", "u:0", "__proto__", "a:toolu_9999:args", "s:1", "x:1"];
const JUNK_OPS: unknown[] = [null, undefined, 42, "r:x", {}, { id: 7, code: "abcdefgh", text: "x" }, []];
const BAD_CODES: unknown[] = ["ABCDEFGH", "abc123", "zz", "", "abc-1234", "{#abcdefgh FOLDED}", 42, undefined];

/** Builds one op from a seed: an engine op, an op on any block with odd fields, or a bogus id. */
function makeOp(seed: OpSeed, blocks: readonly Block[], messages: readonly MessageLike[]): FoldOp {
	const foldable = blocks.filter((b) => b.durable && b.foldable);
	if (seed.source <= 1 && foldable.length > 0) {
		const block = foldable[seed.pick % foldable.length];
		const op = renderFold(block, messages[block.msg]);
		if (op) return op;
	}
	const id =
		seed.source === 5 || blocks.length === 0
			? BOGUS_IDS[seed.pick % BOGUS_IDS.length]
			: blocks[seed.pick % blocks.length].id;
	const block = blocks.find((b) => b.id === id);
	const code = seed.code < 3 ? foldCode(id) : BAD_CODES[seed.code - 3];
	const texts: unknown[] = [
		undefined,
		"short digest",
		"{#zzzzzzzz FOLDED} {#abc123 FOLDED}  forged tags then a digest",
		7,
		"",
		"x".repeat(3000),
	];
	const original =
		block?.kind === "toolArgs"
			? (messages[block.msg].content as PartLike[])[block.part].arguments
			: { path: "src/a.ts", content: "y" };
	const folded = block ? renderFold(block, messages[block.msg])?.args : undefined;
	const argsChoices: unknown[] = [
		undefined,
		null,
		[],
		{},
		{ path: "src/a.ts" },
		"not an object",
		folded ?? { injected: "{#abcdefgh FOLDED} value" },
		{ ...(original as object), extra: "an added key" },
		typeof original === "object" && original ? withoutNestedKey(original) : original,
	];
	return {
		id,
		code,
		text: texts[seed.text],
		args: argsChoices[seed.args],
	} as FoldOp;
}

/** A copy of `value` with its deepest object's first key removed (structure damaged below the top). */
function withoutNestedKey(value: unknown): unknown {
	if (Array.isArray(value)) return value.length > 0 ? [withoutNestedKey(value[0]), ...value.slice(1)] : [];
	if (value && typeof value === "object") {
		const entries = Object.entries(value);
		const nested = entries.findIndex(([, v]) => v && typeof v === "object");
		if (nested >= 0) {
			return Object.fromEntries(entries.map(([k, v], i) => [k, i === nested ? withoutNestedKey(v) : v]));
		}
		return Object.fromEntries(entries.slice(1));
	}
	return value;
}

const sessionWithOps = sessionArb.chain((messages) => {
	const blocks = linearize(messages);
	return fc
		.tuple(
			fc.array(opSeedArb, { maxLength: 24 }),
			fc.array(fc.nat(), { maxLength: 6 }),
			fc.array(fc.nat(), { maxLength: 2 }),
		)
		.map(([seeds, dupes, junk]) => {
			const ops = seeds.map((seed) => makeOp(seed, blocks, messages));
			// Repeat some ids with a different payload: only the first op of an id may apply.
			for (const d of dupes) {
				if (ops.length === 0) break;
				const first = ops[d % ops.length];
				ops.push({ ...first, text: "a later op for the same id" });
			}
			// Now and then, entries that are not ops at all (as a corrupt persisted layer might hold).
			for (const j of junk) ops.splice(j % (ops.length + 1), 0, JUNK_OPS[j % JUNK_OPS.length] as FoldOp);
			return { messages, blocks, ops };
		});
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

describe("applyPlan over generated sessions and arbitrary ops", () => {
	test("keeps the message count, roles and every tool call/result pairing", () => {
		fc.assert(
			fc.property(sessionWithOps, ({ messages, blocks, ops }) => {
				const before = JSON.stringify(messages);
				const result = applyPlan(messages, ops);
				assert.equal(JSON.stringify(messages), before, "applyPlan mutated its input");
				assertShapeKept(messages, result.messages);
				// Passing the blocks of the same array changes nothing.
				assert.deepEqual(applyPlan(messages, ops, blocks), result);
			}),
			{ numRuns: RUNS },
		);
	});

	test("only durable ids of foldable blocks are applied", () => {
		fc.assert(
			fc.property(sessionWithOps, ({ messages, blocks, ops }) => {
				const result = applyPlan(messages, ops, blocks);
				assertDispositions(result, blocks, ops.length);
				const applied = new Set(result.applied);
				for (const op of ops) {
					if (op && typeof op.id === "string" && !isDurableId(op.id)) assert.ok(!applied.has(op.id));
				}
				// The engine writes the tag: an applied text starts with the op's own tag, once, whatever
				// tags the op carried.
				const firstOp = new Map<string, FoldOp>();
				for (const op of ops) if (op && typeof op.id === "string" && !firstOp.has(op.id)) firstOp.set(op.id, op);
				for (const id of result.applied) {
					const op = firstOp.get(id)!;
					const block = blocks.find((b) => b.id === id)!;
					if (block.kind === "toolArgs") continue;
					const message = result.messages[block.msg];
					const text =
						block.kind === "toolResult"
							? (message.content as { text: string }[])[0].text
							: block.kind === "text"
								? (message.content as { text: string }[])[block.part].text
								: (message.content as { thinking: string }[])[block.part].thinking;
					const tag = `{#${op.code} FOLDED} `;
					assert.ok(text.startsWith(tag), `${id} lacks its tag`);
					assert.doesNotMatch(text.slice(tag.length), /^\s*\{#[0-9a-z]{6,8} FOLDED\}/i, `${id} tagged twice`);
				}
				// Messages no applied op touched keep their identity.
				const touched = new Set(blocks.filter((b) => applied.has(b.id)).map((b) => b.msg));
				messages.forEach((m, i) => {
					if (!touched.has(i)) assert.equal(result.messages[i], m, `message ${i} was copied without an op`);
				});
			}),
			{ numRuns: RUNS },
		);
	});

	test("single disposition: with repeated ids, only the first op of an id may apply", () => {
		fc.assert(
			fc.property(sessionWithOps, ({ messages, blocks, ops }) => {
				const result = applyPlan(messages, ops, blocks);
				const firstIndex = new Map<string, number>();
				let wellFormed = 0;
				ops.forEach((op, i) => {
					if (!op || typeof op !== "object" || typeof op.id !== "string") return;
					wellFormed++;
					if (!firstIndex.has(op.id)) firstIndex.set(op.id, i);
				});
				const counts = new Map<string, number>();
				for (const id of result.applied) counts.set(id, (counts.get(id) ?? 0) + 1);
				for (const [id, n] of counts) assert.ok(n <= 1, `id ${id} applied ${n} times`);
				const duplicates = result.refused.filter((r) => r.reason === "duplicate-op").length;
				assert.equal(duplicates, wellFormed - firstIndex.size, "every later op of an id is refused as duplicate");
				// The applied content is the first op's, never a later one's.
				for (const id of result.applied) {
					const op = ops[firstIndex.get(id)!];
					const block = blocks.find((b) => b.id === id)!;
					const bytes = blockBytes(result.messages, block.msg, block.part);
					assert.ok(!bytes.includes("a later op for the same id") || (op.text ?? "").includes("a later op"));
				}
			}),
			{ numRuns: RUNS },
		);
	});
});

describe("the pass over generated sessions", () => {
	test("determinism: planTurn + renderTurn on the same input give the same bytes", () => {
		fc.assert(
			fc.property(sessionWithWindow, ({ messages, window, config }) => {
				const once = (): string => {
					const plan = planTurn({
						messages,
						registry: new FoldRegistry(),
						policy: conduct,
						window,
						neverCacheRead: false,
						config,
					});
					const rendered = renderTurn(messages, plan.blocks, plan.frozen, plan.event);
					return JSON.stringify({ commands: plan.commands, event: plan.event, rendered });
				};
				assert.equal(once(), once());
				// A whole replay is deterministic too (fresh registry and memo each time). Untouched input
				// messages are the same objects in both runs, so their JSON is cached; rewritten ones are not.
				const run = (): string[] =>
					replay(messages, { window, config, policy: conduct, unfolds: [2] }).map(
						(t) => `${JSON.stringify(t.plan.event)}\n${t.rendered.messages.map(messageJson).join("\n")}`,
					);
				assert.deepEqual(run(), run());
			}),
			{ numRuns: RUNS },
		);
	});

	test("frozen bytes never change and requests are append-only between fold events", (t) => {
		let runsWithEvents = 0;
		let frozenChecks = 0;
		let prefixChecks = 0;
		fc.assert(
			fc.property(
				sessionWithWindow,
				fc.boolean(),
				fc.nat(),
				fc.array(fc.nat({ max: 40 }), { maxLength: 3 }),
				({ messages, window, config }, chaos, seed, unfolds) => {
					const policy = chaos ? chaosPolicy(seed) : conduct;
					const turns = replay(messages, { window, config, policy, unfolds });
					const frozenBytes = new Map<string, string>();
					const rawBytes = new Map<string, string>();
					let prev: string[] | null = null;
					let sawEvent = false;
					for (const turn of turns) {
						const slice = messages.slice(0, turn.cut);
						const { rendered, plan } = turn;
						assertShapeKept(slice, rendered.messages);
						assert.deepEqual(rendered.refused, [], "the engine's own ops were refused");
						assertDispositions(rendered, plan.blocks, plan.frozen.length + plan.event.length);
						const byId = new Map(plan.blocks.map((b) => [b.id, b] as const));
						for (const id of turn.unfolded) {
							frozenBytes.delete(id);
							const block = byId.get(id);
							if (block) rawBytes.set(id, blockBytes(slice, block.msg, block.part));
						}
						// Every block frozen earlier renders its first bytes; every unfolded one renders raw.
						for (const [id, bytes] of frozenBytes) {
							const block = byId.get(id)!;
							assert.equal(blockBytes(rendered.messages, block.msg, block.part), bytes, `frozen ${id} moved`);
							frozenChecks++;
						}
						for (const [id, bytes] of rawBytes) {
							const block = byId.get(id)!;
							assert.equal(
								blockBytes(rendered.messages, block.msg, block.part),
								bytes,
								`unfolded ${id} not raw`,
							);
							assert.ok(!plan.event.some((op) => op.id === id), `unfolded ${id} folded again`);
						}
						for (const id of rendered.applied) {
							if (!frozenBytes.has(id)) {
								const block = byId.get(id)!;
								frozenBytes.set(id, blockBytes(rendered.messages, block.msg, block.part));
							}
						}
						const current = rendered.messages.map(messageJson);
						if (prev && !turn.event && turn.unfolded.length === 0) {
							assert.ok(prev.length <= current.length);
							for (let i = 0; i < prev.length; i++) assert.equal(current[i], prev[i], `message ${i} moved`);
							prefixChecks++;
						}
						prev = current;
						sawEvent ||= turn.event;
					}
					if (sawEvent) runsWithEvents++;
				},
			),
			{ numRuns: RUNS },
		);
		t.diagnostic(`${runsWithEvents} replays with events, ${frozenChecks} frozen and ${prefixChecks} prefix checks`);
		// The property must not pass vacuously: events fire and frozen bytes get compared.
		assert.ok(runsWithEvents >= RUNS / 4, `only ${runsWithEvents} of ${RUNS} replays had a fold event`);
		assert.ok(frozenChecks > RUNS, `only ${frozenChecks} frozen-byte comparisons`);
		assert.ok(prefixChecks > RUNS, `only ${prefixChecks} prefix comparisons`);
	});
});

// ---------------------------------------------------------------------------------------------
// The fold ladder
// ---------------------------------------------------------------------------------------------

/** The tail as specified: the newest block and every block overlapping the last `tail` tokens. */
function specTail(blocks: readonly ViewBlock[], tail: number): Set<string> {
	const ids = new Set<string>();
	let after = 0;
	for (let i = blocks.length - 1; i >= 0; i--) {
		if (i === blocks.length - 1 || after < tail) ids.add(blocks[i].id);
		after += blocks[i].tokens;
	}
	return ids;
}

/** Maskable mass as specified: savings of eligible, unfrozen, unheld blocks outside the tail. */
function specMaskable(view: PolicyView): { tail: Set<string>; maskable: number } {
	const tail = specTail(view.blocks, tailOf(view.config, view.window));
	let maskable = 0;
	for (const b of view.blocks) {
		if (b.eligible && !b.frozen && !b.held && b.saving > 0 && !tail.has(b.id)) maskable += b.saving;
	}
	return { tail, maskable };
}

/** Checks one policy answer against the view: what it may select, and when it must or must not fire. */
function checkLadder(view: PolicyView, commands: readonly FoldCommand[]): void {
	const { config, window, usage } = view;
	const byId = new Map(view.blocks.map((b) => [b.id, b] as const));
	const { tail, maskable } = specMaskable(view);
	const newest = view.blocks[view.blocks.length - 1]?.id;
	const folds = commands.filter((c) => c.type === "fold");
	const seen = new Set<string>();
	let saved = 0;
	for (const command of folds) {
		const block = byId.get(command.id);
		assert.ok(block, `selected unknown id ${command.id}`);
		assert.ok(!seen.has(command.id), `selected ${command.id} twice`);
		seen.add(command.id);
		assert.ok(block.eligible, `selected ineligible ${command.id}`);
		assert.ok(!block.frozen, `selected frozen ${command.id}`);
		assert.ok(!block.held, `selected held ${command.id}`);
		assert.ok(!tail.has(command.id), `selected tail block ${command.id}`);
		assert.notEqual(command.id, newest, "selected the newest block");
		assert.ok(block.saving > 0, `selected ${command.id} with no saving`);
		saved += block.saving;
	}
	const budget = budgetOf(config, window);
	const threshold = (view.neverCacheRead ? config.coldFoldAt : config.foldAt) * window;
	const urgent = usage > budget;
	const floor = config.floor * window;
	if (urgent && maskable >= floor && maskable > 0) {
		assert.ok(folds.length > 0, `urgent (usage ${usage} > budget ${budget}) with ${maskable} maskable did not fold`);
	}
	if (folds.length > 0) {
		assert.ok(usage >= threshold || urgent, "folded below the threshold");
		assert.ok(
			folds.every((c) => c.urgent === urgent),
			"urgent flag does not match usage > budget",
		);
		if (urgent) assert.ok(saved >= floor, `urgent event saves ${saved} < floor ${floor}`);
		else
			assert.ok(
				maskable >= config.step * window || view.cache?.warm === false,
				"ordinary event with less than a step maskable while the cache may be warm",
			);
	}
	if (view.cache?.warm === false && usage >= threshold && !urgent && maskable > 0) {
		assert.ok(folds.length > 0, `cold cache past the threshold with ${maskable} maskable did not fold`);
	}
	if (urgent && maskable < floor && maskable < config.step * window) {
		assert.equal(folds.length, 0, `urgent event for only ${maskable} maskable (floor ${floor})`);
	}
	const compacts = commands.filter((c) => c.type === "compact");
	if (compacts.length > 0) {
		assert.ok(urgent && folds.length === 0, "compact without being past the budget with nothing to fold");
	}
	if (urgent && folds.length === 0) assert.equal(compacts.length, 1, "past the budget with no fold and no compact");
}

/** True with probability about `p`. */
function chance(p: number): fc.Arbitrary<boolean> {
	return fc.integer({ min: 0, max: 999 }).map((n) => n < p * 1000);
}

const viewBlockArb = fc.record({
	kind: fc.constantFrom("toolResult", "toolArgs", "thinking", "text", "user", "summary") as fc.Arbitrary<
		ViewBlock["kind"]
	>,
	tokens: fc.oneof(fc.nat({ max: 400 }), fc.nat({ max: 30_000 })),
	eligible: chance(0.7),
	frozen: chance(0.2),
	held: chance(0.15),
	savingFraction: fc.oneof(
		fc.constant(0),
		fc.integer({ min: 0, max: 100 }).map((n) => n / 100),
	),
});

const ladderConfigArb: fc.Arbitrary<LadderConfig> = fc
	.record({
		foldAt: fc.double({ min: 0.05, max: 0.95, noNaN: true }),
		coldFoldAt: fc.double({ min: 0.05, max: 0.95, noNaN: true }),
		step: fc.double({ min: 0.001, max: 0.4, noNaN: true }),
		budgetFraction: fc.double({ min: 0.1, max: 1, noNaN: true }),
		budgetCap: fc.oneof(fc.constant(0), fc.integer({ min: 1000, max: 400_000 })),
		floorShare: fc.double({ min: 0.01, max: 1, noNaN: true }),
		tail: fc.nat({ max: 60_000 }),
	})
	// Positive fractions, as the adapter's config accepts them, and a floor no larger than the step:
	// an ordinary event is worth at least an urgent one.
	.map(({ floorShare, ...rest }) => ({ ...rest, floor: rest.step * floorShare }));

/**
 * Views whose usage is the blocks' sum (or, as Pi may report it, that sum off by up to 20%), in a
 * window sized so that usage lands anywhere from well below the threshold to twice the window.
 */
const viewArb: fc.Arbitrary<PolicyView> = fc
	.record({
		blocks: fc.array(viewBlockArb, { maxLength: 80, size: "large" }),
		fill: fc.integer({ min: 5, max: 200 }).map((n) => n / 100),
		reported: fc.option(fc.integer({ min: 80, max: 120 }).map((n) => n / 100)),
		neverCacheRead: fc.boolean(),
		warm: fc.constantFrom(undefined, true, false, "absent" as const),
		config: fc.oneof(fc.constant({ ...DEFAULT_LADDER }), ladderConfigArb),
	})
	.map(({ blocks, fill, reported, neverCacheRead, warm, config }) => {
		const viewBlocks = blocks.map(({ savingFraction, ...b }, i) => ({
			...b,
			id: `r:call_${i}`,
			saving: b.eligible && !b.frozen ? Math.floor(b.tokens * savingFraction) : 0,
		}));
		const sum = viewBlocks.reduce((a, b) => a + b.tokens, 0);
		const usage = Math.round(sum * (reported ?? 1));
		const cache = warm === "absent" ? {} : { cache: { warm } };
		return {
			blocks: viewBlocks,
			usage,
			window: Math.max(1000, Math.round(usage / fill)),
			neverCacheRead,
			...cache,
			config,
		};
	});

describe("the fold ladder", () => {
	test("on arbitrary views: never selects tail, held, frozen or ineligible blocks; urgent events reach the floor", (t) => {
		let urgentFired = 0;
		let urgentHeld = 0;
		fc.assert(
			fc.property(viewArb, (view) => {
				const commands = conduct(view);
				checkLadder(view, commands);
				if (view.usage > budgetOf(view.config, view.window)) {
					if (commands.some((c) => c.type === "fold")) urgentFired++;
					else urgentHeld++;
				}
			}),
			{ numRuns: RUNS * 3 },
		);
		t.diagnostic(`urgent views: ${urgentFired} folded, ${urgentHeld} held back`);
		assert.ok(urgentFired > 20 && urgentHeld > 20, `urgent fired ${urgentFired}, held back ${urgentHeld}`);
	});

	test("on generated sessions: selections respect tail and holds, urgent events really save the floor", (t) => {
		let events = 0;
		let urgent = 0;
		let signedFolds = 0;
		fc.assert(
			fc.property(sessionWithWindow, fc.boolean(), ({ messages, window, config }, cold) => {
				const registry = new FoldRegistry();
				const plan = planTurn({ messages, registry, policy: conduct, window, neverCacheRead: cold, config });
				checkLadder(plan.view, plan.commands);
				// Holds computed from the messages: results after the newest assistant message, and the
				// arguments of every call whose result was not delivered before it.
				let lastAssistant = -1;
				messages.forEach((m, i) => {
					if (m.role === "assistant") lastAssistant = i;
				});
				const delivered = new Set(
					messages
						.filter((m, i) => m.role === "toolResult" && i < lastAssistant)
						.map((m) => m.toolCallId as string),
				);
				const newest = plan.blocks[plan.blocks.length - 1];
				for (const op of plan.event) {
					const block = plan.blocks.find((b) => b.id === op.id)!;
					assert.notEqual(block, newest, "folded the newest block");
					if (block.kind === "toolResult") assert.ok(block.msg < lastAssistant, `folded held result ${op.id}`);
					if (block.kind === "toolArgs") {
						assert.ok(delivered.has(block.toolCallId!), `folded args of an undelivered call ${op.id}`);
					}
					// A part of a step with a signed call folds only once a user message ended its turn.
					const parts = messages[block.msg].content;
					if (Array.isArray(parts) && parts.some((p: { thoughtSignature?: string }) => p.thoughtSignature)) {
						signedFolds++;
						const ended = messages.slice(block.msg + 1).some((m) => m.role === "user");
						assert.ok(ended, `folded a part of a signed step of the current turn ${op.id}`);
					}
				}
				// The view costs the request as it is sent.
				const base = renderTurn(messages, plan.blocks, plan.frozen, []);
				assert.equal(plan.view.usage, totalTokens(base.messages));
				if (plan.event.length > 0) {
					events++;
					const after = renderTurn(messages, plan.blocks, plan.frozen, plan.event);
					const real = totalTokens(base.messages) - totalTokens(after.messages);
					assert.ok(real > 0, "a fold event that saves nothing");
					if (plan.view.usage > budgetOf(config, window)) {
						urgent++;
						assert.ok(real >= config.floor * window, `urgent event really saves ${real} < floor`);
					}
				}
			}),
			{ numRuns: RUNS },
		);
		t.diagnostic(
			`${events} fold events, ${urgent} urgent, ${signedFolds} parts of signed steps folded after their turn`,
		);
		assert.ok(events >= RUNS / 4 && urgent >= RUNS / 10, `${events} events, ${urgent} urgent`);
		assert.ok(signedFolds > 0, "signed steps fold once their turn is over");
	});
});

describe("tool-call arguments", () => {
	test("hasFoldableArg says exactly when foldArgs changes them: every foldable string's digest is shorter", () => {
		const keys = fc.constantFrom("content", "command", "path", "oldText", "pattern", "edits", "cwd", "x");
		const leaf = fc.oneof(anyText, bigText, fc.integer(), fc.boolean(), fc.constant(null));
		const args = fc.object({ key: keys, values: [leaf], maxDepth: 3 });
		fc.assert(
			fc.property(args, fc.integer({ min: 0, max: 2 ** 32 - 1 }), (value, seed) => {
				const code = foldCode(String(seed));
				assert.equal(hasFoldableArg(value), foldArgs(code, value) !== null);
			}),
			{ numRuns: RUNS },
		);
	});
});
