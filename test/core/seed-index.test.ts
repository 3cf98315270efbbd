/**
 * The seed index: record extraction (files, commands, error lines, identifiers, intents, spans),
 * its caps and determinism, the merge helper, the tolerant JSONL reader, and a smoke run over every
 * recorded session of every available corpus.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { foldCode } from "../../src/core/digest.ts";
import type { FoldRecord } from "../../src/core/fold-registry.ts";
import { errorLinesIn, extractSeedRecord, identifiersIn, type SeedInput } from "../../src/core/index/extract.ts";
import { summarizeIndex } from "../../src/core/index/merge.ts";
import { parseSeedIndex, retraction, serializeRecord } from "../../src/core/index/reader.ts";
import { SEED_CAPS, SEED_INDEX_VERSION, type SeedRecord } from "../../src/core/index/seed-index.ts";
import { renderHandoff, renderSummary } from "../../src/core/summary.ts";
import { blockCost } from "../../src/core/tokens.ts";
import { corpusNote, loadSessions } from "../corpus/corpora.ts";

// ---------------------------------------------------------------------------------------------
// Builders

let clock = 10_000;

function user(text: string, timestamp = clock++): MessageLike {
	return { role: "user", content: [{ type: "text", text }], timestamp };
}

function call(id: string, name: string, args: Record<string, unknown>) {
	return { type: "toolCall", id, name, arguments: args };
}

function assistant(parts: unknown[], responseId = `resp_${clock}`): MessageLike {
	return { role: "assistant", responseId, timestamp: clock++, content: parts };
}

function result(toolCallId: string, toolName: string, text: string, isError = false): MessageLike {
	return { role: "toolResult", toolCallId, toolName, content: [{ type: "text", text }], isError, timestamp: clock++ };
}

function bashExec(command: string, output: string, exitCode: number | undefined): MessageLike {
	return { role: "bashExecution", command, output, exitCode, cancelled: false, truncated: false, timestamp: clock++ };
}

function extract(messages: MessageLike[], extra: Partial<SeedInput> = {}): SeedRecord {
	return extractSeedRecord({ kind: "compaction", seq: 1, messages, spans: [], ...extra });
}

/** Fold records for every durable foldable block, as a compaction would record them. */
function recordsForAll(messages: readonly MessageLike[]): FoldRecord[] {
	return linearize(messages)
		.filter((b) => b.durable && b.foldable)
		.map((b) => ({
			id: b.id,
			code: foldCode(b.id),
			chars: b.text.length,
			seq: 0,
			kind: b.kind,
			tool: b.toolName,
			turn: b.turn,
		}));
}

/** The fixed session of the golden test. */
function goldenSession(): MessageLike[] {
	return [
		{
			role: "user",
			content: [
				{ type: "text", text: "\n  Fix the failing build in src/app.ts  \nMore detail: parseConfig breaks." },
			],
			timestamp: 1000,
		},
		{
			role: "assistant",
			responseId: "resp_1",
			timestamp: 1001,
			content: [
				{ type: "thinking", thinking: "The helper loadSettings is probably missing." },
				{ type: "text", text: "Reading it." },
				call("call_1", "read", { path: "src/app.ts" }),
				call("call_2", "bash", { command: "npm run build" }),
			],
		},
		{
			role: "toolResult",
			toolCallId: "call_1",
			toolName: "read",
			content: [{ type: "text", text: "export const parseConfig = () => {\n\tthrow new Error('never');\n};" }],
			isError: false,
			timestamp: 1002,
		},
		{
			role: "toolResult",
			toolCallId: "call_2",
			toolName: "bash",
			content: [
				{
					type: "text",
					text: "src/app.ts(3,7): error TS2304: Cannot find name 'loadSettings'.\n    at build (src/build.js:10:5)\nCommand exited with code 2",
				},
			],
			isError: true,
			timestamp: 1003,
		},
		{
			role: "user",
			content: [{ type: "text", text: "Use version v2.4.1-rc.1 and keep commit 9fceb02 intact" }],
			timestamp: 2000,
		},
		{
			role: "assistant",
			responseId: "resp_2",
			timestamp: 2001,
			content: [
				call("call_3", "edit", { path: "src/app.ts", oldText: "old_value", newText: "newValue" }),
				call("call_4", "grep", { pattern: "loadSettings", path: "src" }),
			],
		},
		{
			role: "toolResult",
			toolCallId: "call_3",
			toolName: "edit",
			content: [{ type: "text", text: "Successfully replaced text in src/app.ts." }],
			isError: false,
			timestamp: 2002,
		},
		{
			role: "toolResult",
			toolCallId: "call_4",
			toolName: "grep",
			content: [
				{ type: "text", text: "src/settings.ts:12: export function load_settings() { throw new Error('x') }" },
			],
			isError: false,
			timestamp: 2003,
		},
		{
			role: "bashExecution",
			command: "git log -1 --format=%H",
			output: "9fceb02d0ae598e95dc970b74767f19372d61af8\nfatal: not a git repository",
			exitCode: 128,
			cancelled: false,
			truncated: false,
			timestamp: 3000,
		},
		{
			role: "assistant",
			responseId: "resp_3",
			timestamp: 3001,
			content: [{ type: "text", text: "Done: the build took 1234567 ms." }],
		},
	];
}

const SHA = "0123456789abcdef".repeat(4);

function goldenSpans(): FoldRecord[] {
	return [
		{ id: "r:call_2", code: foldCode("r:call_2"), chars: 123, seq: 2, sha256: SHA },
		{ id: "r:call_1", code: foldCode("r:call_1"), chars: 64, seq: 2, kind: "toolResult", tool: "read", turn: 1 },
	];
}

// ---------------------------------------------------------------------------------------------
// Golden

describe("golden record", () => {
	it("a fixed session gives exactly this record", () => {
		const record = extractSeedRecord({ kind: "compaction", seq: 3, messages: goldenSession(), spans: goldenSpans() });
		assert.deepEqual(record, {
			v: 1,
			kind: "compaction",
			seq: 3,
			files: [
				{ path: "src/app.ts", tools: ["edit", "read"], turn: 1 },
				{ path: "src", tools: ["grep"], turn: 2 },
			],
			commands: [
				{ command: "npm run build", turn: 1, code: "iw6if8u0", error: true },
				{ command: "git log -1 --format=%H", turn: 2, error: true },
			],
			errors: [
				{
					line: "src/app.ts(3,7): error TS2304: Cannot find name 'loadSettings'.",
					turn: 1,
					code: "iw6if8u0",
					tool: "bash",
				},
				{ line: "Command exited with code 2", turn: 1, code: "iw6if8u0", tool: "bash" },
				{ line: "fatal: not a git repository", turn: 2 },
			],
			identifiers: [
				"parseConfig",
				"loadSettings",
				"v2.4.1-rc.1",
				"9fceb02",
				"old_value",
				"newValue",
				"load_settings",
				"9fceb02d0ae598e95dc970b74767f19372d61af8",
				"1234567",
			],
			intents: [
				{ turn: 1, text: "Fix the failing build in src/app.ts" },
				{ turn: 2, text: "Use version v2.4.1-rc.1 and keep commit 9fceb02 intact" },
			],
			spans: [
				{
					id: "r:call_2",
					code: "iw6if8u0",
					kind: "toolResult",
					tool: "bash",
					turn: 1,
					chars: 123,
					tokens: 35,
					sha256: SHA,
				},
				{ id: "r:call_1", code: "ozi8xevl", kind: "toolResult", tool: "read", turn: 1, chars: 64, tokens: 20 },
			],
		});
		assert.equal(record.v, SEED_INDEX_VERSION);
	});

	it("a fold event mines commands, errors and identifiers from its scope only", () => {
		const record = extractSeedRecord({
			kind: "fold",
			seq: 2,
			messages: goldenSession(),
			spans: goldenSpans().slice(0, 1),
			scope: new Set(["r:call_2"]),
		});
		assert.deepEqual(record.commands, [{ command: "npm run build", turn: 1, code: "iw6if8u0", error: true }]);
		assert.deepEqual(
			record.errors.map((e) => e.line),
			["src/app.ts(3,7): error TS2304: Cannot find name 'loadSettings'.", "Command exited with code 2"],
		);
		assert.deepEqual(record.identifiers, ["loadSettings"]);
		// files and intents come from every message in scope of the pass
		assert.deepEqual(
			record.files.map((f) => f.path),
			["src/app.ts", "src"],
		);
		assert.equal(record.intents.length, 2);
		assert.deepEqual(
			record.spans.map((s) => s.id),
			["r:call_2"],
		);
		assert.equal(record.kind, "fold");
		assert.equal(record.seq, 2);
	});
});

// ---------------------------------------------------------------------------------------------
// Extractors

describe("files", () => {
	it("keeps paths exactly as the tools received them, with sorted tools and the first-seen turn", () => {
		const messages = [
			user("one"),
			assistant([
				call("f1", "read", { path: "./src/a.ts" }),
				call("f2", "write", { path: "src/a.ts", content: "x" }),
				call("f3", "bash", { command: "cat src/b.ts", path: "src/b.ts" }),
			]),
			result("f1", "read", "x"),
			result("f2", "write", "ok"),
			result("f3", "bash", "x"),
			user("two"),
			assistant([
				call("f4", "read", { file_path: "/abs/Dir With Space/c.md" }),
				call("f5", "edit", { path: "src/a.ts", oldText: "a", newText: "b" }),
				call("f6", "ls", { path: "./src/a.ts" }),
				call("f7", "find", { pattern: "*.ts" }),
				call("f8", "grep", { pattern: "x", path: "" }),
				call("f9", "read", { path: 42 }),
			]),
		];
		assert.deepEqual(extract(messages).files, [
			{ path: "./src/a.ts", tools: ["ls", "read"], turn: 1 },
			{ path: "src/a.ts", tools: ["edit", "write"], turn: 1 },
			{ path: "/abs/Dir With Space/c.md", tools: ["read"], turn: 2 },
		]);
	});

	it("come from every message even when the scope excludes them", () => {
		const messages = [user("go"), assistant([call("g1", "read", { path: "a.ts" })]), result("g1", "read", "x")];
		assert.deepEqual(
			extract(messages, { scope: new Set() }).files.map((f) => f.path),
			["a.ts"],
		);
	});
});

describe("commands", () => {
	it("records bash commands verbatim with the result's code and error flag", () => {
		const messages = [
			user("run"),
			assistant([
				call("c1", "bash", { command: "npm test -- --grep 'a b'", timeout: 60 }),
				call("c2", "bash", { command: "ls" }),
				call("c3", "bash", { command: "echo pending" }),
				call("c4", "bash", { command: "" }),
			]),
			result("c1", "bash", "1 failing", true),
			result("c2", "bash", "a\nb"),
		];
		assert.deepEqual(extract(messages).commands, [
			{ command: "npm test -- --grep 'a b'", turn: 1, code: foldCode("r:c1"), error: true },
			{ command: "ls", turn: 1, code: foldCode("r:c2"), error: false },
			{ command: "echo pending", turn: 1 },
		]);
	});

	it("records the commands of Pi's powershell tool (Windows) as it records bash's", () => {
		const messages = [
			user("run"),
			assistant([call("p1", "powershell", { command: "Get-ChildItem -Recurse src" })]),
			result("p1", "powershell", "Cannot find path 'src'", true),
		];
		assert.deepEqual(extract(messages).commands, [
			{ command: "Get-ChildItem -Recurse src", turn: 1, code: foldCode("r:p1"), error: true },
		]);
	});

	it("clips a very long command with a marker saying how much was cut", () => {
		const long = `python - <<'EOF'\n${"print(1)\n".repeat(200)}EOF`;
		const messages = [user("go"), assistant([call("L", "bash", { command: long })]), result("L", "bash", "1")];
		const [entry] = extract(messages).commands;
		assert.ok(entry.command.startsWith(long.slice(0, SEED_CAPS.commandChars)));
		assert.ok(entry.command.endsWith(`… [clipped, ${long.length - SEED_CAPS.commandChars} more chars]`));
		assert.ok(entry.command.length < long.length);
		const short = extract(messages, { caps: { commandChars: 10 } }).commands[0].command;
		assert.equal(short, `python - <… [clipped, ${long.length - 10} more chars]`);
	});

	it("includes user ! commands, erroring on a non-zero exit", () => {
		const messages = [
			user("go"),
			bashExec("make", "ok", 0),
			bashExec("make bad", "oops", 2),
			bashExec("sleep 9", "", undefined),
		];
		assert.deepEqual(extract(messages).commands, [
			{ command: "make", turn: 1, error: false },
			{ command: "make bad", turn: 1, error: true },
			{ command: "sleep 9", turn: 1, error: false },
		]);
	});

	it("counts a call in scope when either its arguments or its result is", () => {
		const messages = [
			user("go"),
			assistant([call("s1", "bash", { command: "one" }), call("s2", "bash", { command: "two" })]),
			assistant([call("s3", "bash", { command: "three" })]),
			result("s1", "bash", "1"),
			result("s2", "bash", "2"),
			result("s3", "bash", "3"),
		];
		const scoped = extract(messages, { scope: new Set(["r:s1", "a:s3:args"]) });
		assert.deepEqual(
			scoped.commands.map((c) => c.command),
			["one", "three"],
		);
	});

	it("takes the code recorded in a span over the computed one", () => {
		const messages = [
			user("go"),
			assistant([call("k1", "bash", { command: "x" })]),
			result("k1", "bash", "fail: x", true),
		];
		const record = extract(messages, { spans: [{ id: "r:k1", code: "zz9900", chars: 7, seq: 1 }] });
		assert.equal(record.commands[0].code, "zz9900");
		assert.equal(record.errors[0].code, "zz9900");
	});
});

describe("error lines", () => {
	it("are verbatim error lines (not stack frames) with turn, code and tool", () => {
		const text = [
			"building",
			"  TypeError: Cannot read properties of undefined (reading 'x')",
			"    at main (/app/index.js:3:9)",
			'  File "x.py", line 3, in <module>',
			"ENOENT: no such file or directory, open 'cfg.json'\r",
			"done",
		].join("\n");
		const messages = [
			user("a"),
			user("b"),
			assistant([call("e1", "bash", { command: "node ." })]),
			result("e1", "bash", text),
		];
		assert.deepEqual(extract(messages).errors, [
			{
				line: "  TypeError: Cannot read properties of undefined (reading 'x')",
				turn: 2,
				code: foldCode("r:e1"),
				tool: "bash",
			},
			{ line: "ENOENT: no such file or directory, open 'cfg.json'", turn: 2, code: foldCode("r:e1"), tool: "bash" },
		]);
		assert.deepEqual(errorLinesIn(text), [
			"  TypeError: Cannot read properties of undefined (reading 'x')",
			"ENOENT: no such file or directory, open 'cfg.json'",
		]);
	});

	it("leave out lines that say nothing failed and lines of error-handling code", () => {
		const text = [
			"Script completed successfully, no errors. Result: True",
			"Tests: 0 failed, 12 passed",
			"	} catch (error) {",
			"// Ignore errors (file might be in invalid state while being edited)",
			"		throw new Error('bad input: ' + x);",
			"    if err != nil {",
			"Tests: 1 failed, 11 passed",
			"Error: no errors expected, got 3",
			"ModuleNotFoundError: No module named 'yaml'",
		].join("\n");
		assert.deepEqual(errorLinesIn(text), [
			"Tests: 1 failed, 11 passed",
			"Error: no errors expected, got 3",
			"ModuleNotFoundError: No module named 'yaml'",
		]);
	});

	it("skip the content of successful read/grep/find/ls results but keep their error results", () => {
		const messages = [
			user("go"),
			assistant([
				call("r1", "read", { path: "a.ts" }),
				call("r2", "read", { path: "b.ts" }),
				call("r3", "grep", { pattern: "error" }),
				call("r4", "custom_tool", {}),
			]),
			result("r1", "read", "throw new Error('not a failure of the session')"),
			result("r2", "read", "ENOENT: no such file or directory, access 'b.ts'", true),
			result("r3", "grep", "a.ts:1: handleError()"),
			result("r4", "custom_tool", "upload failed: quota exceeded"),
		];
		assert.deepEqual(
			extract(messages).errors.map((e) => [e.line, e.tool]),
			[
				["ENOENT: no such file or directory, access 'b.ts'", "read"],
				["upload failed: quota exceeded", "custom_tool"],
			],
		);
	});

	it("stay where they first were: a recall or unfold copying a block adds nothing of it", () => {
		const messages = [
			user("go"),
			assistant([call("b1", "bash", { command: "npm run build" })]),
			result("b1", "bash", "Error: build failed at step 7\nCommand exited with code 1", true),
			user("read it back"),
			assistant([
				call("rc", "recall_folded", { codes: ["abcd1234"] }),
				call("uf", "unfold", { codes: ["abcd1234"] }),
			]),
			result(
				"rc",
				"recall_folded",
				"Recalled #abcd1234: bash, 2 lines\nError: build failed at step 7\nCommand exited with code 1",
			),
			result("uf", "unfold", "Unfolded #abcd1234: TypeError: the original content is back"),
		];
		const record = extract(messages);
		assert.deepEqual(
			record.errors.map((e) => [e.line, e.tool, e.turn]),
			[
				["Error: build failed at step 7", "bash", 1],
				["Command exited with code 1", "bash", 1],
			],
		);
		assert.ok(
			!record.identifiers.some((i) => i.includes("abcd1234")),
			"a code asked for is no identifier of the session",
		);
	});

	it("come from user ! command output without a code, not from the command line", () => {
		const messages = [user("go"), bashExec("grep error log.txt", "line 1\nfatal: bad object HEAD", 128)];
		assert.deepEqual(extract(messages).errors, [{ line: "fatal: bad object HEAD", turn: 1 }]);
	});

	it("are deduplicated by text (the newest occurrence kept, where it was), bounded per block and clipped", () => {
		const repeated = "Error: same thing";
		const messages = [
			user("go"),
			assistant([call("d1", "bash", { command: "a" }), call("d2", "bash", { command: "b" })]),
			result("d1", "bash", `${repeated}\n${repeated}`),
			result(
				"d2",
				"bash",
				`${repeated}\n${Array.from({ length: 30 }, (_, i) => `error: step ${i}`).join("\n")}\nerror: step 29`,
			),
		];
		const record = extract(messages);
		// The repeated line came back in d2: it is listed once, as d2's, and counts toward d2's bound.
		assert.deepEqual(record.errors[0], { line: repeated, turn: 1, code: foldCode("r:d2"), tool: "bash" });
		assert.equal(record.errors.filter((e) => e.line === repeated).length, 1);
		assert.equal(record.errors.length, SEED_CAPS.errorsPerBlock);
		assert.equal(record.errors.at(-1)?.line, `error: step ${SEED_CAPS.errorsPerBlock - 2}`);
		assert.deepEqual(record.dropped, { errors: 31 - SEED_CAPS.errorsPerBlock });

		const long = `fatal: ${"x".repeat(1000)}`;
		const clipped = extract([user("go"), assistant([call("z", "bash", { command: "a" })]), result("z", "bash", long)])
			.errors[0].line;
		assert.equal(clipped.length, SEED_CAPS.errorChars);
		assert.ok(clipped.endsWith("…"));
		assert.ok(long.startsWith(clipped.slice(0, -1)));
	});

	it("from a command that succeeded, are only the lines a program labelled as errors; from one that failed, every error line", () => {
		const prose = [
			"ad42ebf Fix crash when bash mode outputs binary data",
			"yarn-error.log*",
			"All 5 must be placed. Ships cannot overlap or go off the board.",
			"has fewer failure points than a multi-node cluster",
			'{"ok": true, "error": null}',
		];
		const labelled = [
			"Error: connect ECONNREFUSED 127.0.0.1:5432",
			"src/a.ts(3,5): error TS2322: Type 'string' is not assignable",
			"  TypeError: Cannot read properties of undefined (reading 'x')",
			"npm ERR! code 1",
			'{"rows":[],"error":"permission denied for table A"}',
			"grep: src/x.ts: No such file or directory",
			"[ERROR] build step 3",
			"FAILED tests/test_a.py::test_b - assert 1 == 2",
			"\x1b[31mfatal\x1b[0m: not a git repository",
			"--- FAIL: TestAdd (0.00s)",
			"thread 'tests::bad' panicked at src/lib.rs:10:9:",
			"test result: FAILED. 1 passed; 1 failed",
			"  3:5  error  'x' is assigned a value but never used  no-unused-vars",
			'npm error Missing script: "tes"',
			"Error response from daemon: pull access denied for foo",
			'Error from server (NotFound): pods "web-0" not found',
			"make: *** [Makefile:3: a.o] Error 1",
			"Tests:       1 failed, 1 passed, 2 total",
		];
		const text = [...prose, ...labelled].join("\n");
		const lines = (isError: boolean) =>
			extract([
				user("go"),
				assistant([call("s", "bash", { command: "run" })]),
				result("s", "bash", text, isError),
			]).errors.map((e) => e.line);
		assert.deepEqual(lines(false), labelled);
		// A failed one lists every error line, up to the per-block bound.
		assert.deepEqual(lines(true), [...prose, ...labelled].slice(0, SEED_CAPS.errorsPerBlock));
		assert.deepEqual(errorLinesIn(text, true), labelled);
	});

	it("from a command that succeeded, are labelled errors in the languages compilers speak too", () => {
		const prose = ["Dieser Fehlerbericht beschreibt den Ablauf", "エラーハンドリングの章を読む"];
		const labelled = [
			"main.c:3:5: エラー: 'x' が宣言されていません",
			"main.c:3:5: 错误：'x' 未声明",
			"main.c:3:5: 오류: 'x' 선언되지 않음",
			"main.c:3:5: Fehler: »x« nicht deklariert",
			"main.c:3:5: erreur : « x » non déclaré",
			"main.c:3:5: ошибка: 'x' не объявлен",
		];
		assert.deepEqual(errorLinesIn([...prose, ...labelled].join("\n"), true), labelled);
	});

	it("keep the error of a long line whose error comes late, and tell apart two alike up to the cut", () => {
		const head = `{"rows":[${"1,".repeat(400)}`;
		const a = `${head}"error":"permission denied for table A"}`;
		const b = `${head}"error":"permission denied for table B"}`;
		const errors = extract([
			user("go"),
			assistant([call("z", "bash", { command: "psql" })]),
			result("z", "bash", `${a}\n${b}`),
		]).errors.map((e) => e.line);
		assert.equal(errors.length, 2);
		assert.match(errors[0], /^….*"error":"permission denied for table A"}$/);
		assert.match(errors[1], /^….*"error":"permission denied for table B"}$/);
		for (const line of errors) assert.ok(line.length <= SEED_CAPS.errorChars);
	});

	it("come only from blocks in scope", () => {
		const messages = [
			user("go"),
			assistant([call("o1", "bash", { command: "a" }), call("o2", "bash", { command: "b" })]),
			result("o1", "bash", "error: first"),
			result("o2", "bash", "error: second"),
		];
		assert.deepEqual(
			extract(messages, { scope: new Set(["r:o2"]) }).errors.map((e) => e.line),
			["error: second"],
		);
	});
});

describe("identifiers", () => {
	it("finds each class and leaves prose alone", () => {
		const text = [
			"commit 45ffe0a and full 9fceb02d0ae598e95dc970b74767f19372d61af8 but not deadbeef or cafe1",
			"versions 1.2.3, v1.2.3-beta.1, 2.0.0+build.5 and not 127.0.0.1 or 1.2",
			"numbers 123456 and 20251120 but not 12345 or 3.1415926",
			"symbols parseConfig, FoldRegistry, load_settings, CONTEXTFOLD_COMPACT, fs.readFile, os.path.join",
			"not symbols: Hello World, IDs, JSON, _private_, mL, __init__",
			"uuid 019e3d1e-bfa7-7f0d-8c40-e7e8e109f434 whole",
			'escaped "\\nShip" is not a symbol, but utf8Decode is',
		].join("\n");
		assert.deepEqual(identifiersIn(text), [
			"45ffe0a",
			"9fceb02d0ae598e95dc970b74767f19372d61af8",
			"1.2.3",
			"v1.2.3-beta.1",
			"2.0.0+build.5",
			"123456",
			"20251120",
			"parseConfig",
			"FoldRegistry",
			"load_settings",
			"CONTEXTFOLD_COMPACT",
			"readFile",
			"os.path.join",
			"019e3d1e-bfa7-7f0d-8c40-e7e8e109f434",
			"utf8Decode",
		]);
	});

	it("are deduplicated in first-occurrence order across blocks, from string arguments not their JSON", () => {
		const messages = [
			user("rename fooBar to baz_qux"),
			assistant([call("i1", "write", { path: "a.ts", content: "const fooBar = 1;\nconst newName = 2;" })]),
			result("i1", "write", "wrote newName and fooBar"),
		];
		assert.deepEqual(extract(messages).identifiers, ["fooBar", "baz_qux", "newName"]);
	});

	it("are whole names in any script, never a fragment cut at a non-ASCII letter", () => {
		const text = [
			"const größeBerechnen = naïveParser(café_au_lait);",
			"function 计算总额(x) { return x }",
			"class Привет_Мир {}",
			"let user_名前_id = 1; über_alles = größe_total;",
		].join("\n");
		assert.deepEqual(identifiersIn(text), [
			"größeBerechnen",
			"naïveParser",
			"café_au_lait",
			"Привет_Мир",
			"user_名前_id",
			"über_alles",
			"größe_total",
		]);
		// A run of millions of non-ASCII letters is skipped as an ASCII one is.
		assert.deepEqual(identifiersIn(`fooBar ${"计".repeat(3_000_000)} then:a1b2c3d4e`), ["fooBar", "a1b2c3d4e"]);
	});

	it("skip candidates longer than the cap (encoded blobs)", () => {
		const blob = `aB${"x".repeat(200)}`;
		assert.deepEqual(identifiersIn(`${blob} shortName`), ["shortName"]);
	});

	it("skip a run of millions of identifier characters (a number, a blob) without running out of stack, and find the rest", () => {
		for (const run of ["1".repeat(6_000_000), "a1".repeat(3_000_000), `v${"1".repeat(3_000_000)}.2.3`]) {
			assert.deepEqual(identifiersIn(`fooBar ${run} then:a1b2c3d4e`), ["fooBar", "a1b2c3d4e"]);
		}
		// Beside no long run, a text is scanned as a whole, cut or not.
		const text = "at v1.2.3-beta.1+b7 the fooBar.baz.qux of 0123456789 in 3f2a9c1";
		assert.deepEqual(identifiersIn(text), identifiersIn(`${text} ${"9".repeat(10_001)}`));
	});

	it("keep exact identifiers first when the cap binds, in first-occurrence order", () => {
		const words = Array.from({ length: 10 }, (_, i) => `symbolName${String.fromCharCode(65 + i)}`);
		const text = `${words.join(" ")} abc1234 v9.9.9 ${words.map((w) => `${w}Z`).join(" ")}`;
		const record = extract([user(text)], { caps: { identifiers: 4 } });
		assert.deepEqual(record.identifiers, ["symbolNameA", "symbolNameB", "abc1234", "v9.9.9"]);
		assert.deepEqual(record.dropped, { identifiers: 18 });
	});
});

describe("patched files", () => {
	it("come from an apply_patch patch's file headers, each once, with the tool that named them", () => {
		const patch = [
			"*** Begin Patch",
			"*** Update File: frontend/app/page.tsx",
			"@@",
			"-old",
			"+new",
			"*** Add File: frontend/app/team.tsx",
			"+export {}",
			"*** Update File: frontend/app/page.tsx",
			"*** Move to: frontend/app/home.tsx",
			"*** End Patch",
		].join("\n");
		const messages = [
			user("go"),
			assistant([call("p1", "apply_patch", { input: patch }), call("p2", "apply_patch", { input: "not a patch" })]),
			result("p1", "apply_patch", "Success."),
			result("p2", "apply_patch", "Error: bad patch", true),
		];
		assert.deepEqual(
			extract(messages).files.map((f) => [f.path, f.tools]),
			[
				["frontend/app/page.tsx", ["apply_patch"]],
				["frontend/app/team.tsx", ["apply_patch"]],
				["frontend/app/home.tsx", ["apply_patch"]],
			],
		);
	});
});

describe("intents", () => {
	it("take the first non-empty line of each user message, clipped, in order", () => {
		const long = "y".repeat(500);
		const messages = [
			user("\n\n   first goal  \nsecond line"),
			assistant([{ type: "text", text: "ok" }]),
			{ role: "user", content: [{ type: "image", data: "AA==", mimeType: "image/png" }], timestamp: clock++ },
			user(long),
			{ role: "user", content: "plain string content", timestamp: clock++ },
		];
		const intents = extract(messages).intents;
		assert.deepEqual(
			intents.map((i) => i.turn),
			[1, 2, 3, 4],
		);
		assert.equal(intents[0].text, "first goal");
		assert.equal(intents[1].text, "[1 image attached]", "a message of images alone still says what it held");
		assert.equal(intents[2].text.length, SEED_CAPS.intentChars);
		assert.ok(intents[2].text.endsWith("…"));
		assert.equal(intents[3].text, "plain string content");
	});

	it("say how many images the user attached, within the line's cap", () => {
		const image = { type: "image", data: "AA==", mimeType: "image/png" };
		const messages = [
			{ role: "user", content: [{ type: "text", text: "why is this red?" }, image, image], timestamp: clock++ },
			assistant([{ type: "text", text: "ok" }]),
			{ role: "user", content: [{ type: "text", text: "z".repeat(500) }, image], timestamp: clock++ },
		];
		const [short, long] = extract(messages).intents;
		assert.equal(short.text, "why is this red? [2 images attached]");
		assert.equal(long.text.length, SEED_CAPS.intentChars);
		assert.ok(long.text.endsWith("… [1 image attached]"));
	});

	it("skip markup ahead of the request (Codex's environment block), and keep a message of markup alone", () => {
		const messages = [
			user(
				"<environment_context>\n  <cwd>/repo</cwd>\n  <note>\n  free text inside\n  </note>\n</environment_context>\n\nmove the employer page to /team",
			),
			assistant([{ type: "text", text: "ok" }]),
			user("<turn_aborted>"),
			assistant([{ type: "text", text: "ok" }]),
			user("<b>bold</b> is what I want in the header"),
		];
		assert.deepEqual(
			extract(messages).intents.map((i) => i.text),
			["move the employer page to /team", "<turn_aborted>", "<b>bold</b> is what I want in the header"],
		);
	});

	it("of a handoff seed pasted as the prompt, are what the user wrote above it, else its goal line", () => {
		const seed = renderHandoff({
			goal: "finish the refund export",
			parentSession: "/home/u/.pi/agent/sessions/--repo--/2026-12-01_parent.jsonl",
			writtenAt: "2026-12-01T10:00:00.000Z",
			summary: "Summary body",
		});
		const messages = [
			user(seed),
			assistant([{ type: "text", text: "ok" }]),
			user(`pick this up, tests first\n\n${seed}`),
		];
		assert.deepEqual(
			extract(messages).intents.map((i) => i.text),
			["Goal: finish the refund export", "pick this up, tests first"],
		);
	});
});

describe("identifiers of a handoff seed pasted as the prompt", () => {
	it("come from its goal and body, not from the parent's path or the words on reading codes back", () => {
		const seed = renderHandoff({
			goal: "finish the refund export for release 2.3.1",
			parentSession: "/tmp/cf-DUeXhS/sessions/2026-12-01_83ef5d294c10.jsonl",
			writtenAt: "2026-12-01T10:00:00.000Z",
			summary: "Exact identifiers: 9f86d081884c7d65 refundExportBatch",
		});
		const identifiers = extract([user(seed)]).identifiers;
		for (const found of ["2.3.1", "9f86d081884c7d65", "refundExportBatch"])
			assert.ok(identifiers.includes(found), found);
		for (const noise of ["DUeXhS", "83ef5d294c10", "recall_folded"])
			assert.ok(!identifiers.some((i) => i.includes(noise)), `${noise} in ${identifiers.join(" ")}`);
	});
});

describe("spans", () => {
	it("map fold records in order, deduplicated by id, with block tokens or the size estimate", () => {
		const messages = [
			user("go"),
			assistant([call("p1", "bash", { command: "x" })]),
			result("p1", "bash", "hello world"),
		];
		const record = extract(messages, {
			spans: [
				{ id: "r:p1", code: foldCode("r:p1"), chars: 11, seq: 1 },
				{
					id: "r:gone",
					code: "gone0000",
					chars: 400,
					seq: 1,
					kind: "toolResult",
					tool: "read",
					turn: 7,
					sha256: SHA,
				},
				{ id: "r:p1", code: "other000", chars: 11, seq: 1 },
			],
		});
		assert.deepEqual(record.spans, [
			{
				id: "r:p1",
				code: foldCode("r:p1"),
				kind: "toolResult",
				tool: "bash",
				turn: 1,
				chars: 11,
				tokens: blockCost(11),
			},
			{
				id: "r:gone",
				code: "gone0000",
				kind: "toolResult",
				tool: "read",
				turn: 7,
				chars: 400,
				tokens: blockCost(400),
				sha256: SHA,
			},
		]);
		// key order is fixed, so the JSON bytes are too
		assert.deepEqual(Object.keys(record.spans[1]), [
			"id",
			"code",
			"kind",
			"tool",
			"turn",
			"chars",
			"tokens",
			"sha256",
		]);
	});
});

// ---------------------------------------------------------------------------------------------
// Determinism and caps

describe("determinism", () => {
	it("the same input gives a deep-equal record and the same JSON bytes", () => {
		const a = extractSeedRecord({ kind: "compaction", seq: 9, messages: goldenSession(), spans: goldenSpans() });
		const b = extractSeedRecord({ kind: "compaction", seq: 9, messages: goldenSession(), spans: goldenSpans() });
		assert.deepEqual(a, b);
		assert.equal(serializeRecord(a), serializeRecord(b));
		assert.notEqual(a.files, b.files);
	});

	it("does not mutate its input", () => {
		const messages = goldenSession();
		const before = JSON.stringify(messages);
		extract(messages, { spans: goldenSpans() });
		assert.equal(JSON.stringify(messages), before);
	});

	it("holds over generated sessions: no throw, same bytes, caps respected, every item verbatim", () => {
		const word = fc.constantFrom(
			"error:",
			"fatal",
			"ok",
			"fooBar",
			"snake_case",
			"v1.2.3",
			"abc1234",
			"1234567",
			"a.b.c",
			"\n",
			"  ",
			"src/x.ts",
			"ENOENT",
			"    at f (x.js:1:2)",
		);
		const textArb = fc.array(fc.oneof(word, fc.string({ maxLength: 12 })), { maxLength: 12 }).map((w) => w.join(" "));
		const messageArb = fc.oneof(
			textArb.map((t) => ({ role: "user", text: t })),
			fc.record({
				id: fc.constantFrom("q1", "q2", "q3"),
				tool: fc.constantFrom("bash", "read", "edit", "ls"),
				t: textArb,
			}),
			fc.record({ id: fc.constantFrom("q1", "q2", "q3", "q4"), t: textArb, err: fc.boolean() }),
			fc.record({ cmd: textArb, out: textArb, code: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }) }),
			fc.anything(),
		);
		fc.assert(
			fc.property(fc.array(messageArb, { maxLength: 14 }), fc.integer({ min: 0, max: 5 }), (shapes, cap) => {
				let ts = 1;
				const messages = shapes.map((s): MessageLike => {
					const o = s as Record<string, unknown>;
					if (o && typeof o === "object" && "role" in o) return user(String(o.text), ts++);
					if (o && typeof o === "object" && "tool" in o) {
						const args = o.tool === "bash" ? { command: o.t } : { path: o.t };
						return assistant([call(String(o.id), String(o.tool), args)], `g${ts++}`);
					}
					if (o && typeof o === "object" && "err" in o)
						return result(String(o.id), "bash", String(o.t), o.err === true);
					if (o && typeof o === "object" && "cmd" in o)
						return bashExec(String(o.cmd), String(o.out), o.code as number);
					return s as MessageLike;
				});
				const caps = { files: cap, commands: cap, errors: cap, identifiers: cap, intents: cap, spans: cap };
				const input: SeedInput = { kind: "fold", seq: 1, messages, spans: recordsForAll(messages), caps };
				const a = extractSeedRecord(input);
				const b = extractSeedRecord(input);
				assert.equal(serializeRecord(a), serializeRecord(b));
				for (const list of [a.files, a.commands, a.errors, a.identifiers, a.intents, a.spans]) {
					assert.ok(list.length <= cap);
				}
				const corpus = JSON.stringify(messages);
				const texts = linearize(messages).map((x) => x.text);
				for (const id of a.identifiers) assert.ok(texts.some((t) => t.includes(id)) || corpus.includes(id), id);
				for (const e of a.errors) assert.ok(texts.some((t) => t.includes(e.line)) || e.line.endsWith("…"), e.line);
				assert.deepEqual(parseSeedIndex(serializeRecord(a)).records, [a]);
			}),
			{ numRuns: 300 },
		);
	});
});

describe("caps", () => {
	it("bound every list with the shipped caps, keeping both ends and counting what was left out", () => {
		const messages: MessageLike[] = [];
		for (let i = 0; i < 260; i++) {
			messages.push(user(`intent ${i}`));
			messages.push(
				assistant([
					call(`w${i}`, "read", { path: `file-${i}.ts` }),
					call(`b${i}`, "bash", { command: `run ${i}` }),
				]),
			);
			messages.push(result(`w${i}`, "read", "x"));
			messages.push(result(`b${i}`, "bash", `error: number ${i}\nid_${i}_x a${i}b${i}c${i}d${i}`));
		}
		const record = extract(messages, { spans: recordsForAll(messages) });
		assert.equal(record.files.length, SEED_CAPS.files);
		assert.equal(record.commands.length, SEED_CAPS.commands);
		assert.equal(record.errors.length, SEED_CAPS.errors);
		assert.equal(record.identifiers.length, SEED_CAPS.identifiers);
		assert.equal(record.intents.length, SEED_CAPS.intents);
		assert.equal(record.spans.length, SEED_CAPS.spans);
		assert.deepEqual(record.dropped, {
			files: 260 - SEED_CAPS.files,
			commands: 260 - SEED_CAPS.commands,
			errors: 260 - SEED_CAPS.errors,
			identifiers: 520 - SEED_CAPS.identifiers,
			intents: 260 - SEED_CAPS.intents,
			spans: 520 - SEED_CAPS.spans,
		});
		assert.equal(record.files[0].path, "file-0.ts");
		assert.equal(record.files[99].path, "file-99.ts");
		assert.equal(record.files[100].path, "file-160.ts");
		assert.equal(record.files.at(-1)?.path, "file-259.ts");
		assert.equal(record.intents[0].text, "intent 0");
		assert.equal(record.intents.at(-1)?.text, "intent 259");
		assert.equal(record.errors.at(-1)?.line, "error: number 259");
		assert.ok(serializeRecord(record).length < 200_000);
	});

	it("leave dropped out when nothing was dropped", () => {
		assert.equal("dropped" in extract(goldenSession()), false);
	});
});

// ---------------------------------------------------------------------------------------------
// Merge

describe("summarizeIndex", () => {
	it("unions records in order of first appearance, deduplicated (an error line at its newest occurrence)", () => {
		const a: SeedRecord = {
			v: 1,
			kind: "fold",
			seq: 1,
			files: [{ path: "a.ts", tools: ["read"], turn: 1 }],
			commands: [{ command: "npm test", turn: 1, code: "c0000001", error: true }],
			errors: [{ line: "Error: one", turn: 1, code: "c0000001", tool: "bash" }],
			identifiers: ["fooBar", "1.2.3"],
			intents: [{ turn: 1, text: "goal" }],
			spans: [{ id: "r:1", code: "c0000001", kind: "toolResult", tool: "bash", turn: 1, chars: 10, tokens: 7 }],
			dropped: { errors: 2 },
		};
		const b: SeedRecord = {
			v: 1,
			kind: "compaction",
			seq: 2,
			files: [
				{ path: "b.ts", tools: ["write"], turn: 2 },
				{ path: "a.ts", tools: ["edit", "read"], turn: 2 },
			],
			commands: [
				{ command: "npm test", turn: 1, code: "c0000001", error: true },
				{ command: "npm test", turn: 2, code: "c0000002", error: false },
			],
			errors: [
				{ line: "Error: one", turn: 2, code: "c0000002", tool: "bash" },
				{ line: "Error: two", turn: 2 },
			],
			identifiers: ["1.2.3", "abc1234"],
			intents: [
				{ turn: 1, text: "goal" },
				{ turn: 2, text: "next" },
			],
			spans: [
				{ id: "r:1", code: "c0000001", kind: "toolResult", tool: "bash", turn: 1, chars: 10, tokens: 7 },
				{ id: "r:2", code: "c0000002", kind: "toolResult", turn: 2, chars: 20, tokens: 9 },
			],
			dropped: { errors: 1, spans: 4 },
		};
		assert.deepEqual(summarizeIndex([a, b]), {
			sources: [
				{ kind: "fold", seq: 1 },
				{ kind: "compaction", seq: 2 },
			],
			files: [
				{ path: "a.ts", tools: ["edit", "read"], turn: 1 },
				{ path: "b.ts", tools: ["write"], turn: 2 },
			],
			commands: [
				{ command: "npm test", turn: 1, code: "c0000001", error: true },
				{ command: "npm test", turn: 2, code: "c0000002", error: false },
			],
			errors: [
				{ line: "Error: one", turn: 2, code: "c0000002", tool: "bash" },
				{ line: "Error: two", turn: 2 },
			],
			identifiers: ["fooBar", "1.2.3", "abc1234"],
			intents: [
				{ turn: 1, text: "goal" },
				{ turn: 2, text: "next" },
			],
			spans: [
				{ id: "r:1", code: "c0000001", kind: "toolResult", tool: "bash", turn: 1, chars: 10, tokens: 7 },
				{ id: "r:2", code: "c0000002", kind: "toolResult", turn: 2, chars: 20, tokens: 9 },
			],
			dropped: { errors: 3, spans: 4 },
			droppedAtMost: ["errors", "spans"],
		});
	});

	it("lists an error line at its newest turn whatever the order of the records", () => {
		const record = (seq: number, turn: number, code: string): SeedRecord => ({
			...extract([user("go")]),
			seq,
			errors: [{ line: "Error: planted", turn, code, tool: "bash" }],
		});
		// A fold event's record (turn 9) is appended before the compaction's that covers turn 5.
		const merged = summarizeIndex([record(1, 9, "newcode9"), record(2, 5, "oldcode5")]);
		assert.deepEqual(merged.errors, [{ line: "Error: planted", turn: 9, code: "newcode9", tool: "bash" }]);
	});

	it("lists each turn in order, a file at its earliest, when the first record starts mid-session", () => {
		const turn = (t: number): MessageLike[] => [
			user(`task ${t}`),
			assistant([call(`c${t}`, "bash", { command: `step ${t}` }), call(`r${t}`, "read", { path: "src/w.ts" })]),
			result(`c${t}`, "bash", `Error: step ${t} failed`, true),
			result(`r${t}`, "read", "export const w = 1;"),
		];
		const session = [1, 2, 3, 4].flatMap(turn);
		// An index lost mid-session holds the records of turns 3-4 alone; a handoff merges the whole branch after them.
		const later = extract(session.slice(8), { kind: "fold", turnBase: 2 });
		const merged = summarizeIndex([later, extract(session, { seq: 2 })]);
		const turns = (list: readonly { turn: number }[]) => list.map((e) => e.turn);
		assert.deepEqual(turns(merged.intents), [1, 2, 3, 4]);
		assert.deepEqual(turns(merged.commands), [1, 2, 3, 4]);
		assert.deepEqual(turns(merged.errors), [1, 2, 3, 4]);
		assert.deepEqual(merged.files, [{ path: "src/w.ts", tools: ["read"], turn: 1 }]);
	});

	it("caps the merged lists and counts the extra drops", () => {
		const records = [1, 2, 3].map(
			(seq): SeedRecord => ({
				...extract([user(`goal ${seq}`)]),
				seq,
				identifiers: [`id_${seq}_a`, `id_${seq}_b`],
			}),
		);
		const summary = summarizeIndex(records, { identifiers: 4, intents: 2 });
		assert.deepEqual(summary.identifiers, ["id_1_a", "id_1_b", "id_3_a", "id_3_b"]);
		assert.deepEqual(
			summary.intents.map((i) => i.text),
			["goal 1", "goal 3"],
		);
		assert.deepEqual(summary.dropped, { identifiers: 2, intents: 1 });
		assert.deepEqual(summarizeIndex([]), {
			sources: [],
			files: [],
			commands: [],
			errors: [],
			identifiers: [],
			intents: [],
			spans: [],
		});
	});
});

// ---------------------------------------------------------------------------------------------
// Reader

describe("parseSeedIndex", () => {
	const golden = () =>
		extractSeedRecord({ kind: "compaction", seq: 3, messages: goldenSession(), spans: goldenSpans() });

	it("round-trips serialized records, one line each", () => {
		const fold = extractSeedRecord({ kind: "fold", seq: 1, messages: goldenSession(), spans: goldenSpans() });
		const line = serializeRecord(fold);
		assert.ok(line.endsWith("\n"));
		assert.equal(line.indexOf("\n"), line.length - 1);
		const parsed = parseSeedIndex(line + serializeRecord(golden()));
		assert.deepEqual(parsed, { records: [fold, golden()], retracted: [], skipped: 0, newer: 0 });
	});

	it("ignores unknown fields at every level", () => {
		const raw = JSON.parse(serializeRecord(golden()));
		raw.extra = { nested: true };
		raw.files[0].mtime = 5;
		raw.errors[0].severity = "high";
		raw.spans[0].layer = "x";
		raw.dropped = { files: 3, shadows: 9 };
		const parsed = parseSeedIndex(`${JSON.stringify(raw)}\n`);
		assert.deepEqual(parsed.records, [{ ...golden(), dropped: { files: 3 } }]);
		assert.equal(parsed.skipped, 0);
	});

	it("reads the fields it knows from a newer version and counts it", () => {
		const newer = {
			v: 2,
			kind: "fold",
			seq: 7,
			files: [{ path: "x.ts", tools: ["read", 3], turn: 4, hash: "abc" }, { nopath: true }],
			commands: "not a list any more",
			errors: [{ line: "Error: z", turn: 4, code: "abcd1234", tool: "bash", col: 9 }],
			identifiers: ["fooBar", 7],
			intents: [{ turn: 1, text: "hello", lang: "en" }],
			spans: [{ id: "r:z", code: "abcd1234", chars: 40 }],
			summaryHints: ["new in v2"],
		};
		const parsed = parseSeedIndex(
			`${JSON.stringify(newer)}\n${JSON.stringify({ v: 3, kind: "retraction", seq: 1 })}\n`,
		);
		assert.equal(parsed.newer, 2);
		assert.equal(parsed.skipped, 0);
		assert.deepEqual(parsed.records, [
			{
				v: 2,
				kind: "fold",
				seq: 7,
				files: [{ path: "x.ts", tools: ["read"], turn: 4 }],
				commands: [],
				errors: [{ line: "Error: z", turn: 4, code: "abcd1234", tool: "bash" }],
				identifiers: ["fooBar"],
				intents: [{ turn: 1, text: "hello" }],
				spans: [{ id: "r:z", code: "abcd1234", kind: "other", turn: 0, chars: 40, tokens: blockCost(40) }],
			},
		]);
		assert.deepEqual(parsed.retracted, [{ v: 3, kind: "retraction", seq: 1, reason: "" }]);
	});

	it("skips a last line cut mid-write without throwing", () => {
		const whole = serializeRecord(golden());
		for (const cut of [1, 10, whole.length / 2, whole.length - 3]) {
			const text = whole + whole.slice(0, Math.floor(cut));
			const parsed = parseSeedIndex(text);
			assert.deepEqual(parsed.records, [golden()], `cut at ${cut}`);
			assert.equal(parsed.skipped, 1);
		}
		// the complete line minus only its newline is still a complete record
		assert.equal(parseSeedIndex(whole + whole.slice(0, -1)).records.length, 2);
	});

	it("skips malformed lines and keeps reading", () => {
		const good = serializeRecord(golden());
		const text = [
			"not json",
			"[1,2,3]",
			"42",
			"null",
			JSON.stringify({ kind: "fold", seq: 1 }),
			JSON.stringify({ v: 0, kind: "fold", seq: 1 }),
			JSON.stringify({ v: 1.5, kind: "fold", seq: 1 }),
			JSON.stringify({ v: "1", kind: "fold", seq: 1 }),
			JSON.stringify({ v: 1, kind: "fold", seq: "1" }),
			JSON.stringify({ v: 1, kind: "mystery", seq: 1 }),
			JSON.stringify({ v: 1, seq: 1 }),
			"",
			"   ",
			good.trimEnd(),
			"{",
		].join("\r\n");
		const parsed = parseSeedIndex(`\uFEFF${text}`);
		assert.deepEqual(parsed.records, [golden()]);
		assert.equal(parsed.skipped, 12);
		assert.equal(parsed.newer, 0);
		assert.doesNotThrow(() => parseSeedIndex(""));
		assert.deepEqual(parseSeedIndex(""), { records: [], retracted: [], skipped: 0, newer: 0 });
	});

	it("accepts minimal records, filling absent lists with empty ones", () => {
		const parsed = parseSeedIndex(`${JSON.stringify({ v: 1, kind: "compaction", seq: 4 })}\n`);
		assert.deepEqual(parsed.records, [
			{
				v: 1,
				kind: "compaction",
				seq: 4,
				files: [],
				commands: [],
				errors: [],
				identifiers: [],
				intents: [],
				spans: [],
			},
		]);
	});

	it("honours retractions: a compaction of the same seq written before is cancelled", () => {
		const record = (kind: "fold" | "compaction", seq: number): SeedRecord => ({ ...golden(), kind, seq });
		const text = [
			serializeRecord(record("fold", 5)),
			serializeRecord(record("compaction", 5)),
			serializeRecord(record("compaction", 6)),
			serializeRecord(retraction(5, "compaction failed: aborted")),
			serializeRecord(retraction(8, "nothing to cancel")),
			serializeRecord(record("compaction", 8)),
		].join("");
		const parsed = parseSeedIndex(text);
		assert.deepEqual(
			parsed.records.map((r) => `${r.kind}:${r.seq}`),
			["fold:5", "compaction:6", "compaction:8"],
		);
		assert.deepEqual(parsed.retracted, [
			{ v: 1, kind: "retraction", seq: 5, reason: "compaction failed: aborted" },
			{ v: 1, kind: "retraction", seq: 8, reason: "nothing to cancel" },
		]);
		assert.equal(parsed.skipped, 0);
	});

	it("a fold retraction cancels only the fold record of its seq written before it", () => {
		const record = (kind: "fold" | "compaction", seq: number): SeedRecord => ({ ...golden(), kind, seq });
		const text = [
			serializeRecord(record("fold", 2)),
			serializeRecord(record("compaction", 2)),
			serializeRecord(retraction(2, "records entry could not be appended", "fold")),
			serializeRecord(record("fold", 2)),
		].join("");
		const parsed = parseSeedIndex(text);
		assert.deepEqual(
			parsed.records.map((r) => `${r.kind}:${r.seq}`),
			["compaction:2", "fold:2"],
		);
		assert.equal(parsed.retracted[0].target, "fold");
	});

	it("serializes a retraction as one line", () => {
		assert.equal(serializeRecord(retraction(3, "failed")), '{"v":1,"kind":"retraction","seq":3,"reason":"failed"}\n');
	});
});

// ---------------------------------------------------------------------------------------------
// Smoke over the recorded sessions

/** The paths file tools received, and the files apply_patch patches name (read line by line here). */
function toolPaths(messages: readonly MessageLike[]): Set<string> {
	const paths = new Set<string>();
	for (const m of messages) {
		if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
		for (const part of m.content as { type?: string; name?: string; arguments?: Record<string, unknown> }[]) {
			if (part?.type !== "toolCall") continue;
			const patch = part.arguments?.input;
			if (part.name === "apply_patch" && typeof patch === "string") {
				for (const line of patch.split("\n")) {
					for (const head of ["*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "])
						if (line.startsWith(head)) paths.add(line.slice(head.length).trim());
				}
			}
			if (!["read", "write", "edit", "ls", "grep", "find"].includes(part.name ?? "")) continue;
			const path = part.arguments?.path ?? part.arguments?.file_path;
			if (typeof path === "string") paths.add(path);
		}
	}
	return paths;
}

/**
 * A path a file tool touched and an error line a result printed, which the record of a session must
 * hold, by session name (`corpus/file`), on top of the generic checks: the project's own sessions,
 * so a fresh clone runs these checks too, and the shared ones.
 */
const KNOWN: Record<string, { path: string; error: string }> = {
	"project/debug-branchy.jsonl": {
		path: "src/layout/extent.ts",
		error: "TypeError: not a finite value: null",
	},
	"project/refactor-long.jsonl": {
		path: "src/statements/render.ts",
		error: "RangeError: invalid month: 2024-13",
	},
	"shared/large-session.jsonl": {
		path: "packages/coding-agent/src/theme/theme.ts",
		error: "grep: packages/tui/src/editor.ts: No such file or directory",
	},
	"shared/accordion-sample.jsonl": {
		path: "C:/Users/smash/Desktop/AgentPlayer0/win_arsenal.py",
		error: "UnicodeEncodeError: 'charmap' codec can't encode character '\\u2192' in position 1667: character maps to <undefined>",
	},
};

describe("smoke over the recorded sessions", () => {
	const sessions = loadSessions();
	it("covers the project's sessions always, the others where present", (t) => {
		const known = sessions.filter((s) => KNOWN[s.name] !== undefined);
		t.diagnostic(
			corpusNote([
				["seed record", sessions],
				["known path and error line", known],
			]),
		);
		assert.ok(
			known.some((s) => s.corpus === "project"),
			"no project session with a known path and error line",
		);
	});
	for (const session of sessions) {
		it(`${session.name}: extracts real paths and verbatim error lines, bounded and deterministic`, () => {
			const { messages } = session;
			const known = KNOWN[session.name];
			const spans = recordsForAll(messages);
			const record = extractSeedRecord({ kind: "compaction", seq: 1, messages, spans });
			const again = extractSeedRecord({ kind: "compaction", seq: 1, messages, spans });
			assert.equal(serializeRecord(record), serializeRecord(again));

			const paths = toolPaths(messages);
			assert.equal(record.files.length > 0, paths.size > 0, "files found exactly when file tools ran");
			for (const file of record.files) assert.ok(paths.has(file.path), file.path);
			if (known) assert.ok(record.files.some((f) => f.path === known.path));

			const texts = linearize(messages).map((b) => b.text);
			for (const error of record.errors) {
				// A long line is cut around its error: an ellipsis marks each cut end.
				const probe = error.line.replace(/^…/, "").replace(/…$/, "");
				assert.ok(
					texts.some((t) => t.includes(probe)),
					error.line,
				);
				if (error.code !== undefined)
					assert.ok(
						spans.some((s) => s.code === error.code),
						error.line,
					);
			}
			if (known) {
				assert.ok(
					record.errors.some((e) => e.line === known.error),
					known.error,
				);
				assert.ok(record.errors.some((e) => e.code !== undefined));
			}

			const corpus = JSON.stringify(messages);
			for (const id of record.identifiers) assert.ok(corpus.includes(id), id);
			const bash = messages.some(
				(m) =>
					m.role === "assistant" &&
					Array.isArray(m.content) &&
					(m.content as { type?: string; name?: string }[]).some(
						(p) => p?.type === "toolCall" && p.name === "bash",
					),
			);
			assert.equal(record.commands.length > 0, bash, "commands found exactly when bash ran");
			assert.ok(record.intents.length > 0, "no user intent");
			assert.equal(record.spans.length, Math.min(spans.length, SEED_CAPS.spans));
			assert.ok(serializeRecord(record).length < 400_000);

			assert.deepEqual(parseSeedIndex(serializeRecord(record)).records, [record]);
		});
	}
});

describe("what the caps left out, counted by a summary of several records", () => {
	it("is said as a bound where the records' own caps dropped values they do not name, and exactly where only the merge did", () => {
		const messages: MessageLike[] = [
			{ role: "user", content: Array.from({ length: 400 }, (_, i) => `fooBar${i}`).join(" "), timestamp: 1 },
		];
		// A fold event's record and a compaction's over the same messages: each drops the same 100.
		const fold = extractSeedRecord({ kind: "fold", seq: 1, messages, spans: [] });
		const compaction = extractSeedRecord({ kind: "compaction", seq: 1, messages, spans: [] });
		const both = summarizeIndex([fold, compaction]);
		assert.equal(both.dropped?.identifiers, 200, "the records' counts, summed");
		assert.deepEqual(both.droppedAtMost, ["identifiers"]);
		const text = renderSummary({ summary: both, scope: "s." });
		assert.match(text, /; up to 200 more identifiers left out by the index's caps\n/);
		// Only the merge's own cap left values out: it knows them, and counts them exactly.
		const small = [{ role: "user", content: "alphaBeta1 gammaDelta2 epsilonZeta3", timestamp: 1 }] as MessageLike[];
		const merged = summarizeIndex([extractSeedRecord({ kind: "fold", seq: 1, messages: small, spans: [] })], {
			identifiers: 1,
		});
		assert.equal(merged.droppedAtMost, undefined);
		assert.match(
			renderSummary({ summary: merged, scope: "s." }),
			/- … 2 more identifiers left out by the index's caps/,
		);
	});
});
