/**
 * The recorded sessions through the real `pi` CLI: every session of every available corpus is
 * resumed in a sandbox (its header's cwd pointed at the sandbox), and the first request already
 * folds old tool results of the long history; a recall of one of those codes is served from the
 * session file, sha-verified. Pi builds that request itself from the file (active branch, latest
 * compaction honoured), so what the ladder must do is worked out here from the same context, by its
 * rule (docs/policy.md, "The ladder profile": the e2e sandbox runs that profile), never by asking
 * the planner: see `obligation`. The fill is measured as the extension measures it, by Pi's rule
 * (the last response's usage plus an estimate of every later message), not by the messages' size: a
 * session recorded by another harness can carry usage of a context that harness shrank
 * (codex-civitas-employer: ~23k reported for ~245k of messages), and a window sized by the messages
 * then leaves the policy nothing to fold. A pre-v2 session also proves the ledger route works on a
 * migrated file.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it, test } from "node:test";
import { calculateContextTokens, estimateTokens } from "@earendil-works/pi-coding-agent";
import { linearize, type MessageLike, type ModelKey } from "../../src/core/block.ts";
import { budgetOf, DEFAULT_LADDER, tailOf } from "../../src/core/contract.ts";
import { foldCode, toolResultDigest } from "../../src/core/digest.ts";
import { estTokens } from "../../src/core/tokens.ts";
import { corpusNote, loadSessions, type Session } from "../corpus/corpora.ts";
import { startModelServer, toolResultsOf } from "./harness/model-server.ts";
import { createPiSandbox } from "./harness/pi-runner.ts";

const TAG = /^\{#([0-9a-z]{8}) FOLDED\}/;

const PROMPT = "continue";

/**
 * The model the sandbox resumes every session with (the harness's default: text only). pi-ai sends it
 * none of the thinking the recorded models wrote, and a placeholder for each image, so the blocks are
 * counted as its requests carry them (see messageBlocks).
 */
const MODEL: ModelKey = { provider: "fake", api: "anthropic-messages", id: "fake-model", images: false };

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
 * undefined when Pi cannot tell (no response since the latest compaction), or when the recording's
 * model wrote thinking the sandbox's model is not sent (the figure holds it), where the policy sums
 * the blocks as the planner does without a figure.
 */
function piContextTokens(session: Session, messages: readonly MessageLike[]): number | undefined {
	const compaction = session.branch.findLastIndex((e) => e.type === "compaction");
	const since = session.branch.slice(compaction + 1);
	if (!since.some((e) => e.type === "message" && sizeOf(e.message as MessageLike))) return undefined;
	const at = messages.findLastIndex((m) => sizeOf(m) !== undefined);
	// The recording's model wrote thinking that the sandbox's model is not sent: its figure holds what
	// this request lacks, so the extension gives none and the policy sums the blocks.
	const recorded = messages[at] as { provider?: unknown; api?: unknown; model?: unknown };
	const sameModel = (m: unknown) => {
		const o = m as { provider?: unknown; api?: unknown; model?: unknown };
		return o.provider === recorded.provider && o.api === recorded.api && o.model === recorded.model;
	};
	const switched = recorded.provider !== MODEL.provider || recorded.api !== MODEL.api || recorded.model !== MODEL.id;
	const thought = messages
		.slice(0, at + 1)
		.some(
			(m) =>
				sizeOf(m) !== undefined &&
				sameModel(m) &&
				Array.isArray(m.content) &&
				(m.content as { type?: unknown; thinking?: unknown }[]).some(
					(p) => p?.type === "thinking" && typeof p.thinking === "string" && p.thinking.length > 0,
				),
		);
	if (switched && thought) return undefined;
	let tokens = calculateContextTokens(sizeOf(messages[at]) as Usage);
	for (const message of messages.slice(at + 1)) tokens += estimateTokens(message as never);
	return tokens;
}

/** What the ladder must do to the first request in one window, derived from the blocks alone. */
interface Obligation {
	window: number;
	/** Pi's figure for the context, or the blocks' sum where Pi reports none. */
	usage: number;
	/** Seen tool results outside the protected tail whose digest is shorter: each one a candidate, in order. */
	sure: { code: string; saving: number }[];
	/** Codes of every tool result outside the protected tail that the model has seen. */
	foldable: Set<string>;
	/** True when an event must fire: past the threshold, with enough sure savings for an ordinary or urgent event. */
	fires: boolean;
	/** How many of `sure` fold at the least: the oldest ones that lie before the saving the event needs. */
	least: number;
}

/**
 * What the ladder (DEFAULT_LADDER) must do to `messages` in `window` with context size `usage`, by
 * its rule rather than its code: past the first-fold threshold (foldAt) it fires when its candidates
 * (durable, foldable blocks the model has seen, outside the protected tail, whose digest is shorter)
 * save at least one step of the window, or, past the budget, the floor; it folds the oldest first
 * until usage is one step below the lesser of threshold and budget. The candidates counted here are
 * the seen tool results alone, each saving its text's tokens less its digest's (what a fold puts in
 * its place, digest.ts): the other kinds only add to what the ladder may fold, so the event is
 * certain when these suffice. It must fold every such result before which the foldable blocks
 * outside the tail hold fewer tokens than the event must save (none of them can save more than it
 * holds), so at least `least` of them fold.
 */
function obligation(messages: readonly MessageLike[], usage: number, window: number): Obligation {
	const blocks = linearize(messages, 0, undefined, undefined, MODEL);
	let total = 0;
	for (const block of blocks) total += block.tokens;
	// The protected tail: the newest block and every block that begins within the last `tail` tokens.
	const tail = tailOf(DEFAULT_LADDER, window);
	const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
	const budget = budgetOf(DEFAULT_LADDER, window);
	const threshold = DEFAULT_LADDER.foldAt * window;
	const needed = usage - (Math.min(threshold, budget) - DEFAULT_LADDER.step * window);
	const sure: Obligation["sure"] = [];
	const foldable = new Set<string>();
	let least = 0;
	let before = 0;
	let after = total;
	for (const [i, block] of blocks.entries()) {
		after -= block.tokens;
		if (i === blocks.length - 1 || after < tail) break;
		if (!block.durable || !block.foldable) continue;
		if (block.kind === "toolResult" && block.msg < lastAssistant) {
			const code = foldCode(block.id);
			foldable.add(code);
			const digest = toolResultDigest({
				code,
				toolName: block.toolName ?? "tool",
				text: block.text,
				isError: block.isError === true,
			});
			const saving = estTokens(block.text) - estTokens(digest);
			if (saving > 0) {
				sure.push({ code, saving });
				if (before < needed) least++;
			}
		}
		before += block.tokens;
	}
	const mass = sure.reduce((sum, r) => sum + r.saving, 0);
	const step = (usage > budget ? DEFAULT_LADDER.floor : DEFAULT_LADDER.step) * window;
	return { window, usage, sure, foldable, fires: usage >= threshold && mass >= step, least };
}

/**
 * The window for resuming `session` and what the ladder must do in it: the largest of the windows
 * Pi's figure for the request (its context at the leaf, then the prompt; see piContextTokens) fills
 * to 65, 80 or 100 % (in whole thousands) in which a fold event is certain. A long session gets the
 * 65 % window; a short one, whose old results may all lie in the protected tail of a larger window,
 * or one whose old results are small, a smaller one. When none is certain (a session resumed just
 * after a compaction can hold one large result near its end and little else), the 65 % window's
 * figures, with `certain` false.
 */
function resumeFigures(session: Session): {
	tokens: number;
	reported: number | undefined;
	must: Obligation;
	certain: boolean;
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
	for (const block of linearize(messages, 0, undefined, undefined, MODEL)) tokens += block.tokens;
	const reported = piContextTokens(session, messages);
	const windowAt = (fill: number) => Math.ceil((reported ?? tokens) / fill / 1000) * 1000;
	for (const fill of FILLS) {
		const must = obligation(messages, reported ?? tokens, windowAt(fill));
		if (must.fires && must.least > 0) return { tokens, reported, must, certain: true };
	}
	return { tokens, reported, must: obligation(messages, reported ?? tokens, windowAt(FILLS[0])), certain: false };
}

const sessions = loadSessions();

test("the corpora resumed: the project's own sessions always, the others where present", (t) => {
	t.diagnostic(corpusNote([["resumed in pi", sessions]]));
	assert.ok(
		sessions.some((s) => s.corpus === "project"),
		"test/fixtures/sessions holds no session",
	);
});

for (const session of sessions) {
	describe(`resuming ${session.name} in pi`, () => {
		it("folds old results on the first request, oldest first, and recalls one sha-verified", async (t) => {
			const { tokens, reported, must, certain } = resumeFigures(session);
			const { window, sure, foldable, least } = must;
			const size = `context ${tokens} tokens, ${reported ?? "no size"} reported by Pi`;
			t.diagnostic(
				certain
					? `${size}, window ${window}: ${sure.length} sure candidates, at least ${least} must fold`
					: `${size}: no window of ${FILLS.join(", ")} fill makes a fold event certain; in ${window}, only what may fold folds`,
			);
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
				const first = toolResultsOf(server.requests[0]);
				const codes = first.map((r) => TAG.exec(r.text)?.[1]).filter((c) => c !== undefined);
				t.diagnostic(`${codes.length} of ${first.length} results folded on the first request`);
				const stray = codes.filter((c) => !foldable.has(c));
				assert.deepEqual(stray, [], "a folded result is in the protected tail, unseen, or not the session's");
				assert.ok(!TAG.test(first.at(-1)?.text ?? ""), "the newest result stays raw");
				if (!certain && codes.length === 0) {
					assert.equal(server.requests.length, 1, "nothing folded, nothing to recall: the answer alone");
					return;
				}
				assert.equal(server.requests.length, 2, "one recall, then the answer");
				const need = certain ? least : 0;
				assert.ok(codes.length >= need, `${codes.length} results folded, the ladder must fold ${need}`);
				// Oldest first: no sure candidate stays raw before a folded one.
				const folded = new Set(codes);
				const newest = sure.findLastIndex((r) => folded.has(r.code));
				const skipped = sure.slice(0, newest).filter((r) => !folded.has(r.code));
				assert.deepEqual(skipped, [], "an older candidate stayed raw while a newer one folded");
				const recall = toolResultsOf(server.requests[1]).at(-1)?.text ?? "";
				assert.match(recall, /^Recalled #[0-9a-z]{8}: \w+, \d+ lines \(sha256 verified\)\n1: /);
			} finally {
				await server.close();
				await sandbox.cleanup();
			}
		});
	});
}
