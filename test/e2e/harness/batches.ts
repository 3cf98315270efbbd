/**
 * A scripted model that runs numbered bash batches: on the prompt `trigger` it calls bash once per
 * request, each batch printing 100 short "batch <k> line <i> ok" lines, until `count` batches have
 * run, then answers `done`; any other prompt gets `other`. Progress is the number of bash calls
 * after the trigger in the request itself: folding rewrites results and long arguments but never
 * removes a call, so the count holds however the history was folded.
 */
import { type ModelServer, messagesOf, type Reply, type Script, startModelServer } from "./model-server.ts";
import { createPiSandbox, type PiSandbox, type SandboxOptions } from "./pi-runner.ts";

/** Bash printing 100 short ok lines for batch `k`. */
export function batchCommand(k: number): string {
	return `for i in $(seq 1 100); do echo "batch ${k} line $i ok"; done`;
}

/** The 100 lines batch `k` prints. */
export function batchLines(k: number): string[] {
	return Array.from({ length: 100 }, (_, i) => `batch ${k} line ${i + 1} ok`);
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

/** The prompt that starts the batches, and the answer once they all ran (see batchSandbox). */
export const BATCH_PROMPT = "Run the batches.";
export const BATCHES_DONE = "All batches ran.";

/**
 * A model server running the batch script (`count` batches on BATCH_PROMPT, then BATCHES_DONE; `other`
 * to any other prompt) and a pi sandbox against it with the rest of `options`.
 */
export async function batchSandbox(
	options: { count: number; other?: string } & Omit<SandboxOptions, "serverUrl">,
): Promise<{ server: ModelServer; sandbox: PiSandbox }> {
	const { count, other = "Still here.", ...sandboxOptions } = options;
	const server = await startModelServer(batchScript({ trigger: BATCH_PROMPT, count, done: BATCHES_DONE, other }));
	const sandbox = await createPiSandbox({ ...sandboxOptions, serverUrl: server.url });
	return { server, sandbox };
}

/**
 * Knobs that fold a batch session early in a small `window`: the economic profile (no working set),
 * small tails and events, a long horizon (any event pays for its rewrite) and no backstop compaction.
 */
export function earlyFoldKnobs(window: number) {
	return {
		policy: "economic",
		foldFrom: 2_000,
		minEvent: 1_000,
		hotTail: 1000,
		coldTail: 1000,
		horizon: 1000,
		backstopAt: window,
		budgetFraction: 0.95,
	};
}
