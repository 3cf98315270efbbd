/**
 * The `compact-only` peer really never folds, whatever the default fold policy: on the project's
 * refactor-long session (140k window) it makes no fold event and still compacts, while the default
 * `context-fold` run of the same session folds, and its per-request costs and recalls add up to its
 * cost with recalls (what the HTML report's cumulative cost chart ends at).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { PRICE_MODELS } from "../../src/replay/price.ts";
import { policyFigures } from "../../src/replay/report.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { replayScript } from "../../src/replay/script.ts";
import { parseSessionText } from "../../src/replay/session-file.ts";

const WINDOW = 140_000;
const script = replayScript(
	parseSessionText(readFileSync(new URL("../fixtures/sessions/refactor-long.jsonl", import.meta.url), "utf8")),
);

test("compact-only makes no fold event and compacts; the default context-fold run folds", async () => {
	const only = await replayPolicy(script, { name: "compact-only", kind: "compact-only" }, { window: WINDOW });
	const onlyFigures = policyFigures(script, only, PRICE_MODELS["anthropic-5m"], true, WINDOW);
	assert.equal(onlyFigures.foldEvents, 0);
	assert.ok(onlyFigures.compactions > 0, "the window forces a compaction");
	const fold = await replayPolicy(
		script,
		{ name: "context-fold", kind: "context-fold", settings: {} },
		{ window: WINDOW },
	);
	const foldFigures = policyFigures(script, fold, PRICE_MODELS["anthropic-5m"], true, WINDOW);
	assert.ok(foldFigures.foldEvents > 0);
	// The HTML report's cumulative cost chart adds up the series: it must end at cost with recalls.
	assert.ok(foldFigures.recallsNeeded > 0, "the folded run needs recalls");
	const perRequest = foldFigures.series.reduce((c, s) => c + s.cost + s.recallCost, 0);
	assert.ok(Math.abs(perRequest - foldFigures.costWithRecalls) < 1e-6);
});
