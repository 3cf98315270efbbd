/**
 * The risk lexicon: error lines in any case, stack frames, and the ordered, bounded risk lines a
 * digest keeps.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isErrorLine, isFrameLine, type RiskLine, riskLines } from "../../src/core/policy/risk-lexicon.ts";

/** A terminal colour code (ESC [ … letter), as the one-by-one contract strips them. */
const COLOUR_CODES = new RegExp(`${String.fromCharCode(0x1b)}\\[[0-9;?]*[ -/]*[@-~]`, "g");

describe("isErrorLine", () => {
	it("flags the broad error lexicon, in any case", () => {
		for (const line of [
			"error: something broke",
			"Error: ENOENT, open 'x'",
			"ERROR in ./src/index.ts",
			"3 errors found",
			"npm ERR! code 1",
			"TypeError: x is not a function",
			"ReferenceError: foo is not defined",
			"SyntaxError: Unexpected token '}'",
			"ValueError: invalid literal for int() with base 10",
			"ModuleNotFoundError: No module named 'requests'",
			"error[E0308]: mismatched types",
			"src/a.ts(3,5): error TS2322: Type 'string' is not assignable",
			"FAIL src/a.test.ts",
			"1 failing",
			"Build failed",
			"Unhandled exception in thread main",
			"java.lang.NullPointerException",
			"Traceback (most recent call last):",
			"thread 'main' panicked at src/main.rs:3:5",
			"panic: runtime error: index out of range",
			"FATAL: database is locked",
			"fatal: not a git repository",
			"Permission denied (publickey)",
			"403 Forbidden",
			"401 Unauthorized",
			"Segmentation fault (core dumped)",
			"Process exited with code 1",
			"command failed: non-zero exit status",
			// No other term of the lexicon in it: the line holds for "non-zero exit" alone.
			"process ended with non-zero exit code",
			"exit status 2",
			"cannot find module 'x'",
			"bash: foo: command not found",
			"cat: x: No such file or directory",
			"Request timed out after 30s",
			"Killed",
			"AssertionError [ERR_ASSERTION]: expected 1 to equal 2",
			"✗ should add numbers",
			"❌ lint",
			"  ✖ divides numbers (1.2ms)",
			"  ✕ renders the header (12 ms)",
			"spawn git ENOENT",
			"connect ECONNREFUSED 127.0.0.1:5432",
			"EACCES: permission denied",
		]) {
			assert.ok(isErrorLine(line), line);
		}
	});

	it("flags the same signals in the languages glibc and compilers localize to", () => {
		for (const line of [
			"gcc: Fehler: main.c: Datei oder Verzeichnis nicht gefunden",
			"Build fehlgeschlagen",
			"cp: Zugriff verweigert",
			"ls: impossible d'accéder à 'x': Aucun fichier ou dossier de ce type",
			"erreur : la compilation a échoué",
			"cat: x: No existe el archivo o el directorio",
			"la compilación falló",
			"cat: x: Arquivo ou diretório inexistente",
			"erro: falhou ao compilar",
			"cat: x: File o directory non esistente",
			"bash: x: Permesso negato",
			"Ошибка сегментирования (стек памяти сброшен на диск)",
			"cat: x: Нет такого файла или каталога",
			"错误：找不到模块 'x'",
			"cat: x: 没有那个文件或目录",
			"エラー: モジュールが見つかりません",
			"cat: x: そのようなファイルやディレクトリはありません",
			"오류: 모듈을 찾을 수 없습니다",
			"빌드 실패",
			"cp: 'data/a.bin' kann nicht zum Schreiben geöffnet werden: Keine Berechtigung",
			"Ошибок: 1",
			"Violación de segmento (`core' generado)",
			"bash: x: Permissão recusada",
			"无法打开文件 'x'",
			"cat: x: 沒有此一檔案或目錄",
			"ファイルを開くことができません",
			"파일을 열 수 없습니다: 허가 거부",
			"bash: line 1: 4242 已放弃 (核心已转储) ./a.out",
			"bash: line 1: 4242 強制終了 ./a.out",
			"bash: line 1: 4242 Abandon (core dumped) ./a.out",
			"bash: line 1: 4242 Убито ./a.out",
			"bash: line 1: 4242 Morto ./a.out",
			"3 erros encontrados",
			"2 falhas",
			"compilación fallida",
			"3 test falliti",
		]) {
			assert.ok(isErrorLine(line), line);
		}
		for (const line of [
			"Alle Tests bestanden",
			"Compilation réussie",
			"Compilación completada",
			"编译成功",
			"テストに合格しました",
			"빌드 성공",
			"an impossible deal",
		]) {
			assert.ok(!isErrorLine(line), line);
		}
	});

	it("flags failures that name no error in words, as their tools print them, and not the plain words", () => {
		for (const line of [
			"not ok 61 - parses nested blocks",
			"    not ok 2 - formats amounts",
			"CONFLICT (content): Merge conflict in src/m7/index.ts",
			" ! [rejected]        main -> main (fetch first)",
			" ! [remote rejected] main -> main (pre-receive hook declined)",
			"(node:4242) UnhandledPromiseRejectionWarning: boom",
			"main.c:(.text+0x1d): undefined reference to `compute_total'",
			"Undefined symbols for architecture arm64:",
			"LNK2019: unresolved external symbol _main",
			"curl: (6) Could not resolve host: example.invalid",
			"ssh: connect to host example.com port 22: Connection refused",
			"write /var/lib/docker/tmp/x: no space left on device",
			"cat: write error: Broken pipe",
			"accept: Too many open files",
			"touch: cannot touch 'x': Read-only file system",
			"chown: changing ownership of 'x': Operation not permitted",
			"listen tcp :8080: bind: address already in use",
			"connect: Network is unreachable",
			"OSError: [Errno 22] Invalid argument",
			"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
			"thread 'main' has overflowed its stack: stack overflow",
		]) {
			assert.ok(isErrorLine(line), line);
		}
		for (const line of [
			"ok 3 - not ok in a test's name",
			"- User types and permissions (if multiple conflicting interpretations possible)",
			"1. **Inngest** — rejected by the constitution",
			'export type RefundStatus = "requested" | "paid" | "rejected";',
			"I could not agree more",
		]) {
			assert.ok(!isErrorLine(line), line);
		}
	});

	it("leaves ordinary lines alone", () => {
		for (const line of [
			"All 42 tests passed",
			"export function foo(): number {",
			"Compiled successfully in 1.2s",
			"const total = items.length;",
			"exit status 0",
			"Done.",
			"README.md",
			"enoent is a lowercase word here",
			"ENOENTITY",
		]) {
			assert.ok(!isErrorLine(line), line);
		}
	});

	it("matches errno names only in capitals", () => {
		assert.ok(isErrorLine("spawn EPERM"));
		assert.ok(!isErrorLine("spawn eperm"));
	});

	it("flags a failure coloured by the terminal codes Pi's bash tool passes on", () => {
		const E = "\x1b";
		for (const line of [
			`${E}[31mFAILED${E}[0m tests/test_b.py::test_y - assert 1 == 2`,
			`${E}[1;31mfatal${E}[0m: not a git repository`,
			`npm ${E}[31mERR!${E}[39m code ELIFECYCLE`,
			`${E}[31mENOENT${E}[0m: no entry`,
			`${E}[31mpanic${E}[0m: boom`,
			`${E}[33mKilled${E}[0m`,
			`${E}[31mcannot${E}[0m open file`,
			`${E}[1m${E}[31merr${E}[0m`,
		]) {
			assert.ok(isErrorLine(line), JSON.stringify(line));
		}
		// A code before an ordinary word reads it no differently.
		assert.ok(!isErrorLine(`${E}[32mpassed${E}[0m 12 tests`));
	});
});

describe("isFrameLine", () => {
	it("recognizes stack frames of common runtimes", () => {
		for (const line of [
			"    at Object.<anonymous> (/app/src/index.js:10:15)",
			"    at async run (file:///app/x.mjs:3:7)",
			"at main (main.ts:1)",
			'  File "/app/main.py", line 12, in <module>',
			"   0: 0x55d5c1a2b3c4 - std::panicking::begin_panic",
			"goroutine 1 [running]:",
			"\t/home/u/app/main.go:27 +0x1d",
		]) {
			assert.ok(isFrameLine(line), line);
		}
	});

	it("recognizes a frame that opens with colour codes", () => {
		assert.ok(isFrameLine("\x1b[2m    at Object.<anonymous> (/app/x.test.js:3:9)\x1b[22m"));
		assert.ok(isFrameLine("  \x1b[90m\x1b[2mat run (/app/y.js:1:2)"));
		assert.ok(!isFrameLine("\x1b[2mlook at this\x1b[22m"));
	});

	it("does not take ordinary lines for frames", () => {
		for (const line of ["look at this", "at least 3 items", "File saved", "main.go is the entry point"]) {
			assert.ok(!isFrameLine(line), line);
		}
	});

	it("reads Go's diagnostics, which name no error in words, as errors, and its frames as frames", () => {
		// A failing test's reason, and the compiler's and vet's line:column messages.
		for (const line of [
			"    calc_test.go:12: got 0, want 1",
			"./main.go:12:2: undefined: bar",
			"pkg/x/y.go:3:14: declared and not used: z",
		]) {
			assert.ok(isErrorLine(line), line);
			assert.ok(!isFrameLine(line), line);
		}
		assert.ok(isFrameLine("\t/usr/local/go/src/testing/testing.go:1576 +0x10b"));
		// A log line with a short file name carries no column: no error.
		assert.ok(!isErrorLine("main.go:45: starting server on :8080"));
		// In a go test run with more failures than a digest lists, each failure keeps its reason beside it.
		const run = [
			...Array.from({ length: 13 }, (_, i) => `--- FAIL: Test${i} (0.00s)\n    calc_test.go:${i + 10}: got ${i}`),
			"FAIL",
		].join("\n");
		const errors = riskLines(run).filter((r) => !r.frame);
		assert.deepEqual(
			errors.slice(0, 2).map((r) => r.text),
			["--- FAIL: Test0 (0.00s)", "    calc_test.go:10: got 0"],
		);
	});
});

describe("riskLines", () => {
	it("lists error lines first, then frames, each in text order, with 1-based line numbers", () => {
		const text = [
			"Running tests", // 1
			"Error: first", // 2
			"    at a (/x.js:1:1)", // 3
			"    at b (/x.js:2:2)", // 4
			"fine", // 5
			"second failure here", // 6
		].join("\n");
		assert.deepEqual(riskLines(text), [
			{ line: 2, text: "Error: first", frame: false },
			{ line: 6, text: "second failure here", frame: false },
			{ line: 3, text: "    at a (/x.js:1:1)", frame: true },
			{ line: 4, text: "    at b (/x.js:2:2)", frame: true },
		]);
	});

	it("keeps lines verbatim (leading white space kept, CR of CRLF dropped)", () => {
		const text = "ok\r\n\t  ERROR   spaced  out\r\nok\r\n";
		assert.deepEqual(riskLines(text), [{ line: 2, text: "\t  ERROR   spaced  out", frame: false }]);
	});

	it("numbers lines through blank lines", () => {
		assert.deepEqual(riskLines("\n\n\nfatal"), [{ line: 4, text: "fatal", frame: false }]);
	});

	it("is empty for clean text and for empty text", () => {
		assert.deepEqual(riskLines("all good\nnothing to see"), []);
		assert.deepEqual(riskLines(""), []);
	});

	it("finds exactly the lines isErrorLine and isFrameLine flag one by one", () => {
		/** riskLines as its contract states it: each line tested on its own. */
		const byLine = (text: string, allErrors: boolean) => {
			const errors: RiskLine[] = [];
			const frames: RiskLine[] = [];
			const all: RiskLine[] = [];
			// Each line without its colour codes, then without the CR of a CRLF: what the status line is read from.
			const plain: string[] = [];
			text.split("\n").forEach((raw, i) => {
				const uncoloured = raw.replace(COLOUR_CODES, "");
				plain[i] = uncoloured.endsWith("\r") ? uncoloured.slice(0, -1) : uncoloured;
				const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
				// A line of colour codes alone says nothing.
				if (!line.replace(COLOUR_CODES, "").trim()) return;
				if (isFrameLine(line)) frames.push({ line: i + 1, text: line, frame: true });
				else if (isErrorLine(line)) {
					errors.push({ line: i + 1, text: line, frame: false });
					all.push({ line: i + 1, text: line, frame: false });
				} else all.push({ line: i + 1, text: line, frame: false, failed: true });
			});
			const signalled = errors.some((risk) => !/^Command exited with code \d+$/.test(plain[risk.line - 1]));
			return (allErrors && !signalled ? all : errors).concat(frames);
		};
		const piece = fc.constantFrom(
			"\n\nCommand exited with code 2",
			"error",
			"Err",
			"err",
			"or",
			"ENOENT",
			"E",
			"NOENT",
			"fail",
			"exit",
			" ",
			"code",
			"1",
			"_",
			"x",
			"\n",
			"\r",
			"\r\n",
			"\t",
			"at ",
			"  at f (a.js:1:2)",
			"timed",
			"out",
			"can't",
			"not ok",
			"not",
			" ok",
			"✖",
			"é",
			"\u2028",
			"\x1b[31m",
			"\x1b[0m",
			"m",
		);
		fc.assert(
			fc.property(fc.array(piece, { maxLength: 24 }), fc.boolean(), (pieces, allErrors) => {
				const text = pieces.join("");
				assert.deepEqual(riskLines(text, allErrors), byLine(text, allErrors));
			}),
			{ numRuns: 2000 },
		);
	});
});
