/**
 * The risk lexicon: lines that signal a failure must survive every digest verbatim. It is broad and
 * case-insensitive on purpose; a missed error line is worse than a digest a few lines longer.
 */
import { isShellStatusLine } from "../output-notices.ts";
import { clipAround } from "../tokens.ts";

/**
 * Terminal colour and style codes (ANSI CSI sequences such as `ESC[31m`), which Pi's bash tool passes
 * to the model as the command printed them (pytest, npm, cargo and jest colour their failures). The
 * lexicon reads a line without them (a code ends in a letter, so `ESC[31mFAILED` has no word start
 * before FAILED); the line a digest keeps is the verbatim one.
 */
const ANSI_CODES = new RegExp(`${String.fromCharCode(0x1b)}\\[[0-9;?]*[ -/]*[@-~]`, "g");

/** `text` without its colour codes; `text` itself when it holds no escape character (most texts). */
export function uncoloured(text: string): string {
	return text.includes("\x1b") ? text.replace(ANSI_CODES, "") : text;
}

/** The position in `line` of the character at `at` in uncoloured(line). */
function colouredAt(line: string, at: number): number {
	let plain = 0;
	let from = 0;
	for (const code of line.matchAll(ANSI_CODES)) {
		const run = code.index - from;
		if (plain + run > at) break;
		plain += run;
		from = code.index + code[0].length;
	}
	return from + (at - plain);
}

const ERROR_PATTERN = new RegExp(
	[
		"\\berr(or|ors|no)?\\b",
		"error", // also inside names: TypeError, ValueError, ModuleNotFoundError
		"\\bfail",
		"exception",
		"traceback",
		"\\bpanic",
		"\\bfatal",
		"denied",
		"\\bforbidden\\b",
		"unauthori[sz]ed",
		"segmentation fault",
		"\\bsegfault",
		"core dumped",
		"non-zero exit",
		"exit(ed)? (with )?(code|status):? [1-9]",
		"\\bcannot\\b",
		"\\bcan't\\b",
		"\\bunable to\\b",
		"not found",
		"no such file",
		"\\baborted\\b",
		"\\btimed? ?out\\b",
		"\\bkilled\\b",
		"\\bcrash",
		"\\bassertion",
		"\\bunhandled\\b",
		"\\bundefined is not\\b",
		"✗|✘|✖|✕|❌", // ✖ node:test, ✕ jest
		// Failures that name no error in words, each as its tool prints it (the plain words alone, such
		// as "conflict" or "rejected", fill documents and code with lines that signal nothing).
		"(?<![^\\n])[ \\t]*not ok\\b", // a failing TAP test (node --test, prove), at a line's start
		"merge conflict|\\bCONFLICT \\(", // git
		"\\[(remote )?rejected\\]|promise ?rejection", // git push; Node's unhandled rejections
		"\\bundefined (reference|symbols?)\\b|\\bunresolved (external|symbol)", // linkers
		"\\bcould ?n[o']t (resolve|connect)", // curl, ssh, package managers
		// glibc's strerror texts that name no error in words (the errno names are matched below).
		"connection (refused|reset)|no space left on device|broken pipe|too many open files|read-only file system|operation not permitted|address already in use|(network|host) is unreachable|invalid argument|out of memory|stack overflow",
		// The same signals where the tools speak the user's language (glibc's and compilers' messages):
		// German, French, Spanish, Portuguese, Italian, Russian, Chinese, Japanese, Korean. A word that
		// starts outside ASCII has no \b before it (without the u flag \b sees only ASCII letters).
		"fehler|\\bfehlgeschlagen|nicht gefunden|verweigert|\\babgebrochen|keine berechtigung|\\bkann nicht\\b|nicht möglich|getötet",
		"erreur|échec|échoué|introuvable|\\bimpossible d(e\\b|')|aucun fichier ou dossier|permission non accordée|\\bne peut pas\\b|\\babandon\\b|processus arrêté|n'a pas pu",
		"\\bfall(os?\\b|ó|id[oa]s?\\b)|denegado|no existe el (archivo|fichero)|\\bno se (pudo|puede|encontr)|violación de segmento|\\babortado\\b",
		"\\berros?\\b|\\bfalh(as?|ou)\\b|\\bmorto\\b|inexistente|\\bpermissão (negada|recusada)|não encontrad|falta de segmentação|não (foi possível|é possível|pode)",
		"\\bfallit[oaie]\\b|\\bucciso\\b|core dump|\\bimpossibile\\b|non trovat|permesso negato|non esistente|non (è|e') possibile",
		"ошиб|аварийный останов|убито|не найден|не удалось|не удаётся|не удается|невозможно|отказано|нет такого файла",
		"错误|已放弃|核心已转储|已杀死|強制結束|錯誤|失败|失敗|异常|異常|找不到|无法|無法|没有那个文件|沒有此一檔案|权限不够|拒绝|拒絕|不存在",
		"エラー|中止|強制終了|コアダンプ|見つかりません|そのようなファイル|許可がありません|できません|拒否|例外",
		"오류|중지됨|죽었음|에러|실패|찾을 수 없|할 수 없|그런 파일|허가 거부|거부",
	].join("|"),
	"i",
);

/** POSIX errno names (ENOENT, EACCES, ...) are matched case-sensitively so plain words do not hit; exported for labelled errors (index/extract.ts). */
export const ERRNO_PATTERN =
	/\bE(NOENT|ACCES|PERM|EXIST|NOTDIR|ISDIR|INVAL|NOSPC|ADDRINUSE|CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|NOTEMPTY|MFILE|AGAIN|BUSY|NOMEM|HOSTUNREACH|NOTFOUND|AI_AGAIN)\b/;

/**
 * Stack frames (JS, Python, Java, Rust, Go) count as risk lines, but rank after error lines. A Go frame
 * is a path and line alone, with the frame's offset (`\t/src/main.go:12 +0x1d`), where a diagnostic
 * goes on with a message (see GO_DIAGNOSTIC).
 */
const FRAME_PATTERN =
	/^\s*(at\s+\S.*[:(]\d+|File ".+", line \d+|\d+:\s+0x[0-9a-f]+|goroutine \d+|\S+\.go:\d+(?:\s+\+0x[0-9a-f]+)?\s*$)/i;

/**
 * Go's diagnostics, which name no error in words: the compiler's and vet's `./main.go:12:2: undefined:
 * bar` (a line and a column), and a failing test's reason `calc_test.go:12: got 0, want 1` (a test file's
 * line). A log line's `main.go:45: starting` (no column, no test file) is none.
 */
const GO_DIAGNOSTIC = /^([ \t]*\S+(?:\.go:\d+:\d+|_test\.go:\d+): )\S/;

/** True if the line reads as an error or failure signal (its colour codes aside). */
export function isErrorLine(line: string): boolean {
	const plain = uncoloured(line);
	return ERROR_PATTERN.test(plain) || ERRNO_PATTERN.test(plain) || GO_DIAGNOSTIC.test(plain);
}

/** Where `line` first reads as an error (see isErrorLine) and how long that reading is; undefined if it does not. */
function errorSignal(line: string): { at: number; length: number } | undefined {
	const matches = [ERROR_PATTERN.exec(line), ERRNO_PATTERN.exec(line)].filter((m) => m !== null);
	if (matches.length === 0) {
		// A Go diagnostic's signal is its message, after the path and line.
		const go = GO_DIAGNOSTIC.exec(line);
		return go ? { at: go[1].length, length: 1 } : undefined;
	}
	const first = matches.reduce((a, b) => (b.index < a.index ? b : a));
	return { at: first.index, length: first[0].length };
}

/**
 * `line` within `max` characters: a long one is cut around where it first reads as an error (see
 * errorSignal), so the failure itself stays (a JSON line whose error comes at its end).
 */
export function clipToError(line: string, max: number): string {
	const plain = uncoloured(line);
	const signal = errorSignal(plain);
	if (!signal || plain === line) return clipAround(line, signal?.at ?? -1, signal?.length ?? 0, max);
	const at = colouredAt(line, signal.at);
	return clipAround(line, at, colouredAt(line, signal.at + signal.length) - at, max);
}

/** The error patterns, to search a whole text at once (see errorLineStarts). */
const ERROR_SCANS = [new RegExp(ERROR_PATTERN.source, "gi"), new RegExp(ERRNO_PATTERN.source, "g")];

/** GO_DIAGNOSTIC over a whole text, at a line's start only (after a line feed, not a carriage return, as the lines are split). */
const GO_SCAN = new RegExp(`(?<![^\n])${GO_DIAGNOSTIC.source.slice(1)}`, "g");

/**
 * The start offset of every line of `text` that isErrorLine would flag, found by searching the whole
 * text instead of each line (a search per line costs several times more). It finds the same lines:
 * no error pattern matches a line feed or a carriage return, and `\b` reads a line feed like the
 * end of a line.
 */
function errorLineStarts(text: string): Set<number> {
	const starts = new Set<number>();
	// Most texts name no Go file: the Go scan, which tries every position, is skipped for them.
	for (const scan of text.includes(".go:") ? [...ERROR_SCANS, GO_SCAN] : ERROR_SCANS) {
		scan.lastIndex = 0;
		for (let match = scan.exec(text); match; match = scan.exec(text)) {
			starts.add(text.lastIndexOf("\n", match.index - 1) + 1);
			const end = text.indexOf("\n", match.index);
			if (end < 0) break;
			scan.lastIndex = end + 1;
		}
	}
	return starts;
}

/** True if the line is a stack frame of a common runtime (its colour codes aside). */
export function isFrameLine(line: string): boolean {
	return FRAME_PATTERN.test(uncoloured(line));
}

/** A risk line found in a text, with its 1-based line number. */
export interface RiskLine {
	line: number;
	text: string;
	frame: boolean;
	/** Listed only because the result it is in failed: the lexicon finds no error in it (see riskLines). */
	failed?: true;
}

/**
 * Every risk line of `text`, error lines first and stack frames after, each group in text order.
 * White-space-only differences are kept: the lines are verbatim. With `allErrors` (the text of an
 * error result), when the lexicon finds no error line but Pi's bash status line (`Command exited
 * with code 1`, which says that a command failed and never why), every non-empty line that is not a
 * frame counts as one, marked `failed`: the whole result is the failure signal.
 */
export function riskLines(text: string, allErrors = false): RiskLine[] {
	const plain = uncoloured(text);
	if (plain === text) return plainRiskLines(text, allErrors);
	// Colour codes hold no line feed: the uncoloured text's lines are the text's, by number.
	const lines = text.split("\n");
	return plainRiskLines(plain, allErrors).map((risk) => {
		const raw = lines[risk.line - 1];
		return { ...risk, text: raw.endsWith("\r") ? raw.slice(0, -1) : raw };
	});
}

/** riskLines of a text without colour codes. */
function plainRiskLines(text: string, allErrors: boolean): RiskLine[] {
	const errors: RiskLine[] = [];
	const frames: RiskLine[] = [];
	const failed: RiskLine[] = [];
	const errorAt = errorLineStarts(text);
	let start = 0;
	let n = 0;
	while (start < text.length) {
		let end = text.indexOf("\n", start);
		if (end < 0) end = text.length;
		n++;
		const raw = text.slice(start, end);
		const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
		if (line.trim()) {
			if (isFrameLine(line)) frames.push({ line: n, text: line, frame: true });
			else {
				const error = errorAt.has(start);
				if (error) errors.push({ line: n, text: line, frame: false });
				if (allErrors)
					failed.push(
						error ? { line: n, text: line, frame: false } : { line: n, text: line, frame: false, failed: true },
					);
			}
		}
		start = end + 1;
	}
	const signalled = errors.some((risk) => !isShellStatusLine(risk.text));
	return (allErrors && !signalled ? failed : errors).concat(frames);
}
