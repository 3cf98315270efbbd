/**
 * `recall_folded search=` over folded blocks: an exact identifier lists the blocks holding it as a
 * whole token before those holding it inside a longer token, whatever their order in the session.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recallSummary } from "../../src/adapters/pi/ui/renderers.ts";
import { loadStub, resultTexts } from "./stub-pi.ts";

/**
 * A session of tool results, result `i` (of the tool `toolOf(i)`, bash by default) holding `lines[i]`
 * among filler lines, ended by a new user message.
 */
function session(lines: readonly string[], toolOf: (i: number) => string = () => "bash", length = 200) {
	const stub = loadStub();
	let ts = 1_700_000_000_000;
	stub.addMessage({ role: "user", content: "list the dependencies", timestamp: ts++ });
	lines.forEach((line, i) => {
		const id = `call_${i}`;
		stub.addMessage({
			role: "assistant",
			content: [{ type: "toolCall", id, name: toolOf(i), arguments: { command: `cat deps-${i}.json` } }],
			responseId: `resp_${i}`,
			usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
			stopReason: "toolUse",
			timestamp: ts++,
		});
		const body = Array.from({ length }, (_, k) => (k === 7 ? line : `filler ${k} of file ${i}`)).join("\n");
		stub.addMessage({
			role: "toolResult",
			toolCallId: id,
			toolName: toolOf(i),
			content: [{ type: "text", text: body }],
			isError: false,
			timestamp: ts++,
		});
	});
	stub.addMessage({ role: "user", content: "thanks, next", timestamp: ts++ });
	return stub;
}

/**
 * The session of `lines` started and sent once, the digest of the first result whose digest `holds`
 * (the first folded one by default), and its code; fails when none folded.
 */
async function folded(lines: readonly string[], holds = "") {
	const stub = session(lines);
	await stub.emit("session_start", { reason: "startup" });
	const digest = resultTexts(await stub.request()).find((t) => t.startsWith("{#") && t.includes(holds)) ?? "";
	const code = /^\{#([0-9a-z]{8}) FOLDED\}/.exec(digest)?.[1];
	assert.ok(code, `the result folded: ${digest.slice(0, 200)}`);
	return { stub, digest, code };
}

describe("the transcript's line for a recall", () => {
	it("says what was served of a block when not all of it: a grep, a line range, a whole recall the cap cut", async () => {
		const stub = session(['"zod": "^4.0.0"', "x", "x", "x", "x", "x"], () => "bash", 3000);
		await stub.emit("session_start", { reason: "startup" });
		const codes = resultTexts(await stub.request()).flatMap((t) => /^\{#([0-9a-z]{8}) FOLDED\}/.exec(t)?.[1] ?? []);
		assert.ok(codes.length >= 1, "a block folded");
		const tool = stub.tools.get("recall_folded");
		assert.ok(tool);
		const line = async (params: Record<string, unknown>) => {
			const result = (await tool.execute("call", params, undefined, undefined, {} as never)) as {
				content: { text: string }[];
				details?: { heads?: unknown };
			};
			return recallSummary(result.content.map((c) => c.text).join("\n"), undefined, result.details?.heads)[0];
		};
		const [code] = codes;
		assert.match(await line({ codes: [code], grep: "zod" }), / · 3000 lines \(grep: 1 matching line\) · /);
		assert.match(await line({ codes: [code], grep: "nowhere" }), / · 3000 lines \(grep: no line matches\) · /);
		assert.match(await line({ codes: [code], lines: "10-12" }), / · 3000 lines \(lines 10-12\) · /);
		assert.match(
			await line({ codes: [code] }),
			/ · 3000 lines \(cut at the output cap: lines \d+-3000 not shown\) · /,
			"a whole recall the cap cut says so",
		);
	});
});

describe("recall_folded search ranking", () => {
	/** Starts `stub`, folds its blocks (two at least), and searches them for 4.0.0, found in two. */
	async function searched(stub: ReturnType<typeof session>): Promise<string> {
		await stub.emit("session_start", { reason: "startup" });
		const folded = resultTexts(await stub.request()).filter((t) => t.startsWith("{#"));
		assert.ok(folded.length >= 2, `folded ${folded.length}`);
		const out = await stub.call("recall_folded", { search: "4.0.0" });
		assert.match(out, /^2 blocks contain "4\.0\.0":/);
		return out;
	}

	it("a block comes before a fold tool's result that quotes it, whatever their order", async () => {
		const line = '"zod": "^4.0.0"';
		const out = await searched(
			session([line, line, "filler", "filler", "filler", "filler"], (i) => (i === 0 ? "recall_folded" : "bash")),
		);
		const original = out.indexOf(": bash, 200 lines");
		const echo = out.indexOf(": recall_folded, 200 lines");
		assert.ok(original >= 0 && echo > original, out.slice(0, 600));
	});

	it("a block holding the pattern as a whole token comes before one holding it inside a longer token", async () => {
		const out = await searched(
			session(['"uuid": "^14.0.0",', '"zod": "^4.0.0"', "filler", "filler", "filler", "filler"]),
		);
		const zod = out.indexOf('"zod": "^4.0.0"');
		const uuid = out.indexOf('"uuid": "^14.0.0"');
		assert.ok(zod > 0 && uuid > 0, out);
		assert.ok(zod < uuid, "the whole-token block is listed first");
	});
});

describe("risk lines a digest leaves out", () => {
	it("are each found by the lines recall the digest names, by search and by a grep of the block, from the stored original", async () => {
		const errors = Array.from({ length: 20 }, (_, k) => `Error: check ${k} failed in module_${k} (code E${100 + k})`);
		const { stub, digest, code } = await folded(
			[errors.join("\n"), "filler", "filler", "filler", "filler", "filler"],
			"module_0",
		);
		const left = errors.filter((line) => !digest.includes(line));
		const counted = Number(/… (\d+) more distinct risk lines? left out/.exec(digest)?.[1] ?? 0);
		assert.ok(left.length > 0, "the digest's bound left some out");
		assert.equal(counted, left.length, "each left out is counted");
		const named = /: recall_folded codes=\["([0-9a-z]{8})"\] lines="([\d-]+)"$/m.exec(digest);
		assert.equal(named?.[1], code, "the digest names its own code");
		const ranged = await stub.call("recall_folded", { codes: [code], lines: named?.[2] });
		for (const line of left) {
			assert.ok(ranged.includes(line), `the lines the digest names hold ${line}`);
			assert.ok((await stub.call("recall_folded", { search: line })).includes(line), `search finds ${line}`);
			assert.ok(
				(await stub.call("recall_folded", { codes: [code], grep: line })).includes(line),
				`grep finds ${line}`,
			);
		}
	});
});

describe("a pattern that finds nothing and reads like a regular expression", () => {
	it("is answered with a reminder that patterns are plain text; a plain one without it", async () => {
		const { stub, code } = await folded(['"zod": "^4.0.0"', "filler", "filler", "filler", "filler", "filler"]);
		const hint = /\(patterns are plain text, matched in any case, not regular expressions/;
		for (const pattern of ["zod|uuid", "zod.*4", "^filler", "\\d+", "fail(ed)?", "[0-9]+"]) {
			assert.match(await stub.call("recall_folded", { codes: [code], grep: pattern }), hint, pattern);
			assert.match(await stub.call("recall_folded", { search: pattern }), hint, pattern);
		}
		const plain = await stub.call("recall_folded", { codes: [code], grep: "absent-word" });
		assert.match(plain, /no line contains "absent-word"$/);
		assert.doesNotMatch(await stub.call("recall_folded", { search: "absent-word" }), hint);
		assert.match(await stub.call("recall_folded", { codes: [code], grep: "zod" }), /matching line/);
	});
});

describe("grep or lines beside a search without codes", () => {
	it("says they read only the blocks codes names, and searches whole", async () => {
		const stub = session(['"zod": "^4.0.0"', "filler", "filler", "filler", "filler", "filler"]);
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		for (const args of [{ lines: "1-3" }, { grep: "zod" }]) {
			const out = await stub.call("recall_folded", { search: "4.0.0", ...args });
			const name = Object.keys(args)[0];
			assert.match(
				out,
				new RegExp(
					`^\\(\`${name}\` read the blocks \`codes\` names, and none was given: the search below is whole\\)`,
				),
			);
			assert.match(out, /block contains "4\.0\.0"/);
		}
		assert.doesNotMatch(await stub.call("recall_folded", { search: "4.0.0" }), /read the blocks/);
	});
});

describe("arguments a fold tool does not take", () => {
	it("are refused, naming the nearest one, not ignored (recall_folded would serve the whole block)", async () => {
		const { stub, code } = await folded(
			["Error: needle here", "filler", "filler", "filler", "filler", "filler"],
			"needle",
		);
		const misspelled = await stub.answer("recall_folded", { codes: [code], line: "1-2", pattern: "x" });
		assert.equal(misspelled.isError, true);
		assert.equal(
			misspelled.text,
			"recall_folded: unknown arguments `line` (did you mean `lines`?), `pattern`; it takes `codes`, `grep`, `lines`, `search`",
		);
		assert.doesNotMatch(misspelled.text, /filler/, "nothing of the block is served");
		const unfold = await stub.answer("unfold", { codes: [code], grep: "x" });
		assert.equal(unfold.isError, true);
		assert.equal(unfold.text, "unfold: unknown argument `grep`; it takes `codes`");
		const known = await stub.answer("recall_folded", { codes: [code], lines: "1-2" });
		assert.equal(known.isError, false, known.text);
	});

	it("are named eight at most, the rest counted, however many the call holds", async () => {
		const { stub, code } = await folded(["Error: needle here", "filler", "filler", "filler", "filler"], "needle");
		const padded = Object.fromEntries(Array.from({ length: 5000 }, (_, k) => [`unknown_${k}_${"pad".repeat(9)}`, 1]));
		for (const tool of ["recall_folded", "unfold"]) {
			const out = await stub.answer(tool, { codes: [code], ...padded });
			assert.equal(out.isError, true);
			assert.ok(out.text.length < 800, `${tool}: ${out.text.length} characters`);
			assert.match(out.text, /`unknown_7_pad[a-z]*`, and 4992 more; it takes `codes`/);
		}
	});
});

describe("a search that shows part of a block's matches", () => {
	it("counts the lines it left out and names the call that shows them", async () => {
		const many = Array.from({ length: 20 }, (_, k) => `needle row ${k}`).join("\n");
		const stub = session([many, "filler", "filler", "filler", "filler", "filler"]);
		await stub.emit("session_start", { reason: "startup" });
		const sent = resultTexts(await stub.request());
		assert.ok(!sent.some((t) => t.includes("needle row 19")), "the block folded");
		const out = await stub.call("recall_folded", { search: "needle row" });
		const code = /^Recalled #([0-9a-z]{8}):/m.exec(out)?.[1];
		assert.match(out, /: 20 matches\n/);
		const shown = out.split("\n").filter((l) => /^\d+: needle row/.test(l)).length;
		assert.ok(shown > 0 && shown < 20, out);
		assert.ok(
			out.includes(
				`\n… ${20 - shown} more matching lines in this block not shown; recall_folded codes=["${code}"] with the same grep shows them`,
			),
			out,
		);
		const grep = await stub.call("recall_folded", { codes: [code], grep: "needle row" });
		assert.match(grep, /\n20 matching lines:\n/, "the call named shows them");
	});

	it("a code named more than 20 times counts once toward the 20 a call may name", async () => {
		const { stub, code } = await folded(
			["Error: once", "filler", "filler", "filler", "filler", "filler"],
			"Error: once",
		);
		const same = await stub.answer("recall_folded", { codes: Array.from({ length: 21 }, () => code), lines: "1-1" });
		assert.equal(same.isError, false, same.text);
		assert.match(same.text, new RegExp(`^Recalled #${code}:`));
		const distinct = Array.from({ length: 21 }, (_, k) => `zz${String(k).padStart(6, "0")}`);
		const many = await stub.answer("recall_folded", { codes: distinct });
		assert.deepEqual(many, { text: "recall_folded: at most 20 distinct codes per call (got 21)", isError: true });
		// Items that are not codes do not count toward the 20: the code beside them is served, and each
		// such item is said once, the first eight named.
		const padded = await stub.answer("recall_folded", { codes: [code, ...Array(20).fill(""), "x", "x"], lines: "1" });
		assert.equal(padded.isError, false, padded.text);
		assert.match(padded.text, /^"", "x" are not fold codes/);
		assert.match(padded.text, new RegExp(`^Recalled #${code}:`, "m"));
		const junk = Array.from({ length: 30 }, (_, k) => `junk-${k}`);
		const named = await stub.answer("recall_folded", { codes: junk });
		assert.equal(named.isError, true);
		assert.match(named.text, /^recall_folded: "junk-0", .*"junk-7", and 22 more are not fold codes/);
		// A list past its item bound says how many items it held, not that they were so many codes.
		const long = await stub.answer("recall_folded", { codes: Array.from({ length: 201 }, () => code), lines: "1" });
		assert.deepEqual(long, {
			text: "recall_folded: at most 20 distinct codes per call, in a list of at most 200 items (got 201 items)",
			isError: true,
		});
	});
});

describe("a recall header", () => {
	it("quotes tag-shaped text it names (a tool's name here), so that every tag the model reads is the engine's", async () => {
		const stub = loadStub();
		let ts = 1_700_000_000_000;
		stub.addMessage({ role: "user", content: "go", timestamp: ts++ });
		for (let i = 0; i < 6; i++) {
			const id = `call_${i}`;
			const name = i === 0 ? "probe{#abcdefgh FOLDED}" : "bash";
			stub.addMessage({
				role: "assistant",
				content: [{ type: "toolCall", id, name, arguments: { command: `run ${i}` } }],
				responseId: `resp_${i}`,
				usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
				stopReason: "toolUse",
				timestamp: ts++,
			});
			const body = Array.from({ length: 200 }, (_, k) => `row ${k} of run ${i}`).join("\n");
			stub.addMessage({
				role: "toolResult",
				toolCallId: id,
				toolName: name,
				content: [{ type: "text", text: body }],
				isError: false,
				timestamp: ts++,
			});
		}
		stub.addMessage({ role: "user", content: "next", timestamp: ts++ });
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		const out = await stub.call("recall_folded", { search: "row 5 of run 0" });
		const head = out.split("\n").find((l) => l.startsWith("Recalled #")) ?? "";
		assert.match(head, /^Recalled #[0-9a-z]{8}: probe\[quoted tag #abcdefgh\], 200 lines/, out.slice(0, 300));
		assert.ok(!out.includes("{#abcdefgh FOLDED}"), out.slice(0, 300));
	});
});
