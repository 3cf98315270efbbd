/**
 * The cache breakpoints context-fold adds to an Anthropic Messages request. Anthropic reads a cached
 * prefix only at a breakpoint (a block's `cache_control`), looking back at most LOOKBACK_BLOCKS blocks
 * from each for an entry an earlier request wrote; Pi marks the last tool, the system prompt and the
 * last message. Two reads are lost that way. A fold event changes the conversation from its first
 * folded block on, so its request finds no entry before that block and rewrites the whole
 * conversation, not the suffix the event changed. And a turn that appends more than LOOKBACK_BLOCKS
 * blocks (a large batch of tool calls) no longer reaches the previous request's entry. So each
 * request also marks its frontiers (see frontierAnchors: the last tool result before the first block
 * a fold may still change, as the fold state stood before this turn's event, a place the requests
 * since the last event marked as well, so that an event reads up to it), and, after a turn that
 * appended more than the lookback, the previous request's last block. Anthropic takes
 * MAX_BREAKPOINTS marks; when they do not fit, Pi's mark on its tools is given up (the system
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
	/** For a block with neither a tool call nor a text (a tool addition, say): its JSON without its mark. */
	json?: string;
}

/** The places a request should mark besides Pi's. */
export interface BreakpointAnchors {
	/** Tool calls whose results are frontiers (see frontierAnchors, resultAnchor), most valuable first. */
	frontiers: readonly string[];
	/** The previous request's last block (see lastPlaceOf). */
	previous?: WirePlace;
}

/** What markBreakpoints did: the request to send, and the blocks it marked (message, block). */
export interface MarkedRequest {
	request: WireRequest;
	marked: { message: number; block: number }[];
}

/** True for a block some fold may still change: eligible, not frozen, not held raw, and smaller once folded. */
function mayChange(block: ViewBlock): boolean {
	return block.eligible && !block.frozen && !block.held && block.saving > 0;
}

/**
 * The frontiers of a turn, from its blocks and the view built of them before its event: the tool
 * call of the last tool result before the first block a fold may still change (see mayChange; no
 * policy folds a block its digest would not shrink), counted from the first block the newest fold
 * event folded (the first whose id `newest` accepts), then counted from the start. Events fold from
 * where the one before began or later, so the first is where the next one most likely reads up to; a
 * block an event passed over stays raw behind it, and only an event that reaches further back
 * changes it: the second is for that. Where no block may change, the newest tool result; a frontier
 * with no tool result before it is left out, and so is a repeat.
 */
export function frontierAnchors(
	blocks: readonly Block[],
	view: readonly ViewBlock[],
	newest?: (id: string) => boolean,
): string[] {
	// Positions of results, named only once chosen (see anchorAt): this loop runs on every request.
	let early: number | undefined;
	let late: number | undefined;
	let earlyFound = false;
	let lateFound = false;
	let open = newest === undefined;
	let anchor: number | undefined;
	for (let i = 0; i < blocks.length && i < view.length; i++) {
		if (!open && newest?.(blocks[i].id)) open = true;
		if (mayChange(view[i])) {
			if (!earlyFound) {
				early = anchor;
				earlyFound = true;
			}
			if (open) {
				late = anchor;
				lateFound = true;
				break;
			}
		}
		const block = blocks[i];
		// A result without a call id (a provider that sends none) is found by none in the payload.
		if (block.kind === "toolResult" && block.toolCallId) anchor = i;
	}
	if (!earlyFound) early = anchor;
	// Past the end without meeting the newest event's blocks (gone): the first counts from the start too.
	if (!lateFound) late = open ? anchor : early;
	const out: string[] = [];
	for (const at of [late, early]) {
		const id = at === undefined ? undefined : anchorAt(blocks, at);
		if (id !== undefined && !out.includes(id)) out.push(id);
	}
	return out;
}

/** The frontier naming the result at position `at`: its call id, counted among earlier results under it (see resultAnchor). */
function anchorAt(blocks: readonly Block[], at: number): string {
	const callId = blocks[at].toolCallId as string;
	let nth = 0;
	for (let j = 0; j < at; j++) if (blocks[j].kind === "toolResult" && blocks[j].toolCallId === callId) nth++;
	return resultAnchor(callId, nth);
}

/**
 * Where the request's last content block sits: in its last message with any content. Pi follows the
 * message it marks with a content-less `system` message where the model takes its effort
 * mid-conversation (`output_config`, the newest Claude models), so the last message may hold none.
 * Undefined for a request with no content block, or whose last message with content is a string.
 */
function lastBlockOf(request: WireRequest): { message: number; block: number } | undefined {
	for (let message = request.messages.length - 1; message >= 0; message--) {
		const content = request.messages[message].content;
		if (Array.isArray(content) && content.length === 0) continue;
		return Array.isArray(content) ? { message, block: content.length - 1 } : undefined;
	}
	return undefined;
}

/** The last content block of a request (see lastBlockOf), and what it held; undefined for none. */
export function lastPlaceOf(request: WireRequest): WirePlace | undefined {
	const last = lastBlockOf(request);
	if (!last) return undefined;
	const content = request.messages[last.message].content as WireBlock[];
	return placeOf(content[last.block], last.message, last.block);
}

function placeOf(block: WireBlock, message: number, index: number): WirePlace {
	const place: WirePlace = { message, block: index, type: block.type };
	if (typeof block.tool_use_id === "string") place.toolUseId = block.tool_use_id;
	else if (typeof block.text === "string") place.text = block.text;
	else place.json = unmarked(block);
	return place;
}

/** A block's JSON without its mark. */
function unmarked(block: WireBlock): string {
	return JSON.stringify({ ...block, cache_control: undefined });
}

/** True when `block` is the one `place` recorded (same kind; same tool call, same text, or else same JSON). */
function holds(block: WireBlock | undefined, place: WirePlace): boolean {
	if (!block || block.type !== place.type) return false;
	if (place.toolUseId !== undefined) return block.tool_use_id === place.toolUseId;
	if (place.text !== undefined) return block.text === place.text;
	return place.json !== undefined && unmarked(block) === place.json;
}

function marks(blocks: readonly { cache_control?: unknown }[] | string | undefined): number {
	if (!Array.isArray(blocks)) return 0;
	let n = 0;
	for (const block of blocks) if (block.cache_control !== undefined) n++;
	return n;
}

/**
 * Adds the anchors' breakpoints to `request` with the mark Pi put on its last block (see lastBlockOf): the first
 * frontier's tool result; the previous request's last block where it still stands, if more than
 * LOOKBACK_BLOCKS blocks follow it (else Pi's mark on the last block finds its entry); then the
 * other frontiers. Each only while the request has room (MAX_BREAKPOINTS, made by dropping Pi's
 * mark on its tools, then the system marks before the last one, which covers them). A block already marked, the last block (Pi's) and an empty text are left as
 * they are.
 */
export function markBreakpoints(request: WireRequest, anchors: BreakpointAnchors): MarkedRequest {
	const last = lastBlockOf(request);
	const mark = last ? (request.messages[last.message].content as WireBlock[])[last.block].cache_control : undefined;
	if (!last || mark === undefined) return { request, marked: [] };
	const wanted: { message: number; block: number }[] = [];
	const add = (message: number, block: number): void => {
		const content = request.messages[message].content;
		const isLast = message === last.message && block === last.block;
		const taken = wanted.some((w) => w.message === message && w.block === block);
		if (!Array.isArray(content) || isLast || taken) return;
		// Anthropic refuses a mark on an empty text block.
		const target = content[block];
		if (target.cache_control === undefined && !(target.type === "text" && !target.text))
			wanted.push({ message, block });
	};
	// Pi's mark on the last block finds the previous request's entry unless the turn appended too much.
	const previous = anchors.previous;
	const content = previous ? request.messages[previous.message]?.content : undefined;
	const farBack =
		previous !== undefined &&
		Array.isArray(content) &&
		holds(content[previous.block], previous) &&
		blocksAfter(request, previous) > LOOKBACK_BLOCKS;
	// In order of worth: the first frontier, the previous block if far back, the other frontiers.
	const places = anchors.frontiers.map((id) => findToolResult(request, id));
	if (farBack) places.splice(1, 0, previous);
	for (const place of places) if (place) add(place.message, place.block);
	if (wanted.length === 0) return { request, marked: [] };
	let used = marks(request.system) + marks(request.tools);
	for (const message of request.messages) used += marks(message.content);
	let tools = request.tools;
	// Pi marks the last tool it declares up front; tools it defers may follow unmarked.
	const toolMark = tools?.findLastIndex((tool) => tool.cache_control !== undefined) ?? -1;
	if (used + wanted.length > MAX_BREAKPOINTS && tools && toolMark >= 0 && marks(request.system) > 0) {
		tools = tools.with(toolMark, bareOf(tools[toolMark]));
		used--;
	}
	// The last marked system block covers the blocks before it (an OAuth login's identity block too).
	let system = request.system;
	if (used + wanted.length > MAX_BREAKPOINTS && Array.isArray(system) && marks(system) > 1) {
		const keep = system.findLastIndex((block) => block.cache_control !== undefined);
		used -= marks(system) - 1;
		system = system.map((block, i) => (i === keep || block.cache_control === undefined ? block : bareOf(block)));
	}
	const placed = wanted.slice(0, Math.max(0, MAX_BREAKPOINTS - used));
	if (placed.length === 0) return { request, marked: [] };
	const messages = request.messages.slice();
	for (const { message, block } of placed) {
		const content = (messages[message].content as WireBlock[]).slice();
		content[block] = { ...content[block], cache_control: mark };
		messages[message] = { ...messages[message], content };
	}
	return {
		request: {
			...request,
			messages,
			...(tools === request.tools ? {} : { tools }),
			...(system === request.system ? {} : { system }),
		},
		marked: placed,
	};
}

/** `block` without its cache mark (optional in T, so still a T). */
function bareOf<T extends { cache_control?: unknown }>(block: T): T {
	const { cache_control: _, ...bare } = block;
	return bare as T;
}

/** How many content blocks of `request` come after `place`. */
function blocksAfter(request: WireRequest, place: WirePlace): number {
	let n = (request.messages[place.message].content as WireBlock[]).length - 1 - place.block;
	for (let m = place.message + 1; m < request.messages.length; m++) {
		const content = request.messages[m].content;
		n += Array.isArray(content) ? content.length : 1;
	}
	return n;
}

/** Between a call id and the count of results before it under that id, in a frontier (see resultAnchor). */
const NTH = "\u0000";

/**
 * A frontier: the call id of a result, and where a provider repeated the id, how many results under
 * it came before (`toolu_0\u00002`: the third), since the payload names results by call id alone.
 */
function resultAnchor(callId: string, nth: number): string {
	return nth === 0 ? callId : `${callId}${NTH}${nth}`;
}

/**
 * A call id as Anthropic's payload may carry it: for a reply of another model (OpenAI Responses'
 * `call_x|fc_y`, after a model switch) pi-ai replaces each character outside `[A-Za-z0-9_-]` with `_`
 * and keeps 64 at most (`call_x_fc_y`); a reply of the model the request goes to keeps its own
 * (`functions.read:40`), so both spellings are looked for.
 */
function wireCallId(id: string): string {
	return id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}

/** Where the result a frontier names (see resultAnchor) sits in `request`: its call id's `nth` result from the start. */
function findToolResult(request: WireRequest, anchor: string): { message: number; block: number } | undefined {
	const [raw, count] = anchor.split(NTH);
	const wire = wireCallId(raw);
	let nth = count === undefined ? 0 : Number(count);
	for (let m = 0; m < request.messages.length; m++) {
		const content = request.messages[m].content;
		if (!Array.isArray(content) || request.messages[m].role !== "user") continue;
		for (let b = 0; b < content.length; b++) {
			const id = content[b].tool_use_id;
			if (content[b].type === "tool_result" && (id === raw || id === wire) && nth-- === 0)
				return { message: m, block: b };
		}
	}
	return undefined;
}
