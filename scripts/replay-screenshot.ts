/**
 * Regenerates docs/replay-report.png, the HTML report's picture in docs/replay.md and
 * docs/defaults.md: replays the project session refactor-long (test/fixtures/sessions) as the docs
 * describe it (a 140k window, anthropic-5m, idle warming; plain Pi, context-fold, compact-only,
 * mask-last-5, clear-tool-uses) through `context-fold replay --html`, and screenshots the page in
 * headless Chromium the way the browser test does (test/replay/chromium.ts), 1400 px wide (the
 * figures table is wider than the charts) and as tall as the page. The figures are the same on
 * every run but the hook and clone timings (milliseconds measured as it runs), so apart from those
 * cells the picture changes only when the report or the figures do. `npm run replay-screenshot`;
 * needs `chromium` on PATH.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { findChromium, NO_CHROMIUM, screenshot } from "../test/replay/chromium.ts";
import { decodePng, inkedExtent } from "../test/replay/png.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT = join(ROOT, "docs", "replay-report.png");
const WIDTH = 1400;
/** Taller than a one-session report: the first shot finds where the page ends. */
const PROBE_HEIGHT = 8000;
const MARGIN = 24;

const binary = findChromium();
if (!binary) {
	console.error(`replay-screenshot: ${NO_CHROMIUM}`);
	process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), "cf-replay-screenshot-"));
try {
	const page = join(dir, "report.html");
	const replay = spawnSync(
		process.execPath,
		[
			join(ROOT, "bin", "context-fold.mjs"),
			"replay",
			join(ROOT, "test", "fixtures", "sessions", "refactor-long.jsonl"),
			"--window",
			"140000",
			"--price",
			"anthropic-5m",
			"--warming",
			"idle",
			"--policy",
			"pi,context-fold,compact-only,mask-last-5,clear-tool-uses",
			"--quiet",
			"--html",
			page,
		],
		{ encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
	);
	if (replay.status !== 0) throw new Error(`the replay failed (${replay.status})`);
	process.stdout.write(replay.stdout);
	const url = pathToFileURL(page).href;
	const { lastRow, lastColumn } = inkedExtent(decodePng(screenshot(binary, url, WIDTH, PROBE_HEIGHT)));
	if (lastRow < 0 || lastRow >= PROBE_HEIGHT - 1 || lastColumn >= WIDTH - 1)
		throw new Error(`the page does not fit ${WIDTH} px wide and ${PROBE_HEIGHT} px tall`);
	const height = lastRow + 1 + MARGIN;
	writeFileSync(OUT, screenshot(binary, url, WIDTH, height));
	console.log(`wrote ${OUT} (${WIDTH} × ${height})`);
} finally {
	rmSync(dir, { recursive: true, force: true });
}
