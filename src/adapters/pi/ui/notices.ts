/**
 * Where context-fold's notices go: the terminal UI's notifications while one is attached, else a
 * sink (stderr by default); a degradation that can recur is announced once per distinct message in a
 * session and kept for the status's Failures list; and standing notices, which stay in a widget above the editor
 * until the next prompt, for what is found while Pi restores a session (Pi draws the restored
 * transcript after session_start, so a notice then would scroll away above it).
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

/** Where context-fold's notices go when no terminal UI shows them. */
export type NoticeSink = (message: string, level: "warning" | "info") => void;

/** Writes a notice to stderr, one line each. */
export const toStderr: NoticeSink = (message) => {
	process.stderr.write(`${message}\n`);
};

/** A widget above the editor that holds notices until the next prompt. */
export interface Standing {
	/** Shows `lines` until the next prompt; false outside the terminal UI or when the UI refuses. */
	show(lines: readonly string[]): boolean;
	/** Takes the widget down, if it is shown. */
	clear(): void;
}

/** context-fold's notices for one session: the UI while attached, else the sink. */
export class Notices {
	private ui: ExtensionContext["ui"] | undefined;
	/** Every message announced once (warnOnce, or shown standing): the status's Failures list. */
	readonly reported = new Set<string>();

	private readonly sink: NoticeSink;

	constructor(sink: NoticeSink = toStderr) {
		this.sink = sink;
	}

	/**
	 * Starts the Failures list afresh for a session (Pi's session_start: startup, resume, new, fork; a
	 * reload loads the extension anew, so its list starts empty anyway): it lists the failures of the
	 * session in use, and one met again there is told again. A /tree move keeps it.
	 */
	startSession(): void {
		this.reported.clear();
	}

	/** Sends notices to `ui` (the terminal UI's), or to the sink when undefined. */
	attach(ui: ExtensionContext["ui"] | undefined): void {
		this.ui = ui;
	}

	/** Announces `message`: a UI notification, or the sink when there is no UI or it refuses. */
	readonly warn = (message: string, level: "warning" | "info" = "warning"): void => {
		if (this.ui) {
			try {
				this.ui.notify(message, level);
				return;
			} catch {
				this.ui = undefined;
			}
		}
		this.sink(message, level);
	};

	/** Announces a degradation that can recur (each prompt, each reload) once per distinct message. */
	readonly warnOnce = (message: string): void => {
		if (this.reported.has(message)) return;
		this.warnListed(message);
	};

	/** Announces a failure every time, listing it once among the status's Failures (held while holding runs). */
	readonly warnListed = (message: string): void => {
		if (this.held) {
			if (!this.held.includes(message)) this.held.push(message);
			return;
		}
		this.reported.add(message);
		this.warn(message);
	};

	/** What warnOnce and warnListed announced while holding runs, to be shown standing after it. */
	private held: string[] | undefined;

	/**
	 * Runs `body`, holding back every failure it announces, then shows those standing in `widget` (see
	 * standOnce): what is found while Pi restores a session would scroll away above the transcript Pi
	 * draws after it. Outside the terminal UI they are said once each, as ever.
	 */
	holding(widget: Standing, body: () => void): void {
		const outer = this.held;
		this.held = [];
		const held = this.held;
		try {
			body();
		} finally {
			this.held = outer;
			this.standOnce(widget, held);
		}
	}

	/** A standing widget under `key`, its lines followed by `trailer`. */
	standing(key: string, trailer: string): Standing {
		let shown = false;
		return {
			show: (lines) => {
				if (!this.ui) return false;
				try {
					this.ui.setWidget(key, [...lines, trailer]);
					shown = true;
					return true;
				} catch {
					return false;
				}
			},
			clear: () => {
				if (!shown) return;
				shown = false;
				try {
					this.ui?.setWidget(key, undefined);
				} catch {
					// The widget goes with the UI that held it.
				}
			},
		};
	}

	/**
	 * Announces each message not announced before in `widget`, kept there until the next prompt, or,
	 * outside the terminal UI, once each as a notice; either way it joins the Failures list.
	 */
	standOnce(widget: Standing, messages: readonly string[]): void {
		const fresh = messages.filter((message) => !this.reported.has(message));
		if (fresh.length === 0) return;
		if (widget.show(fresh)) for (const message of fresh) this.reported.add(message);
		else for (const message of fresh) this.warnOnce(message);
	}
}
