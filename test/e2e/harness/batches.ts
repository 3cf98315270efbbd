/**
 * A scripted model that runs numbered bash batches: on the prompt `trigger` it calls bash once per
 * request, each batch printing 100 short "batch <k> line <i> ok" lines, until `count` batches have
 * run, then answers `done`; any other prompt gets `other`. Progress is the number of bash calls
 * after the trigger in the request itself: folding rewrites results and long arguments but never
 * removes a call, so the count holds however the history was folded.
 */
import { messagesOf, type Reply, type Script } from "./model-server.ts";

/** Bash printing 100 short ok lines for batch `k`. */
export function batchCommand(k: number): string {
	return `for i in $(seq 1 100); do echo "batch ${k} line $i ok"; done`;
}

/** The batch script (see the file header). */
export function batchScript(options: { trigger: string; count: number; done: string; other: string }): Script {
	return (req): Reply => {
		const messages = messagesOf(req);
		const users = messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
		const last = users[users.length - 1];
		if (last === undefined || messages[last].text !== options.trigger) return { text: options.other };
		const ran = messages
			.slice(last)
			.reduce((n, m) => n + (m.toolCalls ?? []).filter((call) => call.name === "bash").length, 0);
		return ran < options.count
			? { toolCalls: [{ name: "bash", args: { command: batchCommand(ran + 1) } }] }
			: { text: options.done };
	};
}
