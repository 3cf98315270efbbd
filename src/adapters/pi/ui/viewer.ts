/**
 * A scrollable text view for the terminal UI (`ctx.ui.custom`): the status, a recalled original, or
 * search results. Lines wrap to the width (a text made for the width is made again when it changes); ↑/↓, page up/down, Home/End scroll; Esc, q or Enter
 * close it. Optional actions (e.g. `u` to unfold) close it with their key.
 */
import type { Component, KeybindingsManager, TUI } from "@earendil-works/pi-tui";
import { matchesKey, replaceControlCharacters, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";

/** The escape character that opens every terminal sequence. */
const ESC = 0x1b;

/** The second character of a sequence that runs until BEL or `ESC \`: OSC, DCS, APC, PM, SOS. */
const STRING_SEQUENCES = new Set(["]", "P", "_", "^", "X"]);

/**
 * `text` without the terminal sequences a program may print: a control sequence (`ESC [` up to its
 * final byte: a colour, a cursor move, a clear screen), a string sequence (`ESC ]` and its kin, up
 * to BEL or `ESC \`: a title, a link) and any other `ESC` with the character after it.
 */
function withoutSequences(text: string): string {
	let out = "";
	let from = 0;
	for (let i = 0; i < text.length; i++) {
		if (text.charCodeAt(i) !== ESC) continue;
		out += text.slice(from, i);
		const kind = text[i + 1];
		let end = i + 2;
		if (kind === "[") {
			while (end < text.length && !(text.charCodeAt(end) >= 0x40 && text.charCodeAt(end) <= 0x7e)) end++;
			end++;
		} else if (STRING_SEQUENCES.has(kind)) {
			while (end < text.length && text.charCodeAt(end) !== 0x07 && text.charCodeAt(end) !== ESC) end++;
			end += text.charCodeAt(end) === ESC ? 2 : 1;
		}
		from = Math.min(end, text.length);
		i = from - 1;
	}
	return out + text.slice(from);
}

/**
 * `text` as a terminal may show it, as Pi shows a tool's output: terminal sequences (colours, cursor
 * moves, a clear screen, a title) removed, CRLF and a lone CR read as a line break, a tab three
 * spaces (as Pi draws one), and every other run of control characters (NUL, BEL) one space. A
 * recalled block holds what a tool printed, which drawn as it is would move the cursor, clear the
 * screen or garble the view after it closed.
 */
export function shownText(text: string): string {
	return withoutSequences(text)
		.replace(/\r\n?/g, "\n")
		.replace(/\t/g, "   ")
		.split("\n")
		.map(replaceControlCharacters)
		.join("\n");
}

/** A key the view answers with, and what its hint says. */
export interface ViewAction {
	key: string;
	hint: string;
}

/** Colours the view uses (from Pi's theme). */
export interface ViewStyle {
	title: (text: string) => string;
	hint: (text: string) => string;
}

/** What a view shows and where it reports. */
export interface ViewOptions {
	tui: Pick<TUI, "terminal" | "requestRender">;
	keys: Pick<KeybindingsManager, "matches">;
	title: string;
	/** The text, or what makes it for a width (a view that lays itself out, such as the status). */
	text: string | ((width: number) => string);
	style: ViewStyle;
	/** Called with an action's key, or undefined when the view is closed. */
	done: (action: string | undefined) => void;
	actions?: readonly ViewAction[];
}

/** The scrollable text view. */
export class TextView implements Component {
	/** Page up/down, Home and End scroll this view, not the transcript behind it (Pi's full-screen viewport). */
	readonly capturesViewportInput = true;
	private top = 0;
	private wrapped: { width: number; lines: string[] } | undefined;
	private readonly tui: ViewOptions["tui"];
	private readonly keys: ViewOptions["keys"];
	private readonly title: string;
	private readonly text: ViewOptions["text"];
	private readonly style: ViewStyle;
	private readonly done: ViewOptions["done"];
	private readonly actions: readonly ViewAction[];

	constructor(options: ViewOptions) {
		this.tui = options.tui;
		this.keys = options.keys;
		this.title = options.title;
		this.text = options.text;
		this.style = options.style;
		this.done = options.done;
		this.actions = options.actions ?? [];
	}

	private height(): number {
		return Math.max(5, (this.tui.terminal?.rows ?? 24) - 10);
	}

	private lines(width: number): string[] {
		if (this.wrapped?.width !== width) {
			const text = shownText(typeof this.text === "string" ? this.text : this.text(width));
			const lines = text.split("\n").flatMap((line) => (line === "" ? [""] : wrapTextWithAnsi(line, width)));
			this.wrapped = { width, lines };
		}
		return this.wrapped.lines;
	}

	invalidate(): void {
		this.wrapped = undefined;
	}

	render(width: number): string[] {
		const inner = Math.max(10, width - 2);
		const lines = this.lines(inner);
		const height = this.height();
		this.top = Math.max(0, Math.min(this.top, lines.length - height));
		const shown = lines.slice(this.top, this.top + height);
		const end = Math.min(lines.length, this.top + height);
		// Rows of the view as wrapped to its width, not lines of the text shown.
		const position = lines.length > height ? ` (rows ${this.top + 1}-${end} of ${lines.length})` : "";
		const hints = ["↑↓ scroll", "pgup/pgdn", ...this.actions.map((a) => `${a.key} ${a.hint}`), "esc close"];
		// The title gives way to the position (a long block line would otherwise hide where the view is),
		// its what before its size: a block's line ends with its size in brackets, which stays.
		const [, what = this.title, size = ""] = /^(.*?)( \([^()]*\))?$/s.exec(this.title) ?? [];
		const title = `${truncateToWidth(what, Math.max(10, width - position.length - size.length), "…")}${size}`;
		return [
			truncateToWidth(this.style.title(`${title}${position}`), width),
			"",
			...shown.map((line) => truncateToWidth(` ${line}`, width)),
			"",
			truncateToWidth(this.style.hint(hints.join(" · ")), width),
		];
	}

	handleInput(data: string): void {
		const height = this.height();
		const action = this.actions.find((a) => a.key === data);
		if (action) {
			this.done(action.key);
			return;
		}
		if (
			this.keys.matches(data, "tui.select.cancel") ||
			this.keys.matches(data, "tui.select.confirm") ||
			data === "q"
		) {
			this.done(undefined);
			return;
		}
		if (this.keys.matches(data, "tui.select.up")) this.top--;
		else if (this.keys.matches(data, "tui.select.down")) this.top++;
		else if (this.keys.matches(data, "tui.select.pageUp")) this.top -= height;
		else if (this.keys.matches(data, "tui.select.pageDown")) this.top += height;
		else if (data === "g" || matchesKey(data, "home")) this.top = 0;
		else if (data === "G" || matchesKey(data, "end")) this.top = Number.MAX_SAFE_INTEGER;
		else return;
		this.top = Math.max(0, this.top);
		this.tui.requestRender();
	}
}
