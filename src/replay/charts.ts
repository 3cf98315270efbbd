/**
 * The SVG charts of the `--html` report (html.ts lays out the page). Per session: prompt tokens per
 * request, with a row under it per policy that folded or compacted (a tick per fold event, a
 * triangle per compaction); the cumulative cost with recalls over the same requests; cache reads and
 * writes per request, a strip per policy; and cost with recalls (× plain Pi's, log scale) against
 * visibility, one labelled point per policy (labels kept apart and on the page). Plain Pi is the
 * reference: its own colour, no other policy's, and drawn last, so a policy whose line coincides
 * with it cannot hide it. Every axis says what it counts and in which unit. Pure string building;
 * elements carry classes and `data-policy` / `data-request` attributes so tests can check them.
 */
import type { PolicyFigures, SessionReport } from "./report.ts";

/** Plain Pi's colour, used by nothing else on the page. */
export const PI_COLOR = "#111111";
const COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];
/** The charts' width and their left margin (room for the rows' policy names), shared so requests align. */
const WIDTH = 1000;
const LEFT = 150;
const RIGHT = 24;
const ROW = 14;

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Each policy's colour, in report order: plain Pi's own, the others the palette's in turn. */
export function policyColors(policies: readonly PolicyFigures[]): string[] {
	let next = 0;
	return policies.map((p) => (p.policy === "pi" ? PI_COLOR : COLORS[next++ % COLORS.length]));
}

/**
 * The run the cost figures are a multiple of (plain Pi, else the first), and each policy's cost with
 * recalls as a multiple of its cost with recalls: the scatter's figure and the table's column.
 */
export function recallRatios(policies: readonly PolicyFigures[]): { base: string; ratios: number[] } {
	const base = policies.find((p) => p.policy === "pi") ?? policies[0];
	const baseCost = base?.costWithRecalls || 1;
	return { base: base?.policy ?? "", ratios: policies.map((p) => p.costWithRecalls / baseCost || 1) };
}

const n1 = (v: number): string => (Math.round(v * 10) / 10).toFixed(1);
const kTok = (v: number): string => (v >= 1_000_000 ? `${+(v / 1_000_000).toFixed(2)}M` : `${+(v / 1000).toFixed(1)}k`);
const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

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

/** The policies' indices in drawing order: plain Pi last, on top of any line that coincides with it. */
function drawOrder(policies: readonly PolicyFigures[]): number[] {
	const order = policies.map((_, i) => i);
	return [...order.filter((i) => policies[i].policy !== "pi"), ...order.filter((i) => policies[i].policy === "pi")];
}

/** The x position of request `i` in the per-request charts. */
function requestScale(report: SessionReport): (i: number) => number {
	const count = Math.max(2, ...report.policies.map((p) => p.series.length));
	return (i) => LEFT + (i / (count - 1)) * (WIDTH - LEFT - RIGHT);
}

/** The request-number ticks and the x axis title, under a per-request plot whose bottom is at `y`. */
function requestAxis(report: SessionReport, y: number): string[] {
	const x = requestScale(report);
	const count = Math.max(2, ...report.policies.map((p) => p.series.length));
	return [
		...ticks(0, count - 1, 8).map(
			(t) => `<text class="tick" x="${n1(x(t))}" y="${y + 14}" text-anchor="middle">${t}</text>`,
		),
		`<text class="axis-label" x="${WIDTH - RIGHT}" y="${y + 28}" text-anchor="end">request (0 = the first sent)</text>`,
	];
}

/** Horizontal grid lines with their labels, from `lo` to `hi`, for a plot between `yOf(lo)` and `yOf(hi)`. */
function valueGrid(lo: number, hi: number, yOf: (v: number) => number, label: (v: number) => string): string[] {
	return ticks(lo, hi, 5).map(
		(t) =>
			`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${n1(yOf(t))}" y2="${n1(yOf(t))}"/><text class="tick" x="${LEFT - 6}" y="${n1(yOf(t) + 4)}" text-anchor="end">${label(t)}</text>`,
	);
}

/** One path per policy through `value(policy, request)`, plain Pi's last and marked as the reference. */
function policyLines(
	report: SessionReport,
	colors: readonly string[],
	value: (p: PolicyFigures, r: number) => number,
	yOf: (v: number) => number,
): string[] {
	const x = requestScale(report);
	return drawOrder(report.policies).map((i) => {
		const p = report.policies[i];
		const d = p.series.map((_, r) => `${r === 0 ? "M" : "L"}${n1(x(r))},${n1(yOf(value(p, r)))}`).join("");
		const kind = p.policy === "pi" ? "policy reference" : "policy";
		return `<path class="${kind}" data-policy="${escapeHtml(p.policy)}" d="${d}" stroke="${colors[i]}"><title>${escapeHtml(p.policy)}</title></path>`;
	});
}

/**
 * The rows under the prompt chart, from `top`: one per policy that folded or compacted, named on the
 * left, with a tick at each fold event and a triangle at the first request after each compaction.
 */
function eventRows(report: SessionReport, colors: readonly string[], top: number): string[] {
	const x = requestScale(report);
	const rows = report.policies.flatMap((p, i) => (p.series.some((s) => s.rewrite || s.compaction) ? [i] : []));
	if (rows.length === 0) return [];
	const out = [
		`<text class="axis-label" x="4" y="${top - 4}">fold events (ticks) and compactions (triangles), by policy</text>`,
	];
	rows.forEach((i, row) => {
		const p = report.policies[i];
		const policy = escapeHtml(p.policy);
		const mid = top + row * ROW + ROW / 2;
		out.push(
			`<text class="row-label" x="${LEFT - 6}" y="${n1(mid + 4)}" text-anchor="end">${policy}</text>`,
			`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${n1(mid)}" y2="${n1(mid)}"/>`,
		);
		p.series.forEach((s, r) => {
			const at = n1(x(r));
			if (s.rewrite)
				out.push(
					`<line class="mark fold" data-policy="${policy}" data-request="${r}" x1="${at}" x2="${at}" y1="${n1(mid - 4)}" y2="${n1(mid + 4)}" stroke="${colors[i]}"><title>${policy}: fold event at request ${r}</title></line>`,
				);
			if (s.compaction)
				out.push(
					`<path class="mark compaction" data-policy="${policy}" data-request="${r}" d="M${n1(x(r) - 5)},${n1(mid - 5)}h10l-5,10Z" fill="${colors[i]}"><title>${policy}: compaction, request ${r} the first after it</title></path>`,
				);
		});
	});
	return out;
}

/** Prompt tokens per request, one line per policy, the window when it is near, and the event rows. */
export function promptChart(report: SessionReport, id: string, colors: readonly string[]): string {
	const top = 20;
	const plot = 260;
	const events = report.policies.filter((p) => p.series.some((s) => s.rewrite || s.compaction)).length;
	const height = top + plot + 36 + (events > 0 ? 18 + events * ROW : 0) + 4;
	const peak = Math.max(1, ...report.policies.map((p) => p.peakPrompt));
	const yMax = report.window <= peak * 1.15 ? Math.max(peak, report.window) * 1.05 : peak * 1.05;
	const y = (v: number): number => top + (1 - v / yMax) * plot;
	const out: string[] = [
		`<svg id="${id}" class="prompt-chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="prompt tokens per request">`,
		...valueGrid(0, yMax, y, kTok),
		...requestAxis(report, top + plot),
		`<text class="axis-label" x="4" y="12">prompt tokens per request (chars/4)</text>`,
	];
	if (report.window <= yMax) {
		out.push(
			`<line class="window" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${n1(y(report.window))}" y2="${n1(y(report.window))}"/><text class="tick" x="${WIDTH - RIGHT}" y="${n1(y(report.window) - 4)}" text-anchor="end">window ${kTok(report.window)}</text>`,
		);
	}
	out.push(...policyLines(report, colors, (p, r) => p.series[r].prompt, y));
	out.push(...eventRows(report, colors, top + plot + 54), "</svg>");
	return out.join("\n");
}

/** The cumulative cost with recalls over the requests, one line per policy, plain Pi's on top. */
export function costChart(report: SessionReport, id: string, colors: readonly string[]): string {
	const top = 20;
	const plot = 200;
	const height = top + plot + 36;
	const totals = report.policies.map((p) => {
		let sum = 0;
		return p.series.map((s) => {
			sum += s.cost + s.recallCost;
			return sum;
		});
	});
	const max = Math.max(1, ...totals.map((t) => t[t.length - 1] ?? 0)) * 1.05;
	const y = (v: number): number => top + (1 - v / max) * plot;
	const byPolicy = new Map(report.policies.map((p, i) => [p, totals[i]]));
	return [
		`<svg id="${id}" class="cost-chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="cumulative cost with recalls">`,
		...valueGrid(0, max, y, kTok),
		...requestAxis(report, top + plot),
		`<text class="axis-label" x="4" y="12">cumulative cost with recalls (input-token equivalents)</text>`,
		...policyLines(report, colors, (p, r) => byPolicy.get(p)?.[r] ?? 0, y),
		"</svg>",
	].join("\n");
}

/** Cache reads and writes per request: a strip per policy on one scale. */
export function cacheChart(report: SessionReport, id: string, colors: readonly string[]): string {
	const strip = 64;
	const gap = 20;
	const top = 8;
	const bottom = top + report.policies.length * (strip + gap);
	const height = bottom + 36;
	const max = Math.max(1, ...report.policies.flatMap((p) => p.series.map((s) => s.read + s.write)));
	const x = requestScale(report);
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
			`<text class="row-label" x="${LEFT - 6}" y="${base - strip / 2 + 4}" text-anchor="end">${policy}</text>`,
			`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${base}" y2="${base}"/>`,
			`<path class="cache-read" data-policy="${policy}" d="M${n1(x(0))},${base}${readTop}L${last},${base}Z" fill="${colors[i]}"/>`,
			`<path class="cache-write" data-policy="${policy}" d="${writeTop}${writeBack}Z" fill="${colors[i]}"/>`,
		);
	});
	out.push(
		`<text class="axis-label" x="4" y="12">tokens read from the cache (light) and written to it (dark) per request; each strip's height is ${kTok(max)} tokens</text>`,
		...requestAxis(report, bottom),
		"</svg>",
	);
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

/** Cost with recalls as a multiple of plain Pi's (log scale) against visibility, a point per policy. */
export function scatter(report: SessionReport, id: string, colors: readonly string[]): string {
	const height = 380;
	const top = 24;
	const bottom = 40;
	const right = 160;
	const left = 64;
	const { base, ratios } = recallRatios(report.policies);
	const points = report.policies.map((p, i) => ({ p, i, ratio: ratios[i] }));
	let lo = Math.log(Math.min(...ratios, 1));
	let hi = Math.log(Math.max(...ratios, 1));
	const pad = Math.max(0.05, (hi - lo) * 0.08);
	lo -= pad;
	hi += pad;
	const minVis = Math.min(...points.map((q) => q.p.visibility), 1);
	const vLo = Math.max(0, Math.min(0.95, Math.floor((minVis - 0.01) * 50) / 50));
	const x = (ratio: number): number => left + ((Math.log(ratio) - lo) / (hi - lo)) * (WIDTH - left - right);
	const y = (v: number): number => top + (1 - (v - vLo) / (1 - vLo)) * (height - top - bottom);
	const out: string[] = [
		`<svg id="${id}" class="scatter" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="cost with recalls against visibility">`,
	];
	for (const t of ticks(vLo, 1, 5)) {
		out.push(
			`<line class="grid" x1="${left}" x2="${WIDTH - right}" y1="${n1(y(t))}" y2="${n1(y(t))}"/><text class="tick" x="${left - 6}" y="${n1(y(t) + 4)}" text-anchor="end">${percent(t)}</text>`,
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
		`<text class="axis-label" x="${WIDTH - right}" y="${height - 4}" text-anchor="end">cost with recalls, × ${escapeHtml(base)}'s cost with recalls (log scale) →</text>`,
		`<text class="axis-label" x="4" y="12">visibility: share of the references the model made that it could still see ↑</text>`,
	);
	const placed: LabelBox[] = [];
	const drawn: string[] = [];
	for (const q of [...points].sort((a, b) => y(a.p.visibility) - y(b.p.visibility) || a.i - b.i)) {
		const cx = x(q.ratio);
		const cy = y(q.p.visibility);
		const figures = `${q.ratio.toFixed(3)}×, ${percent(q.p.visibility)}`;
		const label = placeLabel(cx, cy, `${q.p.policy} (${figures})`, placed, top + 8, height - bottom + 4);
		const policy = escapeHtml(q.p.policy);
		out.push(
			`<text class="point-label" data-policy="${policy}" x="${n1(label.x)}" y="${n1(label.y)}"${label.left ? ' text-anchor="end"' : ""}>${policy} (${figures})</text>`,
		);
		drawn[q.i] =
			`<circle class="point" data-policy="${policy}" cx="${n1(cx)}" cy="${n1(cy)}" r="6" fill="${colors[q.i]}"><title>${policy}: ${q.ratio.toFixed(3)}× ${escapeHtml(base)}'s cost with recalls (${q.p.recallsNeeded} recalls), ${percent(q.p.visibility)} of references visible</title></circle>`;
	}
	out.push(...drawOrder(report.policies).map((i) => drawn[i]), "</svg>");
	return out.join("\n");
}
