/**
 * README.md's footer and status example is what a real pi session draws today: the session of
 * scripts/status-capture.ts (the default profile, every knob at its default, under tmux against the
 * scripted model server) is run again and its block compared with the README's, so a change that
 * moves a figure of the example fails here until `npm run status-capture` rewrites it (but the
 * model's cache totals, see steady).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { blockOf } from "../../scripts/figures.ts";
import { captureStatus, steady } from "../../scripts/status-capture.ts";
import { tmuxAvailable } from "./harness/tui.ts";

const NO_TMUX = tmuxAvailable() ? false : "tmux is not installed (the footer and views exist only in the TUI)";

test("README's footer and status example is the one a real pi session draws now", { skip: NO_TMUX }, async () => {
	const { block } = await captureStatus();
	const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
	const stale = "README.md's status example is stale: run npm run status-capture";
	assert.equal(steady(blockOf(readme, "status")), steady(block), stale);
});
