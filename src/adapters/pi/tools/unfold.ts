/**
 * `unfold`: puts folded blocks back into the context, raw, from the next request on, for the rest of
 * the session (persisted). A block a compaction removed, a code another branch folded, or a parent
 * session's code, cannot come back; the tool says so and persists nothing. Registered inactive, like recall_folded.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { short } from "../../../core/tokens.ts";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import type { ParentSession } from "../fold/parent-session.ts";
import type { Ledger } from "../fold/session-ledger.ts";
import { systemTokens } from "../ui/status-facts.ts";
import { codeList, failure, notCodes, type ToolAnswer, toolText, unknownArguments } from "./codes.ts";

/**
 * What Pi keeps unused past a request's input at the least: pi-ai's clampMaxTokensToContext fits
 * max_tokens into the window less the input and this margin, so a request unfolded to within it gets
 * a reply of a token.
 */
const PI_OUTPUT_MARGIN = 4096;

/** Tokens an unfold leaves for the reply beyond Pi's margin: a sixteenth of the window, 1,024 to 4,096. */
export const UNFOLD_REPLY_ROOM = { least: 1024, most: 4096 } as const;

/**
 * What an unfold leaves free in a `window`-token window: Pi's margin and room for the reply, but no
 * more than an eighth of the window (8,192 from a window of 64k). A smaller window, where Pi's fixed
 * margin alone is a quarter or more, would refuse nearly every unfold; there the reply may come short.
 */
export function unfoldFreeRoom(window: number): number {
	const reply = Math.min(UNFOLD_REPLY_ROOM.most, Math.max(UNFOLD_REPLY_ROOM.least, Math.floor(window / 16)));
	return Math.min(PI_OUTPUT_MARGIN + reply, Math.floor(window / 8));
}

/** Parameters of unfold. */
const unfoldParameters = Type.Object({
	codes: Type.Array(Type.String()),
});

/**
 * The unfold tool's work (never throws). It failed when the arguments were wrong, or it put nothing
 * back and no block it names was back already. An unfold that could not be recorded (the session file
 * refused it) is also told to `fail`: announced once and listed among the status's failures.
 */
export function runUnfold(
	args: { codes?: unknown },
	engine: FoldEngine,
	parent?: ParentSession,
	ledger?: Ledger,
	fail?: (message: string) => void,
	system: () => number = () => 0,
): ToolAnswer {
	try {
		const unknown = unknownArguments("unfold", args, Object.keys(unfoldParameters.properties));
		if (unknown) return failure(unknown);
		const parsed = codeList(args?.codes);
		if (typeof parsed === "string") return failure(`unfold: ${parsed}`);
		if (parsed.codes.length === 0) {
			return failure(
				`unfold: ${parsed.bad.length > 0 ? notCodes(parsed.bad) : "name at least one fold code in `codes`"}`,
			);
		}
		const lines: string[] = parsed.bad.length > 0 ? [notCodes(parsed.bad)] : [];
		const ids: string[] = [];
		let already = 0;
		// An unfold never brings the next request past the window, which the provider would refuse, nor
		// so near it that the reply has no room: the blocks that would stay folded, the rest unfold, in
		// the order named.
		const room = engine.unfoldRoom(system());
		let left = room ? room.left - unfoldFreeRoom(room.window) : Number.POSITIVE_INFINITY;
		for (const code of parsed.codes) {
			const id = engine.registry.idOf(code);
			const unreadable = id ? undefined : parent?.unreadable();
			if (!id && parent?.has(code)) {
				lines.push(
					`#${code} belongs to the parent session ${parent.path}; it cannot be unfolded here, recall_folded reads it`,
				);
			} else if (!id && unreadable) {
				lines.push(
					`#${code} is not a fold code of this session branch; it may be one of the parent session's, but ${unreadable}`,
				);
			} else if (!id) {
				const where = recordedWhere(ledger, code);
				const raw = typeof where === "object" && "branch" in where && engine.liveBlock(where.branch) !== undefined;
				if (raw) already++;
				lines.push(notHere(code, where, raw));
			} else if (engine.leftContext(id)) {
				// Unfolded or not, a block a compaction removed is not in the context: only recall_folded reads
				// it, from the session file, unless the file no longer holds it either.
				lines.push(
					(ledger?.holds(id) ?? true)
						? `#${code} is no longer in the context the requests carry (a compaction took it out, or another extension leaves it out); use recall_folded to read it`
						: `#${code} is no longer in the context the requests carry, nor in the session file as Pi read it (its line is unreadable or gone), so recall_folded cannot read it either`,
				);
			} else if (engine.changedSinceFold(id)) {
				already++;
				lines.push(
					`#${code} is already raw: its text changed since it was folded, so it is sent as it now reads, not as it was folded`,
				);
			} else if (engine.registry.isUnfolded(id)) {
				already++;
				lines.push(`#${code} is already unfolded`);
			} else if (!engine.registry.frozenOp(id)) {
				already++;
				lines.push(`#${code} is not folded: it is in the context as it was read`);
			} else {
				const back = room?.back.get(id) ?? 0;
				if (back > left) {
					lines.push(
						`#${code} stays folded: it would add ~${short(back)} tokens where ~${short(Math.max(0, left))} are left in the window, room for the reply aside; recall_folded reads it without changing the context`,
					);
				} else {
					left -= back;
					ids.push(id);
				}
			}
		}
		if (ids.length > 0) {
			engine.unfold(ids);
			const codes = ids.map((id) => `#${engine.registry.record(id)?.code}`).join(", ");
			lines.unshift(`Unfolded ${codes}: the original content is back in the context from the next request on.`);
			// Past the budget context-fold folds what it can and compacts when that is not enough: say so
			// (they stay until then, which is often what an unfold is for). engine.unfold took them from `room`.
			if (room && room.window - room.left > room.budget)
				lines.push(
					`The next request will be past the fold budget (~${short(room.budget)} tokens): context-fold folds other blocks, and where folding cannot bring the context back under, compacts it at the end of a run; a compaction takes unfolded blocks out of the context too (recall_folded reads them then).`,
				);
		}
		return { text: lines.join("\n"), failed: ids.length === 0 && already === 0 };
	} catch (error) {
		const message = `unfold failed, nothing was unfolded: ${errorText(error)}`;
		fail?.(`context-fold: ${message}`);
		return failure(message);
	}
}

/**
 * Why `code`, which this branch's fold state lacks, is not unfolded, from where the session file
 * records it (see recordedWhere); `raw` when another branch folded it and on this one its block is in
 * the context as it was read.
 */
function notHere(code: string, where: ReturnType<typeof recordedWhere>, raw: boolean): string {
	if (raw)
		return `#${code} is not folded on this branch (another branch folded it): it is in the context as it was read`;
	if (where === undefined) return `#${code} is not a fold code of this session branch`;
	if (where === "records")
		return `#${code} is already raw: this branch's fold state could not be restored, so its folds are sent raw; recall_folded reads it`;
	if ("unreadable" in where)
		return `#${code} is not in this branch's fold state, and the session file could not be read to look for it (${where.unreadable})`;
	return `#${code} was folded on another branch of this session; it cannot be unfolded here, recall_folded reads it`;
}

/**
 * Where the session file records `code`, which the branch's fold state lacks: on another branch (with
 * the id of the block it folded), or on this one (a fold state that could not be restored);
 * undefined when nowhere; the error's text when the file cannot be read (then nobody knows).
 */
function recordedWhere(
	ledger: Ledger | undefined,
	code: string,
): { branch: string } | "records" | { unreadable: string } | undefined {
	try {
		const placed = ledger?.recordOf(code);
		if (placed?.entryId === undefined) return undefined;
		return ledger?.onBranch(placed.entryId) ? "records" : { branch: placed.record.id };
	} catch (error) {
		return { unreadable: errorText(error) };
	}
}

/** Registers unfold, inactive (see loadout.ts); `fail` hears an unfold that could not be recorded. */
export function registerUnfold(
	pi: ExtensionAPI,
	engine: FoldEngine,
	parent: () => ParentSession | undefined = () => undefined,
	ledger?: Ledger,
	fail?: (message: string) => void,
): void {
	pi.registerTool({
		name: "unfold",
		label: "Unfold",
		defaultActive: false,
		description: "Puts folded blocks back for good (full size on every request); to look once, use recall_folded.",
		parameters: unfoldParameters,
		async execute(_id, params, _signal, _onUpdate, ctx) {
			const system = () => systemTokens(pi, ctx);
			return toolText(runUnfold(params as { codes?: unknown }, engine, parent(), ledger, fail, system));
		},
	});
}
