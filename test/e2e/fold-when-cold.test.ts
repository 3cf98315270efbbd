/**
 * Fold-when-cold through real `pi`, under both profiles: with a least event size no ordinary event can
 * reach (the ladder's `step`, the economic policy's `minEvent`, 4k against 2–3k foldable), a
 * session past the threshold never folds while its cache is warm, and folds on the first request
 * after an idle gap past the cache lifetime (where the economic policy asks half of `minEvent`). The gap is simulated: the scripted server forgets its cache
 * (`expireCache()`) and the session file's recorded times move ten minutes back before `pi` resumes
 * it (harness/idle-gap.ts), so the branch's response times read as long past on the wall clock.
 * The lifetime is the model's own when none is saved: a model declaring Pi's `promptCache` tiers, run
 * with PI_CACHE_RETENTION=long (in the process environment, or in the provider's stored credential,
 * which Pi prefers), keeps its cache an hour, so a ten-minute gap folds nothing and a seventy-minute
 * one folds.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BATCH_PROMPT, batchSandbox } from "./harness/batches.ts";
import { ANY_TAG } from "./harness/fold-wire.ts";
import { ageSession } from "./harness/idle-gap.ts";
import { type ModelServer, serializePrompt } from "./harness/model-server.ts";
import { E2E_PROVIDER, type PiSandbox } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const BATCHES = 8;
const RUN_TIMEOUT_MS = 90_000;

const PROFILES: Record<string, Record<string, unknown>> = {
	ladder: { policy: "ladder", foldAt: 0.3, step: 0.9, budgetFraction: 0.95, tail: 1000 },
	economic: {
		policy: "economic",
		foldFrom: 4_800,
		minEvent: 4_000,
		hotTail: 1000,
		coldTail: 1000,
		budgetFraction: 0.95,
		backstopAt: 16_000,
	},
};

/**
 * Runs one `pi -p` turn in `sandbox` (resuming its session, idle for `idleMinutes`, unless `resume`
 * is false) and records where its requests end.
 */
async function runInto(
	sandbox: PiSandbox,
	server: ModelServer,
	splits: number[],
	prompt: string,
	env: Record<string, string>,
	resume = true,
	idleMinutes = 0,
): Promise<void> {
	if (idleMinutes > 0) {
		const file = await sandbox.latestSessionFile();
		assert.ok(file, "a session to resume");
		await ageSession(file, idleMinutes * 60_000);
	}
	const result = await sandbox.runPrint({
		prompt,
		extensions: ["."],
		continueSession: resume,
		env,
		timeoutMs: RUN_TIMEOUT_MS,
	});
	assert.equal(result.code, 0, result.stderr);
	splits.push(server.requests.length);
}

/** Whether each of the server's requests from `from` to `to` carried a folded block. */
const foldedIn = (server: ModelServer, from: number, to: number): boolean[] =>
	server.requests.slice(from, to).map((req) => ANY_TAG.test(serializePrompt(req)));

for (const [profile, knobs] of Object.entries(PROFILES))
	describe(`fold when the cache is cold anyway (${profile})`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;
		let splits: number[] = [];

		before(async () => {
			({ server, sandbox } = await batchSandbox({
				count: BATCHES,
				contextWindow: WINDOW,
				settings: {
					compaction: { enabled: false },
					"context-fold": knobs,
				},
			}));
			const run = (prompt: string, resume = true, idleMinutes = 0) =>
				runInto(sandbox, server, splits, prompt, {}, resume, idleMinutes);
			splits = [0];
			await run(BATCH_PROMPT, false);
			await run("Anything else?");
			server.expireCache();
			await run("Back after lunch.", true, 10);
		});
		after(async () => {
			await server?.close();
			await sandbox?.cleanup();
		});

		const folded = (from: number, to: number) => foldedIn(server, from, to);

		it("past the threshold with a warm cache and less than a step maskable: no fold event", () => {
			const last = server.usages[splits[1] - 1]?.promptTokens ?? 0;
			assert.ok(last > 0.3 * WINDOW, `the session reached the threshold: ${last}`);
			assert.ok(
				server.usages.slice(1, splits[2]).some((u) => (u?.cacheRead ?? 0) > 0),
				"the warm runs read from the cache",
			);
			assert.deepEqual(folded(0, splits[2]), new Array(splits[2]).fill(false));
		});

		it("after an idle gap past the cache lifetime: the first request folds", () => {
			const cold = folded(splits[2], splits[3]);
			assert.equal(cold[0], true, "the first request after the gap carries folded blocks");
			assert.equal(server.usages[splits[2]]?.cacheRead, 0, "and the cache was indeed cold");
		});
	});

for (const where of ["the process environment", "the provider's stored credential"] as const)
	describe(`fold when the cache is cold anyway, by the model's own cache lifetime (PI_CACHE_RETENTION=long in ${where})`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;
		const splits: number[] = [0];

		before(async () => {
			({ server, sandbox } = await batchSandbox({
				count: BATCHES,
				contextWindow: WINDOW,
				modelExtra: { promptCache: { short: 300, long: 3600 } },
				settings: { compaction: { enabled: false }, "context-fold": PROFILES.economic },
			}));
			// Pi's auth.json: a credential's `env` takes priority over the process environment for its provider.
			const credential = { type: "api_key", key: "e2e-fake-key", env: { PI_CACHE_RETENTION: "long" } };
			if (where !== "the process environment")
				await writeFile(join(sandbox.agentDir, "auth.json"), JSON.stringify({ [E2E_PROVIDER]: credential }));
			const env: Record<string, string> = where === "the process environment" ? { PI_CACHE_RETENTION: "long" } : {};
			const run = (prompt: string, idleMinutes: number, resume = true) =>
				runInto(sandbox, server, splits, prompt, env, resume, idleMinutes);
			await run(BATCH_PROMPT, 0, false);
			await run("Anything else?", 0);
			await run("Back after a coffee.", 10);
			server.expireCache();
			await run("Back after lunch.", 70);
		});
		after(async () => {
			await server?.close();
			await sandbox?.cleanup();
		});

		const folded = (from: number, to: number) => foldedIn(server, from, to);

		it("ten minutes idle within the model's hour: no fold event, and the cache still read", () => {
			assert.deepEqual(folded(0, splits[3]), new Array(splits[3]).fill(false));
			assert.ok((server.usages[splits[2]]?.cacheRead ?? 0) > 0, "the request after the gap read from the cache");
		});

		it("seventy minutes idle, past the hour: the first request folds", () => {
			assert.equal(folded(splits[3], splits[4])[0], true, "the first request after the gap carries folded blocks");
			assert.equal(server.usages[splits[3]]?.cacheRead, 0, "and the cache was indeed cold");
		});
	});
