/**
 * `context-fold replay <session.jsonl…>`: parses the options, refuses (exit 2, one line) a file that is
 * not a Pi session with something to replay, replays each session under each policy, keeps one
 * progress line on a terminal's stderr, and prints on stdout a verdict line per session, then the
 * figures (a table per session that fits 100 columns, every column with `--wide`, or `--json`); with
 * `--html` it writes the self-contained report page. The policy names: `pi`, the peers, and
 * context-fold under its default profile (`context-fold`) or a named one (`context-fold:<profile>`,
 * the profiles being those the extension's `policy` setting takes); by default every profile is
 * replayed beside plain Pi and the peers. `--mine` replays the user's own newest sessions from Pi's
 * session directory instead (mine.ts finds them), plain Pi beside context-fold by default, skipping
 * with one line each one that cannot be replayed, and prints the verdict over all of them first.
 */
import { statSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { DEFAULT_CONFIG, ownVariablesIn, profilesReading, resolveConfig } from "../adapters/pi/config.ts";
import { type FoldConfig, KNOB_SCHEMAS, SETTINGS_SECTION } from "../adapters/pi/settings-schema.ts";
import { renderHtml } from "./html.ts";
import type { ImagePricing } from "./image-size.ts";
import { type ReplayJob, runJobs, sessionScript, WORKERS_RUN } from "./jobs.ts";
import { DEFAULT_LAST, findSessions, sessionLabel, totalReport } from "./mine.ts";
import { PRICE_MODELS } from "./price.ts";
import { ProgressLine } from "./progress.ts";
import { type SessionReport, withRatios } from "./report.ts";
import { report, settingsLine, table, verdict, wrap } from "./report-text.ts";
import type { ReplayPolicy } from "./run.ts";
import { readPiSession, SessionFileError } from "./session-file.ts";

/** The fold profiles, as the extension's `policy` setting names them, in alphabetical order. */
const POLICY_VALUES: readonly string[] = KNOB_SCHEMAS.policy.anyOf.map((member) => member.const).sort();

/** The policy name that replays context-fold under one profile (`context-fold:economic`). */
const PROFILE_PREFIX = "context-fold:";

/**
 * The policies replayed without `--policy`: plain Pi, context-fold under every profile (the default
 * one as plain `context-fold`, the others by name), and the peers.
 */
export const DEFAULT_POLICIES: readonly string[] = [
	"pi",
	"context-fold",
	...POLICY_VALUES.filter((p) => p !== DEFAULT_CONFIG.policy).map((p) => PROFILE_PREFIX + p),
	"compact-only",
	"mask-last-5",
	"clear-tool-uses",
];

/** The policies `--mine` replays without `--policy`: the pair its verdict compares. */
const MINE_POLICIES: readonly string[] = ["pi", "context-fold"];

/** Every profile's policy name, for the usage text and errors. */
const PROFILE_NAMES = POLICY_VALUES.map((p) => PROFILE_PREFIX + p).join(", ");

/** Words wrapped to the usage text's second column (100 characters a line). */
function column(text: string): string {
	const indent = " ".repeat(29);
	const lines: string[] = [];
	for (const word of text.split(" ")) {
		const last = lines.length - 1;
		if (last >= 0 && indent.length + lines[last].length + 1 + word.length <= 100) lines[last] += ` ${word}`;
		else lines.push(word);
	}
	return lines.join(`\n${indent}`);
}

/** The usage text. */
const USAGE = `usage: context-fold replay <session.jsonl…> [options]
       context-fold replay --mine [--last <n>] [--all-projects] [options]
  --mine                     ${column(
		`replay your own newest Pi sessions, those of the project in the current directory, from Pi's session directory (read only): the verdict over all of them, one line per session (policies: ${MINE_POLICIES.join(",")} unless --policy)`,
  )}
  --last <n>                 with --mine, the newest n sessions (default ${DEFAULT_LAST})
  --all-projects             with --mine, the newest sessions of every project
  --policy <name>[,<name>…]  ${column(
		`pi, context-fold, context-fold:<profile>, compact-only, mask-last-<N>, clear-tool-uses. context-fold runs the default profile (${DEFAULT_CONFIG.policy}, or the one --set policy=… names); ${PROFILE_NAMES} run that profile whatever --set policy says (other --set knobs apply to each) (default: ${DEFAULT_POLICIES.join(", ")})`,
  )}
  --price <model>            anthropic-5m (default), anthropic-1h, openai
  --window <tokens>          context window of the replayed model (default 200000)
  --set <key>=<value>        a context-fold knob (e.g. useWindow=6), or trigger/keep/clearAtLeast
                             for clear-tool-uses (default 100000/3/20000); repeatable
  --warming idle|off         model Pi's cache warming, each refresh sent only where Pi's rule finds
                             it pays at Claude Opus 4.5's prices (default idle; never under openai)
  --images text|size         price an image as its placeholder text (default) or by its pixel size,
                             as the price model's provider charges it
  --json                     every figure as JSON on stdout
  --wide                     every column in the table (by default the few that fit 100 columns)
  --quiet                    no progress line (there is none when stderr is not a terminal)
  --jobs <n>                 replays run at once, in worker threads (default 1: in process)
  --html <file>              also write a self-contained HTML report (charts, scatter, table)`;

/** Parsed options. */
export interface ReplayOptions {
	files: string[];
	/** `--mine`: replay the user's newest sessions (how many, of which projects) instead of `files`. */
	mine?: { last: number; allProjects: boolean };
	policies: ReplayPolicy[];
	price: string;
	window: number;
	warming: boolean;
	/** How images are priced (see ReplayJob.images). */
	images: ImagePricing;
	json: boolean;
	/** Every column in the terminal table, not only the brief ones. */
	wide: boolean;
	/** No progress line, even on a terminal. */
	quiet: boolean;
	/** The context-fold knobs given with `--set`. */
	knobs: Record<string, unknown>;
	/** Replays run at once (1: all in this thread). */
	jobs: number;
	/** Where to write the HTML report, if asked. */
	html?: string;
	/** False: no hook column (see RunOptions.timeHooks); only callers that print none set it. */
	timeHooks?: boolean;
	/** False: no foresight floors (see policyFigures); only callers that print none set it. */
	foresight?: boolean;
}

/** A command-line mistake, reported with the usage text. */
export class UsageError extends Error {}

const CLEAR_KEYS = new Set(["trigger", "keep", "clearAtLeast"]);

/** A plain decimal number (`140000`, `0.5`), as the usage text writes them; NaN for anything else (`1e5`, `0x10`, ""). */
function decimal(text: string): number {
	return /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
}

function value(text: string): unknown {
	const number = decimal(text);
	if (!Number.isNaN(number)) return number;
	if (text === "true" || text === "false") return text === "true";
	return text;
}

/** The options that take a value: each may also be written `--name=value`. */
const VALUED = new Set([
	"--policy",
	"--last",
	"--price",
	"--window",
	"--warming",
	"--set",
	"--images",
	"--html",
	"--jobs",
]);

/** `args` with every `--name=value` of an option that takes a value split in two, as `--name value`. */
function splitValues(args: readonly string[]): string[] {
	return args.flatMap((arg) => {
		const at = arg.indexOf("=");
		return at > 0 && VALUED.has(arg.slice(0, at)) ? [arg.slice(0, at), arg.slice(at + 1)] : [arg];
	});
}

/** Parses the arguments after `replay` (an option's value after a space or after `=`). */
export function parseArgs(given: readonly string[]): ReplayOptions {
	const args = splitValues(given);
	const files: string[] = [];
	let names = [...DEFAULT_POLICIES];
	let price = "anthropic-5m";
	let window = 200_000;
	let warming = true;
	let images: ImagePricing = "text";
	let json = false;
	let wide = false;
	let quiet = false;
	let html: string | undefined;
	let jobs = 1;
	let mine = false;
	let last: number | undefined;
	let allProjects = false;
	let policyGiven = false;
	const knobs: Record<string, unknown> = {};
	const clear = { trigger: 100_000, keep: 3, clearAtLeast: 20_000 };
	for (let i = 0; i < args.length; i++) {
		const arg = args[i];
		const next = (): string => {
			const v = args[++i];
			// A forgotten value would take the next option as the value (`--price --json`).
			if (v === undefined || v.startsWith("--")) throw new UsageError(`${arg} needs a value`);
			return v;
		};
		if (arg === "--policy") {
			// Spaces around a name are no part of it: the list --help prints reads "pi, context-fold, …".
			names = next()
				.split(",")
				.map((name) => name.trim());
			policyGiven = true;
		} else if (arg === "--mine") mine = true;
		else if (arg === "--last") last = decimal(next());
		else if (arg === "--all-projects") allProjects = true;
		else if (arg === "--price") price = next();
		else if (arg === "--window") window = decimal(next());
		else if (arg === "--warming") {
			const w = next();
			if (w !== "idle" && w !== "off") throw new UsageError(`--warming takes idle or off, not ${w}`);
			warming = w === "idle";
		} else if (arg === "--set") {
			const [key, ...rest] = next().split("=");
			if (!key || rest.length === 0) throw new UsageError("--set takes key=value");
			if (key === "policy" && !POLICY_VALUES.includes(rest.join("=")))
				throw new UsageError(`--set policy takes one of ${POLICY_VALUES.join(", ")}, not ${rest.join("=")}`);
			if (CLEAR_KEYS.has(key)) clear[key as keyof typeof clear] = decimal(rest.join("="));
			// Defined, not assigned: a key such as __proto__ is then named as no knob, as any other is.
			else
				Object.defineProperty(knobs, key, {
					value: value(rest.join("=")),
					enumerable: true,
					writable: true,
					configurable: true,
				});
		} else if (arg === "--images") {
			const how = next();
			if (how !== "text" && how !== "size") throw new UsageError(`--images takes text or size, not ${how}`);
			images = how;
		} else if (arg === "--json") json = true;
		else if (arg === "--wide") wide = true;
		else if (arg === "--quiet") quiet = true;
		else if (arg === "--html") {
			html = args[++i] ?? "";
			// A forgotten name would take the next argument: a session file, or an option.
			if (html === "" || html.startsWith("-")) throw new UsageError(`--html needs a file name, not "${html}"`);
		} else if (arg === "--jobs") jobs = decimal(next());
		else if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option ${arg}`);
		else files.push(arg);
	}
	// A knob the extension would refuse or not know would replay its default unseen: a sweep over
	// values would print the default's figures under each one.
	const refused = resolveConfig(knobs, {}).problems.map((problem) =>
		problem
			.replace(`settings ${SETTINGS_SECTION}.`, "--set ")
			.replace(/; using .*$/, "")
			.replace("; ignoring it", ""),
	);
	if (refused.length > 0) throw new UsageError(refused.join("\n"));
	if (mine && files.length > 0) throw new UsageError("--mine finds the sessions itself: give no session file");
	if (!mine && (last !== undefined || allProjects))
		throw new UsageError(`${last === undefined ? "--all-projects" : "--last"} goes with --mine`);
	if (last !== undefined && (!Number.isInteger(last) || last < 1))
		throw new UsageError("--last takes a whole number ≥ 1");
	if (files.length === 0 && !mine) throw new UsageError("no session file given");
	if (mine && !policyGiven) names = [...MINE_POLICIES];
	if (!Object.hasOwn(PRICE_MODELS, price)) throw new UsageError(`unknown price model ${price}`);
	if (!Number.isInteger(window) || window < 1000) throw new UsageError("--window takes a whole number ≥ 1000");
	if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError("--jobs takes a whole number ≥ 1");
	for (const [k, v] of Object.entries(clear)) {
		if (!Number.isInteger(v) || v < 0) throw new UsageError(`--set ${k} takes a whole number ≥ 0`);
	}
	const twice = names.find((name, i) => names.indexOf(name) !== i);
	if (twice !== undefined) throw new UsageError(`--policy names ${twice} twice`);
	const policies = names.map((name): ReplayPolicy => {
		if (name === "pi") return { name, kind: "pi" };
		if (name === "context-fold") return { name, kind: "context-fold", settings: knobs };
		if (name.startsWith(PROFILE_PREFIX)) {
			const profile = name.slice(PROFILE_PREFIX.length);
			if (!POLICY_VALUES.includes(profile))
				throw new UsageError(
					`unknown context-fold profile "${profile}" in ${name}: the profiles are ${PROFILE_NAMES}`,
				);
			return { name, kind: "context-fold", settings: { ...knobs, policy: profile } };
		}
		if (name === "compact-only") return { name, kind: "compact-only" };
		if (name === "clear-tool-uses") return { name, kind: "clear", settings: { ...clear } };
		const mask = /^mask-last-(\d+)$/.exec(name);
		if (mask) return { name, kind: "mask", keep: Number(mask[1]) };
		throw new UsageError(
			`unknown policy ${name}: pi, context-fold, ${PROFILE_PREFIX}<profile>, compact-only, mask-last-<N> or clear-tool-uses`,
		);
	});
	return {
		files,
		...(mine ? { mine: { last: last ?? DEFAULT_LAST, allProjects } } : {}),
		policies,
		price,
		window,
		// Pi warms no cache without a lifetime (OpenAI's models declare none): the replay does not either.
		warming: warming && PRICE_MODELS[price].warmed,
		images,
		json,
		wide,
		quiet,
		jobs,
		knobs,
		...(html === undefined ? {} : { html }),
	};
}

/**
 * Replays every file under every policy (in parallel jobs). Every file is read first, so that one that
 * is not a Pi session stops the command (a SessionFileError) before any replay; then `progress` gets a
 * one-line status after each request replayed.
 */
export async function runReplay(options: ReplayOptions, progress: (status: string) => void): Promise<SessionReport[]> {
	for (const file of options.files) sessionScript(file);
	const model = PRICE_MODELS[options.price];
	const jobs: ReplayJob[] = options.files.flatMap((file) =>
		options.policies.map((policy) => ({
			file,
			policy,
			price: options.price,
			window: options.window,
			warming: options.warming,
			images: options.images,
			timeHooks: options.timeHooks,
			foresight: options.foresight,
		})),
	);
	const figures = await runJobs(jobs, options.jobs, (i, done, total) => {
		progress(
			`replay ${i + 1}/${jobs.length}, request ${done}/${total}: ${jobs[i].policy.name} on ${basename(jobs[i].file)}`,
		);
	});
	const names = options.files.map((file) => basename(file));
	// Two sessions of one name (from two folders) are told apart by their paths as given.
	const named = (file: string, f: number) =>
		names.indexOf(names[f]) !== names.lastIndexOf(names[f]) ? file : names[f];
	return options.files.map((file, f) => ({
		session: named(file, f),
		price: model.name,
		warming: options.warming,
		window: options.window,
		images: options.images,
		policies: withRatios(figures.slice(f * options.policies.length, (f + 1) * options.policies.length)),
	}));
}

/** The command's entry: returns the exit code. */
export async function main(args: readonly string[]): Promise<number> {
	const rest = args[0] === "replay" ? args.slice(1) : args;
	if (rest.includes("--help") || rest.includes("-h") || rest.length === 0) {
		process.stdout.write(`${USAGE}\n`);
		return rest.length === 0 ? 2 : 0;
	}
	let options: ReplayOptions;
	try {
		options = parseArgs(rest);
	} catch (error) {
		if (!(error instanceof UsageError)) throw error;
		process.stderr.write(`context-fold replay: ${error.message}\n${USAGE}\n`);
		return 2;
	}
	// What the replayed extension will say of the `--set` knobs is said to the user here: in the replay
	// it is counted among the extension's advisories, not shown. The user's own CONTEXTFOLD_* variables
	// do not reach it (the figures would change unseen); they are named.
	const own = ownVariablesIn(process.env);
	if (own.length > 0)
		process.stderr.write(
			`context-fold replay: ignoring ${own.join(", ")} from your environment: the replay's knobs are its --set ones\n`,
		);
	for (const line of idleKnobs(options)) process.stderr.write(`context-fold replay: ${line}\n`);
	if (options.jobs > 1 && !WORKERS_RUN)
		process.stderr.write(
			"context-fold replay: --jobs runs one replay at a time from an installed copy (its worker threads need a checkout)\n",
		);
	const status = new ProgressLine(process.stderr, options.quiet);
	if (options.mine) return replayMine(options, options.mine, status);
	if (htmlClashes(options.html, options.files)) return 2;
	let reports: SessionReport[];
	try {
		reports = await runReplay(options, (line) => status.update(line));
	} catch (error) {
		status.clear();
		process.stderr.write(`context-fold replay: ${error instanceof Error ? error.message : String(error)}\n`);
		return error instanceof SessionFileError ? 2 : 1;
	}
	status.clear();
	// The figures first: an HTML file that cannot be written costs the page, not the replay's output.
	if (options.json) process.stdout.write(`${JSON.stringify(reports, null, 1)}\n`);
	else process.stdout.write(report(reports, options.wide));
	return writeHtml(options, reports) ? 0 : 1;
}

/**
 * A line for each `--set` knob that no context-fold run of the replay reads (`foldAt` while only the
 * working-set profile runs, any knob while no context-fold policy runs): the extension would say so
 * in a session, the replay says it here.
 */
export function idleKnobs(options: Pick<ReplayOptions, "knobs" | "policies">): string[] {
	const profiles = [
		...new Set(
			options.policies.flatMap((p) =>
				p.kind === "context-fold" ? [resolveConfig(p.settings, {}).config.policy] : [],
			),
		),
	];
	if (profiles.length === 0) {
		// compact-only runs the extension too, and may read any of them.
		if (options.policies.some((p) => p.kind === "compact-only")) return [];
		return Object.keys(options.knobs).map(
			(key) => `--set ${key} changes nothing in this replay: no context-fold policy runs`,
		);
	}
	return (Object.keys(options.knobs) as (keyof FoldConfig)[]).flatMap((key) => {
		const readers = profilesReading(key);
		if (key === "policy" || readers.length === 0 || profiles.some((p) => readers.includes(p))) return [];
		const read = readers.length > 1 ? "profiles read" : "profile reads";
		return [
			`--set ${key} changes nothing in this replay: only the ${readers.join(" and ")} ${read} it, and it runs ${profiles.join(", ")}`,
		];
	});
}

/**
 * True, said on stderr, when `--html <file>` is one of the sessions to replay (the same file by any
 * path or link) or any other Pi session, which the page would overwrite; false when it is neither
 * (or names no file yet).
 */
function htmlClashes(html: string | undefined, files: readonly string[]): boolean {
	if (html === undefined) return false;
	const id = (path: string) => {
		try {
			const stat = statSync(path);
			return `${stat.dev}:${stat.ino}`;
		} catch {
			return undefined;
		}
	};
	const target = id(html);
	if (target === undefined) return false;
	const session = files.find((file) => id(file) === target);
	if (session !== undefined) {
		process.stderr.write(
			`context-fold replay: --html ${html} is the session file ${session}, which the report would overwrite; give another file\n`,
		);
		return true;
	}
	if (!isPiSession(html)) return false;
	process.stderr.write(
		`context-fold replay: --html ${html} is a Pi session file, which the report would overwrite; give another file\n`,
	);
	return true;
}

/** True when `path` reads as a Pi session (see readPiSession). */
function isPiSession(path: string): boolean {
	try {
		readPiSession(path);
		return true;
	} catch {
		return false;
	}
}

/** Writes the HTML report when `--html` asks for one; false (said on stderr) when it cannot be written. */
function writeHtml(options: ReplayOptions, reports: readonly SessionReport[]): boolean {
	if (options.html === undefined) return true;
	try {
		writeFileSync(options.html, renderHtml(reports));
	} catch (error) {
		process.stderr.write(
			`context-fold replay: cannot write ${options.html}: ${error instanceof Error ? error.message : String(error)}\n`,
		);
		return false;
	}
	if (!options.quiet) process.stderr.write(`HTML report written to ${options.html}\n`);
	return true;
}

/** The first line of what a failed replay threw: for a file that is not a session, what is wrong with it. */
function problemOf(error: unknown): string {
	const text =
		error instanceof SessionFileError ? error.problem : error instanceof Error ? error.message : String(error);
	return text.split("\n")[0];
}

/**
 * `--mine`: replays the newest sessions Pi keeps for this project (or every project), one after the
 * other, each that fails skipped with one line. Prints the verdict over every session replayed, then
 * one line per session found, newest first (its verdict, or why it was skipped), then the summed
 * table; with `--json`, the total, every session's figures and the skipped files. Exit 2, with one
 * line on stderr, when no session was found or none could be replayed.
 */
async function replayMine(
	options: ReplayOptions,
	mine: { last: number; allProjects: boolean },
	status: ProgressLine,
): Promise<number> {
	const cwd = process.cwd();
	const found = findSessions(cwd, mine);
	if (found.files.length === 0) {
		process.stderr.write(
			`context-fold replay: no Pi sessions ${mine.allProjects ? "of any project" : `of ${cwd}`} in ${found.where}\n`,
		);
		return 2;
	}
	if (htmlClashes(options.html, found.files)) return 2;
	const replayed: { file: string; report: SessionReport }[] = [];
	const skipped: { file: string; session: string; problem: string }[] = [];
	const lines: string[] = [];
	for (const [i, file] of found.files.entries()) {
		const session = sessionLabel(file, mine.allProjects);
		try {
			const [report] = await runReplay({ ...options, files: [file] }, (line) =>
				status.update(`session ${i + 1}/${found.files.length}, ${line}`),
			);
			replayed.push({ file, report: { ...report, session } });
			lines.push(verdict({ ...report, session }) ?? `${session}: replayed`);
		} catch (error) {
			skipped.push({ file, session, problem: problemOf(error) });
			lines.push(`${session}: skipped, ${problemOf(error)}`);
		}
	}
	status.clear();
	const reports = replayed.map((r) => r.report);
	if (reports.length === 0) {
		process.stdout.write(`${lines.join("\n")}\n`);
		const n = found.files.length;
		const none = n === 1 ? "the one session found" : `none of the ${n} sessions found`;
		process.stderr.write(
			`context-fold replay: ${none} in ${found.where} ${n === 1 ? "could not" : "could"} be replayed\n`,
		);
		return 2;
	}
	const total = totalReport(reports, `total over ${reports.length} session${reports.length === 1 ? "" : "s"}`);
	if (options.json) {
		const sessions = replayed.map((r) => ({ file: r.file, ...r.report }));
		process.stdout.write(`${JSON.stringify({ total, sessions, skipped }, null, 1)}\n`);
		return writeHtml(options, reports) ? 0 : 1;
	}
	const out = [
		verdict(total) ?? total.session,
		...lines,
		"",
		wrap(
			`${settingsLine(total)}; figures summed over the sessions above, newest first from ${found.where} (replay one file for its own table)`,
		),
		table(total.policies, options.wide),
	];
	process.stdout.write(`${out.join("\n")}\n`);
	return writeHtml(options, reports) ? 0 : 1;
}
