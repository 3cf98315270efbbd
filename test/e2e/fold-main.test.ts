/**
 * End-to-end proof of context-fold through the real `pi` CLI (issue 3, scenarios 1 to 4), for the
 * Anthropic Messages and the OpenAI chat-completions wire APIs.
 *
 * One `pi -p` run per API: eight long bash outputs (each with a planted error line among 400 ok
 * lines) push usage past the fold threshold of a 20k window; the scripted model then recalls the
 * first folded block (whole, grep, lines, search), unfolds it, and runs two more small commands.
 * A second `pi -p` run resumes the same session file and recalls again. Every assertion is on the
 * request bodies captured by the scripted model server.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { withoutAdvisories } from "./harness/advisories.ts";
import {
	ANY_TAG,
	analyze,
	FoldTracker,
	headJson,
	linesOf,
	messageJson,
	prefixBreak,
	type RequestFolds,
	resultText,
	unpaired,
	usageSeenBefore,
} from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	lastUserText,
	type ModelServer,
	type Reply,
	startModelServer,
	toolNamesOf,
} from "./harness/model-server.ts";
import { createPiSandbox, type PiApi, type PiSandbox, type RunResult, readSessionFile } from "./harness/pi-runner.ts";

const WINDOW = 20_000;
const THRESHOLD = 0.45 * WINDOW;
const BATCHES = 8;
const MAIN_PROMPT = "Run the eight batches, then look back at the first one.";
const RESUME_PROMPT = "Back again: check batch 2 once more.";
const RUN_TIMEOUT_MS = 90_000;

/** Bash command printing 400 ok lines with a planted error line (line 201) in the middle. */
function batchCommand(k: number): string {
	return (
		`for i in $(seq 1 200); do echo "batch ${k} line $i ok"; done; echo "Error: planted failure ${k}"; ` +
		`for i in $(seq 201 400); do echo "batch ${k} line $i ok"; done`
	);
}

/** The 401 lines batch `k` prints. */
function batchLines(k: number): string[] {
	const out: string[] = [];
	for (let i = 1; i <= 200; i++) out.push(`batch ${k} line ${i} ok`);
	out.push(`Error: planted failure ${k}`);
	for (let i = 201; i <= 400; i++) out.push(`batch ${k} line ${i} ok`);
	return out;
}

const pad = (k: number) => String(k).padStart(2, "0");

/** Tool-call ids of one API run (Anthropic-like `toolu_…`, OpenAI-like `call_…`). */
function ids(prefix: string) {
	return {
		batch: (k: number) => `${prefix}_batch_${pad(k)}`,
		recallWhole: `${prefix}_recall_whole`,
		recallGrep: `${prefix}_recall_grep`,
		recallLines: `${prefix}_recall_lines`,
		recallSearch: `${prefix}_recall_search`,
		recallUnknown: `${prefix}_recall_unknown`,
		recallMisspelled: `${prefix}_recall_misspelled`,
		unfold: `${prefix}_unfold`,
		after1: `${prefix}_after_1`,
		after2: `${prefix}_after_2`,
		resumeRecall: `${prefix}_resume_recall`,
	};
}

/**
 * The scripted model: a function of the request only (which results it carries, which digests it
 * shows), so each run is deterministic. Codes are read from digests the model was sent.
 */
function mainScript(id: ReturnType<typeof ids>) {
	const tracker = new FoldTracker();
	return (req: CapturedRequest): Reply => {
		const folds = tracker.observe(req);
		if (req.index > 60) return { text: "guard: too many requests" };
		const has = (callId: string) => folds.results.some((r) => r.id === callId);
		const call = (callId: string, name: string, args: Record<string, unknown>): Reply => ({
			toolCalls: [{ id: callId, name, args }],
		});
		if (lastUserText(req) === RESUME_PROMPT) {
			if (has(id.resumeRecall)) return { text: "resumed" };
			const code2 = folds.folded.get(id.batch(2))?.code;
			if (!code2) return { text: "no digest of batch 2 after the restart" };
			return call(id.resumeRecall, "recall_folded", { codes: [code2], grep: "batch 2 line 50 ok" });
		}
		for (let k = 1; k <= BATCHES; k++) {
			if (!has(id.batch(k))) return call(id.batch(k), "bash", { command: batchCommand(k) });
		}
		const code1 = tracker.codes.get(id.batch(1));
		if (!code1) return { text: "no digest of batch 1 was ever sent" };
		if (!has(id.recallWhole)) return call(id.recallWhole, "recall_folded", { codes: [code1] });
		if (!has(id.recallGrep)) {
			return call(id.recallGrep, "recall_folded", { codes: [`#${code1}`], grep: "BATCH 1 Line 123 OK" });
		}
		if (!has(id.recallLines)) {
			return call(id.recallLines, "recall_folded", { codes: [`{#${code1} FOLDED}`], lines: "200-202" });
		}
		if (!has(id.recallSearch)) return call(id.recallSearch, "recall_folded", { search: "batch 2 line 77 ok" });
		if (!has(id.recallUnknown)) return call(id.recallUnknown, "recall_folded", { codes: ["zzzzzzzz"] });
		if (!has(id.recallMisspelled))
			return call(id.recallMisspelled, "recall_folded", { codes: [code1], line: "200-202" });
		if (!has(id.unfold)) return call(id.unfold, "unfold", { codes: [code1] });
		if (!has(id.after1)) return call(id.after1, "bash", { command: "echo after unfold one" });
		if (!has(id.after2)) return call(id.after2, "bash", { command: "echo after unfold two" });
		return { text: "main run done" };
	};
}

/** The `is_error` an Anthropic request carries on the tool result of `callId`. */
function wireResultFlag(req: CapturedRequest, callId: string): unknown {
	for (const message of (req.body.messages ?? []) as { content?: unknown }[]) {
		if (!Array.isArray(message.content)) continue;
		const block = message.content.find((b) => b?.type === "tool_result" && b.tool_use_id === callId);
		if (block) return block.is_error;
	}
	assert.fail(`no tool_result for ${callId}`);
}

/** Index of the first request carrying the result of `callId`. */
function firstWith(folds: readonly RequestFolds[], callId: string): number {
	const i = folds.findIndex((f) => f.results.some((r) => r.id === callId));
	assert.ok(i >= 0, `no request carries the result of ${callId}`);
	return i;
}

for (const api of ["anthropic-messages", "openai-completions"] as PiApi[]) {
	const id = ids(api === "anthropic-messages" ? "toolu" : "call");

	describe(`context-fold through pi -p (${api})`, () => {
		let server: ModelServer;
		let sandbox: PiSandbox;
		let run1: RunResult;
		let run2: RunResult;
		/** Requests [0, split) belong to the first run, [split, end) to the resumed run. */
		let split = 0;
		let folds: RequestFolds[] = [];
		let sessionFile = "";

		before(async () => {
			server = await startModelServer(mainScript(id));
			sandbox = await createPiSandbox({
				serverUrl: server.url,
				api,
				contextWindow: WINDOW,
				settings: { compaction: { enabled: false } },
			});
			run1 = await sandbox.runPrint({ prompt: MAIN_PROMPT, extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
			split = server.requests.length;
			const file = await sandbox.latestSessionFile();
			assert.ok(file, "the first run wrote no session file");
			sessionFile = file;
			run2 = await sandbox.runPrint({
				prompt: RESUME_PROMPT,
				session: file,
				extensions: ["."],
				timeoutMs: RUN_TIMEOUT_MS,
			});
			folds = analyze(server.requests);
		});
		after(async () => {
			await server?.close();
			await sandbox?.cleanup();
		});

		it("both runs exit on their own with the scripted final answer", () => {
			assert.equal(run1.code, 0, run1.stderr);
			assert.equal(run1.stdout.trim(), "main run done", run1.stderr);
			assert.equal(run2.code, 0, run2.stderr);
			assert.equal(run2.stdout.trim(), "resumed", run2.stderr);
			assert.deepEqual(server.errors, []);
			// An ordinary session says nothing: no warning, no notice, nothing at all on stderr from us.
			assert.doesNotMatch(withoutAdvisories(run1.stderr + run2.stderr), /context-fold/i);
		});

		it("scenario 1: long bash outputs pass the threshold and later requests carry digests keeping the planted errors", () => {
			const first = folds.findIndex((f) => f.folded.size > 0);
			assert.ok(first > 0 && first < split, `no request of the first run carries a digest (first=${first})`);
			const seen = usageSeenBefore(first, server.usages, folds);
			assert.ok(seen >= THRESHOLD, `first fold at request ${first} with usage ~${seen} < threshold ${THRESHOLD}`);
			for (let i = 0; i < first; i++) {
				for (const r of folds[i].results) assert.doesNotMatch(r.text, ANY_TAG, `request ${i}: ${r.id}`);
			}

			const foldedBatches = new Set<number>();
			for (const f of folds) {
				for (let k = 1; k <= BATCHES; k++) {
					const digest = f.folded.get(id.batch(k));
					if (!digest) continue;
					foldedBatches.add(k);
					assert.match(digest.text, /^\{#[0-9a-z]{8} FOLDED\} bash: 401 lines/, `request ${f.index} batch ${k}`);
					assert.ok(
						linesOf(digest.text).some((line) => line.endsWith(`: Error: planted failure ${k}`)),
						`request ${f.index}: digest of batch ${k} lost its planted error line:\n${digest.text}`,
					);
					assert.ok(!digest.text.includes(`batch ${k} line 150 ok`), `digest of batch ${k} carries ok lines`);
					assert.ok(digest.text.length < 400, `digest of batch ${k} is ${digest.text.length} chars`);
				}
			}
			assert.ok(foldedBatches.has(1) && foldedBatches.has(2), `folded batches: ${[...foldedBatches]}`);
			// Codes are distinct per block.
			const codes = [...new Set(folds.flatMap((f) => [...f.folded.values()].map((d) => d.code)))];
			const owners = new Set(folds.flatMap((f) => [...f.folded].map(([callId, d]) => `${callId}=${d.code}`)));
			assert.equal(owners.size, codes.length, `a code names two blocks: ${[...owners]}`);
		});

		it("scenario 2: frozen digest bytes, append-only requests between fold events, every call paired, warm cache", () => {
			// A result goes raw → one digest (byte-identical from then on) → raw again only after unfold.
			const history = new Map<string, { digest?: string; unfoldedAt?: number }>();
			for (const f of folds) {
				assert.deepEqual(f.mutated, [], `request ${f.index}: results changed without a fold tag`);
				for (const r of f.results) {
					const h = history.get(r.id) ?? {};
					history.set(r.id, h);
					const digest = f.folded.get(r.id);
					if (digest) {
						assert.equal(h.unfoldedAt, undefined, `request ${f.index}: ${r.id} folded again after unfold`);
						if (h.digest !== undefined) assert.equal(digest.text, h.digest, `request ${f.index}: ${r.id}`);
						h.digest = digest.text;
					} else if (h.digest !== undefined && h.unfoldedAt === undefined) {
						h.unfoldedAt = f.index;
					}
				}
			}
			const unfolded = [...history].filter(([, h]) => h.unfoldedAt !== undefined).map(([callId]) => callId);
			assert.deepEqual(unfolded, [id.batch(1)], "only the block the model unfolded may come back raw");

			// The fold tools join the declarations with the first digest (this wire then declares the whole
			// tool list again); the resumed session, which has folds, declares them from its start.
			const first = folds.findIndex((f) => f.folded.size > 0);
			for (const [from, to] of [
				[0, first],
				[first, split],
				[split, server.requests.length],
			]) {
				for (let i = from; i < to; i++) {
					const req = server.requests[i];
					assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] }, `request ${i}`);
					assert.equal(headJson(req), headJson(server.requests[from]), `request ${i}: system/tools moved`);
					const tools = toolNamesOf(req);
					const declared = tools.includes("recall_folded") && tools.includes("unfold");
					assert.equal(declared, i >= first, `request ${i} tools: ${tools}`);
				}
			}

			let quiet = 0;
			let events = 0;
			for (let i = 0; i + 1 < server.requests.length; i++) {
				if (i + 1 === split) continue;
				if (folds[i].signature !== folds[i + 1].signature) {
					events++;
					continue;
				}
				quiet++;
				const a = messageJson(server.requests[i]);
				const b = messageJson(server.requests[i + 1]);
				const at = prefixBreak(a, b);
				assert.equal(
					at,
					-1,
					`requests ${i} → ${i + 1} (no fold event): message ${at} changed\n${a[at]?.slice(0, 300)}\n---\n${b[at]?.slice(0, 300)}`,
				);
				// The simulated cache reads the whole previous prompt (all but its closing `]}`).
				const prev = server.usages[i]!;
				const next = server.usages[i + 1]!;
				assert.ok(
					next.commonPrefixChars >= prev.promptChars - 2,
					`request ${i + 1}: cached prefix ${next.commonPrefixChars} of previous ${prev.promptChars} chars`,
				);
				assert.ok(next.cacheRead >= prev.promptTokens - 2, `request ${i + 1}: cache read ${next.cacheRead}`);
			}
			assert.ok(events >= 3, `expected at least two fold events and the unfold, saw ${events} changes`);
			assert.ok(quiet >= 8, `only ${quiet} request pairs without a fold event`);
		});

		it("scenario 3: recall_folded serves the original (whole, grep, lines, search); unfold brings it back raw", async () => {
			const code1 = folds.map((f) => f.folded.get(id.batch(1))?.code).find((c) => c !== undefined);
			const code2 = folds.map((f) => f.folded.get(id.batch(2))?.code).find((c) => c !== undefined);
			assert.ok(code1 && code2, "batches 1 and 2 were never folded");
			const raw1 = folds[firstWith(folds, id.batch(1))].results.find((r) => r.id === id.batch(1))!.text;
			assert.deepEqual(
				linesOf(raw1.replace(/\n$/, "")),
				batchLines(1),
				"the first delivery of batch 1 is the raw output",
			);

			// The recall call was issued while the digest was on the wire.
			const wholeAt = firstWith(folds, id.recallWhole);
			assert.ok(folds[wholeAt - 1].folded.has(id.batch(1)), "batch 1 was not folded when the model recalled it");

			const whole = resultText(folds[wholeAt], id.recallWhole)!;
			assert.match(whole, new RegExp(`^Recalled #${code1}: bash, 401 lines \\(sha256 verified\\)\\n`));
			const wholeLines = linesOf(whole);
			for (const line of batchLines(1)) assert.ok(wholeLines.includes(line), `whole recall lacks "${line}"`);

			const grep = resultText(folds[firstWith(folds, id.recallGrep)], id.recallGrep)!;
			assert.match(grep, /1 matching line/);
			// The match, numbered `n:`, with two lines of context on each side, numbered `n-`.
			for (const n of [121, 122, 123, 124, 125]) {
				const line = `${n}${n === 123 ? ":" : "-"} batch 1 line ${n} ok`;
				assert.ok(linesOf(grep).includes(line), `grep lacks "${line}":\n${grep}`);
			}
			assert.ok(!grep.includes("line 126 ok") && !grep.includes("line 120 ok"), grep);

			const slice = resultText(folds[firstWith(folds, id.recallLines)], id.recallLines)!;
			assert.deepEqual(linesOf(slice).slice(1), [
				"200: batch 1 line 200 ok",
				"201: Error: planted failure 1",
				"202: batch 1 line 201 ok",
			]);

			const search = resultText(folds[firstWith(folds, id.recallSearch)], id.recallSearch)!;
			assert.ok(search.includes(`Recalled #${code2}:`), search);
			assert.ok(search.includes("batch 2 line 77 ok"), search);

			// The digest itself never held these lines: the recalls really read the original back.
			const digest1 = folds.map((f) => f.folded.get(id.batch(1))?.text).find((t) => t !== undefined)!;
			for (const probe of ["batch 1 line 123 ok", "batch 1 line 200 ok", "batch 1 line 400 ok"]) {
				assert.ok(!digest1.includes(probe), `digest holds "${probe}"`);
			}

			// A code this session never made serves nothing: an error result, as a thrown error would be
			// (Anthropic's wire carries the flag; OpenAI's chat completions has none, the session file does).
			const unknownAt = firstWith(folds, id.recallUnknown);
			assert.match(resultText(folds[unknownAt], id.recallUnknown)!, /#zzzzzzzz is not a fold code of this session/);
			if (api === "anthropic-messages") {
				assert.equal(wireResultFlag(server.requests[unknownAt], id.recallUnknown), true);
				assert.equal(wireResultFlag(server.requests[unknownAt], id.recallSearch), false);
			}
			const stored = (await readSessionFile(sessionFile)).flatMap((e) => {
				const m = e.message as { role?: string; toolCallId?: string; isError?: boolean } | undefined;
				return m?.role === "toolResult" && (m.toolCallId === id.recallUnknown || m.toolCallId === id.recallSearch)
					? [[m.toolCallId, m.isError]]
					: [];
			});
			assert.deepEqual(Object.fromEntries(stored), { [id.recallSearch]: false, [id.recallUnknown]: true });
			// An argument the tool does not take is refused, naming the one meant, not ignored for a whole block.
			const misspelled = resultText(folds[firstWith(folds, id.recallMisspelled)], id.recallMisspelled)!;
			assert.match(misspelled, /^recall_folded: unknown argument `line` \(did you mean `lines`\?\)/);
			assert.doesNotMatch(misspelled, /batch 1 line/);

			const unfoldAt = firstWith(folds, id.unfold);
			assert.match(resultText(folds[unfoldAt], id.unfold)!, new RegExp(`^Unfolded #${code1}:`));
			assert.ok(folds[unfoldAt - 1].folded.has(id.batch(1)), "batch 1 was already raw before the unfold");
			// From the next request on (this one and every later one, the resumed run included), raw again.
			for (let i = unfoldAt; i < folds.length; i++) {
				assert.equal(resultText(folds[i], id.batch(1)), raw1, `request ${i}: batch 1 is not raw`);
			}
			assert.ok(folds.length - unfoldAt >= 3, "too few requests after the unfold");
		});

		it("scenario 4: the resumed session renders the same folded bytes for the earlier messages", () => {
			assert.ok(split > 0 && server.requests.length >= split + 2, `requests: ${split} + ${server.requests.length}`);
			const last = server.requests[split - 1];
			const resumed = server.requests[split];
			assert.equal(lastUserText(resumed), RESUME_PROMPT);
			const a = messageJson(last);
			const b = messageJson(resumed);
			assert.equal(b.length, a.length + 2, "resumed request = previous messages + final answer + new prompt");
			const newlyFolded = new Set([...folds[split].folded.keys()].filter((k) => !folds[split - 1].folded.has(k)));
			for (let m = 0; m < a.length; m++) {
				if (a[m] === b[m]) continue;
				const touched = [...newlyFolded].some((callId) => a[m].includes(callId));
				assert.ok(
					touched,
					`message ${m} differs after the restart:\n${a[m].slice(0, 300)}\n---\n${b[m].slice(0, 300)}`,
				);
			}
			for (const [callId, d] of folds[split - 1].folded) {
				assert.equal(folds[split].folded.get(callId)?.text, d.text, `${callId} renders differently after restart`);
			}
			assert.ok(folds[split - 1].folded.size >= 2, "too few folded blocks to prove anything");

			const recall = resultText(folds[firstWith(folds, id.resumeRecall)], id.resumeRecall)!;
			assert.match(recall, /\(sha256 verified\)/);
			assert.ok(linesOf(recall).includes("50: batch 2 line 50 ok"), recall);
		});
	});
}
