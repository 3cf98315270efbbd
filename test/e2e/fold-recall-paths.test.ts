/**
 * End-to-end proof of context-fold through the real `pi` CLI (issue 3, scenario 6): a recall never
 * reads a `details.fullOutputPath` that the bash tool did not write itself.
 *
 * A fixture extension plants `fullOutputPath` on three bash results: a secret file outside the
 * temp dir, a file named like the bash tool's logs (`pi-bash-<16 hex>.log`) in another directory,
 * and a symlink with such a name inside the temp dir pointing at the secret. After those results
 * fold, grep and line recalls must serve the session's own copy, never the secret. Positive
 * control: a really truncated bash output (5001 lines, tail-truncated by the bash tool) folds, and a
 * grep recall finds a marker the truncation dropped, through the bash tool's own full-output file.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, lstatSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { analyze, FoldTracker, linesOf, type RequestFolds, resultText, unpaired } from "./harness/fold-wire.ts";
import { type CapturedRequest, type ModelServer, type Reply, startModelServer } from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox, type RunResult, readSessionFile } from "./harness/pi-runner.ts";

const WINDOW = 20_000;
const RUN_TIMEOUT_MS = 90_000;
const FIXTURE = "test/e2e/fixtures/plant-output-path.ts";
const SECRET = `SECRET-${randomUUID()}`;
const TRUNC_MARKER = `TRUNC-MARKER-${randomUUID()}`;
const MAX_FILLERS = 14;

const PLANTED = [1, 2, 3] as const;
const id = {
	plant: (k: number) => `toolu_plant_${k}`,
	trunc: "toolu_trunc",
	filler: (k: number) => `toolu_filler_${String(k).padStart(2, "0")}`,
	secretGrep: "toolu_recall_secret_grep",
	secretLines: "toolu_recall_secret_lines",
	truncGrep: "toolu_recall_trunc_grep",
	truncLines: "toolu_recall_trunc_lines",
};

function plantCommand(k: number, path: string): string {
	return `for i in $(seq 1 400); do echo "plant ${k} line $i ok"; done #plant=${path}`;
}

describe("recall_folded ignores a planted fullOutputPath", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let run: RunResult;
	let folds: RequestFolds[] = [];
	/** Planted paths, by plant number: secret outside tmp, look-alike elsewhere, look-alike symlink in tmp. */
	const planted = new Map<number, string>();

	const script = () => {
		const tracker = new FoldTracker();
		return (req: CapturedRequest): Reply => {
			const f = tracker.observe(req);
			if (req.index > 40) return { text: "guard: too many requests" };
			const has = (callId: string) => f.results.some((r) => r.id === callId);
			const call = (callId: string, name: string, args: Record<string, unknown>): Reply => ({
				toolCalls: [{ id: callId, name, args }],
			});
			for (const k of PLANTED) {
				if (!has(id.plant(k))) return call(id.plant(k), "bash", { command: plantCommand(k, planted.get(k)!) });
			}
			if (!has(id.trunc)) return call(id.trunc, "bash", { command: `echo "${TRUNC_MARKER}"; seq 1 5000` });
			const targets = [...PLANTED.map(id.plant), id.trunc];
			const codes = targets.map((t) => tracker.codes.get(t));
			if (codes.some((c) => c === undefined)) {
				for (let k = 1; k <= MAX_FILLERS; k++) {
					if (!has(id.filler(k))) {
						return call(id.filler(k), "bash", {
							command: `for i in $(seq 1 400); do echo "filler ${k} line $i ok"; done`,
						});
					}
				}
				return { text: "the planted results never folded" };
			}
			const plantedCodes = codes.slice(0, PLANTED.length) as string[];
			const truncCode = codes[PLANTED.length]!;
			if (!has(id.secretGrep)) return call(id.secretGrep, "recall_folded", { codes: plantedCodes, grep: SECRET });
			if (!has(id.secretLines)) return call(id.secretLines, "recall_folded", { codes: plantedCodes, lines: "1-2" });
			if (!has(id.truncGrep)) return call(id.truncGrep, "recall_folded", { codes: [truncCode], grep: TRUNC_MARKER });
			if (!has(id.truncLines)) return call(id.truncLines, "recall_folded", { codes: [truncCode], lines: "1-2" });
			return { text: "paths run done" };
		};
	};

	before(async () => {
		server = await startModelServer(script());
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: { compaction: { enabled: false } },
		});
		const secretText = `${SECRET} top secret line one\n${SECRET} top secret line two\n`;
		const secretFile = join(sandbox.root, "secret.txt");
		await writeFile(secretFile, secretText);
		const elsewhere = join(sandbox.root, "elsewhere");
		await mkdir(elsewhere);
		const lookAlike = join(elsewhere, "pi-bash-0123456789abcdef.log");
		await writeFile(lookAlike, secretText);
		const linkInTmp = join(sandbox.tmpDir, "pi-bash-fedcba9876543210.log");
		await symlink(secretFile, linkInTmp);
		planted.set(1, secretFile).set(2, lookAlike).set(3, linkInTmp);

		run = await sandbox.runPrint({
			prompt: "Run the commands, then look for the secret.",
			extensions: [".", FIXTURE],
			timeoutMs: RUN_TIMEOUT_MS,
		});
		folds = analyze(server.requests);
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	const resultOf = (callId: string): string => {
		const f = folds.find((x) => x.fresh.includes(callId));
		assert.ok(f, `no request carries the result of ${callId}`);
		return resultText(f, callId)!;
	};

	it("runs to the end with every planted result folded and the planted paths recorded", async () => {
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "paths run done", run.stderr);
		assert.deepEqual(server.errors, []);
		for (const req of server.requests) {
			assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] }, `request ${req.index}`);
		}
		for (const target of [...PLANTED.map(id.plant), id.trunc]) {
			assert.ok(
				folds.some((f) => f.folded.has(target)),
				`${target} never folded`,
			);
		}
		// The fixture did plant the paths: the session file records them on the bash results.
		const file = await sandbox.latestSessionFile();
		assert.ok(file);
		const details = new Map<string, { fullOutputPath?: string }>();
		for (const e of await readSessionFile(file)) {
			const m = e.message as
				| { role?: string; toolCallId?: string; details?: { fullOutputPath?: string } }
				| undefined;
			if (e.type === "message" && m?.role === "toolResult" && m.toolCallId)
				details.set(m.toolCallId, m.details ?? {});
		}
		for (const k of PLANTED) {
			assert.equal(details.get(id.plant(k))?.fullOutputPath, planted.get(k), `plant ${k}`);
			assert.ok(existsSync(planted.get(k)!), `planted file ${k} is missing, the test would prove nothing`);
		}
		assert.ok(lstatSync(planted.get(3)!).isSymbolicLink());
		// The truncated result names the bash tool's own log in the temp dir.
		const truncPath = details.get(id.trunc)?.fullOutputPath ?? "";
		assert.match(truncPath, /\/pi-bash-[0-9a-f]{16}\.log$/);
		assert.ok(truncPath.startsWith(sandbox.tmpDir) && existsSync(truncPath), truncPath);
	});

	it("never serves the planted file's content (grep and line recalls use the session's copy)", () => {
		const grep = resultOf(id.secretGrep);
		// The pattern is echoed back in "no line contains …"; the secret's own lines must never appear.
		assert.ok(!grep.includes("top secret"), `the secret leaked:\n${grep}`);
		assert.ok(!grep.includes("full output file"), grep);
		assert.equal(grep.split(`no line contains "${SECRET}"`).length - 1, PLANTED.length, grep);

		const slice = resultOf(id.secretLines);
		assert.ok(!slice.includes(SECRET) && !slice.includes("top secret"), `the secret leaked:\n${slice}`);
		for (const k of PLANTED) {
			assert.ok(
				linesOf(slice).includes(`1: plant ${k} line 1 ok`),
				`plant ${k} not served from the session:\n${slice}`,
			);
			assert.ok(linesOf(slice).includes(`2: plant ${k} line 2 ok`), slice);
		}
		for (const f of folds) assert.ok(!f.results.some((r) => r.text.includes("top secret")), `request ${f.index}`);
	});

	it("positive control: a real truncated bash output is recalled through the bash tool's own full-output file", () => {
		const shown = folds.find((f) => f.fresh.includes(id.trunc));
		assert.ok(shown);
		const wire = resultText(shown, id.trunc)!;
		assert.ok(!wire.includes(TRUNC_MARKER), "the marker was not dropped by the bash tool's truncation");
		assert.match(wire, /\[Showing lines \d+-5001 of 5001\. Full output: /);

		const grep = resultOf(id.truncGrep);
		assert.match(grep, /\(from the bash tool's full output file, which the fold-time sha256 does not cover\)/);
		assert.ok(linesOf(grep).includes(`1: ${TRUNC_MARKER}`), grep);

		const slice = resultOf(id.truncLines);
		assert.match(slice, /\(from the bash tool's full output file, which the fold-time sha256 does not cover\)/);
		assert.deepEqual(linesOf(slice).slice(1), [`1: ${TRUNC_MARKER}`, "2: 1"]);
	});
});
