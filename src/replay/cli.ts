/**
 * `context-fold replay <session.jsonl…>`: parses the options (options.ts, which names the policies),
 * refuses (exit 2, one line) a file that is not a Pi session with something to replay, replays each
 * session under each policy, keeps one progress line on a terminal's stderr, and prints on stdout a
 * verdict line per session, then the figures (a table per session that fits 100 columns, every column
 * with `--wide`, or `--json`); with `--html` it writes the self-contained report page. `--mine`
 * replays the user's own newest sessions from Pi's session directory instead (mine.ts finds them),
 * plain Pi beside context-fold by default, skipping with one line each one that cannot be replayed,
 * and prints the verdict over all of them first.
 */
import { existsSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { ownVariablesIn, profilesReading, resolveConfig } from "../adapters/pi/config.ts";
import type { FoldConfig } from "../adapters/pi/settings-schema.ts";
import { renderHtml } from "./html.ts";
import { type ReplayJob, runJobs, sessionScript, WORKERS_RUN } from "./jobs.ts";
import { findSessions, sessionLabel, totalReport } from "./mine.ts";
import { parseArgs, type ReplayOptions, USAGE, UsageError } from "./options.ts";
import { PRICE_MODELS } from "./price.ts";
import { ProgressLine } from "./progress.ts";
import { type SessionReport, withRatios } from "./report.ts";
import { report, settingsLine, table, verdict, wrap } from "./report-text.ts";
import { readPiSession, SessionFileError } from "./session-file.ts";

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
	for (const line of [...options.notices, ...idleKnobs(options)])
		process.stderr.write(`context-fold replay: ${line}\n`);
	if (options.jobs > 1 && !WORKERS_RUN)
		process.stderr.write(
			"context-fold replay: --jobs runs one replay at a time from an installed copy (its worker threads need a checkout)\n",
		);
	const status = new ProgressLine(process.stderr, options.quiet);
	if (options.mine) return replayMine(options, options.mine, status);
	if (htmlRefused(options.html, options.files)) return 2;
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
 * A line for each `--set` knob that no run of the replay reads (`foldAt` while only the working-set
 * profile runs, any context-fold knob while no context-fold policy runs, `trigger` while
 * clear-tool-uses does not run): the extension would say so in a session, the replay says it here.
 */
export function idleKnobs(options: Pick<ReplayOptions, "knobs" | "policies" | "clearSet">): string[] {
	const clearing = options.policies.some((p) => p.kind === "clear");
	const unread = clearing
		? []
		: options.clearSet.map((key) => `--set ${key} changes nothing in this replay: only clear-tool-uses reads it`);
	return [...unread, ...idleFoldKnobs(options)];
}

/** The lines of idleKnobs for context-fold's own knobs. */
function idleFoldKnobs(options: Pick<ReplayOptions, "knobs" | "policies">): string[] {
	const profiles = [
		...new Set(
			options.policies.flatMap((p) =>
				p.kind === "context-fold" ? [resolveConfig(p.settings, {}).config.policy] : [],
			),
		),
	];
	if (profiles.length === 0) {
		// compact-only runs the extension under fixed knobs of its own (see run.ts), never the ones given.
		const only = options.policies.some((p) => p.kind === "compact-only") ? " (compact-only runs fixed knobs)" : "";
		return Object.keys(options.knobs).map(
			(key) => `--set ${key} changes nothing in this replay: no context-fold policy runs${only}`,
		);
	}
	return (Object.keys(options.knobs) as (keyof FoldConfig)[]).flatMap((key) => {
		// The replayed model is the replay's own (see replay-session.ts): a lifetime for a named provider never applies.
		if (key === "cacheTtlByProvider" && !/(^|,)\s*replay\s*=/i.test(String(options.knobs[key])))
			return [
				`--set ${key} changes nothing in this replay: the replayed model's provider is "replay"; cacheTtlSeconds sets its cache lifetime`,
			];
		const readers = profilesReading(key);
		if (key === "policy" || readers.length === 0 || profiles.some((p) => readers.includes(p))) return [];
		const read = readers.length > 1 ? "profiles read" : "profile reads";
		return [
			`--set ${key} changes nothing in this replay: only the ${readers.join(" and ")} ${read} it, and it runs ${profiles.join(", ")}`,
		];
	});
}

/**
 * True, said on stderr before any replay, when `--html <file>` cannot take the page: it is one of
 * the sessions to replay (the same file by any path or link) or any other Pi session, which the page
 * would overwrite, a directory, a pipe, or a file in a directory that does not exist; false otherwise.
 */
function htmlRefused(html: string | undefined, files: readonly string[]): boolean {
	if (html === undefined) return false;
	const refuse = (why: string): true => {
		process.stderr.write(`context-fold replay: --html ${html} ${why}; give another file\n`);
		return true;
	};
	if (!existsSync(dirname(resolve(html)))) return refuse(`is in a directory that does not exist`);
	if (existsSync(html) && statSync(html).isDirectory()) return refuse("is a directory");
	// A named pipe blocks the write until something reads it, past Ctrl-C: never waited on.
	if (existsSync(html) && (statSync(html).isFIFO() || statSync(html).isSocket()))
		return refuse("is a pipe or a socket, which the report would wait on");
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
			`context-fold replay: no Pi sessions ${mine.allProjects ? "of any project" : `of ${cwd}`} in ${found.where}${found.unreadable ? ` (${found.unreadable})` : ""}\n`,
		);
		return 2;
	}
	if (htmlRefused(options.html, found.files)) return 2;
	const replayed: { file: string; report: SessionReport }[] = [];
	const skipped: { file: string; session: string; problem: string }[] = [];
	const lines: string[] = [];
	for (const [i, file] of found.files.entries()) {
		const session = sessionLabel(file, mine.allProjects);
		try {
			// The verdict lines print no foresight floor: worked out only for --json and --html.
			const foresight = options.json || options.html !== undefined ? options.foresight : false;
			const [report] = await runReplay({ ...options, files: [file], foresight }, (line) =>
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
