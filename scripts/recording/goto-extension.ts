/**
 * Recording-only Pi extension: `/goto <entryId> [summarize]` moves the session leaf with the command
 * context's `navigateTree`, exactly what choosing an entry in the terminal UI's `/tree` does (with or
 * without a branch summary). RPC mode has no tree command, so the session recorder loads this file
 * with `-e` to leave an abandoned branch in a recorded session. It registers nothing else and writes
 * nothing to the session by itself.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

/** Registers the `/goto` command. */
export default function gotoExtension(pi: ExtensionAPI): void {
	pi.registerCommand("goto", {
		description: "Navigate the session tree to an entry (recording helper)",
		handler: async (args, ctx) => {
			const [targetId, mode] = args.trim().split(/\s+/);
			await ctx.waitForIdle();
			const result = await ctx.navigateTree(targetId, { summarize: mode === "summarize" });
			ctx.ui.notify(`goto ${targetId}: ${result.cancelled ? "cancelled" : "done"}`, "info");
		},
	});
}
