/**
 * What `context-fold replay` shows the person running it. A file that is not a Pi session (no
 * session header, an empty file, a header and nothing to replay, a missing path) stops the command
 * with one line on stderr and exit 2, before any replay. A replay reads like a report: first a verdict
 * line per session for the default context-fold run, then a table that fits 100 columns (`--wide`
 * shows every column); on stderr, when it is not a terminal, nothing at all, and on a terminal one
 * progress line rewritten in place (none with `--quiet`). The replayed extension's advisories (the
 * reset flag debug-branchy raises in a 32k window: "consider /fold-handoff") reach neither stream:
 * they are counted under the table and in `--json`. A `--set` knob the extension would ignore is
 * said on stderr.
 */
import assert from "node:assert/strict";
import { constants as bufferConstants } from "node:buffer";
import { execFileSync, spawnSync } from "node:child_process";
import {
	closeSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	symlinkSync,
	truncateSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { visibleWidth } from "@earendil-works/pi-tui";
import { projectDirName } from "../../src/replay/mine.ts";
import { parseArgs, UsageError } from "../../src/replay/options.ts";
import { ProgressLine } from "../../src/replay/progress.ts";
import { type PolicyFigures, type SessionReport, withRatios } from "../../src/replay/report.ts";
import { NOT_REQUESTED, report, table, tableCells, verdict } from "../../src/replay/report-text.ts";
import { BIN, replayCommand, replayInProcess } from "./replay-command.ts";
import { FIXED_REPORT } from "./report-fixture.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const DEBUG_BRANCHY = fileURLToPath(new URL("../fixtures/sessions/debug-branchy.jsonl", import.meta.url));

/** `context-fold replay` with `args`, its stderr not a terminal. */
function replay(...args: string[]) {
	return replayCommand(args);
}

test("the user's CONTEXTFOLD variables change no figure: they are named on stderr and left out", async () => {
	const args = [DEBUG_BRANCHY, "--window", "32000", "--policy", "pi,context-fold", "--quiet"];
	// The clean run through the command's main here, the one with the variables through the command.
	const clean = await withoutOwnInProcess(() => replayInProcess(args));
	const own = replayCommand(args, {
		env: { ...withoutOwn(process.env), CONTEXTFOLD: "0", CONTEXTFOLD_POLICY: "ladder" },
	});
	assert.equal(clean.status, 0, clean.stderr);
	assert.equal(own.status, 0, own.stderr);
	assert.equal(own.stdout, clean.stdout, "the same report");
	assert.match(clean.stdout, /context-fold 0\.35× plain Pi's cost/);
	// docs/replay.md shows this run's verdict line as its example.
	const docs = readFileSync(fileURLToPath(new URL("../../docs/replay.md", import.meta.url)), "utf8");
	assert.ok(docs.includes(`\n${clean.stdout.split("\n")[0]}\n`), "docs/replay.md quotes the verdict line");
	assert.equal(
		own.stderr,
		"context-fold replay: ignoring CONTEXTFOLD, CONTEXTFOLD_POLICY from your environment: the replay's knobs are its --set ones\n",
	);
});

test("no file of the user's agent directory changes a figure (0.5.1's settings file among them)", async () => {
	const agent = mkdtempSync(join(tmpdir(), "cf-agent-"));
	try {
		writeFileSync(join(agent, "context-fold.json"), "{}");
		const args = [DEBUG_BRANCHY, "--window", "32000", "--policy", "pi,context-fold", "--quiet"];
		const clean = await withoutOwnInProcess(() => replayInProcess(args));
		const own = replayCommand(args, { env: { ...withoutOwn(process.env), PI_CODING_AGENT_DIR: agent } });
		assert.equal(own.status, 0, own.stderr);
		assert.equal(own.stdout, clean.stdout, "the same report");
	} finally {
		rmSync(agent, { recursive: true, force: true });
	}
});

test("a reader that stops early (`| head`) ends the command quietly", () => {
	// The shell's own pipe into head, as a user types it: the command's stdout closes under it.
	const run = spawnSync(
		"bash",
		[
			"-c",
			`"${process.execPath}" "$0" replay "$1" --json --quiet | head -c 1; exit \${PIPESTATUS[0]}`,
			BIN,
			DEBUG_BRANCHY,
		],
		{
			encoding: "utf8",
			env: withoutOwn(process.env),
		},
	);
	assert.equal(run.stdout, "[");
	assert.doesNotMatch(run.stderr, /EPIPE|Error/, run.stderr);
	assert.equal(run.status, 0, run.stderr);
});

test(
	"a report that cannot be written (a full disk) is said in one line; a full stderr stops nothing",
	{
		skip: existsSync("/dev/full") ? false : "no /dev/full here",
	},
	() => {
		const full = openSync("/dev/full", "w");
		try {
			const args = [BIN, "replay", DEBUG_BRANCHY, "--policy", "pi", "--json", "--quiet"];
			const env = withoutOwn(process.env);
			const out = spawnSync(process.execPath, args, { encoding: "utf8", env, stdio: ["ignore", full, "pipe"] });
			assert.equal(out.status, 1);
			assert.match(out.stderr, /^context-fold replay: the report could not be written to stdout: ENOSPC[^\n]*\n$/);
			const err = spawnSync(process.execPath, args, { encoding: "utf8", env, stdio: ["ignore", "pipe", full] });
			assert.equal(err.status, 0);
			assert.ok(JSON.parse(err.stdout).length === 1, "the whole report on stdout");
		} finally {
			closeSync(full);
		}
	},
);

test("as the checkout's npm script, relative paths mean the directory npm was run in", () => {
	const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));
	const root = fileURLToPath(new URL("../../", import.meta.url));
	const run = spawnSync(
		"npm",
		["--prefix", root, "run", "-s", "replay", "--", "sessions/debug-branchy.jsonl", "--policy", "pi", "--quiet"],
		{ cwd: fixtures, encoding: "utf8", env: withoutOwn(process.env) },
	);
	assert.equal(run.status, 0, run.stderr);
	assert.match(run.stdout, /^debug-branchy\.jsonl — /m);
});

test("the command finds Pi's version under a directory of the user's named dist, and refuses one below 1.6", () => {
	const root = mkdtempSync(join(tmpdir(), "cf-dist-"));
	try {
		const project = join(root, "dist", "project");
		const bin = join(project, "node_modules", "context-fold", "bin");
		mkdirSync(bin, { recursive: true });
		writeFileSync(
			join(bin, "context-fold.mjs"),
			readFileSync(new URL("../../bin/context-fold.mjs", import.meta.url)),
		);
		const pi = join(project, "node_modules", "@earendil-works", "pi-coding-agent");
		mkdirSync(join(pi, "dist"), { recursive: true });
		writeFileSync(join(pi, "dist", "index.js"), "");
		const installPi = (version: string) =>
			writeFileSync(
				join(pi, "package.json"),
				JSON.stringify({ name: "@earendil-works/pi-coding-agent", version, exports: { ".": "./dist/index.js" } }),
			);
		const run = () =>
			spawnSync(process.execPath, [join(bin, "context-fold.mjs"), "replay", "x.jsonl"], { encoding: "utf8" });
		installPi("1.6.0");
		// Past the version check the stand-in has no replay to load: any error but the version's will do.
		assert.doesNotMatch(run().stderr, /needs @earendil-works\/pi-coding-agent >= 1\.6/);
		installPi("1.5.2");
		const refused = run().stderr;
		assert.match(refused, /needs @earendil-works\/pi-coding-agent >= 1\.6 installed beside it \(found 1\.5\.2\)/);
		assert.doesNotMatch(refused, /npm ci/, "installed as a package, there is no checkout to set up");
		// As `pi install` leaves it: no Pi beside the copy. Help says what the command is and why no more.
		rmSync(pi, { recursive: true, force: true });
		const none = run();
		assert.equal(none.status, 1);
		assert.match(
			none.stderr,
			/\(found none\); a copy Pi installed \(pi install\) has none beside it: install the package with npm/,
		);
		const help = spawnSync(process.execPath, [join(bin, "context-fold.mjs"), "replay", "--help"], {
			encoding: "utf8",
		});
		assert.equal(help.status, 0, help.stderr);
		assert.match(help.stdout, /^usage: context-fold replay <session\.jsonl…> \[options\]/);
		assert.match(help.stdout, /run the replay from a checkout \(docs\/replay\.md\)/);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
});

test("from a checkout without npm ci, the command says to run npm ci there", () => {
	const root = mkdtempSync(join(tmpdir(), "cf-checkout-"));
	try {
		mkdirSync(join(root, "bin"));
		writeFileSync(join(root, "package.json"), JSON.stringify({ name: "context-fold", type: "module" }));
		writeFileSync(
			join(root, "bin", "context-fold.mjs"),
			readFileSync(new URL("../../bin/context-fold.mjs", import.meta.url)),
		);
		const run = spawnSync(process.execPath, [join(root, "bin", "context-fold.mjs"), "replay", "s.jsonl"], {
			encoding: "utf8",
		});
		assert.equal(run.status, 1);
		assert.match(run.stderr, /installed beside it \(found none\); in a checkout, run `npm ci` there first/);
		assert.doesNotMatch(run.stderr, /pi install/, "a checkout is no copy Pi installed");
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
});

/** `env` without context-fold's variables (a test run may carry some). */
function withoutOwn(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("CONTEXTFOLD")));
}

/** Runs `fn` with context-fold's variables out of this process's environment, then puts them back. */
async function withoutOwnInProcess<T>(fn: () => Promise<T>): Promise<T> {
	const own = Object.entries(process.env).filter(([name]) => name.startsWith("CONTEXTFOLD"));
	for (const [name] of own) delete process.env[name];
	try {
		return await fn();
	} finally {
		for (const [name, value] of own) process.env[name] = value;
	}
}

test("a file that is not a Pi session, an empty file, one with nothing to replay and a missing path exit 2 with one line", async () => {
	const dir = mkdtempSync(join(tmpdir(), "replay-input-"));
	try {
		const header = { type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/x" };
		const message = { type: "message", id: "m", parentId: null, message: { role: "user", content: "hi" } };
		const cases: [string, string | undefined, string][] = [
			["events.jsonl", `${JSON.stringify({ event: "click", x: 1 })}\n`, "not a Pi session: its first JSON line"],
			["headless.jsonl", `${JSON.stringify(message)}\n`, "not a Pi session: its first JSON line"],
			["notes.jsonl", "just some notes\n", "not a Pi session: no line of it is a JSON object"],
			["numbers.jsonl", "[1,2,3]\nnull\n", "not a Pi session: no line of it is a JSON object"],
			// Pi keeps a number as the file's first entry, and then opens no session: no header follows it.
			[
				"value-first.jsonl",
				`1\n${JSON.stringify(header)}\n${JSON.stringify(message)}\n`,
				"not a Pi session: its first JSON line",
			],
			["bom.jsonl", `\uFEFF${JSON.stringify(header)}\n`, "starts with a UTF-8 byte-order mark"],
			["torn.jsonl", `${JSON.stringify(header)}\n{"type":"message","id":"m","mess\n`, "(line 2 not a JSON object"],
			["dir.jsonl", undefined, "a directory, not a session file"],
			["empty.jsonl", "", "empty file, not a Pi session"],
			["header-only.jsonl", `${JSON.stringify(header)}\n`, "without a user message: nothing to replay"],
			[
				"no-reply.jsonl",
				`${JSON.stringify(header)}\n${JSON.stringify(message)}\n`,
				"without a recorded reply of the model: nothing to replay",
			],
			["missing.jsonl", undefined, "no such file"],
			// Past Node's longest string (a sparse file: nothing is read before the refusal).
			["huge.jsonl", `${JSON.stringify(header)}\n`, "too large to replay ("],
		];
		for (const [k, [name, text, problem]] of cases.entries()) {
			const file = join(dir, name);
			if (text !== undefined) writeFileSync(file, text);
			if (name === "dir.jsonl") mkdirSync(file);
			if (name === "huge.jsonl") truncateSync(file, bufferConstants.MAX_STRING_LENGTH + 1);
			// The first through the command itself, the rest through its main here (each refused before any replay).
			const run = k === 0 ? replay(file, "--policy", "pi") : await replayInProcess([file, "--policy", "pi"]);
			assert.equal(run.status, 2, `${name}: ${run.stderr}`);
			assert.equal(run.stdout, "", name);
			const lines = run.stderr.split("\n").filter((l) => l !== "");
			assert.equal(lines.length, 1, `${name}: one line, not ${JSON.stringify(run.stderr)}`);
			assert.ok(lines[0].startsWith(`context-fold replay: ${file}: `), lines[0]);
			assert.ok(lines[0].includes(problem), `${name}: ${lines[0]}`);
			assert.doesNotMatch(lines[0], /ENOENT|\bat \//, `${name}: no raw error`);
		}
		// A good session after a bad one does not run first: the bad one is refused before any replay.
		const good = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
		good.add(1, { role: "user", content: [{ type: "text", text: "hi" }] });
		good.add(2, { role: "assistant", content: [{ type: "text", text: "hello" }], stopReason: "stop" });
		writeFileSync(join(dir, "good.jsonl"), good.text());
		const mixed = await replayInProcess([join(dir, "good.jsonl"), join(dir, "missing.jsonl"), "--policy", "pi"]);
		assert.equal(mixed.status, 2);
		assert.equal(mixed.stdout, "");
		// A knob the replayed extension would not know stops the command: it would replay the default unseen.
		const typo = replay(join(dir, "good.jsonl"), "--policy", "context-fold", "--set", "hottail=5000");
		assert.equal(typo.status, 2, typo.stderr);
		assert.equal(typo.stdout, "");
		assert.ok(
			typo.stderr.startsWith(
				"context-fold replay: --set hottail is not a context-fold setting (did you mean hotTail?)\n",
			),
			typo.stderr,
		);
		const proto = await replayInProcess([
			join(dir, "good.jsonl"),
			"--policy",
			"context-fold",
			"--set",
			"__proto__=1",
		]);
		assert.equal(proto.status, 2, proto.stderr);
		assert.match(proto.stderr, /--set __proto__ is not a context-fold setting \(known: /);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("--html never overwrites a session, replayed or not, nor takes an option for its name; an unwritable page keeps the figures, and twin names are told apart", async () => {
	const dir = mkdtempSync(join(tmpdir(), "replay-html-"));
	try {
		const good = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
		good.add(1, { role: "user", content: [{ type: "text", text: "hi" }] });
		good.add(2, { role: "assistant", content: [{ type: "text", text: "hello" }], stopReason: "stop" });
		const file = join(dir, "s.jsonl");
		writeFileSync(file, good.text());
		const linked = join(dir, "link.html");
		symlinkSync(file, linked);
		for (const target of [file, join(dir, ".", "s.jsonl"), linked]) {
			const run = await replayInProcess([file, "--policy", "pi", "--html", target]);
			assert.equal(run.status, 2, run.stderr);
			assert.equal(run.stdout, "");
			assert.match(
				run.stderr,
				/is the session file .*s\.jsonl, which the report would overwrite; give another file\n$/,
			);
			assert.equal(readFileSync(file, "utf8"), good.text(), "the session file is untouched");
		}
		// The same name in two folders: each session is named by its path, as given.
		mkdirSync(join(dir, "b"));
		const twin = join(dir, "b", "s.jsonl");
		writeFileSync(twin, good.text());
		const twins = await replayInProcess([file, twin, "--policy", "pi", "--json"]);
		assert.deepEqual(
			(JSON.parse(twins.stdout) as { session: string }[]).map((r) => r.session),
			[file, twin],
		);
		// A forgotten report name: the next argument is an option, or another session, never overwritten.
		const other = join(dir, "other.jsonl");
		writeFileSync(other, good.text());
		for (const args of [
			["--html", other, file],
			[file, "--html", "--json"],
			[file, "--html", ""],
		]) {
			const run = await replayInProcess([...args, "--policy", "pi"]);
			assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
			assert.equal(run.stdout, "");
			assert.match(
				run.stderr,
				/--html (needs a file name|.*other\.jsonl is a Pi session file, which the report would overwrite)/,
			);
			assert.equal(readFileSync(other, "utf8"), good.text(), "the other session is untouched");
		}
		// A page that cannot be written there is refused before any replay, not after it; a named pipe
		// would block the write until something read it.
		const fifo = join(dir, "pipe.html");
		const piped = spawnSync("mkfifo", [fifo]).status === 0;
		for (const [html, why] of [
			[join(dir, "no-such-dir", "r.html"), "is in a directory that does not exist"],
			[dir, "is a directory"],
			...(piped ? [[fifo, "is a pipe or a socket, which the report would wait on"]] : []),
		]) {
			const unwritable = replay(file, "--policy", "pi", "--html", html);
			assert.equal(unwritable.status, 2);
			assert.equal(unwritable.stdout, "", "nothing was replayed");
			assert.equal(unwritable.stderr, `context-fold replay: --html ${html} ${why}; give another file\n`);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("names that Object.prototype holds are no price model, and a session with a tool so named is refused", async () => {
	for (const price of ["toString", "constructor", "__proto__"])
		assert.throws(() => parseArgs(["s.jsonl", "--price", price]), UsageError, price);
	const dir = mkdtempSync(join(tmpdir(), "replay-tool-names-"));
	try {
		for (const tool of ["mytool", "constructor", "__proto__", "toString"]) {
			const session = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
			session.add(1, { role: "user", content: [{ type: "text", text: "go" }] });
			const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };
			const call = { type: "toolCall", id: "t", name: tool, arguments: {} };
			session.add(2, { role: "assistant", content: [call], stopReason: "toolUse", usage });
			const result = [{ type: "text", text: "the recorded result" }];
			session.add(3, { role: "toolResult", toolCallId: "t", toolName: tool, content: result, isError: false });
			session.add(4, { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop", usage });
			const file = join(dir, `${tool}.jsonl`);
			writeFileSync(file, session.text());
			// One refusal through the command, the rest through its main here.
			const run =
				tool === "constructor" ? replay(file, "--policy", "pi") : await replayInProcess([file, "--policy", "pi"]);
			if (tool === "mytool") {
				assert.equal(run.status, 0, run.stderr);
				continue;
			}
			// Pi 1.6 itself cannot start a run with such a tool (its prompt guidelines are looked up by name).
			assert.equal(run.status, 2, `${tool}: ${run.stderr}`);
			assert.equal(
				run.stderr,
				`context-fold replay: ${file}: a recorded tool is named "${tool}", a name Pi 1.6 cannot load\n`,
			);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test(
	"a FIFO named like a session is refused at once, never waited on (alone and under --mine)",
	{
		skip: process.platform === "win32" ? "no mkfifo on Windows" : false,
	},
	() => {
		const dir = mkdtempSync(join(tmpdir(), "replay-fifo-"));
		try {
			const fifo = join(dir, "pipe.jsonl");
			execFileSync("mkfifo", [fifo]);
			// Bounded: a replay that opened the FIFO would wait for a writer, deaf to signals but SIGKILL.
			const bounded = { timeout: 60_000, killSignal: "SIGKILL" as const };
			const alone = replayCommand([fifo, "--policy", "pi"], bounded);
			assert.equal(alone.signal, null, "the replay waited on the FIFO until it was killed");
			assert.equal(alone.status, 2, alone.stderr);
			assert.equal(
				alone.stderr,
				`context-fold replay: ${fifo}: not a regular file (a pipe or a device: save the session to a file and replay that)\n`,
			);
			// --mine lists the session files of the project's directory: the FIFO among them is skipped.
			const agent = join(dir, "agent");
			const project = join(dir, "project");
			mkdirSync(project);
			const sessions = join(agent, "sessions", projectDirName(project));
			mkdirSync(sessions, { recursive: true });
			execFileSync("mkfifo", [join(sessions, "2026-01-02T00-00-00-000Z_odd.jsonl")]);
			const mine = replayCommand(["--mine", "--policy", "pi"], {
				...bounded,
				cwd: project,
				env: { ...process.env, PI_CODING_AGENT_DIR: agent, PI_CODING_AGENT_SESSION_DIR: "" },
			});
			assert.equal(mine.signal, null, "--mine waited on the FIFO until it was killed");
			assert.match(mine.stderr + mine.stdout, /not a regular file/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	},
);

test("a replay prints the verdict first, a table within 100 columns, and no advisory of the replayed extension", async () => {
	// In a 24k window the default compacts once, and says so: an advisory to count, not to show.
	const run = replay(DEBUG_BRANCHY, "--window", "24000", "--policy", "pi,context-fold");
	assert.equal(run.status, 0, run.stderr);
	assert.equal(run.stderr, "", "stderr is not a terminal: no progress, and no advisory");
	assert.doesNotMatch(run.stdout, /reset flag|consider \/fold-handoff|context-fold: /, "no advisory on stdout");
	const lines = run.stdout.split("\n");
	assert.match(
		lines[0],
		/^debug-branchy\.jsonl: context-fold 0\.\d\d× plain Pi's cost, \d+\.\d% of references visible \(plain Pi \d+\.\d%\), \d+ recalls?$/,
	);
	assert.ok(
		lines.includes("advisories from the replayed extension (counted, not shown): context-fold ×1"),
		run.stdout,
	);
	for (const line of lines.slice(1)) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
	// The same replay's JSON through the command's main here (the command prints --json in other tests).
	const json = await replayInProcess([DEBUG_BRANCHY, "--window", "24000", "--policy", "pi,context-fold", "--json"]);
	assert.equal(json.stderr, "");
	const [session] = JSON.parse(json.stdout) as SessionReport[];
	assert.deepEqual(
		session.policies.map((p) => [p.policy, p.advisories]),
		[
			["pi", 0],
			["context-fold", 1],
		],
	);
});

/** The fixed report's session with a figures row per default policy, costs in the millions. */
function everyPolicy(): SessionReport {
	const [pi, fold] = FIXED_REPORT[0].policies;
	const names = ["context-fold", "context-fold:economic", "context-fold:working-set", "compact-only", "mask-last-5"];
	const big = (f: PolicyFigures, policy: string, scale: number): PolicyFigures => ({
		...f,
		policy,
		cost: f.cost * scale,
		costWithRecalls: f.costWithRecalls * scale,
		promptTokens: f.promptTokens * scale,
		hookMsP50: 12.5,
		hookMsP99: 140.25,
		advisories: policy === "context-fold" ? 3 : 0,
	});
	return {
		...FIXED_REPORT[0],
		session: "a-session-with-a-long-name.jsonl",
		policies: withRatios([big(pi, "pi", 1000), ...names.map((n, i) => big(fold, n, 900 - 100 * i))]),
	};
}

test("the table fits 100 columns by default and shows every column with --wide", () => {
	const session = everyPolicy();
	const brief = table(session.policies);
	for (const line of brief.split("\n")) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
	const { head: all } = tableCells(session.policies);
	const wide = table(session.policies, true);
	assert.ok(wide.split("\n")[0].length > 100, "the wide table is wider");
	for (const h of all) assert.ok(wide.split("\n")[0].includes(` ${h} `), `--wide shows ${h}`);
	assert.doesNotMatch(brief.split("\n")[0], /hook p50|cache read|advisories/, "the brief table leaves them out");
	// Overflow shows in the brief table while a policy overflowed, still within 100 columns.
	assert.doesNotMatch(brief.split("\n")[0], /overflow/);
	const overflowed = session.policies.map((f) => (f.policy === "pi" ? { ...f, overflowRejections: 38 } : f));
	const flagged = table(overflowed).split("\n");
	assert.match(flagged[0], /^\| policy +\| overflow \|/);
	assert.match(flagged[2], /^\| pi +\| 38 +\|/);
	for (const line of flagged) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
	// The wide table has the cost with recalls over plain Pi's, as the HTML table and its scatter have.
	const withRecalls = all.indexOf("cost+recalls × pi");
	assert.ok(withRecalls > all.indexOf("cost+recalls"), "--wide shows cost+recalls × pi");
	const [pi, , fold] = session.policies;
	assert.equal(
		tableCells(session.policies).rows[2][withRecalls],
		(fold.costWithRecalls / pi.costWithRecalls).toFixed(3),
	);
	assert.match(brief, /\nadvisories from the replayed extension \(counted, not shown\): context-fold ×3$/);
	assert.equal(parseArgs(["s.jsonl"]).wide, false);
	assert.equal(parseArgs(["s.jsonl", "--wide"]).wide, true);
	const text = report([session], false);
	assert.ok(text.startsWith(`${verdict(session)}\n\n`), "the verdict comes first");
	assert.ok(report([session], true).includes(wide), "--wide prints the wide table");
	// Without a verdict (plain Pi alone), the report starts with its table, no blank line above it.
	const alone = { ...session, policies: session.policies.filter((f) => f.policy === "pi") };
	assert.equal(verdict(alone), undefined);
	assert.ok(!report([alone], false).startsWith("\n"), "no blank first line");
});

test("the verdict speaks for the default context-fold run against plain Pi", () => {
	const session = withRatios(structuredClone(FIXED_REPORT[0].policies));
	const [pi, fold] = session;
	pi.visibility = 0.948;
	fold.visibility = 0.967;
	fold.recallsNeeded = 4;
	const ratio = (fold.cost / pi.cost).toFixed(2);
	assert.equal(
		verdict({ ...FIXED_REPORT[0], session: "s.jsonl", policies: session }),
		`s.jsonl: context-fold ${ratio}× plain Pi's cost, 96.7% of references visible (plain Pi 94.8%), 4 recalls`,
	);
	const economic = { ...fold, policy: "context-fold:economic", recallsNeeded: 1 };
	assert.match(
		verdict({ ...FIXED_REPORT[0], session: "s.jsonl", policies: [pi, economic] }) ?? "",
		/^s\.jsonl: context-fold:economic .*, 1 recall$/,
		"without the default run, another profile's",
	);
	assert.match(
		verdict({ ...FIXED_REPORT[0], session: "s.jsonl", policies: [{ ...fold, costRatio: null }] }) ?? "",
		/^s\.jsonl: context-fold cost [\d.]+k input-token equivalents, 96\.7% of references visible, 4 recalls$/,
		"without plain Pi, the cost itself",
	);
	assert.equal(verdict({ ...FIXED_REPORT[0], policies: [pi] }), undefined, "plain Pi alone has no verdict");
	const cut = { ...fold, divergences: { "recorded replies not requested": 8 } };
	assert.equal(
		verdict({ ...FIXED_REPORT[0], session: "s.jsonl", policies: [pi, cut] }),
		`s.jsonl: context-fold ${ratio}× plain Pi's cost, 96.7% of references visible (plain Pi 94.8%), 4 recalls; 8 recorded replies not replayed (see the divergences)`,
		"a replay cut short says so in its verdict",
	);
	const broken = {
		...fold,
		divergences: { "recorded replies before a missing entry, off the branch Pi replays": 19, [NOT_REQUESTED]: 1 },
	};
	assert.match(
		verdict({ ...FIXED_REPORT[0], session: "s.jsonl", policies: [pi, broken] }) ?? "",
		/; 20 recorded replies not replayed \(see the divergences\)$/,
		"so does one whose file broke the branch: the replies before the break were never asked for",
	);
});

/** A stand-in for stderr that records what is written. */
function stream(isTTY: boolean, columns?: number) {
	const writes: string[] = [];
	return { isTTY, columns, writes, write: (text: string) => writes.push(text) };
}

test("progress is one line rewritten in place on a terminal, and nothing elsewhere or with --quiet", () => {
	const tty = stream(true, 40);
	const line = new ProgressLine(tty);
	line.update("replay 1/2, request 1/63: pi on s.jsonl");
	line.update("replay 1/2, request 2/63: pi on a-session-with-a-very-long-name.jsonl");
	line.clear();
	assert.equal(tty.writes.length, 3);
	for (const w of tty.writes) {
		assert.ok(w.startsWith("\r"), "each update returns to the line's start");
		assert.ok(!w.includes("\n"), "no new line");
		assert.ok(w.endsWith("\x1b[K"), "the rest of the line is erased");
	}
	assert.equal(tty.writes[1], "\rreplay 1/2, request 2/63: pi on a-sess…\x1b[K");
	assert.equal(tty.writes[2], "\r\x1b[K", "erased before the report");
	// A session named in wide characters is cut by the columns they take.
	line.update("replay 1/1, request 9/63: pi on 日本語のセッションファイルの名前.jsonl");
	const wide = (tty.writes.at(-1) ?? "").slice(1, -"\x1b[K".length);
	assert.ok(visibleWidth(wide) <= 39, `${visibleWidth(wide)} columns: ${wide}`);
	assert.ok(wide.endsWith("…"));
	const piped = stream(false);
	const quiet = stream(true);
	for (const s of [new ProgressLine(piped), new ProgressLine(quiet, true)]) {
		s.update("replay 1/1, request 1/1: pi on s.jsonl");
		s.clear();
	}
	assert.deepEqual([piped.writes, quiet.writes], [[], []]);
	assert.equal(parseArgs(["s.jsonl", "--quiet"]).quiet, true);
	assert.equal(parseArgs(["s.jsonl"]).quiet, false);
});

test("an option's value may follow `=` as well as a space; a flag or an unknown name so written is still refused", () => {
	const spaced = parseArgs([
		"s.jsonl",
		"--window",
		"140000",
		"--price",
		"openai",
		"--set",
		"useWindow=6",
		"--jobs",
		"2",
	]);
	const joined = parseArgs(["s.jsonl", "--window=140000", "--price=openai", "--set=useWindow=6", "--jobs=2"]);
	assert.deepEqual(joined, spaced);
	assert.equal(joined.window, 140_000);
	assert.throws(() => parseArgs(["s.jsonl", "--json=1"]), /unknown option --json=1/);
	assert.throws(() => parseArgs(["s.jsonl", "--widow=140000"]), /unknown option --widow=140000/);
});
