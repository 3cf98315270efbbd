/**
 * context-fold on Google's Gemini wire (pi-ai's `google-generative-ai` API), through the real `pi` CLI
 * with a Gemini 3 model id and reasoning on: every scripted reply streams `thought: true` parts, and the
 * scripted server signs as Gemini does (a `thoughtSignature` on the first function call of a step, or on
 * the text of a reply that calls nothing). Two `pi -p` runs on one session. The first prompt's long run
 * writes a module with a signed `write`, then a parallel step of a signed bash and an unsigned `write`
 * beside it, then a step whose `write` the server leaves unsigned (as a model that signs nothing), then
 * bash batches until events fold: the results fold and so does the unsigned step's write, while both
 * writes of signed steps go out byte-identical, signatures and all, in every request of that turn
 * (Google asks for the current turn's signed calls back unchanged; context-fold holds every part of a
 * signed step). After the second prompt an event folds both, the signature still unchanged, and
 * `recall_folded` serves the signed write back sha256 verified. In every request each function call has
 * exactly one response with its name and id, and every thought part and signed text part goes out
 * byte-identical.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { batchCommand } from "./harness/batches.ts";
import { analyze, type RequestFolds, resultText, TAG_AT_HEAD } from "./harness/fold-wire.ts";
import { type CapturedRequest, type JsonObject, messagesOf, type Reply } from "./harness/model-server.ts";
import type { RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const WINDOW = 16_000;
const SETTINGS = {
	compaction: { enabled: false },
	"context-fold": { policy: "ladder", foldAt: 0.3, step: 0.1, budgetFraction: 0.95, tail: 1000 },
};
const MODEL = "gemini-3-flash-preview";
const MAX_BATCHES = 16;
const RUN_TIMEOUT_MS = 90_000;
const PROMPT_1 = "Write both modules, then run the batches.";
const PROMPT_2 = "Run more batches, then read the signed module back.";
const DONE_1 = "first turn done";
const DONE_2 = "second turn done";
const SIGNED = "g_write_signed";
/** The write beside a signed call in a parallel step: unsigned itself, but in a signed step. */
const BESIDE = "g_write_beside";
/** The write of a step the server sends unsigned. */
const UNSIGNED = "g_write_unsigned";
const RECALL = "g_recall";
const batchId = (k: number) => `g_batch_${String(k).padStart(2, "0")}`;
const FOLDED_CONTENT = /^\{#([0-9a-z]{8}) FOLDED\} (\d+) lines: /;

/** A ~3k-character TypeScript module named `name`, its marker past any digest's head. */
function moduleText(name: string): string {
	return [
		`/** The ${name} module. */`,
		`export const NAME = "${name}"; // marker ${name.toUpperCase()}-7731`,
		"",
		`export function ${name}Area(width: number, height: number): number {`,
		"\treturn width * height;",
		"}",
		"",
		...Array.from({ length: 44 }, (_, i) => `// ${name} note ${i + 1}: lengths are in millimetres throughout.`),
	].join("\n");
}
const SIGNED_CONTENT = moduleText("signed");
const BESIDE_CONTENT = moduleText("beside");
const UNSIGNED_CONTENT = moduleText("unsigned");

/** The summary of the thinking the model sends with its reply to request `index`. */
function thinkingOf(index: number): string {
	return `Step ${index}: read what the last command printed.\nThen decide on the next command.`;
}

/** The Gemini `contents` of a request. */
function contentsOf(req: CapturedRequest): JsonObject[] {
	return Array.isArray(req.body.contents) ? (req.body.contents as JsonObject[]) : [];
}

/** The parts of every content of a request with role `role`, in order. */
function partsOf(req: CapturedRequest, role: "user" | "model"): JsonObject[] {
	return contentsOf(req)
		.filter((c) => c.role === role)
		.flatMap((c) => (Array.isArray(c.parts) ? (c.parts as JsonObject[]) : []));
}

/** The model part carrying the function call `id`, as sent. */
function callPart(req: CapturedRequest, id: string): JsonObject | undefined {
	return partsOf(req, "model").find((p) => (p.functionCall as JsonObject | undefined)?.id === id);
}

/** The `args.content` of the write call `id`, as sent. */
function contentOf(req: CapturedRequest, id: string): string | undefined {
	const call = callPart(req, id)?.functionCall as { args?: { content?: unknown } } | undefined;
	return call?.args?.content === undefined ? undefined : String(call.args.content);
}

/** The text of the last user message that is not a tool result. */
function promptOf(req: CapturedRequest): string | undefined {
	return messagesOf(req)
		.filter((m) => m.role === "user")
		.at(-1)?.text;
}

/** The scripted model's next move: a function of the prompt, the calls and the folds the request carries. */
function nextMove(req: CapturedRequest): Reply {
	if (req.index > 50) return { text: "guard: too many requests" };
	const bashRan = partsOf(req, "model").filter((p) => (p.functionCall as JsonObject | undefined)?.name === "bash");
	const batch = (): Reply => {
		const k = bashRan.length + 1;
		if (k > MAX_BATCHES) return { text: "no fold in time" };
		return { toolCalls: [{ id: batchId(k), name: "bash", args: { command: batchCommand(k) } }] };
	};
	if (promptOf(req) === PROMPT_1) {
		if (!callPart(req, SIGNED))
			return {
				toolCalls: [{ id: SIGNED, name: "write", args: { path: "src/signed.ts", content: SIGNED_CONTENT } }],
			};
		if (!callPart(req, BESIDE)) {
			const write = { id: BESIDE, name: "write", args: { path: "src/beside.ts", content: BESIDE_CONTENT } };
			return { toolCalls: [batch().toolCalls![0], write] };
		}
		if (!callPart(req, UNSIGNED)) {
			const write = { id: UNSIGNED, name: "write", args: { path: "src/unsigned.ts", content: UNSIGNED_CONTENT } };
			return { toolCalls: [write], unsigned: true };
		}
		return FOLDED_CONTENT.test(contentOf(req, UNSIGNED) ?? "") ? { text: DONE_1 } : batch();
	}
	if (promptOf(req) === PROMPT_2) {
		const code = FOLDED_CONTENT.exec(contentOf(req, SIGNED) ?? "")?.[1];
		if (!code || !FOLDED_CONTENT.test(contentOf(req, BESIDE) ?? "")) return batch();
		if (!messagesOf(req).some((m) => m.role === "tool" && m.toolCallId === RECALL))
			return { toolCalls: [{ id: RECALL, name: "recall_folded", args: { codes: [code] } }] };
		return { text: DONE_2 };
	}
	return { text: "unexpected prompt" };
}

/**
 * Function calls not answered, in the user content right after theirs, by exactly one response of the same
 * id and name, and responses answering no call.
 */
function pairingFaults(req: CapturedRequest): string[] {
	const contents = contentsOf(req);
	const faults: string[] = [];
	const key = (f: JsonObject) => `${String(f.id)}/${String(f.name)}`;
	const partsAt = (i: number) => (Array.isArray(contents[i]?.parts) ? (contents[i].parts as JsonObject[]) : []);
	contents.forEach((content, i) => {
		const calls = partsAt(i).flatMap((p) => (p.functionCall ? [key(p.functionCall as JsonObject)] : []));
		if (content.role !== "model" || calls.length === 0) return;
		const next = contents[i + 1]?.role === "user" ? partsAt(i + 1) : [];
		const answers = next.flatMap((p) => (p.functionResponse ? [key(p.functionResponse as JsonObject)] : []));
		if (JSON.stringify(answers) !== JSON.stringify(calls))
			faults.push(`content ${i}: ${calls} answered by ${answers}`);
	});
	const all = (field: string) =>
		partsOf(req, field === "functionCall" ? "model" : "user").flatMap((p) =>
			p[field] ? [key(p[field] as JsonObject)] : [],
		);
	const calls = all("functionCall");
	const responses = all("functionResponse");
	if (new Set(calls).size !== calls.length) faults.push(`a call twice: ${calls}`);
	if (JSON.stringify([...calls].sort()) !== JSON.stringify([...responses].sort()))
		faults.push(`calls ${calls} responses ${responses}`);
	return faults;
}

describe("context-fold through pi -p on the Gemini wire, reasoning on, signed calls held for their turn", () => {
	const pi = scriptedPi((req) => ({ thinking: thinkingOf(req.index), ...nextMove(req) }), {
		api: "google-generative-ai",
		modelId: MODEL,
		contextWindow: WINDOW,
		modelExtra: { reasoning: true },
		settings: SETTINGS,
	});
	const runs: RunResult[] = [];
	/** Requests of the first turn, then of the second. */
	let turn1: CapturedRequest[] = [];
	let turn2: CapturedRequest[] = [];
	let folds: RequestFolds[] = [];

	before(async () => {
		const run = (prompt: string, continueSession: boolean) =>
			pi.sandbox.runPrint({
				prompt,
				continueSession,
				extensions: ["."],
				args: ["--thinking", "low"],
				timeoutMs: RUN_TIMEOUT_MS,
			});
		runs.push(await run(PROMPT_1, false));
		turn1 = [...pi.server.requests];
		runs.push(await run(PROMPT_2, true));
		turn2 = pi.server.requests.slice(turn1.length);
		folds = analyze(pi.server.requests);
	});

	it("runs both turns to the scripted end on the Gemini wire, asking for thoughts", () => {
		assert.equal(runs[0].code, 0, runs[0].stderr);
		assert.equal(runs[0].stdout.trim(), DONE_1, runs[0].stderr);
		assert.equal(runs[1].code, 0, runs[1].stderr);
		assert.equal(runs[1].stdout.trim(), DONE_2, runs[1].stderr);
		assert.deepEqual(pi.server.errors, []);
		for (const req of pi.server.requests) {
			assert.equal(req.path, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
			const config = req.body.generationConfig as JsonObject | undefined;
			assert.deepEqual(
				config?.thinkingConfig,
				{ includeThoughts: true, thinkingLevel: "LOW" },
				`request ${req.index}`,
			);
		}
		assert.ok(turn1.length >= 5, `only ${turn1.length} requests in the first turn`);
		assert.ok(turn2.length >= 3, `only ${turn2.length} requests in the second turn`);
	});

	it("first turn: results and the unsigned step's write fold; both writes of signed steps go out byte-identical", () => {
		const part = callPart(turn1[1], SIGNED) as JsonObject;
		assert.match(String(part.thoughtSignature), /^[A-Za-z0-9+/]+={0,2}$/, "the signed write went out unsigned");
		assert.deepEqual(part.functionCall, {
			name: "write",
			args: { path: "src/signed.ts", content: SIGNED_CONTENT },
			id: SIGNED,
		});
		const beside = callPart(turn1[2], BESIDE) as JsonObject;
		assert.equal(beside.thoughtSignature, undefined, "the parallel write went out signed");
		assert.ok(
			callPart(turn1[2], batchId(1))?.thoughtSignature,
			"the first call of the parallel step went out unsigned",
		);
		for (const [id, first] of [
			[SIGNED, 1],
			[BESIDE, 2],
		] as const) {
			const sent = JSON.stringify(callPart(turn1[first], id));
			for (const req of turn1.slice(first)) {
				assert.equal(JSON.stringify(callPart(req, id)), sent, `request ${req.index}: ${id} changed`);
				assert.ok(req.raw.includes(sent), `request ${req.index}: ${id} is not in the body byte for byte`);
			}
		}
		assert.equal(callPart(turn1[3], UNSIGNED)?.thoughtSignature, undefined, "the unsigned step went out signed");
		const folded = turn1.findIndex((req) => FOLDED_CONTENT.test(contentOf(req, UNSIGNED) ?? ""));
		assert.ok(folded > 3, "the unsigned step's write never folded in the first turn");
		assert.equal(contentOf(turn1[folded - 1], UNSIGNED), UNSIGNED_CONTENT, "raw before the event");
		const tagged = folds.slice(0, turn1.length).flatMap((f) => [...f.folded.values()]);
		assert.ok(tagged.length > 0, "no tool result folded in the first turn");
		for (const { text } of tagged) assert.match(text, TAG_AT_HEAD);
		assert.ok(
			folds.slice(0, turn1.length).some((f) => f.folded.has(batchId(1))),
			"batch 1's result (a signed step's) never folded in the first turn",
		);
	});

	it("second turn: an event folds both writes of signed steps, the thoughtSignature unchanged", () => {
		const first = callPart(turn1[1], SIGNED) as JsonObject;
		const folded = turn2.findIndex((req) => FOLDED_CONTENT.test(contentOf(req, SIGNED) ?? ""));
		assert.ok(folded > 0, "the signed write's content never folded after the second prompt");
		assert.equal(contentOf(turn2[0], SIGNED), SIGNED_CONTENT, "the second turn's first request already folds it");
		assert.equal(contentOf(turn2[0], BESIDE), BESIDE_CONTENT, "the second turn's first request already folds it");
		assert.match(
			contentOf(turn2.at(-1) as CapturedRequest, BESIDE) ?? "",
			FOLDED_CONTENT,
			"the write beside never folded",
		);
		for (const req of turn2.slice(folded)) {
			const part = callPart(req, SIGNED) as JsonObject;
			const call = part.functionCall as { name: string; id: string; args: JsonObject };
			assert.equal(part.thoughtSignature, first.thoughtSignature, `request ${req.index}: signature changed`);
			assert.deepEqual(
				[call.name, call.id, Object.keys(call.args), call.args.path],
				["write", SIGNED, ["path", "content"], "src/signed.ts"],
			);
			assert.match(String(call.args.content), FOLDED_CONTENT);
			assert.match(String(call.args.content), /^\{#[0-9a-z]{8} FOLDED\} 51 lines: \/\*\* The signed module/);
			assert.ok(
				!String(call.args.content).includes("SIGNED-7731"),
				`request ${req.index}: the marker left the wire`,
			);
		}
	});

	it("every functionCall has exactly one functionResponse with its name and id, in every request", () => {
		for (const req of pi.server.requests) assert.deepEqual(pairingFaults(req), [], `request ${req.index}`);
		const calls = partsOf(pi.server.requests.at(-1) as CapturedRequest, "model").filter((p) => p.functionCall);
		assert.ok(calls.length >= 8, `only ${calls.length} calls in the last request`);
	});

	it("thought parts and signed text parts go out byte-identical in every later request, never digested", () => {
		const sentText = new Map<string, string>();
		for (const req of pi.server.requests) {
			const model = partsOf(req, "model");
			const thoughts = model.filter((p) => p.thought === true);
			// One thought per earlier reply, in order, unsigned as they came: none dropped, none changed.
			assert.deepEqual(
				thoughts,
				Array.from({ length: req.index }, (_, i) => ({ thought: true, text: thinkingOf(i) })),
				`request ${req.index}`,
			);
			for (const part of model.filter((p) => p.thought !== true && typeof p.text === "string")) {
				assert.ok(part.thoughtSignature, `request ${req.index}: a text part went out unsigned`);
				const json = JSON.stringify(part);
				const text = String(part.text);
				if (!sentText.has(text)) sentText.set(text, json);
				assert.equal(json, sentText.get(text), `request ${req.index}: "${text}" changed`);
				assert.doesNotMatch(json, /FOLDED/);
			}
		}
		assert.deepEqual([...sentText.keys()], [DONE_1], "the first turn's signed answer");
		const done = partsOf(turn2[0], "model").find((p) => p.text === DONE_1);
		assert.ok(
			turn2.every((req) => req.raw.includes(JSON.stringify(done))),
			"the signed answer is not in every body",
		);
	});

	it("recall_folded serves the signed write's original content, sha256 verified", () => {
		const last = pi.server.requests.at(-1) as CapturedRequest;
		const code = FOLDED_CONTENT.exec(contentOf(last, SIGNED) ?? "")?.[1];
		const recall = String(resultText(folds.at(-1) as RequestFolds, RECALL));
		const lines = SIGNED_CONTENT.split("\n").length;
		// The header counts the served text: three lines naming the call, then the content.
		const header = `Recalled #${code}: arguments of write, ${lines + 3} lines, content is L4-${lines + 3} (sha256 verified)`;
		assert.equal(recall.split("\n")[0], header);
		assert.equal(
			recall
				.split("\n")
				.slice(4, 4 + lines)
				.join("\n"),
			SIGNED_CONTENT,
			recall.slice(0, 400),
		);
	});
});
