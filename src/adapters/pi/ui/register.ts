/**
 * The user's view, registered in one call: the `/context-fold` command, the renderers, and the
 * footer status refreshed after each context pass, response (once Pi has stored it: turn and agent
 * end), tool result (an unfold), compaction and session change. Registered after the engine's hooks, so each refresh sees the pass it follows.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type CommandDeps, registerCommand } from "./command.ts";
import { type FoldRecords, registerRenderers } from "./renderers.ts";
import { updateFooter } from "./status.ts";

/** Registers the command, the renderers and the footer refreshes. */
export function registerUserView(pi: ExtensionAPI, deps: CommandDeps, records: FoldRecords): void {
	registerCommand(pi, deps);
	registerRenderers(pi, deps.engine, records);
	const refresh = (_event: unknown, ctx: ExtensionContext) => updateFooter(deps, ctx);
	for (const event of [
		"session_start",
		"session_tree",
		"context",
		"message_end",
		"turn_end",
		"agent_end",
		"session_compact",
	] as const) {
		pi.on(event as "session_start", refresh);
	}
	pi.on("tool_execution_end", (event, ctx) => {
		if (event.toolName === "unfold") updateFooter(deps, ctx);
	});
}
