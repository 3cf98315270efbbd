/**
 * The recorded sessions through the real `pi` CLI: every session of every available corpus is
 * resumed in a sandbox (its header's cwd pointed at the sandbox), and the first request already
 * folds old tool results of the long history; a recall of one of those codes is served from the
 * session file, sha-verified. Pi builds that request itself from the file (active branch, latest
 * compaction honoured), so each session's window is derived from the same context: the largest one
 * (of those the request fills to 65, 80 or 100 %) where the pure planner folds old results. The fill
 * is measured as the extension measures it, by Pi's rule (the last response's usage plus an estimate
 * of every later message), not by the messages' size: a session recorded by another harness can
 * carry usage of a context that harness shrank (codex-civitas-employer: ~23k reported for ~245k of
 * messages), and a window sized by the messages then leaves the policy nothing to fold. A pre-v2
 * session also proves the ledger route works on a migrated file.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { calculateContextTokens, estimateTokens } from "@earendil-works/pi-coding-agent";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { DEFAULT_LADDER } from "../../src/core/contract.ts";
import { FoldRegistry } from "../../src/core/fold-registry.ts";
import { planTurn } from "../../src/core/pass.ts";
import { conduct } from "../../src/core/policy/fold-ladder.ts";
import { loadSessions, type Session } from "../corpus/corpora.ts";
import { startModelServer, toolResultsOf } from "./harness/model-server.ts";
import { createPiSandbox } from "./harness/pi-runner.ts";

const TAG = /^\{#([0-9a-z]{8}) FOLDED\}/;

const PROMPT = "continue";

/** Fill ratios tried, largest window first: the first-fold threshold crossed, then past the budget, then full. */
const FILLS = [0.65, 0.8, 1] as const;

type Usage = Parameters<typeof calculateContextTokens>[0];

/** The usage of a response Pi trusts for the context's size (not aborted or failed, reporting one), else undefined. */
function sizeOf(message: MessageLike | undefined): Usage | undefined {
	const m = message as { role?: unknown; stopReason?: unknown; usage?: Usage } | undefined;
	if (m?.role !== "assistant" || m.stopReason === "aborted" || m.stopReason === "error" || !m.usage) return undefined;
	return calculateContextTokens(m.usage) > 0 ? m.usage : undefined;
}

/**
 * The context size Pi reports for `messages` at `session`'s leaf (`ctx.getContextUsage()`), which the
 * extension hands the policy: the last response's usage plus Pi's estimate of every later message;
 * undefined when Pi cannot tell (no response since the latest compaction), where the policy sums the
 * blocks as the planner does without a figure.
 */
function piContextTokens(session: Session, messages: readonly MessageLike[]): number | undefined {
	const compaction = session.branch.findLastIndex((e) => e.type === "compaction");
	const since = session.branch.slice(compaction + 1);
	if (!since.some((e) => e.type === "message" && sizeOf(e.message as MessageLike))) return undefined;
	const at = messages.findLastIndex((m) => sizeOf(m) !== undefined);
	let tokens = calculateContextTokens(sizeOf(messages[at]) as Usage);
	for (const message of messages.slice(at + 1)) tokens += estimateTokens(message as never);
	return tokens;
}

/**
 * The window for resuming `session`, from what Pi will send (its context at the leaf, then the
 * prompt): the largest of the windows that request fills to 65, 80 or 100 % (in whole thousands, by
 * the size Pi reports, see piContextTokens) in which the pure planner, on a fresh registry and with
 * that size, folds tool results; and how many it folds there (what the first request must show, at
 * least). A long session gets the 65 % window; a short one, whose old results may all lie in the
 * protected tail of a larger window, a smaller one.
 */
function resumeFigures(session: Session): {
	window: number;
	tokens: number;
	reported: number | undefined;
	expected: number;
} {
	const messages: MessageLike[] = [
		...session.context,
		{
			role: "user",
			content: [{ type: "text", text: PROMPT }],
			timestamp: (session.context.at(-1)?.timestamp ?? 0) + 1,
		},
	];
	let tokens = 0;
	for (const block of linearize(messages)) tokens += block.tokens;
	const reported = piContextTokens(session, messages);
	let figures = { window: 0, tokens, reported, expected: 0 };
	for (const fill of FILLS) {
		const window = Math.ceil((reported ?? tokens) / fill / 1000) * 1000;
		const plan = planTurn({
			messages,
			registry: new FoldRegistry(),
			policy: conduct,
			usage: reported,
			window,
			neverCacheRead: false,
			config: DEFAULT_LADDER,
			savings: new Map(),
		});
		const kinds = new Map(plan.blocks.map((b) => [b.id, b.kind] as const));
		figures = {
			window,
			tokens,
			reported,
			expected: plan.event.filter((op) => kinds.get(op.id) === "toolResult").length,
		};
		if (figures.expected > 0) break;
	}
	return figures;
}

for (const session of loadSessions()) {
	describe(`resuming ${session.name} in pi`, () => {
		it("folds old results on the first request and recalls one sha-verified", async (t) => {
			const { window, tokens, reported, expected } = resumeFigures(session);
			const size = `context ${tokens} tokens, ${reported ?? "no size"} reported by Pi`;
			t.diagnostic(`${size}, window ${window}, ${expected} results fold by the planner`);
			assert.ok(expected > 0, "the planner folds no tool result of this session's context");
			const server = await startModelServer((req, i) => {
				if (i === 0) {
					const code = toolResultsOf(req)
						.map((r) => TAG.exec(r.text)?.[1])
						.find(Boolean);
					if (code) return { toolCalls: [{ name: "recall_folded", args: { codes: [code], lines: "1-3" } }] };
				}
				return { text: "done" };
			});
			const sandbox = await createPiSandbox({
				serverUrl: server.url,
				contextWindow: window,
				settings: { compaction: { enabled: false } },
			});
			try {
				const lines = readFileSync(session.path, "utf8").split("\n");
				const header = JSON.parse(lines[0]);
				header.cwd = sandbox.cwd;
				lines[0] = JSON.stringify(header);
				const file = join(sandbox.sessionDir, session.file);
				writeFileSync(file, lines.join("\n"));
				const run = await sandbox.runPrint({ prompt: PROMPT, extensions: ["."], session: file, timeoutMs: 60_000 });
				assert.equal(run.code, 0, run.stderr);
				assert.equal(server.requests.length, 2, "one recall, then the answer");
				const first = toolResultsOf(server.requests[0]);
				const folded = first.filter((r) => TAG.test(r.text));
				t.diagnostic(`${folded.length} of ${first.length} results folded on the first request`);
				assert.ok(folded.length >= expected, `only ${folded.length} of ${first.length} results folded`);
				assert.ok(!TAG.test(first.at(-1)?.text ?? ""), "the newest result stays raw");
				const recall = toolResultsOf(server.requests[1]).at(-1)?.text ?? "";
				assert.match(recall, /^Recalled #[0-9a-z]{8}: \w+, \d+ lines \(sha256 verified\)\n1: /);
			} finally {
				await server.close();
				await sandbox.cleanup();
			}
		});
	});
}
