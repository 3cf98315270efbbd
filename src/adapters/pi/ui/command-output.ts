/**
 * How `/context-fold` answers: a notification where there is a UI, a line on stdout where there is
 * none, and in the terminal UI a scrollable view for a long text.
 */
import type { ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { VIEW_WIDTH } from "../../../core/status.ts";
import { printable } from "../../../core/tokens.ts";
import { TextView, type ViewAction } from "./viewer.ts";

/** The context a command's handler gets. */
export type Ctx = ExtensionCommandContext;

/** True in the terminal UI, where views open. */
export function inTui(ctx: ExtensionContext): boolean {
	return ctx.mode === "tui" && ctx.hasUI;
}

/** How a command's line goes out without a UI: `stdout` (Pi moves it to stderr) or straight to `stderr`. */
export type Headless = "stdout" | "stderr";

/**
 * Tells the user: a notification with a UI (TUI, RPC), else a line on `headless`, where a command that
 * `failed` (by default: said as a warning or an error) also makes pi exit 1 (print and json modes end
 * when the command does, and a script reads the exit code). A context gone stale (the session was
 * replaced while a dialog was open) tells on stderr. What a terminal would act on rather than print
 * (escape sequences a recalled block holds: a window title, the clipboard, a cleared screen) is left
 * out, as the terminal UI's viewer leaves it out.
 */
export function say(
	ctx: ExtensionContext,
	said: string,
	level: "info" | "warning" | "error" = "info",
	failed = level !== "info",
	headless: Headless = "stdout",
): void {
	const text = printable(said);
	let ui: boolean;
	try {
		ui = ctx.hasUI;
		if (ui) ctx.ui.notify(text, level);
	} catch {
		process.stderr.write(`${text}\n`);
		return;
	}
	if (ui) return;
	process[headless].write(`${text}\n`);
	if (failed) process.exitCode = 1;
}

/** Shows a text: a scrollable view in the terminal UI, else as `say` does. Resolves with the action taken. */
export async function show(
	ctx: Ctx,
	title: string,
	text: string | ((width: number) => string),
	actions: ViewAction[] = [],
): Promise<string | undefined> {
	if (!inTui(ctx)) {
		say(ctx, typeof text === "string" ? text : text(VIEW_WIDTH));
		return undefined;
	}
	return ctx.ui.custom<string | undefined>(
		(tui, theme, keys, done) =>
			new TextView({
				tui,
				keys,
				title,
				text,
				style: { title: (t) => theme.bold(theme.fg("accent", t)), hint: (t) => theme.fg("dim", t) },
				done,
				actions,
			}),
	);
}
