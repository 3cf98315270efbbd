/**
 * The corpora of recorded Pi sessions that the session-replaying tests and benches run on, and the
 * one line that says which were found:
 *
 * - `project`: every `test/fixtures/sessions/*.jsonl` of this repository (sessions recorded for and
 *   shipped with the project; none yet is not an error);
 * - `shared`: every `*.jsonl` in `CONTEXTFOLD_SESSIONS` if set, else in `../shared/sessions` beside
 *   the repository, only when that folder exists (a fresh clone has none);
 * - `more`: the same, from `CONTEXTFOLD_SESSIONS_MORE` or `../shared/sessions-more` (sessions other
 *   people recorded with other harnesses, converted to Pi's format).
 *
 * A folder is read once: a corpus naming a folder an earlier corpus already read is absent.
 * A session is loaded once per process (see session.ts for the branch and the message sequences).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { MessageLike } from "../../src/core/block.ts";
import { activeBranch, branchMessages, contextMessages, type Entry, readSessionFile } from "./session.ts";

/** The repository root. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The project corpus folder. */
export const PROJECT_SESSIONS = join(REPO_ROOT, "test", "fixtures", "sessions");

/** Where the shared corpus is looked for when CONTEXTFOLD_SESSIONS is not set. */
export const DEFAULT_SHARED_SESSIONS = resolve(REPO_ROOT, "..", "shared", "sessions");

/** Where the `more` corpus is looked for when CONTEXTFOLD_SESSIONS_MORE is not set. */
export const DEFAULT_MORE_SESSIONS = resolve(REPO_ROOT, "..", "shared", "sessions-more");

/** One session file of a corpus. */
export interface SessionRef {
	corpus: string;
	/** File name, e.g. `large-session.jsonl`. */
	file: string;
	path: string;
}

/** A corpus: its name, folder, whether that folder exists, and its session files (by name). */
export interface Corpus {
	name: string;
	dir: string;
	present: boolean;
	/** Why the corpus is absent, for the corpora line. */
	absence?: string;
	sessions: SessionRef[];
}

function isDir(path: string): boolean {
	return existsSync(path) && statSync(path).isDirectory();
}

function corpusAt(name: string, dir: string, absence: string): Corpus {
	if (!isDir(dir)) return { name, dir, present: false, absence, sessions: [] };
	const files = readdirSync(dir)
		.filter((f) => f.endsWith(".jsonl"))
		.sort();
	return { name, dir, present: true, sessions: files.map((file) => ({ corpus: name, file, path: join(dir, file) })) };
}

/** An optional corpus folder: `variable` if set, else `fallback`, and why it is absent when it is. */
function optionalDir(variable: string, fallback: string): { dir: string; absence: string } {
	const fromEnv = process.env[variable];
	if (fromEnv) return { dir: resolve(fromEnv), absence: `${variable}=${fromEnv} is not a folder` };
	return { dir: fallback, absence: `set ${variable} or place ../shared/${basename(fallback)}` };
}

/** The three corpora, `project` first, as they are on disk now. */
export function listCorpora(): Corpus[] {
	const wanted = [
		{ name: "project", dir: PROJECT_SESSIONS, absence: "no test/fixtures/sessions folder" },
		{ name: "shared", ...optionalDir("CONTEXTFOLD_SESSIONS", DEFAULT_SHARED_SESSIONS) },
		{ name: "more", ...optionalDir("CONTEXTFOLD_SESSIONS_MORE", DEFAULT_MORE_SESSIONS) },
	];
	const corpora: Corpus[] = [];
	for (const { name, dir, absence } of wanted) {
		const earlier = corpora.find((c) => c.present && c.dir === dir);
		corpora.push(
			earlier
				? { name, dir, present: false, absence: `same folder as ${earlier.name}`, sessions: [] }
				: corpusAt(name, dir, absence),
		);
	}
	return corpora;
}

/** Every session of every present corpus, `project` first, by file name within a corpus. */
export function listSessions(): SessionRef[] {
	return listCorpora().flatMap((c) => c.sessions);
}

/**
 * The corpora line: each corpus with its folder (but the project's) and session files, or why it is
 * absent, e.g. `corpora: project (2 sessions: a.jsonl, b.jsonl); shared: absent (set
 * CONTEXTFOLD_SESSIONS or place ../shared/sessions); more (1 session, /x/sessions-more: c.jsonl)`.
 */
export function corporaLine(corpora: readonly Corpus[] = listCorpora()): string {
	const parts = corpora.map((c) => {
		if (!c.present) return `${c.name}: absent (${c.absence})`;
		const n = c.sessions.length;
		const count = `${n} session${n === 1 ? "" : "s"}`;
		const where = c.name === "project" ? "" : `, ${c.dir}`;
		const names = n > 0 ? `: ${c.sessions.map((s) => s.file).join(", ")}` : "";
		return `${c.name} (${count}${where}${names})`;
	});
	return `corpora: ${parts.join("; ")}`;
}

/**
 * The one `corpus:` line a corpus-reading test file prints as a diagnostic (the test reporter shows
 * it under the file's line, scripts/test-reporter.ts): each check with the sessions it ran on, by
 * corpus, then the corpora that were absent, e.g. `corpus: resumed in pi on project (a, b), more
 * (c); known paths on project (a); absent: shared`. `checks` pairs what was checked with the
 * sessions (by `corpus` and `file`) it was checked on.
 */
export function corpusNote(
	checks: readonly (readonly [string, readonly SessionRef[]])[],
	corpora: readonly Corpus[] = listCorpora(),
): string {
	const parts = checks.map(([check, sessions]) => {
		const by = corpora.flatMap((c) => {
			const names = sessions.filter((s) => s.corpus === c.name).map((s) => s.file.replace(/\.jsonl$/, ""));
			return names.length > 0 ? [`${c.name} (${names.join(", ")})`] : [];
		});
		return `${check} on ${by.length > 0 ? by.join(", ") : "no session"}`;
	});
	const absent = corpora.filter((c) => !c.present).map((c) => c.name);
	if (absent.length > 0) parts.push(`absent: ${absent.join(", ")}`);
	return `corpus: ${parts.join("; ")}`;
}

/** A loaded session: where it is, its active branch and the message sequences a replay feeds. */
export interface Session extends SessionRef {
	/** `corpus/file`, unique across corpora: the name tests and reports use. */
	name: string;
	header: Entry | undefined;
	branch: Entry[];
	/** The whole conversation of the active branch, compactions ignored (see session.ts). */
	messages: MessageLike[];
	/** What Pi sends at the leaf: compaction-aware (see session.ts). */
	context: MessageLike[];
}

const cache = new Map<string, Session>();

/** Loads one session (cached per path). */
export function loadSession(ref: SessionRef): Session {
	let session = cache.get(ref.path);
	if (!session) {
		const parsed = readSessionFile(ref.path);
		const branch = activeBranch(parsed, ref.path);
		session = {
			...ref,
			name: `${ref.corpus}/${ref.file}`,
			header: parsed.header,
			branch,
			messages: branchMessages(branch),
			context: contextMessages(branch),
		};
		cache.set(ref.path, session);
	}
	return session;
}

/** Every session of every present corpus, loaded. */
export function loadSessions(): Session[] {
	return listSessions().map(loadSession);
}
