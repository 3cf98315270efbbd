/**
 * A tool-call argument folds, through real `pi`, under the economic policy, with every assertion on
 * the request bodies the scripted model server captured. The model writes a TypeScript module (a
 * `write` call whose `content` is ~3k characters), then runs bash batches until that content comes
 * back folded: the call keeps its id, name, keys and `path`, and `content` goes out as
 * `{#code FOLDED} N lines: <first line> Names: …`, naming what the module declares or imports by name. The model then
 * recalls the code and gets the original content back (sha256 verified), while the write's result,
 * the message count and every call/result pair stay as they were. Run for the Anthropic Messages and
 * the OpenAI chat-completions wire APIs.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { batchCommand } from "./harness/batches.ts";
import { unpaired } from "./harness/fold-wire.ts";
import { type CapturedRequest, messagesOf, type Reply, toolResultOf } from "./harness/model-server.ts";
import type { PiApi, RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const WINDOW = 32_000;
const SETTINGS = {
	compaction: { enabled: false },
	"context-fold": {
		policy: "economic",
		hotTail: 1000,
		coldTail: 1000,
		// A long horizon: any event pays for its rewrite, so firing depends on the tails and sizes alone.
		horizon: 1000,
		foldFrom: 2000,
		minEvent: 600,
		backstopAt: WINDOW,
		budgetFraction: 0.95,
	},
};
const RUN_TIMEOUT_MS = 90_000;
const MAX_BATCHES = 12;
const PATH = "src/shapes.ts";
const MARKER = "ORCHID-VALVE-2291";

/** The module the model writes: ~3k characters declaring four names, the marker past the digest's head. */
const MODULE = [
	'import { strict as assert } from "node:assert";',
	"",
	`/** Unit of every length here (${MARKER}). */`,
	'export const UNIT = "mm";',
	"",
	"export class Shape {",
	"\tconstructor(readonly name: string) {}",
	"}",
	"",
	"export function area(width: number, height: number): number {",
	"\tassert.ok(width >= 0 && height >= 0);",
	"\treturn width * height;",
	"}",
	"",
	"export function perimeter(width: number, height: number): number {",
	"\treturn 2 * (width + height);",
	"}",
	"",
	...Array.from({ length: 60 }, (_, i) => `// note ${i + 1}: lengths are in millimetres throughout this module.`),
].join("\n");

/** Tool-call ids of one API run. */
function ids(prefix: string) {
	return {
		write: `${prefix}_write`,
		batch: (k: number) => `${prefix}_batch_${String(k).padStart(2, "0")}`,
		recall: `${prefix}_recall`,
	};
}

/** The write call as the request sends it. */
function writeCall(req: CapturedRequest, callId: string): { name: string; args: Record<string, unknown> } | undefined {
	for (const message of messagesOf(req)) {
		const call = message.toolCalls?.find((c) => c.id === callId);
		if (call) return { name: call.name, args: call.args as Record<string, unknown> };
	}
	return undefined;
}

const FOLDED_CONTENT = /^\{#([0-9a-z]{8}) FOLDED\} (\d+) lines: (.*)$/;

/** The scripted model: write the module, run batches until its content comes back folded, recall it, done. */
function argumentScript(id: ReturnType<typeof ids>) {
	return (req: CapturedRequest): Reply => {
		if (req.index > 40) return { text: "guard: too many requests" };
		const write = writeCall(req, id.write);
		if (!write) return { toolCalls: [{ id: id.write, name: "write", args: { path: PATH, content: MODULE } }] };
		const code = String(write.args.content).match(FOLDED_CONTENT)?.[1];
		if (!code) {
			const ran = messagesOf(req).reduce(
				(n, m) => n + (m.toolCalls ?? []).filter((c) => c.name === "bash").length,
				0,
			);
			if (ran >= MAX_BATCHES) return { text: "the write never folded" };
			return { toolCalls: [{ id: id.batch(ran + 1), name: "bash", args: { command: batchCommand(ran + 1) } }] };
		}
		if (toolResultOf(req, id.recall) === undefined)
			return { toolCalls: [{ id: id.recall, name: "recall_folded", args: { codes: [code] } }] };
		return { text: "module recalled" };
	};
}

for (const api of ["anthropic-messages", "openai-completions"] as const satisfies readonly PiApi[])
	describe(`economic policy: a long write argument folds and is recalled (${api})`, () => {
		const id = ids(api);
		const pi = scriptedPi(argumentScript(id), { api, contextWindow: WINDOW, settings: SETTINGS });
		let run: RunResult;
		let folded = -1;

		before(async () => {
			run = await pi.sandbox.runPrint({
				prompt: "Write the shapes module, then run the batches.",
				extensions: ["."],
				timeoutMs: RUN_TIMEOUT_MS,
			});
			folded = pi.server.requests.findIndex((req) =>
				FOLDED_CONTENT.test(String(writeCall(req, id.write)?.args.content)),
			);
		});

		it("the run writes the module, folds its content, recalls it and ends", () => {
			assert.equal(run.code, 0, run.stderr);
			assert.equal(run.stdout.trim(), "module recalled", run.stderr);
			assert.deepEqual(pi.server.errors, []);
			assert.ok(folded > 0, "no request carries the write's content folded");
		});

		it("the folded call keeps its id, name, keys and path; its content names what the module declares", () => {
			const before = writeCall(pi.server.requests[folded - 1], id.write);
			assert.deepEqual(before, { name: "write", args: { path: PATH, content: MODULE } }, "raw before the event");
			const call = writeCall(pi.server.requests[folded], id.write);
			assert.equal(call?.name, "write");
			assert.deepEqual(Object.keys(call?.args ?? {}), ["path", "content"]);
			assert.equal(call?.args.path, PATH);
			const [, , lines, rest] = String(call?.args.content).match(FOLDED_CONTENT) ?? [];
			assert.equal(Number(lines), MODULE.split("\n").length);
			assert.equal(rest, `${MODULE.split("\n")[0]} Names: assert, UNIT, Shape, area, perimeter.`);
			assert.ok(!String(call?.args.content).includes(MARKER), "the marker left the wire");
			assert.match(
				toolResultOf(pi.server.requests[folded], id.write) ?? "",
				/Successfully/i,
				"the write's result stays",
			);
			assert.equal(
				messagesOf(pi.server.requests[folded]).length,
				messagesOf(pi.server.requests[folded - 1]).length + 2,
				"one more call and its result, nothing removed",
			);
			for (const req of pi.server.requests.slice(1))
				assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] });
		});

		it("recall_folded reads the original content back, verified", () => {
			const last = pi.server.requests.at(-1) as CapturedRequest;
			const text = toolResultOf(last, id.recall) ?? "";
			assert.ok(text.includes(MARKER), `the recall lacks the original:\n${text.slice(0, 400)}`);
			assert.ok(text.includes("export function perimeter(width: number, height: number): number {"));
			assert.match(text, /sha256 verified/);
			assert.doesNotMatch(text, /unverified/);
			// The digest counted the content's own lines; the header says where they sit in the text served.
			const lines = MODULE.split("\n").length;
			assert.match(
				text.split("\n")[0],
				new RegExp(`, ${lines + 3} lines, content is L4-${3 + lines} \\(sha256 verified\\)$`),
			);
			assert.equal(
				text
					.split("\n")
					.slice(4, 4 + lines)
					.join("\n"),
				MODULE,
			);
			assert.match(String(writeCall(last, id.write)?.args.content), FOLDED_CONTENT, "recalling leaves it folded");
		});
	});
