/**
 * The `--html` report: one self-contained page (inline CSS and SVG, no script, no external asset)
 * per replay. Each session gets a chart of prompt tokens per request with one line per policy, fold
 * events and compactions marked; a panel per policy of cache reads and writes per request; a scatter
 * of cost with recalls (× the `pi` run, log scale) against visibility, one labelled point per policy
 * (a colour each, up to nine; labels kept apart and on the page); and the figures table, with each
 * kind of divergence (where the replay could not follow the recording) under it. Pure string
 * building: the same reports give the same bytes. Elements carry classes and `data-policy` /
 * `data-request` attributes so tests can check the structure.
 */
import { divergenceLines, type PolicyFigures, type SessionReport, tableCells } from "./report.ts";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
const WIDTH = 1000;
const LEFT = 64;
const RIGHT = 24;

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const n1 = (v: number): string => (Math.round(v * 10) / 10).toFixed(1);
const kTok = (v: number): string => (v >= 1_000_000 ? `${+(v / 1_000_000).toFixed(2)}M` : `${+(v / 1000).toFixed(1)}k`);

function niceStep(range: number, target: number): number {
	const raw = range / target;
	const p = 10 ** Math.floor(Math.log10(raw));
	const m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

function ticks(lo: number, hi: number, target: number): number[] {
	const step = niceStep(hi - lo, target);
	const out: number[] = [];
	for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v / step) * step);
	return out;
}

function color(i: number): string {
	return COLORS[i % COLORS.length];
}

function legend(policies: readonly PolicyFigures[]): string {
	const items = policies.map(
		(p, i) =>
			`<span class="legend-item" data-policy="${escapeHtml(p.policy)}"><i style="background:${color(i)}"></i>${escapeHtml(p.policy)}</span>`,
	);
	return `<p class="legend">${items.join("")}</p>`;
}

function promptChart(report: SessionReport, id: string): string {
	const height = 320;
	const top = 16;
	const bottom = 36;
	const count = Math.max(2, ...report.policies.map((p) => p.series.length));
	const peak = Math.max(1, ...report.policies.map((p) => p.peakPrompt));
	const yMax = report.window <= peak * 1.15 ? Math.max(peak, report.window) * 1.05 : peak * 1.05;
	const x = (i: number): number => LEFT + (i / (count - 1)) * (WIDTH - LEFT - RIGHT);
	const y = (v: number): number => top + (1 - v / yMax) * (height - top - bottom);
	const out: string[] = [
		`<svg id="${id}" class="prompt-chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="prompt tokens per request">`,
	];
	for (const t of ticks(0, yMax, 5)) {
		out.push(
			`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${n1(y(t))}" y2="${n1(y(t))}"/><text class="tick" x="${LEFT - 6}" y="${n1(y(t) + 4)}" text-anchor="end">${kTok(t)}</text>`,
		);
	}
	for (const t of ticks(0, count - 1, 8)) {
		out.push(`<text class="tick" x="${n1(x(t))}" y="${height - bottom + 16}" text-anchor="middle">${t}</text>`);
	}
	out.push(
		`<text class="axis-label" x="${WIDTH - RIGHT}" y="${height - 4}" text-anchor="end">request</text>`,
		`<text class="axis-label" x="4" y="12">prompt tokens</text>`,
	);
	if (report.window <= yMax) {
		out.push(
			`<line class="window" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${n1(y(report.window))}" y2="${n1(y(report.window))}"/><text class="tick" x="${WIDTH - RIGHT}" y="${n1(y(report.window) - 4)}" text-anchor="end">window ${kTok(report.window)}</text>`,
		);
	}
	report.policies.forEach((p, i) => {
		const policy = escapeHtml(p.policy);
		p.series.forEach((s, r) => {
			if (s.compaction)
				out.push(
					`<line class="mark compaction" data-policy="${policy}" data-request="${r}" x1="${n1(x(r))}" x2="${n1(x(r))}" y1="${top}" y2="${height - bottom}" stroke="${color(i)}"/>`,
				);
		});
	});
	report.policies.forEach((p, i) => {
		const d = p.series.map((s, r) => `${r === 0 ? "M" : "L"}${n1(x(r))},${n1(y(s.prompt))}`).join("");
		out.push(
			`<path class="policy" data-policy="${escapeHtml(p.policy)}" d="${d}" stroke="${color(i)}"><title>${escapeHtml(p.policy)}</title></path>`,
		);
	});
	report.policies.forEach((p, i) => {
		const policy = escapeHtml(p.policy);
		p.series.forEach((s, r) => {
			if (s.rewrite)
				out.push(
					`<circle class="mark fold" data-policy="${policy}" data-request="${r}" cx="${n1(x(r))}" cy="${n1(y(s.prompt))}" r="4" stroke="${color(i)}"><title>${policy}: fold event at request ${r}</title></circle>`,
				);
		});
	});
	out.push("</svg>");
	return out.join("\n");
}

function cacheChart(report: SessionReport, id: string): string {
	const strip = 64;
	const gap = 20;
	const top = 8;
	const height = top + report.policies.length * (strip + gap) + 16;
	const count = Math.max(2, ...report.policies.map((p) => p.series.length));
	const max = Math.max(1, ...report.policies.flatMap((p) => p.series.map((s) => s.read + s.write)));
	const x = (i: number): number => LEFT + (i / (count - 1)) * (WIDTH - LEFT - RIGHT);
	const out: string[] = [
		`<svg id="${id}" class="cache-chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="cache reads and writes per request">`,
	];
	report.policies.forEach((p, i) => {
		const base = top + i * (strip + gap) + gap + strip;
		const y = (v: number): number => base - (v / max) * strip;
		const policy = escapeHtml(p.policy);
		const last = n1(x(Math.max(0, p.series.length - 1)));
		const readTop = p.series.map((s, r) => `L${n1(x(r))},${n1(y(s.read))}`).join("");
		const writeTop = p.series.map((s, r) => `${r === 0 ? "M" : "L"}${n1(x(r))},${n1(y(s.read + s.write))}`).join("");
		const writeBack = p.series
			.map((s, r) => `L${n1(x(r))},${n1(y(s.read))}`)
			.reverse()
			.join("");
		out.push(
			`<text class="strip-label" x="${LEFT}" y="${base - strip - 4}">${policy} — cache read (light) and write (dark) per request, scale ${kTok(max)}</text>`,
			`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${base}" y2="${base}"/>`,
			`<path class="cache-read" data-policy="${policy}" d="M${n1(x(0))},${base}${readTop}L${last},${base}Z" fill="${color(i)}"/>`,
			`<path class="cache-write" data-policy="${policy}" d="${writeTop}${writeBack}Z" fill="${color(i)}"/>`,
		);
	});
	out.push("</svg>");
	return out.join("\n");
}

/** A placed scatter label: its horizontal extent and baseline. */
interface LabelBox {
	x0: number;
	x1: number;
	y: number;
}

const LABEL_LINE = 13;

/**
 * Where a scatter point's label goes: right of the point, or left of it where the right would run
 * off the page; on the baseline nearest the point's (one line down, then up, alternately) that is
 * not within a line of a placed label it would overlap, between `yMin` and `yMax` where one such is
 * free, else further down. The width is estimated (11 px type, about 6.2 px a character).
 */
function placeLabel(
	cx: number,
	cy: number,
	text: string,
	placed: LabelBox[],
	yMin: number,
	yMax: number,
): { x: number; y: number; left: boolean } {
	const width = text.length * 6.2;
	const left = cx + 10 + width > WIDTH && cx - 10 - width >= 0;
	const x0 = left ? cx - 10 - width : cx + 10;
	const free = (y: number): boolean =>
		!placed.some((b) => b.x0 < x0 + width && x0 < b.x1 && Math.abs(b.y - y) < LABEL_LINE);
	const base = cy + 4;
	const near = Array.from(
		{ length: 2 * placed.length + 1 },
		(_, k) => base + (k % 2 ? 1 : -1) * Math.ceil(k / 2) * LABEL_LINE,
	);
	let y = near.find((v) => v >= yMin && v <= yMax && free(v));
	if (y === undefined) for (y = base; !free(y); y += LABEL_LINE);
	placed.push({ x0, x1: x0 + width, y });
	return { x: left ? cx - 10 : cx + 10, y, left };
}

function scatter(report: SessionReport, id: string): string {
	const height = 380;
	const top = 20;
	const bottom = 40;
	const right = 160;
	const base = report.policies.find((p) => p.policy === "pi") ?? report.policies[0];
	const baseCost = base?.costWithRecalls || 1;
	const points = report.policies.map((p, i) => ({ p, i, ratio: p.costWithRecalls / baseCost || 1 }));
	let lo = Math.log(Math.min(...points.map((q) => q.ratio), 1));
	let hi = Math.log(Math.max(...points.map((q) => q.ratio), 1));
	const pad = Math.max(0.05, (hi - lo) * 0.08);
	lo -= pad;
	hi += pad;
	const minVis = Math.min(...points.map((q) => q.p.visibility), 1);
	const vLo = Math.max(0, Math.min(0.95, Math.floor((minVis - 0.01) * 50) / 50));
	const x = (ratio: number): number => LEFT + ((Math.log(ratio) - lo) / (hi - lo)) * (WIDTH - LEFT - right);
	const y = (v: number): number => top + (1 - (v - vLo) / (1 - vLo)) * (height - top - bottom);
	const out: string[] = [
		`<svg id="${id}" class="scatter" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="cost with recalls against visibility">`,
	];
	for (const t of ticks(vLo, 1, 5)) {
		out.push(
			`<line class="grid" x1="${LEFT}" x2="${WIDTH - right}" y1="${n1(y(t))}" y2="${n1(y(t))}"/><text class="tick" x="${LEFT - 6}" y="${n1(y(t) + 4)}" text-anchor="end">${+(t * 100).toFixed(1)} %</text>`,
		);
	}
	const xTicks: number[] = [1];
	for (const t of [0.25, 0.5, 0.8, 0.9, 0.95, 1.05, 1.1, 1.2, 1.5, 2, 3, 5, 10, 20]) {
		if (Math.log(t) >= lo && Math.log(t) <= hi && xTicks.every((k) => Math.abs(x(t) - x(k)) >= 40)) xTicks.push(t);
	}
	for (const t of xTicks) {
		out.push(
			`<line class="${t === 1 ? "grid baseline" : "grid"}" x1="${n1(x(t))}" x2="${n1(x(t))}" y1="${top}" y2="${height - bottom}"/><text class="tick" x="${n1(x(t))}" y="${height - bottom + 16}" text-anchor="middle">${t}×</text>`,
		);
	}
	out.push(
		`<text class="axis-label" x="${WIDTH - right}" y="${height - 4}" text-anchor="end">cost + recalls, × ${escapeHtml(base?.policy ?? "")} (log scale) →</text>`,
		`<text class="axis-label" x="4" y="12">visibility ↑</text>`,
	);
	const placed: LabelBox[] = [];
	for (const q of [...points].sort((a, b) => y(a.p.visibility) - y(b.p.visibility) || a.i - b.i)) {
		const cx = x(q.ratio);
		const cy = y(q.p.visibility);
		const figures = `${q.ratio.toFixed(3)}×, ${(q.p.visibility * 100).toFixed(1)} %`;
		const label = placeLabel(cx, cy, `${q.p.policy} (${figures})`, placed, top + 8, height - bottom + 4);
		const policy = escapeHtml(q.p.policy);
		out.push(
			`<circle class="point" data-policy="${policy}" cx="${n1(cx)}" cy="${n1(cy)}" r="6" fill="${color(q.i)}"><title>${policy}: ${figures}</title></circle>`,
			`<text class="point-label" data-policy="${policy}" x="${n1(label.x)}" y="${n1(label.y)}"${label.left ? ' text-anchor="end"' : ""}>${policy} (${figures})</text>`,
		);
	}
	out.push("</svg>");
	return out.join("\n");
}

function figuresTable(report: SessionReport): string {
	const { head, rows } = tableCells(report.policies);
	const th = head.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
	const trs = rows.map(
		(r, i) =>
			`<tr data-policy="${escapeHtml(report.policies[i].policy)}">${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`,
	);
	const diverged = divergenceLines(report.policies).map((l) => `<p class="note divergences">${escapeHtml(l)}</p>`);
	return [`<table class="figures"><thead><tr>${th}</tr></thead><tbody>`, ...trs, "</tbody></table>", ...diverged].join(
		"\n",
	);
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:17px;margin-top:32px}h3{font-size:14px;margin:16px 0 4px}
svg{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif}
.grid{stroke:#e3e3e3}.baseline{stroke:#999;stroke-dasharray:4 3}.tick,.axis-label,.strip-label{fill:#555}
.window{stroke:#c00;stroke-dasharray:6 4}
path.policy{fill:none;stroke-width:1.6;stroke-opacity:.85}
.mark.fold{fill:#fff;stroke-width:2}.mark.compaction{stroke-dasharray:3 3;stroke-width:1.5}
.cache-read{opacity:.3}.cache-write{opacity:.9}
.point{stroke:#fff;stroke-width:1.5}.point-label{fill:#222}
.legend-item{margin-right:16px;white-space:nowrap}.legend-item i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
table.figures{border-collapse:collapse;font-size:12px}table.figures td,table.figures th{border:1px solid #ddd;padding:3px 6px;text-align:right}
table.figures td:first-child,table.figures th:first-child{text-align:left}
.note{color:#555;max-width:900px}`;

/** The self-contained HTML page of a replay's reports. */
export function renderHtml(reports: readonly SessionReport[]): string {
	const sections = reports.map((r, s) => {
		const meta = `${escapeHtml(r.price)}, warming ${r.warming ? "idle" : "off"}, window ${r.window}, tokens = chars/4${r.images === "size" ? ", images by pixel size" : ""}`;
		const marks = `Rings mark fold events (a request that changed an earlier block); dashed vertical lines mark the first request after a compaction.`;
		return [
			`<section class="session" data-session="${escapeHtml(r.session)}">`,
			`<h2>${escapeHtml(r.session)}</h2>`,
			`<p class="note">${meta}</p>`,
			legend(r.policies),
			`<h3>Prompt tokens per request</h3>`,
			`<p class="note">${marks}</p>`,
			promptChart(r, `prompt-chart-${s}`),
			`<h3>Cache reads and writes per request</h3>`,
			cacheChart(r, `cache-chart-${s}`),
			`<h3>Cost against visibility</h3>`,
			`<p class="note">Up is better (the model could still see more of what it referred to); left is cheaper. Cost includes one priced request per recall needed.</p>`,
			scatter(r, `scatter-${s}`),
			`<h3>Figures</h3>`,
			`<p class="note">Divergences: times the replay could not follow the recording (each kind is named under the table). Warm stopped: idle refreshes not sent because the policy's extension answered Pi's warming question with stop (in brackets, what they would have cost). Stop saving: the cost had Pi sent them, less the cost.</p>`,
			figuresTable(r),
			`</section>`,
		].join("\n");
	});
	return [
		"<!DOCTYPE html>",
		'<html lang="en"><head><meta charset="utf-8">',
		"<title>context-fold replay</title>",
		`<style>${STYLE}</style>`,
		"</head><body>",
		"<h1>context-fold replay</h1>",
		'<p class="note">Replies are the recorded ones: the model cannot react to what a policy hid. Costs are in input-token equivalents.</p>',
		...sections,
		"</body></html>",
		"",
	].join("\n");
}
