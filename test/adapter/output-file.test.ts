/**
 * A shell tool's full-output file as a recall source: only `pi-bash-<16 hex>.log` (or Pi's powershell
 * tool's `pi-powershell-…` on Windows) directly in the
 * temp dir, opened once without following links, a regular file with one link owned by this user,
 * read from the descriptor that was checked; labelled honestly; and a deleted file falls back to the
 * session's sha-verified copy.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
	linkSync,
	mkdirSync,
	mkdtempSync,
	rmSync,
	symlinkSync,
	truncateSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { OutputReads } from "../../src/adapters/pi/fold/recall-sources.ts";
import { loadStub, type StubPi } from "./stub-pi.ts";

/** A shell log as one recall call reads it. */
const readToolOutputFile = (path: unknown) => new OutputReads().read(path);

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

	it("refuses a path through a link and back up (`<tmp>/link/../x`), which the kernel resolves elsewhere", () => {
		const deep = join(outside, "deep");
		mkdirSync(join(deep, "sub"), { recursive: true });
		writeFileSync(join(deep, logName(20)), "secret beside the link's target");
		symlinkSync(join(deep, "sub"), join(temp, "lnk"));
		// Not path.join, which would drop the `..` itself.
		assert.equal(readToolOutputFile(`${temp}/lnk/../${logName(20)}`), undefined);
		writeFileSync(join(temp, logName(21)), "own log");
		assert.equal(
			readToolOutputFile(`${temp}/./${logName(21)}`),
			undefined,
			"only the path as the bash tool writes it",
		);
		assert.equal(readToolOutputFile(join(temp, logName(21))), "own log");
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

/**
 * A session of `count` bash results, the first of which names `path` as the bash tool's full output
 * (each the path of its place, when `path` is a list) (and failed, when `failed`), each result
 * `body(i)`, folded by its first request (under `settings`); the stub, the first's code and its digest.
 */
async function foldedBashSession(
	path: string | readonly string[],
	count: number,
	body: (i: number) => string,
	options: {
		window: number;
		settings?: Record<string, unknown>;
		failed?: boolean;
		tool?: string;
		args?: Record<string, unknown>;
	},
) {
	const tool = options.tool ?? "bash";
	const stub = loadStub({ window: options.window });
	let ts = 1_700_000_000_000;
	stub.addMessage({ role: "user", content: "run it", timestamp: ts++ });
	for (let i = 0; i < count; i++) {
		stub.addMessage({
			role: "assistant",
			content: [
				{
					type: "toolCall",
					id: `call_${i}`,
					name: tool,
					arguments: i === 0 && options.args ? options.args : { command: `run ${i}` },
				},
			],
			responseId: `resp_${i}`,
			stopReason: "toolUse",
			timestamp: ts++,
		});
		stub.addMessage({
			role: "toolResult",
			toolCallId: `call_${i}`,
			toolName: tool,
			content: [{ type: "text", text: body(i) }],
			details:
				typeof path === "string" ? (i === 0 ? { fullOutputPath: path } : undefined) : { fullOutputPath: path[i] },
			isError: i === 0 && options.failed === true,
			timestamp: ts++,
		});
	}
	stub.addMessage({ role: "assistant", content: [{ type: "text", text: "done" }], responseId: "r", timestamp: ts++ });
	stub.addMessage({ role: "user", content: "next", timestamp: ts++ });
	if (options.settings) stub.settings = options.settings;
	await stub.emit("session_start", { reason: "startup" });
	const sent = await stub.request();
	const first = sent.find((m) => m.toolCallId === "call_0") as { content: { text: string }[] };
	const digest = first.content[0].text;
	const code = /^\{#([0-9a-z]{8}) FOLDED\}/.exec(digest)?.[1];
	assert.ok(code, "the first result folded");
	return { stub, code, digest };
}

/** A session of six bash results, the first `kept`: lines 601-900 of `path`, as Pi cuts them; the rest filler. */
function cutSession(path: string, kept: string) {
	return foldedBashSession(
		path,
		6,
		(i) =>
			i === 0
				? `${kept}\n\n[Showing lines 601-900 of 900. Full output: ${path}]`
				: Array.from({ length: 200 }, (_, k) => `result ${i} line ${k} of the other command output`).join("\n"),
		{ window: 10_000 },
	);
}

describe("recall over a truncated bash result", () => {
	it("labels file-sourced text honestly and falls back to the verified session copy once the file is deleted", async () => {
		const path = join(temp, logName(10));
		writeFileSync(path, "FILE-ONLY line\nError: only in the full output\n");
		const { stub, code } = await foldedBashSession(
			path,
			6,
			(i) => Array.from({ length: 200 }, (_, k) => `Error: session copy ${i} line ${k}`).join("\n"),
			{ window: 10_000 },
		);

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

describe("search over a truncated bash result", () => {
	it("finds a line only its full output file holds, says where it read it, and the user's search too", async () => {
		const path = join(temp, logName(11));
		const total = 900;
		const line = (n: number) => `ps line ${n}${n === 20 ? " HEADMARK only in the full output" : ""}`;
		writeFileSync(path, `${Array.from({ length: total }, (_, k) => line(k + 1)).join("\n")}\n`);
		const kept = Array.from({ length: 300 }, (_, k) => line(601 + k)).join("\n");
		const { stub, code } = await cutSession(path, kept);
		const found = await stub.call("recall_folded", { search: "HEADMARK" });
		assert.match(found, /^1 block contains "HEADMARK":/);
		assert.match(found, new RegExp(`Recalled #${code}: bash, 900 lines \\(from the bash tool's full output file`));
		assert.match(found, /\n20: ps line 20 HEADMARK only in the full output\n/);
		const { stdout } = await stub.command("context-fold", "search HEADMARK");
		assert.match(stdout, /^1 block contains "HEADMARK":/);
		unlinkSync(path);
		assert.match(await stub.call("recall_folded", { search: "HEADMARK" }), /^no folded block contains "HEADMARK"/);
	});
});

describe("a whole recall cut at the cap of a bash result whose full output file is there", () => {
	it("says that `lines` reads that file instead, and the usual cut once it is gone", async () => {
		const path = join(temp, logName(44));
		writeFileSync(path, "whole output\n");
		const body = (i: number) =>
			Array.from({ length: 400 }, (_, k) => `result ${i} line ${k} of the command output`).join("\n");
		const { stub, code } = await foldedBashSession(path, 6, body, { window: 10_000 });
		const whole = await stub.call("recall_folded", { codes: [code] });
		assert.match(whole, /of this copy not shown, and `lines` reads the bash tool's full output file instead/);
		unlinkSync(path);
		const gone = await stub.call("recall_folded", { codes: [code] });
		assert.doesNotMatch(gone, /full output file instead/);
		assert.match(gone, /cut at the output cap/);
	});
});

describe("recall over truncated bash results whose full output files are large together", () => {
	it("reads at most 64 MiB of them in one call, and names the codes whose files it left unread", async () => {
		const paths = [40, 41, 42].map((k) => join(temp, logName(k)));
		paths.forEach((path, k) => {
			writeFileSync(path, `MARK-${k} only in the full output\n`);
			truncateSync(path, 33 * 1024 * 1024);
		});
		const body = (i: number) =>
			`${Array.from({ length: 200 }, (_, k) => `result ${i} line ${k} of the command output`).join("\n")}\n\n[Showing lines 601-800 of 800. Full output: ${paths[i] ?? join(temp, logName(43))}]`;
		// A fourth result, last, keeps the tail: its file is never written.
		const { stub } = await foldedBashSession([...paths, join(temp, logName(43))], 4, body, { window: 4_000 });
		const sent = await stub.request();
		const codes = [0, 1, 2].map((i) => {
			const result = sent.find((m) => m.toolCallId === `call_${i}`) as { content: { text: string }[] };
			return /^\{#([0-9a-z]{8}) FOLDED\}/.exec(result.content[0].text)?.[1] ?? "";
		});
		assert.ok(codes.every(Boolean), `all three folded: ${codes}`);
		const found = await stub.call("recall_folded", { search: "only in the full output" });
		assert.match(
			found,
			/^1 block contains "only in the full output" \(the bash tool's full output file was not read: this call already read the 64 MiB of such files a call reads, so the full output of 2 blocks was not searched, only its copy: grep #/,
		);
		assert.ok(found.includes(`#${codes[1]}, #${codes[2]} one code at a time`), found);
		assert.match(found, /MARK-0 only in the full output/);
		const grep = await stub.call("recall_folded", { codes, grep: "MARK" });
		assert.match(grep, /MARK-0/);
		assert.doesNotMatch(grep, /MARK-[12]/);
		assert.equal(
			grep.split(
				"was not read: this call already read the 64 MiB of such files a call reads: recall this code alone to read it",
			).length - 1,
			2,
			grep,
		);
		assert.match(
			await stub.call("recall_folded", { codes: [codes[2]], grep: "MARK" }),
			/MARK-2 only in the full output/,
		);
		for (const path of paths) unlinkSync(path);
	});
});

describe("recall over a truncated bash result whose full output file is too large to read", () => {
	it("names the file and its size, not a deleted file, for the shell to read", async () => {
		const path = join(temp, logName(30));
		writeFileSync(path, "");
		truncateSync(path, 65 * 1024 * 1024);
		assert.equal(readToolOutputFile(path), undefined, "past the bound, unread");
		const kept = Array.from({ length: 300 }, (_, k) => `big line ${601 + k}`).join("\n");
		const { stub, code } = await cutSession(path, kept);
		const where = `only in the bash tool's full output file ${path} (65 MiB, more than the 64 MiB a recall reads: read it with the bash tool)`;
		const missed = await stub.call("recall_folded", { codes: [code], grep: "not in the copy" });
		assert.ok(missed.includes(`and the others are ${where}`), missed);
		const lines = await stub.call("recall_folded", { codes: [code], lines: "10-12" });
		assert.ok(lines.includes(`lines 10-12 are ${where}`), lines);
		assert.doesNotMatch(`${missed}\n${lines}`, /deleted/);
		unlinkSync(path);
		assert.match(
			await stub.call("recall_folded", { codes: [code], lines: "10-12" }),
			/cannot be read here \(deleted/,
		);
	});
});

describe("recall over a truncated result of Pi's powershell tool (Windows)", () => {
	it("reads its own pi-powershell log as it reads bash's, numbered as in that file, and says which tool's it is", async () => {
		const path = join(temp, `pi-powershell-${"ab".repeat(8)}.log`);
		const total = 900;
		const line = (n: number) => `ps line ${n}${n === 20 ? " Error: only in the full output" : ""}`;
		writeFileSync(path, `${Array.from({ length: total }, (_, k) => line(k + 1)).join("\n")}\n`);
		assert.equal(readToolOutputFile(path)?.split("\n").length, total + 1, "its own log in the temp dir");
		const kept = Array.from({ length: 300 }, (_, k) => line(601 + k)).join("\n");
		const { stub, code, digest } = await foldedBashSession(
			path,
			6,
			(i) =>
				i === 0
					? `${kept}\n\n[Showing lines 601-900 of 900. Full output: ${path}]\n\nCommand exited with code 1`
					: Array.from({ length: 200 }, (_, k) => `result ${i} line ${k} of the other command output`).join("\n"),
			{ window: 10_000, tool: "powershell", failed: true },
		);
		assert.match(digest, /powershell: error, 900 lines, L601-900 held/, "numbered as in its file");
		const fromFile = await stub.call("recall_folded", { codes: [code], grep: "only in the full output" });
		assert.match(fromFile, /from the powershell tool's full output file, which the fold-time sha256 does not cover/);
		assert.match(fromFile, /Error: only in the full output/);
		unlinkSync(path);
		const gone = await stub.call("recall_folded", { codes: [code], lines: "10-12" });
		assert.match(gone, /only in the powershell tool's full output file, which cannot be read here/);
	});
});

describe("a whole recall of a truncated bash result, cut at the output cap", () => {
	const TOTAL = 5000;
	const FIRST = 3448;
	const line = (n: number) => `out line ${String(n).padStart(4, "0")} ${"x".repeat(40)}`;

	/**
	 * A session whose first bash result is the tail Pi's bash tool kept of TOTAL lines, folded, ending
	 * with Pi's `status` line when given (a failed command); its code.
	 */
	function folded(path: string, status?: string) {
		const kept = Array.from({ length: TOTAL - FIRST + 1 }, (_, k) => line(FIRST + k)).join("\n");
		const notice = `[Showing lines ${FIRST}-${TOTAL} of ${TOTAL} (50.0KB limit). Full output: ${path}]${status ? `\n\n${status}` : ""}`;
		return foldedBashSession(
			path,
			4,
			(i) =>
				i === 0
					? `${kept}\n\n${notice}`
					: Array.from({ length: 800 }, (_, k) => `result ${i} line ${k} ${"y".repeat(40)}`).join("\n"),
			{ window: 200_000, settings: { "context-fold": { policy: "ladder", foldAt: "0.1" } } },
		);
	}

	/** Follows a whole recall's continuations to the end: every numbered line served, in order. */
	async function follow(stub: Awaited<ReturnType<typeof folded>>["stub"], code: string) {
		const served: string[] = [];
		let args: Record<string, unknown> = { codes: [code] };
		for (let calls = 0; calls < 20; calls++) {
			const text = await stub.call("recall_folded", args);
			served.push(...text.split("\n").filter((l) => /^\d+: /.test(l)));
			const next = /lines="(\d+-\d+)" reads on/.exec(text);
			if (!next) return { served, calls: calls + 1 };
			args = { codes: [code], lines: next[1] };
		}
		assert.fail("the continuations did not end");
	}

	it("numbers the session copy as in the full output file, so that its continuation reads on where it stopped", async () => {
		const path = join(temp, logName(77));
		writeFileSync(path, `${Array.from({ length: TOTAL }, (_, k) => line(k + 1)).join("\n")}\n`);
		const { stub, code } = await folded(path);
		const { served, calls } = await follow(stub, code);
		assert.ok(calls > 1, "the whole recall was not cut");
		const expected = Array.from({ length: TOTAL - FIRST + 1 }, (_, k) => `${FIRST + k}: ${line(FIRST + k)}`);
		assert.deepEqual(served, expected, "lines skipped, repeated or read from elsewhere");
		// A failed command's copy ends with Pi's status line after the notice: read on all the same, and say it.
		const failed = await folded(path, "Command exited with code 1");
		const again = await follow(failed.stub, failed.code);
		assert.deepEqual(
			again.served,
			expected,
			"a failed command's copy: lines skipped, repeated or read from elsewhere",
		);
		const whole = await failed.stub.call("recall_folded", { codes: [failed.code] });
		assert.match(whole, /\n… the copy ends with: Command exited with code 1$/);
	});

	it("numbers it as in that file once the file is gone too, and reads on in the session copy", async () => {
		const path = join(temp, logName(78));
		const { stub, code } = await folded(path);
		const { served, calls } = await follow(stub, code);
		assert.ok(calls > 1, "the whole recall was not cut");
		const expected = Array.from({ length: TOTAL - FIRST + 1 }, (_, k) => `${FIRST + k}: ${line(FIRST + k)}`);
		assert.deepEqual(served, expected, "lines skipped, repeated or numbered as the copy's own");
		const before = await stub.call("recall_folded", { codes: [code], lines: "3440-3449" });
		assert.match(
			before,
			/lines 3440-3447 are only in the bash tool's full output file, which cannot be read here \(deleted, or in another session's temporary folder\); this copy holds lines 3448-5000/,
		);
		assert.deepEqual(
			before.split("\n").filter((l) => /^\d+: /.test(l)),
			[`3448: ${line(3448)}`, `3449: ${line(3449)}`],
		);
		const past = await stub.call("recall_folded", { codes: [code], lines: "5001-5002" });
		assert.match(past, /line 5001 is past the end \(5000 lines\)/);
	});

	it("never calls a file it may not read gone: one in another temporary folder (a resume under another TMPDIR) is there", async () => {
		const path = join(outside, logName(79));
		writeFileSync(path, `${Array.from({ length: TOTAL }, (_, k) => line(k + 1)).join("\n")}\n`);
		const { stub, code } = await folded(path);
		const before = await stub.call("recall_folded", { codes: [code], lines: "3440-3441" });
		assert.match(before, /which cannot be read here \(deleted, or in another session's temporary folder\)/);
		assert.doesNotMatch(before, /gone/);
	});
});

describe("the line a truncated bash result's digest names is the line a recall serves", () => {
	const TOTAL = 5000;
	const FIRST = 3001;
	const ERROR_AT = 4991;
	const line = (n: number) => (n === ERROR_AT ? "Error: boom-4991" : `row ${n} ${"z".repeat(40)}`);
	const body = (n: number) => Array.from({ length: n }, (_, k) => line(k + 1));

	/** A failed command's folded copy of its last lines, the full output file at `path` written when `file`. */
	async function folded(path: string, file: boolean) {
		if (file) writeFileSync(path, `${body(TOTAL).join("\n")}\n`);
		const kept = body(TOTAL)
			.slice(FIRST - 1)
			.join("\n");
		const copy = `${kept}\n\n[Showing lines ${FIRST}-${TOTAL} of ${TOTAL}. Full output: ${path}]\n\nCommand exited with code 3`;
		return foldedBashSession(
			path,
			4,
			(i) =>
				i === 0
					? copy
					: Array.from({ length: 800 }, (_, k) => `result ${i} line ${k} ${"y".repeat(40)}`).join("\n"),
			{ window: 200_000, settings: { "context-fold": { policy: "ladder", foldAt: "0.1" } }, failed: true },
		);
	}

	for (const file of [true, false]) {
		it(`numbers the digest's lines as in the full output file, and lines, grep and search agree (${file ? "file there" : "file gone"})`, async () => {
			const path = join(temp, logName(file ? 90 : 91));
			const { stub, code, digest } = await folded(path, file);
			assert.match(digest, /bash: error, 5000 lines, L3001-5000 held/);
			const named = /L(\d+): Error: boom-4991/.exec(digest);
			assert.ok(named, digest);
			assert.equal(Number(named[1]), ERROR_AT, "the digest numbers the line as the copy's own");
			assert.match(digest, /after L5000: Command exited with code 3/);
			const at = await stub.call("recall_folded", { codes: [code], lines: `${named[1]}-${named[1]}` });
			assert.ok(at.split("\n").includes(`${ERROR_AT}: Error: boom-4991`), at);
			const grep = await stub.call("recall_folded", { codes: [code], grep: "boom-4991" });
			assert.ok(grep.split("\n").includes(`${ERROR_AT}: Error: boom-4991`), grep);
			const search = await stub.call("recall_folded", { search: "boom-4991" });
			assert.ok(search.split("\n").includes(`${ERROR_AT}: Error: boom-4991`), search);
			// The status after the notice is in no line of the file, and grep finds it with the file or without.
			const status = await stub.call("recall_folded", { codes: [code], grep: "exited" });
			assert.ok(status.split("\n").includes("after 5000: Command exited with code 3"), status);
			if (!file) assert.match(at, /^Recalled #[0-9a-z]{8}: bash, 5000 lines, L3001-5000 held \(sha256 verified\)/);
		});
	}
});

describe("another tool's text that ends like the bash tool's notice", () => {
	const items = Array.from({ length: 2000 }, (_, k) =>
		k === 2 ? "item 3 error: disk full" : `item ${k + 1} ${"x".repeat(60)}`,
	);
	const path = () => join(temp, logName(97));
	const text = () => `${items.join("\n")}\n\n[Showing lines 3001-5000 of 5000. Full output: ${path()}]`;

	it("is its own text to its digest, lines, grep and search: numbered from 1, and no file is read for it", async () => {
		// A bash log of another run at that path, which the tool's details name too: never read for it.
		writeFileSync(path(), `${Array.from({ length: 5000 }, (_, k) => `other ${k + 1}`).join("\n")}\n`);
		const { stub, code, digest } = await foldedBashSession(
			path(),
			4,
			(i) =>
				i === 0
					? text()
					: Array.from({ length: 800 }, (_, k) => `result ${i} line ${k} ${"y".repeat(40)}`).join("\n"),
			{ window: 200_000, settings: { "context-fold": { policy: "ladder", foldAt: "0.1" } }, tool: "odd_out" },
		);
		assert.match(digest, /odd_out: 2002 lines/);
		assert.doesNotMatch(digest, /held|5000 lines/);
		assert.match(digest, /\nL3: item 3 error: disk full/);
		const first = await stub.call("recall_folded", { codes: [code], lines: "1-4" });
		assert.deepEqual(
			first.split("\n").filter((l) => /^\d+: /.test(l)),
			[`1: ${items[0]}`, `2: ${items[1]}`, "3: item 3 error: disk full", `4: ${items[3]}`],
		);
		assert.match(first, /^Recalled #[0-9a-z]{8}: odd_out, 2002 lines \(sha256 verified\)/);
		await servedAlike(stub, code, 3, "disk full", "3: item 3 error: disk full");
	});
});

/**
 * Asserts that a `lines` recall of file line `n` of `code`, a `grep` of its block for `needle` and a
 * `search` for `needle` all serve `served`, the line numbered as in its file; the `lines` answer.
 */
async function servedAlike(stub: StubPi, code: string, n: number, needle: string, served: string): Promise<string> {
	const at = await stub.call("recall_folded", { codes: [code], lines: `${n}-${n}` });
	assert.ok(at.split("\n").includes(served), at);
	const grep = await stub.call("recall_folded", { codes: [code], grep: needle });
	assert.ok(grep.split("\n").includes(served), grep);
	const search = await stub.call("recall_folded", { search: needle });
	assert.ok(search.split("\n").includes(served), search);
	return at;
}

describe("a read of part of a file", () => {
	const line = (n: number) => (n === 250 ? "Error: boom-250" : `src row ${n} ${"z".repeat(40)}`);
	const window = Array.from({ length: 1001 }, (_, k) => line(100 + k)).join("\n");

	it("is numbered as in the file by its digest, lines, grep and search; lines outside it say so", async () => {
		const { stub, code, digest } = await foldedBashSession(
			join(temp, logName(95)),
			4,
			(i) =>
				i === 0
					? `${window}\n\n[Showing lines 100-1100 of 5000. Use offset=1101 to continue.]`
					: Array.from({ length: 800 }, (_, k) => `result ${i} line ${k} ${"y".repeat(40)}`).join("\n"),
			{ window: 200_000, settings: { "context-fold": { policy: "ladder", foldAt: "0.1" } }, tool: "read" },
		);
		assert.match(digest, /read: 5000 lines, L100-1100 held/);
		assert.match(digest, /\nL250: Error: boom-250/);
		await servedAlike(stub, code, 250, "boom-250", "250: Error: boom-250");
		const outside = await stub.call("recall_folded", { codes: [code], lines: "1101-1110" });
		assert.match(outside, /lines 1101-1110 are not in this read of the file .*; this copy holds lines 100-1100/);
		// A grep finding nothing in the part held says the other lines are elsewhere, and how to reach them.
		const absent = await stub.call("recall_folded", { codes: [code], grep: "only-past-the-window" });
		assert.match(
			absent,
			/\nno line contains "only-past-the-window"; this copy holds lines 100-1100 of 5000, and the others are not in this read of the file \(read it again with offset to see them\)$/,
		);
		const across = await stub.call("recall_folded", { codes: [code], lines: "1099-1103" });
		assert.deepEqual(
			across.split("\n").filter((l) => /^\d+: /.test(l)),
			[`1099: ${line(1099)}`, `1100: ${line(1100)}`],
		);
		assert.match(across, /\n… lines 1101-1103 are not in this read of the file/);
		assert.match(across, /^Recalled #[0-9a-z]{8}: read, 5000 lines, L100-1100 held /);
	});

	it("from an offset to the file's end is numbered from its offset, as the call asked (no notice says so)", async () => {
		const at = (n: number) => (n === 2250 ? "Error: boom-2250" : `src row ${n} ${"z".repeat(40)}`);
		const tail = Array.from({ length: 1000 }, (_, k) => at(2001 + k)).join("\n");
		const { stub, code, digest } = await foldedBashSession(
			join(temp, logName(96)),
			4,
			(i) =>
				i === 0
					? tail
					: Array.from({ length: 800 }, (_, k) => `result ${i} line ${k} ${"y".repeat(40)}`).join("\n"),
			{
				window: 200_000,
				settings: { "context-fold": { policy: "ladder", foldAt: "0.1" } },
				tool: "read",
				args: { path: "src/big.ts", offset: 2001 },
			},
		);
		assert.match(digest, /read: 3000 lines, L2001-3000 held/);
		assert.match(digest, /\nL2250: Error: boom-2250/);
		const records = stub.entries.flatMap(
			(e) => (e.data as { records?: { code: string; from?: number }[] })?.records ?? [],
		);
		assert.equal(
			records.find((r) => r.code === code)?.from,
			2001,
			"the fold record keeps the start for later recalls",
		);
		const line = await servedAlike(stub, code, 2250, "boom-2250", "2250: Error: boom-2250");
		assert.match(line, /^Recalled #[0-9a-z]{8}: read, 3000 lines, L2001-3000 held /);
		const before = await stub.call("recall_folded", { codes: [code], lines: "1-5" });
		assert.match(before, /lines 1-5 are not in this read of the file .*; this copy holds lines 2001-3000/);
		const past = await stub.call("recall_folded", { codes: [code], lines: "3001-3005" });
		assert.match(past, /line 3001 is past the end \(3000 lines\)/);
		// Restored from the session file, the record still says where the copy starts.
		await stub.emit("session_start", { reason: "resume" });
		const resumed = await stub.call("recall_folded", { codes: [code], lines: "2250-2250" });
		assert.ok(resumed.split("\n").includes("2250: Error: boom-2250"), resumed);
	});
});
