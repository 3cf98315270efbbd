/**
 * The cache breakpoints context-fold adds to an Anthropic Messages request. Anthropic reads a cached
 * prefix only at a breakpoint (a block's `cache_control`), looking back at most LOOKBACK_BLOCKS blocks
 * from each for an entry an earlier request wrote; Pi marks the last tool, the system prompt and the
 * last message. Two reads are lost that way. A fold event changes the conversation from its first
 * folded block on, so its request finds no entry before that block and rewrites the whole
 * conversation, not the suffix the event changed. And a turn that appends more than LOOKBACK_BLOCKS
 * blocks (a large batch of tool calls) no longer reaches the previous request's entry. So each
 * request also marks the frontier (the last tool result before the first block a fold may still
 * change, as the fold state stood before this turn's event: a place the requests since the last event
 * marked as well, so an event reads up to it) and the previous request's last block. Anthropic takes
 * MAX_BREAKPOINTS marks; when both do not fit, Pi's mark on the last tool is given up (the system
 * prompt's, after the tools, covers them). Nothing is marked where Pi marked no message (caching off,
 * or another wire format). Pure: plain data in, a new request out; the input is never mutated.
 */
import type { Block } from "./block.ts";
import type { ViewBlock } from "./contract.ts";

/** The most `cache_control` marks Anthropic accepts in one request. */
export const MAX_BREAKPOINTS = 4;
/** How many blocks back from a breakpoint Anthropic looks for an earlier cache entry. */
export const LOOKBACK_BLOCKS = 20;

/** A content block of an Anthropic request, as far as breakpoints go. */
export interface WireBlock {
	type: string;
	tool_use_id?: string;
	text?: string;
	cache_control?: unknown;
	[key: string]: unknown;
}

/** A message of an Anthropic request. */
export interface WireMessage {
	role: string;
	content: string | WireBlock[];
	[key: string]: unknown;
}

/** An Anthropic Messages request, as far as breakpoints go. */
export interface WireRequest {
	messages: WireMessage[];
	system?: string | WireBlock[];
	tools?: { cache_control?: unknown; [key: string]: unknown }[];
	[key: string]: unknown;
}

/** Where a block sits in a request, and what it held: enough to find it again in the next request. */
export interface WirePlace {
	message: number;
	block: number;
	type: string;
	toolUseId?: string;
	text?: string;
}

/** The places a request should mark besides Pi's, most valuable first. */
export interface BreakpointAnchors {
	/** The tool call whose result is the frontier (see frontierAnchor). */
	frontier?: string;
	/** The previous request's last block (see lastPlaceOf). */
	previous?: WirePlace;
}

/** What markBreakpoints did: the request to send, and the blocks it marked (message, block). */
export interface MarkedRequest {
	request: WireRequest;
	marked: { message: number; block: number }[];
}

/**
 * The tool call id of the frontier: the last tool result before the first block a fold may still
 * change (eligible, not frozen, not held raw, and smaller once folded: no policy folds a block its
 * digest would not shrink), in a turn's blocks and the view built of them before its event.
 * Undefined when no tool result comes before it.
 */
export function frontierAnchor(blocks: readonly Block[], view: readonly ViewBlock[]): string | undefined {
	let anchor: string | undefined;
	for (let i = 0; i < blocks.length && i < view.length; i++) {
		const b = view[i];
		if (b.eligible && !b.frozen && !b.held && b.saving > 0) return anchor;
		const block = blocks[i];
		if (block.kind === "toolResult" && block.toolCallId !== undefined) anchor = block.toolCallId;
	}
	return anchor;
}

/** The last content block of a request, and what it held; undefined for an empty request. */
export function lastPlaceOf(request: WireRequest): WirePlace | undefined {
	const message = request.messages.length - 1;
	const content = request.messages[message]?.content;
	if (!Array.isArray(content) || content.length === 0) return undefined;
	const block = content.length - 1;
	return placeOf(content[block], message, block);
}

function placeOf(block: WireBlock, message: number, index: number): WirePlace {
	return {
		message,
		block: index,
		type: block.type,
		...(typeof block.tool_use_id === "string" ? { toolUseId: block.tool_use_id } : {}),
		...(typeof block.text === "string" ? { text: block.text } : {}),
	};
}

/** True when `block` is the one `place` recorded (same kind, same tool call, same text). */
function holds(block: WireBlock | undefined, place: WirePlace): boolean {
	if (!block || block.type !== place.type) return false;
	if (place.toolUseId !== undefined) return block.tool_use_id === place.toolUseId;
	if (place.text !== undefined) return block.text === place.text;
	return false;
}

function marks(blocks: readonly { cache_control?: unknown }[] | string | undefined): number {
	if (!Array.isArray(blocks)) return 0;
	let n = 0;
	for (const block of blocks) if (block.cache_control !== undefined) n++;
	return n;
}

/**
 * Adds the anchors' breakpoints to `request` with the mark Pi put on its last message: the
 * frontier's tool result, then the previous request's last block where it still stands, each only
 * while the request has room (MAX_BREAKPOINTS, making room by dropping Pi's mark on the last tool).
 * A block already marked, or the last block (Pi's), is left as it is.
 */
export function markBreakpoints(request: WireRequest, anchors: BreakpointAnchors): MarkedRequest {
	const last = request.messages[request.messages.length - 1]?.content;
	const mark = Array.isArray(last) ? last[last.length - 1]?.cache_control : undefined;
	if (mark === undefined) return { request, marked: [] };
	const wanted: { message: number; block: number }[] = [];
	const add = (message: number, block: number): void => {
		const content = request.messages[message].content;
		const isLast = message === request.messages.length - 1 && block === content.length - 1;
		const taken = wanted.some((w) => w.message === message && w.block === block);
		if (Array.isArray(content) && content[block].cache_control === undefined && !isLast && !taken)
			wanted.push({ message, block });
	};
	if (anchors.frontier !== undefined) {
		const at = findToolResult(request, anchors.frontier);
		if (at) add(at.message, at.block);
	}
	const previous = anchors.previous;
	if (previous) {
		const content = request.messages[previous.message]?.content;
		if (Array.isArray(content) && holds(content[previous.block], previous)) add(previous.message, previous.block);
	}
	if (wanted.length === 0) return { request, marked: [] };
	let used = marks(request.system) + marks(request.tools);
	for (const message of request.messages) used += marks(message.content);
	let tools = request.tools;
	const toolMarked = tools !== undefined && tools.length > 0 && tools[tools.length - 1].cache_control !== undefined;
	if (used + wanted.length > MAX_BREAKPOINTS && toolMarked && marks(request.system) > 0 && tools) {
		const { cache_control: _, ...bare } = tools[tools.length - 1];
		tools = [...tools.slice(0, -1), bare];
		used--;
	}
	const placed = wanted.slice(0, Math.max(0, MAX_BREAKPOINTS - used));
	if (placed.length === 0) return { request, marked: [] };
	const messages = request.messages.slice();
	for (const { message, block } of placed) {
		const content = (messages[message].content as WireBlock[]).slice();
		content[block] = { ...content[block], cache_control: mark };
		messages[message] = { ...messages[message], content };
	}
	return { request: { ...request, messages, ...(tools === request.tools ? {} : { tools }) }, marked: placed };
}

/** Where the result of tool call `id` sits in `request`, searched from the end. */
function findToolResult(request: WireRequest, id: string): { message: number; block: number } | undefined {
	for (let m = request.messages.length - 1; m >= 0; m--) {
		const content = request.messages[m].content;
		if (!Array.isArray(content) || request.messages[m].role !== "user") continue;
		for (let b = content.length - 1; b >= 0; b--) {
			if (content[b].type === "tool_result" && content[b].tool_use_id === id) return { message: m, block: b };
		}
	}
	return undefined;
}
