/**
 * context-fold writes only into the folders it owns, `<sessionDir>/context-fold/<id>/` and, for an
 * in-memory session's handoff seed, `<tmp>/context-fold-<uid>/in-memory/`: a symbolic link on the way, a
 * link or a FIFO in place of the seed index, or a session id of dots never carries a read or a
 * write anywhere else, and nothing hangs. Each case goes through a stub Pi's hooks and commands.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
	chownSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { userFolderName } from "../../src/adapters/pi/owned-files.ts";
import { bashSession, loadStub, type StubPi } from "./stub-pi.ts";

const dirs: string[] = [];
after(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = (): string => {
	const dir = mkdtempSync(join(tmpdir(), "cf-owned-"));
	dirs.push(dir);
	return dir;
};

/** A saved session in `<root>/sessions` with foldable results, started and folded once; `outside` beside it. */
async function foldedIn(root: string, id?: string): Promise<StubPi> {
	const sessions = join(root, "sessions");
	mkdirSync(sessions, { recursive: true });
	const stub = loadStub({ sessionDir: sessions, sessionFile: join(sessions, "s.jsonl") });
	if (id !== undefined) {
		stub.handlers.set("probe", [(_event, ctx) => ctx]);
		const [ctx] = await stub.emit("probe");
		(ctx as { sessionManager: { getSessionId: () => string } }).sessionManager.getSessionId = () => id;
	}
	bashSession(stub, 6);
	await stub.emit("session_start", { reason: "startup" });
	await stub.request();
	return stub;
}

const folds = (stub: StubPi): number =>
	stub.entries.filter((e) => (e.data as { kind?: string } | undefined)?.kind === "records").length;

describe("the session's own folder", () => {
	it("is not followed when it is a link: nothing is written where it points, and the session says so", async () => {
		const root = tempDir();
		const outside = join(root, "outside");
		mkdirSync(outside);
		mkdirSync(join(root, "sessions", "context-fold"), { recursive: true });
		symlinkSync(outside, join(root, "sessions", "context-fold", "stub"));
		const stub = await foldedIn(root);
		assert.equal(folds(stub), 0, "no fold event commits without its seed-index record");
		const handoff = await stub.command("fold-handoff", "go on");
		assert.deepEqual(readdirSync(outside), [], "nothing written through the link");
		assert.match(
			stub.stderr.join(""),
			/seed index .* cannot be read \(.*stub is a symbolic link, which is not followed\); .*a fold event goes on only if its record can be appended/,
		);
		assert.match(stub.stderr.join(""), /fold event rejected, .*stub is a symbolic link, which is not followed/);
		assert.match(
			handoff.stderr,
			/could not write the handoff seed: .*stub is a symbolic link, which is not followed/,
		);
	});

	it("does not append to a link in place of the seed index", async () => {
		const root = tempDir();
		const victim = join(root, "victim.txt");
		writeFileSync(victim, "mine\n");
		mkdirSync(join(root, "sessions", "context-fold", "stub"), { recursive: true });
		symlinkSync(victim, join(root, "sessions", "context-fold", "stub", "seed-index.jsonl"));
		const stub = await foldedIn(root);
		assert.equal(folds(stub), 0, "no fold event commits without its seed-index record");
		assert.equal(readFileSync(victim, "utf8"), "mine\n");
		assert.match(stub.stderr.join(""), /seed index .* cannot be read \(.*\)/);
	});

	it("of a session whose id is dots alone is a folder of its own, not the sessions folder", async () => {
		for (const id of ["..", "."]) {
			const root = tempDir();
			const stub = await foldedIn(root, id);
			await stub.command("fold-handoff", "go on");
			const sessions = join(root, "sessions");
			assert.ok(!existsSync(join(sessions, "seed-index.jsonl")), id);
			assert.ok(!existsSync(join(sessions, "context-fold", "seed-index.jsonl")), id);
			const own = readdirSync(join(sessions, "context-fold"));
			assert.equal(own.length, 1, id);
			assert.match(own[0], /^_+$/, id);
			const files = readdirSync(join(sessions, "context-fold", own[0]));
			assert.ok(files.includes("seed-index.jsonl") && files.some((f) => f.startsWith("handoff-")), id);
		}
	});

	it("with a FIFO in place of the seed index: the session starts at once, says so, keeps its records in memory", () => {
		const root = tempDir();
		const folder = join(root, "sessions", "context-fold", "stub");
		mkdirSync(folder, { recursive: true });
		const made = spawnSync("mkfifo", [join(folder, "seed-index.jsonl")]);
		if (made.status !== 0) return;
		// In a child process: a read that blocked on the FIFO would hang this one, timers and all.
		const stubModule = fileURLToPath(new URL("./stub-pi.ts", import.meta.url));
		const script = `
			const { bashSession, loadStub } = await import(${JSON.stringify(stubModule)});
			const sessions = ${JSON.stringify(join(root, "sessions"))};
			const stub = loadStub({ sessionDir: sessions, sessionFile: sessions + "/s.jsonl" });
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			await stub.request();
			process.stdout.write(stub.stderr.join(""));
		`;
		const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
			encoding: "utf8",
			timeout: 30_000,
			killSignal: "SIGKILL",
		});
		assert.equal(run.signal, null, "the child hung on the FIFO");
		assert.equal(run.status, 0, run.stderr);
		assert.match(run.stdout, /seed index .*seed-index\.jsonl cannot be read \(it is not a regular file\)/);
	});
});

describe("an in-memory session's handoff seed", () => {
	/** Runs `body` with the system's temporary folder at `dir`. */
	async function withTmp<T>(dir: string, body: () => Promise<T>): Promise<T> {
		const saved = process.env.TMPDIR;
		process.env.TMPDIR = dir;
		try {
			return await body();
		} finally {
			if (saved === undefined) delete process.env.TMPDIR;
			else process.env.TMPDIR = saved;
		}
	}

	async function handoff(): Promise<{ stdout: string; stderr: string }> {
		const stub = loadStub();
		bashSession(stub, 3);
		await stub.emit("session_start", { reason: "startup" });
		return stub.command("fold-handoff", "go on");
	}

	it("goes to a folder of the user's own, readable by the user alone", async () => {
		const tmp = tempDir();
		const printed = await withTmp(tmp, handoff);
		const path = printed.stderr.trim();
		assert.ok(path.startsWith(join(tmp, userFolderName(), "in-memory", "handoff-")), printed.stderr);
		assert.match(userFolderName(), /^context-fold-\S+$/);
		const { statSync } = await import("node:fs");
		assert.equal(statSync(join(tmp, userFolderName())).mode & 0o777, 0o700);
		assert.equal(statSync(path).mode & 0o077, 0, "no access for others");
	});

	it("is not stood in the way of by another user's folder there", async (t) => {
		const tmp = tempDir();
		// Another user's in-memory seeds, in a folder of theirs (0700), as 0.1's shared name left it.
		const theirs = join(tmp, "context-fold");
		mkdirSync(theirs, { mode: 0o700 });
		if (process.getuid?.() === 0) chownSync(theirs, 4242, 4242);
		else t.diagnostic("not root: the other user's folder is this user's own here");
		for (const uid of [4242, 4343]) mkdirSync(join(tmp, `context-fold-${uid}`), { mode: 0o700 });
		const printed = await withTmp(tmp, handoff);
		assert.doesNotMatch(printed.stderr, /could not write/);
		assert.ok(printed.stderr.trim().startsWith(join(tmp, userFolderName(), "in-memory")), printed.stderr);
	});

	it("is refused when the shared folder on the way is a link", async () => {
		const tmp = tempDir();
		const outside = join(tmp, "outside");
		mkdirSync(outside);
		symlinkSync(outside, join(tmp, userFolderName()));
		const printed = await withTmp(tmp, handoff);
		assert.match(
			printed.stderr,
			/could not write the handoff seed: .*context-fold-\S+ is a symbolic link, which is not followed/,
		);
		assert.deepEqual(readdirSync(outside), []);
	});
});
