/**
 * The `--html` renderer on a fixed report: one prompt line, one cumulative cost line and one scatter
 * point per policy; plain Pi's drawn last (over the two policies that send what it sends) in a colour
 * no other policy has; fold events as ticks and compactions as triangles in a row per policy, never
 * rings on the line; each cost line ends at the policy's cost with recalls; the scatter's figure is
 * the table's cost+recalls × pi column, and every chart names what its axes count; cache read and
 * write areas per policy; the figures table with the warming columns last; the same input gives the
 * same bytes; session and policy names are HTML-escaped; the page is self-contained (no script, no
 * external reference); and with every fold profile beside the peers, points coinciding and one far
 * right, the scatter's labels stay on the page and do not overlap; one session's scatter drawn alone
 * (the docs' chart) is the page's, with its styles inside.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeHtml, PI_COLOR } from "../../src/replay/charts.ts";
import { renderHtml, scatterSvg } from "../../src/replay/html.ts";
import { FIXED_REPORT } from "./report-fixture.ts";

const count = (html: string, pattern: RegExp): number => html.match(new RegExp(pattern.source, "g"))?.length ?? 0;
const policies = FIXED_REPORT[0].policies;
const html = renderHtml(FIXED_REPORT);
/** The SVG element of `chart` (its class) in the first session. */
const svg = (chart: string): string =>
	new RegExp(`<svg id="${chart}-0" class="${chart}"[^]*?</svg>`).exec(html)?.[0] ?? "";
/** The policies of the lines in `chart`, in drawing order. */
const lines = (chart: string): string[] =>
	[...svg(chart).matchAll(/<path class="policy(?: reference)?" data-policy="([^"]+)"/g)].map((m) => m[1]);
/** The table's header cells and each policy's row of cells. */
function tableCells(page: string): { head: string[]; row: (policy: string) => string[] } {
	const cells = (tr: string): string[] => [...tr.matchAll(/<t[hd]>(.*?)<\/t[hd]>/g)].map((m) => m[1]);
	return {
		head: cells(/<thead><tr>(.*?)<\/tr><\/thead>/.exec(page)?.[1] ?? ""),
		row: (policy) => cells(new RegExp(`<tr data-policy="${policy}">(.*?)</tr>`).exec(page)?.[1] ?? ""),
	};
}

test("one prompt line, one cost line, one pair of cache areas and one scatter point per policy", () => {
	for (const chart of ["prompt-chart", "cost-chart"]) {
		assert.deepEqual([...lines(chart)].sort(), policies.map((p) => p.policy).sort(), `${chart}: one line per policy`);
	}
	assert.equal(count(html, /<circle class="point" /), policies.length);
	assert.equal(count(html, /<path class="cache-read" /), policies.length);
	assert.equal(count(html, /<path class="cache-write" /), policies.length);
	for (const p of policies) {
		assert.equal(count(html, new RegExp(`<circle class="point" data-policy="${p.policy}"`)), 1);
		assert.equal(count(html, new RegExp(`<tr data-policy="${p.policy}">`)), 1);
	}
	const line = /<path class="policy reference" data-policy="pi" d="([^"]+)"/.exec(svg("prompt-chart"))?.[1] ?? "";
	assert.equal(count(line, /[ML]/), policies[0].series.length, "one vertex per request");
});

test("plain Pi is drawn last, over the policies that coincide with it, in a colour of its own", () => {
	const d = (chart: string, policy: string): string =>
		new RegExp(`data-policy="${policy}" d="([^"]+)"`).exec(svg(chart))?.[1] ?? "";
	for (const chart of ["prompt-chart", "cost-chart"]) {
		assert.equal(lines(chart).at(-1), "pi", `${chart}: pi's line is drawn last`);
		assert.equal(d(chart, "compact-only"), d(chart, "pi"), `${chart}: compact-only runs exactly under pi`);
		assert.match(
			svg(chart),
			new RegExp(`<path class="policy reference" data-policy="pi" d="[^"]+" stroke="${PI_COLOR}"`),
		);
	}
	assert.ok(d("prompt-chart", "clear-tool-uses").startsWith(d("prompt-chart", "pi").split("L").slice(0, 3).join("L")));
	const points = [...svg("scatter").matchAll(/<circle class="point" data-policy="([^"]+)"/g)].map((m) => m[1]);
	assert.equal(points.at(-1), "pi", "pi's scatter point is drawn last too (compact-only's coincides)");
	const colored = [...html.matchAll(new RegExp(`<[^>]*(?:stroke="|fill="|background:)${PI_COLOR}[^>]*>`, "g"))];
	assert.ok(colored.length > 0);
	for (const [tag] of colored)
		assert.match(tag, /data-policy="pi"|<i style/, `only pi's elements take its colour: ${tag}`);
	const swatches = [...html.matchAll(/<i style="background:(#[0-9a-f]{6})">/g)].map((m) => m[1]);
	assert.equal(new Set(swatches).size, policies.length, "each policy its own colour");
	assert.equal(swatches[0], PI_COLOR);
});

test("fold events are ticks and compactions triangles, in a row per policy, never rings on the line", () => {
	assert.doesNotMatch(html, /<circle class="mark/);
	const prompt = svg("prompt-chart");
	const folds = policies.reduce((n, p) => n + p.foldEvents, 0);
	assert.equal(folds, 6);
	assert.equal(count(prompt, /<line class="mark fold" /), folds);
	assert.equal(count(prompt, /<line class="mark fold" data-policy="context-fold" data-request="(2|4)"/), 2);
	assert.equal(count(prompt, /<line class="mark fold" data-policy="clear-tool-uses" data-request="3"/), 1);
	assert.equal(count(prompt, /<path class="mark compaction" /), 2);
	for (const p of ["pi", "compact-only"])
		assert.equal(count(prompt, new RegExp(`<path class="mark compaction" data-policy="${p}" data-request="4"`)), 1);
	const rows = [...prompt.matchAll(/<text class="row-label"[^>]*>([^<]+)</g)].map((m) => m[1]);
	assert.deepEqual(rows, ["pi", "context-fold", "mask-last-2", "compact-only", "clear-tool-uses"], "each row named");
	assert.match(prompt, /fold events \(ticks\) and compactions \(triangles\), by policy/);
});

test("each cumulative cost line ends at the policy's cost with recalls", () => {
	const chart = svg("cost-chart");
	const zero = Number(
		/<line class="grid" x1="[^"]+" x2="[^"]+" y1="([^"]+)"[^>]*><text class="tick"[^>]*>0k</.exec(chart)?.[1],
	);
	const end = (policy: string): number => {
		const d = new RegExp(`data-policy="${policy}" d="([^"]+)"`).exec(chart)?.[1] ?? "";
		return zero - Number(d.split(",").at(-1));
	};
	const pi = policies[0].costWithRecalls;
	for (const p of policies.slice(1)) {
		const ratio = end(p.policy) / end("pi");
		assert.ok(
			Math.abs(ratio - p.costWithRecalls / pi) < 0.01,
			`${p.policy}: ${ratio} against ${p.costWithRecalls / pi}`,
		);
	}
	assert.ok(policies[1].recallCost > 0, "context-fold's line includes its recall");
});

test("the scatter's figure is the table's cost+recalls × pi, and it says how that differs from × pi", () => {
	const { head, row } = tableCells(html);
	const withRecalls = head.indexOf("cost+recalls × pi");
	const plain = head.indexOf("× pi");
	const visibility = head.indexOf("visibility");
	assert.ok(withRecalls > 0 && plain > 0);
	for (const p of policies) {
		const cells = row(p.policy);
		const label = new RegExp(`<text class="point-label" data-policy="${p.policy}"[^>]*>([^<]+)<`).exec(html)?.[1];
		assert.equal(label, `${p.policy} (${cells[withRecalls]}×, ${cells[visibility]})`);
	}
	const fold = row("context-fold");
	assert.equal(fold[withRecalls], (policies[1].costWithRecalls / policies[0].costWithRecalls).toFixed(3));
	assert.equal(fold[plain], (policies[1].cost / policies[0].cost).toFixed(3));
	assert.notEqual(fold[withRecalls], fold[plain], "a recall makes the two differ");
	assert.match(
		html,
		/The cost here includes the recalls: it is the table's cost\+recalls × pi column\. The table's × pi column leaves the recalls out/,
	);
	const cy = (p: string): number =>
		Number(new RegExp(`<circle class="point" data-policy="${p}" cx="[^"]+" cy="([^"]+)"`).exec(html)?.[1]);
	assert.ok(cy("pi") < cy("context-fold") && cy("context-fold") < cy("mask-last-2"), "higher visibility is higher up");
});

test("every chart names what its axes count, with units", () => {
	const titles = (chart: string): string[] =>
		[...svg(chart).matchAll(/<text class="axis-label"[^>]*>([^<]+)</g)].map((m) => m[1]);
	assert.deepEqual(titles("prompt-chart").slice(0, 2), [
		"request (0 = the first sent)",
		"prompt tokens per request (chars/4)",
	]);
	assert.deepEqual(titles("cost-chart"), [
		"request (0 = the first sent)",
		"cumulative cost with recalls (input-token equivalents)",
	]);
	assert.match(
		titles("cache-chart")[0],
		/^tokens read from the cache \(light\) and written to it \(dark\) per request; each strip's height is 15\.5k tokens$/,
	);
	assert.deepEqual(titles("scatter"), [
		"cost with recalls, × pi's cost with recalls (log scale) →",
		"visibility: share of the references the model made that it could still see ↑",
	]);
});

test("the figures table ends with cost with recalls × pi, the stopped refreshes, their cost and what stopping saved", () => {
	const { head, row } = tableCells(html);
	assert.deepEqual(head.slice(-4), ["cost+recalls", "cost+recalls × pi", "warm stopped", "stop saving"]);
	assert.deepEqual(row("context-fold").slice(-2), ["2 (1.5k)", "1.2k"]);
	assert.deepEqual(row("pi").slice(-3), ["1.000", "0", "0.0k"]);
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

test("one session's scatter as a standalone SVG file: the page's points and labels, its styles inside", () => {
	const file = scatterSvg(FIXED_REPORT[0]);
	assert.match(file, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" id="scatter" class="scatter" /);
	assert.match(file, /^<svg [^>]*><style>[^<]*\.point\{[^<]*<\/style><rect width="100%" height="100%" fill="#fff"\/>/);
	assert.ok(file.endsWith("</svg>\n"));
	const marks = (text: string): string[] =>
		[...text.matchAll(/<(circle class="point"|text class="point-label")[^>]*>[^<]*/g)].map((m) => m[0]);
	assert.deepEqual(marks(file), marks(svg("scatter")), "the page's scatter, point for point");
	assert.doesNotMatch(file, /\b(src|href)=|url\(|@import|<script/i, "needs nothing outside itself");
	assert.equal(file, scatterSvg(structuredClone(FIXED_REPORT[0])), "the same report gives the same bytes");
});
