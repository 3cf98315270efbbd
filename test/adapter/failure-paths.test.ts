/**
 * Failure paths through the hooks of a stub Pi (issue 26): each failure is made to happen (an editor
 * that refuses the draft, settings that cannot be read, an input hook that throws, a seed index that
 * cannot be read, a session file that cannot be read for recall, a parent session file damaged in
 * the middle) and the test checks that it is announced once, with a true message, and what the
 * extension then does. Also: nothing under src/ reads a test-only environment variable.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { FoldEngine } from "../../src/adapters/pi/fold/engine.ts";
import { ParentSession } from "../../src/adapters/pi/fold/parent-session.ts";
import { rebuildRegistry, skippedText } from "../../src/adapters/pi/fold/persistence.ts";
import { resolveCode } from "../../src/adapters/pi/fold/recall-sources.ts";
import { Ledger } from "../../src/adapters/pi/fold/session-ledger.ts";
import { ADVICE, KEEP_DRAFT } from "../../src/core/cache-advice.ts";
import { foldCode } from "../../src/core/digest.ts";
import { bashSession, exchangeAt, foldEntry, loadStub, type StubPi } from "./stub-pi.ts";

const dirs: string[] = [];
after(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = (): string => {
	const dir = mkdtempSync(join(tmpdir(), "cf-failure-"));
	dirs.push(dir);
	return dir;
};

/** The context object the stub passes to every handler, to break a part of it. */
async function contextOf(stub: StubPi): Promise<Record<string, unknown> & { ui: Record<string, unknown> }> {
	stub.handlers.set("probe", [(_event, ctx) => ctx]);
	const [ctx] = await stub.emit("probe");
	return ctx as Record<string, unknown> & { ui: Record<string, unknown> };
}

/** A terminal-UI session with confirmColdSend on, whose last 30k-token response ended ten minutes ago. */
async function coldTui(): Promise<StubPi> {
	const stub = loadStub();
	stub.settings = { "context-fold": { policy: "ladder", confirmColdSend: true } };
	stub.mode = "tui";
	stub.hasUI = true;
	stub.model = { provider: "fake", id: "fake-model" };
	exchangeAt(stub, Date.now() - 10 * 60_000, { input: 10, output: 5, cacheRead: 29_990, cacheWrite: 0 });
	await stub.emit("session_start", { reason: "resume" });
	return stub;
}

const notices = (stub: StubPi) => stub.ui.notices.map((n) => n.message);
const input = (stub: StubPi) => stub.emit("input", { text: "my long prompt", source: "interactive" });

/** Runs `body` and returns what the stub heard on stderr meanwhile (from hooks and tools alike). */
async function capturingStderr<T>(stub: StubPi, body: () => Promise<T>): Promise<{ result: T; stderr: string[] }> {
	const from = stub.stderr.length;
	const result = await body();
	return { result, stderr: stub.stderr.slice(from) };
}

/** The code of the first folded block in the stub's fold entries. */
function firstCode(stub: StubPi): string {
	const record = stub.entries.find((e) => (e.data as { kind?: string } | undefined)?.kind === "records");
	return (record?.data as { records: { code: string }[] }).records[0].code;
}

describe("Keep draft when the editor refuses the text", () => {
	it("sends nothing, says the draft was not kept and quotes its text", async () => {
		const stub = await coldTui();
		const ctx = await contextOf(stub);
		ctx.ui.setEditorText = () => {
			throw new Error("editor gone");
		};
		stub.ui.answers.push(KEEP_DRAFT);
		assert.deepEqual(await input(stub), [{ action: "handled" }], "nothing is sent, as the user asked");
		const said = notices(stub).at(-1) ?? "";
		assert.match(said, /^context-fold: draft NOT kept, the editor refused it \(editor gone\); nothing was sent\./);
		assert.ok(said.endsWith("Your text was:\nmy long prompt"), said);
		assert.equal(notices(stub).includes(ADVICE.keptDraft(0)), false, "never reported kept");
		assert.equal(stub.ui.notices.at(-1)?.level, "warning");
		await stub.command("context-fold", "status");
		const status = String(stub.ui.views.at(-1));
		assert.match(status, /Failures {2}1 announced[^\n]*\n +context-fold: draft NOT kept/, status);
		assert.ok(status.replace(/\n +/g, " ").includes("Your text was: my long prompt"), "the text, in the status too");
		// The same prompt refused again: the notice, which holds the text, is given again.
		stub.ui.answers.push(KEEP_DRAFT);
		const before = notices(stub).length;
		assert.deepEqual(await input(stub), [{ action: "handled" }]);
		assert.equal(notices(stub).length, before + 1, "told again");
		assert.ok(notices(stub).at(-1)?.endsWith("Your text was:\nmy long prompt"));
	});
});

describe("a seed passed as a prompt whose link fails", () => {
	it("lets the prompt through, links nothing and says so once", async () => {
		const stub = loadStub({ toolsAsRegistered: true });
		await stub.emit("session_start", { reason: "startup" });
		const ctx = await contextOf(stub);
		(ctx.sessionManager as Record<string, unknown>).getSessionFile = () => {
			throw new Error("session file unknown");
		};
		const prompt = "# context-fold handoff seed\n\nGoal: g\nParent session: /p/a.jsonl\nWritten: t\n";
		for (let i = 0; i < 2; i++)
			assert.deepEqual(await stub.emit("before_agent_start", { prompt, images: [] }), [undefined, undefined]);
		const said = stub.stderr
			.join("")
			.split("\n")
			.filter((l) => l.includes("session file unknown"));
		assert.deepEqual(said, ["context-fold: the seed's parent session is not read: session file unknown"]);
		assert.ok(!stub.active.includes("recall_folded"), "nothing linked, nothing declared");
	});
});

describe("the confirmation path's failures", () => {
	it("an input hook that throws lets the prompt through and says so once", async () => {
		const stub = await coldTui();
		const ctx = await contextOf(stub);
		Object.defineProperty(ctx, "hasUI", {
			get() {
				throw new Error("ui gone");
			},
		});
		assert.deepEqual(await input(stub), [undefined]);
		assert.deepEqual(await input(stub), [undefined]);
		const said = notices(stub).filter((n) => n.includes("ui gone"));
		assert.deepEqual(said, [
			"context-fold: the cold-cache check of a prompt failed, the prompt was sent as typed: ui gone",
		]);
	});

	it("an estimate or a dialog that throws lets the prompt through and says so once each", async () => {
		const stub = await coldTui();
		stub.ui.answers.push(new Error("dialog broke"), new Error("dialog broke"));
		await input(stub);
		await input(stub);
		stub.failBranch = true;
		await input(stub);
		await input(stub);
		// The resume's idle warning stood in its widget above the editor; the failures are notices.
		assert.deepEqual(notices(stub), [
			"context-fold: the cold-send confirmation could not be shown, the prompt was sent: dialog broke",
			"context-fold: the cold-cache check failed, the prompt was sent unchecked: branch unreadable",
		]);
		stub.failBranch = false;
		await stub.command("context-fold", "status");
		const status = String(stub.ui.views.at(-1));
		assert.match(status, /Failures {2}2 announced/, status);
	});
});

describe("Pi's settings that cannot be read", () => {
	it("are announced once, and the defaults apply", async () => {
		const stub = loadStub();
		stub.settings = new Proxy(
			{},
			{
				get() {
					throw new Error("settings.json is not JSON");
				},
			},
		);
		await stub.emit("session_start", { reason: "startup" });
		await stub.emit("session_tree", {});
		const said = stub.stderr.filter((line) => line.includes("settings"));
		assert.deepEqual(said, [
			"context-fold: Pi's settings could not be read (settings.json is not JSON); the saved context-fold section is ignored, the defaults and CONTEXTFOLD_* variables apply\n",
		]);
		const status = (await stub.command("context-fold", "status")).stdout;
		assert.match(
			status,
			/\nFailures {2}1 announced this session, each once \(context-fold went on\)\n {2}context-fold: Pi's settings could not be read/,
		);
	});

	it("read again before a run and failing then, are announced once, the figures read last kept", async () => {
		const stub = loadStub();
		await stub.emit("session_start", { reason: "startup" });
		stub.settings = new Proxy(
			{},
			{
				get() {
					throw new Error("settings.json is not JSON");
				},
			},
		);
		for (let i = 0; i < 3; i++) await stub.emit("before_agent_start", { prompt: "go", messageType: "user" });
		const said = stub.stderr.filter((line) => line.includes("compaction settings not read again"));
		assert.deepEqual(said, ["context-fold: Pi's compaction settings not read again: settings.json is not JSON\n"]);
		const status = (await stub.command("context-fold", "status")).stdout;
		assert.match(status, /\n {2}context-fold: Pi's compaction settings not read again/);
	});

	it("in the terminal UI, stand above the editor until the next prompt, not above a restored transcript", async () => {
		const stub = loadStub();
		stub.mode = "tui";
		stub.settings = { "context-fold": { hotTial: 6000 } };
		await stub.emit("session_start", { reason: "resume" });
		const problem =
			"context-fold: settings context-fold.hotTial is not a context-fold setting; ignoring it (did you mean hotTail?)";
		assert.deepEqual(stub.ui.notices, [], "no notice Pi would draw above the transcript it restores next");
		assert.deepEqual(
			[...stub.ui.widgets.values()],
			[[problem, "(shown until your next prompt; /context-fold status lists them)"]],
		);
		await stub.emit("session_tree", {});
		assert.equal([...stub.ui.widgets.values()].length, 1, "shown once, not again on a reload");
		await stub.command("context-fold", "status");
		const view = String(stub.ui.views.at(-1));
		assert.match(view, /Failures {2}1 announced[^\n]*\n +context-fold: settings context-fold\.hotTial/);
		assert.ok(view.replace(/\n +/g, " ").includes(problem), `listed in full, wrapped:\n${view}`);
		await stub.emit("input", { text: "go on", source: "interactive" });
		assert.deepEqual([...stub.ui.widgets.values()], [], "the next prompt clears it");
	});

	it("a status with no failure has no failures section", async () => {
		const stub = loadStub();
		await stub.emit("session_start", { reason: "startup" });
		assert.doesNotMatch((await stub.command("context-fold", "status")).stdout, /Failures/);
	});
});

describe("a seed index that cannot be read", () => {
	it("is announced once (not as an empty index), and no fold event commits without its record", async () => {
		const dir = tempDir();
		const file = join(dir, "context-fold", "stub", "seed-index.jsonl");
		mkdirSync(file, { recursive: true });
		const stub = loadStub({ sessionDir: dir, sessionFile: join(dir, "s.jsonl") });
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		assert.doesNotMatch(JSON.stringify(await stub.request()), /FOLDED\}/, "the turn went out raw");
		assert.equal(
			stub.entries.filter((e) => (e.data as { kind?: string } | undefined)?.kind === "records").length,
			0,
			"no fold event was committed: its record could not be appended",
		);
		const said = stub.stderr.filter((line) => line.includes("seed index"));
		assert.equal(said.length, 2, said.join(""));
		assert.match(
			said[0],
			/^context-fold: the seed index .*seed-index\.jsonl cannot be read \(it is not a regular file\); this session starts without its earlier records, so summaries lack what it held/,
		);
		assert.match(said[1], /^context-fold: fold event rejected, this turn goes out without it: the seed index /);
	});
});

describe("failures found while Pi restores a session, in the terminal UI", () => {
	it("stand above the editor until the next prompt, where the restored transcript cannot scroll them away", async () => {
		const dir = tempDir();
		mkdirSync(join(dir, "context-fold", "stub", "seed-index.jsonl"), { recursive: true });
		const stub = loadStub({ sessionDir: dir, sessionFile: join(dir, "s.jsonl") });
		stub.mode = "tui";
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "resume" });
		const shown = stub.ui.widgets.get("context-fold-restore") ?? [];
		assert.match(
			shown[0] ?? "",
			/^context-fold: the seed index .*seed-index\.jsonl cannot be read \(it is not a regular file\)/,
		);
		assert.equal(shown.at(-1), "(shown until your next prompt; /context-fold status lists them)");
		assert.deepEqual(
			stub.notes.filter((n) => n.message.includes("seed index")),
			[],
			"not a notification the transcript scrolls away",
		);
		await stub.emit("input", { text: "go on", source: "interactive" });
		assert.equal(stub.ui.widgets.has("context-fold-restore"), false, "the next prompt takes it down");
		stub.mode = "print";
		const status = (await stub.command("context-fold", "status")).stdout;
		assert.match(status, /Failures {2}1 announced[^\n]*\n {2}context-fold: the seed index /, status);
		// Headless, the same failure is said once on stderr, as ever.
		const headless = loadStub({ sessionDir: dir, sessionFile: join(dir, "s.jsonl") });
		bashSession(headless, 6);
		await headless.emit("session_start", { reason: "resume" });
		assert.equal(headless.stderr.filter((line) => line.includes("seed index")).length, 1);
	});
});

describe("a session file that cannot be read for recall", () => {
	/** A session that folded, its first code, and the session manager its handlers get (to break). */
	async function folded() {
		const stub = loadStub();
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		const ctx = await contextOf(stub);
		return { stub, code: firstCode(stub), manager: ctx.sessionManager as Record<string, unknown> };
	}

	it("is announced once, and the answer says the file could not be read", async () => {
		const { stub, code, manager } = await folded();
		manager.getEntries = () => {
			throw new Error("EIO: i/o error");
		};
		const { result: text, stderr } = await capturingStderr(stub, async () => {
			const text = await stub.call("recall_folded", { codes: [code] });
			await stub.call("recall_folded", { codes: [code] });
			return text;
		});
		assert.match(text, /the session file could not be read \(EIO: i\/o error\); served from live history/);
		assert.deepEqual(stderr, ["context-fold: the session file could not be read for recall: EIO: i/o error\n"]);
	});

	it("is announced when even its entry count cannot be read", async () => {
		const { stub, code, manager } = await folded();
		manager.getEntryCount = () => {
			throw new Error("EIO: count");
		};
		const { result: text, stderr } = await capturingStderr(stub, () => stub.call("recall_folded", { codes: [code] }));
		assert.match(text, /the session file could not be read \(EIO: count\)/);
		assert.deepEqual(stderr, ["context-fold: the session file could not be read for recall: EIO: count\n"]);
	});

	it("is not answered as 'not in the session file' once the block has left live history", () => {
		const engine = {
			registry: { idOf: () => "block-1", record: () => ({ code: "k3x9a0b2", sha256: "00" }) },
			liveBlock: () => undefined,
		} as unknown as FoldEngine;
		const heard: unknown[] = [];
		const ledger = new Ledger(
			() => ({
				getEntries: () => {
					throw new Error("EACCES: permission denied");
				},
			}),
			(error) => heard.push(error),
		);
		const answer = resolveCode("k3x9a0b2", engine, ledger);
		assert.deepEqual(answer, {
			ok: false,
			error: "#k3x9a0b2: the session file could not be read (EACCES: permission denied), and the block has left live history",
		});
		assert.equal(heard.length, 1, "the ledger's owner heard of the failure");
	});
});

describe("a parent session file with a damaged line", () => {
	/** A parent session file from a stub session that folded: its header and entries, one JSON line each. */
	async function parentLines(): Promise<{ lines: string[]; code: string }> {
		const stub = loadStub();
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		const header = JSON.stringify({ type: "session", id: "parent", timestamp: new Date(0).toISOString() });
		return { lines: [header, ...stub.entries.map((e) => JSON.stringify(e))], code: firstCode(stub) };
	}
	const write = (lines: string[]): string => {
		const file = join(tempDir(), "parent.jsonl");
		writeFileSync(file, `${lines.join("\n")}\n`);
		return file;
	};

	it("serves a code folded on a branch the parent has since left (it went on with /tree)", async () => {
		const { lines, code } = await parentLines();
		// The parent's last entry now continues from its first message: the fold is on another branch.
		const side = JSON.stringify({
			type: "message",
			id: "side",
			parentId: "e1",
			timestamp: new Date(1).toISOString(),
			message: { role: "user", content: "a side question", timestamp: 1 },
		});
		const file = write([...lines, side]);
		const answer = new ParentSession(file, [dirname(file)]).resolve(code);
		assert.equal(answer.ok, true, JSON.stringify(answer));
		assert.ok(answer.ok && answer.verified, "sha-verified against the record of the other branch");
	});

	it("says why a missing parent cannot be read, and serves its codes once the file is back", async () => {
		const { lines, code } = await parentLines();
		const file = write(lines);
		const text = readFileSync(file, "utf8");
		rmSync(file);
		const parent = new ParentSession(file, [dirname(file)]);
		const missing = parent.resolve(code);
		assert.equal(missing.ok, false);
		assert.ok(
			!missing.ok &&
				missing.error ===
					`#${code}: the parent session file ${file} cannot be read: no such file (moved or deleted?)`,
			JSON.stringify(missing),
		);
		writeFileSync(file, text);
		const back = parent.resolve(code);
		assert.ok(back.ok && back.verified, JSON.stringify(back));
	});

	it("makes a seeded session's search say the parent was not searched while its file cannot be read", async () => {
		const { lines } = await parentLines();
		const file = write(lines);
		const text = readFileSync(file, "utf8");
		rmSync(file);
		const child = loadStub({ parentSession: file, seeded: true });
		await child.emit("session_start", { reason: "startup" });
		const pattern = "of check 2 output";
		const missing = await child.call("recall_folded", { search: pattern });
		assert.equal(
			missing,
			`no folded block contains "${pattern}" (not searched: the parent session file ${file} cannot be read: no such file (moved or deleted?))`,
		);
		writeFileSync(file, text);
		const back = await child.call("recall_folded", { search: pattern });
		assert.match(back, /^1 block contains "of check 2 output":/);
	});

	it("makes unfold of a parent code say the parent cannot be read, not that the code is unknown", async () => {
		const { lines, code } = await parentLines();
		const file = write(lines);
		rmSync(file);
		const child = loadStub({ parentSession: file, seeded: true });
		await child.emit("session_start", { reason: "startup" });
		assert.equal(
			await child.call("unfold", { codes: [code] }),
			`#${code} is not a fold code of this session branch; it may be one of the parent session's, but the parent session file ${file} cannot be read: no such file (moved or deleted?)`,
		);
		const { stdout, stderr } = await child.command("context-fold", `unfold ${code}`);
		assert.match(
			stdout + stderr,
			/it may be one of the parent session's, but the parent session file .* cannot be read/,
		);
	});

	it("reads no parent file outside the session's own folder, and says so", async () => {
		const { lines, code } = await parentLines();
		const file = write(lines);
		const elsewhere = tempDir();
		const child = loadStub({ parentSession: file, seeded: true, sessionDir: elsewhere });
		await child.emit("session_start", { reason: "startup" });
		const why = `the parent session file ${file} cannot be read: it is not in this session's folder (${elsewhere})`;
		const pattern = "of check 2 output";
		assert.equal(
			await child.call("recall_folded", { search: pattern }),
			`no folded block contains "${pattern}" (not searched: ${why})`,
		);
		assert.match(
			await child.call("recall_folded", { codes: [code] }),
			new RegExp(`${code}.*not in this session's folder`),
		);
		const beside = loadStub({ parentSession: file, seeded: true, sessionDir: join(file, "..") });
		await beside.emit("session_start", { reason: "startup" });
		assert.match(await beside.call("recall_folded", { search: pattern }), /^1 block contains "of check 2 output":/);
	});

	it("skips a torn last line quietly", async () => {
		const { lines, code } = await parentLines();
		const heard: string[] = [];
		const file = write([...lines, '{"type":"mess']);
		const parent = new ParentSession(file, [dirname(file)], (m) => heard.push(m));
		assert.equal(parent.resolve(code).ok, true);
		assert.deepEqual(heard, []);
	});

	it("announces an unparsable line in the middle once and names it in a miss", async () => {
		const { lines, code } = await parentLines();
		const fold = lines.findIndex((line) => line.includes('"records"'));
		// The fold entry's own line is torn, with lines after it: the code's record is lost.
		const damaged = [...lines.slice(0, fold), '{"type":"custom","id":', ...lines.slice(fold + 1)];
		const heard: string[] = [];
		const file = write(damaged);
		const parent = new ParentSession(file, [dirname(file)], (m) => heard.push(m));
		const answer = parent.resolve(code);
		parent.resolve(code);
		const damage = `the parent session file ${file} has 1 unreadable line (line ${fold + 1}), skipped; codes recorded there, or on the branch before them, cannot be recalled`;
		assert.deepEqual(heard, [`context-fold: ${damage}`]);
		assert.equal(answer.ok, false);
		assert.ok(!answer.ok && answer.error.endsWith(`(${damage})`), JSON.stringify(answer));
	});

	it("says why a never-folded block a seed cites is withheld after a damaged line, never that its code is none", async () => {
		const { lines } = await parentLines();
		// The raw tail's newest result: never folded, so no record names its code (a handoff cites it so).
		const code = foldCode("r:call_5");
		const header = 1;
		const file = write([...lines.slice(0, header + 1), '{"type":"message","id":', ...lines.slice(header + 1)]);
		const answer = new ParentSession(file, [dirname(file)]).resolve(code);
		assert.equal(answer.ok, false);
		assert.ok(!answer.ok && !answer.error.includes("is not a fold code"), JSON.stringify(answer));
		assert.ok(
			!answer.ok &&
				answer.error.startsWith(
					`#${code} names a block of the parent ${file} that no fold record there names, and with lines of that file unreadable`,
				),
			JSON.stringify(answer),
		);
		assert.ok(!answer.ok && answer.error.includes("(a seed passed as a prompt carries no sha256"), answer.error);
		// A seed with hashes, none of this code's (a block found by search on the parent's branch): said so.
		const seeded = new ParentSession(file, [dirname(file)], undefined, new Map([["zzzzzzzz", "0".repeat(64)]]));
		const other = seeded.resolve(code);
		assert.ok(!other.ok && other.error.includes("(the seed holds no sha256 of it"), JSON.stringify(other));
		const whole = write(lines);
		const intact = new ParentSession(whole, [dirname(whole)]).resolve(code);
		assert.ok(intact.ok && !intact.verified, "the same file undamaged serves it, unverified");
	});

	it("a search that finds nothing names the damage, not a bare count of blocks it could not read", async () => {
		const { lines } = await parentLines();
		const fold = lines.findIndex((line) => line.includes('"records"'));
		const file = write([...lines.slice(0, fold), '{"type":"custom","id":', ...lines.slice(fold + 1)]);
		const child = loadStub({ parentSession: file, seeded: true });
		await child.emit("session_start", { reason: "startup" });
		const answer = await child.call("recall_folded", { search: "of check 2 output" });
		assert.match(
			answer,
			/^no folded block contains "of check 2 output" \((\d+ could not be read; )?the parent session /,
		);
		assert.ok(answer.includes(`${file} has 1 unreadable line (line ${fold + 1}), skipped`), answer);
	});

	it("reaches the user of a seeded session: said once on stderr and listed in the status", async () => {
		const { lines, code } = await parentLines();
		const fold = lines.findIndex((line) => line.includes('"records"'));
		const file = write([...lines.slice(0, fold), '{"type":"custom","id":', ...lines.slice(fold + 1)]);
		const child = loadStub({ parentSession: file, seeded: true });
		await child.emit("session_start", { reason: "startup" });
		const { stderr } = await capturingStderr(child, async () => {
			await child.call("recall_folded", { codes: [code] });
			await child.call("recall_folded", { codes: [code] });
		});
		const said = stderr.filter((line) => line.includes("unreadable line"));
		assert.equal(said.length, 1, stderr.join(""));
		assert.ok(said[0].startsWith(`context-fold: the parent session file ${file} has 1 unreadable line`), said[0]);
		const status = (await child.command("context-fold", "status")).stdout;
		assert.match(status, /\nFailures {2}1 announced[^\n]*\n {2}context-fold: the parent session file /, status);
	});
});

describe("a fold entry without its payload", () => {
	it("counts as an unreadable entry, as one whose payload is not an object does", () => {
		for (const entry of [{}, { data: null }, { data: 7 }]) {
			const { skipped } = rebuildRegistry([{ type: "custom", customType: "contextfold.fold", ...entry }]);
			assert.deepEqual(skipped, { entries: 1, records: 0, ops: 0, unbacked: 0 }, JSON.stringify(entry));
		}
	});
});

describe("a fold layer whose records entry is missing", () => {
	it("is read, its blocks counted as sent raw, not as an unreadable entry", () => {
		const { registry, skipped } = rebuildRegistry([
			foldEntry({ kind: "records", seq: 1, records: [{ id: "r:a", code: "aaaa1111", chars: 10, seq: 1 }] }),
			foldEntry({ kind: "layer", seq: 1, ops: [{ id: "r:a", code: "aaaa1111", text: "{#aaaa1111 FOLDED} a" }] }),
			foldEntry({ kind: "layer", seq: 2, ops: [{ id: "r:b", code: "bbbb2222", text: "{#bbbb2222 FOLDED} b" }] }),
		]);
		assert.ok(registry.frozenOp("r:a"));
		assert.equal(registry.frozenOp("r:b"), undefined, "the block without its record is sent raw");
		assert.deepEqual(skipped, { entries: 0, records: 0, ops: 0, unbacked: 1 });
		assert.equal(
			skippedText(skipped),
			"context-fold: restoring fold state skipped 1 frozen op without its fold record (that block is sent raw)",
		);
	});
});

describe("the shipped code", () => {
	it("reads no test-only environment variable", () => {
		const src = fileURLToPath(new URL("../../src", import.meta.url));
		const readers = readdirSync(src, { recursive: true, encoding: "utf8" })
			.filter((path) => path.endsWith(".ts"))
			// TEST as a segment of an upper-case name, whole or in parts a concatenation joins:
			// `CONTEXTFOLD_TEST_CLOCK_OFFSET_MS`, `"CONTEXTFOLD_" + "TEST_CLOCK"`, `CONTEXTFOLD_TEST`.
			.filter((path) =>
				/(?<![A-Za-z0-9])(?:[A-Z0-9]+_)*TEST(?:_[A-Z0-9]*)*(?![A-Za-z0-9])/.test(
					readFileSync(join(src, path), "utf8"),
				),
			);
		assert.deepEqual(readers, []);
	});
});
