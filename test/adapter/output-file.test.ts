/**
 * The bash tool's full-output file as a recall source: only `pi-bash-<16 hex>.log` directly in the
 * temp dir, opened once without following links, a regular file with one link owned by this user,
 * read from the descriptor that was checked; labelled honestly; and a deleted file falls back to the
 * session's sha-verified copy.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readToolOutputFile } from "../../src/adapters/pi/fold/recall-sources.ts";
import { loadStub } from "./stub-pi.ts";

const savedTmp = process.env.TMPDIR;
let temp = "";
let outside = "";

before(() => {
	const root = mkdtempSync(join(tmpdir(), "cf-outfile-"));
	temp = join(root, "tmp");
	outside = join(root, "outside");
	mkdirSync(temp);
	mkdirSync(outside);
	process.env.TMPDIR = temp;
});

after(() => {
	if (savedTmp === undefined) delete process.env.TMPDIR;
	else process.env.TMPDIR = savedTmp;
	rmSync(join(temp, ".."), { recursive: true, force: true });
});

const logName = (n: number) => `pi-bash-${n.toString(16).padStart(16, "0")}.log`;

describe("readToolOutputFile", () => {
	it("reads the bash tool's own file in the temp dir", () => {
		const path = join(temp, logName(1));
		writeFileSync(path, "full output\n");
		assert.equal(readToolOutputFile(path), "full output\n");
	});

	it("refuses other names, other folders, and non-strings", () => {
		const elsewhere = join(outside, logName(2));
		writeFileSync(elsewhere, "secret");
		writeFileSync(join(temp, "notes.log"), "secret");
		assert.equal(readToolOutputFile(elsewhere), undefined);
		assert.equal(readToolOutputFile(join(temp, "notes.log")), undefined);
		assert.equal(readToolOutputFile(join(temp, "sub", "..", "..", "outside", logName(2))), undefined);
		assert.equal(readToolOutputFile(42), undefined);
	});

	it("refuses a hard link to a file outside the temp dir", () => {
		const secret = join(outside, "secret.txt");
		writeFileSync(secret, "secret");
		const path = join(temp, logName(3));
		linkSync(secret, path);
		assert.equal(readToolOutputFile(path), undefined);
	});

	it("refuses a symbolic link, even to a real bash log", () => {
		const real = join(temp, logName(4));
		writeFileSync(real, "real log");
		const link = join(temp, logName(5));
		symlinkSync(real, link);
		assert.equal(readToolOutputFile(link), undefined);
		symlinkSync(join(outside, "secret.txt"), join(temp, logName(6)));
		assert.equal(readToolOutputFile(join(temp, logName(6))), undefined);
	});

	it("refuses a directory and a FIFO without blocking", () => {
		mkdirSync(join(temp, logName(7)));
		assert.equal(readToolOutputFile(join(temp, logName(7))), undefined);
		const fifo = join(temp, logName(8));
		try {
			execFileSync("mkfifo", [fifo]);
		} catch {
			return;
		}
		assert.equal(readToolOutputFile(fifo), undefined);
	});

	it("gives undefined for a file that is gone", () => {
		assert.equal(readToolOutputFile(join(temp, logName(9))), undefined);
	});
});

describe("recall over a truncated bash result", () => {
	it("labels file-sourced text honestly and falls back to the verified session copy once the file is deleted", async () => {
		const path = join(temp, logName(10));
		writeFileSync(path, "FILE-ONLY line\nError: only in the full output\n");
		const stub = loadStub({ window: 10_000 });
		let ts = 1_700_000_000_000;
		stub.addMessage({ role: "user", content: "run it", timestamp: ts++ });
		for (let i = 0; i < 6; i++) {
			stub.addMessage({
				role: "assistant",
				content: [{ type: "toolCall", id: `call_${i}`, name: "bash", arguments: { command: `run ${i}` } }],
				responseId: `resp_${i}`,
				stopReason: "toolUse",
				timestamp: ts++,
			});
			const body = Array.from({ length: 200 }, (_, k) => `Error: session copy ${i} line ${k}`).join("\n");
			stub.addMessage({
				role: "toolResult",
				toolCallId: `call_${i}`,
				toolName: "bash",
				content: [{ type: "text", text: body }],
				details: i === 0 ? { fullOutputPath: path } : undefined,
				isError: false,
				timestamp: ts++,
			});
		}
		stub.addMessage({
			role: "assistant",
			content: [{ type: "text", text: "done" }],
			responseId: "r",
			timestamp: ts++,
		});
		stub.addMessage({ role: "user", content: "next", timestamp: ts++ });
		await stub.emit("session_start", { reason: "startup" });
		const sent = await stub.request();
		const first = sent.find((m) => m.toolCallId === "call_0") as { content: { text: string }[] };
		const code = /^\{#([0-9a-z]{8}) FOLDED\}/.exec(first.content[0].text)?.[1];
		assert.ok(code, "the first result folded");

		const fromFile = await stub.call("recall_folded", { codes: [code], grep: "only in the full output" });
		assert.match(fromFile, /from the bash tool's full output file, which the fold-time sha256 does not cover/);
		assert.doesNotMatch(fromFile, /sha256 verified/);
		assert.match(fromFile, /Error: only in the full output/);

		unlinkSync(path);
		const fromSession = await stub.call("recall_folded", { codes: [code], grep: "session copy 0 line 5" });
		assert.match(fromSession, /\(sha256 verified\)/);
		assert.match(fromSession, /Error: session copy 0 line 5\b/);
		assert.doesNotMatch(fromSession, /full output file/);
	});
});
