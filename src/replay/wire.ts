/**
 * The replay's stand-in for an Anthropic Messages payload, so that the extensions' own
 * `before_provider_request` handlers run on every replayed request as on a real one (the faux
 * provider sends no payload of its own). The payload holds what a breakpoint depends on: one block
 * per content part (tool results grouped into one user message, as Pi's Anthropic converter groups
 * them), and Pi's marks on the system prompt, the last tool and the last message's last block. What
 * the handlers marked besides is read back as the recorded messages after which a breakpoint lies,
 * for the request's block shape (request-shape.ts). Pure.
 */
import type { MessageLike } from "../core/block.ts";
import type { WireBlock, WireRequest } from "../core/cache-breakpoints.ts";
import { parts, unsent } from "./script.ts";

/** Pi's mark, as its Anthropic provider writes it for the default retention. */
const PI_MARK = { type: "ephemeral" } as const;

/** A payload, and for each of its blocks the index of the message in `messages` it came from. */
export interface ReplayWire {
	request: WireRequest;
	owner: number[][];
}

function blockOf(part: Record<string, unknown>): WireBlock {
	if (part.type === "toolCall") return { type: "tool_use", id: String(part.id ?? "") };
	if (part.type === "text") return { type: "text", text: String(part.text ?? "") };
	return { type: String(part.type ?? "unknown") };
}

/** The Anthropic-shaped payload of a request made of `messages`, with Pi's marks. */
export function replayWire(messages: readonly MessageLike[]): ReplayWire {
	const request: WireRequest = { messages: [], tools: [{ name: "tool", cache_control: PI_MARK }] };
	const owner: number[][] = [];
	let leading = true;
	let results = false;
	messages.forEach((message, i) => {
		if (unsent(message)) return;
		if (leading && message.role === "system") {
			request.system = [{ type: "text", text: JSON.stringify(message), cache_control: PI_MARK }];
			return;
		}
		leading = false;
		if (message.role === "toolResult") {
			const block: WireBlock = { type: "tool_result", tool_use_id: String(message.toolCallId ?? "") };
			if (results) {
				(request.messages[request.messages.length - 1].content as WireBlock[]).push(block);
				owner[owner.length - 1].push(i);
			} else {
				request.messages.push({ role: "user", content: [block] });
				owner.push([i]);
			}
			results = true;
			return;
		}
		results = false;
		const content = parts(message).map(blockOf);
		if (content.length === 0) return;
		request.messages.push({ role: message.role === "assistant" ? "assistant" : "user", content });
		owner.push(content.map(() => i));
	});
	request.system ??= [{ type: "text", text: "", cache_control: PI_MARK }];
	const last = request.messages[request.messages.length - 1];
	if (last?.role === "user" && Array.isArray(last.content)) {
		last.content[last.content.length - 1] = { ...last.content[last.content.length - 1], cache_control: PI_MARK };
	}
	return { request, owner };
}

/**
 * The messages after which `sent` (the payload as the handlers left it) carries a breakpoint on a
 * message's last block, Pi's own marks on the last message included.
 */
export function markedMessages(sent: unknown, wire: ReplayWire): Set<number> {
	const out = new Set<number>();
	const messages = (sent as WireRequest | undefined)?.messages;
	if (!Array.isArray(messages)) return out;
	messages.forEach((message, m) => {
		const owners = wire.owner[m];
		if (!owners || !Array.isArray(message.content)) return;
		message.content.forEach((block, b) => {
			const i = owners[b];
			if (block?.cache_control === undefined || i === undefined) return;
			if (owners[b + 1] !== i) out.add(i);
		});
	});
	return out;
}
