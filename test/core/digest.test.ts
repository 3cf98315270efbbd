/**
 * Fold codes (FNV-1a 64 vectors, base36, the parser's accepted forms), the tag helpers, and the
 * per-kind digests.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	ARG_FOLD_CHARS,
	ARG_OUTLINE_CHARS,
	argDigest,
	CODE_LENGTH,
	codesIn,
	DIGEST_LIMITS,
	duplicateDigest,
	fnv1a64,
	foldArgs,
	foldCode,
	foldTag,
	KEPT_COMMAND_CHARS,
	parseCode,
	stripTags,
	textDigest,
	thinkingDigest,
	toolResultDigest,
} from "../../src/core/digest.ts";

describe("fnv1a64", () => {
	it("matches the published FNV-1a 64-bit test vectors", () => {
		assert.equal(fnv1a64(""), 0xcbf29ce484222325n);
		assert.equal(fnv1a64("a"), 0xaf63dc4c8601ec8cn);
		assert.equal(fnv1a64("foobar"), 0x85944171f73967e8n);
	});

	it("hashes UTF-8 bytes, not UTF-16 units", () => {
		// "é" is the two UTF-8 bytes c3 a9: hashing them one by one must give the same value
		let h = 0xcbf29ce484222325n;
		for (const byte of [0xc3, 0xa9]) h = BigInt.asUintN(64, (h ^ BigInt(byte)) * 0x100000001b3n);
		assert.equal(fnv1a64("é"), h);
	});

	it("stays within 64 bits", () => {
		const h = fnv1a64("x".repeat(1000));
		assert.ok(h >= 0n && h < 1n << 64n);
	});
});

describe("foldCode", () => {
	it("is 8 lowercase base36 characters", () => {
		assert.equal(CODE_LENGTH, 8);
		for (const id of ["", "r:call_1", "a:resp_9:2", "u:1700000000000", "a:toolu_01:args"]) {
			assert.match(foldCode(id), /^[0-9a-z]{8}$/);
		}
	});

	it("is fnv1a64 mod 36^8 in base36 (known values)", () => {
		assert.equal(foldCode(""), "hzj4ux45");
		assert.equal(foldCode("a"), "goiv4rrg");
		assert.equal(foldCode("foobar"), "2xt5fmco");
		assert.equal(foldCode("r:call_1"), "ozi8xevl");
		assert.equal(foldCode("u:1700000000000"), "4maepg7u");
	});

	it("pads small values with leading zeros", () => {
		assert.equal(foldCode("r:c2725"), "00xuvg7s");
	});

	it("uses the whole 64-bit hash, not a 32-bit one", () => {
		const h = fnv1a64("r:call_1");
		assert.equal(BigInt(Number.parseInt(foldCode("r:call_1"), 36)), h % 36n ** 8n);
		// a code made from the low 32 bits alone would be at most 0xffffffff < 36^8
		assert.ok(36n ** 8n > 0xffffffffn);
		assert.notEqual(foldCode("r:call_1"), (h & 0xffffffffn).toString(36).padStart(8, "0"));
	});

	it("differs for different ids", () => {
		const codes = new Set(Array.from({ length: 2000 }, (_, i) => foldCode(`r:call_${i}`)));
		assert.equal(codes.size, 2000);
	});
});

describe("foldTag", () => {
	it("is {#code FOLDED}", () => {
		assert.equal(foldTag("abc12345"), "{#abc12345 FOLDED}");
	});
});

describe("parseCode", () => {
	it("accepts a bare code, a #code, and the whole tag", () => {
		assert.equal(parseCode("abc12345"), "abc12345");
		assert.equal(parseCode("#abc12345"), "abc12345");
		assert.equal(parseCode("{#abc12345 FOLDED}"), "abc12345");
	});

	it("accepts any case and returns lowercase", () => {
		assert.equal(parseCode("ABC12345"), "abc12345");
		assert.equal(parseCode("#AbC12345"), "abc12345");
		assert.equal(parseCode("{#ABC12345 folded}"), "abc12345");
	});

	it("accepts surrounding white space", () => {
		assert.equal(parseCode("  abc12345 "), "abc12345");
		assert.equal(parseCode("\t#abc12345\n"), "abc12345");
		assert.equal(parseCode("  {#abc12345 FOLDED}  "), "abc12345");
	});

	it("accepts 6-character legacy codes in every form", () => {
		assert.equal(parseCode("abc123"), "abc123");
		assert.equal(parseCode("#ABC123"), "abc123");
		assert.equal(parseCode("{#abc123 FOLDED}"), "abc123");
	});

	it("round-trips every engine code and tag", () => {
		for (const id of ["r:a", "a:b:0", "u:1", "s:2", "r:c2725"]) {
			const code = foldCode(id);
			assert.equal(parseCode(code), code);
			assert.equal(parseCode(`#${code}`), code);
			assert.equal(parseCode(foldTag(code)), code);
		}
	});

	it("rejects wrong lengths", () => {
		for (const input of ["", "a", "abc12", "abc1234", "abc123456", "#abc1234", "{#abc123456 FOLDED}"]) {
			assert.equal(parseCode(input), null, input);
		}
	});

	it("rejects punctuation and malformed tags", () => {
		for (const input of [
			"abc-1234",
			"abc_1234",
			"abc1234!",
			"abc 12345",
			"##abc12345",
			"#abc12345#",
			"{#abc12345}",
			"{#abc12345",
			"{abc12345 FOLDED}",
			"abc12345 FOLDED}",
			"{#abc12345 FOLDED",
			"{#abc12345 FOLDED}x",
			"code abc12345",
			"abc12345,def67890",
			"ábc12345",
		]) {
			assert.equal(parseCode(input), null, input);
		}
	});

	it("rejects non-strings", () => {
		for (const input of [12345678, null, undefined, {}, ["abc12345"], true, 0n]) {
			assert.equal(parseCode(input), null, String(input));
		}
	});
});

describe("stripTags and codesIn", () => {
	it("removes every tag and the blanks after it", () => {
		assert.equal(stripTags("{#abc12345 FOLDED} read: 3 lines"), "read: 3 lines");
		assert.equal(stripTags("x {#ABC123 FOLDED}  y {#zzzzzzzz FOLDED}"), "x y ");
		assert.equal(stripTags("no tags here"), "no tags here");
	});

	it("lists mentioned codes in order, lowercase", () => {
		assert.deepEqual(codesIn("{#abc12345 FOLDED} see {#ZZZ999 FOLDED} and #nottag"), ["abc12345", "zzz999"]);
		assert.deepEqual(codesIn("nothing"), []);
	});

	it("is stateless across calls (global regex lastIndex does not leak)", () => {
		const text = "{#abc12345 FOLDED} a";
		assert.deepEqual(codesIn(text), ["abc12345"]);
		assert.deepEqual(codesIn(text), ["abc12345"]);
		assert.equal(stripTags(text), "a");
		assert.equal(stripTags(text), "a");
	});
});

describe("toolResultDigest", () => {
	it("reads a truncation notice only in the text of the tool that writes it", () => {
		const items = Array.from({ length: 60 }, (_, k) => `item ${k + 1}`).join("\n");
		const text = `${items}\n\n[Showing lines 941-1000 of 1000. Full output: /tmp/pi-bash-0123456789abcdef.log]`;
		const own = toolResultDigest({ code: "k3x9a0b2", toolName: "odd_out", text, isError: false });
		assert.match(own, /odd_out: 62 lines/);
		assert.doesNotMatch(own, /1000 lines|held/);
		const bash = toolResultDigest({ code: "k3x9a0b2", toolName: "bash", text, isError: false });
		assert.match(bash, /bash: 1000 lines, L941-1000 held/);
	});

	it("lists an indented twin of a recurring first error line, which it used to swallow as the head (invariant 6)", () => {
		const ok = Array.from({ length: 100 }, (_, k) => `ok ${k + 1}`);
		const text = ["error: build failed", ...ok, "    error: build failed", "error: build failed"].join("\n");
		const digest = toolResultDigest({ code: "k3x9a0b2", toolName: "bash", text, isError: false });
		assert.match(digest, /\nL1 ×2: error: build failed\nL102: {5}error: build failed$/);
	});

	it("keeps coloured error lines and frames verbatim, as it keeps plain ones (invariant 6)", () => {
		const E = "\x1b";
		const risky = [
			`${E}[31mFAILED${E}[0m tests/a.py::t - assert 1 == 2`,
			`${E}[1;31mfatal${E}[0m: bad object HEAD`,
			`npm ${E}[31mERR!${E}[39m code ELIFECYCLE`,
			`${E}[31mENOENT${E}[0m missing`,
			`${E}[31mpanic${E}[0m: boom`,
			`${E}[2m    at Object.<anonymous> (/app/x.test.js:3:9)${E}[22m`,
		];
		const text = `${Array.from({ length: 30 }, (_, i) => `ok ${i}`).join("\n")}\n${risky.join("\n")}\n`;
		const digest = toolResultDigest({ code: "k3x9a0b2", toolName: "bash", text, isError: false });
		for (const line of risky) assert.ok(digest.includes(line), `lost: ${JSON.stringify(line)}`);
	});

	it("keeps which files a failed git merge left in conflict, beside the line that says it failed (invariant 6)", () => {
		const text = [
			"Auto-merging src/m7/index.ts",
			"CONFLICT (content): Merge conflict in src/m7/index.ts",
			"Auto-merging src/m9/index.ts",
			"CONFLICT (content): Merge conflict in src/m9/index.ts",
			"Automatic merge failed; fix conflicts and then commit the result.",
			"",
			"Command exited with code 1",
		].join("\n");
		const digest = toolResultDigest({ code: "k3x9a0b2", toolName: "bash", text, isError: true });
		for (const file of ["src/m7/index.ts", "src/m9/index.ts"])
			assert.ok(digest.includes(`Merge conflict in ${file}`), digest);
	});

	it("heads with the tag, tool, line count, tokens and first line", () => {
		const text = "\n  first real line  \nsecond\nthird\n";
		assert.equal(
			toolResultDigest({ code: "abc12345", toolName: "read", text, isError: false }),
			"{#abc12345 FOLDED} read: 4 lines, ~9 tokens. First line: first real line",
		);
	});

	it("says error instead of a bare line count for an error result", () => {
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text: "boom", isError: true });
		// The head shows the first line whole: it is not listed again among the risk lines.
		assert.equal(out, "{#abc12345 FOLDED} bash: error, 1 line, ~1 tokens. First line: boom");
		const two = toolResultDigest({ code: "abc12345", toolName: "bash", text: "a\nb", isError: true });
		assert.equal(two, "{#abc12345 FOLDED} bash: error, 2 lines, ~1 tokens. First line: a\nL2: b");
	});

	it("counts one line in the singular", () => {
		const one = toolResultDigest({ code: "abc12345", toolName: "bash", text: "x".repeat(900), isError: false });
		assert.match(one, /^\{#abc12345 FOLDED\} bash: 1 line, ~225 tokens\./);
	});

	it("keeps every line of an error result that has no lexicon error line (e.g. an edit mismatch)", () => {
		const text = "Could not find the exact text in src/a.ts.\nThe old text must match exactly.";
		const out = toolResultDigest({ code: "abc12345", toolName: "edit", text, isError: true });
		assert.ok(
			out.includes("First line: Could not find the exact text in src/a.ts.\nL2: The old text must match exactly."),
			out,
		);
		const ok = toolResultDigest({ code: "abc12345", toolName: "edit", text, isError: false });
		assert.ok(!ok.includes("L2:"), "a successful result keeps only lexicon lines");
	});

	it("keeps why a command failed when Pi's status line is its only lexicon line, its last lines first", () => {
		const steps = Array.from({ length: 50 }, (_, i) => `step ${i} ok`);
		const text = [
			...steps,
			"bad config value: 42",
			"Usage: tool --level <1-5>",
			"",
			"",
			"Command exited with code 1",
		].join("\n");
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text, isError: true });
		assert.ok(
			out.includes("\nL51: bad config value: 42\nL52: Usage: tool --level <1-5>\nL55: Command exited with code 1"),
			out,
		);
		assert.ok(!out.includes("L1: step 0 ok"), "the head went in before the tail");
		assert.match(out, /… 40 more distinct risk lines left out/);
		const lexicon = toolResultDigest({
			code: "abc12345",
			toolName: "bash",
			text: ["step 1 ok", "Error: the real cause", "", "Command exited with code 2"].join("\n"),
			isError: true,
		});
		assert.ok(lexicon.includes("L2: Error: the real cause\nL4: Command exited with code 2"), lexicon);
		assert.ok(!lexicon.includes("L1:"), "a lexicon error line other than the status keeps the others out");
	});

	it("numbers a truncated bash copy as in the full output file, says which lines it holds, and closes with Pi's status", () => {
		const held = Array.from({ length: 2000 }, (_, k) => (k + 3001 === 4991 ? "Error: boom" : `row ${k + 3001}`));
		const text = `${held.join("\n")}\n\n[Showing lines 3001-5000 of 5000. Full output: /tmp/pi-bash-00000000000000aa.log]\n\nCommand exited with code 3`;
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text, isError: true });
		assert.match(
			out,
			/^\{#abc12345 FOLDED\} bash: error, 5000 lines, L3001-5000 held, ~\d+ tokens\. First line: row 3001\n/,
		);
		assert.ok(out.includes("\nL4991: Error: boom\nafter L5000: Command exited with code 3"), out);
		const read = `${held.join("\n")}\n\n[Showing lines 3001-5000 of 9000. Use offset=5001 to continue.]`;
		assert.match(
			toolResultDigest({ code: "abc12345", toolName: "read", text: read, isError: false }),
			/^\{#abc12345 FOLDED\} read: 9000 lines, L3001-5000 held, ~\d+ tokens\. First line: row 3001\nL4991: Error: boom$/,
			"a read of part of a file numbers its lines as in the file",
		);
		const unmatched = text.replace("of 5000", "of 4000").replace("3001-5000", "3001-4000");
		assert.match(
			toolResultDigest({ code: "abc12345", toolName: "bash", text: unmatched, isError: true }),
			/L1991: Error: boom/,
			"a notice that does not fit the lines before it numbers the copy's own",
		);
	});

	it("cuts a long risk line around its error, not at its head, so the failure signal stays", () => {
		const items = Array.from({ length: 60 }, (_, i) => `{"id":${i},"state":"ok"}`).join(",");
		const line = `{"status":"done","items":[${items}],"code":"ECONNREFUSED","message":"connect refused: did not finish"}`;
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text: `start\n${line}\nend`, isError: false });
		const risk = out.split("\n").find((l) => l.startsWith("L2: ")) ?? "";
		assert.ok(risk?.includes('"code":"ECONNREFUSED","message":"connect refused'), risk);
		assert.ok(risk.startsWith("L2: …") && risk.length <= "L2: ".length + DIGEST_LIMITS.riskLineChars, risk);
		const short = toolResultDigest({
			code: "abc12345",
			toolName: "bash",
			text: "Error: at the head",
			isError: false,
		});
		assert.ok(short.endsWith("First line: Error: at the head"), "a short line is whole, in the head, not repeated");
	});

	it("clips the first line", () => {
		const long = "x".repeat(500);
		const out = toolResultDigest({ code: "abc12345", toolName: "read", text: long, isError: false });
		const first = out.split("First line: ")[1];
		assert.equal(first.length, DIGEST_LIMITS.firstLineChars);
		assert.ok(first.endsWith("…"));
	});

	it("keeps every error line verbatim, in order, with line numbers", () => {
		const lines = Array.from({ length: 50 }, (_, i) => `ok line ${i}`);
		lines[9] = "  ERROR: disk quota exceeded on /dev/sda1";
		lines[30] = "test foo FAILED (exit code 2)";
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text: lines.join("\n"), isError: false });
		assert.ok(out.includes("\nL10:   ERROR: disk quota exceeded on /dev/sda1"));
		assert.ok(out.includes("\nL31: test foo FAILED (exit code 2)"));
		assert.ok(out.indexOf("L10:") < out.indexOf("L31:"));
		assert.ok(!out.includes("more risk line"));
	});

	it("bounds the risk lines in count, with a count of the rest and a recall hint", () => {
		const text = Array.from({ length: 40 }, (_, i) => `error ${i}`).join("\n");
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text, isError: false });
		const risk = out.split("\n").slice(1);
		assert.equal(risk.length, DIGEST_LIMITS.riskLines + 1);
		assert.equal(risk[0], "L2: error 1", "the first line is the head's");
		assert.equal(risk[DIGEST_LIMITS.riskLines - 1], "L13: error 12");
		assert.equal(
			risk.at(-1),
			'… 27 more distinct risk lines left out (L14-40): recall_folded codes=["abc12345"] lines="14-40"',
		);
	});

	it("bounds the risk lines in size (per line and in total)", () => {
		const text = Array.from({ length: 10 }, (_, i) => `fatal ${i} ${"y".repeat(1000)}`).join("\n");
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text, isError: false });
		const risk = out.split("\n").slice(1);
		const kept = risk.slice(0, -1);
		assert.ok(kept.length >= 1 && kept.length < 10);
		for (const line of kept) {
			assert.ok(line.length <= DIGEST_LIMITS.riskLineChars + "L10: ".length, `${line.length}`);
			assert.ok(line.endsWith("…"));
		}
		const keptChars = kept.reduce((n, l) => n + l.length + 1, 0);
		assert.ok(keptChars <= DIGEST_LIMITS.riskChars + 1, `${keptChars}`);
		assert.match(
			risk.at(-1) ?? "",
			new RegExp(
				`^… ${10 - kept.length} more distinct risk lines? left out \\(L${kept.length + 1}-10\\): recall_folded`,
			),
		);
	});

	it("collapses identical risk lines into the first, with their count, and bounds distinct lines only", () => {
		const repeated = Array.from({ length: 30 }, () => "Error: connect ECONNREFUSED 127.0.0.1:5432");
		const text = [
			...repeated,
			"FAIL src/db.test.ts",
			...repeated.slice(0, 5),
			"error TS2304: Cannot find name 'x'",
		].join("\n");
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text, isError: false });
		assert.deepEqual(out.split("\n").slice(1), [
			"L1 ×35: Error: connect ECONNREFUSED 127.0.0.1:5432",
			"L31: FAIL src/db.test.ts",
			"L37: error TS2304: Cannot find name 'x'",
		]);
	});

	it("a single left-out line is singular", () => {
		const text = Array.from({ length: 14 }, (_, i) => `error ${i}`).join("\n");
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text, isError: false });
		assert.ok(
			out.endsWith('… 1 more distinct risk line left out (L14): recall_folded codes=["abc12345"] lines="14"'),
		);
	});

	it("ranks error lines before stack frames", () => {
		const text = [
			"starting",
			"    at run (/app/src/main.ts:10:3)",
			"    at next (/app/src/loop.ts:4:1)",
			"TypeError: cannot read x of undefined",
		].join("\n");
		const out = toolResultDigest({ code: "abc12345", toolName: "bash", text, isError: false });
		assert.deepEqual(out.split("\n").slice(1), [
			"L4: TypeError: cannot read x of undefined",
			"L2:     at run (/app/src/main.ts:10:3)",
			"L3:     at next (/app/src/loop.ts:4:1)",
		]);
	});
});

describe("duplicateDigest", () => {
	it("points at the first code", () => {
		assert.equal(
			duplicateDigest("bbbbbbbb", "read", "x".repeat(40), "aaaaaaaa"),
			"{#bbbbbbbb FOLDED} read: identical to {#aaaaaaaa FOLDED}, ~10 tokens.",
		);
	});

	it("keeps its own risk lines: the first one's digest may have left the context", () => {
		const text = ["running", "Error: expected 3 to equal 4", "done"].join("\n");
		assert.equal(
			duplicateDigest("bbbbbbbb", "bash", text, "aaaaaaaa", true),
			"{#bbbbbbbb FOLDED} bash: identical to {#aaaaaaaa FOLDED}, ~11 tokens.\nL2: Error: expected 3 to equal 4",
		);
	});

	it("quotes a fold tag its risk lines copy: only the engine's codes read as codes", () => {
		const text = ["grep session.log", "Error: {#1a2b3c4d FOLDED} was not found", "done"].join("\n");
		const out = duplicateDigest("bbbbbbbb", "bash", text, "aaaaaaaa", true);
		assert.deepEqual(codesIn(out), ["bbbbbbbb", "aaaaaaaa"]);
		assert.match(out, /Error: .*1a2b3c4d.* was not found/);
	});
});

describe("thinkingDigest", () => {
	it("is one line with size and the first line", () => {
		const out = thinkingDigest("abc12345", "\nLet me think.\nMore.\nEven more.");
		assert.equal(out, "{#abc12345 FOLDED} thinking: 4 lines, ~8 tokens. Let me think.");
		assert.ok(!out.includes("\n"));
	});
});

describe("the model's own text and thinking keep their risk lines (invariant 6)", () => {
	const prose =
		"I ran the suite again.\nMost of it passes now.\nTypeError: amount.toFixed is not a function\nI will fix the guard.";
	for (const [name, digest] of [
		["text", textDigest],
		["thinking", thinkingDigest],
	] as const) {
		it(`${name}: a failure it names stays verbatim, with its line number; the head is not repeated`, () => {
			const out = digest("abc12345", prose);
			assert.match(out, /\nL3: TypeError: amount\.toFixed is not a function$/);
			assert.doesNotMatch(out, /L1:/);
			const head = digest("abc12345", "Error: the build failed again\nso I look at the config.");
			assert.equal(head.split("\n").length, 1, "a head that is the risk line is shown once");
			assert.match(head, /Error: the build failed again/);
			const again = digest("abc12345", "Error: build failed\nok\nError: build failed\nmore\nError: build failed");
			assert.match(again, /\nL1 ×3: Error: build failed$/, "a head that recurs is counted, not dropped");
			const indented = digest("abc12345", "Error: boom\n  Error: boom\nok");
			assert.match(indented, /\nL2: {3}Error: boom$/, "a line that differs from the head in white space is its own");
			const both = digest("abc12345", "Error: boom\nok\n    Error: boom\nError: boom");
			assert.match(both, /\nL1 ×2: Error: boom\nL3: {5}Error: boom$/, "a recurring head beside its indented twin");
		});
	}
});

describe("argDigest and foldArgs", () => {
	it("argDigest gives tag, line count and a first line clipped to a quarter of the value", () => {
		assert.equal(argDigest("abc12345", "line one\nline two\n"), "{#abc12345 FOLDED} 2 lines: lin…");
		assert.equal(argDigest("abc12345", `line one\n${"x".repeat(60)}`), "{#abc12345 FOLDED} 2 lines: line one");
		const out = argDigest("abc12345", `${"z".repeat(300)}\nmore`);
		assert.ok(out.endsWith("…"));
		assert.equal(out.split(": ")[1].length, DIGEST_LIMITS.argFirstLineChars);
	});

	it("argDigest names what the code of a long argument declares, and nothing in a shorter one", () => {
		const script = (fill: number) =>
			`cat > engine.py << 'EOF'\nimport json\n\nclass StrategyEngine:\n    pass\n\ndef get_state(game_id):\n    return {}\n# ${"x".repeat(fill)}\nEOF`;
		const long = script(ARG_OUTLINE_CHARS);
		assert.equal(
			argDigest("abc12345", long),
			"{#abc12345 FOLDED} 10 lines: cat > engine.py << 'EOF' Names: StrategyEngine, get_state.",
		);
		const short = script(ARG_OUTLINE_CHARS - 200);
		assert.ok(short.length < ARG_OUTLINE_CHARS);
		assert.doesNotMatch(argDigest("abc12345", short), /Names:/);
		const prose = `${"word ".repeat(ARG_OUTLINE_CHARS / 5)}\nclass of its own`;
		assert.doesNotMatch(argDigest("abc12345", prose), /Names:/, "no code, no names");
	});

	it("replaces only long strings outside kept keys, at any depth, keeping keys and other values", () => {
		const big = `import x;\n${"a".repeat(ARG_FOLD_CHARS)}`;
		const args = {
			path: "src/x.ts",
			pattern: "p".repeat(200),
			count: 3,
			flag: true,
			none: null,
			edits: [{ oldText: big, newText: "tiny" }, "keep", 7],
		};
		const out = foldArgs("abc12345", args);
		assert.ok(out);
		assert.deepEqual(Object.keys(out), ["path", "pattern", "count", "flag", "none", "edits"]);
		assert.equal(out.path, "src/x.ts");
		assert.equal(out.pattern, args.pattern);
		assert.equal(out.count, 3);
		assert.equal(out.flag, true);
		assert.equal(out.none, null);
		const edits = out.edits as unknown[];
		assert.equal(edits.length, 3);
		assert.deepEqual(edits[0], { oldText: argDigest("abc12345", big), newText: "tiny" });
		assert.equal(edits[1], "keep");
		assert.equal(edits[2], 7);
	});

	it("keeps a command line under KEPT_COMMAND_CHARS whole, and folds a longer one", () => {
		const short = `node -e '${"x".repeat(KEPT_COMMAND_CHARS - 11)}'`;
		assert.equal(short.length, KEPT_COMMAND_CHARS - 1);
		assert.equal(foldArgs("abc12345", { command: short }), null);
		assert.ok(foldArgs("abc12345", { script: short }), "the same text under another key folds");
		const long = `cat <<'EOF' > notes.md\n${"a line of the file\n".repeat(20)}EOF`;
		assert.match(String(foldArgs("abc12345", { command: long })?.command), /^\{#abc12345 FOLDED\} 22 lines: cat <</);
	});

	it("treats exactly ARG_FOLD_CHARS as foldable and one less as not", () => {
		assert.equal(foldArgs("abc12345", { s: "q".repeat(ARG_FOLD_CHARS - 1) }), null);
		assert.ok(foldArgs("abc12345", { s: "q".repeat(ARG_FOLD_CHARS) }));
	});

	it("keeps a foldable string whose digest would not be shorter", () => {
		for (let n = ARG_FOLD_CHARS; n < 400; n++) {
			const value = "word ".repeat(Math.ceil(n / 5)).slice(0, n);
			const out = foldArgs("abc12345", { s: value });
			if (out) assert.ok((out.s as string).length < value.length, `length ${n}`);
		}
	});

	it("does not mutate its input", () => {
		const args = { path: "a", content: "c".repeat(2000), nested: { deep: ["d".repeat(900)] } };
		const before = structuredClone(args);
		foldArgs("abc12345", args);
		assert.deepEqual(args, before);
	});

	it("returns null for non-object or small arguments", () => {
		assert.equal(foldArgs("abc12345", null), null);
		assert.equal(foldArgs("abc12345", "x".repeat(2000)), null);
		assert.equal(foldArgs("abc12345", ["x".repeat(2000)]), null);
		assert.equal(foldArgs("abc12345", { path: "a" }), null);
		assert.equal(foldArgs("abc12345", {}), null);
	});
});
