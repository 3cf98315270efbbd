/**
 * `context-fold replay --mine`: the user's own newest sessions, found where Pi 1.6 keeps them. The
 * session directory's rules are checked against Pi's own code in a sandbox agent directory (the
 * per-project directory `SessionManager.create` makes, the sessions `SessionManager.list` and
 * `listAll` find, a shared directory set by PI_CODING_AGENT_SESSION_DIR or the `sessionDir`
 * setting); the summed report against hand-computed sums; and the command itself through the real
 * CLI over a sandbox holding two small sessions and a corrupt one for a project, and one session of
 * a second project: the total verdict first, one line per session newest first (the corrupt one
 * skipped in one line), `--last 1`, `--all-projects`, exit 2 with one line when there is nothing to
 * replay, and every file of the sandbox byte for byte and time for time as it was.
 */
import assert from "node:assert/strict";
import {
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import {
	DEFAULT_LAST,
	findSessions,
	projectDirName,
	sessionLabel,
	sessionStore,
	totalReport,
} from "../../src/replay/mine.ts";
import { parseArgs, UsageError } from "../../src/replay/options.ts";
import type { PolicyFigures, SessionReport } from "../../src/replay/report.ts";
import { replayCommand, replayInProcess } from "./replay-command.ts";
import { FIXED_REPORT } from "./report-fixture.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/sessions/", import.meta.url));

/** The first `lines` lines of a recorded session (a prefix of a session is a session), its header's cwd set. */
function trimmed(fixture: string, lines: number, cwd: string): string {
	const [header, ...rest] = readFileSync(join(FIXTURES, fixture), "utf8").split("\n").slice(0, lines);
	return `${[JSON.stringify({ ...JSON.parse(header), cwd }), ...rest].join("\n")}\n`;
}

/** Writes a session file with its last change at `minute` past 2026-05-01 09:00 UTC. */
function put(file: string, text: string, minute: number): void {
	writeFileSync(file, text);
	const at = new Date(Date.UTC(2026, 4, 1, 9, minute));
	utimesSync(file, at, at);
}

/** Every file under `dir`: its bytes and its last change, by relative path. */
function snapshot(dir: string): Map<string, { bytes: string; mtime: number }> {
	const out = new Map<string, { bytes: string; mtime: number }>();
	for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
		const path = join(dir, name);
		const stat = statSync(path);
		out.set(name, { bytes: stat.isFile() ? readFileSync(path, "base64") : "<dir>", mtime: stat.mtimeMs });
	}
	return out;
}

const root = realpathSync(mkdtempSync(join(tmpdir(), "replay-mine-")));
after(() => rmSync(root, { recursive: true, force: true }));
const agent = join(root, "agent");
const project = join(root, "chartkit");
const other = join(root, "ledger");
const projectSessions = join(agent, "sessions", projectDirName(project));
const otherSessions = join(agent, "sessions", projectDirName(other));
for (const dir of [project, other, join(root, "bare"), join(root, "fresh"), projectSessions, otherSessions])
	mkdirSync(dir, { recursive: true });
mkdirSync(join(agent, "sessions", projectDirName(join(root, "bare"))));
// The project's sessions, newest first: a valid one, a corrupt one (its header line cut off: Pi
// skips a line that is not JSON, then finds no header, and will not open it), an older valid one. The other project has one session.
const NEWEST = "2026-04-08T13-02-44-000Z_019d6d30-2120-709a-aedf-64a934e89d64.jsonl";
const CORRUPT = "2026-04-01T08-00-00-000Z_019d0000-0000-7000-8000-000000000000.jsonl";
const OLDEST = "2026-03-17T08-41-27-000Z_019cfaf5-02d8-7259-9a0f-743ec5e25170.jsonl";
const OTHER = "2026-03-20T10-00-00-000Z_019c1111-1111-7111-8111-111111111111.jsonl";
put(join(projectSessions, NEWEST), trimmed("debug-branchy.jsonl", 13, project), 30);
const corrupt = trimmed("debug-branchy.jsonl", 6, project);
put(
	join(projectSessions, CORRUPT),
	`{"type":"session","version":3,"id":"01${corrupt.slice(corrupt.indexOf("\n"))}`,
	20,
);
/** How the replay refuses the corrupt session. */
const NO_HEADER = 'not a Pi session: its first JSON line is not a session header ({"type":"session","id":…})';
put(join(projectSessions, OLDEST), trimmed("refactor-long.jsonl", 11, project), 10);
put(join(otherSessions, OTHER), trimmed("debug-branchy.jsonl", 13, other), 5);
const before = snapshot(agent);

/** `context-fold replay --mine …` run in `cwd` with the sandbox as Pi's agent directory. */
function mine(cwd: string, ...args: string[]) {
	const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agent };
	delete env.PI_CODING_AGENT_SESSION_DIR;
	return replayCommand(["--mine", ...args], { cwd, env });
}

/** `mine` through the command's main in this process, run in `cwd`, then back where it was. */
async function mineInProcess(cwd: string, ...args: string[]) {
	const was = process.cwd();
	let run: Awaited<ReturnType<typeof replayInProcess>> | undefined;
	process.chdir(cwd);
	try {
		await withEnv(agent, undefined, async () => {
			run = await replayInProcess(["--mine", ...args]);
		});
	} finally {
		process.chdir(was);
	}
	assert.ok(run);
	return run;
}

/** Runs `fn` with PI_CODING_AGENT_DIR (and PI_CODING_AGENT_SESSION_DIR when given) set, restoring both. */
async function withEnv(agentDir: string, sessionDir: string | undefined, fn: () => unknown): Promise<void> {
	const saved = [process.env.PI_CODING_AGENT_DIR, process.env.PI_CODING_AGENT_SESSION_DIR];
	process.env.PI_CODING_AGENT_DIR = agentDir;
	if (sessionDir === undefined) delete process.env.PI_CODING_AGENT_SESSION_DIR;
	else process.env.PI_CODING_AGENT_SESSION_DIR = sessionDir;
	try {
		await fn();
	} finally {
		for (const [key, value] of [
			["PI_CODING_AGENT_DIR", saved[0]],
			["PI_CODING_AGENT_SESSION_DIR", saved[1]],
		] as const) {
			if (value === undefined) delete process.env[key];
			else process.env[key] = value;
		}
	}
}

const VERDICT =
	/: context-fold \d+\.\d\d× plain Pi's cost, \d+\.\d% of references visible \(plain Pi \d+\.\d%\), \d+ recalls?$/;

test("--mine replays the project's sessions newest first, skips the corrupt one in one line, and writes nothing", () => {
	const run = mine(project, "--policy", "pi,context-fold");
	assert.equal(run.status, 0, run.stderr);
	assert.equal(run.stderr, "", "no progress line when stderr is not a terminal");
	const lines = run.stdout.split("\n");
	assert.match(lines[0], /^total over 2 sessions: context-fold /);
	assert.match(lines[0], VERDICT);
	assert.match(lines[1], /^2026-04-08 13:02:44: context-fold /);
	assert.match(lines[1], VERDICT);
	assert.equal(lines[2], `2026-04-01 08:00:00: skipped, ${NO_HEADER}`);
	assert.match(lines[3], /^2026-03-17 08:41:27: context-fold /);
	assert.match(lines[3], VERDICT);
	assert.equal(lines[4], "");
	assert.ok(lines.slice(5).join(" ").includes(projectSessions), "the report names the directory it read");
	assert.match(run.stdout, /^\| pi +\| \d+ +\| 1\.000 /m, "the summed table");
	assert.equal(run.stdout.match(/skipped/g)?.length, 1);
	assert.deepEqual(snapshot(agent), before, "Pi's session directory is read, never written");
});

test("--last 1 replays only the newest session; --all-projects finds the other project's; totals are sums", () => {
	const last = mine(project, "--last", "1");
	assert.equal(last.status, 0, last.stderr);
	const lines = last.stdout.split("\n");
	assert.match(lines[0], /^total over 1 session: context-fold /);
	assert.match(lines[1], /^2026-04-08 13:02:44: /);
	assert.equal(lines[2], "");
	assert.doesNotMatch(last.stdout, /2026-03-17|2026-04-01/);

	const all = mine(join(root, "fresh"), "--all-projects", "--json");
	assert.equal(all.status, 0, all.stderr);
	const out = JSON.parse(all.stdout) as {
		total: SessionReport;
		sessions: (SessionReport & { file: string })[];
		skipped: { file: string; session: string; problem: string }[];
	};
	assert.deepEqual(
		out.sessions.map((s) => [s.session, relative(agent, s.file)]),
		[
			["chartkit 2026-04-08 13:02:44", join("sessions", projectDirName(project), NEWEST)],
			["chartkit 2026-03-17 08:41:27", join("sessions", projectDirName(project), OLDEST)],
			["ledger 2026-03-20 10:00:00", join("sessions", projectDirName(other), OTHER)],
		],
	);
	assert.deepEqual(
		out.skipped.map((s) => [s.session, s.problem]),
		// Its header is gone: its directory's other sessions name the project, as they are named above.
		[["chartkit 2026-04-01 08:00:00", NO_HEADER]],
	);
	assert.equal(out.total.session, "total over 3 sessions");
	for (const [i, total] of out.total.policies.entries()) {
		const runs = out.sessions.map((s) => s.policies[i]);
		assert.equal(total.policy, runs[0].policy);
		assert.ok(Math.abs(total.cost - runs.reduce((n, f) => n + f.cost, 0)) < 1e-6, total.policy);
		assert.equal(
			total.references,
			runs.reduce((n, f) => n + f.references, 0),
		);
	}
	const [pi, fold] = out.total.policies;
	assert.equal(pi.policy, "pi");
	assert.ok(fold.costRatio !== null && Math.abs(fold.costRatio - fold.cost / pi.cost) < 1e-12);
	assert.deepEqual(snapshot(agent), before, "Pi's session directory is read, never written");
});

test("a session directory that is a file is said to be none, not taken for an empty one", async () => {
	const file = join(root, "not-a-dir.jsonl");
	writeFileSync(file, "");
	const was = process.cwd();
	process.chdir(join(root, "fresh"));
	let run: Awaited<ReturnType<typeof replayInProcess>> | undefined;
	try {
		await withEnv(agent, file, async () => {
			run = await replayInProcess(["--mine"]);
		});
	} finally {
		process.chdir(was);
	}
	assert.equal(run?.status, 2);
	assert.equal(
		run?.stderr,
		`context-fold replay: no Pi sessions of ${join(root, "fresh")} in ${file} (it is not a directory)\n`,
	);
});

test("no session to replay: a missing or empty session directory, or only a corrupt session, exit 2 with one line", async () => {
	for (const [cwd, args, expected] of [
		[
			join(root, "fresh"),
			[],
			`no Pi sessions of ${join(root, "fresh")} in ${join(agent, "sessions", projectDirName(join(root, "fresh")))}`,
		],
		[
			join(root, "bare"),
			[],
			`no Pi sessions of ${join(root, "bare")} in ${join(agent, "sessions", projectDirName(join(root, "bare")))}`,
		],
	] as const) {
		// These two through the command's main here; the corrupt session's below through the command.
		const run = await mineInProcess(cwd, ...args);
		assert.equal(run.status, 2, run.stderr);
		assert.equal(run.stdout, "");
		assert.equal(run.stderr, `context-fold replay: ${expected}\n`);
	}
	// The corrupt session alone (the newest one moved aside for the run, through a copy of the sandbox).
	const lone = join(root, "lone");
	const loneSessions = join(lone, "agent", "sessions", projectDirName(project));
	mkdirSync(loneSessions, { recursive: true });
	writeFileSync(join(loneSessions, CORRUPT), readFileSync(join(projectSessions, CORRUPT)));
	const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: join(lone, "agent") };
	delete env.PI_CODING_AGENT_SESSION_DIR;
	const run = replayCommand(["--mine"], { cwd: project, env });
	assert.equal(run.status, 2, run.stderr);
	assert.equal(run.stdout, `2026-04-01 08:00:00: skipped, ${NO_HEADER}\n`);
	assert.equal(run.stderr, `context-fold replay: the one session found in ${loneSessions} could not be replayed\n`);
	assert.deepEqual(snapshot(agent), before);
});

test("--mine, --last and --all-projects go together and take no session file", () => {
	assert.deepEqual(parseArgs(["--mine"]).mine, { last: DEFAULT_LAST, allProjects: false });
	assert.deepEqual(
		parseArgs(["--mine"]).policies.map((p) => p.name),
		["pi", "context-fold"],
	);
	assert.deepEqual(parseArgs(["--mine", "--last", "3", "--all-projects"]).mine, { last: 3, allProjects: true });
	assert.deepEqual(
		parseArgs(["--mine", "--policy", "pi,compact-only"]).policies.map((p) => p.name),
		["pi", "compact-only"],
	);
	assert.equal(parseArgs(["a.jsonl"]).mine, undefined);
	// --set is repeatable, a knob at a time; a flag given twice is the flag.
	assert.ok(parseArgs(["a.jsonl", "--set", "hotTail=4000", "--set", "coldTail=2000", "--json", "--json"]).json);
	// The default list as --help prints it, pasted: spaces around the names are no part of them.
	assert.deepEqual(
		parseArgs(["a.jsonl", "--policy", "pi, context-fold , compact-only"]).policies.map((p) => p.name),
		["pi", "context-fold", "compact-only"],
	);
	const mistakes: [string[], string][] = [
		[["a.jsonl", "--last", "2"], "--last goes with --mine"],
		[["a.jsonl", "--all-projects"], "--all-projects goes with --mine"],
		[["--mine", "--last", "0"], "--last takes a whole number ≥ 1"],
		[["--mine", "--last", "two"], "--last takes a whole number ≥ 1"],
		[["--mine", "x.jsonl"], "--mine finds the sessions itself: give no session file"],
		// Numbers are plain decimals, as the usage writes them: no exponent, no hex, none left empty.
		[["a.jsonl", "--window", "1e5"], "--window takes a whole number from 1000 to 100000000"],
		[["a.jsonl", "--window", "0x10000"], "--window takes a whole number from 1000 to 100000000"],
		[["a.jsonl", "--window", " 5000"], "--window takes a whole number from 1000 to 100000000"],
		[["a.jsonl", "--window", "1000000000000000000000"], "--window takes a whole number from 1000 to 100000000"],
		[["a.jsonl", "--jobs", "2e0"], "--jobs takes a whole number ≥ 1"],
		// An empty name in the list, or a session file named twice (its report would print twice).
		[["a.jsonl", "--policy", ","], "--policy takes names separated by commas, none of them empty"],
		[["a.jsonl", "--policy", "pi,"], "--policy takes names separated by commas, none of them empty"],
		[["a.jsonl", "b.jsonl", "a.jsonl"], "session file a.jsonl given twice: each is replayed once"],
		// A policy under two spellings would replay twice, two identical rows.
		[["a.jsonl", "--policy", "pi,pi"], "--policy names pi twice"],
		[["a.jsonl", "--policy", "context-fold:LADDER,context-fold:ladder"], "--policy names context-fold:ladder twice"],
		[["a.jsonl", "--policy", "mask-last-7,mask-last-07"], "--policy names mask-last-07 twice"],
		// The same file under another spelling is the same file.
		[["a.jsonl", "b.jsonl", "./a.jsonl"], "session file ./a.jsonl given twice: each is replayed once"],
		[["a.jsonl", "--set", "trigger="], "--set trigger takes a whole number ≥ 0"],
		// clear-tool-uses counts tool uses and tokens: a fraction is no count.
		[["a.jsonl", "--set", "keep=1.5"], "--set keep takes a whole number ≥ 0"],
		[["a.jsonl", "--set", "trigger=0.5"], "--set trigger takes a whole number ≥ 0"],
		// A knob value the extension would refuse, or a knob it does not know, would replay the default unseen.
		[
			["a.jsonl", "--set", "foldAt=5"],
			"--set foldAt=5 is not a valid fraction (a number in (0, 1] or a percentage such as 45%)",
		],
		[["a.jsonl", "--set", "foldat=0.5"], "--set foldat is not a context-fold setting (did you mean foldAt?)"],
		// An option's forgotten value does not take the next option; a one-dash option is no file.
		[["a.jsonl", "--price", "--json"], "--price needs a value"],
		[["a.jsonl", "--policy", "--wide"], "--policy needs a value"],
		[["a.jsonl", "-x"], "unknown option -x"],
		// An option given twice would replay one of its values unseen.
		[
			["a.jsonl", "--policy", "pi", "--policy", "context-fold"],
			"--policy given twice: name every policy in one comma list",
		],
		[["a.jsonl", "--price", "openai", "--price", "anthropic-1h"], "--price given twice: give it once"],
		[["a.jsonl", "--window", "140000", "--window", "140000"], "--window given twice: give it once"],
		[["a.jsonl", "--html", "a.html", "--html", "b.html"], "--html given twice: give it once"],
		[["a.jsonl", "--set", "hotTail=4000", "--set", "hotTail=9000"], "--set hotTail given twice: give each knob once"],
		[["a.jsonl", "--set", "keep=2", "--set", "keep=4"], "--set keep given twice: give each knob once"],
	];
	for (const [args, problem] of mistakes) {
		assert.throws(
			() => parseArgs(args),
			(error) => error instanceof UsageError && error.message === problem,
		);
	}
});

test("the project's session directory is the one Pi itself makes and lists", async () => {
	const sandbox = join(root, "pi-own");
	await withEnv(join(sandbox, "agent"), undefined, async () => {
		const cwd = join(root, "a project: with/odd\\names");
		mkdirSync(cwd, { recursive: true });
		const store = sessionStore(cwd);
		assert.equal(store.shared, false);
		// Pi's SessionManager.create makes the project's directory (the sandbox's, here).
		assert.equal(SessionManager.create(cwd).getSessionDir(), store.dir);
		mkdirSync(join(sandbox, "agent", "sessions", projectDirName(other)), { recursive: true });
		put(join(store.dir, NEWEST), trimmed("debug-branchy.jsonl", 13, cwd), 3);
		put(join(store.dir, OLDEST), trimmed("refactor-long.jsonl", 11, cwd), 2);
		put(join(store.dir, CORRUPT), "not a session\n", 1);
		put(
			join(sandbox, "agent", "sessions", projectDirName(other), OTHER),
			trimmed("debug-branchy.jsonl", 13, other),
			4,
		);
		const listed = (await SessionManager.list(cwd, store.dir)).map((s) => s.path);
		const found = findSessions(cwd, { last: 10, allProjects: false }).files;
		assert.deepEqual(found, [join(store.dir, NEWEST), join(store.dir, OLDEST), join(store.dir, CORRUPT)]);
		// Every session Pi lists, and the file it leaves out (for the replay to report skipped).
		assert.deepEqual(listed.sort(), [join(store.dir, OLDEST), join(store.dir, NEWEST)]);
		const everywhere = (await SessionManager.listAll()).map((s) => s.path).sort();
		const all = findSessions(cwd, { last: 10, allProjects: true });
		assert.equal(all.where, join(sandbox, "agent", "sessions"));
		assert.equal(all.files[0], join(sandbox, "agent", "sessions", projectDirName(other), OTHER), "newest first");
		assert.deepEqual(all.files.filter((f) => f !== join(store.dir, CORRUPT)).sort(), everywhere);
		assert.deepEqual(findSessions(cwd, { last: 2, allProjects: true }).files.length, 2);
	});
});

test("a shared session directory (PI_CODING_AGENT_SESSION_DIR, or the sessionDir setting) holds this project's by header", async () => {
	const sandbox = join(root, "shared");
	const shared = join(sandbox, "all-sessions");
	mkdirSync(shared, { recursive: true });
	put(join(shared, NEWEST), trimmed("debug-branchy.jsonl", 13, project), 3);
	put(join(shared, OTHER), trimmed("debug-branchy.jsonl", 13, other), 2);
	put(join(shared, CORRUPT), "not a session\n", 1);
	await withEnv(join(sandbox, "agent"), shared, async () => {
		const store = sessionStore(project);
		assert.deepEqual(store, { dir: shared, shared: true, root: join(sandbox, "agent", "sessions") });
		const found = findSessions(project, { last: 10, allProjects: false }).files;
		assert.deepEqual(found, [join(shared, NEWEST)]);
		assert.deepEqual(
			(await SessionManager.list(project, shared)).map((s) => s.path),
			found,
		);
		assert.deepEqual(findSessions(project, { last: 10, allProjects: true }).files, [
			join(shared, NEWEST),
			join(shared, OTHER),
			join(shared, CORRUPT),
		]);
	});
	// The same directory named by the setting: the project's settings over the agent directory's.
	mkdirSync(join(sandbox, "agent"), { recursive: true });
	writeFileSync(join(sandbox, "agent", "settings.json"), JSON.stringify({ sessionDir: join(sandbox, "elsewhere") }));
	await withEnv(join(sandbox, "agent"), undefined, () => {
		assert.equal(sessionStore(other).dir, join(sandbox, "elsewhere"));
		mkdirSync(join(other, ".pi"), { recursive: true });
		writeFileSync(join(other, ".pi", "settings.json"), JSON.stringify({ sessionDir: "../shared/all-sessions" }));
		try {
			assert.equal(sessionStore(other).dir, shared, "relative to the project");
			assert.deepEqual(findSessions(other, { last: 10, allProjects: false }).files, [join(shared, OTHER)]);
		} finally {
			rmSync(join(other, ".pi"), { recursive: true });
		}
	});
});

test("labels: the start time in a Pi session file's name, else the name; with the project's name", () => {
	assert.equal(sessionLabel(join(projectSessions, NEWEST)), "2026-04-08 13:02:44");
	assert.equal(sessionLabel(join(projectSessions, NEWEST), true), "chartkit 2026-04-08 13:02:44");
	assert.equal(sessionLabel("/x/--home-u-proj--/notes.jsonl"), "notes.jsonl");
	assert.equal(sessionLabel("/x/--home-u-proj--/notes.jsonl", true), "--home-u-proj-- notes.jsonl");
	// A session run at the root, and one recorded on Windows: each still names its project.
	const dir = mkdtempSync(join(tmpdir(), "cf-label-"));
	try {
		const at = (cwd: string) => {
			const file = join(dir, "2026-04-02T10-00-00-000Z_s.jsonl");
			writeFileSync(
				file,
				`${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-04-02T10:00:00.000Z", cwd })}\n`,
			);
			return sessionLabel(file, true);
		};
		assert.equal(at("/"), "/ 2026-04-02 10:00:00");
		assert.equal(at("C:\\Users\\me\\AgentPlayer0"), "AgentPlayer0 2026-04-02 10:00:00");
		// A session whose header cannot be read is named after its directory's other sessions, as one project.
		const torn = join(dir, "2026-04-03T10-00-00-000Z_t.jsonl");
		writeFileSync(torn, '{"type":"session","cwd":\n');
		assert.equal(sessionLabel(torn, true), "AgentPlayer0 2026-04-03 10:00:00");
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("the total report sums each policy's figures and weighs visibility by references", () => {
	const template = FIXED_REPORT[0].policies[0];
	/** One session's report: plain Pi and context-fold, with the figures given. */
	const session = (name: string, pi: Partial<PolicyFigures>, fold: Partial<PolicyFigures>): SessionReport => ({
		...FIXED_REPORT[0],
		session: name,
		policies: [
			{ ...template, policy: "pi", divergences: {}, ...pi },
			{ ...template, policy: "context-fold", divergences: {}, foresight: null, ...fold },
		],
	});
	const total = totalReport(
		[
			session(
				"one",
				{ cost: 1000, references: 10, visibility: 1, requests: 5, peakPrompt: 9000 },
				{ cost: 400, references: 10, visibility: 0.9, recallsNeeded: 1, divergences: { "missing reply": 1 } },
			),
			session(
				"two",
				{ cost: 3000, references: 30, visibility: 0.9, requests: 7, peakPrompt: 15000, advisories: 2 },
				{ cost: 1600, references: 30, visibility: 0.5, recallsNeeded: 2, divergences: { "missing reply": 2 } },
			),
		],
		"total",
	);
	assert.equal(total.session, "total");
	assert.equal(total.price, FIXED_REPORT[0].price);
	const [pi, fold] = total.policies;
	assert.deepEqual([pi.policy, fold.policy], ["pi", "context-fold"]);
	assert.equal(pi.cost, 4000);
	assert.equal(fold.cost, 2000);
	assert.equal(pi.costRatio, 1);
	assert.equal(fold.costRatio, 0.5);
	assert.equal(pi.requests, 12);
	assert.equal(pi.peakPrompt, 15000, "the highest peak, not a sum");
	assert.equal(pi.advisories, 2);
	assert.equal(fold.references, 40);
	// 9 of 10 and 15 of 30 references seen: 24 of 40.
	assert.ok(Math.abs(fold.visibility - 24 / 40) < 1e-12);
	assert.ok(Math.abs(pi.visibility - 37 / 40) < 1e-12);
	assert.equal(fold.recallsNeeded, 3);
	assert.deepEqual(fold.divergences, { "missing reply": 3 });
	assert.deepEqual(pi.divergences, {});
	assert.equal(pi.foresight, null, "per-session detail is left out of the total");
	assert.deepEqual(pi.series, []);
});
