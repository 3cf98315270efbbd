/**
 * A scripted model that runs numbered bash batches: on the prompt `trigger` it calls bash once per
 * request, each batch printing 100 short "batch <k> line <i> ok" lines, until `count` batches have
 * run, then answers `done`; any other prompt gets `other`. Progress is read from the request itself,
 * so the script does not care how folding reshaped the history (each batch's line 100 stays raw in
 * its result or is found in the tail).
 */
import { lastUserText, type Reply, type Script, serializePrompt } from "./model-server.ts";

/** Bash printing 100 short ok lines for batch `k`. */
export function batchCommand(k: number): string {
	return `for i in $(seq 1 100); do echo "batch ${k} line $i ok"; done`;
}

/** The batch script (see the file header). */
export function batchScript(options: { trigger: string; count: number; done: string; other: string }): Script {
	return (req): Reply => {
		if (lastUserText(req) !== options.trigger) return { text: options.other };
		const ran = (serializePrompt(req).match(/batch \d+ line 100 ok/g) ?? []).length;
		return ran < options.count
			? { toolCalls: [{ name: "bash", args: { command: batchCommand(ran + 1) } }] }
			: { text: options.done };
	};
}
