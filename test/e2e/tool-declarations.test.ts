/**
 * End-to-end proof, through the real `pi` CLI, that recall_folded and unfold are declared only once
 * there is something to recall (issue 24): no request before the first fold declares them (a
 * session that never folds costs what plain Pi costs), and the request that carries the first
 * `{#code FOLDED}` digest already declares both, so the model can recall it at once.
 *
 * One `pi -p` run per wire: eight long bash outputs push usage past the fold threshold of a 20k
 * window, then the scripted model recalls the first folded batch. Three wires: Anthropic Messages
 * with mid-conversation tool changes (what Pi's catalog enables for current Claude models: the
 * tools join in a `tool_addition` block and the cached system prompt and tool list stay as they
 * were), and Anthropic Messages and OpenAI chat completions without them (Pi then declares the
 * whole tool list again from that request on). Every assertion is on the captured request bodies.
 * And a session Pi forks (`pi --fork`) from one that never folded names a parent session in its
 * header but carries no code of it: it declares neither tool either. And over RPC, a follow-up the
 * user queued while a tool ran, which Pi delivers in the same run after a reply without tool calls,
 * goes out with the first digest and both tools (no before_agent_start plans that request).
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { ANY_TAG, analyze, FoldTracker, headJson, type RequestFolds } from "./harness/fold-wire.ts";
import { type CapturedRequest, type JsonObject, type Script, toolNamesOf } from "./harness/model-server.ts";
import type { PiApi, RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const WINDOW = 20_000;
const BATCHES = 8;
const FOLD_TOOLS = ["recall_folded", "unfold"];
const RUN_TIMEOUT_MS = 90_000;

/** Bash command printing 400 ok lines around a planted error line. */
function batchCommand(k: number): string {
	return (
		`for i in $(seq 1 200); do echo "batch ${k} line $i ok"; done; echo "Error: planted failure ${k}"; ` +
		`for i in $(seq 201 400); do echo "batch ${k} line $i ok"; done`
	);
}

const batchId = (k: number) => `toolu_batch_${k}`;
const RECALL_ID = "toolu_recall";

/** The scripted model: the eight batches, then a recall of the first batch's digest. */
function script(): Script {
	const tracker = new FoldTracker();
	return (req) => {
		const folds = tracker.observe(req);
		if (req.index > 30) return { text: "guard: too many requests" };
		const delivered = new Set(folds.results.map((r) => r.id));
		for (let k = 1; k <= BATCHES; k++) {
			if (!delivered.has(batchId(k))) {
				return { toolCalls: [{ id: batchId(k), name: "bash", args: { command: batchCommand(k) } }] };
			}
		}
		const code = tracker.codes.get(batchId(1));
		if (!code) return { text: "no digest of batch 1 was sent" };
		if (!delivered.has(RECALL_ID)) {
			return { toolCalls: [{ id: RECALL_ID, name: "recall_folded", args: { codes: [code], grep: "planted" } }] };
		}
		return { text: "done" };
	};
}

/**
 * The tools a request declares: its tool list, and the tools its mid-conversation system messages add
 * (`tool_addition` blocks, Anthropic with mid-conversation tool changes).
 */
function declared(req: CapturedRequest): string[] {
	const names = toolNamesOf(req);
	const messages = Array.isArray(req.body.messages) ? (req.body.messages as JsonObject[]) : [];
	for (const m of messages) {
		if (m.role !== "system" || !Array.isArray(m.content)) continue;
		for (const b of m.content as JsonObject[]) {
			if (b.type !== "tool_addition") continue;
			const definition = ((b.tool ?? {}) as JsonObject).definition as JsonObject | undefined;
			names.push(String(definition?.name));
		}
	}
	return names;
}

const WIRES: { name: string; api: PiApi; native: boolean }[] = [
	{ name: "Anthropic Messages with mid-conversation tool changes", api: "anthropic-messages", native: true },
	{ name: "Anthropic Messages without them", api: "anthropic-messages", native: false },
	{ name: "OpenAI chat completions", api: "openai-completions", native: false },
];

for (const wire of WIRES) {
	describe(`fold tools declared from the first fold on (${wire.name})`, () => {
		const held = scriptedPi(script(), {
			api: wire.api,
			contextWindow: WINDOW,
			settings: { compaction: { enabled: false } },
			...(wire.native
				? { modelExtra: { compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true } } }
				: {}),
		});
		let run: RunResult;
		let folds: RequestFolds[] = [];
		let first = -1;

		before(async () => {
			run = await held.sandbox.runPrint({
				prompt: "Run the batches.",
				extensions: ["."],
				timeoutMs: RUN_TIMEOUT_MS,
			});
			folds = analyze(held.server.requests);
			first = folds.findIndex((f) => f.folded.size > 0);
		});

		it("runs to the scripted end, the recall served", () => {
			assert.equal(run.code, 0, run.stderr);
			assert.equal(run.stdout.trim(), "done", run.stderr);
			assert.deepEqual(held.server.errors, []);
			const recall = folds.at(-1)?.results.find((r) => r.id === RECALL_ID)?.text ?? "";
			assert.match(recall, /^Recalled #[0-9a-z]{8}: bash, 401 lines/);
			assert.match(recall, /Error: planted failure 1/);
		});

		it("declares neither tool before the first fold, and both in the request that carries it and after", () => {
			const requests = held.server.requests;
			assert.ok(first > 0, `first digest in request ${first}`);
			for (let i = 0; i < first; i++) {
				assert.ok(declared(requests[i]).includes("bash"), `request ${i}: ${declared(requests[i])}`);
				assert.doesNotMatch(requests[i].raw, /recall_folded|"unfold"/, `request ${i} names a fold tool`);
			}
			for (let i = first; i < requests.length; i++) {
				const names = declared(requests[i]);
				for (const tool of FOLD_TOOLS) assert.ok(names.includes(tool), `request ${i} lacks ${tool}: ${names}`);
			}
		});

		if (wire.native) {
			it("keeps the system prompt and tool list of the first request: the tools join in a tool_addition", () => {
				const requests = held.server.requests;
				for (const [i, req] of requests.entries())
					assert.equal(headJson(req), headJson(requests[0]), `request ${i}`);
				assert.deepEqual(
					FOLD_TOOLS.filter((tool) => toolNamesOf(requests[first]).includes(tool)),
					[],
					"the fold tools went into the tool list",
				);
			});
		} else {
			it("declares the whole tool list again once, in the request of the first fold", () => {
				const requests = held.server.requests;
				const heads = requests.map((req) => headJson(req));
				for (let i = 1; i < requests.length; i++) {
					if (i === first) assert.notEqual(heads[i], heads[i - 1], `request ${i}: the tools did not join`);
					else assert.equal(heads[i], heads[i - 1], `request ${i}: system/tools moved`);
				}
			});
		}
	});
}

describe("a forked session of one that never folded", () => {
	const held = scriptedPi(() => ({ text: "ok" }), { contextWindow: 200_000 });
	let runs: RunResult[] = [];

	before(async () => {
		const { sandbox } = held;
		const first = await sandbox.runPrint({
			prompt: "hello, plan the work",
			extensions: ["."],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		const file = await sandbox.latestSessionFile();
		assert.ok(file, "the first run wrote no session");
		const fork = await sandbox.runPrint({
			prompt: "carry on",
			extensions: ["."],
			args: ["--fork", file],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		runs = [first, fork];
	});

	it("declares neither fold tool: the parent it names holds no code it was given", () => {
		for (const run of runs) assert.equal(run.code, 0, run.stderr);
		const requests = held.server.requests;
		assert.equal(requests.length, 2);
		assert.match(requests[1].raw, /carry on/, "the second request is the fork's");
		for (const req of requests) {
			const tools = toolNamesOf(req);
			assert.ok(tools.includes("bash"), `request ${req.index} tools: ${tools}`);
			for (const name of FOLD_TOOLS) assert.ok(!tools.includes(name), `request ${req.index} declares ${name}`);
		}
	});
});

/**
 * The follow-up scenario's model: the eight batches, each reply reporting a small prompt, the last
 * one slow (the follow-up is queued while it runs); the reply to it is text that reports a 12k
 * cached prompt, so the request that delivers the follow-up, in the same run, is the first to fold.
 */
function followUpScript(): Script {
	const tracker = new FoldTracker();
	return (req) => {
		const folds = tracker.observe(req);
		if (req.index > 20) return { text: "guard: too many requests" };
		const delivered = new Set(folds.results.map((r) => r.id));
		const usage = { input: 50, cacheRead: 1000 + 10 * req.index, cacheWrite: 20 };
		for (let k = 1; k <= BATCHES; k++) {
			if (delivered.has(batchId(k))) continue;
			const command = k === BATCHES ? `sleep 3; ${batchCommand(k)}` : batchCommand(k);
			return { toolCalls: [{ id: batchId(k), name: "bash", args: { command } }], usage };
		}
		if (!req.raw.includes("Follow-up:")) return { text: "pausing here", usage: { ...usage, cacheRead: 12_000 } };
		return { text: "done" };
	};
}

describe("a follow-up queued during a run, delivered with the first fold", () => {
	const held = scriptedPi(followUpScript(), {
		api: "anthropic-messages",
		contextWindow: WINDOW,
		settings: { compaction: { enabled: false } },
	});

	before(async () => {
		const rpc = await held.sandbox.startRpc({ extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
		const from = rpc.records.length;
		const started = rpc.send({ type: "prompt", message: "Run the batches." }, RUN_TIMEOUT_MS);
		await rpc.waitFor((r) => r.type === "tool_execution_start" && r.toolCallId === batchId(BATCHES), {
			from,
			timeoutMs: RUN_TIMEOUT_MS,
		});
		await rpc.send({ type: "follow_up", message: "Follow-up: carry on." });
		await started;
		await rpc.waitFor((r) => r.type === "agent_settled", { from, timeoutMs: RUN_TIMEOUT_MS });
		await rpc.close();
	});

	it("declares both tools from the follow-up's request, the first with a digest, and none before", () => {
		const requests = held.server.requests;
		const first = requests.findIndex((req) => ANY_TAG.test(req.raw));
		assert.ok(first > 0, "a request carries a digest");
		assert.match(requests[first].raw, /Follow-up: carry on\./, "the first digest goes out with the follow-up");
		for (const [i, req] of requests.entries()) {
			const names = declared(req);
			for (const tool of FOLD_TOOLS) assert.equal(names.includes(tool), i >= first, `request ${i}: ${names}`);
		}
	});
});
