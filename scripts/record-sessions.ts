/**
 * Records the project's own Pi sessions into test/fixtures/sessions/<name>.jsonl
 * (`npm run record-sessions`, or `node scripts/record-sessions.ts [name...]` under Node >= 22.19).
 *
 * Each session is real Pi output: the pinned `pi` CLI runs in RPC mode (plain Pi: context-fold is
 * not loaded) in a sandbox under `<tmpdir>/pi-corpus/<name>/` (kept for inspection, replaced by the
 * next recording), against the scripted model server of the e2e harness on 127.0.0.1. The "model"
 * is a scripted agent (scripts/recording/agent.ts) that
 * answers each request with the next step of the story (scripts/recording/story-*.ts): thinking,
 * text, tool calls. Tools run for real in a generated project with a git history (bash, read, edit,
 * write, grep, find, ls), so outputs, errors, stack traces and warnings are what the commands really
 * print. The model is declared with a 200k window, image input and reasoning (thinking "medium"),
 * and Pi's own auto-compaction (reserve 16384) and summaries run against the same server. RPC has no
 * tree navigation, so a recording-only extension (scripts/recording/goto-extension.ts) provides
 * `/goto`, which calls the command context's `navigateTree` exactly as `/tree` does.
 *
 * After recording, the file is post-processed deterministically; nothing else is changed:
 * - Timestamps move onto a plausible clock starting at the story's start time (think time between
 *   turns, streaming time from the output size, the recorded duration of each tool call, scripted
 *   idle breaks). Entry `timestamp` and `message.timestamp` move together and keep their order;
 *   assistant `durationMs` matches the new streaming time; the header id's UUIDv7 time bits follow
 *   the header timestamp. The full mapping is in scripts/recording/timeline.ts. The model server's
 *   prompt cache is expired at every scripted break longer than 5 minutes, so the recorded cache
 *   usage agrees with the rewritten gaps.
 * - The absolute path of this repository's node_modules (it appears in the system prompt's docs
 *   paths) is replaced by `/usr/local/lib/node_modules`, as for a global install.
 *
 * Needs ripgrep (`rg`) and fd (`fd` or `fdfind`) on PATH for Pi's grep and find tools (Pi runs
 * offline and will not download them) and git. Takes a few minutes.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startModelServer } from "../test/e2e/harness/model-server.ts";
import { createPiSandbox, parseJsonl, REPO_ROOT } from "../test/e2e/harness/pi-runner.ts";
import { ScriptedAgent, type Task } from "./recording/agent.ts";
import type { EntryLike, PlayContext, SessionSpec } from "./recording/session.ts";
import { DEBUG_BRANCHY } from "./recording/story-debug.ts";
import { REFACTOR_LONG } from "./recording/story-refactor.ts";
import { type IdleGap, rewriteTimeline } from "./recording/timeline.ts";

const SESSIONS: SessionSpec[] = [REFACTOR_LONG, DEBUG_BRANCHY];
const OUT_DIR = join(REPO_ROOT, "test/fixtures/sessions");
const GOTO_EXTENSION = "scripts/recording/goto-extension.ts";
const TURN_TIMEOUT_MS = 180_000;

/** Ends the script with one line on stderr and exit code 2: a usage problem, not a crash. */
function refuse(message: string): never {
	process.stderr.write(`${message}\n`);
	process.exit(2);
}

function requireTools(): void {
	const has = (cmd: string) => {
		try {
			execFileSync(cmd, ["--version"], { stdio: "ignore" });
			return true;
		} catch {
			return false;
		}
	};
	const missing = [
		has("rg") ? "" : "ripgrep (rg)",
		has("fd") || has("fdfind") ? "" : "fd (fd or fdfind)",
		has("git") ? "" : "git",
	].filter(Boolean);
	if (missing.length > 0) refuse(`record-sessions needs ${missing.join(", ")} on PATH`);
}

/** Writes the project, links the repository's TypeScript for `tsc`, and commits its history. */
function createProject(cwd: string, spec: SessionSpec): void {
	const put = (files: Record<string, string | Uint8Array>) => {
		for (const [path, content] of Object.entries(files)) {
			mkdirSync(dirname(join(cwd, path)), { recursive: true });
			writeFileSync(join(cwd, path), content);
		}
	};
	put(spec.files());
	mkdirSync(join(cwd, "node_modules/.bin"), { recursive: true });
	mkdirSync(join(cwd, "node_modules/@types"), { recursive: true });
	symlinkSync(join(REPO_ROOT, "node_modules/typescript"), join(cwd, "node_modules/typescript"));
	symlinkSync(join(REPO_ROOT, "node_modules/@types/node"), join(cwd, "node_modules/@types/node"));
	symlinkSync("../typescript/bin/tsc", join(cwd, "node_modules/.bin/tsc"));
	const git = (args: string[], date?: string) =>
		execFileSync("git", args, {
			cwd,
			stdio: "ignore",
			env: {
				...process.env,
				...gitIdentity(),
				...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}),
			},
		});
	git(["init", "-q", "-b", "main"]);
	for (const commit of spec.history) {
		if (commit.files) put(commit.files);
		git(["add", "-A"]);
		git(["commit", "-q", "--allow-empty", "-m", commit.message], commit.date);
	}
}

function gitIdentity(): Record<string, string> {
	return {
		GIT_AUTHOR_NAME: "Dana Reyes",
		GIT_AUTHOR_EMAIL: "dana@example.com",
		GIT_COMMITTER_NAME: "Dana Reyes",
		GIT_COMMITTER_EMAIL: "dana@example.com",
		GIT_CONFIG_GLOBAL: "/dev/null",
		GIT_CONFIG_NOSYSTEM: "1",
	};
}

interface Figures {
	name: string;
	requests: number;
	summaries: number;
	messages: number;
	bytes: number;
	peakTokens: number;
}

async function record(spec: SessionSpec): Promise<Figures> {
	const root = join(tmpdir(), "pi-corpus", spec.name);
	rmSync(root, { recursive: true, force: true });
	mkdirSync(root, { recursive: true });
	const agent = new ScriptedAgent(spec.name, spec.goal);
	const server = await startModelServer((req) => agent.reply(req), { cacheMode: "any", chunkSize: 200 });
	const sandbox = await createPiSandbox({
		serverUrl: server.url,
		root,
		workDir: spec.project,
		provider: "scripted",
		modelId: "scripted-coder",
		contextWindow: 200_000,
		maxTokens: 32_000,
		modelExtra: {
			name: "Scripted coder (recording)",
			reasoning: true,
			input: ["text", "image"],
			cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
		},
		settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 } },
	});
	createProject(sandbox.cwd, spec);
	const rpc = await sandbox.startRpc({
		extensions: [GOTO_EXTENSION],
		args: ["--thinking", "medium", "--tools", "read,bash,edit,write,grep,find,ls"],
		timeoutMs: TURN_TIMEOUT_MS,
		env: {
			...gitIdentity(),
			GIT_AUTHOR_DATE: spec.start,
			GIT_COMMITTER_DATE: spec.start,
			npm_config_update_notifier: "false",
			npm_config_fund: "false",
			npm_config_audit: "false",
		},
	});
	const gaps: IdleGap[] = [];
	const failIfBroken = () => {
		if (server.errors.length > 0) throw server.errors[0];
	};
	const ctx: PlayContext = {
		cwd: sandbox.cwd,
		contextTokens: () => {
			const last = server.usages.findLast((u) => u !== undefined);
			return last ? last.promptTokens + last.output : 0;
		},
		run: async (task: Task) => {
			if (task.idleBefore !== undefined) {
				gaps.push({ prompt: task.prompt, seconds: task.idleBefore });
				if (task.idleBefore > 300) server.expireCache();
			}
			rpc.records.splice(0);
			agent.begin(task);
			if (task.abort) {
				const from = rpc.records.length;
				const response = await rpc.send({ type: "prompt", message: task.prompt });
				if (!response.success) throw new Error(`prompt rejected: ${response.error}`);
				await agent.stalled;
				await rpc.waitFor((r) => r.type === "message_update", { from: rpc.records.length });
				await new Promise((resolve) => setTimeout(resolve, 200));
				await rpc.call({ type: "abort" });
				await rpc.waitFor((r) => r.type === "agent_settled", { from });
			} else {
				await rpc.prompt(task.prompt, { timeoutMs: TURN_TIMEOUT_MS });
			}
			failIfBroken();
			agent.end();
			process.stderr.write(`  ${spec.name}: ${agent.requests} requests, ~${ctx.contextTokens()} tokens\n`);
		},
		userBash: async (command: string) => {
			await rpc.call({ type: "bash", command });
		},
		goto: async (pick: (entries: EntryLike[]) => string, summarize: boolean) => {
			const { entries } = await rpc.call<{ entries: EntryLike[] }>({ type: "get_entries" });
			const target = pick(entries);
			const response = await rpc.send({
				type: "prompt",
				message: `/goto ${target}${summarize ? " summarize" : ""}`,
			});
			if (!response.success) throw new Error(`goto failed: ${response.error}`);
			failIfBroken();
		},
	};
	try {
		await spec.play(ctx);
	} finally {
		const exit = await rpc.close();
		await server.close();
		if (exit.code !== 0) process.stderr.write(rpc.stderr());
	}
	const file = await sandbox.latestSessionFile();
	if (!file) throw new Error(`${spec.name}: pi wrote no session file`);
	const entries = parseJsonl(readFileSync(file, "utf8"));
	rewriteTimeline(entries, spec.start, gaps);
	const text = entries
		.map((e) => JSON.stringify(e))
		.join("\n")
		.replaceAll(`${REPO_ROOT}/node_modules/`, "/usr/local/lib/node_modules/");
	const out = join(OUT_DIR, `${spec.name}.jsonl`);
	writeFileSync(out, `${text}\n`);
	const messages = entries.filter((e) => e.type === "message");
	const peakTokens = Math.max(
		...messages.map((e) => Number((e.message as { usage?: { totalTokens?: number } }).usage?.totalTokens ?? 0)),
	);
	return {
		name: spec.name,
		requests: agent.requests,
		summaries: agent.summaries,
		messages: messages.length,
		bytes: Buffer.byteLength(text) + 1,
		peakTokens,
	};
}

requireTools();
const wanted = process.argv.slice(2);
const chosen = wanted.length > 0 ? SESSIONS.filter((s) => wanted.includes(s.name)) : SESSIONS;
if (chosen.length === 0)
	refuse(
		`record-sessions: unknown session(s): ${wanted.join(", ")} (known: ${SESSIONS.map((s) => s.name).join(", ")})`,
	);
mkdirSync(OUT_DIR, { recursive: true });
for (const spec of chosen) {
	process.stderr.write(`recording ${spec.name}...\n`);
	const f = await record(spec);
	process.stdout.write(
		`${f.name}: ${f.requests} model requests (${f.summaries} summaries), ${f.messages} messages, ${(f.bytes / 1024).toFixed(0)} KiB, peak ${f.peakTokens} tokens\n`,
	);
}
