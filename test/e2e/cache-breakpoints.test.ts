/**
 * context-fold's own cache breakpoints on the Anthropic Messages wire, through the real `pi` CLI
 * (src/core/cache-breakpoints.ts, placed in before_provider_request). Pi marks the system prompt, the
 * last tool and the last message's last block; context-fold adds, with the same mark, the frontier
 * (the last tool result before the first block a fold may still change, as the fold state stood
 * before this turn's event), and after a turn that appended more than Anthropic's 20-block lookback
 * the previous request's last block, within Anthropic's four marks.
 *
 * One `pi -p` run per wire: three small bash calls, then twelve long outputs that push a 20k window
 * past the fold threshold several times, then two small calls and one batch of eleven parallel
 * calls (22 blocks in one turn). Every assertion is on the request
 * bodies the scripted model server captured:
 * - no request carries more than four `cache_control` marks, and Pi's marks on the system prompt and
 *   the last block stay;
 * - the request after the wide batch marks the block that was the previous request's last one,
 *   found again where it stood;
 * - each fold event's request marks a tool result before its first changed message, one the request
 *   just before it marked as well, so the event reads the cache up to there;
 * - with Pi's caching off (`cacheRetention: "none"`, test/e2e/fixtures/no-cache-retention.ts), a
 *   session that folds goes out without a single mark.
 * Three wires: Anthropic Messages as the harness configures it (Pi declares the whole tool list again
 * when the fold tools join); with mid-conversation tool changes, as Pi's catalog sets current
 * Claude models (the fold tools join in a `tool_addition`, and a deferred placeholder tool follows
 * the last real one); and with thinking on a model that takes its effort mid-conversation (Pi's
 * `supportsMidConvoEffort`, the newest Claude models), where every request ends in a content-less
 * system message after the block Pi marks.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { analyze, FoldTracker, headJson, messageJson, prefixBreak, type RequestFolds } from "./harness/fold-wire.ts";
import type { CapturedRequest, JsonObject, Reply } from "./harness/model-server.ts";
import type { RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const WINDOW = 20_000;
const SMALL = 3;
const BATCHES = 12;
const AFTER = 2;
/** Parallel calls in the last step: 2 blocks each, past Anthropic's 20-block lookback. */
const WIDE = 11;
const LOOKBACK = 20;
const MAX_MARKS = 4;
/** Only a hang: the runner kills pi and rejects past it, so a slow machine never fails a figure. */
const RUN_TIMEOUT_MS = 120_000;
const NO_CACHE = "test/e2e/fixtures/no-cache-retention.ts";

const smallId = (k: number) => `toolu_small_${k}`;
const batchId = (k: number) => `toolu_batch_${k}`;
const afterId = (k: number) => `toolu_after_${k}`;
const wideId = (k: number) => `toolu_wide_${k}`;

/** Bash command printing 400 ok lines of batch `k` around a planted error line. */
function batchCommand(k: number): string {
	return (
		`for i in $(seq 1 200); do echo "batch ${k} line $i ok"; done; echo "Error: planted failure ${k}"; ` +
		`for i in $(seq 201 400); do echo "batch ${k} line $i ok"; done`
	);
}

/** The scripted model, a function of the results a request carries: small calls, long batches, small calls. */
function script(): (req: CapturedRequest) => Reply {
	const tracker = new FoldTracker();
	return (req) => {
		const folds = tracker.observe(req);
		if (req.index > 80) return { text: "guard: too many requests" };
		const has = (id: string) => folds.results.some((r) => r.id === id);
		const bash = (id: string, command: string): Reply => ({ toolCalls: [{ id, name: "bash", args: { command } }] });
		for (let k = 1; k <= SMALL; k++) if (!has(smallId(k))) return bash(smallId(k), `echo small ${k}`);
		for (let k = 1; k <= BATCHES; k++) if (!has(batchId(k))) return bash(batchId(k), batchCommand(k));
		for (let k = 1; k <= AFTER; k++) if (!has(afterId(k))) return bash(afterId(k), `echo after ${k}`);
		if (!has(wideId(WIDE))) {
			const calls = Array.from({ length: WIDE }, (_, k) => ({
				id: wideId(k + 1),
				name: "bash",
				args: { command: `echo wide ${k + 1}` },
			}));
			return { toolCalls: calls };
		}
		return { text: "done" };
	};
}

/** An Anthropic content block, as far as marks go. */
interface WireBlock {
	type?: string;
	tool_use_id?: string;
	text?: string;
	cache_control?: unknown;
}

/** A marked block of a request's messages. */
interface Mark {
	message: number;
	block: number;
	type?: string;
	id?: string;
}

function messagesOf(req: CapturedRequest): JsonObject[] {
	return Array.isArray(req.body.messages) ? (req.body.messages as JsonObject[]) : [];
}

function blocksOf(message: JsonObject | undefined): WireBlock[] | undefined {
	return Array.isArray(message?.content) ? (message.content as WireBlock[]) : undefined;
}

/** Every `cache_control` key anywhere in the body: tools, system prompt and messages. */
function countMarks(value: unknown): number {
	if (Array.isArray(value)) return value.reduce((n: number, v) => n + countMarks(v), 0);
	if (!value || typeof value !== "object") return 0;
	let n = 0;
	for (const [k, v] of Object.entries(value)) n += k === "cache_control" ? 1 : countMarks(v);
	return n;
}

/** The marked blocks of a request's messages, in order. */
function messageMarks(req: CapturedRequest): Mark[] {
	const out: Mark[] = [];
	messagesOf(req).forEach((message, m) => {
		blocksOf(message)?.forEach((b, i) => {
			if (b.cache_control !== undefined) out.push({ message: m, block: i, type: b.type, id: b.tool_use_id });
		});
	});
	return out;
}

/**
 * The last block of a request's last message with content, with its position: where the model takes
 * its effort mid-conversation, Pi ends the request with a content-less system message.
 */
function lastBlock(req: CapturedRequest): { message: number; block: number; value: WireBlock } | undefined {
	const messages = messagesOf(req);
	let at = messages.length - 1;
	while (at >= 0 && blocksOf(messages[at])?.length === 0) at--;
	const blocks = blocksOf(messages[at]);
	if (!blocks || blocks.length === 0) return undefined;
	return { message: at, block: blocks.length - 1, value: blocks[blocks.length - 1] };
}

const describeBlock = (b: WireBlock | undefined) =>
	b ? `${b.type}(${b.tool_use_id ?? b.text?.slice(0, 30)})` : "none";

/** The requests [from, to) of one pi run. */
interface Run {
	result: RunResult;
	from: number;
	to: number;
}

/** Fold events of a run: request indices whose results carry a digest the request before did not. */
function foldEvents(requests: readonly CapturedRequest[], run: Run): number[] {
	const folds: RequestFolds[] = analyze(requests.slice(run.from, run.to));
	const events: number[] = [];
	for (let i = 1; i < folds.length; i++) {
		if ([...folds[i].folded.keys()].some((id) => !folds[i - 1].folded.has(id))) events.push(run.from + i);
	}
	return events;
}

/** Asserts that the run reached the scripted end without a server error. */
function assertCompleted(run: Run, errors: readonly Error[]): void {
	assert.equal(run.result.code, 0, run.result.stderr);
	assert.equal(run.result.stdout.trim(), "done", run.result.stderr);
	assert.deepEqual(errors, []);
	assert.equal(run.to - run.from, 1 + SMALL + BATCHES + AFTER + 1, "one request per scripted step");
}

/** (a) At most four marks per request; Pi's marks on the system prompt and the last block stay; the cap is reached. */
function assertAtMostFour(requests: readonly CapturedRequest[], run: Run): void {
	let full = 0;
	for (let i = run.from; i < run.to; i++) {
		const req = requests[i];
		const total = countMarks(req.body);
		assert.ok(total <= MAX_MARKS, `request ${i} carries ${total} cache_control marks`);
		if (total === MAX_MARKS) full++;
		assert.ok(countMarks(req.body.system) >= 1, `request ${i}: the system prompt lost Pi's mark`);
		const last = lastBlock(req);
		assert.ok(last?.value.cache_control !== undefined, `request ${i}: the last block lost Pi's mark`);
	}
	// Pi alone marks three places: the cap is reached only with context-fold's marks on top.
	assert.ok(full > 0, "no request carries the four marks");
}

/**
 * (b) A request that appended more than the lookback after the previous request's last block marks
 * that block, found again where it stood (Pi's mark on the new last block would not reach back to
 * its entry); there is at least one such request.
 */
function assertPreviousLastMarked(requests: readonly CapturedRequest[], run: Run): void {
	let far = 0;
	for (let i = run.from + 1; i < run.to; i++) {
		const previous = lastBlock(requests[i - 1]);
		assert.ok(previous, `request ${i - 1} ends in no content block`);
		const messages = messagesOf(requests[i]);
		const block = blocksOf(messages[previous.message])?.[previous.block];
		const same =
			block?.type === previous.value.type &&
			block?.tool_use_id === previous.value.tool_use_id &&
			block?.text === previous.value.text;
		assert.ok(same, `request ${i}: ${describeBlock(block)} stands where ${describeBlock(previous.value)} stood`);
		let after = (blocksOf(messages[previous.message])?.length ?? 1) - 1 - previous.block;
		for (const message of messages.slice(previous.message + 1)) after += blocksOf(message)?.length ?? 1;
		assert.ok(after > 0, `request ${i} appended nothing`);
		if (after <= LOOKBACK) continue;
		far++;
		assert.ok(
			block?.cache_control !== undefined,
			`request ${i}: ${after} blocks after the previous request's last block ${describeBlock(block)} (message ${previous.message}), which carries no mark; marks: ${JSON.stringify(messageMarks(requests[i]))}`,
		);
	}
	assert.ok(far >= 1, "no request appended more than the lookback");
}

/**
 * (c) Each fold event's request marks a tool result before its first changed message (so the prefix
 * up to that mark is the previous request's), and the previous request marked the same tool result.
 */
function assertEventReadsToFrontier(
	requests: readonly CapturedRequest[],
	run: Run,
	stableHead: boolean,
): { event: number; frontier: string }[] {
	const events = foldEvents(requests, run);
	assert.ok(events.length >= 2, `fold events at requests ${events}`);
	const seen: { event: number; frontier: string }[] = [];
	for (const i of events) {
		const before = requests[i - 1];
		const at = requests[i];
		const changed = prefixBreak(messageJson(before), messageJson(at));
		assert.ok(changed >= 0, `event request ${i} changed no earlier message`);
		if (stableHead) assert.equal(headJson(at), headJson(before), `event request ${i}: system prompt or tools moved`);
		const frontier = messageMarks(at)
			.filter((m) => m.type === "tool_result" && m.message < changed)
			.at(-1);
		assert.ok(
			frontier?.id,
			`event request ${i}: no tool_result marked before message ${changed}, the first it changed; marks: ${JSON.stringify(messageMarks(at))}`,
		);
		const earlier = messageMarks(before).find((m) => m.type === "tool_result" && m.id === frontier.id);
		assert.ok(earlier, `request ${i - 1}, before the event, did not mark ${frontier.id}`);
		assert.equal(earlier.message, frontier.message, `${frontier.id} moved between requests ${i - 1} and ${i}`);
		seen.push({ event: i, frontier: frontier.id });
	}
	return seen;
}

const NATIVE = { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true };
const WIRES = [
	{ name: "Anthropic Messages, the tool list declared again when the fold tools join", native: false, effort: false },
	{
		// Pi then marks Claude Code's identity block as well as the system prompt: four marks of its own.
		name: "signed in with a Claude subscription (an OAuth token)",
		native: false,
		effort: false,
		apiKey: "sk-ant-oat01-e2e",
	},
	{
		name: "Anthropic Messages with mid-conversation tool changes, as for current Claude models",
		native: true,
		effort: false,
	},
	{
		name: "with thinking on a model that takes its effort mid-conversation: each request ends in an effort message",
		native: true,
		effort: true,
	},
];

for (const wire of WIRES) {
	describe(`cache breakpoints of context-fold (${wire.name})`, () => {
		const held = scriptedPi(script(), {
			contextWindow: WINDOW,
			...(wire.apiKey ? { apiKey: wire.apiKey } : {}),
			settings: { compaction: { enabled: false }, ...(wire.effort ? { defaultThinkingLevel: "medium" } : {}) },
			...(wire.effort
				? { modelExtra: { reasoning: true, compat: { ...NATIVE, supportsMidConvoEffort: true } } }
				: wire.native
					? { modelExtra: { compat: NATIVE } }
					: {}),
		});
		let main: Run;
		let uncached: Run;

		before(async () => {
			const { sandbox, server } = held;
			const result = await sandbox.runPrint({
				prompt: "Run the batches.",
				extensions: ["."],
				...(wire.effort ? { args: ["--thinking", "medium"] } : {}),
				timeoutMs: RUN_TIMEOUT_MS,
			});
			main = { result, from: 0, to: server.requests.length };
			if (wire.native || wire.apiKey) return;
			// The same session once more in the same sandbox, with Pi's caching off.
			const off = await sandbox.runPrint({
				prompt: "Run the batches.",
				extensions: [NO_CACHE, "."],
				timeoutMs: RUN_TIMEOUT_MS,
			});
			uncached = { result: off, from: main.to, to: server.requests.length };
		});

		it("runs to the scripted end, folding", () => {
			assertCompleted(main, held.server.errors);
			if (wire.apiKey) {
				const system = held.server.requests[main.from].body.system;
				assert.equal(
					countMarks(system),
					2,
					`Pi marks its identity block and the prompt: ${JSON.stringify(system)}`,
				);
			}
			if (!wire.effort) return;
			for (const req of held.server.requests.slice(main.from, main.to)) {
				const last = messagesOf(req).at(-1);
				assert.ok(
					last?.role === "system" && blocksOf(last)?.length === 0,
					`request ${req.index} ends in ${req.raw.slice(-200)}`,
				);
			}
		});

		it("(a) no request carries more than four cache_control marks; Pi's system and last-block marks stay", () => {
			assertAtMostFour(held.server.requests, main);
		});

		it("(b) after a turn past the 20-block lookback, the previous request's last block carries cache_control", () => {
			assertPreviousLastMarked(held.server.requests, main);
		});

		it("(c) each fold event's request marks a tool result before its first changed message, marked the request before too", () => {
			const seen = assertEventReadsToFrontier(held.server.requests, main, wire.native);
			// The first event marks the last small result: the batches after it are what the event folds.
			assert.equal(seen[0].frontier, smallId(SMALL), `frontiers: ${JSON.stringify(seen)}`);
		});

		if (!wire.native && !wire.apiKey) {
			it("(d) with Pi's caching off (cacheRetention none) context-fold adds no cache_control", () => {
				assertCompleted(uncached, held.server.errors);
				const requests = held.server.requests.slice(uncached.from, uncached.to);
				assert.ok(foldEvents(held.server.requests, uncached).length >= 1, "the uncached run never folded");
				for (const req of requests)
					assert.equal(countMarks(req.body), 0, `request ${req.index}: ${req.raw.slice(0, 200)}`);
			});
		}
	});
}
