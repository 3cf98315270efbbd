/**
 * The `--html` page in a real browser: headless Chromium (Debian's `chromium`) loads the rendered
 * fixed report from a file, its DOM holds the chart's structure (one line and one scatter point per
 * policy, the fold and compaction marks), and its screenshot is not blank. Without a Chromium on
 * PATH the test says so and skips.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { renderHtml } from "../../src/replay/html.ts";
import { countInkedPixels } from "./png.ts";
import { FIXED_REPORT } from "./report-fixture.ts";

function findChromium(): string | undefined {
	for (const name of ["chromium", "chromium-browser"]) {
		const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
		if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
	}
	return undefined;
}

function chromium(binary: string, dir: string, args: string[]): string {
	const run = spawnSync(
		binary,
		[
			"--headless",
			"--no-sandbox",
			"--disable-gpu",
			"--disable-quic",
			"--no-first-run",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
			`--user-data-dir=${mkdtempSync(join(dir, "profile-"))}`,
			...args,
		],
		{ encoding: "utf8", timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
	);
	assert.equal(run.status, 0, `chromium failed: ${run.stderr}`);
	return run.stdout;
}

const count = (html: string, pattern: RegExp): number => html.match(new RegExp(pattern.source, "g"))?.length ?? 0;

test("headless Chromium renders the report: chart structure in the DOM, a screenshot that is not blank", (t) => {
	const binary = findChromium();
	if (!binary) {
		t.skip("no chromium on PATH (apt-get install chromium); the HTML report is not checked in a browser");
		return;
	}
	const dir = mkdtempSync(join(tmpdir(), "cf-html-"));
	try {
		const page = join(dir, "report.html");
		writeFileSync(page, renderHtml(FIXED_REPORT));
		const url = pathToFileURL(page).href;
		const dom = chromium(binary, dir, ["--dump-dom", url]);
		const policies = FIXED_REPORT[0].policies;
		assert.equal(count(dom, /<svg id="prompt-chart-0" class="prompt-chart"/), 1);
		for (const p of policies) {
			assert.equal(count(dom, new RegExp(`<path class="policy" data-policy="${p.policy}"`)), 1, p.policy);
			assert.equal(count(dom, new RegExp(`<circle class="point" data-policy="${p.policy}"`)), 1, p.policy);
		}
		assert.equal(
			count(dom, /<circle class="mark fold" /),
			policies.reduce((n, p) => n + p.foldEvents, 0),
		);
		assert.equal(count(dom, /<line class="mark compaction" /), 1);
		assert.ok(!/<script/i.test(dom), "the escaped session name did not become a script element");

		const shot = join(dir, "shot.png");
		chromium(binary, dir, [`--screenshot=${shot}`, "--window-size=1200,900", url]);
		const { width, height, inked } = countInkedPixels(readFileSync(shot));
		assert.equal(width, 1200);
		assert.equal(height, 900);
		assert.ok(inked > width * height * 0.02, `only ${inked} of ${width * height} pixels are not white`);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
