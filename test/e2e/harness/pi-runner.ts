/**
 * Runs the pinned `pi` CLI (node_modules/@earendil-works/pi-coding-agent) in an isolated temp dir
 * against a scripted model server (see model-server.ts).
 *
 * Layout of a sandbox (all under one mkdtemp dir, or the given `root`, removed by `cleanup()`):
 *   agent/      PI_CODING_AGENT_DIR: models.json, settings.json
 *   sessions/   PI_CODING_AGENT_SESSION_DIR: session .jsonl files (flat)
 *   work/       cwd of pi (or the given `workDir` name), so the bash tool runs here
 *   tmp/        TMPDIR (bash full-output logs land here); tmp/jiti links to COMPILE_CACHE
 *   home/       HOME
 *
 * Pi is always started with `process.execPath` (the tests run under Node >= 22.19) and the bundle
 * `dist/bundle/cli.js`, with `--no-extensions` (plus no skills / templates / themes / context files /
 * MCP) so only the `-e` extensions passed by the test load; `packages: true` lets the packages
 * installed in the sandbox's agent dir (`pi install`) load instead.
 *
 * Pi compiles a TypeScript extension with jiti, which caches the output under `$TMPDIR/jiti`. A fresh
 * sandbox would compile the whole extension again (about 3 s of CPU, most of a short run), so every
 * sandbox shares one cache (COMPILE_CACHE): an entry is keyed by its file's path and checked against
 * a hash of its source, so an edited file is compiled afresh, never served stale.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");

/**
 * jiti's compile cache, shared by every sandbox's pi (see the header). It holds one entry per source
 * file of this checkout; a sandbox that loads installed packages (their paths differ every run)
 * keeps a cache of its own.
 */
export const COMPILE_CACHE = join(REPO_ROOT, "node_modules/.cache/context-fold-e2e/jiti");

/** The provider name a sandbox's models.json declares unless told otherwise. */
export const E2E_PROVIDER = "fake";

export type PiApi = "anthropic-messages" | "openai-completions" | "openai-responses" | "google-generative-ai";

export type JsonRecord = Record<string, unknown> & { type?: string };

export interface SandboxOptions {
	/** Server root URL (`ModelServer.url`); the `/v1` suffix for both OpenAI APIs (Gemini: `/v1beta`) is added here. */
	serverUrl: string;
	api?: PiApi;
	/** Provider id in models.json and on the CLI. Default "fake". */
	provider?: string;
	/** Model id. Default "fake-model". */
	modelId?: string;
	/** Default 16000. */
	contextWindow?: number;
	/** Default 1024. */
	maxTokens?: number;
	/**
	 * Deep-merged (plain objects) over the harness defaults (`DEFAULT_SETTINGS`, plus
	 * `compaction.reserveTokens = contextWindow / 4`) into settings.json.
	 */
	settings?: Record<string, unknown>;
	/** The provider's API key in models.json. Default "e2e-fake-key"; an `sk-ant-oat…` one makes Pi sign in as Claude Code does. */
	apiKey?: string;
	/** Extra fields merged into the model entry of models.json (e.g. `compat`). */
	modelExtra?: Record<string, unknown>;
	/** Use this directory as the sandbox root (created if missing) instead of a fresh temp dir. */
	root?: string;
	/** Name of pi's working directory under the root. Default "work". */
	workDir?: string;
	/** Share COMPILE_CACHE (default true); false for a sandbox whose packages (`pi install`) load from new paths. */
	sharedCompileCache?: boolean;
}

export interface RunOptions {
	/** Extension paths passed as `-e <path>` (resolved against the repo root). */
	extensions?: string[];
	/** Extra environment for pi (e.g. `{ CONTEXTFOLD: "0" }`); `undefined` values delete a variable. */
	env?: Record<string, string | undefined>;
	/** `--session <path|id>`: open (resume) this session. */
	session?: string;
	/** `--continue`: resume the most recent session in the sandbox session dir for this cwd. */
	continueSession?: boolean;
	/** `--no-session`: keep the session in memory only. */
	noSession?: boolean;
	/** `--session-dir <dir>` (default: the sandbox's `sessions/`, via PI_CODING_AGENT_SESSION_DIR). */
	sessionDir?: string;
	/** Extra CLI arguments appended before the prompt. */
	args?: string[];
	/**
	 * Load what the sandbox's settings.json declares (packages added by `pi install`): leaves out
	 * `--no-extensions`, so Pi's built-in extensions load too (MCP stays off).
	 */
	packages?: boolean;
	/** Hard timeout; the whole process group is SIGKILLed and the promise rejects. Default 30 s. */
	timeoutMs?: number;
}

export interface RunPrintOptions extends RunOptions {
	prompt: string;
	/** "text" (default): `pi -p`; "json": `pi --mode json` (stdout is JSONL events, see `events`). */
	mode?: "text" | "json";
}

export interface RunResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	durationMs: number;
	/** Parsed stdout records when `mode: "json"` (empty otherwise). */
	events: JsonRecord[];
}

export interface RpcResponse extends JsonRecord {
	type: "response";
	id?: string;
	command: string;
	success: boolean;
	data?: unknown;
	error?: string;
}

export interface PiRpc {
	proc: ChildProcess;
	/** Every stdout record in arrival order (responses, events, extension UI requests). */
	records: JsonRecord[];
	stderr(): string;
	/** Sends a command (an `id` is added if missing) and resolves with its response. Rejects on timeout. */
	send(command: JsonRecord, timeoutMs?: number): Promise<RpcResponse>;
	/** Sends and throws unless `success` is true; returns `data`. */
	call<T = unknown>(command: JsonRecord, timeoutMs?: number): Promise<T>;
	/**
	 * Resolves with the first record at position >= `from` (default 0) that matches. Rejects on timeout
	 * or process exit with the recent records and stderr in the message.
	 */
	waitFor(predicate: (r: JsonRecord) => boolean, opts?: { from?: number; timeoutMs?: number }): Promise<JsonRecord>;
	/**
	 * Sends `prompt` and waits for `agent_settled` (unless the disposition is "handled").
	 * `events` are the records that arrived from sending until settling.
	 */
	prompt(
		message: string,
		opts?: { timeoutMs?: number; extra?: JsonRecord },
	): Promise<{ response: RpcResponse; events: JsonRecord[] }>;
	/** Closes stdin (orderly shutdown), waits for exit; SIGKILLs the group after `timeoutMs` (default 10 s). */
	close(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface PiSandbox {
	root: string;
	agentDir: string;
	sessionDir: string;
	cwd: string;
	tmpDir: string;
	provider: string;
	modelId: string;
	api: PiApi;
	/**
	 * Environment pi runs with: the parent env minus PI_*, AI_AGENT, NODE_TEST_CONTEXT, NODE_OPTIONS and
	 * *_API_KEY; plus the isolation variables (PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR,
	 * PI_OFFLINE=1, PI_SKIP_VERSION_CHECK=1, PI_TELEMETRY=0, TMPDIR, HOME, PATH with this Node first);
	 * plus `extra`.
	 */
	env(extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;
	/**
	 * Full argv after `cli.js` for the given options (without the prompt); mode "tui" is the
	 * interactive terminal UI (no mode flag).
	 */
	args(opts: RunOptions & { mode?: "text" | "json" | "rpc" | "tui" }): string[];
	/** `pi -p <prompt>` (or `--mode json`); resolves when pi exits on its own. */
	runPrint(opts: RunPrintOptions): Promise<RunResult>;
	/** `pi <argv>` exactly as given (e.g. `["install", source]`); resolves when pi exits on its own. */
	runCommand(argv: string[], opts?: Pick<RunOptions, "env" | "timeoutMs">): Promise<RunResult>;
	/** `pi --mode rpc`. */
	startRpc(opts?: RunOptions): Promise<PiRpc>;
	/** Session files (.jsonl) under the session dir, oldest first by mtime. */
	sessionFiles(): Promise<string[]>;
	/** Most recently modified session file, or undefined. */
	latestSessionFile(): Promise<string | undefined>;
	/** Rewrites settings.json (harness defaults deep-merged with `settings`); affects later runs. */
	writeSettings(settings: Record<string, unknown>): Promise<void>;
	cleanup(): Promise<void>;
}

/** Polls a session file until it holds at least `count` entries of `type` (or time runs out); returns them. */
export async function waitForEntries(file: string, type: string, count = 1, timeoutMs = 10_000): Promise<JsonRecord[]> {
	const until = Date.now() + timeoutMs;
	for (;;) {
		const found = (await readSessionFile(file)).filter((e) => e.type === type);
		if (found.length >= count || Date.now() > until) return found;
		await new Promise((r) => setTimeout(r, 100));
	}
}

/**
 * Harness defaults for settings.json: deterministic and quiet. Tests of the fold mechanism drive it
 * through the ladder profile, whose thresholds a scripted session reaches simply; a test of the
 * default (working-set) policy or the economic one sets its `"context-fold": { policy }` itself.
 */
export const DEFAULT_SETTINGS: Record<string, unknown> = {
	"context-fold": { policy: "ladder" },
	defaultThinkingLevel: "off",
	cacheWarming: "off",
	retry: { enabled: false },
	quietStartup: true,
	enableInstallTelemetry: false,
	defaultProjectTrust: "never",
};

function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Recursively merges plain objects; arrays and other values from `over` replace those in `base`. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = { ...base };
	for (const [k, v] of Object.entries(over)) {
		out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
	}
	return out;
}

/** Parses strict JSONL (split on LF only, as Pi's docs require). Non-JSON lines are skipped. */
export function parseJsonl(text: string): JsonRecord[] {
	const out: JsonRecord[] = [];
	for (let line of text.split("\n")) {
		if (line.endsWith("\r")) line = line.slice(0, -1);
		if (!line.trim()) continue;
		try {
			out.push(JSON.parse(line) as JsonRecord);
		} catch {
			// not a record
		}
	}
	return out;
}

/** Reads a session .jsonl file (header first, then entries). */
export async function readSessionFile(file: string): Promise<JsonRecord[]> {
	return parseJsonl(await readFile(file, "utf8"));
}

function tail(s: string, n = 2000): string {
	return s.length > n ? `…${s.slice(-n)}` : s;
}

function killGroup(proc: ChildProcess): void {
	if (proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
	try {
		process.kill(-proc.pid, "SIGKILL");
	} catch {
		try {
			proc.kill("SIGKILL");
		} catch {
			// already gone
		}
	}
}

export async function createPiSandbox(options: SandboxOptions): Promise<PiSandbox> {
	const api = options.api ?? "anthropic-messages";
	const provider = options.provider ?? E2E_PROVIDER;
	const modelId = options.modelId ?? "fake-model";
	const contextWindow = options.contextWindow ?? 16000;
	const root = options.root ?? (await mkdtemp(join(tmpdir(), "cf-e2e-")));
	const agentDir = join(root, "agent");
	const sessionDir = join(root, "sessions");
	const cwd = join(root, options.workDir ?? "work");
	const tmpDir = join(root, "tmp");
	const homeDir = join(root, "home");
	await Promise.all([agentDir, sessionDir, cwd, tmpDir, homeDir].map((d) => mkdir(d, { recursive: true })));
	if (options.sharedCompileCache !== false) {
		await mkdir(COMPILE_CACHE, { recursive: true });
		// A reused `root` may hold the link already.
		await symlink(COMPILE_CACHE, join(tmpDir, "jiti")).catch((error: NodeJS.ErrnoException) => {
			if (error.code !== "EEXIST") throw error;
		});
	}

	const baseUrl =
		api === "anthropic-messages"
			? options.serverUrl
			: `${options.serverUrl}${api === "google-generative-ai" ? "/v1beta" : "/v1"}`;
	const models = {
		providers: {
			[provider]: {
				name: "E2E fake provider",
				baseUrl,
				api,
				apiKey: options.apiKey ?? "e2e-fake-key",
				models: [
					{
						id: modelId,
						name: "E2E Fake Model",
						reasoning: false,
						input: ["text"],
						contextWindow,
						maxTokens: options.maxTokens ?? 1024,
						cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
						...options.modelExtra,
					},
				],
			},
		},
	};
	await writeFile(join(agentDir, "models.json"), JSON.stringify(models, null, 2));

	const writeSettings = async (settings: Record<string, unknown>) => {
		// Pi's default compaction.reserveTokens (16384) exceeds a small test context window, which would
		// make the auto-compaction threshold (contextWindow - reserveTokens) negative: compaction after
		// every turn. Scale it to the window unless the caller sets it.
		const defaults = deepMerge(DEFAULT_SETTINGS, {
			defaultProvider: provider,
			defaultModel: modelId,
			compaction: { reserveTokens: Math.floor(contextWindow / 4) },
		});
		const merged = deepMerge(defaults, settings);
		await writeFile(join(agentDir, "settings.json"), JSON.stringify(merged, null, 2));
	};
	await writeSettings(options.settings ?? {});

	const env = (extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv => {
		const out: NodeJS.ProcessEnv = {};
		for (const [k, v] of Object.entries(process.env)) {
			// Never inherit a surrounding Pi session's variables, node:test's child marker, or real keys.
			if (k.startsWith("PI_") || k === "AI_AGENT" || k === "NODE_TEST_CONTEXT" || k === "NODE_OPTIONS") continue;
			if (/_API_KEY$/.test(k)) continue;
			out[k] = v;
		}
		Object.assign(out, {
			PI_CODING_AGENT_DIR: agentDir,
			PI_CODING_AGENT_SESSION_DIR: sessionDir,
			PI_OFFLINE: "1",
			PI_SKIP_VERSION_CHECK: "1",
			PI_TELEMETRY: "0",
			TMPDIR: tmpDir,
			HOME: homeDir,
			// bash tool commands may call `node`: make it the same Node as pi's.
			PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
		});
		for (const [k, v] of Object.entries(extra)) {
			if (v === undefined) delete out[k];
			else out[k] = v;
		}
		return out;
	};

	const args = (opts: RunOptions & { mode?: "text" | "json" | "rpc" | "tui" }): string[] => {
		const a: string[] = [];
		if (opts.mode === "rpc") a.push("--mode", "rpc");
		else if (opts.mode === "json") a.push("--mode", "json");
		else if (opts.mode !== "tui") a.push("--print");
		a.push("--provider", provider, "--model", modelId, "--thinking", "off");
		if (!opts.packages) a.push("--no-extensions");
		a.push("--no-skills", "--no-prompt-templates", "--no-themes", "--no-context-files");
		a.push("--no-mcp", "--offline");
		for (const ext of opts.extensions ?? []) a.push("-e", resolve(REPO_ROOT, ext));
		if (opts.session) a.push("--session", opts.session);
		if (opts.continueSession) a.push("--continue");
		if (opts.noSession) a.push("--no-session");
		if (opts.sessionDir) a.push("--session-dir", opts.sessionDir);
		a.push(...(opts.args ?? []));
		return a;
	};

	const spawnPi = (argv: string[], extraEnv?: Record<string, string | undefined>): ChildProcess => {
		const proc = spawn(process.execPath, [PI_CLI, ...argv], {
			cwd,
			env: env(extraEnv),
			stdio: ["pipe", "pipe", "pipe"],
			// Own process group, so a timeout can kill pi and the bash tool's children together.
			detached: true,
		});
		// A detached child survives its parent: make sure a crashing/aborted test run takes it down.
		const onExit = () => killGroup(proc);
		process.once("exit", onExit);
		proc.once("close", () => process.off("exit", onExit));
		return proc;
	};

	/** Spawns pi with `argv`, collects its output, resolves on exit; kills it after the timeout. */
	const runToExit = (
		argv: string[],
		opts: Pick<RunPrintOptions, "env" | "timeoutMs" | "mode">,
		label: string,
	): Promise<RunResult> => {
		const timeoutMs = opts.timeoutMs ?? 30_000;
		const started = Date.now();
		const proc = spawnPi(argv, opts.env);
		proc.stdin?.end();
		let stdout = "";
		let stderr = "";
		proc.stdout?.setEncoding("utf8").on("data", (d: string) => {
			stdout += d;
		});
		proc.stderr?.setEncoding("utf8").on("data", (d: string) => {
			stderr += d;
		});
		return new Promise<RunResult>((resolvePromise, reject) => {
			const timer = setTimeout(() => {
				killGroup(proc);
				reject(
					new Error(
						`pi ${label} did not exit within ${timeoutMs} ms (killed).\n` +
							`argv: ${argv.join(" ")}\n--- stdout ---\n${tail(stdout)}\n--- stderr ---\n${tail(stderr)}`,
					),
				);
			}, timeoutMs);
			proc.on("error", (err) => {
				clearTimeout(timer);
				reject(err);
			});
			proc.on("close", (code, signal) => {
				clearTimeout(timer);
				resolvePromise({
					code,
					signal,
					stdout,
					stderr,
					durationMs: Date.now() - started,
					events: opts.mode === "json" ? parseJsonl(stdout) : [],
				});
			});
		});
	};

	const runPrint = (opts: RunPrintOptions): Promise<RunResult> =>
		runToExit([...args(opts), "--", opts.prompt], opts, opts.mode === "json" ? "--mode json" : "-p");

	const runCommand = (argv: string[], opts: Pick<RunOptions, "env" | "timeoutMs"> = {}): Promise<RunResult> =>
		runToExit(argv, { ...opts, mode: "text" }, argv[0] ?? "");

	const startRpc = async (opts: RunOptions = {}): Promise<PiRpc> => {
		const defaultTimeout = opts.timeoutMs ?? 30_000;
		const proc = spawnPi(args({ ...opts, mode: "rpc" }), opts.env);
		const records: JsonRecord[] = [];
		const waiters = new Set<() => void>();
		let stderr = "";
		let exited = false;
		let exitInfo: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
		const notify = () => {
			for (const w of [...waiters]) w();
		};
		const decoder = new StringDecoder("utf8");
		let buffer = "";
		proc.stdout?.on("data", (chunk: Buffer) => {
			buffer += decoder.write(chunk);
			let nl = buffer.indexOf("\n");
			while (nl >= 0) {
				let line = buffer.slice(0, nl);
				buffer = buffer.slice(nl + 1);
				if (line.endsWith("\r")) line = line.slice(0, -1);
				if (line.trim()) {
					try {
						records.push(JSON.parse(line) as JsonRecord);
					} catch {
						records.push({ type: "__unparsed_stdout__", line });
					}
				}
				nl = buffer.indexOf("\n");
			}
			notify();
		});
		proc.stderr?.setEncoding("utf8").on("data", (d: string) => {
			stderr += d;
		});
		const exitPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
			proc.on("close", (code, signal) => {
				exited = true;
				exitInfo = { code, signal };
				notify();
				res(exitInfo);
			});
		});
		proc.on("error", (err) => {
			stderr += `\n[spawn error] ${err.message}`;
		});

		const describe = () =>
			`recent records: ${records
				.slice(-15)
				.map((r) => r.type + (r.type === "response" ? `:${String(r.command)}` : ""))
				.join(", ")}\n--- stderr ---\n${tail(stderr)}`;

		const waitFor: PiRpc["waitFor"] = (predicate, o = {}) => {
			const timeoutMs = o.timeoutMs ?? defaultTimeout;
			let cursor = o.from ?? 0;
			return new Promise<JsonRecord>((resolvePromise, reject) => {
				const check = () => {
					for (; cursor < records.length; cursor++) {
						if (predicate(records[cursor])) {
							done();
							resolvePromise(records[cursor]);
							return;
						}
					}
					if (exited) {
						done();
						reject(
							new Error(
								`pi rpc exited (code ${exitInfo.code}, signal ${exitInfo.signal}) while waiting.\n${describe()}`,
							),
						);
					}
				};
				const timer = setTimeout(() => {
					done();
					reject(new Error(`pi rpc: timed out after ${timeoutMs} ms waiting for a record.\n${describe()}`));
				}, timeoutMs);
				const done = () => {
					clearTimeout(timer);
					waiters.delete(check);
				};
				waiters.add(check);
				check();
			});
		};

		let idCounter = 0;
		const send: PiRpc["send"] = async (command, timeoutMs) => {
			const id = typeof command.id === "string" ? command.id : `e2e-${++idCounter}`;
			const from = records.length;
			proc.stdin?.write(`${JSON.stringify({ ...command, id })}\n`);
			return (await waitFor((r) => r.type === "response" && r.id === id, { from, timeoutMs })) as RpcResponse;
		};

		const call = async <T = unknown>(command: JsonRecord, timeoutMs?: number): Promise<T> => {
			const r = await send(command, timeoutMs);
			if (!r.success) throw new Error(`pi rpc ${String(command.type)} failed: ${r.error ?? JSON.stringify(r)}`);
			return r.data as T;
		};

		const prompt: PiRpc["prompt"] = async (message, o = {}) => {
			const from = records.length;
			const response = await send({ type: "prompt", message, ...o.extra }, o.timeoutMs);
			if (!response.success) throw new Error(`pi rpc prompt rejected: ${response.error}`);
			const disposition = (response.data as { disposition?: string } | undefined)?.disposition;
			if (disposition !== "handled") {
				await waitFor((r) => r.type === "agent_settled", { from, timeoutMs: o.timeoutMs });
			}
			return { response, events: records.slice(from) };
		};

		const close: PiRpc["close"] = async (timeoutMs = 10_000) => {
			if (exited) return exitInfo;
			proc.stdin?.end();
			const timer = setTimeout(() => killGroup(proc), timeoutMs);
			const info = await exitPromise;
			clearTimeout(timer);
			return info;
		};

		return { proc, records, stderr: () => stderr, send, call, waitFor, prompt, close };
	};

	const sessionFiles = async (): Promise<string[]> => {
		const found: { file: string; mtime: number }[] = [];
		const walk = async (dir: string) => {
			if (!existsSync(dir)) return;
			for (const ent of await readdir(dir, { withFileTypes: true })) {
				const p = join(dir, ent.name);
				if (ent.isDirectory()) {
					if (ent.name !== "context-fold") await walk(p);
				} else if (ent.name.endsWith(".jsonl")) found.push({ file: p, mtime: (await stat(p)).mtimeMs });
			}
		};
		await walk(sessionDir);
		return found.sort((a, b) => a.mtime - b.mtime).map((f) => f.file);
	};

	return {
		root,
		agentDir,
		sessionDir,
		cwd,
		tmpDir,
		provider,
		modelId,
		api,
		env,
		args,
		runPrint,
		runCommand,
		startRpc,
		sessionFiles,
		latestSessionFile: async () => (await sessionFiles()).at(-1),
		writeSettings,
		// A pi just killed under tmux may still be writing its compile cache: retry while the tree empties.
		cleanup: () => rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
	};
}
