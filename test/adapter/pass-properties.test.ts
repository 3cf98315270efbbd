/**
 * The seed's invariants as a property of the whole extension over the stub host: fast-check draws
 * conversations of user prompts, replies (unsigned, signed and redacted thinking, signed text, 0-3
 * parallel calls with long arguments, repeated call and response ids and stamps, error results),
 * aborted replies, compactions, resumes, model switches and unfolds, under each profile in windows of
 * 8k, 16k and 40k. On every request: the message count, roles, stamps and call/result ids are as Pi
 * sent them and the session's own messages are untouched; a second request is byte-identical; signed
 * parts never change; the newest message and results no reply has seen never fold; a folded part's
 * bytes never change and it never goes back to raw (until an unfold or a compaction); a folded
 * result keeps its error lines. The core's own properties are in test/core/properties.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { liveMessages, loadStub, type StubPi } from "./stub-pi.ts";

/** Runs: 100, or more when CONTEXTFOLD_FC_RUNS asks for a longer soak. */
const RUNS = Math.max(100, Number(process.env.CONTEXTFOLD_FC_RUNS) || 0);

const TAG = /\{#[0-9a-z]{8} FOLDED\}/;

type Msg = Record<string, unknown>;

type Step =
	| { kind: "user"; text: number }
	| {
			kind: "turn";
			calls: number;
			lines: number;
			err: boolean;
			thinking: 0 | 1 | 2 | 3;
			text: number;
			sameId: boolean;
			sameResp: boolean;
			isError: boolean;
			argLen: number;
			sameTs: boolean;
	  }
	| { kind: "request" }
	| { kind: "compact"; keep: number }
	| { kind: "resume" }
	| { kind: "switch" }
	| { kind: "aborted"; text: number }
	| { kind: "unfold"; pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("user" as const), text: fc.integer({ min: 1, max: 600 }) }) },
	{
		weight: 5,
		arbitrary: fc.record({
			kind: fc.constant("turn" as const),
			calls: fc.integer({ min: 0, max: 3 }),
			lines: fc.integer({ min: 1, max: 300 }),
			err: fc.boolean(),
			thinking: fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const),
			text: fc.integer({ min: 0, max: 900 }),
			sameId: fc.boolean(),
			sameResp: fc.boolean(),
			isError: fc.boolean(),
			argLen: fc.integer({ min: 5, max: 3000 }),
			sameTs: fc.boolean(),
		}),
	},
	{ weight: 3, arbitrary: fc.record({ kind: fc.constant("request" as const) }) },
	{
		weight: 1,
		arbitrary: fc.record({ kind: fc.constant("compact" as const), keep: fc.integer({ min: 1, max: 12 }) }),
	},
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("resume" as const) }) },
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("switch" as const) }) },
	{
		weight: 1,
		arbitrary: fc.record({ kind: fc.constant("aborted" as const), text: fc.integer({ min: 0, max: 900 }) }),
	},
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("unfold" as const), pick: fc.nat() }) },
);

/** Profiles with small sizes, so that a few dozen steps fold. */
const PROFILES: Record<string, unknown>[] = [
	{ policy: "ladder", foldAt: 0.2, step: 0.05, tail: 1000 },
	{ policy: "economic", foldFrom: 1000, minEvent: 300, hotTail: 1000, coldTail: 1000, horizon: 1000, backstopAt: 1e6 },
	{
		policy: "working-set",
		foldFrom: 1000,
		minEvent: 300,
		hotTail: 1000,
		coldTail: 1000,
		useWindow: 2,
		backstopAt: 1e6,
	},
];

const json = (value: unknown) => JSON.stringify(value);

/** A message's identity whatever its place: role, stamp, and a result's call id and first characters. */
function keyOf(m: Msg): string {
	return `${m.role}@${m.timestamp}@${m.role === "toolResult" ? `${m.toolCallId}:${json(m.content).slice(0, 40)}` : ""}`;
}

/** Requests that went out with a fold, over every scenario: the property is not vacuous. */
const folded = { requests: 0 };

/** What one scenario found wrong: each fault names its request. */
class Checker {
	readonly faults: string[] = [];
	/** The bytes a folded part (by message key and part) first went out with. */
	readonly frozen = new Map<string, string>();
	compacted = false;
	/** The model a reply's thinking is sent to (another model's thinking is not pi-ai's to send). */
	model = "fake-model";
	last: Msg[] = [];
	private requests = 0;

	private readonly stub: StubPi;

	constructor(stub: StubPi) {
		this.stub = stub;
	}

	/** Sends a request twice and checks both against what Pi would send raw. */
	async request(): Promise<void> {
		const label = `request ${++this.requests}`;
		const messages = () => json(this.stub.entries.filter((e) => e.type === "message"));
		const stored = messages();
		const sent = await this.stub.request();
		if (messages() !== stored) this.faults.push(`${label}: the session's messages changed`);
		if (json(await this.stub.request()) !== json(sent)) this.faults.push(`${label}: a second request differs`);
		this.last = sent;
		if (TAG.test(json(sent))) folded.requests++;
		const raw = liveMessages(this.stub.entries);
		if (sent.length !== raw.length) {
			this.faults.push(`${label}: ${raw.length} messages went out as ${sent.length}`);
			return;
		}
		const lastReply = raw.findLastIndex((m) => m.role === "assistant");
		for (const [i, r] of raw.entries()) this.message(label, r, sent[i], i, i > lastReply);
		if (json(sent.at(-1)?.content) !== json(raw.at(-1)?.content))
			this.faults.push(`${label}: the newest message changed`);
	}

	private message(label: string, r: Msg, s: Msg, i: number, unseen: boolean): void {
		if (r.role !== s.role || r.timestamp !== s.timestamp) this.faults.push(`${label}: message ${i}'s role or stamp`);
		if (r.role === "toolResult" && (r.toolCallId !== s.toolCallId || r.isError !== s.isError))
			this.faults.push(`${label}: result ${i}'s call id`);
		if (r.role === "assistant") {
			const parts = r.content as Msg[];
			const out = s.content as Msg[];
			if (parts.length !== out.length) this.faults.push(`${label}: message ${i}'s part count`);
			for (const [k, p] of parts.entries()) this.part(label, r, p, out[k] ?? {}, `${keyOf(r)}#${k}`);
			return;
		}
		const key = keyOf(r);
		const text = json(s.content);
		if (TAG.test(text) && !TAG.test(json(r.content))) {
			this.freeze(label, key, text);
			if (unseen && r.role === "toolResult") this.faults.push(`${label}: result ${i}, which no reply saw, folded`);
			if (r.role === "toolResult")
				for (const error of json(r.content).match(/Error: [a-z0-9 ]+/g) ?? [])
					if (!text.includes(error)) this.faults.push(`${label}: ${key} lost "${error}"`);
		} else if (this.frozen.has(key) && !this.compacted) this.faults.push(`${label}: folded ${key} went out raw`);
	}

	private part(label: string, r: Msg, p: Msg, q: Msg, key: string): void {
		if (p.type !== q.type) this.faults.push(`${label}: ${key}'s type`);
		if (p.type === "toolCall" && (p.id !== q.id || p.name !== q.name)) this.faults.push(`${label}: ${key}'s call id`);
		const signed =
			(p.type === "thinking" && (p.thinkingSignature || p.redacted)) || (p.type === "text" && p.textSignature);
		if (signed && json(p) !== json(q)) this.faults.push(`${label}: signed ${key} changed`);
		const out = json(q);
		if (TAG.test(out)) this.freeze(label, key, out);
		else if (this.frozen.has(key) && !this.compacted && !(p.type === "thinking" && r.model !== this.model))
			this.faults.push(`${label}: folded ${key} went out raw`);
	}

	private freeze(label: string, key: string, bytes: string): void {
		const first = this.frozen.get(key);
		if (first === undefined) this.frozen.set(key, bytes);
		else if (first !== bytes) this.faults.push(`${label}: frozen ${key} changed`);
	}
}

/** Plays `steps` on a fresh stub in `window` under `profile`; the faults found. */
async function scenario(steps: readonly Step[], window: number, profile: Record<string, unknown>): Promise<string[]> {
	const stub = loadStub({ window });
	stub.settings = { compaction: { enabled: false }, "context-fold": profile };
	await stub.emit("session_start", { reason: "startup" });
	const checker = new Checker(stub);
	let ts = 1_700_000_000_000;
	let n = 0;
	let modelB = false;
	stub.addMessage({ role: "user", content: "start", timestamp: ts++ });
	for (const s of steps) {
		if (s.kind === "user")
			stub.addMessage({ role: "user", content: `ask ${n++} ${"x".repeat(s.text)}`, timestamp: ts++ });
		else if (s.kind === "turn") {
			const last = liveMessages(stub.entries).at(-1);
			if (last?.role === "assistant" && (last.content as Msg[]).every((p) => p.type !== "toolCall"))
				stub.addMessage({ role: "user", content: `continue ${n++}`, timestamp: ts++ });
			const id = n++;
			const content: Msg[] = [];
			const reasoning = `think ${id} ${"reason about it ".repeat(80)}`;
			if (s.thinking === 1) content.push({ type: "thinking", thinking: reasoning });
			if (s.thinking === 2) content.push({ type: "thinking", thinking: reasoning, thinkingSignature: `sig${id}` });
			if (s.thinking === 3)
				content.push({ type: "thinking", thinking: "", redacted: true, thinkingSignature: `red${id}` });
			if (s.text)
				content.push({
					type: "text",
					text: `say ${id} ${"y".repeat(s.text)}`,
					...(s.text % 3 === 0 ? { textSignature: `ts${id}` } : {}),
				});
			const calls = Array.from({ length: s.calls }, (_, c) => (s.sameId ? "call_0" : `call_${id}_${c}`));
			for (const [c, callId] of calls.entries())
				content.push({
					type: "toolCall",
					id: callId,
					name: c % 2 ? "read" : "bash",
					arguments: { command: `cmd ${id}.${c} ${"z".repeat(s.argLen)}` },
				});
			if (content.length === 0) content.push({ type: "text", text: `ok ${id}` });
			stub.addMessage({
				role: "assistant",
				content,
				provider: modelB ? "fo" : "fake",
				api: modelB ? "openai-completions" : "anthropic-messages",
				model: modelB ? "model-b" : "fake-model",
				responseId: s.sameResp ? "resp_same" : `resp_${id}`,
				usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
				stopReason: s.calls ? "toolUse" : "stop",
				timestamp: ts++,
			});
			const at = ts++;
			calls.forEach((callId, c) => {
				const lines = Array.from({ length: s.lines }, (_, k) =>
					s.err && k === Math.floor(s.lines / 2) ? `Error: failed ${id} ${c}` : `out ${id}.${c} line ${k} ok`,
				);
				stub.addMessage({
					role: "toolResult",
					toolCallId: callId,
					toolName: c % 2 ? "read" : "bash",
					content: [{ type: "text", text: lines.join("\n") }],
					isError: s.isError,
					timestamp: s.sameTs ? at : ts++,
				});
			});
		} else if (s.kind === "request") await checker.request();
		else if (s.kind === "compact") {
			const messages = stub.entries.filter((e) => e.type === "message");
			let at = Math.max(0, messages.length - s.keep);
			// Pi cuts at a user message or a reply, never at a bare tool result.
			while (at < messages.length && (messages[at].message as Msg).role === "toolResult") at++;
			if (messages.length > s.keep + 2 && at < messages.length) {
				stub.compact(String(messages[at].id), "summary so far");
				await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: false });
				checker.compacted = true;
				checker.frozen.clear();
			}
		} else if (s.kind === "switch") {
			modelB = !modelB;
			checker.model = modelB ? "model-b" : "fake-model";
			stub.model = modelB
				? { provider: "fo", id: "model-b", api: "openai-completions" }
				: { provider: "fake", id: "fake-model", api: "anthropic-messages" };
		} else if (s.kind === "aborted") {
			stub.addMessage({
				role: "assistant",
				content: [
					{ type: "thinking", thinking: "half ".repeat(s.text + 1) },
					{ type: "text", text: `partial ${"w".repeat(s.text)}` },
				],
				provider: "fake",
				api: "anthropic-messages",
				model: "fake-model",
				stopReason: "aborted",
				usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				timestamp: ts++,
			});
		} else if (s.kind === "unfold") {
			const codes = [...new Set([...json(checker.last).matchAll(/\{#([0-9a-z]{8}) FOLDED\}/g)].map((m) => m[1]))];
			if (codes.length > 0) {
				const code = codes[s.pick % codes.length];
				await stub.call("unfold", { codes: [code] });
				for (const [key, bytes] of checker.frozen)
					if (bytes.includes(`{#${code} FOLDED}`)) checker.frozen.delete(key);
			}
		} else await stub.emit("session_start", { reason: "resume" });
	}
	await checker.request();
	return checker.faults;
}

describe("the extension over generated conversations", () => {
	it("keeps the seed's invariants on every request, under every profile and window", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(step, { minLength: 5, maxLength: 40 }),
				fc.constantFrom(8_000, 16_000, 40_000),
				fc.constantFrom(...PROFILES),
				async (steps, window, profile) => {
					const faults = await scenario(steps, window, profile);
					assert.deepEqual(faults.slice(0, 6), []);
				},
			),
			{ numRuns: RUNS },
		);
		assert.ok(folded.requests >= RUNS / 4, `${folded.requests} requests carried a fold`);
	});
});
