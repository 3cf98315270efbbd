/**
 * The `node --test` reporter `npm test` uses (`--test-reporter=./scripts/test-reporter.ts`): one line
 * per test file once Node has reported it (Node reports files in path order, each after it finished:
 * ok or FAIL, its wall time, how many tests ran, failed and were skipped), then under a file every failed test in full (its name path and location, the error with
 * its stack and any actual/expected diff, the test's diagnostics) and the file's stdout and stderr
 * when it failed, with the diagnostics no failed test took (Node's word on activity after a test
 * ended, say: often the only reason a file failed), and at the end Node's own totals as TAP comment
 * lines (`# tests N`, `# pass N`, `# fail N`, `# skipped N`, …), which CI tooling may grep. A passing
 * file's output and diagnostics are left out, except a diagnostic that starts with `corpus:` or
 * `corpora:` (the line a corpus-reading test prints to say which checks ran on which recorded
 * sessions), printed indented under its file.
 */
import { relative, resolve } from "node:path";
import type { TestEvent } from "node:test/reporters";
import { inspect } from "node:util";

/** Diagnostics of a passing file that the reporter shows. */
const NOTE = /^(corpus|corpora):/;

/** A stack frame inside Node's own runner, which says nothing about the failure. */
const INTERNAL_FRAME = /^\s+at (.*\()?node:(internal\/|async_hooks)|^\s+at async Promise\.all/;

/** Most lines of a failed file's stdout or stderr shown (the last ones). */
const OUTPUT_LINES = 200;

interface Failure {
	path: string;
	where: string;
	error: string;
	brief: boolean;
	diagnostics: string[];
}

interface FileState {
	/** Names of the tests open at each nesting level, for a failure's name path. */
	stack: string[];
	passed: number;
	failed: number;
	skipped: number;
	todo: number;
	failures: Failure[];
	notes: string[];
	/** Diagnostics that followed no failed test, shown when the file failed. */
	loose: string[];
	output: string[];
	/** The last reported test's diagnostics, which follow its pass or fail event. */
	last: string[] | undefined;
	/** The file's wall time and whether its process passed, once the runner says it completed. */
	completed?: { ms: number; passed: boolean };
	/** True once the file's own results are all in: its summary, or its own failure (a crash). */
	reported: boolean;
	done: boolean;
}

/** A file's state, created on its first event. */
function stateOf(files: Map<string, FileState>, file: string): FileState {
	let state = files.get(file);
	if (!state) {
		state = {
			stack: [],
			passed: 0,
			failed: 0,
			skipped: 0,
			todo: 0,
			failures: [],
			notes: [],
			loose: [],
			output: [],
			last: undefined,
			reported: false,
			done: false,
		};
		files.set(file, state);
	}
	return state;
}

/** `text` with every line indented by `pad`. */
function indent(text: string, pad: string): string {
	return text
		.split("\n")
		.map((line) => (line ? pad + line : line))
		.join("\n");
}

/** A failed test's error as the reader needs it: the thrown value (message, stack, diff), not the runner's wrapper. */
function describeError(error: unknown): string {
	const wrapper = error as { cause?: unknown; failureType?: string } | undefined;
	const cause = wrapper?.cause ?? error;
	if (typeof cause === "string") return cause;
	// An assertion's stack already holds its message and the actual/expected diff; its fields repeat them.
	const assertion = (cause as { code?: unknown; stack?: unknown }).code === "ERR_ASSERTION";
	const stack = (cause as { stack?: unknown }).stack;
	const text = assertion && typeof stack === "string" ? stack : inspect(cause, { depth: 6, colors: false });
	return text
		.split("\n")
		.filter((line) => !INTERNAL_FRAME.test(line))
		.join("\n");
}

/** The one line a finished file gets. */
function fileLine(name: string, state: FileState, ms: number, crashed: boolean): string {
	const ok = state.failed === 0 && !crashed;
	const tests = state.passed + state.failed + state.skipped + state.todo;
	const parts = [`${tests} test${tests === 1 ? "" : "s"}`];
	if (state.failed > 0) parts.push(`${state.failed} failed`);
	if (state.skipped > 0) parts.push(`${state.skipped} skipped`);
	if (state.todo > 0) parts.push(`${state.todo} todo`);
	if (crashed && state.failed === 0) parts.push("the file itself failed");
	const time = `${(ms / 1000).toFixed(1)}s`.padStart(7);
	return `${ok ? "ok  " : "FAIL"} ${time}  ${name}  (${parts.join(", ")})`;
}

/** What is printed under a failed file: each failure, then its output. */
function failureReport(state: FileState): string {
	const out: string[] = [];
	for (const f of state.failures) {
		if (f.brief) {
			out.push(`  ✖ ${f.path} (${f.where}): ${f.error}`);
			continue;
		}
		out.push(`  ✖ ${f.path} (${f.where})`, indent(f.error, "      "));
		for (const d of f.diagnostics) out.push(`      # ${d}`);
	}
	for (const d of state.loose) out.push(indent(`# ${d}`, "  "));
	const lines = state.output.join("").split("\n");
	if (lines.at(-1) === "") lines.pop();
	if (lines.length > 0) {
		const shown = lines.slice(-OUTPUT_LINES);
		const cut = lines.length - shown.length;
		out.push(`  output of the file${cut > 0 ? ` (last ${shown.length} lines; ${cut} before left out)` : ""}:`);
		for (const line of shown) out.push(`    | ${line}`);
	}
	return `${out.join("\n")}\n`;
}

/** The report of a finished file: its line, its notes, and when it failed, its failures and output. */
function fileReport(name: string, state: FileState): string {
	const { ms, passed } = state.completed ?? { ms: 0, passed: false };
	const crashed = !passed;
	let out = `${fileLine(name, state, ms, crashed)}\n`;
	for (const note of state.notes) out += `       ${note}\n`;
	if (state.failed > 0 || crashed) out += failureReport(state);
	return out;
}

/**
 * The reporter: reads the runner's events, writes the concise report. With files run concurrently
 * the runner announces a file's completion as it happens but reports its tests in turn, so a file is
 * written once both are in: its completion, and its summary (or, for a file that crashed before any
 * summary, its own failure).
 */
export default async function* reporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string, void> {
	const files = new Map<string, FileState>();
	const failedFiles: string[] = [];
	const totals: string[] = [];
	const finish = (file: string, state: FileState): string => {
		state.done = true;
		const name = relative(process.cwd(), file);
		if (state.failed > 0 || !state.completed?.passed) failedFiles.push(name);
		return fileReport(name, state);
	};
	for await (const event of source) {
		if (event.type === "test:watch:drained" || event.type === "test:coverage") continue;
		const data = event.data as { file?: string; nesting?: number; name?: string; message?: string };
		if (event.type === "test:diagnostic" && !data.file) {
			// The runner's totals: tests, suites, pass, fail, cancelled, skipped, todo, duration_ms.
			totals.push(`# ${event.data.message}\n`);
			continue;
		}
		if (!data.file) continue;
		const file = resolve(data.file);
		const name = relative(process.cwd(), file);
		const state = stateOf(files, file);
		if (state.done) continue;
		switch (event.type) {
			case "test:stdout":
			case "test:stderr":
				state.output.push(event.data.message);
				break;
			case "test:start":
				state.stack.length = event.data.nesting;
				state.stack.push(event.data.name);
				break;
			case "test:diagnostic":
				if (NOTE.test(event.data.message)) state.notes.push(event.data.message);
				else if (state.last) state.last.push(event.data.message);
				else state.loose.push(event.data.message);
				break;
			case "test:summary":
				state.reported = true;
				break;
			case "test:pass":
			case "test:fail": {
				const d = event.data;
				state.last = undefined;
				if (d.nesting === 0 && resolve(d.name) === file) {
					// The file's own failure: it crashed or exited non-zero (its output says why).
					state.reported = true;
					break;
				}
				if (d.details.type === "suite") {
					// A suite's own failure (a hook's) is reported; one that only sums its tests' is not.
					const error = event.type === "test:fail" ? event.data.details.error : undefined;
					if (!error || (error as { failureType?: string }).failureType === "subtestsFailed") break;
				}
				if (event.type === "test:pass") {
					if (d.skip) state.skipped++;
					else if (d.todo) state.todo++;
					else state.passed++;
					break;
				}
				if (d.todo) {
					state.todo++;
					break;
				}
				const error = event.data.details.error as { failureType?: string };
				state.failed++;
				const failure: Failure = {
					path: [...state.stack.slice(0, d.nesting), d.name].join(" > "),
					where: `${name}:${d.line ?? "?"}`,
					error: describeError(error),
					brief: error.failureType === "cancelledByParent",
					diagnostics: [],
				};
				state.failures.push(failure);
				state.last = failure.diagnostics;
				break;
			}
			case "test:complete": {
				const d = event.data;
				if (d.nesting !== 0 || resolve(d.name) !== file) break;
				state.completed = { ms: d.details.duration_ms, passed: d.details.passed };
				break;
			}
		}
		if (state.completed && state.reported) yield finish(file, state);
	}
	// A file whose results never all came in (the run was cut short) is still written.
	for (const [file, state] of files) if (!state.done) yield finish(file, state);
	for (const name of failedFiles) yield `# FAIL ${name}\n`;
	yield* totals;
}
