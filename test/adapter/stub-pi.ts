/**
 * A stub of Pi's ExtensionAPI and context for hook unit tests: records handlers, tools and the active
 * tools, keeps an in-memory session (message and custom entries), and lets a test inject failures.
 */
import { dirname } from "node:path";
import { estimateTokens } from "@earendil-works/pi-coding-agent";
import { ENTRY_TYPE, ENTRY_VERSION } from "../../src/adapters/pi/fold/persistence.ts";
import contextFold from "../../src/adapters/pi/index.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

/** A tool as registered. */
export interface StubTool {
	name: string;
	description: string;
	/** False: registered inactive (Pi's `defaultActive`). */
	defaultActive?: boolean;
	execute: (
		id: string,
		params: unknown,
		signal?: unknown,
		onUpdate?: unknown,
		ctx?: unknown,
	) => Promise<{ content: { type: string; text: string }[]; isError?: boolean }>;
}

/** The fake dialog UI: records what the extension showed, answers selects from `answers`, draws custom views. */
export interface StubUi {
	notices: { message: string; level: string | undefined }[];
	selects: { title: string; options: string[] }[];
	/** Answers for the next selects, in order; an Error is thrown instead. Empty: undefined (dismissed). */
	answers: (string | Error | undefined)[];
	editorText: string;
	/** Each `ctx.ui.custom` view as first drawn, 100 columns wide, with a plain theme. */
	views: string[];
	/** The terminal's width custom views are drawn at (100 unless a test narrows it). */
	viewWidth: number;
	/** Keys pressed in the next custom views, one each, in order; none: the view is closed with Escape. */
	viewKeys: string[];
	/** Each custom view as drawn again after its key from `viewKeys` (none for a view closed with Escape). */
	viewsAfterKey: string[];
	/** The widgets shown above the editor, by key (`ctx.ui.setWidget` with lines; undefined removes one). */
	widgets: Map<string, string[]>;
}

/** The stub host. */
export interface StubPi {
	handlers: Map<string, Handler[]>;
	tools: Map<string, StubTool>;
	/**
	 * The active tools (those declared to the model), in order: every registered tool (with
	 * `toolsAsRegistered`, but those registered with `defaultActive: false`), until `pi.setActiveTools`
	 * replaces the list. A test may set it, e.g. to stand for Pi's built-in tools or another extension's.
	 */
	active: string[];
	/** Every list the extension passed to `pi.setActiveTools`, in order. */
	toolSets: string[][];
	entries: Record<string, unknown>[];
	settings: Record<string, unknown>;
	/** Set to make appendEntry throw. */
	failAppend: boolean;
	/** Set to make getBranch throw (restore failure). */
	failBranch: boolean;
	/** Context usage reported to the hook; null tokens means "unknown". */
	usage: { tokens: number | null; contextWindow: number } | undefined;
	window: number;
	/** The model's provider, id, API, compat, prices and cache lifetimes (undefined: a model with a window only). */
	model: StubModel | undefined;
	/** The run mode the context reports (default: print). */
	mode: "tui" | "rpc" | "json" | "print";
	/** Whether the context reports a dialog UI; undefined: any mode but print has one. */
	hasUI: boolean | undefined;
	/** What `ctx.isProjectTrusted()` answers (default false, as Pi headless without a trust decision). */
	projectTrusted: boolean;
	/** What `ctx.getSystemPrompt()` answers (default "You are a stub."). */
	systemPrompt: string;
	/** What `ctx.hasPendingMessages()` answers: a steering or follow-up message queued (default false). */
	pending: boolean;
	/** The providers of the models `ctx.modelRegistry.getAll()` lists; undefined: the context has no registry. */
	providers: string[] | undefined;
	/**
	 * The `env` of every provider's stored credential, as `ctx.modelRegistry.getProviderAuth` resolves
	 * it, a few milliseconds later (a file read); undefined: the registry reads no credential.
	 */
	providerEnv: Record<string, string> | undefined;
	/** What the fake UI recorded: notifications, select dialogs, the editor text. */
	ui: StubUi;
	stderr: string[];
	/** Adds a message entry to the session (as Pi persists it). */
	addMessage(message: Record<string, unknown>): void;
	/** Runs every handler of an event. */
	emit(name: string, event?: Record<string, unknown>): Promise<unknown[]>;
	/** Ends a message as Pi does: runs the `message_end` handlers, then stores it in the session. */
	endMessage(message: Record<string, unknown>): Promise<void>;
	/** Calls of `ctx.compact()` the extension made, with the options it passed. */
	compactions: CompactOptions[];
	/**
	 * How Pi answers the next `ctx.compact()` calls: undefined completes them (`onComplete`) with a
	 * compaction of ~12k tokens that context-fold built, an Error fails them (`onError`), "hold" leaves
	 * them running until the test calls an option itself.
	 */
	compactEnd: Error | "hold" | undefined;
	/** Appends a compaction entry: from then on requests carry its summary and the messages from `firstKeptEntryId` on. */
	compact(firstKeptEntryId: string, summary?: string): void;
	/** Runs the context hook on a structuredClone of the live messages (as Pi sends them); returns what would be sent. */
	request(): Promise<Record<string, unknown>[]>;
	/** Calls a registered tool and returns its text. */
	call(name: string, params: unknown): Promise<string>;
	/** Calls a registered tool and returns its text and whether it flagged an error result. */
	answer(name: string, params: unknown): Promise<{ text: string; isError: boolean }>;
	/** Runs a registered command headless; returns what it printed on stdout and stderr. */
	/** Runs a command: what it wrote, and the exit code it left pi (headless, a failed command's 1). */
	command(name: string, args: string): Promise<{ stdout: string; stderr: string; exitCode?: number }>;
	commands: Map<
		string,
		{
			description?: string;
			handler: (args: string, ctx: unknown) => Promise<void>;
			getArgumentCompletions?: (prefix: string) => unknown;
		}
	>;
	/** Footer statuses set through `ctx.ui.setStatus`, by key. */
	statuses: Map<string, string | undefined>;
	/** Notifications shown through `ctx.ui.notify`. */
	notes: { message: string; level?: string }[];
	/** Answers `ctx.ui.confirm` gives (true unless set). */
	confirmAnswer: boolean;
	/** Titles and messages `ctx.ui.confirm` was asked. */
	confirms: { title: string; message: string }[];
	/** An agent run in progress: `ctx.isIdle()` is false until it settles, and `ctx.waitForIdle()` waits for it. */
	busy: Promise<void> | undefined;
	/** Sessions a command started through `ctx.newSession`: the parent it named, and the custom messages its setup appended. */
	newSessions: {
		parentSession?: string;
		customMessages: { customType: string; content: unknown; details?: unknown }[];
	}[];
	/** Labels set through `pi.setLabel`, by entry id. */
	labels: Map<string, string | undefined>;
	/** Entry renderers registered, by customType. */
	entryRenderers: Map<string, (entry: unknown, options: unknown, theme: unknown) => unknown>;
	/** Tool renderer resolvers registered. */
	toolRenderers: ((toolName: string, next: () => unknown) => unknown)[];
}

/** The options of a `ctx.compact()` call. */
export interface CompactOptions {
	onComplete?: (result: { tokensBefore: number; details?: unknown }) => void;
	onError?: (error: Error) => void;
}

/** The fields of a Pi model the extension reads. */
export interface StubModel {
	provider: string;
	id: string;
	api?: string;
	compat?: Record<string, unknown>;
	cost?: Record<string, number>;
	promptCache?: { short?: number; long?: number };
	/** What the model takes as input (Pi's `input`): without "image", pi-ai sends each image as a placeholder. */
	input?: string[];
}

/**
 * Loads the extension into a fresh stub host (with `env` applied to process.env while loading and
 * running). `parentSession` is the header's; `seeded` starts the session with a /fold-handoff seed
 * message (no details), as a session seeded from that parent is (one without is a fork or a clone).
 * Without a `sessionDir`, a session with a parent file is in that file's folder, as a handoff's is.
 * Every tool is active from the start, as Pi's run has the fold tools by the request that first folds
 * (context-fold's look-ahead declares them before it, at events these tests mostly skip);
 * `toolsAsRegistered` keeps a tool registered inactive inactive, as Pi does, for the tests that drive
 * the look-ahead's events themselves (tool-loadout.test.ts).
 */
export function loadStub(
	options: {
		window?: number;
		sessionDir?: string;
		sessionFile?: string;
		parentSession?: unknown;
		seeded?: boolean;
		toolsAsRegistered?: boolean;
	} = {},
): StubPi {
	let counter = 0;
	/**
	 * An entry's id, its parent (the previous entry: the stub's session has one branch) and a
	 * timestamp, as Pi writes them: the message's own time, else one in 2023 (long cold by now).
	 */
	const entryHead = (at?: unknown) => ({
		id: `e${++counter}`,
		parentId: (stub.entries.at(-1)?.id as string | undefined) ?? null,
		timestamp: new Date(typeof at === "number" ? at : 1_700_000_000_000 + counter * 1000).toISOString(),
	});
	const stub: StubPi = {
		handlers: new Map(),
		tools: new Map(),
		active: [],
		toolSets: [],
		commands: new Map(),
		entries: options.seeded
			? [
					{
						type: "custom_message",
						id: "seed",
						parentId: null,
						timestamp: "2026-12-05T10:00:00.000Z",
						customType: "contextfold.handoff",
						content: "# context-fold handoff seed",
						display: true,
					},
				]
			: [],
		compactions: [],
		compactEnd: undefined,
		// Hook tests drive the fold mechanism through the ladder, whose thresholds are simple to reach;
		// a test of the default policy sets its own settings.
		settings: { "context-fold": { policy: "ladder" } },
		failAppend: false,
		failBranch: false,
		statuses: new Map(),
		notes: [],
		confirmAnswer: true,
		confirms: [],
		newSessions: [],
		busy: undefined,
		labels: new Map(),
		entryRenderers: new Map(),
		toolRenderers: [],
		usage: undefined,
		window: options.window ?? 10_000,
		model: undefined,
		mode: "print",
		hasUI: undefined,
		projectTrusted: false,
		systemPrompt: "You are a stub.",
		pending: false,
		providers: undefined,
		providerEnv: undefined,
		ui: {
			notices: [],
			selects: [],
			answers: [],
			editorText: "",
			views: [],
			viewWidth: 100,
			viewKeys: [],
			viewsAfterKey: [],
			widgets: new Map(),
		},
		stderr: [],
		addMessage(message) {
			stub.entries.push({ type: "message", ...entryHead(message.timestamp), message });
		},
		async emit(name, event = {}) {
			const results: unknown[] = [];
			for (const handler of stub.handlers.get(name) ?? [])
				results.push(await handler({ type: name, ...event }, ctx));
			return results;
		},
		async endMessage(message) {
			await stub.emit("message_end", { message });
			stub.addMessage(message);
		},
		compact(firstKeptEntryId, summary = "compacted") {
			stub.entries.push({ type: "compaction", ...entryHead(), summary, firstKeptEntryId, tokensBefore: 0 });
		},
		async request() {
			const event = { type: "context", messages: sent() };
			for (const handler of stub.handlers.get("context") ?? []) {
				const result = (await handler(event, ctx)) as { messages?: Record<string, unknown>[] } | undefined;
				if (result?.messages) event.messages = result.messages;
			}
			return event.messages;
		},
		async call(name, params) {
			return (await stub.answer(name, params)).text;
		},
		async answer(name, params) {
			const tool = stub.tools.get(name);
			if (!tool) throw new Error(`no tool ${name}`);
			// What a tool prints on stderr is heard as a handler's is.
			const result = await hearing(stub, () => tool.execute("call", params, undefined, undefined, ctx));
			return { text: result.content.map((c) => c.text).join("\n"), isError: result.isError === true };
		},
		async command(name, args) {
			const command = stub.commands.get(name);
			if (!command) throw new Error(`no command ${name}`);
			// What the command leaves as pi's exit code is the command's, not this test process's.
			const out: { stdout: string; stderr: string; exitCode?: number } = { stdout: "", stderr: "" };
			const exitCode = process.exitCode;
			process.exitCode = undefined;
			const write = process.stdout.write.bind(process.stdout);
			const writeErr = process.stderr.write.bind(process.stderr);
			process.stdout.write = ((chunk: string) => {
				out.stdout += String(chunk);
				return true;
			}) as typeof process.stdout.write;
			process.stderr.write = ((chunk: string) => {
				out.stderr += String(chunk);
				return true;
			}) as typeof process.stderr.write;
			try {
				await command.handler(args, ctx);
			} finally {
				process.stdout.write = write;
				process.stderr.write = writeErr;
				if (process.exitCode !== undefined) out.exitCode = Number(process.exitCode);
				process.exitCode = exitCode;
			}
			return out;
		},
	};
	const sessionManager = {
		getBranch: () => {
			if (stub.failBranch) throw new Error("branch unreadable");
			return [...stub.entries];
		},
		getEntries: () => [...stub.entries],
		buildSessionProjection: () => ({ messages: sent() }),
		getLeafId: () => (stub.entries.at(-1)?.id as string | undefined) ?? null,
		getLeafEntry: () => stub.entries.at(-1),
		getEntry: (id: string) => stub.entries.find((e) => e.id === id),
		getEntryCount: () => stub.entries.length,
		getSessionDir: () =>
			options.sessionDir ?? (typeof options.parentSession === "string" ? dirname(options.parentSession) : ""),
		getSessionId: () => "stub",
		getSessionFile: () => options.sessionFile,
		getHeader: () => (options.parentSession ? { parentSession: options.parentSession } : undefined),
	};
	/**
	 * The messages Pi would send next, before any `context` hook (its session projection): the live
	 * history, with the context size reported as the request's.
	 */
	const sent = (): Record<string, unknown>[] => {
		const messages = structuredClone(liveMessages(stub.entries));
		reportThroughLastResponse(messages, stub.usage?.tokens ?? estimateAll(messages));
		return messages;
	};
	const ctx = {
		sessionManager,
		get hasUI() {
			return stub.hasUI ?? stub.mode !== "print";
		},
		get mode() {
			return stub.mode;
		},
		isProjectTrusted: () => stub.projectTrusted,
		hasPendingMessages: () => stub.pending,
		get modelRegistry() {
			const { providers, providerEnv } = stub;
			if (!providers && !providerEnv) return undefined;
			return {
				...(providers
					? { getAll: () => providers.map((provider) => ({ provider, id: `${provider}-model` })) }
					: {}),
				...(providerEnv
					? {
							getProviderAuth: () =>
								new Promise((resolve) => setTimeout(() => resolve({ auth: {}, env: providerEnv }), 5)),
						}
					: {}),
			};
		},
		cwd: options.sessionDir ?? "/nonexistent-stub-cwd",
		getSystemPrompt: () => stub.systemPrompt,
		get model() {
			return { contextWindow: stub.window, ...stub.model };
		},
		getContextUsage: () => stub.usage,
		isIdle: () => stub.busy === undefined,
		async waitForIdle() {
			await stub.busy;
		},
		async newSession(options: { parentSession?: string; setup?: (sm: unknown) => Promise<void> } = {}) {
			const started: StubPi["newSessions"][number] = { parentSession: options.parentSession, customMessages: [] };
			stub.newSessions.push(started);
			await options.setup?.({
				appendCustomMessageEntry(customType: string, content: unknown, _display: boolean, details?: unknown) {
					started.customMessages.push({ customType, content, details });
				},
			});
			return { cancelled: false };
		},
		compact(options: CompactOptions = {}) {
			stub.compactions.push(options);
			// Pi runs the compaction after compact() returns and then calls one of the options.
			const end = stub.compactEnd;
			if (end === "hold") return;
			const built = { tokensBefore: 12_000, details: { contextFold: { v: 1, seq: 0, codes: ["a1"] } } };
			queueMicrotask(() => (end ? options.onError?.(end) : options.onComplete?.(built)));
		},
		ui: {
			notify(message: string, level?: string) {
				stub.notes.push({ message, level });
				stub.ui.notices.push({ message, level });
			},
			setStatus(key: string, text: string | undefined) {
				stub.statuses.set(key, text);
			},
			setWidget(key: string, lines: string[] | undefined) {
				if (lines === undefined) stub.ui.widgets.delete(key);
				else stub.ui.widgets.set(key, [...lines]);
			},
			async confirm(title: string, message: string) {
				stub.confirms.push({ title, message });
				return stub.confirmAnswer;
			},
			async select(title: string, options: string[]) {
				stub.ui.selects.push({ title, options });
				const answer = stub.ui.answers.shift();
				if (answer instanceof Error) throw answer;
				return answer;
			},
			async custom<T>(
				factory: (
					tui: unknown,
					theme: unknown,
					keys: unknown,
					done: (result: T) => void,
				) => { render(width: number): string[]; handleInput?(data: string): void },
			): Promise<T | undefined> {
				let result: T | undefined;
				const tui = { terminal: { rows: 60 }, requestRender() {} };
				const theme = { fg: (_color: string, text: string) => text, bold: (text: string) => text };
				const keys = { matches: (data: string, name: string) => data === "\x1b" && name === "tui.select.cancel" };
				const view = factory(tui, theme, keys, (r) => {
					result = r;
				});
				stub.ui.views.push(view.render(stub.ui.viewWidth).join("\n"));
				const key = stub.ui.viewKeys.shift();
				view.handleInput?.(key ?? "\x1b");
				if (key !== undefined) stub.ui.viewsAfterKey.push(view.render(stub.ui.viewWidth).join("\n"));
				return result;
			},
			setEditorText(text: string) {
				stub.ui.editorText = text;
			},
			getEditorText: () => stub.ui.editorText,
		},
	};
	const api = {
		on(name: string, handler: Handler) {
			const list = stub.handlers.get(name) ?? [];
			list.push(handler);
			stub.handlers.set(name, list);
			return () => {};
		},
		registerTool(tool: StubTool) {
			stub.tools.set(tool.name, tool);
			const active = tool.defaultActive !== false || options.toolsAsRegistered !== true;
			if (active && !stub.active.includes(tool.name)) stub.active.push(tool.name);
		},
		registerCommand(name: string, command: StubPi["commands"] extends Map<string, infer C> ? C : never) {
			stub.commands.set(name, command);
		},
		registerEntryRenderer(
			customType: string,
			renderer: (entry: unknown, options: unknown, theme: unknown) => unknown,
		) {
			stub.entryRenderers.set(customType, renderer);
		},
		registerToolRenderer(resolver: (toolName: string, next: () => unknown) => unknown) {
			stub.toolRenderers.push(resolver);
		},
		setLabel(entryId: string, label: string | undefined) {
			stub.labels.set(entryId, label);
		},
		getActiveTools: () => [...stub.active],
		setActiveTools(names: string[]) {
			stub.toolSets.push([...names]);
			stub.active = [...names];
		},
		getAllTools: () =>
			[...stub.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: {} })),
		appendEntry(customType: string, data: unknown) {
			if (stub.failAppend) throw new Error("disk full");
			stub.entries.push({ type: "custom", ...entryHead(), customType, data: structuredClone(data) });
		},
		getSettings: () => stub.settings,
	};
	hearing(stub, () => contextFold(api as never));
	const wrap = (name: string): void => {
		const list = stub.handlers.get(name) ?? [];
		stub.handlers.set(
			name,
			list.map((handler) => (event: unknown, c: unknown) => hearing(stub, () => handler(event, c))),
		);
	};
	for (const name of [...stub.handlers.keys()]) wrap(name);
	return stub;
}

/** Runs `body` with what it writes on stderr heard by `stub` (its `stderr`), awaited when it is async. */
function hearing<T>(stub: { stderr: string[] }, body: () => T): T {
	const saved = process.stderr.write.bind(process.stderr);
	process.stderr.write = ((chunk: string) => {
		stub.stderr.push(String(chunk));
		return true;
	}) as typeof process.stderr.write;
	const restore = () => {
		process.stderr.write = saved;
	};
	try {
		const result = body();
		if (result instanceof Promise) return result.finally(restore) as T;
		restore();
		return result;
	} catch (error) {
		restore();
		throw error;
	}
}

/** The messages Pi would send: after the latest compaction, its summary and the kept messages. */
export function liveMessages(entries: readonly Record<string, unknown>[]): Record<string, unknown>[] {
	let start = 0;
	let summary: Record<string, unknown> | undefined;
	entries.forEach((e, i) => {
		if (e.type !== "compaction") return;
		const kept = entries.findIndex((k) => k.id === e.firstKeptEntryId);
		start = kept < 0 ? i + 1 : kept;
		summary = { role: "compactionSummary", summary: e.summary, tokensBefore: 0, timestamp: 1 };
	});
	const kept = entries.slice(start).filter((e) => e.type === "message");
	return [...(summary ? [summary] : []), ...kept.map((e) => e.message as Record<string, unknown>)];
}

/**
 * Pi works the context size out from the last valid response's usage plus its estimate of every
 * later message, and so does the hook; the stub reports `usage.tokens` through that response (in
 * the request's copy) the way a real response of that size would; without one set, the size of the
 * whole request.
 */
function reportThroughLastResponse(messages: Record<string, unknown>[], tokens: number): void {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as { role?: unknown; usage?: Record<string, unknown>; stopReason?: unknown };
		if (m.role !== "assistant" || !m.usage || m.stopReason === "error" || m.stopReason === "aborted") continue;
		let trailing = 0;
		// A message Pi's estimator cannot read (a test's malformed one) adds nothing here.
		for (let j = i + 1; j < messages.length; j++) {
			try {
				trailing += estimateTokens(messages[j] as never);
			} catch {}
		}
		m.usage = { ...m.usage, totalTokens: Math.max(1, tokens - trailing) };
		return;
	}
}

/** Pi's estimate of a whole request, what the stub's responses report when the test sets no usage. */
function estimateAll(messages: Record<string, unknown>[]): number {
	let tokens = 0;
	for (const m of messages) tokens += estimateTokens(m as never);
	return tokens;
}

/** A context-fold session entry (`contextfold.fold`, this version) holding `data`, as the engine appends them. */
export function foldEntry(data: Record<string, unknown>): Record<string, unknown> {
	return { type: "custom", customType: ENTRY_TYPE, data: { v: ENTRY_VERSION, ...data } };
}

/** Line k of bash turn i: a planted error line at k = 7, the others ok. */
const checkLine = (i: number, k: number): string =>
	k === 7 ? `Error: check ${i} failed at step ${k}` : `line ${k} of check ${i} output ok`;

/**
 * Builds a session of `n` bash turns each returning `lines` lines: `line(i, k)` is line k of turn i
 * (by default a planted error line at k = 7, the others ok).
 */
export function bashSession(stub: StubPi, n: number, lines = 200, line = checkLine): void {
	const ts = 1_700_000_000_000;
	stub.addMessage({ role: "user", content: "run the checks", timestamp: ts });
	moreChecks(stub, 0, n, ts + 1, lines, line);
}

/**
 * Adds bash turns `from` to `from + n - 1` (call ids `call_<i>`, as bashSession's), the model's closing
 * reply and the user's next prompt, stamped from `ts` on; returns the next stamp.
 */
export function moreChecks(
	stub: StubPi,
	from: number,
	n: number,
	start: number,
	lines = 200,
	line = checkLine,
): number {
	let ts = start;
	for (let i = from; i < from + n; i++) {
		const id = `call_${i}`;
		stub.addMessage({
			role: "assistant",
			content: [{ type: "toolCall", id, name: "bash", arguments: { command: `check ${i}` } }],
			responseId: `resp_${i}`,
			usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
			stopReason: "toolUse",
			timestamp: ts++,
		});
		const body = Array.from({ length: lines }, (_, k) => line(i, k)).join("\n");
		stub.addMessage({
			role: "toolResult",
			toolCallId: id,
			toolName: "bash",
			content: [{ type: "text", text: body }],
			isError: false,
			timestamp: ts++,
		});
	}
	stub.addMessage({
		role: "assistant",
		content: [{ type: "text", text: "all checks ran" }],
		responseId: from === 0 ? "resp_final" : `resp_final_${from}`,
		usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
		stopReason: "stop",
		timestamp: ts++,
	});
	stub.addMessage({ role: "user", content: "thanks, next", timestamp: ts++ });
	return ts;
}

/** Text of every tool result in a request. */
export function resultTexts(messages: Record<string, unknown>[]): string[] {
	return messages
		.filter((m) => m.role === "toolResult")
		.map((m) => (m.content as { text?: string }[]).map((c) => c.text ?? "").join("\n"));
}

/** Appends a user prompt and a fake/fake-model reply completed at `at` (epoch ms) that reported `usage`. */
export function exchangeAt(stub: StubPi, at: number, usage: Record<string, number>): void {
	stub.addMessage({ role: "user", content: "hi", timestamp: at - 10 });
	stub.addMessage({
		role: "assistant",
		content: [{ type: "text", text: "hello" }],
		provider: "fake",
		model: "fake-model",
		usage,
		stopReason: "stop",
		timestamp: at,
	});
}

/** Runs `body` with the environment variable `name` set to `value`, or unset, and restores it after. */
export async function withEnvVar<T>(name: string, value: string | undefined, body: () => Promise<T>): Promise<T> {
	const previous = process.env[name];
	if (value === undefined) delete process.env[name];
	else process.env[name] = value;
	try {
		return await body();
	} finally {
		if (previous === undefined) delete process.env[name];
		else process.env[name] = previous;
	}
}

/** Runs `body` with PI_CACHE_RETENTION (Pi's cache retention tier) set to `value`, or unset, and restores it after. */
export function withRetention<T>(value: string | undefined, body: () => Promise<T>): Promise<T> {
	return withEnvVar("PI_CACHE_RETENTION", value, body);
}
