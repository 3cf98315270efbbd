/**
 * The `--html` page in a real browser: headless Chromium (Debian's `chromium`) loads the rendered
 * fixed report from a file; its DOM holds the charts' structure (a prompt and a cost line and a
 * scatter point per policy, the fold ticks and compaction triangles) and its screenshot is not
 * blank. Plain Pi's line is visible in both line charts although `compact-only` runs exactly under
 * it: the screenshot holds many more pixels of plain Pi's colour than the same page without that
 * line. Without a Chromium on PATH the test says so and skips.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { PI_COLOR } from "../../src/replay/charts.ts";
import { renderHtml } from "../../src/replay/html.ts";
import { domAndScreenshot, findChromium, NO_CHROMIUM, screenshot } from "./chromium.ts";
import { countPixels, decodePng, inked, near } from "./png.ts";
import { FIXED_REPORT } from "./report-fixture.ts";

const count = (html: string, pattern: RegExp): number => html.match(new RegExp(pattern.source, "g"))?.length ?? 0;
const WIDTH = 1200;
const HEIGHT = 2400;
/** Plain Pi's colour, allowing for the anti-aliasing of a line 1.4 px wide. */
const piColoured = near(PI_COLOR, 40);

/** `page` without plain Pi's line in the chart of class `chart`. */
function withoutPiLine(page: string, chart: string): string {
	const at = page.indexOf(`class="${chart}"`);
	const line = /<path class="policy reference" data-policy="pi" [^>]*><title>pi<\/title><\/path>/y;
	line.lastIndex = page.indexOf('<path class="policy reference" data-policy="pi"', at);
	const found = line.exec(page);
	assert.ok(at > 0 && found, `${chart} has plain Pi's line`);
	return page.slice(0, found.index) + page.slice(found.index + found[0].length);
}

test("headless Chromium renders the report: its structure, and plain Pi's lines visible over the peers", (t) => {
	const binary = findChromium();
	if (!binary) {
		t.skip(NO_CHROMIUM);
		return;
	}
	const dir = mkdtempSync(join(tmpdir(), "cf-html-"));
	/** The screenshot of `html`, decoded. */
	const shoot = (html: string, name: string) => {
		const page = join(dir, `${name}.html`);
		writeFileSync(page, html);
		return decodePng(screenshot(binary, pathToFileURL(page).href, WIDTH, HEIGHT));
	};
	try {
		const html = renderHtml(FIXED_REPORT);
		const page = join(dir, "report.html");
		writeFileSync(page, html);
		// The DOM and the full page's screenshot from one run of the browser.
		const { dom, png } = domAndScreenshot(binary, pathToFileURL(page).href, WIDTH, HEIGHT);
		const policies = FIXED_REPORT[0].policies;
		for (const chart of ["prompt-chart", "cost-chart", "cache-chart", "scatter"])
			assert.equal(count(dom, new RegExp(`<svg id="${chart}-0" class="${chart}"`)), 1, chart);
		for (const p of policies) {
			assert.equal(
				count(dom, new RegExp(`<path class="policy( reference)?" data-policy="${p.policy}"`)),
				2,
				p.policy,
			);
			assert.equal(count(dom, new RegExp(`<circle class="point" data-policy="${p.policy}"`)), 1, p.policy);
		}
		assert.equal(
			count(dom, /<line class="mark fold" /),
			policies.reduce((n, p) => n + p.foldEvents, 0),
		);
		assert.equal(count(dom, /<path class="mark compaction" /), 2);
		assert.ok(!/<script/i.test(dom), "the escaped session name did not become a script element");

		const full = decodePng(png);
		assert.equal(full.width, WIDTH);
		assert.equal(full.height, HEIGHT);
		const ink = countPixels(full, inked());
		assert.ok(ink > WIDTH * HEIGHT * 0.02, `only ${ink} of ${WIDTH * HEIGHT} pixels are not white`);
		const pi = countPixels(full, piColoured);
		for (const chart of ["prompt-chart", "cost-chart"]) {
			const without = countPixels(shoot(withoutPiLine(html, chart), chart), piColoured);
			// The plot is 826 px wide: a visible line leaves at least a pixel in most of its columns.
			assert.ok(pi - without > 400, `${chart}: plain Pi's line shows ${pi - without} pixels of its colour`);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
