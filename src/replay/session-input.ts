/**
 * What a replay feeds the Pi session from the recording, and the wait between its turns: the
 * tools (Pi's built-in definitions, or a stand-in for another recorded tool, each returning the
 * recorded result instead of running), a recorded reply as the faux provider can stream it (a
 * recorded error as retried or final, as the recording shows it), a user
 * message as prompt text and images, a user `!` command as Pi records one, and the wait until the
 * session is idle and stays so.
 */
import { isRetryableAssistantError } from "@earendil-works/pi-ai";
import {
	type AgentSession,
	createBashToolDefinition,
	createEditToolDefinition,
	createFindToolDefinition,
	createGrepToolDefinition,
	createLsToolDefinition,
	createReadToolDefinition,
	createWriteToolDefinition,
	type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { MessageLike } from "../core/block.ts";
import { parts, type ReplayScript } from "./script.ts";

/** Pi's built-in tool definitions by name, for a working directory. */
const BUILTIN: Record<string, (cwd: string) => ToolDefinition> = {
	read: (cwd) => createReadToolDefinition(cwd) as unknown as ToolDefinition,
	bash: (cwd) => createBashToolDefinition(cwd) as unknown as ToolDefinition,
	edit: (cwd) => createEditToolDefinition(cwd) as unknown as ToolDefinition,
	write: (cwd) => createWriteToolDefinition(cwd) as unknown as ToolDefinition,
	grep: (cwd) => createGrepToolDefinition(cwd) as unknown as ToolDefinition,
	find: (cwd) => createFindToolDefinition(cwd) as unknown as ToolDefinition,
	ls: (cwd) => createLsToolDefinition(cwd) as unknown as ToolDefinition,
};

/** What the replay's tools share with the run they serve. */
export interface ToolFeed {
	/** The steering queued so far: a call waits for it before it answers. */
	steering: () => Promise<unknown>;
	/** Counts a divergence of a kind. */
	diverge: (kind: string) => void;
	/** The recorded reply whose calls Pi is running. */
	reply: () => MessageLike | undefined;
	/**
	 * Ids of the calls a tool ran, added as each runs: a call Pi ends without one having run (the
	 * run checks at `tool_execution_end`) Pi answered itself, refusing it.
	 */
	ran: Set<string>;
	/** Told the recorded time of each result a tool gives: its run finished then (see run.ts's clock). */
	arrived?: (at: number) => void;
}

/**
 * The replay's tools: each recorded tool name and Pi's read, bash, edit and write, with Pi's own
 * definition where it has one (for `cwd`), each returning the recorded result of its call in the
 * reply Pi is running. A stand-in takes any arguments: Pi validates a call against the tool's schema
 * before running it, and a stand-in's schema is the replay's, not the recorded tool's (a converter
 * may record arguments that are not an object). A call with no recorded result counts as a
 * divergence.
 */
export function replayTools(script: ReplayScript, cwd: string, feed: ToolFeed): ToolDefinition[] {
	return [...new Set([...script.toolNames, "read", "bash", "edit", "write"])].map((name) => {
		const base = BUILTIN[name]?.(cwd) ?? {
			name,
			label: name,
			description: `${name} (a tool of the recorded session)`,
			parameters: Type.Object({}, { additionalProperties: true }),
			prepareArguments: (args: unknown) =>
				typeof args === "object" && args !== null && !Array.isArray(args) ? args : {},
		};
		return {
			...base,
			execute: async (toolCallId: string) => {
				feed.ran.add(toolCallId);
				const recorded = feed.reply();
				// A steering message queued with this reply is in Pi's queue before its tools finish.
				await feed.steering();
				const result = recorded && script.results.get(recorded)?.get(toolCallId);
				if (!result) {
					feed.diverge("tool call without a recorded result");
					return { content: [{ type: "text", text: "(no result recorded)" }], details: undefined };
				}
				const at = result.timestamp;
				if (typeof at === "number" && Number.isFinite(at)) feed.arrived?.(at);
				// An error result as recorded (Pi takes `isError` from a tool's result as from a throw,
				// which would keep only its text, joined into one part).
				const content = toolResultParts(result, (type) => feed.diverge(`tool result ${type} part not replayed`));
				return { content, details: result.details, isError: result.isError === true };
			},
		} as unknown as ToolDefinition;
	});
}

/**
 * The parts of a recorded tool result as a Pi tool returns them: text (a text that is not a string
 * as one) and images that hold their data. Every other part (a `document` a converter kept from
 * another harness, an image without its data) is left out and named by its type through `skip`: the
 * faux provider reads any part that is not text as an image, and one without data ended the reply
 * in an error, so the replay stopped following the recording with no word in its verdict.
 */
export function toolResultParts(recorded: MessageLike, skip: (type: string) => void): Record<string, unknown>[] {
	const content: Record<string, unknown>[] = [];
	for (const part of parts(recorded)) {
		if (part.type === "text")
			content.push(typeof part.text === "string" ? part : { ...part, text: String(part.text ?? "") });
		else if (part.type === "image" && typeof part.data === "string" && typeof part.mimeType === "string")
			content.push(part);
		else skip(typeof part.type === "string" && part.type !== "" ? part.type : "untyped");
	}
	return content;
}

/**
 * A copy of a recorded reply that the faux provider can stream (it streams every part and fails on
 * a text, thinking or tool call without its text, thinking or arguments), so that the session gets
 * the reply as recorded: its content as a list of parts, a text or thinking that is not a string
 * as one, missing arguments as none (each the same block text as recorded), and only the part
 * types Pi's assistant messages hold (text, thinking, toolCall). Every other part is left out and
 * named by its type through `skip`.
 */
export function streamableReply(recorded: MessageLike, skip: (type: string) => void): MessageLike {
	const content: Record<string, unknown>[] = [];
	for (const part of parts(recorded)) {
		if (part.type === "text")
			content.push(typeof part.text === "string" ? part : { ...part, text: String(part.text ?? "") });
		else if (part.type === "thinking")
			content.push(typeof part.thinking === "string" ? part : { ...part, thinking: String(part.thinking ?? "") });
		else if (part.type === "toolCall") content.push(part.arguments === undefined ? { ...part, arguments: {} } : part);
		else skip(typeof part.type === "string" && part.type !== "" ? part.type : "untyped");
	}
	return structuredClone({ ...recorded, content });
}

/** The error of a recorded error reply the recording retried, where its own text is one Pi would not retry. */
export const RETRIED_ERROR = "connection error (the recording retried this request)";
/** The error of a recorded error reply the recording did not retry, where its own text is one Pi would retry. */
export const FINAL_ERROR = "the recorded request failed, and the recording went on without another reply";

/**
 * A recorded error reply as Pi 1.6, its auto-retry on, must take it for the run to follow the
 * recording: retried when the recording has another reply after it in the same run, final when it
 * has none (the user spoke next). Its own error text is kept where Pi's classifier
 * (isRetryableAssistantError) already takes it that way, else it gives way to one that Pi does.
 * Any other reply is returned as it is.
 */
export function errorAsRecorded(recorded: MessageLike, retried: boolean): MessageLike {
	if (recorded.stopReason !== "error" || isRetryableAssistantError(recorded as never) === retried) return recorded;
	return { ...recorded, errorMessage: retried ? RETRIED_ERROR : FINAL_ERROR };
}

/**
 * A recorded user message as prompt text (its text parts, joined by newlines) and images. Every other
 * part (a `tool_result` or `document` a converter kept from another harness) is left out and named
 * by its type through `skip`, as toolResultParts does.
 */
export function textAndImages(
	message: MessageLike,
	skip: (type: string) => void,
): {
	text: string;
	images: { type: "image"; data: string; mimeType: string }[];
} {
	const texts: string[] = [];
	const images: { type: "image"; data: string; mimeType: string }[] = [];
	for (const part of parts(message)) {
		if (part.type === "text") texts.push(String(part.text ?? ""));
		else if (part.type === "image")
			images.push({ type: "image", data: String(part.data), mimeType: String(part.mimeType) });
		else skip(typeof part.type === "string" && part.type !== "" ? part.type : "untyped");
	}
	return { text: texts.join("\n"), images };
}

/**
 * Waits until the session is idle and stays so: an extension may start a compaction from
 * `agent_settled` (context-fold does, once the run is over), which Pi begins a tick later.
 */
export async function settled(session: { waitForIdle(): Promise<void>; readonly isIdle: boolean }): Promise<void> {
	do {
		await session.waitForIdle();
		await new Promise((resolve) => setImmediate(resolve));
	} while (!session.isIdle);
}

/**
 * Adds a recorded user `!` command to the idle session as Pi records one (Pi's `recordBashResult`):
 * the model sees it as a user message from the next request on, unless it was run with `!!`.
 */
export function recordBash(session: AgentSession, message: MessageLike): void {
	const exitCode = typeof message.exitCode === "number" ? message.exitCode : undefined;
	const fullOutputPath = typeof message.fullOutputPath === "string" ? message.fullOutputPath : undefined;
	session.recordBashResult(
		String(message.command ?? ""),
		{
			output: String(message.output ?? ""),
			exitCode,
			cancelled: message.cancelled === true,
			truncated: message.truncated === true,
			...(fullOutputPath === undefined ? {} : { fullOutputPath }),
		},
		{ excludeFromContext: message.excludeFromContext === true },
	);
}
