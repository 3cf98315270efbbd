/**
 * The cache advisories the terminal-UI suite does not raise, and the debug cache line, through real
 * `pi -p`, where each is a line on stderr:
 * - the reset flag: twelve bash batches of ~6k tokens with folding held off (the ladder's threshold at
 *   95 % of a 200k window) carry far more than a seed from /fold-handoff would, so a handoff would
 *   repay itself within two warm turns; the flag is raised once; with `debug`, each response's cache
 *   figures are logged, one line each;
 * - recall churn: once the batches fold, the model reads one code back twice, with two calls that fail
 *   (error results) in between: no churn; resumed (a new process counts afresh), it reads the code
 *   three times, and the advisory names that code, once.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { ANY_TAG, FoldTracker } from "./harness/fold-wire.ts";
import { type CapturedRequest, lastUserText, messagesOf, type Reply } from "./harness/model-server.ts";
import type { RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const RUN_TIMEOUT_MS = 120_000;

/** The stderr lines that open with `opening`. */
function linesOf(stderr: string, opening: string): string[] {
	return stderr.split("\n").filter((line) => line.startsWith(opening));
}

describe("reset flag through pi -p", () => {
	/** Twelve bash batches of 1,000 lines (~6k tokens each) in one run, then an answer. */
	const script = (req: CapturedRequest): Reply => {
		const ran = messagesOf(req).reduce((n, m) => n + (m.toolCalls?.length ?? 0), 0);
		if (ran >= 12) return { text: "batches done" };
		const command = `for i in $(seq 1 1000); do echo "reset batch ${ran + 1} line $i ok"; done`;
		return { toolCalls: [{ name: "bash", args: { command } }] };
	};
	const pi = scriptedPi(script, {
		contextWindow: 200_000,
		settings: { "context-fold": { policy: "ladder", foldAt: 0.95, debug: true } },
	});
	let run: RunResult;

	before(async () => {
		run = await pi.sandbox.runPrint({ prompt: "Run the batches.", extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
	});

	it("says once, on stderr, that a handoff would pay for itself", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "batches done");
		const flags = linesOf(run.stderr, "context-fold: reset flag: ");
		assert.equal(flags.length, 1, run.stderr);
		assert.match(
			flags[0],
			/^context-fold: reset flag: \/fold-handoff would pay for itself within 2 warm turns: this session carries ~[\d.]+k tokens per request, a fresh session seeded by \/fold-handoff at most ~[\d.]+k$/,
		);
		assert.ok(!pi.server.requests.some((req) => ANY_TAG.test(JSON.stringify(req.body.messages))), "nothing folded");
	});
	it("with debug on, logs each response's cache figures as the server reported them", () => {
		const want = pi.server.usages.map((u) => {
			assert.ok(u, "a request got an error reply");
			const hit = Math.round((100 * u.cacheRead) / (u.input + u.cacheRead + u.cacheWrite));
			return `context-fold: cache read ${u.cacheRead} · write ${u.cacheWrite} · input ${u.input}: cache read ${hit}% of the prompt`;
		});
		assert.deepEqual(linesOf(run.stderr, "context-fold: cache read "), want);
	});
});

describe("recall churn through pi -p", () => {
	const tracker = new FoldTracker();
	const BATCH = (k: number) => `toolu_churn_batch_${k}`;
	const TWICE = "Run, then recall twice.";
	const THRICE = "Recall three times.";
	/** The recalls each prompt makes, in order; `failed` ones ask for a line range that cannot be. */
	const RECALLS: Record<string, string[]> = {
		[TWICE]: ["ok_1", "failed_1", "failed_2", "ok_2"],
		[THRICE]: ["again_1", "again_2", "again_3"],
	};
	let twice: RunResult;
	let thrice: RunResult;
	let code: string | undefined;

	const script = (req: CapturedRequest): Reply => {
		const folds = tracker.observe(req);
		if (req.index > 40) return { text: "guard: too many requests" };
		const has = (id: string) => folds.results.some((r) => r.id === id);
		for (let k = 1; k <= 6; k++) {
			const command = `for i in $(seq 1 300); do echo "churn batch ${k} line $i ok"; done`;
			if (!has(BATCH(k))) return { toolCalls: [{ id: BATCH(k), name: "bash", args: { command } }] };
		}
		code ??= tracker.codes.get(BATCH(1));
		if (!code) return { text: "batch 1 never folded" };
		const prompt = lastUserText(req) ?? "";
		for (const step of RECALLS[prompt] ?? []) {
			const id = `toolu_churn_${step}`;
			const lines = step.startsWith("failed") ? "9-2" : "1-2";
			if (!has(id)) return { toolCalls: [{ id, name: "recall_folded", args: { codes: [code], lines } }] };
		}
		return { text: `done: ${prompt}` };
	};

	const pi = scriptedPi(script, { contextWindow: 20_000 });

	before(async () => {
		twice = await pi.sandbox.runPrint({ prompt: TWICE, extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
		const session = await pi.sandbox.latestSessionFile();
		assert.ok(session, "the first run wrote no session file");
		thrice = await pi.sandbox.runPrint({ prompt: THRICE, session, extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
	});

	it("two recalls that served the block and two that failed (error results) are no churn", () => {
		assert.equal(twice.code, 0, twice.stderr);
		assert.equal(twice.stdout.trim(), `done: ${TWICE}`, twice.stderr);
		assert.ok(code, "batch 1 was never folded");
		assert.deepEqual(linesOf(twice.stderr, "context-fold: recall churn: "), []);
	});

	it("three recalls of one code are churn, named once on stderr", () => {
		assert.equal(thrice.code, 0, thrice.stderr);
		assert.equal(thrice.stdout.trim(), `done: ${THRICE}`, thrice.stderr);
		const churn = linesOf(thrice.stderr, "context-fold: recall churn: ");
		assert.equal(churn.length, 1, thrice.stderr);
		// The code comes with what the block was (commands.md: wherever a fold code is shown).
		assert.ok(
			churn[0].startsWith(`context-fold: recall churn: #${code} bash: `) &&
				churn[0].endsWith(
					` tokens) was recalled 3 times; /context-fold unfold ${code} keeps it in the context, or widen the protected tail (tail)`,
				),
			churn[0],
		);
	});
});
