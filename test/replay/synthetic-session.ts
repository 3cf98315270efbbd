/**
 * A recorded Pi session built message by message for replay tests: a session header, then one
 * message entry per call, each parented on the one before and stamped `second` seconds after `t0`.
 */
import { type ReplayScript, replayScript } from "../../src/replay/script.ts";
import { parseSessionText } from "../../src/replay/session-file.ts";

/** A session file in the making. */
export class SyntheticSession {
	private readonly lines: unknown[];
	private readonly t0: number;

	constructor(t0: number) {
		this.t0 = t0;
		this.lines = [{ type: "session", version: 3, id: "s", timestamp: new Date(t0).toISOString(), cwd: "/nowhere" }];
	}

	/** Appends `message` at `second` seconds after t0. */
	add(second: number, message: Record<string, unknown>): void {
		const n = this.lines.length;
		const at = this.t0 + second * 1000;
		this.lines.push({
			type: "message",
			id: `e${n}`,
			parentId: n === 1 ? null : `e${n - 1}`,
			timestamp: new Date(at).toISOString(),
			message: { ...message, timestamp: at },
		});
	}

	/** Appends an entry of another type (`compaction`, `context_edit`) with `fields`, at `second`; returns its id. */
	entry(second: number, type: string, fields: Record<string, unknown>): string {
		const n = this.lines.length;
		const id = `e${n}`;
		const timestamp = new Date(this.t0 + second * 1000).toISOString();
		this.lines.push({ type, id, parentId: n === 1 ? null : `e${n - 1}`, timestamp, ...fields });
		return id;
	}

	/** The id the next entry appended gets. */
	nextId(): string {
		return `e${this.lines.length}`;
	}

	/** Appends, at `second`, a response asking to read `path` (tool call `id`) and that call's result, `content`. */
	read(second: number, id: string, content: { type: "text"; text: string }[], path = `/no/such/${id}.ts`): void {
		this.add(second, {
			role: "assistant",
			content: [{ type: "toolCall", id, name: "read", arguments: { path } }],
			stopReason: "toolUse",
		});
		this.add(second, { role: "toolResult", toolCallId: id, toolName: "read", content, isError: false });
	}

	/** The session file's text so far. */
	text(): string {
		return this.lines.map((l) => JSON.stringify(l)).join("\n");
	}

	/** The replay script of the session so far. */
	script(): ReplayScript {
		return replayScript(parseSessionText(this.text()));
	}
}
