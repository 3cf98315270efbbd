/**
 * The foresight floors as the report gives them, on a real session through the real Pi SDK: shares of
 * plain Pi's priced cost with recalls, the denominator of every policy's cost+recalls × pi, so that they compare
 * with the table where plain Pi compacts (their own baseline prices neither compactions nor expiry);
 * and the scheduled floor's fold events, counted without an event that folds nothing new, worked
 * out up to SCHEDULED_FLOOR_REQUESTS requests only.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runJob } from "../../src/replay/jobs.ts";
import type { ReplayPolicy } from "../../src/replay/policy-run.ts";
import { SCHEDULED_FLOOR_REQUESTS } from "../../src/replay/report.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const SESSION = new URL("../fixtures/sessions/debug-branchy.jsonl", import.meta.url).pathname;

function figures(policy: ReplayPolicy, window: number) {
	return runJob(
		{ file: SESSION, policy, price: "anthropic-5m", window, warming: true, images: "text", timeHooks: false },
		() => {},
	);
}

test("where plain Pi compacts, the floors are shares of its priced cost: below a policy's cost with recalls, priced above free", async () => {
	// In a 32k window plain Pi compacts nine times; its cache rewrites are in its cost, not in the floors' own baseline.
	const window = 32_000;
	const pi = await figures({ name: "pi", kind: "pi" }, window);
	const fold = await figures({ name: "context-fold", kind: "context-fold", settings: {} }, window);
	assert.ok(pi.compactions > 0, "plain Pi compacts here");
	assert.ok(pi.foresight !== null && pi.foresightAtBar !== null && pi.foresightScheduled !== null);
	assert.ok(
		pi.foresightScheduled.ratio >= pi.foresightAtBar,
		`folds priced cost at least what free folds do: ${pi.foresightScheduled.ratio} against ${pi.foresightAtBar}`,
	);
	// With its recalls priced, a policy pays for the model seeing everything, as the full-visibility floor does.
	const ratio = fold.costWithRecalls / pi.costWithRecalls;
	assert.ok(pi.foresight <= ratio, `the floor at full visibility (${pi.foresight}) is below ${ratio}× pi`);
});

test("the scheduled floor counts no fold event that folds nothing new", async () => {
	// An exact search outside the replay (every schedule of events over the 63 requests) reaches the
	// least cost with ten events; an eleventh, at request 28, folds no block that is sent again.
	const pi = await figures({ name: "pi", kind: "pi" }, 200_000);
	assert.equal(pi.foresightScheduled?.events, 10);
});

test("past SCHEDULED_FLOOR_REQUESTS requests the scheduled floor is left out, the other two kept", async () => {
	const session = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	const turns = SCHEDULED_FLOOR_REQUESTS + 1;
	for (let i = 0; i < turns; i++) {
		session.add(2 * i, { role: "user", content: [{ type: "text", text: `question ${i}` }] });
		session.add(2 * i + 1, {
			role: "assistant",
			content: [{ type: "text", text: `answer ${i}` }],
			stopReason: "stop",
		});
	}
	const dir = mkdtempSync(join(tmpdir(), "cf-floor-"));
	try {
		const file = join(dir, "long.jsonl");
		writeFileSync(file, session.text());
		const pi = await runJob(
			{
				file,
				policy: { name: "pi", kind: "pi" },
				price: "anthropic-5m",
				window: 200_000,
				warming: true,
				images: "text",
				timeHooks: false,
			},
			() => {},
		);
		assert.equal(pi.requests, turns);
		assert.equal(pi.foresightScheduled, null);
		assert.ok(pi.foresight !== null && pi.foresightAtBar !== null);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
