/**
 * Summary-quality evaluation: replays a recorded Pi session through the adapter (stub host), forces
 * several compactions the way Pi prepares them, and measures how many facts that left live history
 * can still be found, either verbatim in the latest compaction summary or through
 * `recall_folded search=`. Facts are planted deterministically (in memory; the session files are
 * never touched) and harvested from the session itself. The replay feeds the whole conversation of
 * the session's active branch (a compaction recorded in the file is ignored: the evaluation makes
 * its own). Everything here is deterministic: the same session gives the same figures.
 */
import { createHash } from "node:crypto";
import { isModelReply, linearize, type MessageLike, renderContent } from "../../src/core/block.ts";
import { identifiersIn } from "../../src/core/index/extract.ts";
import { riskLines } from "../../src/core/policy/risk-lexicon.ts";
import { firstLine } from "../../src/core/tokens.ts";
import { loadStub, type StubPi } from "../adapter/stub-pi.ts";
import type { Session } from "../corpus/corpora.ts";

/** Where the session is compacted: each value is the share of the session fed before that compaction. */
export const CHECKPOINTS = [0.25, 0.5, 0.75, 1] as const;

/**
 * What a fact is. `identifier` is an exact identifier (hex hash, UUID, version, 6+ digit number);
 * `symbol` a code symbol (camelCase, PascalCase with an inner capital, snake_case, dotted path).
 * Planted identifiers mix both and are all filed as `identifier`.
 */
export type Category = "error" | "path" | "identifier" | "symbol" | "intent";

/** Planted facts were inserted by plantFacts; natural facts were harvested from the session. */
export type Origin = "planted" | "natural";

/** Row labels of the report, in order. */
export const ROWS: readonly { origin: Origin; category: Category; label: string }[] = [
	{ origin: "planted", category: "error", label: "planted error lines" },
	{ origin: "planted", category: "path", label: "planted file paths" },
	{ origin: "planted", category: "identifier", label: "planted identifiers" },
	{ origin: "planted", category: "intent", label: "planted user constraints" },
	{ origin: "natural", category: "error", label: "error lines" },
	{ origin: "natural", category: "path", label: "file paths" },
	{ origin: "natural", category: "identifier", label: "exact identifiers" },
	{ origin: "natural", category: "symbol", label: "code symbols" },
	{ origin: "natural", category: "intent", label: "user intents" },
];

/** One fact to look for after compaction. */
export interface Fact {
	origin: Origin;
	category: Category;
	/** The fact verbatim. */
	text: string;
	/** What is looked for: the fact, or its first KEY_CHARS characters when it is longer. */
	key: string;
	/** Index (in the planted session) of the first message holding it: it leaves history with that message. */
	at: number;
	/** Where it was found: the message role, or the tool whose call or result holds it. */
	source: string;
}

/** Longest search key; longer facts are looked for by their head (recall_folded caps patterns at 500). */
export const KEY_CHARS = 200;

/** How many facts of each planted kind go into a session. */
export const PLANT_COUNT = { error: 12, path: 12, identifier: 12, intent: 8 } as const;

/** At most this many natural code symbols are checked per session (an even, deterministic sample). */
export const SYMBOL_SAMPLE = 160;

/** Exact identifiers as the seed index classes them: UUID, version, hex hash with a digit and a letter, 6+ digits. */
const EXACT =
	/^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}|\d{6,})$/;

/** Tools whose successful output is file content or a listing (their lines are not error reports). */
const CONTENT_TOOLS = new Set(["read", "grep", "find", "ls"]);

/** Tools whose path argument is a file fact. */
const FILE_TOOLS = new Set(["read", "write", "edit"]);

function keyOf(text: string): string {
	return text.length <= KEY_CHARS ? text : text.slice(0, KEY_CHARS);
}

function fact(origin: Origin, category: Category, text: string, at: number, source: string): Fact {
	return { origin, category, text, key: keyOf(text), at, source };
}

/** `n` distinct indices spread evenly over `0..length-1`: one per equal stride, `offset` (0..1) into it. */
function spread(length: number, n: number, offset = 0.5): number[] {
	if (length === 0) return [];
	const out: number[] = [];
	for (let k = 0; k < n; k++) {
		const i = Math.min(length - 1, Math.floor(((k + offset) * length) / n));
		if (!out.includes(i)) out.push(i);
	}
	return out;
}

function hex(seed: string, chars: number): string {
	return createHash("sha256").update(seed).digest("hex").slice(0, chars);
}

const MODULES = ["billing", "auth", "scheduler", "renderer", "importer", "gateway"];
const NAMES = ["Ledger", "Invoice", "Cursor", "Widget", "Session", "Bridge"];
const CONSTRAINTS = [
	(n: number) => `Constraint: never touch the vendor/ folder (planted-${n})`,
	(n: number) =>
		`Constraint: keep the public API of the ${MODULES[n % MODULES.length]} module unchanged (planted-${n})`,
	(n: number) => `Constraint: do not add new dependencies to package.json (planted-${n})`,
	(n: number) => `Constraint: every new test must run offline, no network (planted-${n})`,
];

function textOf(message: MessageLike): string {
	return renderContent(message.content).text;
}

/** Inserts `line` in the middle of the first text part of a tool result (in place). */
function insertLine(message: MessageLike, line: string): void {
	const parts = Array.isArray(message.content) ? (message.content as { type?: string; text?: string }[]) : [];
	const part = parts.find((p) => p?.type === "text" && typeof p.text === "string");
	if (!part || typeof part.text !== "string") {
		message.content = [{ type: "text", text: line }, ...parts];
		return;
	}
	const lines = part.text.split("\n");
	lines.splice(Math.floor(lines.length / 2), 0, line);
	part.text = lines.join("\n");
}

function stampOf(message: MessageLike | undefined): number {
	return typeof message?.timestamp === "number" ? message.timestamp : 1_700_000_000_000;
}

/** A session with planted facts, and the facts planted (`at` indexes the returned messages). */
export interface PlantedSession {
	messages: MessageLike[];
	planted: Fact[];
}

/**
 * Plants facts into a deep copy of `original`, spread evenly over the session: error lines and
 * identifiers (a short git sha, a version, a camelCase symbol) inside bash results; file paths as
 * inserted `read` / `edit` calls with results (an edit result names its path, as Pi's does; a read
 * result does not); user constraints as inserted user messages (each answered by a short assistant
 * text) at turn boundaries. Every planted text contains "planted".
 */
export function plantFacts(original: readonly MessageLike[]): PlantedSession {
	const messages = structuredClone(original) as MessageLike[];
	const bash = messages
		.map((m, i) => ({ m, i }))
		.filter(({ m }) => m.role === "toolResult" && m.toolName === "bash" && textOf(m).length > 0)
		.map(({ i }) => i);
	const errorAt = spread(bash.length, PLANT_COUNT.error, 0.3).map((k) => bash[k]);
	const identAt = spread(bash.length, PLANT_COUNT.identifier, 0.7).map((k) => bash[k]);
	const inline: { at: number; category: Category; text: string; line: string }[] = [];
	errorAt.forEach((at, n) => {
		const text = `Error: planted-fault-${n} in module ${MODULES[n % MODULES.length]}`;
		inline.push({ at, category: "error", text, line: text });
	});
	identAt.forEach((at, n) => {
		const kind = n % 3;
		const text =
			kind === 0
				? hex(`planted-sha-${n}`, 12)
				: kind === 1
					? `v${3 + n}.${(n * 7) % 20}.${(n * 13) % 50}-planted.${n}`
					: `planted${NAMES[n % NAMES.length]}Resolver${n}`;
		const line =
			kind === 0
				? `HEAD is now at ${text} planted fixture commit`
				: kind === 1
					? `resolved planted-sdk@${text}`
					: `export function ${text}(input) { return input; }`;
		inline.push({ at, category: "identifier", text, line });
	});
	for (const p of inline) insertLine(messages[p.at], p.line);

	// Insertions before original indices: synthetic tool calls mid-turn, constraints at turn starts.
	type Insertion = { messages: MessageLike[]; category: Category; text: string; source: string };
	const before = new Map<number, Insertion[]>();
	const add = (i: number, insertion: Insertion): void => {
		before.set(i, [...(before.get(i) ?? []), insertion]);
	};
	const midTurn = messages
		.map((m, i) => ({ m, i }))
		.filter(({ m, i }) => i > 0 && m.role === "assistant" && messages[i - 1].role === "toolResult")
		.map(({ i }) => i);
	spread(midTurn.length, PLANT_COUNT.path).forEach((k, n) => {
		const i = midTurn[k];
		const ts = stampOf(messages[i - 1]) + 0.25;
		const name = NAMES[n % NAMES.length];
		const path = `services/planted-${n}/src/${MODULES[n % MODULES.length]}/${name.toLowerCase()}-store.ts`;
		const edit = n % 2 === 1;
		const id = `planted_call_${n}`;
		const args = edit ? { path, oldText: `const limit = ${n};`, newText: `const limit = ${n + 1};` } : { path };
		const result = edit
			? `Successfully replaced text in ${path}. Changed ${14 + String(n).length} characters to ${14 + String(n + 1).length} characters.`
			: Array.from({ length: 30 }, (_, l) => `${l + 1}\tconst field${l} = compute(${l}, ${n});`).join("\n");
		add(i, {
			category: "path",
			text: path,
			source: edit ? "edit" : "read",
			messages: [
				{
					role: "assistant",
					content: [{ type: "toolCall", id, name: edit ? "edit" : "read", arguments: args }],
					responseId: `planted_resp_${n}`,
					usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
					stopReason: "toolUse",
					timestamp: ts,
				},
				{
					role: "toolResult",
					toolCallId: id,
					toolName: edit ? "edit" : "read",
					content: [{ type: "text", text: result }],
					isError: false,
					timestamp: ts + 0.01,
				},
			],
		});
	});
	const turnStarts = messages
		.map((m, i) => ({ m, i }))
		.filter(({ m, i }) => i > 0 && m.role === "user")
		.map(({ i }) => i);
	spread(turnStarts.length, PLANT_COUNT.intent).forEach((k, n) => {
		const i = turnStarts[k];
		const ts = stampOf(messages[i - 1]) + 0.5;
		const text = CONSTRAINTS[n % CONSTRAINTS.length](n);
		add(i, {
			category: "intent",
			text,
			source: "user",
			messages: [
				{ role: "user", content: [{ type: "text", text }], timestamp: ts },
				{
					role: "assistant",
					content: [{ type: "text", text: "Understood." }],
					responseId: `planted_ack_${n}`,
					usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
					stopReason: "stop",
					timestamp: ts + 0.01,
				},
			],
		});
	});

	const out: MessageLike[] = [];
	const planted: Fact[] = [];
	const inlineAt = new Map<number, typeof inline>();
	for (const p of inline) inlineAt.set(p.at, [...(inlineAt.get(p.at) ?? []), p]);
	for (let i = 0; i < messages.length; i++) {
		for (const insertion of before.get(i) ?? []) {
			planted.push(fact("planted", insertion.category, insertion.text, out.length, insertion.source));
			out.push(...insertion.messages);
		}
		for (const p of inlineAt.get(i) ?? []) planted.push(fact("planted", p.category, p.text, out.length, "bash"));
		out.push(messages[i]);
	}
	return { messages: out, planted };
}

function toolCalls(message: MessageLike): { id?: string; name?: string; arguments?: Record<string, unknown> }[] {
	if (message.role !== "assistant" || !Array.isArray(message.content)) return [];
	return (
		message.content as { type?: string; id?: string; name?: string; arguments?: Record<string, unknown> }[]
	).filter((p) => p?.type === "toolCall");
}

function stringLeaves(value: unknown, out: string[] = []): string[] {
	if (typeof value === "string") out.push(value);
	else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out);
	else if (value && typeof value === "object") for (const v of Object.values(value)) stringLeaves(v, out);
	return out;
}

/** The texts of a message facts are mined from, each with its source label. */
function textsOf(message: MessageLike): { text: string; source: string }[] {
	if (message.role === "toolResult") return [{ text: textOf(message), source: String(message.toolName ?? "tool") }];
	if (message.role === "user") return [{ text: textOf(message), source: "user" }];
	if (message.role !== "assistant" || !Array.isArray(message.content)) return [];
	const out: { text: string; source: string }[] = [];
	for (const part of message.content as Record<string, unknown>[]) {
		if (part?.type === "text" && typeof part.text === "string")
			out.push({ text: part.text, source: "assistant text" });
		if (part?.type === "thinking" && typeof part.thinking === "string") {
			out.push({ text: part.thinking, source: "thinking" });
		}
		if (part?.type === "toolCall") {
			for (const leaf of stringLeaves(part.arguments)) out.push({ text: leaf, source: `${String(part.name)} args` });
		}
	}
	return out;
}

/**
 * Harvests the session's own facts (planted text excluded), each deduplicated by text at its first
 * occurrence: file paths exactly as read/write/edit calls received them; error lines (non-frame risk
 * lines) of tool results that report an outcome (any result flagged isError, and every tool but the
 * content tools read/grep/find/ls, whose lines are file text); identifiers of every message (user,
 * assistant text, thinking, tool-call arguments, tool results) as the seed index finds them, every
 * exact one and an even sample of SYMBOL_SAMPLE code symbols; and the first line of every user
 * message. A reply that failed or was aborted gives none: no request carries it.
 */
export function harvestFacts(messages: readonly MessageLike[]): Fact[] {
	const seen = new Map<string, Fact>();
	const symbols: Fact[] = [];
	const put = (f: Fact): void => {
		if (f.text.includes("planted")) return;
		const id = `${f.category}\u0000${f.text}`;
		if (seen.has(id)) return;
		seen.set(id, f);
		if (f.category === "symbol") symbols.push(f);
	};
	messages.forEach((message, at) => {
		// A reply that failed or was aborted is in no request (pi-ai drops it): its facts never reached the model.
		if (message.role === "assistant" && !isModelReply(message)) return;
		for (const call of toolCalls(message)) {
			const args = call.arguments ?? {};
			const path =
				typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : "";
			if (FILE_TOOLS.has(call.name ?? "") && path) put(fact("natural", "path", path, at, call.name ?? "tool"));
		}
		if (message.role === "toolResult") {
			const tool = String(message.toolName ?? "tool");
			if (message.isError === true || !CONTENT_TOOLS.has(tool)) {
				for (const risk of riskLines(textOf(message))) {
					if (!risk.frame) put(fact("natural", "error", risk.text, at, tool));
				}
			}
		}
		if (message.role === "user") {
			const line = firstLine(textOf(message));
			if (line) put(fact("natural", "intent", line, at, "user"));
		}
		for (const { text, source } of textsOf(message)) {
			for (const id of identifiersIn(text)) {
				put(fact("natural", EXACT.test(id) ? "identifier" : "symbol", id, at, source));
			}
		}
	});
	const keep = new Set(spread(symbols.length, Math.min(SYMBOL_SAMPLE, symbols.length)).map((k) => symbols[k]));
	return [...seen.values()].filter((f) => f.category !== "symbol" || keep.has(f));
}

/** Facts that occur nowhere in a session (one per category): the measurement must not find them. */
export const CONTROLS: readonly Fact[] = [
	fact("planted", "error", "Error: planted-absent-fault in module nowhere", 0, "control"),
	fact("planted", "path", "services/planted-absent/src/ghost-store.ts", 0, "control"),
	fact("planted", "identifier", "plantedAbsentResolver0", 0, "control"),
	fact("planted", "intent", "Constraint: planted-absent, never stated", 0, "control"),
];

/** Pi's valid cut points: user or assistant messages (never a tool result). */
function isCutPoint(message: MessageLike): boolean {
	return message.role === "user" || message.role === "assistant" || message.role === "bashExecution";
}

/** One compaction of the replay and what it was fed. */
export interface Compaction {
	/** Share of the session fed before it. */
	checkpoint: number;
	/** Messages fed to the host so far. */
	fed: number;
	/** First kept message: every message before it has left live history. */
	cut: number;
	summarized: number;
	turnPrefix: number;
	summary: string;
}

/** How one fact fared at one compaction. */
export interface Check {
	fact: Fact;
	inSummary: boolean;
	recoverable: boolean;
}

/** Result of replaying one session. */
export interface SessionResult {
	session: string;
	/** Context window of the replay. */
	window: number;
	messages: number;
	planted: number;
	natural: number;
	compactions: Compaction[];
	/** Checks at each compaction (every fact that had left live history by then), by compaction. */
	checks: Check[][];
	/** Negative controls at the last compaction: facts that never occurred, which must not be found. */
	controls: Check[];
	/** Fold events committed by the fold passes run between compactions. */
	foldEvents: number;
	/** Largest live context a fold pass was given, in tokens (linearize's estimate, before folding). */
	peakLive: number;
	/** recall_folded search calls made. */
	searches: number;
	ms: number;
}

/**
 * The replay's defaults: a window of at most 32k, small enough that the fold engine commits fold
 * events between compactions, so fold records and fold seed-index records feed the summary too; a
 * fold pass before every fourth assistant message.
 */
export const REPLAY_DEFAULTS = { window: 32_000, foldEvery: 4 } as const;

/**
 * The window a session is replayed in: a quarter of its whole conversation (each compaction
 * checkpoint feeds about one window, so the fold passes fire between compactions), in whole
 * thousands, at most REPLAY_DEFAULTS.window (every long session: both shared ones) and at least 4k.
 */
export function windowFor(messages: readonly MessageLike[]): number {
	let tokens = 0;
	for (const block of linearize(messages)) tokens += block.tokens;
	return Math.min(REPLAY_DEFAULTS.window, Math.max(4_000, Math.floor(tokens / 4 / 1000) * 1000));
}

/** Knobs of a replay. */
export interface ReplayOptions {
	/** Context window reported to the fold pass; default: windowFor the planted session. */
	window?: number;
	/** A fold pass (the `context` hook on the live view) runs before every this-many-th assistant message; 0: none. */
	foldEvery?: number;
	checkpoints?: readonly number[];
}

function compactionMessage(summary: string, timestamp: number): MessageLike {
	return { role: "compactionSummary", summary, tokensBefore: 0, timestamp };
}

/** Characters that may not touch a path or identifier on either side for it to count as found. */
const WORD = /[\w$]/;
const PATH_BEFORE = /[\w$./-]/;
const PATH_AFTER = /[\w$/-]/;

/** True when `key` occurs in `text` as a whole token (not as part of a longer path or word). */
function hasToken(text: string, key: string, before: RegExp, after: RegExp): boolean {
	for (let at = text.indexOf(key); at >= 0; at = text.indexOf(key, at + 1)) {
		const left = at > 0 ? text[at - 1] : "";
		const right = text[at + key.length] ?? "";
		if ((!left || !before.test(left)) && (!right || !after.test(right))) return true;
	}
	return false;
}

/**
 * True when `text` holds the fact: an error line anywhere (summary lines prefix it with turn, tag and
 * tool); an intent as a summary intent line (`] <intent>`); a path or identifier as a whole token.
 */
export function summaryHolds(text: string, f: Fact): boolean {
	switch (f.category) {
		case "error":
			return text.includes(f.key);
		case "intent":
			return text.includes(`] ${f.key}`);
		case "path":
			return hasToken(text, f.key, PATH_BEFORE, PATH_AFTER);
		default:
			return hasToken(text, f.key, WORD, WORD);
	}
}

function lineHolds(line: string, f: Fact): boolean {
	const clean = line.replace(/\r$/, "");
	switch (f.category) {
		case "error":
			return clean === f.text || (f.key !== f.text && clean.startsWith(f.key));
		case "intent":
			return clean.trim() === f.text || (f.key !== f.text && clean.trim().startsWith(f.key));
		default:
			return summaryHolds(clean, f);
	}
}

/**
 * True when a `recall_folded search=` answer shows the fact on one of its matching lines
 * (`<n>: text`, or `after <n>: text` for the closing lines Pi's bash tool adds to a truncated copy):
 * an error line or intent as the whole line (or its head, for a long one), a path or identifier as a
 * whole token. The answer's header lines, which echo the pattern, do not count.
 */
export function searchFinds(answer: string, f: Fact): boolean {
	for (const line of answer.split("\n")) {
		const match = /^(?:after )?\d+: (.*)$/s.exec(line);
		if (match && lineHolds(match[1], f)) return true;
	}
	return false;
}

/** Runs a fold pass on `live` and returns its size in tokens. */
async function foldPass(stub: StubPi, live: readonly MessageLike[]): Promise<number> {
	await stub.emit("context", { messages: structuredClone(live) });
	let tokens = 0;
	for (const block of linearize(live)) tokens += block.tokens;
	return tokens;
}

/**
 * Replays a planted session through a stub Pi host: feeds the messages in order, runs a fold pass on
 * the live view every `foldEvery` assistant messages, and at each checkpoint compacts everything
 * before the last valid cut point fed, as Pi prepares it (messages since the previous cut in
 * `messagesToSummarize`, the start of a split turn in `turnPrefixMessages`, the previous summary as
 * `previousSummary`). After each compaction every fact that has left live history is checked: in the
 * summary verbatim (its key), or returned by `recall_folded search=<key>`.
 */
export async function replaySession(
	name: string,
	session: PlantedSession,
	natural: readonly Fact[],
	options: ReplayOptions = {},
): Promise<SessionResult> {
	const started = performance.now();
	const messages = session.messages;
	const facts = [...session.planted, ...natural].sort((a, b) => a.at - b.at);
	const window = options.window ?? windowFor(messages);
	const stub = loadStub({ window });
	await stub.emit("session_start", { reason: "startup" });
	const foldEvery = options.foldEvery ?? REPLAY_DEFAULTS.foldEvery;
	const compactions: Compaction[] = [];
	const checks: Check[][] = [];
	const controls: Check[] = [];
	let fed = 0;
	let boundary = 0;
	let assistants = 0;
	let summaryMessage: MessageLike | undefined;
	let previousSummary: string | undefined;
	let searches = 0;
	let peakLive = 0;
	/** recall_folded answers by search key, for the current compaction (the folded set changes between them). */
	const answers = new Map<string, string>();
	const check = async (summary: string, f: Fact): Promise<Check> => {
		const inSummary = summaryHolds(summary, f);
		let recoverable = inSummary;
		if (!recoverable) {
			let answer = answers.get(f.key);
			if (answer === undefined) {
				searches++;
				answer = await stub.call("recall_folded", { search: f.key });
				answers.set(f.key, answer);
			}
			recoverable = searchFinds(answer, f);
		}
		return { fact: f, inSummary, recoverable };
	};
	const live = (): MessageLike[] =>
		summaryMessage ? [summaryMessage, ...messages.slice(boundary, fed)] : messages.slice(boundary, fed);
	for (const checkpoint of options.checkpoints ?? CHECKPOINTS) {
		const target = Math.round(checkpoint * messages.length);
		while (fed < target) {
			const message = messages[fed];
			if (message.role === "assistant" && foldEvery > 0 && assistants++ % foldEvery === 0) {
				peakLive = Math.max(peakLive, await foldPass(stub, live()));
			}
			stub.addMessage(message);
			if (message.role === "assistant") await stub.emit("message_end", { message });
			fed++;
		}
		let cut = -1;
		for (let i = fed - 1; i > boundary; i--) {
			if (isCutPoint(messages[i])) {
				cut = i;
				break;
			}
		}
		if (cut < 0) continue;
		let turnStart = -1;
		if (messages[cut].role !== "user") {
			for (let i = cut; i >= boundary; i--) {
				if (messages[i].role === "user") {
					turnStart = i;
					break;
				}
			}
		}
		const historyEnd = turnStart >= 0 ? turnStart : cut;
		const messagesToSummarize = messages.slice(boundary, historyEnd);
		const turnPrefixMessages = turnStart >= 0 ? messages.slice(turnStart, cut) : [];
		const [result] = (await stub.emit("session_before_compact", {
			preparation: {
				firstKeptEntryId: `cut-${cut}`,
				messagesToSummarize,
				turnPrefixMessages,
				isSplitTurn: turnStart >= 0,
				tokensBefore: 0,
				previousSummary,
			},
			reason: "threshold",
		})) as ({ compaction?: { summary: string; details?: unknown } } | undefined)[];
		const summary = result?.compaction?.summary;
		if (summary === undefined) throw new Error(`${name}: compaction at ${checkpoint} returned no summary`);
		// As Pi: the compaction entry holds the summary and the details context-fold returned with it.
		const entry = {
			type: "compaction",
			id: `c${compactions.length}`,
			summary,
			firstKeptEntryId: `cut-${cut}`,
			details: result?.compaction?.details,
		};
		await stub.emit("session_compact", { fromExtension: true, compactionEntry: entry });
		stub.entries.push(entry);
		compactions.push({
			checkpoint,
			fed,
			cut,
			summarized: messagesToSummarize.length,
			turnPrefix: turnPrefixMessages.length,
			summary,
		});
		previousSummary = summary;
		summaryMessage = compactionMessage(summary, stampOf(messages[cut - 1]) + 0.75);
		boundary = cut;
		answers.clear();
		const round: Check[] = [];
		for (const f of facts) {
			if (f.at >= cut) break;
			round.push(await check(summary, f));
		}
		checks.push(round);
	}
	const last = compactions[compactions.length - 1];
	if (last) for (const f of CONTROLS) controls.push(await check(last.summary, f));
	const foldEvents = new Set(
		stub.entries
			.filter((e) => e.type === "custom" && (e.data as { kind?: string; seq?: number })?.kind === "layer")
			.map((e) => (e.data as { seq: number }).seq),
	).size;
	return {
		session: name,
		window,
		messages: messages.length,
		planted: session.planted.length,
		natural: natural.length,
		compactions,
		checks,
		controls,
		foldEvents,
		peakLive,
		searches,
		ms: performance.now() - started,
	};
}

/** Plants, harvests and replays one recorded session (the whole conversation of its active branch). */
export async function evaluateSession(session: Session, options: ReplayOptions = {}): Promise<SessionResult> {
	const planted = plantFacts(session.messages);
	return replaySession(session.name, planted, harvestFacts(planted.messages), options);
}

/** Figures of one report row. */
export interface Row {
	session: string;
	origin: Origin;
	category: Category;
	label: string;
	/** Facts that left live history by the last compaction. */
	count: number;
	/** Share of them verbatim in the last summary. */
	inSummary: number;
	/** Share in the last summary or returned by recall_folded search. */
	recoverable: number;
	/** Lowest recoverable share over all compactions (facts that had left by then). */
	worst: number;
	/** Facts neither in the last summary nor recoverable. */
	missed: Fact[];
}

function share(part: number, whole: number): number {
	return whole === 0 ? 1 : part / whole;
}

/** The report rows of one session (ROWS order). */
export function rowsOf(result: SessionResult): Row[] {
	const last = result.checks[result.checks.length - 1] ?? [];
	return ROWS.map(({ origin, category, label }) => {
		const pick = (round: readonly Check[]) =>
			round.filter((c) => c.fact.origin === origin && c.fact.category === category);
		const mine = pick(last);
		const worst = Math.min(
			1,
			...result.checks.map((round) => {
				const r = pick(round);
				return share(r.filter((c) => c.recoverable).length, r.length);
			}),
		);
		return {
			session: result.session,
			origin,
			category,
			label,
			count: mine.length,
			inSummary: share(mine.filter((c) => c.inSummary).length, mine.length),
			recoverable: share(mine.filter((c) => c.recoverable).length, mine.length),
			worst,
			missed: mine.filter((c) => !c.recoverable).map((c) => c.fact),
		};
	});
}

/** A share as a percentage to a tenth, rounded, but never 100.0 short of all nor 0.0 above none. */
function pct(x: number): string {
	const tenths = Math.min(x < 1 ? 999 : 1000, Math.max(x > 0 ? 1 : 0, Math.round(x * 1000)));
	return `${(tenths / 10).toFixed(1)} %`;
}

/** The figures as a Markdown table (one row per session and category). */
export function formatTable(results: readonly SessionResult[]): string {
	const lines = [
		"| session | facts | left history | in last summary | in summary or recall search | worst compaction |",
		"|---|---|---:|---:|---:|---:|",
	];
	for (const result of results) {
		for (const row of rowsOf(result)) {
			lines.push(
				`| ${result.session} | ${row.label} | ${row.count} | ${pct(row.inSummary)} | ${pct(row.recoverable)} | ${pct(row.worst)} |`,
			);
		}
	}
	return lines.join("\n");
}

/** One line per compaction: where it cut, the summary size and the overall recoverable share. */
export function formatCompactions(result: SessionResult): string {
	return result.compactions
		.map((c, i) => {
			const round = result.checks[i] ?? [];
			const ok = round.filter((x) => x.recoverable).length;
			return `${result.session} compaction ${i + 1} at ${c.checkpoint * 100} %: cut ${c.cut}/${result.messages}, ${c.summarized}+${c.turnPrefix} messages, summary ${c.summary.length} chars, ${ok}/${round.length} facts recoverable`;
		})
		.join("\n");
}

/** Up to `n` missed facts per row, for the report. */
export function formatMissed(results: readonly SessionResult[], n = 5): string {
	const out: string[] = [];
	for (const result of results) {
		for (const row of rowsOf(result)) {
			if (row.missed.length === 0) continue;
			out.push(`${result.session} / ${row.label}: ${row.missed.length} missed, e.g.`);
			for (const f of row.missed.slice(0, n))
				out.push(`  - [msg ${f.at}, ${f.source}] ${JSON.stringify(f.key.slice(0, 140))}`);
		}
	}
	return out.join("\n");
}
