/**
 * The peer policies the replay compares context-fold with, as context transforms (they are not
 * this extension). Each rewrites the `content` of tool-result messages in place, as a `context`
 * hook would, and keeps structure (every call keeps its result):
 *
 * - `maskLastN`: the SWE-agent observation mask: all but the last `keep` tool results read as a
 *   one-line placeholder.
 * - `ClearToolUses`: Anthropic-style `clear_tool_uses`: once the prompt exceeds `trigger` tokens,
 *   clear the oldest tool results (never the last `keep`) until at least `clearAtLeast` tokens are
 *   freed, or clear nothing when that much cannot be freed; cleared results stay cleared.
 */
import type { MessageLike } from "../core/block.ts";
import { messageBlockTexts, tokensOf } from "./request-shape.ts";

function textOf(message: MessageLike): string {
	return messageBlockTexts(message)
		.map((b) => b.text)
		.join("\n");
}

function placeholder(message: MessageLike, verb: string): { type: "text"; text: string }[] {
	const lines = textOf(message).split("\n").length;
	return [{ type: "text", text: `[${verb}: ${lines} lines of ${String(message.toolName ?? "tool")} output]` }];
}

/** Masks every tool result but the last `keep` (in place). */
export function maskLastN(messages: MessageLike[], keep: number): void {
	const results = messages.filter((m) => m.role === "toolResult");
	for (const message of results.slice(0, Math.max(0, results.length - keep))) {
		message.content = placeholder(message, "output omitted");
	}
}

/** Settings of the clear-tool-uses peer. */
export interface ClearSettings {
	trigger: number;
	keep: number;
	clearAtLeast: number;
}

/** Anthropic-style tool-result clearing with its own memory of what it cleared. */
export class ClearToolUses {
	private readonly cleared = new Set<string>();
	readonly settings: ClearSettings;
	constructor(settings: ClearSettings) {
		this.settings = settings;
	}

	/** Applies the clearing to one request's messages (in place). */
	apply(messages: MessageLike[]): void {
		const results = messages.filter((m) => m.role === "toolResult");
		const id = (m: MessageLike): string => String(m.toolCallId);
		let prompt = 0;
		for (const m of messages) prompt += tokensOf(textOf(m));
		const clearedNow = results.filter((m) => this.cleared.has(id(m)));
		for (const m of clearedNow) {
			const before = tokensOf(textOf(m));
			m.content = placeholder(m, "cleared");
			prompt -= before - tokensOf(textOf(m));
		}
		if (prompt <= this.settings.trigger) return;
		const candidates = results
			.slice(0, Math.max(0, results.length - this.settings.keep))
			.filter((m) => !this.cleared.has(id(m)));
		const savings = candidates.map(
			(m) => tokensOf(textOf(m)) - tokensOf(textOf({ ...m, content: placeholder(m, "cleared") })),
		);
		if (savings.reduce((a, b) => a + b, 0) < this.settings.clearAtLeast) return;
		let freed = 0;
		for (let i = 0; i < candidates.length; i++) {
			if (freed >= this.settings.clearAtLeast && prompt - freed <= this.settings.trigger) break;
			this.cleared.add(id(candidates[i]));
			candidates[i].content = placeholder(candidates[i], "cleared");
			freed += savings[i];
		}
	}
}
