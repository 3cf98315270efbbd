/**
 * The working-set fold policy (profile `"working-set"`, the default): the cache-economic policy's
 * events and prices, with use deciding what stays raw instead of age alone. A block outside the
 * tails stays raw while fewer than `useWindow` model messages passed since the model last used it
 * (repeated one of its distinctive strings, see ../use-ages.ts) or since it arrived; it folds at the
 * first event that pays once that lapses, its digest keeping the lines that hold the strings the
 * model used it for (a focus: what it names again stays in sight). The model's own `write`s keep
 * the tool results' hot tail. Protection never costs a backstop compaction: the backstop counts
 * protected blocks as foldable, so only what can never fold asks for one. (It gives way only past the
 * budget, so in a small window Pi's own compaction can come first: docs/defaults.md.)
 */
import {
	DEFAULT_WORKING_SET,
	type FoldCommand,
	type PolicyView,
	type ViewBlock,
	WORKING_SET_ECONOMIC,
} from "../contract.ts";
import { economize, isHot } from "./cache-economic.ts";

/** True for what keeps the hot tail: a tool result no later call superseded, or a file the model wrote. */
export function isHotOrWritten(block: ViewBlock): boolean {
	return isHot(block) || (block.kind === "toolArgs" && block.toolName === "write");
}

/** Decides the event as the economic policy does, keeping the working set raw and focusing what folds on its use. */
export function workingSet(view: PolicyView): FoldCommand[] {
	const useWindow = view.config.useWindow ?? DEFAULT_WORKING_SET.useWindow;
	const commands = economize(
		view,
		{
			keep: (block) => (block.useAge ?? Number.POSITIVE_INFINITY) < useWindow,
			hot: isHotOrWritten,
		},
		WORKING_SET_ECONOMIC,
	);
	// Most requests fold nothing: only an event pays for the lookup of its blocks' used strings.
	if (!commands.some((c) => c.type === "fold")) return commands;
	const byId = new Map(view.blocks.map((b) => [b.id, b] as const));
	return commands.map((c) => {
		if (c.type !== "fold") return c;
		const focus = byId.get(c.id)?.usedStrings;
		return focus && focus.length > 0 ? { ...c, focus } : c;
	});
}
