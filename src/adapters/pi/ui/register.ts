/**
 * The user's view, registered in one call: the `/context-fold` command, the renderers, and the
 * footer status refreshed after each message and at the agent's end (once Pi has stored the last
 * response), after an unfold's tool result, a compaction and a session change, and after a context
 * pass that changed what it shows. Registered after the engine's hooks, so each refresh sees the
 * pass it follows. Not at `turn_end`: Pi rebuilds a preview of the whole branch for each handler of
 * it, every turn, and the refreshes around it already show what it would.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type CommandDeps, registerCommand } from "./command.ts";
import { type FoldRecords, registerRenderers } from "./renderers.ts";
import { updateFooter } from "./status-facts.ts";

/** Registers the command, the renderers and the footer refreshes. */
export function registerUserView(pi: ExtensionAPI, deps: CommandDeps, records: FoldRecords): void {
	registerCommand(pi, deps);
	registerRenderers(pi, deps.engine, records, deps.ledger);
	// A context pass changes the footer only when the folds in force changed (an event, an unfold), when
	// the request's blocks changed under them (a session start, tree move or compaction: `moved`), or
	// when the advisory flag did; the hit rate changes with responses, whose refreshes show it. Any
	// other pass would set the same text again, at the cost of reading the branch back on every request.
	let moved = true;
	let shown: { version: number; advisory: boolean } | undefined;
	const refresh = (_event: unknown, ctx: ExtensionContext) => updateFooter(deps, ctx);
	for (const event of ["session_start", "session_tree", "session_compact"] as const) {
		pi.on(event as "session_start", (_event, ctx) => {
			moved = true;
			updateFooter(deps, ctx);
		});
	}
	for (const event of ["message_end", "agent_end"] as const) pi.on(event as "message_end", refresh);
	pi.on("context", (_event, ctx) => {
		const now = { version: deps.engine.registry.version, advisory: deps.advisoryActive?.() ?? false };
		if (!moved && shown?.version === now.version && shown.advisory === now.advisory) return;
		moved = false;
		shown = now;
		updateFooter(deps, ctx);
	});
	pi.on("tool_execution_end", (event, ctx) => {
		if (event.toolName === "unfold") updateFooter(deps, ctx);
	});
}
