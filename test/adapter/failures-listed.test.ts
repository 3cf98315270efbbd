/**
 * Every failure context-fold works around is announced once per distinct message and listed under
 * the status's Failures (issue 26, docs/commands.md), whichever part of the extension meets it: a
 * fold event or an unfold the session file refuses, tools that cannot be activated, a warming decision that
 * cannot be made, a compaction that cannot be built, a parent session whose header cannot be read.
 * And the fold tools never answer "no such code" when the truth is that the session file could not
 * be read to look for it.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { bashSession, loadStub, type StubPi } from "./stub-pi.ts";

const dirs: string[] = [];
after(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The session manager the stub passes to every handler, to break a part of it. */
async function sessionManagerOf(stub: StubPi): Promise<Record<string, unknown>> {
	stub.handlers.set("probe", [(_event, ctx) => ctx]);
	const [ctx] = await stub.emit("probe");
	return (ctx as { sessionManager: Record<string, unknown> }).sessionManager;
}

/** Every notice the stub heard (stderr outside the terminal UI, notifications in it) that matches `pattern`. */
function heard(stub: StubPi, pattern: RegExp): string[] {
	return [...stub.stderr, ...stub.ui.notices.map((n) => n.message)].filter((line) => pattern.test(line));
}

/** The Failures section of `/context-fold status`, or "" when there is none. */
async function failures(stub: StubPi): Promise<string> {
	const status = (await stub.command("context-fold", "status")).stdout;
	const at = status.indexOf("Failures");
	return at < 0 ? "" : status.slice(at);
}

const throwing = (message: string) => () => {
	throw new Error(message);
};

/** A session with foldable bash results, started. */
async function started(options: Parameters<typeof loadStub>[0] = {}): Promise<StubPi> {
	const stub = loadStub(options);
	bashSession(stub, 6);
	await stub.emit("session_start", { reason: "startup" });
	return stub;
}

describe("a failure met again and again", () => {
	it("a fold event the session file refuses: announced once, listed, every turn raw", async () => {
		const stub = await started();
		stub.failAppend = true;
		for (let i = 0; i < 20; i++) {
			const sent = await stub.request();
			assert.ok(!JSON.stringify(sent).includes("FOLDED"), `request ${i} went out raw`);
		}
		assert.equal(heard(stub, /fold event rejected/).length, 1);
		stub.failAppend = false;
		assert.match(await failures(stub), /fold event rejected, this turn goes out without it: disk full/);
	});

	it("the same in the terminal UI: one notification", async () => {
		const stub = loadStub();
		stub.mode = "tui";
		stub.hasUI = true;
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		stub.failAppend = true;
		for (let i = 0; i < 20; i++) await stub.request();
		assert.equal(stub.ui.notices.filter((n) => n.message.includes("fold event rejected")).length, 1);
	});

	it("an unfold the session file refuses: the model is told, and so is the user, once; listed; the block stays folded", async () => {
		const stub = await started();
		const sent = JSON.stringify(await stub.request());
		const code = /\{#([0-9a-z]{8}) FOLDED\}/.exec(sent)?.[1];
		assert.ok(code, "a block folded");
		stub.failAppend = true;
		for (let i = 0; i < 3; i++) {
			const answer = await stub.call("unfold", { codes: [code] });
			assert.match(answer, /unfold failed, nothing was unfolded: disk full/);
		}
		stub.failAppend = false;
		assert.equal(heard(stub, /unfold failed/).length, 1);
		assert.match(await failures(stub), /unfold failed, nothing was unfolded: disk full/);
		assert.ok(JSON.stringify(await stub.request()).includes(`{#${code} FOLDED}`), "still folded");
	});

	it("tools that cannot be activated: announced once, listed", async () => {
		const stub = await started({ toolsAsRegistered: true });
		(await sessionManagerOf(stub)).buildSessionProjection = throwing("EIO projection");
		for (let i = 0; i < 20; i++) await stub.emit("before_agent_start", { prompt: "go", messageType: "user" });
		assert.equal(heard(stub, /could not be activated/).length, 1);
		assert.match(await failures(stub), /recall_folded and unfold could not be activated: EIO projection/);
	});

	it("a warming decision that cannot be made: announced once, listed, left to Pi", async () => {
		const stub = await started();
		await stub.request();
		const manager = await sessionManagerOf(stub);
		const readable = { ...manager };
		manager.getEntries = throwing("EIO entries");
		manager.getBranch = throwing("EIO entries");
		manager.getEntryCount = () => 999;
		for (let i = 0; i < 20; i++) {
			const [answer] = await stub.emit("cache_warming_decision", { action: "warm" });
			assert.equal(answer, undefined, "Pi decides");
		}
		assert.equal(heard(stub, /cache warming decision left to Pi/).length, 1);
		Object.assign(manager, readable);
		assert.match(await failures(stub), /cache warming decision left to Pi: EIO entries/);
	});

	it("a compaction that cannot be built: announced once, listed, Pi's own runs", async () => {
		const stub = await started();
		(await sessionManagerOf(stub)).getLeafId = throwing("EIO leaf");
		const preparation = {
			firstKeptEntryId: "e3",
			messagesToSummarize: [],
			turnPrefixMessages: [],
			tokensBefore: 1,
		};
		for (let i = 0; i < 5; i++) {
			const [answer] = await stub.emit("session_before_compact", { preparation, branchEntries: stub.entries });
			assert.equal(answer, undefined, "Pi's compaction runs");
		}
		assert.equal(heard(stub, /deterministic compaction failed/).length, 1);
		assert.match(await failures(stub), /deterministic compaction failed, Pi's own compaction runs instead: EIO leaf/);
	});
});

describe("the Failures list", () => {
	it("is the session's: a new session starts without the last one's, a /tree move keeps them", async () => {
		const stub = await started();
		stub.failAppend = true;
		await stub.request();
		stub.failAppend = false;
		await stub.emit("session_tree", {});
		assert.match(await failures(stub), /fold event rejected/);
		await stub.emit("session_start", { reason: "new" });
		assert.equal(await failures(stub), "");
		stub.failAppend = true;
		await stub.request();
		assert.equal(heard(stub, /fold event rejected/).length, 2, "told again in the new session");
	});
});

describe("a parent session whose header cannot be read", () => {
	it("is announced: the summaries lack what its seed index held", async () => {
		const dir = mkdtempSync(join(tmpdir(), "cf-listed-"));
		dirs.push(dir);
		const parentFile = join(dir, "parent.jsonl");
		writeFileSync(parentFile, "{not json\n");
		const stub = loadStub({ sessionDir: dir, sessionFile: join(dir, "s.jsonl"), parentSession: parentFile });
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		const said = heard(stub, /ancestor session/);
		assert.equal(said.length, 1, said.join("\n"));
		assert.match(
			said[0],
			/parent\.jsonl cannot be read \(its first line is not JSON\); this session's summaries lack/,
		);
	});

	it("is quiet when the parent file is gone (nothing to inherit)", async () => {
		const dir = mkdtempSync(join(tmpdir(), "cf-listed-"));
		dirs.push(dir);
		const stub = loadStub({
			sessionDir: dir,
			sessionFile: join(dir, "s.jsonl"),
			parentSession: join(dir, "gone.jsonl"),
		});
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		assert.deepEqual(heard(stub, /ancestor session/), []);
	});
});

describe("a fold code looked up while the session file cannot be read", () => {
	/** A session whose fold state could not be restored, its file then unreadable; its first fold code. */
	async function lostState(): Promise<{ stub: StubPi; code: string }> {
		const stub = await started();
		await stub.request();
		const entry = stub.entries.find((e) => (e.data as { kind?: string } | undefined)?.kind === "records");
		const code = (entry?.data as { records: { code: string }[] }).records[0].code;
		stub.failBranch = true;
		await stub.emit("session_tree", {});
		stub.failBranch = false;
		const manager = await sessionManagerOf(stub);
		manager.getEntries = throwing("EIO: i/o error");
		manager.getEntryCount = () => 999;
		return { stub, code };
	}

	it("unfold says the file could not be read, not that the code is unknown", async () => {
		const { stub, code } = await lostState();
		const answer = await stub.call("unfold", { codes: [code] });
		assert.doesNotMatch(answer, /is not a fold code/);
		assert.match(
			answer,
			new RegExp(
				`#${code} is not in this branch's fold state, and the session file could not be read to look for it \\(EIO: i/o error\\)`,
			),
		);
	});

	it("a search says the branch's records could not be read", async () => {
		const { stub } = await lostState();
		const answer = await stub.call("recall_folded", { search: "check 1" });
		assert.match(answer, /the session file could not be read for this branch's records: EIO: i\/o error/);
	});
});

describe("/fold-handoff when the session cannot be read", () => {
	it("says why the seed was not written, as its own message, and does not throw", async () => {
		const stub = await started();
		(await sessionManagerOf(stub)).getBranch = throwing("EIO branch");
		const out = await stub.command("fold-handoff", "");
		assert.match(out.stderr, /context-fold: could not write the handoff seed: EIO branch/);
	});
});
