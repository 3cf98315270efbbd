/**
 * Places context-fold's cache breakpoints on the provider request (Pi's `before_provider_request`):
 * the frontiers the engine found for this request and the previous request's last block, on an
 * Anthropic Messages payload where Pi marked the last message (core cache-breakpoints.ts says why and
 * where). Any other payload passes untouched. The shape is checked with a schema before anything is
 * read, compiled once: this runs before every model request on the whole payload, which TypeBox's
 * uncompiled check walks about fifty times slower. The previous request's last block is the one state
 * kept, per session.
 */
import { Type } from "typebox";
import { Compile } from "typebox/compile";
import { lastPlaceOf, markBreakpoints, type WirePlace, type WireRequest } from "../../../core/cache-breakpoints.ts";

const BlockSchema = Type.Object({ type: Type.String() });
const MessageSchema = Type.Object({
	role: Type.String(),
	content: Type.Union([Type.String(), Type.Array(BlockSchema)]),
});
/** The part of an Anthropic Messages payload breakpoints read (other keys pass through). */
const RequestSchema = Type.Object({
	messages: Type.Array(MessageSchema),
	system: Type.Optional(Type.Union([Type.String(), Type.Array(BlockSchema)])),
	tools: Type.Optional(Type.Array(Type.Object({}))),
});
const requestCheck = Compile(RequestSchema);

/** Marks each Anthropic request of one session; `frontiers` are the engine's for the request at hand. */
export class BreakpointPlacer {
	private previous: WirePlace | undefined;

	/** Forgets the previous request (a new session, or a compaction that rewrote history). */
	reset(): void {
		this.previous = undefined;
	}

	/** The payload to send: `payload` with the breakpoints added, or `undefined` to leave it as it is. */
	place(payload: unknown, frontiers: readonly string[]): WireRequest | undefined {
		if (!requestCheck.Check(payload)) return undefined;
		const request = payload as WireRequest;
		const { request: marked, marked: placed } = markBreakpoints(request, { frontiers, previous: this.previous });
		this.previous = lastPlaceOf(marked);
		return placed.length > 0 ? marked : undefined;
	}
}
