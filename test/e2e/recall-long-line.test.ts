/**
 * A long line of a folded block is read back whole through the real `pi` CLI: a bash result holding
 * one 43,892-character line (`seq -s, 1 9000`, minified JSON's shape) folds; its whole recall clips
 * the line and names the `lines` call that serves it whole; that call serves it in pieces of up to
 * the output cap, each naming the exact call that reads on (`lines="2@C"`), and the model, following
 * them, has read every character of the line once. The captured request bodies hold the answers.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { FoldTracker } from "./harness/fold-wire.ts";
import { type CapturedRequest, type Reply, toolResultOf } from "./harness/model-server.ts";
import type { RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const RUN_TIMEOUT_MS = 120_000;
const LINE = Array.from({ length: 9000 }, (_, i) => i + 1).join(",");
const LONG = "toolu_long_line";
const FILLERS = 14;
const filler = (k: number) => `toolu_long_filler_${k}`;
const whole = "toolu_long_whole";
const piece = (k: number) => `toolu_long_piece_${k}`;

describe("a long line of a folded block, read back whole through pi -p", () => {
	const tracker = new FoldTracker();
	/** The answer of each recall call, by call id. */
	const answers = new Map<string, string>();
	const script = (req: CapturedRequest): Reply => {
		tracker.observe(req);
		const call = (id: string, name: string, args: Record<string, unknown>): Reply => ({
			toolCalls: [{ id, name, args }],
		});
		const done = (id: string) => toolResultOf(req, id) !== undefined;
		if (!done(LONG)) return call(LONG, "bash", { command: "echo head; seq -s, 1 9000; echo tail" });
		const code = tracker.codes.get(LONG);
		if (code === undefined) {
			for (let k = 1; k <= FILLERS; k++)
				if (!done(filler(k)))
					return call(filler(k), "bash", {
						command: `for i in $(seq 1 400); do echo "filler ${k} line $i ok"; done`,
					});
			return { text: "the long line never folded" };
		}
		if (!done(whole)) return call(whole, "recall_folded", { codes: [code] });
		answers.set(whole, toolResultOf(req, whole) ?? "");
		let lines = "2";
		for (let k = 0; k < 10; k++) {
			const answer = toolResultOf(req, piece(k));
			if (answer === undefined) return call(piece(k), "recall_folded", { codes: [code], lines });
			answers.set(piece(k), answer);
			const next = /lines="(2@\d+)" reads on/.exec(answer);
			if (!next) return { text: "read the whole line" };
			lines = next[1];
		}
		return { text: "too many pieces" };
	};
	const pi = scriptedPi(script, { contextWindow: 64_000 });
	let run: RunResult;

	before(async () => {
		run = await pi.sandbox.runPrint({ prompt: "Print the numbers.", extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
	});

	it("folds the result and clips the line in a whole recall, naming the call that serves it whole", () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "read the whole line", run.stderr);
		const recalled = answers.get(whole) ?? "";
		assert.match(recalled, /^2: 1,2,3,/m);
		assert.ok(!recalled.includes(LINE), "clipped in a whole recall");
		assert.match(
			recalled,
			/1 line \(2\) is longer than 600 characters, shown clipped: lines="2" serves one line whole/,
		);
	});

	it("serves the line whole across the calls each piece names, every piece within the output cap", () => {
		const pieces = [...answers].filter(([id]) => id !== whole).map(([, answer]) => answer);
		assert.ok(pieces.length >= 2, `a line longer than the cap comes in pieces: ${pieces.length}`);
		for (const answer of pieces) assert.ok(answer.length <= 32_000, `${answer.length} characters`);
		const joined = pieces.map((answer) => /^2: (.*)$/m.exec(answer)?.[1] ?? "").join("");
		assert.equal(joined, LINE);
		assert.match(
			pieces[0],
			/characters 1-\d+ of line 2's 43892 shown: recall_folded codes=\["[0-9a-z]{8}"\] lines="2@\d+" reads on/,
		);
	});
});
