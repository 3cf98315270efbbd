/**
 * The scripted "agent" behind the model server while sessions are recorded: a task is one user
 * prompt and the replies the model gives to each request of that turn, in order. A step is a reply
 * or a function of what the request carries (the tool results the agent just got), so the agent can
 * check that a command failed or passed as the story needs and build edits from the files as they
 * are on disk. Summarization requests (compaction, branch summaries) get a structured summary built
 * from the serialized conversation in the request. Everything is deterministic: tool-call ids come
 * from a counter and a per-session seed.
 */
import { createHash } from "node:crypto";
import {
	type CapturedRequest,
	isSummarizationRequest,
	lastUserText,
	messagesOf,
	type Reply,
	type ScriptedToolCall,
} from "../../test/e2e/harness/model-server.ts";

/** What a step sees: the request and the tool results that arrived since the previous reply. */
export interface TurnView {
	req: CapturedRequest;
	/** Tool results of the last assistant message, in call order (text only). */
	results: string[];
	/** All result texts joined with blank lines, for pattern checks. */
	resultText: string;
}

/** A reply the agent gives, fixed or computed from the request. */
export type Step = Reply | ((view: TurnView) => Reply);

/** One user turn of the story. */
export interface Task {
	/** The user message. A message starting with "/" is an extension command (no model request). */
	prompt: string;
	steps: Step[];
	/** Idle time before the user sends this prompt, in seconds (timeline rewrite; > 300 expires the cache). */
	idleBefore?: number;
	/** The last step stalls and the user aborts the turn while it streams. */
	abort?: boolean;
}

/** A tool call without its id (the agent assigns one). */
export type Call = Omit<ScriptedToolCall, "id">;

/** Thrown when a step's expectation about the request does not hold: the story drifted. */
export class StoryError extends Error {}

/** Requires the tool results of this request to match `pattern`, then replies with `step`. */
export function expect(pattern: RegExp, step: Step): Step {
	return (view) => {
		if (!pattern.test(view.resultText)) {
			throw new StoryError(`expected tool results to match ${pattern}, got:\n${view.resultText.slice(0, 3000)}`);
		}
		return typeof step === "function" ? step(view) : step;
	};
}

/** Shorthand for a reply with tool calls, optional thinking and text. */
export function calls(list: Call[], thinking?: string, text?: string): Reply {
	return { toolCalls: list, ...(thinking ? { thinking } : {}), ...(text ? { text } : {}) };
}

/** Shorthand for a final text reply (ends the turn). */
export function say(text: string, thinking?: string): Reply {
	return { text, ...(thinking ? { thinking } : {}) };
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Plays the tasks of one session against the requests the model server receives. */
export class ScriptedAgent {
	private task: Task | undefined;
	private next = 0;
	private callCounter = 0;
	private readonly seed: string;
	private readonly goal: string;
	/** Resolves when the current task's stalled step has been served. */
	stalled: Promise<void> = Promise.resolve();
	private resolveStall: () => void = () => {};
	/** Model requests answered (conversation and summarization). */
	requests = 0;
	summaries = 0;

	constructor(seed: string, goal: string) {
		this.seed = seed;
		this.goal = goal;
	}

	/** Starts a task: its steps answer the following requests. */
	begin(task: Task): void {
		this.task = task;
		this.next = 0;
		this.stalled = new Promise<void>((resolve) => {
			this.resolveStall = resolve;
		});
	}

	/** Ends the current task; throws unless every step was used. */
	end(): void {
		const task = this.task;
		if (task && this.next !== task.steps.length) {
			throw new StoryError(`task "${task.prompt.slice(0, 60)}" used ${this.next} of ${task.steps.length} steps`);
		}
		this.task = undefined;
	}

	/** The model server's script function. */
	reply(req: CapturedRequest): Reply {
		this.requests++;
		if (isSummarizationRequest(req)) {
			this.summaries++;
			return { text: summarize(lastUserText(req) ?? "", this.goal) };
		}
		const task = this.task;
		if (!task) throw new StoryError(`request ${req.index} arrived with no task running`);
		const step = task.steps[this.next];
		if (!step) throw new StoryError(`task "${task.prompt.slice(0, 60)}" ran out of steps at request ${req.index}`);
		this.next++;
		const view = viewOf(req);
		const reply = typeof step === "function" ? step(view) : step;
		const isLast = this.next === task.steps.length;
		if (task.abort && isLast) {
			this.resolveStall();
			return { ...reply, stall: true };
		}
		if (isLast && reply.toolCalls && reply.toolCalls.length > 0) {
			throw new StoryError(`task "${task.prompt.slice(0, 60)}" ends with tool calls`);
		}
		if (!isLast && !(reply.toolCalls && reply.toolCalls.length > 0)) {
			throw new StoryError(`task "${task.prompt.slice(0, 60)}" step ${this.next} ends the turn early`);
		}
		return { ...reply, toolCalls: reply.toolCalls?.map((c) => ({ ...c, id: this.toolId() })) };
	}

	private toolId(): string {
		const digest = createHash("sha256")
			.update(`${this.seed}:${++this.callCounter}`)
			.digest();
		let id = "toolu_01";
		for (let i = 0; i < 22; i++) id += BASE62[digest[i] % 62];
		return id;
	}
}

function viewOf(req: CapturedRequest): TurnView {
	const msgs = messagesOf(req);
	const results: string[] = [];
	for (let i = msgs.length - 1; i >= 0 && msgs[i].role === "tool"; i--) results.unshift(msgs[i].text);
	return { req, results, resultText: results.join("\n\n") };
}

const PATH_RE = /\b(?:src|test|docs|examples|out|data|bench)\/[\w./-]+\.\w+/g;
const ERROR_RE = /(?:Error|error TS\d+|✖ |FAIL|not ok)\b.*$|^.*(?:Error|Warning): .*$/gm;

/**
 * A summary in the structure Pi asks for (goal, constraints, progress, decisions, next steps,
 * critical context), built from the serialized conversation: the user's requests in order, the files
 * the tools touched, and the latest error lines.
 */
export function summarize(prompt: string, goal: string): string {
	const users = [...prompt.matchAll(/^\[User\]: (.+)$/gm)].map((m) => m[1].trim());
	const files = [...new Set(prompt.match(PATH_RE) ?? [])].slice(0, 24);
	const errors = [...new Set((prompt.match(ERROR_RE) ?? []).map((l) => l.trim().slice(0, 160)))].slice(-6);
	const constraints = users.filter((u) => /\b(don't|do not|never|keep|must|only|frozen|without)\b/i.test(u));
	const previous = /<previous-summary>([\s\S]*?)<\/previous-summary>/.exec(prompt)?.[1]?.trim();
	const short = (s: string) => (s.length > 220 ? `${s.slice(0, 217)}...` : s);
	if (/earlier context from an ongoing conversation/.test(prompt)) {
		return [
			"## Original Request",
			short(users.at(-1) ?? goal),
			"",
			"## Progress So Far",
			...(files.length > 0 ? files.slice(-8).map((f) => `- Worked on \`${f}\``) : ["- (no files touched yet)"]),
			"",
			"## Context Needed to Continue",
			...(errors.length > 0 ? errors.slice(-3).map((e) => `- Last error seen: \`${e}\``) : ["- (none)"]),
		].join("\n");
	}
	return [
		"## Goal",
		goal,
		"",
		"## Constraints & Preferences",
		...(constraints.length > 0 ? constraints.map((c) => `- ${short(c)}`) : ["- (none)"]),
		"",
		"## Progress",
		"### Done",
		...(previous ? ["- [x] Everything in the previous checkpoint"] : []),
		...users.slice(0, -1).map((u) => `- [x] ${short(u)}`),
		"",
		"### In Progress",
		`- [ ] ${short(users.at(-1) ?? goal)}`,
		"",
		"### Blocked",
		"- (none)",
		"",
		"## Key Decisions",
		"- **Follow the user's constraints above**: they were restated several times",
		"",
		"## Next Steps",
		"1. Finish the request in progress and rerun the affected tests",
		"2. Run the whole test suite and the typecheck before reporting back",
		"",
		"## Critical Context",
		...(files.length > 0 ? [`- Files involved: ${files.map((f) => `\`${f}\``).join(", ")}`] : []),
		...(errors.length > 0 ? errors.map((e) => `- Error seen: \`${e}\``) : ["- (none)"]),
	].join("\n");
}
