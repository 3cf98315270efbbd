/**
 * The replay's figures as text: the terminal report (every session's one-line verdict, then per
 * session its settings, its table, its foresight line and each policy's dearest end, prose wrapped
 * to 100 columns) and the pieces the HTML report shares (the table's cells, the divergence lines).
 * The table is brief (what fits 100 columns) or, with `--wide`, every column.
 */
import { barLoss, type PolicyFigures, type SessionReport } from "./report.ts";

/** How many times the replay could not follow the recording, over every kind. */
function divergenceCount(figures: PolicyFigures): number {
	return Object.values(figures.divergences).reduce((n, c) => n + c, 0);
}

/**
 * `text` with its control characters (ESC, BEL, …; line breaks too) written as `\u001b`: a kind can
 * hold a recording's own strings (a part's type, a role), which must not drive the terminal.
 */
export function inert(text: string): string {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped
	return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * One line per way the replays diverged, naming each kind with its count, and the policies whose
 * replay diverged so ("every policy" when all of several did).
 */
export function divergenceLines(figures: readonly PolicyFigures[]): string[] {
	const byKinds = new Map<string, string[]>();
	for (const f of figures) {
		const kinds = Object.entries(f.divergences).filter(([, c]) => c > 0);
		if (kinds.length === 0) continue;
		const text = kinds.map(([kind, c]) => `${inert(kind)} ×${c}`).join(", ");
		byKinds.set(text, [...(byKinds.get(text) ?? []), f.policy]);
	}
	return [...byKinds].map(
		([text, policies]) =>
			`${policies.length === figures.length && policies.length > 1 ? "every policy" : policies.join(", ")} diverged: ${text}`,
	);
}

const k = (n: number): string => `${(n / 1000).toFixed(1)}k`;
const ms = (n: number | null): string => (n === null ? "-" : n.toFixed(2));

/**
 * One column of the figures table: its header, its cell for a policy (given plain Pi's figures where
 * the table has them), and whether the brief table shows it: always, or (`"when-nonzero"`) while a
 * policy's cell reads other than 0.
 */
interface Column {
	head: string;
	cell: (f: PolicyFigures, pi: PolicyFigures | undefined) => string;
	brief?: true | "when-nonzero";
}

const COLUMNS: readonly Column[] = [
	{ head: "policy", cell: (f) => f.policy, brief: true },
	{
		head: "requests",
		cell: (f) => (f.summaryRequests > 0 ? `${f.requests} (${f.summaryRequests} summary)` : String(f.requests)),
	},
	{ head: "divergences", cell: (f) => String(divergenceCount(f)) },
	{ head: "advisories", cell: (f) => String(f.advisories) },
	{ head: "Σ prompt", cell: (f) => k(f.promptTokens) },
	{ head: "peak", cell: (f) => k(f.peakPrompt) },
	{ head: "overflow", cell: (f) => String(f.overflowRejections), brief: "when-nonzero" },
	{ head: "compactions", cell: (f) => String(f.compactions), brief: true },
	{ head: "cache read", cell: (f) => k(f.cacheRead) },
	{ head: "cache write", cell: (f) => k(f.cacheWrite) },
	{ head: "cost", cell: (f) => k(f.cost) },
	{ head: "× pi", cell: (f) => (f.costRatio === null ? "-" : f.costRatio.toFixed(3)), brief: true },
	{ head: "fold events", cell: (f) => String(f.foldEvents), brief: true },
	{ head: "rewrite cost", cell: (f) => k(f.rewriteCost) },
	{ head: "hook p50/p99 ms", cell: (f) => `${ms(f.hookMsP50)}/${ms(f.hookMsP99)}` },
	{ head: "clone p50 ms", cell: (f) => ms(f.cloneMsP50) },
	{ head: "visibility", cell: (f) => `${(f.visibility * 100).toFixed(1)}%`, brief: true },
	{ head: "recalls", cell: (f) => String(f.recallsNeeded), brief: true },
	{ head: "cost+recalls", cell: (f) => k(f.costWithRecalls) },
	{
		head: "cost+recalls × pi",
		cell: (f, pi) => (pi && pi.costWithRecalls > 0 ? (f.costWithRecalls / pi.costWithRecalls).toFixed(3) : "-"),
	},
	{ head: "warm stopped", cell: (f) => (f.warmStopped > 0 ? `${f.warmStopped} (${k(f.warmStoppedCost)})` : "0") },
	{ head: "stop saving", cell: (f) => k(f.warmStopSaving) },
];

/**
 * The table's header and one row of formatted cells per policy: every column (the HTML table and the
 * terminal's `--wide`), or the brief selection that fits a 100-column terminal.
 */
export function tableCells(
	figures: readonly PolicyFigures[],
	columns: "all" | "brief" = "all",
): { head: string[]; rows: string[][] } {
	const pi = figures.find((f) => f.policy === "pi");
	const shown =
		columns === "all"
			? COLUMNS
			: COLUMNS.filter((c) => c.brief === true || (c.brief && figures.some((f) => c.cell(f, pi) !== "0")));
	return { head: shown.map((c) => c.head), rows: figures.map((f) => shown.map((c) => c.cell(f, pi))) };
}

/** The width the terminal report keeps its lines to (the brief table, the prose under it). */
const REPORT_COLUMNS = 100;

/** `text` wrapped between words to lines of at most `width` characters (a longer word stays whole). */
export function wrap(text: string, width = REPORT_COLUMNS): string {
	const lines: string[] = [];
	for (const word of text.split(" ")) {
		const last = lines.length - 1;
		if (last >= 0 && lines[last].length + 1 + word.length <= width) lines[last] += ` ${word}`;
		else lines.push(word);
	}
	return lines.join("\n");
}

/**
 * The terminal table of one session's figures (the brief columns, or with `wide` every one), and
 * under it each divergence by kind and the advisories the replayed extension gave, wrapped to 100
 * columns.
 */
export function table(figures: readonly PolicyFigures[], wide = false): string {
	const { head, rows } = tableCells(figures, wide ? "all" : "brief");
	const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
	const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
	return [
		line(head),
		`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
		...rows.map(line),
		...[...divergenceLines(figures), ...advisoryLine(figures)].map((l) => wrap(l)),
	].join("\n");
}

/**
 * One line naming each policy whose extension gave the replayed session's user notices, with their
 * count (none when no policy did): they were advice to that user, so the replay counts them instead of
 * printing them.
 */
function advisoryLine(figures: readonly PolicyFigures[]): string[] {
	const given = figures.filter((f) => f.advisories > 0);
	return given.length === 0
		? []
		: [
				`advisories from the replayed extension (counted, not shown): ${given.map((f) => `${f.policy} ×${f.advisories}`).join(", ")}`,
			];
}

/**
 * The run a session's verdict speaks for: context-fold under its default profile, else the first
 * run of another profile, else the first run that is not plain Pi (none when only Pi ran).
 */
function verdictRun(figures: readonly PolicyFigures[]): PolicyFigures | undefined {
	return (
		figures.find((f) => f.policy === "context-fold") ??
		figures.find((f) => f.policy.startsWith("context-fold:")) ??
		figures.find((f) => f.policy !== "pi")
	);
}

const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

/** The divergence that counts the recorded replies a run never asked for (run.ts counts it, the verdict names it). */
export const NOT_REQUESTED = "recorded replies not requested";

/** The divergence that counts the recorded replies before a broken parent link, off the branch replayed (likewise). */
export const CUT_OFF = "recorded replies before a missing entry, off the branch Pi replays";

/**
 * A session's verdict in one line: what the default context-fold run cost as a multiple of plain
 * Pi's, the share of references the model could still see (plain Pi's beside it) and the recalls
 * that implies, and how many recorded replies either run never asked for (a replay cut short speaks
 * only for its part). Without a `pi` run it gives the cost itself; with nothing but `pi`, no line.
 */
export function verdict(report: SessionReport): string | undefined {
	const run = verdictRun(report.policies);
	if (!run) return undefined;
	const pi = report.policies.find((f) => f.policy === "pi");
	const cost =
		run.costRatio === null
			? `cost ${k(run.cost)} input-token equivalents`
			: `${run.costRatio.toFixed(2)}× plain Pi's cost`;
	const seen = `${percent(run.visibility)} of references visible${pi ? ` (plain Pi ${percent(pi.visibility)})` : ""}`;
	const lost = Math.max(
		...[run, pi].map((f) => (f?.divergences?.[NOT_REQUESTED] ?? 0) + (f?.divergences?.[CUT_OFF] ?? 0)),
	);
	const cut = lost > 0 ? `; ${lost} recorded repl${lost === 1 ? "y" : "ies"} not replayed (see the divergences)` : "";
	return `${report.session}: ${run.policy} ${cost}, ${seen}, ${run.recallsNeeded} recall${run.recallsNeeded === 1 ? "" : "s"}${cut}`;
}

/** A report's name and the settings it was replayed under, for the line above its table. */
export function settingsLine(r: SessionReport): string {
	return `${r.session} — ${r.price}, warming ${r.warming ? "idle" : "off"}, window ${r.window}, tokens = chars/4${r.images === "size" ? ", images by pixel size" : ""}`;
}

/** The foresight floor with rewrites priced, as the end of the foresight line (nothing without it). */
function scheduled(floor: PolicyFigures["foresightScheduled"]): string {
	return floor
		? `; ${floor.ratio.toFixed(3)}× so with rewrites priced (${floor.events} fold events at the best times)`
		: "";
}

/**
 * The terminal report: the verdict line of every session first, then each session's settings, its
 * table (brief, or every column when `wide`), its foresight line and each policy's dearest end (see
 * dearestCut), prose wrapped to 100 columns.
 */
export function report(reports: readonly SessionReport[], wide = false): string {
	const out: string[] = [];
	for (const r of reports) {
		const line = verdict(r);
		if (line !== undefined) out.push(line);
	}
	for (const r of reports) {
		// A blank line between the verdict lines, or the table before, and each table; none at the top.
		if (out.length > 0) out.push("");
		out.push(wrap(settingsLine(r)), table(r.policies, wide));
		const pi = r.policies.find((f) => f.foresight !== null);
		if (pi?.foresight != null && pi.foresightAtBar != null)
			out.push(
				wrap(
					`foresight (× pi's cost+recalls): ${pi.foresight.toFixed(3)}× at full visibility, ${pi.foresightAtBar.toFixed(3)}× leaving ${barLoss(pi.references)} of ${pi.references} references unseen (each block folded right after its last use, rewrites free)${scheduled(pi.foresightScheduled)}`,
				),
			);
		const cuts = r.policies.flatMap((f) =>
			f.dearestCut === null ? [] : [`${f.policy} ${f.dearestCut.ratio.toFixed(3)}× after ${f.dearestCut.turns}`],
		);
		if (cuts.length > 0)
			out.push(
				wrap(
					`dearest end (had the session ended after that many turns, cost with recalls × plain Pi's): ${cuts.join(", ")}`,
				),
			);
	}
	return `${out.join("\n")}\n`;
}
