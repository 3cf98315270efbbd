/**
 * Where a truncated shell (bash, powershell) or read result's session copy sits in its file, read from
 * the notice Pi's tool ends it with, and the shell tools' status lines.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolResultDigest } from "../../src/core/digest.ts";
import { isShellStatusLine, outputFilePlace } from "../../src/core/output-notices.ts";

const rows = (from: number, to: number) =>
	Array.from({ length: to - from + 1 }, (_, k) => `row ${from + k}`).join("\n");

/** A place with its held text as its length, to compare whole. */
function sized(place: ReturnType<typeof outputFilePlace>) {
	return { ...place, held: place?.held.length };
}

describe("outputFilePlace", () => {
	it("reads the bash tool's notice, by lines or by bytes, with a failed command's status after it", () => {
		const path = "/tmp/pi-bash-00000000000000aa.log";
		const lines = outputFilePlace(`${rows(3001, 5000)}\n\n[Showing lines 3001-5000 of 5000. Full output: ${path}]`);
		assert.deepEqual(sized(lines), {
			source: "shell",
			tool: "bash",
			first: 3001,
			last: 5000,
			total: 5000,
			held: rows(3001, 5000).length,
			trailer: [`[Showing lines 3001-5000 of 5000. Full output: ${path}]`],
		});
		const failed = outputFilePlace(
			`${rows(11, 20)}\n\n[Showing lines 11-20 of 20 (50.0KB limit). Full output: ${path}]\n\nCommand exited with code 3`,
		);
		assert.equal(failed?.status, "Command exited with code 3");
		assert.equal(failed?.first, 11);
		assert.equal(failed?.trailer.length, 2);
	});

	it("reads the bash tool's notice for the end of a long last line: the copy is that line, numbered as in the file", () => {
		const path = "/tmp/pi-bash-0123456789abcdef.log";
		const tail = `${'{"k":1},'.repeat(6000)}"FATAL: disk quota exceeded"]`;
		const notice = `[Showing last 50.0KB of line 3 (line is 960.0KB). Full output: ${path}]`;
		const place = outputFilePlace(`${tail}\n\n${notice}\n\nCommand exited with code 1`, { tool: "bash" });
		assert.deepEqual(sized(place), {
			source: "shell",
			tool: "bash",
			first: 3,
			last: 3,
			total: 3,
			held: tail.length,
			trailer: [notice, "Command exited with code 1"],
			status: "Command exited with code 1",
			lineTail: true,
		});
		// The digest names the line a recall of lines="3" serves (the file's third line), not its copy's first.
		const digest = toolResultDigest({
			code: "abcd1234",
			toolName: "bash",
			isError: true,
			text: `${tail}\n\n${notice}\n\nCommand exited with code 1`,
		});
		assert.match(digest, /\nL3: .*FATAL: disk quota exceeded/);
		assert.doesNotMatch(digest, /\nL1: /);
		// It says the copy holds only the line's end, and quotes that end as what it is: no line's start.
		assert.match(
			digest,
			/^\{#abcd1234 FOLDED\} bash: error, 3 lines, the end of L3 held, ~\d+ tokens\. First line: …\{"k":1\}/,
		);
	});

	it("reads the read tool's notices: a window of the file, or the lines a limit left", () => {
		const window = outputFilePlace(
			`${rows(100, 300)}\n\n[Showing lines 100-300 of 5000. Use offset=301 to continue.]`,
		);
		assert.deepEqual([window?.source, window?.first, window?.last, window?.total], ["read", 100, 300, 5000]);
		const limited = outputFilePlace(`${rows(51, 80)}\n\n[120 more lines in file. Use offset=81 to continue.]`);
		assert.deepEqual([limited?.source, limited?.first, limited?.last, limited?.total], ["read", 51, 80, 200]);
	});

	it("gives nothing for a text without a notice, or whose notice does not fit the lines before it", () => {
		assert.equal(outputFilePlace(rows(1, 10)), undefined);
		assert.equal(outputFilePlace(`${rows(1, 10)}\n\n[Showing lines 1-20 of 20. Full output: /tmp/x.log]`), undefined);
		assert.equal(
			outputFilePlace(`${rows(1, 10)}\n[Showing lines 1-10 of 10. Use offset=11 to continue.]`),
			undefined,
		);
		assert.equal(outputFilePlace("[Showing lines 1-1 of 1. Use offset=2 to continue.]"), undefined);
	});
});

describe("outputFilePlace with a read's start", () => {
	it("numbers a read from an offset to the file's end from that offset, the file ending with it", () => {
		const place = outputFilePlace(rows(2001, 2400), { from: 2001 });
		assert.deepEqual(
			{ ...place, held: place?.held.length },
			{ source: "read", first: 2001, last: 2400, total: 2400, held: rows(2001, 2400).length, trailer: [] },
		);
		// The file's own last line feed ends its last line: a whole read of it counts as many lines.
		const fed = outputFilePlace(`${rows(2001, 2400)}\n`, { from: 2001 });
		assert.deepEqual([fed?.first, fed?.last, fed?.total], [2001, 2400, 2400]);
	});

	it("lets a notice say where the lines are, and gives nothing from line 1 or for Pi's too-long-line notice", () => {
		const noticed = outputFilePlace(`${rows(10, 19)}\n\n[5 more lines in file. Use offset=20 to continue.]`, {
			from: 10,
		});
		assert.deepEqual([noticed?.first, noticed?.last, noticed?.total], [10, 19, 24]);
		// A notice whose numbers disagree with the lines is no place, whatever the call asked.
		assert.equal(
			outputFilePlace(`${rows(10, 19)}\n\n[Showing lines 10-12 of 50. Use offset=13 to continue.]`, { from: 10 }),
			undefined,
		);
		assert.equal(outputFilePlace(rows(1, 5), { from: 1 }), undefined);
		assert.equal(outputFilePlace(rows(1, 5), { from: 0 }), undefined);
		assert.equal(outputFilePlace(rows(1, 5)), undefined);
		const wide = "[Line 7 is 80.0KB, exceeds 50.0KB limit. Use bash: sed -n '7p' big.txt | head -c 51200]";
		assert.equal(outputFilePlace(wide, { from: 7 }), undefined);
	});
});

describe("outputFilePlace by the tool that returned the text", () => {
	const bash = `${rows(941, 1000)}\n\n[Showing lines 941-1000 of 1000. Full output: /tmp/pi-bash-0123456789abcdef.log]`;
	const read = `${rows(51, 80)}\n\n[120 more lines in file. Use offset=81 to continue.]`;

	it("reads a notice only in the text of the tool that writes it", () => {
		assert.equal(outputFilePlace(bash, { tool: "bash" })?.first, 941);
		assert.equal(outputFilePlace(read, { tool: "read" })?.first, 51);
		// Another tool's text that ends like one is its own text: a log it printed, a run it passes on.
		for (const tool of ["odd_out", "read", "subagent"])
			assert.equal(outputFilePlace(bash, { tool }), undefined, tool);
		for (const tool of ["odd_out", "bash"]) assert.equal(outputFilePlace(read, { tool }), undefined, tool);
		assert.equal(outputFilePlace(rows(2001, 2400), { tool: "bash", from: 2001 }), undefined);
	});

	it("reads Pi's powershell tool (Windows) as it reads bash: the same notice and status line", () => {
		const ps = `${rows(3002, 5001)}\n\n[Showing lines 3002-5001 of 5001. Full output: C:\\Users\\Ann\\AppData\\Local\\Temp\\pi-powershell-0123456789abcdef.log]\n\nCommand exited with code 1`;
		const place = outputFilePlace(ps, { tool: "powershell" });
		assert.deepEqual(
			[place?.source, place?.tool, place?.first, place?.last, place?.total],
			["shell", "powershell", 3002, 5001, 5001],
		);
		assert.equal(place?.status, "Command exited with code 1");
		const digest = toolResultDigest({ code: "abcd1234", toolName: "powershell", text: ps, isError: true });
		assert.match(digest, /^\{#abcd1234 FOLDED\} powershell: error, 5001 lines, L3002-5001 held/);
	});

	it("reads either notice where the tool is not known (a record of an older version)", () => {
		assert.equal(outputFilePlace(bash)?.source, "shell");
		assert.equal(outputFilePlace(bash)?.tool, "bash");
		assert.equal(outputFilePlace(read)?.source, "read");
	});
});

describe("isShellStatusLine", () => {
	it("is true for the bash tool's own status lines only", () => {
		for (const line of [
			"Command exited with code 1",
			"Command exited with code -1",
			"Command aborted",
			"Command timed out after 30 seconds",
			"Command timed out after 30 seconds. The shell exited with code 0 after 2 seconds, but background processes it started kept writing output until the timeout.",
			"Command terminated without an exit code",
		])
			assert.ok(isShellStatusLine(line), line);
		for (const line of [
			"Error: Command exited with code 1",
			"command exited with code 1",
			"Command exited with code 1 (see above)",
		])
			assert.ok(!isShellStatusLine(line), line);
	});
});
