/**
 * The `--html` renderer on a fixed report: one line and one scatter point per policy, one mark per
 * fold event and per request after a compaction, cache read and write areas per policy, the figures
 * table with the warming columns last; the same input gives the same bytes; session and policy names
 * are HTML-escaped; the page is self-contained (no script, no external reference); and with every
 * fold profile beside the peers, points coinciding and one far right, the scatter's labels stay on
 * the page and do not overlap.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeHtml, renderHtml } from "../../src/replay/html.ts";
import { FIXED_REPORT } from "./report-fixture.ts";

const count = (html: string, pattern: RegExp): number => html.match(new RegExp(pattern.source, "g"))?.length ?? 0;
const policies = FIXED_REPORT[0].policies;

test("one prompt line, one pair of cache areas and one scatter point per policy", () => {
	const html = renderHtml(FIXED_REPORT);
	assert.equal(count(html, /<svg id="prompt-chart-0" class="prompt-chart"/), 1);
	assert.equal(count(html, /<path class="policy" /), policies.length);
	assert.equal(count(html, /<circle class="point" /), policies.length);
	assert.equal(count(html, /<path class="cache-read" /), policies.length);
	assert.equal(count(html, /<path class="cache-write" /), policies.length);
	for (const p of policies) {
		assert.equal(count(html, new RegExp(`<path class="policy" data-policy="${p.policy}"`)), 1);
		assert.equal(count(html, new RegExp(`<circle class="point" data-policy="${p.policy}"`)), 1);
		assert.equal(count(html, new RegExp(`<tr data-policy="${p.policy}">`)), 1);
	}
	const line = /<path class="policy" data-policy="pi" d="([^"]+)"/.exec(html)?.[1] ?? "";
	assert.equal(count(line, /[ML]/), policies[0].series.length, "one vertex per request");
});

test("fold events and compactions are marked once each, at their request", () => {
	const html = renderHtml(FIXED_REPORT);
	const folds = policies.reduce((n, p) => n + p.foldEvents, 0);
	assert.equal(folds, 5);
	assert.equal(count(html, /<circle class="mark fold" /), folds);
	assert.equal(count(html, /<circle class="mark fold" data-policy="context-fold" data-request="(2|4)"/), 2);
	assert.equal(count(html, /<line class="mark compaction" /), 1);
	assert.equal(count(html, /<line class="mark compaction" data-policy="pi" data-request="4"/), 1);
});

test("the scatter places cost with recalls as a ratio to pi, and visibility", () => {
	const html = renderHtml(FIXED_REPORT);
	const pi = policies[0].costWithRecalls;
	assert.match(html, new RegExp(`mask-last-2 \\(${(policies[2].costWithRecalls / pi).toFixed(3)}×, 80\\.0 %\\)`));
	assert.match(html, new RegExp(`context-fold \\(${(20_000 / pi).toFixed(3)}×, 90\\.0 %\\)`));
	const cy = (p: string): number =>
		Number(new RegExp(`<circle class="point" data-policy="${p}" cx="[^"]+" cy="([^"]+)"`).exec(html)?.[1]);
	assert.ok(cy("pi") < cy("context-fold") && cy("context-fold") < cy("mask-last-2"), "higher visibility is higher up");
});

test("the figures table ends with the stopped refreshes, their cost and what stopping saved", () => {
	const html = renderHtml(FIXED_REPORT);
	const head = /<thead><tr>(.*?)<\/tr><\/thead>/.exec(html)?.[1] ?? "";
	assert.match(head, /<th>cost\+recalls<\/th><th>warm stopped<\/th><th>stop saving<\/th>$/);
	assert.match(html, /<tr data-policy="context-fold">.*<td>2 \(1\.5k\)<\/td><td>1\.2k<\/td><\/tr>/);
	assert.match(html, /<tr data-policy="pi">.*<td>0<\/td><td>0\.0k<\/td><\/tr>/);
});

test("the same report renders to the same bytes", () => {
	assert.equal(renderHtml(FIXED_REPORT), renderHtml(structuredClone(FIXED_REPORT)));
});

test("session and policy names are escaped; the page needs nothing outside itself", () => {
	const evil = structuredClone(FIXED_REPORT);
	evil[0].policies[1].policy = `<b onmouseover="x">`;
	const html = renderHtml(evil);
	assert.ok(!html.includes("<script"), "no raw script tag from the session name");
	assert.ok(!html.includes("<b onmouseover"));
	assert.ok(html.includes("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;co&#39;.jsonl"));
	assert.ok(html.includes(`data-policy="&#60;b onmouseover=&#34;x&#34;&#62;"`));
	assert.equal(escapeHtml(`a<b>&"'`), "a&#60;b&#62;&#38;&#34;&#39;");
	assert.doesNotMatch(html, /\b(src|href)=|url\(|@import|<link|<script/i);
});

test("a report priced with --images size says so under its session's name", () => {
	assert.doesNotMatch(renderHtml(FIXED_REPORT), /images by pixel size/);
	const sized = FIXED_REPORT.map((r) => ({ ...r, images: "size" as const }));
	assert.match(renderHtml(sized), /tokens = chars\/4, images by pixel size/);
});

test("scatter labels stay on the page and apart, with every profile beside the peers", () => {
	const crowded = structuredClone(FIXED_REPORT);
	const [pi, fold] = crowded[0].policies;
	crowded[0].policies.push(
		{ ...structuredClone(fold), policy: "context-fold:economic" },
		{ ...structuredClone(fold), policy: "context-fold:ladder" },
		{ ...structuredClone(fold), policy: "context-fold:working-set", costWithRecalls: 3 * pi.costWithRecalls },
	);
	const html = renderHtml(crowded);
	const point = (name: string): number =>
		Number(new RegExp(`<circle class="point" data-policy="${name}" cx="([^"]+)"`).exec(html)?.[1]);
	const labels = [
		...html.matchAll(
			/<text class="point-label" data-policy="([^"]+)" x="([^"]+)" y="([^"]+)"( text-anchor="end")?>([^<]*)</g,
		),
	].map((m) => {
		// 11 px type: about 6.2 px a character.
		const width = m[5].length * 6.2;
		const x = Number(m[2]);
		return {
			policy: m[1],
			end: m[4] !== undefined,
			x0: m[4] ? x - width : x,
			x1: m[4] ? x : x + width,
			y: Number(m[3]),
		};
	});
	assert.equal(labels.length, crowded[0].policies.length);
	const far = labels.find((l) => l.policy === "context-fold:working-set");
	assert.ok(far?.end && far.x1 < point("context-fold:working-set"), "the rightmost point's label goes left of it");
	for (const l of labels) assert.ok(l.x0 >= 0 && l.x1 <= 1000, `${l.policy}'s label is on the page`);
	for (const [i, a] of labels.entries()) {
		for (const b of labels.slice(i + 1)) {
			const overlap = a.x0 < b.x1 && b.x0 < a.x1 && Math.abs(a.y - b.y) < 13;
			assert.ok(!overlap, `${a.policy} and ${b.policy} labels overlap`);
		}
	}
});
