/**
 * Regenerates the figures the docs quote, from the replay, so that prose and numbers cannot drift
 * apart: `npm run figures` replays every session of the three corpora (the project's, and the two
 * folders `../shared` holds or CONTEXTFOLD_SESSIONS / CONTEXTFOLD_SESSIONS_MORE name; it refuses,
 * writing nothing, while one is absent, since the docs' figures are over all three) and rewrites the blocks between
 * `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` in README.md and docs/defaults.md:
 * - `headline` (README): the default's cost in total and mean visibility against plain Pi;
 * - `profiles` (README): the corpus table within the README's columns, every profile beside the floor;
 * - `defaults` (README): the default's knobs, their values (the settings schema) and why;
 * - `corpus` (defaults): every session under plain Pi, its foresight floor and the three profiles;
 * - `reached` (defaults): what the default reaches against issue 24's acceptance bounds;
 * - `knobs` (defaults): the default's knobs changed one at a time;
 * - `elsewhere` (defaults): the default in a 700k and a 32k window and at the other price models.
 * The profiles' chart in docs/defaults.md (docs/profiles-codex-civitas-employer.svg, the replay
 * report's scatter for that session, every profile and peer) is drawn again with them.
 * `npm run figures -- --check` writes nothing and exits 1 when a block differs from what it renders.
 * The rendering is exported so the CI replay test can compare the docs with its own replay.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runReplay } from "../src/replay/cli.ts";
import { scatterSvg } from "../src/replay/html.ts";
import { DEFAULT_POLICIES, parseArgs } from "../src/replay/options.ts";
import type { PolicyFigures, SessionReport } from "../src/replay/report.ts";
import { type Corpus, corporaLine, listCorpora } from "../test/corpus/corpora.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The replay's settings for every figure but the `elsewhere` ones. */
export const MEASURE = { window: 140_000, price: "anthropic-5m" } as const;

/**
 * The session the docs chart every profile and peer on (where they differ most), and the chart's
 * file. Its policies are the replay's default list, in that order (which gives each its colour).
 */
export const CHART = {
	session: "codex-civitas-employer.jsonl",
	file: "docs/profiles-codex-civitas-employer.svg",
	policies: DEFAULT_POLICIES,
} as const;

/** The docs' chart from the chart session's reports, its policies run in any split over them. */
export function chartOf(reports: readonly SessionReport[]): string {
	const runs = reports.flatMap((r) => r.policies);
	const policies = CHART.policies.map((name) => {
		const run = runs.find((p) => p.policy === name);
		if (!run) throw new Error(`${CHART.session}: no ${name} run`);
		return run;
	});
	return scatterSvg({ ...reports[0], policies });
}

/** The knobs changed one at a time, with the values tried. */
const KNOB_TRIALS: readonly [string, readonly (number | string)[]][] = [
	["useWindow", [4, 6, 12]],
	["hotTail", [3000, 7500]],
	["coldTail", [4000]],
	["horizon", [14, 30]],
	["foldFrom", [30_000]],
	["minEvent", [11_200, 16_800]],
	["backstopAt", [40_000]],
];

/** The corpus sessions present (test/corpus/corpora.ts), each with its table name (`more/kimchi-user-agent`). */
export function corpusSessions(corpora: readonly Corpus[] = listCorpora()): { name: string; path: string }[] {
	return corpora.flatMap((c) =>
		c.sessions.map((s) => ({ name: `${c.name}/${basename(s.file, ".jsonl")}`, path: s.path })),
	);
}

/** The figures of `policy` in a report; throws when the replay did not run it. */
export function figuresOf(report: SessionReport, policy: string): PolicyFigures {
	const found = report.policies.find((p) => p.policy === policy);
	if (!found) throw new Error(`${report.session}: no ${policy} run`);
	return found;
}

const pct = (share: number): string => (100 * share).toFixed(1);
const ratio = (a: PolicyFigures, pi: PolicyFigures): number => a.costWithRecalls / pi.costWithRecalls;

/** A profile's cell: cost with recalls × plain Pi / visibility / recalls needed / compactions. */
export function profileCell(fold: PolicyFigures, pi: PolicyFigures): string {
	return `${ratio(fold, pi).toFixed(2)} / ${pct(fold.visibility)} % / ${fold.recallsNeeded} / ${fold.compactions}`;
}

/** Plain Pi's cell: peak prompt, visibility, compactions. */
export function piCell(pi: PolicyFigures): string {
	return `${Math.round(pi.peakPrompt / 1000)}k, ${pct(pi.visibility)} %, ${pi.compactions}`;
}

/** The foresight floor's cell: at the visibility bar, rewrites free (priced). */
export function floorCell(pi: PolicyFigures): string {
	const free = pi.foresightAtBar === null ? "–" : pi.foresightAtBar.toFixed(2);
	const priced = pi.foresightScheduled ? pi.foresightScheduled.ratio.toFixed(2) : "–";
	return `${free} (${priced})`;
}

/** Cost in total × plain Pi, and visibility against plain Pi (mean and worst, points), of `policy`. */
export function totals(reports: readonly SessionReport[], policy: string) {
	let pi = 0;
	let fold = 0;
	const deltas: { session: string; points: number; ratio: number; peak: number }[] = [];
	for (const report of reports) {
		const p = figuresOf(report, "pi");
		const f = figuresOf(report, policy);
		pi += p.costWithRecalls;
		fold += f.costWithRecalls;
		deltas.push({
			session: report.session,
			points: 100 * (f.visibility - p.visibility),
			ratio: ratio(f, p),
			peak: p.peakPrompt,
		});
	}
	const mean = deltas.reduce((sum, d) => sum + d.points, 0) / Math.max(1, deltas.length);
	const worst = deltas.reduce((a, b) => (b.points < a.points ? b : a), deltas[0]);
	return { ratio: fold / pi, mean, worst, deltas };
}

/** The table name of a report's session (`more/kimchi-user-agent`), from its file name. */
export function nameOf(report: SessionReport, names: ReadonlyMap<string, string>): string {
	return names.get(basename(report.session)) ?? basename(report.session, ".jsonl");
}

const DEFAULT = "context-fold:working-set";
/** The profiles' columns of the corpus tables, the default first. */
export const PROFILE_COLUMNS = [DEFAULT, "context-fold:economic", "context-fold:ladder"] as const;

/** The `corpus` block: one row per session, then the cost in total of each profile. */
export function corpusBlock(reports: readonly SessionReport[], names: ReadonlyMap<string, string>): string {
	const rows = [
		"| session | plain Pi: peak, visibility, compactions | foresight floor at the bar (rewrites priced) | `working-set` (default) | `economic` | `ladder` |",
		"|---|---|---|---|---|---|",
	];
	for (const report of reports) {
		const pi = figuresOf(report, "pi");
		const cells = PROFILE_COLUMNS.map((policy, i) => {
			const cell = profileCell(figuresOf(report, policy), pi);
			return i === 0 ? `**${cell}**` : cell;
		});
		rows.push(`| ${nameOf(report, names)} | ${piCell(pi)} | ${floorCell(pi)} | ${cells.join(" | ")} |`);
	}
	const total = PROFILE_COLUMNS.map((policy, i) => {
		const t = totals(reports, policy).ratio.toFixed(2);
		return i === 0 ? `**${t}**` : t;
	});
	rows.push(`| all ${reports.length}, cost in total | | | ${total.join(" | ")} |`);
	return rows.join("\n");
}

/** The README's floor cell: the foresight floor at the bar with rewrites priced. */
export function pricedFloorCell(pi: PolicyFigures): string {
	return pi.foresightScheduled ? pi.foresightScheduled.ratio.toFixed(2) : "–";
}

/** The README's cell of a profile: cost with recalls × plain Pi / visibility. */
export function shortCell(fold: PolicyFigures, pi: PolicyFigures): string {
	return `${ratio(fold, pi).toFixed(2)} / ${pct(fold.visibility)}`;
}

/**
 * The `profiles` block (README): the corpus table within the README's columns: each session's
 * plain-Pi peak and visibility, the foresight floor at the bar with rewrites priced, and each
 * profile's cost with recalls × plain Pi and visibility.
 */
export function profilesBlock(reports: readonly SessionReport[]): string {
	const rows = ["| session | plain Pi | floor | `working-set` | `economic` | `ladder` |", "|---|---|---|---|---|---|"];
	for (const report of reports) {
		const pi = figuresOf(report, "pi");
		const floor = pricedFloorCell(pi);
		const cells = PROFILE_COLUMNS.map((policy, i) => {
			const cell = shortCell(figuresOf(report, policy), pi);
			return i === 0 ? `**${cell}**` : cell;
		});
		const peak = `${Math.round(pi.peakPrompt / 1000)}k, ${pct(pi.visibility)}`;
		rows.push(`| ${basename(report.session, ".jsonl")} | ${peak} | ${floor} | ${cells.join(" | ")} |`);
	}
	const total = PROFILE_COLUMNS.map((policy, i) => {
		const t = totals(reports, policy).ratio.toFixed(2);
		return i === 0 ? `**${t}**` : t;
	});
	rows.push(`| all ${reports.length}, in total | | | ${total.join(" | ")} |`);
	return rows.join("\n");
}

/**
 * Why each of the default's knobs has its value: the reading, in a line, of its trials one at a time
 * (the `knobs` block in docs/defaults.md, where each is said in full).
 */
const KNOB_REASONS: readonly [string, string][] = [
	["useWindow", "shorter forgets what the model still uses; longer costs a short session more"],
	["hotTail", "a result stays raw for `useWindow` messages anyway; longer keeps what is done"],
	["coldTail", "text, thinking and arguments are seldom re-read; the working set keeps those"],
	["horizon", "shorter fires fewer, later events; longer, events that do not repay in time"],
	["foldFrom", "changes little: `minEvent` binds first"],
	["minEvent", "smaller: late small events cost more in recalls; larger: dearer rewrites"],
	["backstopAt", "later holds what no fold can lower for longer, at a higher cost in total"],
];

/** The `defaults` block (README): the default's knobs, their values in the settings schema, and why. */
export function defaultsBlock(defaults: Readonly<Record<string, { default?: unknown }>>): string {
	const rows = ["| knob | default | why |", "|---|---|---|"];
	for (const [knob, why] of KNOB_REASONS) rows.push(`| \`${knob}\` | ${String(defaults[knob]?.default)} | ${why} |`);
	return rows.join("\n");
}

/** The `reached` block: the default against issue 24's bounds, met or not, naming the sessions. */
export function reachedBlock(
	reports: readonly SessionReport[],
	prices: Readonly<Record<string, readonly SessionReport[]>>,
): string {
	const lines = [
		...reachedLines(reports, DEFAULT),
		...Object.entries(prices).map(([price, priced]) => priceLine(price, priced, "context-fold")),
	];
	return lines.map((line) => wrap(line, 98).replace(/\n/g, "\n  ")).join("\n");
}

/** The `reached` block's lines at the replay's own prices, for the default run as `policy` (unwrapped). */
export function reachedLines(reports: readonly SessionReport[], policy: string): string[] {
	const t = totals(reports, policy);
	const list = (ds: typeof t.deltas) =>
		ds.map((d) => `${basename(d.session, ".jsonl")} ${d.ratio.toFixed(3)}×`).join(", ");
	const short = t.deltas.filter((d) => d.peak < 100_000);
	const peaked = t.deltas.filter((d) => d.peak >= 100_000);
	return [
		`- visibility at most 5 points below plain Pi on every session (worst ${t.worst.points.toFixed(1)}, ${basename(t.worst.session, ".jsonl")}) and at most 3 on average (${t.mean.toFixed(2)}): ${met(t.worst.points >= -5 && t.mean >= -3)};`,
		`- at most 1.0× plain Pi on every session that peaks below 100k: ${met(short.every((d) => d.ratio <= 1))} (${list(short)});`,
		`- at most 0.65× on every session that peaks at 100k or more: ${met(peaked.every((d) => d.ratio <= 0.65))} (${list(peaked)}); at most 0.55× in total: ${met(t.ratio <= 0.55)} (${t.ratio.toFixed(3)}×);`,
	];
}

/** The `reached` block's line for `price`, over the default's run as `policy` at it (unwrapped). */
export function priceLine(price: string, priced: readonly SessionReport[], policy: string): string {
	const p = totals(priced, policy);
	const dearest = p.deltas.reduce((a, b) => (b.ratio > a.ratio ? b : a), p.deltas[0]);
	return `- under \`--price ${price}\`, no session above 1.0×: ${met(dearest.ratio <= 1)} (dearest ${basename(dearest.session, ".jsonl")} ${dearest.ratio.toFixed(3)}×; ${p.ratio.toFixed(3)}× in total, worst visibility ${p.worst.points.toFixed(1)}).`;
}

/** A bound's verdict as the docs print it. */
function met(ok: boolean): string {
	return ok ? "**met**" : "**not met**";
}

/** One row of the `knobs` block. */
function knobRow(knob: string, value: string, reports: readonly SessionReport[], policy: string, base: string): string {
	const t = totals(reports, policy);
	return `| ${knob} | ${base} | ${value} | ${t.ratio.toFixed(3)} | ${t.mean.toFixed(2)} / ${t.worst.points.toFixed(1)} (${basename(t.worst.session, ".jsonl")}) |`;
}

/** Words wrapped into lines of at most `width` columns (the docs' limit). */
function wrap(text: string, width = 100): string {
	const lines: string[] = [];
	let line = "";
	for (const word of text.split(/\s+/)) {
		if (line && line.length + 1 + word.length > width) {
			lines.push(line);
			line = word;
		} else line = line ? `${line} ${word}` : word;
	}
	if (line) lines.push(line);
	return lines.join("\n");
}

/** The `headline` block: README's first paragraph, with the figures of the default (run as `policy`). */
export function headlineBlock(reports: readonly SessionReport[], policy: string = DEFAULT): string {
	const t = totals(reports, policy);
	return wrap(
		`context-fold is an extension for the [Pi coding agent][pi] (1.6) that swaps old tool output in each request for short digests the model can read back, which, over ${reports.length} real sessions replayed in a 140k window at Anthropic's 5-minute cache prices, cost ${t.ratio.toFixed(2)}× what plain Pi cost in total (recalls priced) at a visibility ${(-t.mean).toFixed(2)} points below plain Pi's on average (visibility: the share of what the model referred to that its request still held; [how it was measured](docs/defaults.md)).`,
	);
}

/** Replaces the block `name` in `text`; throws when the markers are missing. */
export function withBlock(text: string, name: string, body: string): string {
	const open = `<!-- figures:${name} -->`;
	const close = `<!-- /figures:${name} -->`;
	const from = text.indexOf(open);
	const to = text.indexOf(close);
	if (from < 0 || to < from) throw new Error(`no ${open} … ${close} block`);
	return `${text.slice(0, from + open.length)}\n${body}\n${text.slice(to)}`;
}

/** The body of block `name` in `text`, or undefined. */
export function blockOf(text: string, name: string): string | undefined {
	const open = `<!-- figures:${name} -->`;
	const from = text.indexOf(open);
	const to = text.indexOf(`<!-- /figures:${name} -->`);
	return from < 0 || to < from ? undefined : text.slice(from + open.length, to).trim();
}

/** Replays `sessions` under `policies` at MEASURE's window and price, unless `extra` gives its own. */
async function replay(sessions: readonly { path: string }[], policies: string, extra: string[] = []) {
	const args = [...sessions.map((s) => s.path), "--policy", policies, "--jobs", "2", "--quiet"];
	if (!extra.includes("--window")) args.push("--window", String(MEASURE.window));
	if (!extra.includes("--price")) args.push("--price", MEASURE.price);
	return runReplay(parseArgs([...args, ...extra]), () => {});
}

async function main(): Promise<void> {
	const check = process.argv.includes("--check");
	const say = (line: string) => process.stderr.write(`${line}\n`);
	const corpora = listCorpora();
	if (corpora.some((c) => !c.present)) {
		say(
			`figures: the docs' figures are over every corpus, and one is absent; nothing ${check ? "checked" : "written"}`,
		);
		say(corporaLine(corpora));
		process.exitCode = 2;
		return;
	}
	const sessions = corpusSessions(corpora);
	const names = new Map(sessions.map((s) => [basename(s.path), s.name] as const));
	say(`figures: ${sessions.length} sessions (${corpora.map((c) => c.name).join(", ")})`);
	const reports = await replay(sessions, ["pi", ...PROFILE_COLUMNS].join(","));
	say("figures: the corpus replayed; the other prices and windows next");
	const prices: Record<string, SessionReport[]> = {};
	for (const price of ["anthropic-1h", "openai"])
		prices[price] = await replay(sessions, "pi,context-fold", ["--price", price]);
	const elsewhere: string[] = [
		"| setting | cost in total | visibility: mean / worst | dearest session |",
		"|---|---|---|---|",
	];
	for (const [label, extra] of [
		["700k window (about a real 1M)", ["--window", "700000"]],
		["32k window (Pi compacts past 15.6k)", ["--window", "32000"]],
	] as const) {
		const t = totals(await replay(sessions, "pi,context-fold", [...extra]), "context-fold");
		const dearest = t.deltas.reduce((a, b) => (b.ratio > a.ratio ? b : a), t.deltas[0]);
		elsewhere.push(
			`| ${label} | ${t.ratio.toFixed(3)} | ${t.mean.toFixed(2)} / ${t.worst.points.toFixed(1)} | ${basename(dearest.session, ".jsonl")} ${dearest.ratio.toFixed(3)}× |`,
		);
	}
	for (const [price, priced] of Object.entries(prices)) {
		const t = totals(priced, "context-fold");
		const dearest = t.deltas.reduce((a, b) => (b.ratio > a.ratio ? b : a), t.deltas[0]);
		elsewhere.push(
			`| \`--price ${price}\` | ${t.ratio.toFixed(3)} | ${t.mean.toFixed(2)} / ${t.worst.points.toFixed(1)} | ${basename(dearest.session, ".jsonl")} ${dearest.ratio.toFixed(3)}× |`,
		);
	}
	say("figures: one knob at a time next");
	const knobs = [
		"| knob | default | changed to | cost in total | visibility: mean / worst |",
		"|---|---|---|---|---|",
		knobRow("(defaults)", "", reports, DEFAULT, ""),
	];
	const defaults = JSON.parse(readFileSync(join(ROOT, "docs/settings.schema.json"), "utf8")).properties["context-fold"]
		.properties as Record<string, { default: unknown }>;
	for (const [knob, values] of KNOB_TRIALS) {
		for (const value of values) {
			const changed = await replay(sessions, "context-fold", ["--set", `${knob}=${value}`]);
			const merged = changed.map((r, i) => ({ ...r, policies: [figuresOf(reports[i], "pi"), ...r.policies] }));
			const base = String(defaults[knob]?.default);
			knobs.push(knobRow(`\`${knob}\``, String(value), merged, "context-fold", base));
		}
	}
	const blocks: [string, string, string][] = [
		["README.md", "headline", headlineBlock(reports)],
		["README.md", "profiles", profilesBlock(reports)],
		["README.md", "defaults", defaultsBlock(defaults)],
		["docs/defaults.md", "corpus", corpusBlock(reports, names)],
		["docs/defaults.md", "reached", reachedBlock(reports, prices)],
		["docs/defaults.md", "knobs", knobs.join("\n")],
		["docs/defaults.md", "elsewhere", elsewhere.join("\n")],
	];
	let stale = 0;
	const charted = sessions.findIndex((s) => basename(s.path) === CHART.session);
	if (charted >= 0) {
		const chart = chartOf(await replay([sessions[charted]], CHART.policies.join(",")));
		const path = join(ROOT, CHART.file);
		if (!existsSync(path) || readFileSync(path, "utf8") !== chart) {
			stale++;
			if (check) say(`figures: ${CHART.file} is stale`);
			else writeFileSync(path, chart);
		}
	}
	for (const file of new Set(blocks.map(([f]) => f))) {
		const path = join(ROOT, file);
		const before = readFileSync(path, "utf8");
		let after = before;
		for (const [f, name, body] of blocks) if (f === file) after = withBlock(after, name, body);
		if (after === before) continue;
		stale++;
		if (check) say(`figures: ${file} is stale`);
		else writeFileSync(path, after);
	}
	say(check ? `figures: ${stale === 0 ? "up to date" : `${stale} file(s) stale`}` : "figures: written");
	if (check && stale > 0) process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
