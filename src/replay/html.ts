/**
 * The `--html` report: one self-contained page (inline CSS and SVG, no script, no external asset)
 * per replay. Each session gets a legend, the charts of charts.ts (prompt tokens per request with
 * each policy's fold events and compactions in a row under it, cumulative cost with recalls, cache
 * reads and writes per request, cost with recalls against visibility), a note above each saying
 * what it shows, and the figures table with the scatter's figure as a column (cost with recalls ×
 * plain Pi's beside cost × plain Pi's) and each kind of divergence (where the replay could not
 * follow the recording) under it. Plain Pi is the reference throughout: its own colour, drawn on
 * top. Also one session's scatter alone, as a standalone SVG file (`scatterSvg`, the docs' chart).
 * Pure string building: the same reports give the same bytes.
 */
import { cacheChart, costChart, escapeHtml, policyColors, promptChart, recallRatios, scatter } from "./charts.ts";
import type { PolicyFigures, SessionReport } from "./report.ts";
import { divergenceLines, tableCells } from "./report-text.ts";

function legend(policies: readonly PolicyFigures[], colors: readonly string[]): string {
	const items = policies.map(
		(p, i) =>
			`<span class="legend-item" data-policy="${escapeHtml(p.policy)}"><i style="background:${colors[i]}"></i>${escapeHtml(p.policy)}${p.policy === "pi" ? " (plain Pi, the reference)" : ""}</span>`,
	);
	return `<p class="legend">${items.join("")}</p>`;
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
.grid{stroke:#e3e3e3}.baseline{stroke:#999;stroke-dasharray:4 3}.tick,.axis-label{fill:#555}.row-label{fill:#222}
.window{stroke:#c00;stroke-dasharray:6 4}
path.policy{fill:none;stroke-width:2.6;stroke-opacity:.85;stroke-linejoin:round}path.policy.reference{stroke-width:1.4;stroke-opacity:1}
.mark.fold{stroke-width:1.5}
.cache-read{opacity:.25}.cache-write{opacity:.75}
.point{stroke:#fff;stroke-width:1.5}.point-label{fill:#222}
.legend-item{margin-right:16px;white-space:nowrap}.legend-item i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
table.figures{border-collapse:collapse;font-size:11px}table.figures td,table.figures th{border:1px solid #ddd;padding:2px 4px;text-align:right}
table.figures td:first-child,table.figures th:first-child{text-align:left}
.note{color:#555;max-width:900px}`;

const PROMPT_NOTE =
	"Plain Pi is the thin black line, drawn over the others: a policy that sends what plain Pi sends runs under it and shows as a coloured edge along it. Under the chart, a row for each policy that folded or compacted: a tick at each fold event (a request that rewrote an earlier block) and a triangle at the first request after each of its compactions.";
const COST_NOTE =
	"What the requests have cost so far, idle cache refreshes included, and each recall (one priced request per block the model needed back) at the request that needed it. Each line ends at the policy's cost+recalls in the table.";
/** The notes over the scatter and the table: both name the column the scatter's figure is. */
const scatterNote = (base: string): string =>
	`Up is better (the model could still see more of what it referred to); left is cheaper. The cost here includes the recalls: it is the table's cost+recalls × ${base} column. The table's × pi column leaves the recalls out, so the two differ wherever a policy needs more or fewer recalls than plain Pi.`;
const tableNote = (base: string): string =>
	`Costs are in input-token equivalents. × pi: cost over plain Pi's cost; cost+recalls × ${base}: cost with recalls over ${base}'s, the scatter's figure. Divergences: times the replay could not follow the recording (each kind is named under the table). Warm stopped: idle refreshes not sent because the policy's extension answered Pi's warming question with stop (in brackets, what they would have cost). Stop saving: the cost had Pi sent them, less the cost.`;

/** The rules of STYLE a scatter drawn alone uses, and a white ground (an image viewer's may be dark). */
const SCATTER_STYLE = `svg{font:11px system-ui,sans-serif;background:#fff}
.grid{stroke:#e3e3e3}.baseline{stroke:#999;stroke-dasharray:4 3}.tick,.axis-label{fill:#555}
.point{stroke:#fff;stroke-width:1.5}.point-label{fill:#222}`;

/**
 * The scatter of one session's report (cost with recalls against visibility, a point per policy) as
 * a standalone SVG file: the page's chart, in the page's colours, with its styles inside, so that it
 * renders alone (the docs show one).
 */
export function scatterSvg(report: SessionReport): string {
	const chart = scatter(report, "scatter", policyColors(report.policies));
	const open = chart.indexOf(">") + 1;
	const tag = chart.slice(0, open).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ');
	return `${tag}<style>${SCATTER_STYLE}</style><rect width="100%" height="100%" fill="#fff"/>${chart.slice(open)}\n`;
}

/** The self-contained HTML page of a replay's reports. */
export function renderHtml(reports: readonly SessionReport[]): string {
	const sections = reports.map((r, s) => {
		const meta = `${escapeHtml(r.price)}, warming ${r.warming ? "idle" : "off"}, window ${r.window}, tokens = chars/4${r.images === "size" ? ", images by pixel size" : ""}`;
		const colors = policyColors(r.policies);
		const base = escapeHtml(recallRatios(r.policies).base);
		return [
			`<section class="session" data-session="${escapeHtml(r.session)}">`,
			`<h2>${escapeHtml(r.session)}</h2>`,
			`<p class="note">${meta}</p>`,
			legend(r.policies, colors),
			"<h3>Prompt tokens per request</h3>",
			`<p class="note">${PROMPT_NOTE}</p>`,
			promptChart(r, `prompt-chart-${s}`, colors),
			"<h3>Cumulative cost with recalls</h3>",
			`<p class="note">${COST_NOTE}</p>`,
			costChart(r, `cost-chart-${s}`, colors),
			"<h3>Cache reads and writes per request</h3>",
			cacheChart(r, `cache-chart-${s}`, colors),
			"<h3>Cost with recalls against visibility</h3>",
			`<p class="note">${scatterNote(base)}</p>`,
			scatter(r, `scatter-${s}`, colors),
			"<h3>Figures</h3>",
			`<p class="note">${tableNote(base)}</p>`,
			figuresTable(r),
			"</section>",
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
