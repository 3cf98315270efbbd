/**
 * The user's own sessions, for `context-fold replay --mine`: where Pi 1.6 keeps the sessions of the
 * current project (or of every project), the newest of them, a short label for each, and the figures
 * of several sessions' replays summed into one report for the total verdict. Only reads: nothing here
 * creates, locks or writes a file or a directory (Pi's own `getDefaultSessionDir` and
 * `SessionManager.list` would create the project's session directory, and its `SettingsManager`
 * takes a lock file beside settings.json, so their rules are followed here rather than called).
 *
 * Pi's rules, from @earendil-works/pi-coding-agent 1.6 (dist/main.js, dist/config.js,
 * dist/core/session-manager.js, dist/core/settings-manager.js; docs/sessions.md, docs/settings.md):
 * - the agent directory is `getAgentDir()` (exported): `PI_CODING_AGENT_DIR`, else `~/.pi/agent`;
 * - sessions live in `PI_CODING_AGENT_SESSION_DIR` when set, else in the `sessionDir` setting (the
 *   project's `.pi/settings.json` over the agent directory's `settings.json`; a relative path from the
 *   working directory), else in `<agent dir>/sessions/--<cwd>--/`, the cwd's leading separator dropped
 *   and every other `/`, `\` and `:` turned into `-` (`getDefaultSessionDirPath`);
 * - a directory set by the variable or the setting is shared by every project: a session belongs to
 *   the project its header's `cwd` names (`SessionManager.list`); every project's sessions are every
 *   `*.jsonl` there, or in each directory under `<agent dir>/sessions/` (`SessionManager.listAll`);
 * - the newest session is the one whose file changed last (`findMostRecentSession`, which `pi -c`
 *   continues); a session file is named `<start time, ':' and '.' as '-'>_<session id>.jsonl`.
 */
import { closeSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { CONFIG_DIR_NAME, getAgentDir } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { Value } from "typebox/value";
import type { PolicyFigures, SessionReport } from "./report.ts";
import { withRatios } from "./report.ts";
import { openRegularFile } from "./session-file.ts";

/** The variable that moves Pi's session storage (Pi's `ENV_SESSION_DIR`, not exported). */
const ENV_SESSION_DIR = "PI_CODING_AGENT_SESSION_DIR";

/** Sessions replayed by `--mine` without `--last`. */
export const DEFAULT_LAST = 10;

/** Where Pi keeps the sessions and whether that directory is shared by every project. */
export interface SessionStore {
	/** The current project's session directory, or the shared one. */
	dir: string;
	/** Set by the variable or the `sessionDir` setting: every project's sessions side by side. */
	shared: boolean;
	/** `<agent dir>/sessions`, holding one directory per project (when not shared). */
	root: string;
}

/** What `--mine` looks in and what it found there. */
export interface FoundSessions {
	/** The directory looked in (the project's, the shared one, or the root of every project's). */
	where: string;
	/** The newest session files, newest first, at most the number asked for. */
	files: string[];
	/** Why `where` itself could not be read (not a directory, refused), if it is there and could not. */
	unreadable?: string;
}

/**
 * Why the directory `dir` cannot be listed, in a few words; undefined when it can, or when it is not
 * there (a project with no session yet has no directory).
 */
function unlistable(dir: string): string | undefined {
	try {
		readdirSync(dir);
		return undefined;
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return undefined;
		if (code === "ENOTDIR") return "it is not a directory";
		if (code === "EACCES" || code === "EPERM") return "permission denied";
		return error instanceof Error ? error.message : String(error);
	}
}

/** `~` and `~/…` read from the home directory, as Pi's `expandTildePath`. */
function expandTilde(path: string): string {
	if (path === "~") return homedir();
	return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

const SessionDirSetting = Type.Object({ sessionDir: Type.String({ minLength: 1 }) });

/** The `sessionDir` a settings file sets, if it is readable JSON that sets one. */
function sessionDirSetting(file: string): string | undefined {
	let settings: unknown;
	try {
		settings = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
	} catch {
		return undefined;
	}
	return Value.Check(SessionDirSetting, settings) ? settings.sessionDir : undefined;
}

/** Pi's per-project session directory name for `cwd` (`getDefaultSessionDirPath`). */
export function projectDirName(cwd: string): string {
	return `--${resolve(cwd)
		.replace(/^[/\\]/, "")
		.replace(/[/\\:]/g, "-")}--`;
}

/** Where Pi 1.6 keeps the sessions of a project run in `cwd` (under this process's environment). */
export function sessionStore(cwd: string): SessionStore {
	const agentDir = resolve(getAgentDir());
	const root = join(agentDir, "sessions");
	const fallback = join(root, projectDirName(cwd));
	const set =
		process.env[ENV_SESSION_DIR] ||
		sessionDirSetting(join(cwd, CONFIG_DIR_NAME, "settings.json")) ||
		sessionDirSetting(join(agentDir, "settings.json"));
	if (!set) return { dir: fallback, shared: false, root };
	const dir = resolve(cwd, expandTilde(set));
	return { dir, shared: dir !== fallback, root };
}

/** The first line of a file (at most 1 MB of it, as Pi's header scan), or undefined when unreadable. */
function firstLine(file: string): string | undefined {
	let fd: number;
	try {
		fd = openRegularFile(file);
	} catch {
		return undefined;
	}
	try {
		const chunks: Buffer[] = [];
		const chunk = Buffer.alloc(64 * 1024);
		for (let read = 0; read < 1024 * 1024; ) {
			const n = readSync(fd, chunk, 0, chunk.length, read);
			if (n === 0) break;
			const end = chunk.subarray(0, n).indexOf(10);
			chunks.push(Buffer.from(chunk.subarray(0, end < 0 ? n : end)));
			if (end >= 0) break;
			read += n;
		}
		return Buffer.concat(chunks).toString("utf8");
	} catch {
		return undefined;
	} finally {
		closeSync(fd);
	}
}

const Header = Type.Object({ type: Type.Literal("session"), cwd: Type.String() });

/** The working directory a session file's header names, if its first line is a session header. */
function headerCwd(file: string): string | undefined {
	const line = firstLine(file);
	if (line === undefined) return undefined;
	try {
		const header: unknown = JSON.parse(line);
		return Value.Check(Header, header) ? header.cwd : undefined;
	} catch {
		return undefined;
	}
}

/** Every `*.jsonl` file in `dir` (none when it cannot be read). */
function sessionFiles(dir: string): string[] {
	try {
		return readdirSync(dir)
			.filter((name) => name.endsWith(".jsonl"))
			.map((name) => join(dir, name));
	} catch {
		return [];
	}
}

/** The directories directly under `root` (none when it cannot be read). */
function projectDirs(root: string): string[] {
	try {
		return readdirSync(root, { withFileTypes: true })
			.filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
			.map((entry) => join(root, entry.name));
	} catch {
		return [];
	}
}

function modified(file: string): number {
	try {
		return statSync(file).mtimeMs;
	} catch {
		return Number.NEGATIVE_INFINITY;
	}
}

/**
 * The newest `last` session files of the project run in `cwd` (of every project with `allProjects`),
 * newest first (latest change first, then by name, the later first). A file that is not a readable
 * session is among them, for the replay to report and skip; in a shared directory, a file belongs to
 * the project its header names, so one without a header is counted only with `allProjects`.
 */
export function findSessions(cwd: string, options: { last: number; allProjects: boolean }): FoundSessions {
	const store = sessionStore(cwd);
	let where = store.dir;
	let files: string[];
	if (options.allProjects && !store.shared) {
		where = store.root;
		files = projectDirs(store.root).flatMap(sessionFiles);
	} else {
		files = sessionFiles(store.dir);
		if (store.shared && !options.allProjects) {
			const here = resolve(cwd);
			files = files.filter((file) => {
				const at = headerCwd(file);
				return at !== undefined && at !== "" && resolve(expandTilde(at)) === here;
			});
		}
	}
	const newest = files
		.map((file) => ({ file, at: modified(file) }))
		.sort((a, b) => b.at - a.at || basename(b.file).localeCompare(basename(a.file)))
		.slice(0, options.last)
		.map((f) => f.file);
	const unreadable = newest.length === 0 ? unlistable(where) : undefined;
	return unreadable ? { where, files: newest, unreadable } : { where, files: newest };
}

/**
 * A short name for a session file: the start time its Pi file name holds (`2026-01-10 09:00:00`, UTC),
 * else the file's name; with `project`, after the project's name: the last part of the cwd its header
 * names, or, for a file without a readable header, the one another session of its directory names
 * (Pi keeps one directory per project, so its sessions read as one project), else the directory's name.
 */
export function sessionLabel(file: string, project = false): string {
	const name = basename(file);
	const pi = /^(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)-\d{3}Z_.+\.jsonl$/.exec(name);
	const label = pi ? `${pi[1]} ${pi[2]}:${pi[3]}:${pi[4]}` : name;
	if (!project) return label;
	const cwd = headerCwd(file) ?? siblingCwd(file);
	return `${cwd ? projectName(cwd) : basename(dirname(file))} ${label}`;
}

/** The cwd the first readable header among the other sessions of `file`'s directory names, by file name. */
function siblingCwd(file: string): string | undefined {
	for (const sibling of sessionFiles(dirname(file)).sort()) {
		if (sibling === file) continue;
		const cwd = headerCwd(sibling);
		if (cwd !== undefined) return cwd;
	}
	return undefined;
}

/** The last part of a working directory written with `/` or `\` (a Windows one too); `/` itself for the root. */
function projectName(cwd: string): string {
	return (
		cwd
			.split(/[/\\]/)
			.filter((part) => part.length > 0)
			.at(-1) ?? cwd
	);
}

/** Policy figures that add up over sessions (the rest are recomputed or left out of a total). */
const SUMMED = [
	"requests",
	"summaryRequests",
	"promptTokens",
	"overflowRejections",
	"compactions",
	"cacheRead",
	"cacheWrite",
	"warmRefreshes",
	"warmCost",
	"warmStopped",
	"warmStoppedCost",
	"warmStopSaving",
	"cost",
	"foldEvents",
	"rewriteCost",
	"references",
	"recallsNeeded",
	"recallCost",
	"costWithRecalls",
	"advisories",
] as const satisfies readonly (keyof PolicyFigures)[];

/** One policy's figures over several sessions: sums, the highest peak, visibility over every reference. */
function totalFigures(runs: readonly PolicyFigures[]): PolicyFigures {
	const total: PolicyFigures = {
		...runs[0],
		peakPrompt: Math.max(...runs.map((f) => f.peakPrompt)),
		costRatio: null,
		dearestCut: null,
		rewriteEvents: [],
		hookMsP50: null,
		hookMsP99: null,
		cloneMsP50: null,
		foresight: null,
		foresightAtBar: null,
		foresightScheduled: null,
		divergences: {},
		series: [],
	};
	for (const key of SUMMED) total[key] = runs.reduce((n, f) => n + f[key], 0);
	const seen = runs.reduce((n, f) => n + f.visibility * f.references, 0);
	total.visibility = total.references > 0 ? seen / total.references : 1;
	for (const f of runs)
		for (const [kind, count] of Object.entries(f.divergences))
			total.divergences[kind] = (total.divergences[kind] ?? 0) + count;
	return total;
}

/**
 * The reports of several sessions replayed under the same policies and settings, summed into one
 * report named `session` (the total verdict's subject): each policy's figures added up, its cost
 * ratio taken over the sums, its visibility over every session's references. Per-request detail
 * (series, rewrite events, hook times, foresight) is left out of the total.
 */
export function totalReport(reports: readonly SessionReport[], session: string): SessionReport {
	const first = reports[0];
	return {
		...first,
		session,
		policies: withRatios(first.policies.map((_, i) => totalFigures(reports.map((r) => r.policies[i])))),
	};
}
