/**
 * Deterministic compaction, seed index and handoff through the adapter's hooks (stub host).
 */
import assert from "node:assert/strict";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { HANDOFF_MESSAGE_TYPE, sameFile, seedSource } from "../../src/adapters/pi/compaction/handoff.ts";
import { INSTRUCTIONS_NOT_APPLIED } from "../../src/adapters/pi/compaction/hooks.ts";
import { ParentSession } from "../../src/adapters/pi/fold/parent-session.ts";
import { foldCode, toolResultDigest } from "../../src/core/digest.ts";
import { parseSeedIndex } from "../../src/core/index/reader.ts";
import { HANDOFF_HEADER, SUMMARY_HEADER } from "../../src/core/summary.ts";
import { bashSession, loadStub, moreChecks, resultTexts } from "./stub-pi.ts";

type Compaction = { compaction?: { summary: string; firstKeptEntryId: string; details: unknown } } | undefined;

function messagesOf(stub: ReturnType<typeof loadStub>) {
	return stub.entries.filter((e) => e.type === "message").map((e) => e.message as Record<string, unknown>);
}

async function compact(stub: ReturnType<typeof loadStub>, upTo: number, extra: Record<string, unknown> = {}) {
	const messages = messagesOf(stub);
	const [result] = (await stub.emit("session_before_compact", {
		preparation: {
			messagesToSummarize: messages.slice(0, upTo),
			turnPrefixMessages: [],
			firstKeptEntryId: "keep",
			tokensBefore: 1234,
			...extra,
		},
		reason: "manual",
	})) as Compaction[];
	return result;
}

function withFileTools(stub: ReturnType<typeof loadStub>) {
	stub.addMessage({
		role: "assistant",
		content: [
			{
				type: "toolCall",
				id: "w1",
				name: "write",
				arguments: { path: "src/planted/Widget.ts", content: "x".repeat(900) },
			},
		],
		responseId: "rw",
		usage: {},
		stopReason: "toolUse",
		timestamp: 1_800_000_000_000,
	});
	stub.addMessage({
		role: "toolResult",
		toolCallId: "w1",
		toolName: "write",
		content: [{ type: "text", text: "Wrote 900 bytes" }],
		isError: false,
		timestamp: 1_800_000_000_001,
	});
}

describe("deterministic compaction", () => {
	it("tells the terminal UI's user when a compaction used its summary; says nothing of Pi's own, nor headless", async () => {
		const entry = {
			tokensBefore: 15_995,
			details: { contextFold: { v: 1, seq: 1, codes: ["aaaaaaaa", "bbbbbbbb"] } },
		};
		const stub = loadStub();
		stub.mode = "tui";
		stub.hasUI = true;
		await stub.emit("session_start", { reason: "startup" });
		await stub.emit("session_compact", { reason: "threshold", compactionEntry: entry, fromExtension: true });
		const told = () => stub.ui.notices.filter((n) => n.message.includes("compacted the context from ~"));
		// Pi redraws the transcript on compaction_end, right after this event: the notice waits for it.
		assert.deepEqual(told(), [], "not before Pi's redraw");
		await new Promise((resolve) => setTimeout(resolve, 0));
		assert.deepEqual(told(), [
			{
				message:
					"context-fold: compacted the context from ~16k tokens with its deterministic summary (no model call); the newest messages stay raw, and each of the 2 blocks it summarised is still read by /context-fold recall <code>",
				level: "info",
			},
		]);
		await stub.emit("session_compact", {
			reason: "manual",
			compactionEntry: { tokensBefore: 9000 },
			fromExtension: false,
		});
		await new Promise((resolve) => setTimeout(resolve, 0));
		assert.equal(told().length, 1, "Pi's own summary: not ours to tell");
		const headless = loadStub();
		await headless.emit("session_start", { reason: "startup" });
		await headless.emit("session_compact", { reason: "threshold", compactionEntry: entry, fromExtension: true });
		await new Promise((resolve) => setTimeout(resolve, 0));
		assert.deepEqual(
			headless.stderr.filter((line) => line.includes("compacted the context from ~")),
			[],
			"pi -p stays quiet",
		);
	});

	it("returns a verbatim summary: intents, files, commands, error lines, pointers; no model call", async () => {
		const stub = loadStub();
		bashSession(stub, 4);
		withFileTools(stub);
		await stub.emit("session_start", { reason: "startup" });
		const result = await compact(stub, messagesOf(stub).length);
		const summary = result?.compaction?.summary ?? "";
		assert.ok(summary.startsWith(SUMMARY_HEADER));
		assert.match(summary, /run the checks/);
		assert.match(summary, /src\/planted\/Widget\.ts/);
		assert.match(summary, /`check 2`/);
		assert.match(summary, /Error: check 3 failed at step 7/);
		assert.ok(summary.includes(`{#${foldCode("r:call_0")} FOLDED}`));
		assert.equal(result?.compaction?.firstKeptEntryId, "keep");
		assert.ok(summary.length <= 24_000);
		// A pointer counts its block's tokens as the block's digest does (a chars/4 estimate, no framing).
		const text = (messagesOf(stub)[2] as { content: { text: string }[] }).content[0].text;
		const digest = toolResultDigest({ code: "k3x9a0b2", toolName: "bash", text, isError: false });
		const estimate = /, (~\d+ tokens)\./.exec(digest)?.[1];
		assert.ok(estimate && summary.includes(`{#${foldCode("r:call_0")} FOLDED} bash, turn 1, ${estimate}\n`), summary);
	});

	it("records every foldable leaver, so recall serves it after it left history and after a restart", async () => {
		const stub = loadStub();
		bashSession(stub, 4);
		await stub.emit("session_start", { reason: "startup" });
		await compact(stub, 6);
		const code = foldCode("r:call_1");
		const firstKept = stub.entries.filter((e) => e.type === "message")[6];
		stub.compact(String(firstKept.id));
		const sent = await stub.request();
		assert.ok(!sent.some((m) => m.toolCallId === "call_1"), "the block left the request");
		assert.equal(sent[0].role, "compactionSummary");
		const recalled = await stub.call("recall_folded", { codes: [code], grep: "failed" });
		assert.match(recalled, /sha256 verified/);
		assert.match(recalled, /Error: check 1 failed at step 7/);
		await stub.emit("session_start", { reason: "resume" });
		assert.match(await stub.call("recall_folded", { codes: [code], lines: "1-2" }), /line 0 of check 1 output ok/);
	});

	it("a compacted custom message (a handoff seed, another extension's) is recalled by its code, sha256 verified", async () => {
		const stub = loadStub();
		const at = "2026-12-05T10:00:00.123Z";
		const seed = "context-fold handoff seed\nGoal: ship the parser\nError: parser.test.ts failed at line 12";
		stub.entries.push({
			type: "custom_message",
			id: "c1",
			parentId: null,
			timestamp: at,
			customType: "seed",
			content: seed,
			display: true,
		});
		bashSession(stub, 4);
		await stub.emit("session_start", { reason: "startup" });
		// The custom message as Pi puts it in the context (createCustomMessage), then the session's messages.
		const custom = { role: "custom", customType: "seed", content: seed, display: true, timestamp: Date.parse(at) };
		await compact(stub, 6, { messagesToSummarize: [custom, ...messagesOf(stub).slice(0, 6)] });
		const code = foldCode(`u:custom:${Date.parse(at)}`);
		const recalled = await stub.call("recall_folded", { codes: [code] });
		assert.match(recalled, /sha256 verified/, recalled);
		assert.match(recalled, /Error: parser\.test\.ts failed at line 12/);
	});

	it("a handoff seed that leaves history is carried by the compaction, and by every later one", async () => {
		const stub = loadStub();
		const at = "2026-12-05T10:00:00.123Z";
		const seed = `${HANDOFF_HEADER}\n\nGoal: ship the parser\nParent session: /p/s.jsonl\n${"- fact\n".repeat(1000)}`;
		stub.entries.push({
			type: "custom_message",
			id: "c1",
			parentId: null,
			timestamp: at,
			customType: HANDOFF_MESSAGE_TYPE,
			content: seed,
			display: true,
		});
		bashSession(stub, 8);
		await stub.emit("session_start", { reason: "startup" });
		const custom = {
			role: "custom",
			customType: HANDOFF_MESSAGE_TYPE,
			content: seed,
			display: true,
			timestamp: Date.parse(at),
		};
		const first = await compact(stub, 4, { messagesToSummarize: [custom, ...messagesOf(stub).slice(0, 4)] });
		const summary = String(first?.compaction?.summary);
		assert.match(
			summary,
			/\n## Carried from the handoff seed this session started from\n# context-fold handoff seed\n/,
		);
		assert.match(summary, /Goal: ship the parser\nParent session: \/p\/s\.jsonl/);
		// Too long to carry whole: cut, naming the code that reads it back.
		const code = foldCode(`u:custom:${Date.parse(at)}`);
		assert.match(summary, new RegExp(`… the seed is cut here; recall_folded codes=\\["${code}"\\] reads it whole`));
		assert.match(await stub.call("recall_folded", { codes: [code] }), /sha256 verified/);
		stub.compact("keep", summary);
		const second = await compact(stub, 8, { previousSummary: summary });
		assert.match(String(second?.compaction?.summary), /Goal: ship the parser/, "the next compaction carries it on");
	});

	it("a handoff seed the user pasted as a prompt, 0.5.1's or this version's, is carried too", async () => {
		for (const header of ["# Session handoff seed — 2026-01-02T03:04:05.000Z", HANDOFF_HEADER]) {
			for (const parent of ["/p/parent.jsonl", "(in-memory session, not saved)"]) {
				const stub = loadStub();
				const seed = `${header}\nParent session: ${parent}\n\n## Goal for the next session\nfinish src/only-in-seed.ts\n- {#pa5ted01 FOLDED} bash: 400 lines\n`;
				// After words of the user's own, as a second content part.
				const content = [
					{ type: "text", text: "Continue from this handoff:" },
					{ type: "text", text: seed },
				];
				stub.addMessage({ role: "user", content, timestamp: 1_600_000_000_000 });
				bashSession(stub, 8);
				await stub.emit("session_start", { reason: "startup" });
				const result = await compact(stub, 4, { messagesToSummarize: messagesOf(stub).slice(0, 5) });
				const summary = String(result?.compaction?.summary);
				assert.ok(
					summary.includes("src/only-in-seed.ts") && summary.includes(`Parent session: ${parent}`),
					summary,
				);
				const heading = "\n## Carried from the handoff seed this session started from\n";
				if (parent.startsWith("/")) {
					// Its codes are read from the parent it names, as a seed message's are: carried as they stand.
					assert.ok(summary.includes(`${heading}${header}\n`), summary);
					assert.ok(summary.includes("- {#pa5ted01 FOLDED} bash: 400 lines"), summary);
					continue;
				}
				// No saved parent: its codes read nowhere here, and it says so, its tags quoted.
				assert.ok(summary.includes(`${heading}(A seed passed as a prompt`), summary);
				assert.ok(summary.includes(`recall_folded cannot read its codes here.)\n${header}\n`), summary);
				assert.ok(summary.includes("- [quoted tag #pa5ted01] bash: 400 lines"), summary);
				assert.ok(!summary.includes("{#pa5ted01 FOLDED}"), "no tag the engine wrote names a block it cannot serve");
			}
		}
	});

	it("a summary Pi wrote before is carried by every later compaction, not only the first", async () => {
		const stub = loadStub();
		bashSession(stub, 4);
		await stub.emit("session_start", { reason: "startup" });
		const foreign = "Summary by the model: the user requires Postgres 16; decision D-17 keeps the legacy API.";
		const first = await compact(stub, 3, { previousSummary: foreign });
		stub.compact("keep", first?.compaction?.summary);
		const second = await compact(stub, 6, { previousSummary: first?.compaction?.summary });
		stub.compact("keep", second?.compaction?.summary);
		const third = await compact(stub, 8, { previousSummary: second?.compaction?.summary });
		for (const [n, built] of [first, second, third].entries()) {
			assert.match(String(built?.compaction?.summary), /decision D-17 keeps the legacy API/, `compaction ${n + 1}`);
			// It is said to be the model's: the summary's preamble claims only context-fold's own text.
			assert.match(
				String(built?.compaction?.summary),
				/\(Pi's own summary, written by a model and carried as it was/,
			);
		}
	});

	it("a summary Pi wrote that is carried cut names the code that reads it whole, sha-verified, and search finds its end", async () => {
		const stub = loadStub();
		bashSession(stub, 4);
		// Plain Pi compacted before context-fold was installed: its model's summary, far over the carried budget.
		const foreign = `Summary by the model:\n${Array.from({ length: 300 }, (_, i) => `- fact ${i}: kept`).join("\n")}\n- NATIVE-FACT-OMEGA closes it`;
		stub.compact("keep", foreign);
		await stub.emit("session_start", { reason: "startup" });
		const built = await compact(stub, 3, { previousSummary: foreign });
		const summary = String(built?.compaction?.summary);
		assert.doesNotMatch(summary, /NATIVE-FACT-OMEGA/, "the test's summary was not cut");
		const code = /… Pi's summary is cut here; recall_folded codes=\["([0-9a-z]{8})"\] reads it whole/.exec(
			summary,
		)?.[1];
		assert.ok(code, summary.slice(-400));
		const whole = await stub.call("recall_folded", { codes: [code] });
		assert.match(whole.split("\n")[0], /sha256 verified/);
		assert.ok(whole.includes("- NATIVE-FACT-OMEGA closes it"), whole.slice(-300));
		assert.match(await stub.call("recall_folded", { search: "NATIVE-FACT-OMEGA" }), /^1 block contains/);
		// A restart reads the record back: the code still serves it.
		await stub.emit("session_start", { reason: "resume" });
		assert.ok((await stub.call("recall_folded", { codes: [code] })).includes("NATIVE-FACT-OMEGA"));
	});

	it("a summary of ours the index cannot rebuild is cut after a whole line, naming the code that reads it whole", async () => {
		const stub = loadStub();
		bashSession(stub, 4);
		// An earlier compaction of ours whose seed-index record is gone (its file lost): far over the carried budget.
		const lines = Array.from(
			{ length: 300 },
			(_, i) => `- [turn ${i}] {#${foldCode(`lost-${i}`)} FOLDED} bash: FAIL case ${i}`,
		);
		const ours = `${SUMMARY_HEADER}\npreamble\n\n## Error lines (verbatim)\n${lines.join("\n")}\n- OWN-FACT-OMEGA closes it`;
		stub.compact("keep", ours);
		await stub.emit("session_start", { reason: "startup" });
		const built = await compact(stub, 3, { previousSummary: ours });
		const summary = String(built?.compaction?.summary);
		const carried = summary.split("## Carried from the previous compaction\n")[1] ?? "";
		assert.doesNotMatch(carried, /OWN-FACT-OMEGA/, "the test's summary was not cut");
		const cut = /\n… the previous summary is cut here; recall_folded codes=\["([0-9a-z]{8})"\] reads it whole/.exec(
			carried,
		);
		assert.ok(cut, carried.slice(-400));
		// Every line carried is a whole line of the previous summary: no fold tag cut in half.
		const kept = carried
			.slice(0, cut.index)
			.split("\n")
			.filter((line) => line.startsWith("- "));
		assert.ok(kept.length > 5, carried.slice(0, 400));
		for (const line of kept) assert.ok(lines.includes(line), `a whole line: ${line}`);
		const end = await stub.call("recall_folded", { codes: [cut[1]], grep: "OWN-FACT-OMEGA" });
		assert.match(end.split("\n")[0], /sha256 verified/);
		assert.ok(end.includes("- OWN-FACT-OMEGA closes it"), end.slice(-300));
	});

	it("says that /compact instructions are not applied, and how to have them applied; nothing without any", async () => {
		const stub = loadStub();
		bashSession(stub, 4);
		await stub.emit("session_start", { reason: "startup" });
		const messages = messagesOf(stub);
		const emit = (customInstructions?: string) =>
			stub.emit("session_before_compact", {
				preparation: {
					messagesToSummarize: messages,
					turnPrefixMessages: [],
					firstKeptEntryId: "keep",
					tokensBefore: 1234,
				},
				customInstructions,
				reason: "manual",
			}) as Promise<Compaction[]>;
		const [plain] = await emit();
		assert.ok(plain?.compaction?.summary.startsWith(SUMMARY_HEADER));
		assert.doesNotMatch(stub.stderr.join(""), /instructions/);
		const [instructed] = await emit("focus only on the HTTP header bug");
		assert.ok(instructed?.compaction?.summary.startsWith(SUMMARY_HEADER), "the deterministic summary still stands");
		assert.ok(stub.stderr.join("").includes(INSTRUCTIONS_NOT_APPLIED));
		assert.match(INSTRUCTIONS_NOT_APPLIED, /CONTEXTFOLD_COMPACT=native/);
	});

	it("in the terminal UI, says the instructions were not applied after Pi's redraw, below the compaction's notice", async () => {
		const stub = loadStub();
		stub.mode = "tui";
		stub.hasUI = true;
		bashSession(stub, 4);
		await stub.emit("session_start", { reason: "startup" });
		const [built] = (await stub.emit("session_before_compact", {
			preparation: {
				messagesToSummarize: messagesOf(stub),
				turnPrefixMessages: [],
				firstKeptEntryId: "keep",
				tokensBefore: 1234,
			},
			customInstructions: "keep only the error lines",
			reason: "manual",
		})) as Compaction[];
		const told = () => stub.ui.notices.map((n) => n.message);
		// Pi clears and redraws the transcript on compaction_end, after session_compact: a notice before it is wiped.
		assert.ok(!told().includes(INSTRUCTIONS_NOT_APPLIED), "not before Pi's redraw");
		await stub.emit("session_compact", {
			reason: "manual",
			compactionEntry: { tokensBefore: 1234, details: built?.compaction?.details },
			fromExtension: true,
		});
		assert.ok(!told().includes(INSTRUCTIONS_NOT_APPLIED), "not before Pi's redraw");
		await new Promise((resolve) => setTimeout(resolve, 0));
		const after = told();
		const compacted = after.findIndex((m) => m.includes("compacted the context from ~"));
		assert.ok(compacted >= 0, after.join("\n"));
		assert.equal(after.indexOf(INSTRUCTIONS_NOT_APPLIED), compacted + 1, after.join("\n"));
		const [plain] = (await stub.emit("session_before_compact", {
			preparation: {
				messagesToSummarize: messagesOf(stub),
				turnPrefixMessages: [],
				firstKeptEntryId: "keep",
				tokensBefore: 9,
			},
			reason: "manual",
		})) as Compaction[];
		await stub.emit("session_compact", {
			reason: "manual",
			compactionEntry: { tokensBefore: 9, details: plain?.compaction?.details },
			fromExtension: true,
		});
		await new Promise((resolve) => setTimeout(resolve, 0));
		assert.equal(
			told().filter((m) => m === INSTRUCTIONS_NOT_APPLIED).length,
			1,
			"a compaction without instructions says nothing of them",
		);
	});

	it("records results holding images, image-only ones included, and their recall says the images are not served", async () => {
		const stub = loadStub();
		bashSession(stub, 2);
		const image = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" };
		for (const [id, content] of [
			["shot_mixed", [{ type: "text", text: "screen after login" }, image, image]],
			["shot_only", [image]],
		] as const) {
			stub.addMessage({
				role: "assistant",
				content: [{ type: "toolCall", id, name: "screenshot", arguments: {} }],
				responseId: `r_${id}`,
				usage: {},
				stopReason: "toolUse",
				timestamp: 1_800_000_000_000,
			});
			stub.addMessage({
				role: "toolResult",
				toolCallId: id,
				toolName: "screenshot",
				content,
				isError: false,
				timestamp: 1,
			});
		}
		await stub.emit("session_start", { reason: "startup" });
		const result = await compact(stub, messagesOf(stub).length);
		const summary = result?.compaction?.summary ?? "";
		for (const id of ["shot_mixed", "shot_only"]) {
			const code = foldCode(`r:${id}`);
			assert.ok(summary.includes(`{#${code} FOLDED}`), `${id} has a pointer in the summary`);
			const recalled = await stub.call("recall_folded", { codes: [code] });
			const images = id === "shot_mixed" ? "2 images" : "1 image";
			assert.match(recalled.split("\n")[0], new RegExp(`; ${images} not served: recall serves text only\\)$`));
		}
	});

	it("covers turnPrefixMessages when messagesToSummarize is empty (split turn)", async () => {
		const stub = loadStub();
		bashSession(stub, 3);
		await stub.emit("session_start", { reason: "startup" });
		const messages = messagesOf(stub);
		const [result] = (await stub.emit("session_before_compact", {
			preparation: {
				messagesToSummarize: [],
				turnPrefixMessages: messages.slice(0, 5),
				firstKeptEntryId: "k",
				tokensBefore: 1,
			},
			reason: "threshold",
		})) as Compaction[];
		assert.match(result?.compaction?.summary ?? "", /Error: check 1 failed at step 7/);
	});

	it("falls back to Pi's compaction when building the summary throws, and stays out with CONTEXTFOLD_COMPACT=native", async () => {
		const stub = loadStub();
		bashSession(stub, 2);
		await stub.emit("session_start", { reason: "startup" });
		const [broken] = (await stub.emit("session_before_compact", {
			preparation: null,
			reason: "manual",
		})) as Compaction[];
		assert.equal(broken, undefined);
		assert.match(stub.stderr.join(""), /Pi's own compaction runs instead/);
		process.env.CONTEXTFOLD_COMPACT = "native";
		try {
			const native = loadStub();
			bashSession(native, 2);
			await native.emit("session_start", { reason: "startup" });
			assert.equal(await compact(native, 3), undefined);
		} finally {
			delete process.env.CONTEXTFOLD_COMPACT;
		}
	});
});

/** Runs `body` with a fresh temp session folder, removed afterwards. */
async function inTempDir(body: (dir: string) => Promise<void>): Promise<void> {
	const dir = mkdtempSync(join(tmpdir(), "cf-index-"));
	try {
		await body(dir);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** A stub host whose session lives in `dir` (so the seed index and handoff seeds are written there). */
function savedStub(dir: string, sessionDir = dir) {
	return loadStub({ sessionDir, sessionFile: join(dir, "s.jsonl") });
}

/** A started stub of a bash session whose session folder is a file in the way: no seed index can be written under it. */
async function blockedIndex(dir: string) {
	const blocked = join(dir, "file-not-dir");
	const stub = savedStub(dir, blocked);
	writeFileSync(blocked, "x");
	bashSession(stub, 6);
	await stub.emit("session_start", { reason: "startup" });
	return { stub, blocked };
}

describe("seed index on disk", () => {
	it("appends a record per fold event and per compaction, and a retraction when the compaction fails", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			await stub.request();
			await compact(stub, 5);
			await stub.emit("session_compact_failed", {
				reason: "manual",
				aborted: false,
				fromExtension: true,
				errorMessage: "boom",
			});
			const file = join(dir, "context-fold", "stub", "seed-index.jsonl");
			const lines = readFileSync(file, "utf8")
				.trim()
				.split("\n")
				.map((l) => JSON.parse(l));
			assert.deepEqual(
				lines.map((l) => l.kind),
				["fold", "compaction", "retraction"],
			);
			assert.ok(lines[0].spans.length > 0);
			assert.match(JSON.stringify(lines[0].errors), /failed at step 7/);
			assert.equal(
				parseSeedIndex(readFileSync(file, "utf8")).records.length,
				1,
				"the retracted compaction is dropped",
			);
		});
	});

	it("a compaction another extension cancelled, or replaced with its own summary, gets context-fold's record retracted", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			const file = join(dir, "context-fold", "stub", "seed-index.jsonl");
			const kinds = () =>
				readFileSync(file, "utf8")
					.trim()
					.split("\n")
					.map((l) => JSON.parse(l).kind);
			// Cancelled by a later extension: Pi reports the failure, not as an extension's.
			assert.ok(await compact(stub, 5));
			await stub.emit("session_compact_failed", {
				reason: "manual",
				aborted: false,
				fromExtension: false,
				errorMessage: "Compaction cancelled",
			});
			assert.deepEqual(kinds(), ["compaction", "retraction"]);
			// Replaced: Pi compacts with another extension's summary, whose details are not context-fold's.
			assert.ok(await compact(stub, 5));
			await stub.emit("session_compact", {
				reason: "manual",
				compactionEntry: { summary: "their summary", tokensBefore: 9000, details: { theirs: true } },
				fromExtension: true,
			});
			assert.deepEqual(kinds(), ["compaction", "retraction", "compaction", "retraction"]);
			assert.equal(
				parseSeedIndex(readFileSync(file, "utf8")).records.length,
				0,
				"no record of a compaction that never happened",
			);
			// An event that names no entry tells nothing either way: the record stands.
			const mine = await compact(stub, 5);
			await stub.emit("session_compact", { reason: "manual", fromExtension: true });
			assert.equal(parseSeedIndex(readFileSync(file, "utf8")).records.length, 1);
			// Nor does an earlier entry of ours with the same text, which Pi may hand over (it finds the
			// first entry with the summary's text).
			assert.ok(await compact(stub, 5));
			await stub.emit("session_compact", {
				reason: "manual",
				compactionEntry: mine?.compaction,
				fromExtension: true,
			});
			assert.equal(parseSeedIndex(readFileSync(file, "utf8")).records.length, 2);
			// Its own compaction's record stands.
			const built = await compact(stub, 5);
			await stub.emit("session_compact", {
				reason: "manual",
				compactionEntry: built?.compaction,
				fromExtension: true,
			});
			assert.equal(parseSeedIndex(readFileSync(file, "utf8")).records.length, 3);
		});
	});

	it("a compaction that fails after its index record was written (Pi's own runs instead) gets that record retracted", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 4);
			const foreign = `Summary by the model:\n${Array.from({ length: 300 }, (_, i) => `- fact ${i}`).join("\n")}`;
			stub.compact("keep", foreign);
			bashSession(stub, 4);
			await stub.emit("session_start", { reason: "startup" });
			// The leavers' records are written; recording Pi's previous summary, after the index record, fails.
			let appends = 0;
			Object.defineProperty(stub, "failAppend", { get: () => ++appends === 2, configurable: true });
			const built = await compact(stub, 6, { previousSummary: foreign });
			assert.equal(built, undefined, "Pi's own compaction runs instead");
			assert.match(stub.stderr.join(""), /deterministic compaction failed, Pi's own compaction runs instead/);
			const text = readFileSync(join(dir, "context-fold", "stub", "seed-index.jsonl"), "utf8");
			const kinds = text
				.trim()
				.split("\n")
				.map((l) => JSON.parse(l).kind);
			assert.deepEqual(kinds.slice(-2), ["compaction", "retraction"]);
			assert.ok(
				parseSeedIndex(text).records.every((r) => r.kind !== "compaction"),
				"the index describes a compaction that never happened",
			);
		});
	});

	it("a fold event rejected after its index record was written gets that record retracted", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			stub.failAppend = true;
			assert.doesNotMatch(JSON.stringify(await stub.request()), /FOLDED\}/);
			const file = join(dir, "context-fold", "stub", "seed-index.jsonl");
			const lines = readFileSync(file, "utf8")
				.trim()
				.split("\n")
				.map((l) => JSON.parse(l));
			assert.deepEqual(
				lines.map((l) => `${l.kind}:${l.seq}:${l.target ?? ""}`),
				["fold:1:", "retraction:1:fold"],
			);
			assert.equal(parseSeedIndex(readFileSync(file, "utf8")).records.length, 0);
			stub.failAppend = false;
			assert.match(JSON.stringify(await stub.request()), /FOLDED\}/, "the next turn folds and indexes again");
			assert.equal(parseSeedIndex(readFileSync(file, "utf8")).records.length, 1);
		});
	});

	it("an unwritable seed index holds fold events (each turn raw, said once) until it can be written; compaction goes on", async () => {
		await inTempDir(async (dir) => {
			const fs = await import("node:fs");
			const { stub, blocked } = await blockedIndex(dir);
			// Its record is a commit precondition: the event is rejected and the turn goes out raw.
			assert.doesNotMatch(JSON.stringify(await stub.request()), /FOLDED\}/, "no fold without its record");
			assert.doesNotMatch(JSON.stringify(await stub.request()), /FOLDED\}/, "nor on the next request");
			assert.equal(
				stub.entries.filter((e) => (e.data as { kind?: string } | undefined)?.kind === "layer").length,
				0,
				"no fold entry was persisted",
			);
			const rejected = stub.stderr.join("").match(/fold event rejected[^\n]*/g) ?? [];
			assert.equal(rejected.length, 1, stub.stderr.join(""));
			assert.match(rejected[0], /the seed index .* cannot be written \(.*\); fold events wait until it can/);
			const first = await compact(stub, 6);
			assert.ok(first?.compaction?.summary.startsWith(SUMMARY_HEADER), "compaction goes on with it in memory");
			// Once the index can be written, the next request folds.
			fs.rmSync(blocked);
			fs.mkdirSync(blocked);
			bashSession(stub, 6);
			assert.match(JSON.stringify(await stub.request()), /FOLDED\}/, "folding resumes");
			assert.equal(
				parseSeedIndex(fs.readFileSync(join(blocked, "context-fold", "stub", "seed-index.jsonl"), "utf8")).records
					.length,
				1,
			);
		});
	});

	it("a fold record written after an earlier failed write is retracted when its event is rejected", async () => {
		await inTempDir(async (dir) => {
			const fs = await import("node:fs");
			const { stub, blocked } = await blockedIndex(dir);
			await compact(stub, 6);
			assert.match(stub.stderr.join(""), /seed index .* cannot be written/, "the compaction's record failed");
			// The folder can be written again; the next event's record is, and then its fold entry is refused.
			fs.rmSync(blocked);
			fs.mkdirSync(blocked);
			bashSession(stub, 6);
			stub.failAppend = true;
			assert.doesNotMatch(JSON.stringify(await stub.request()), /FOLDED\}/);
			const text = fs.readFileSync(join(blocked, "context-fold", "stub", "seed-index.jsonl"), "utf8");
			assert.deepEqual(
				text
					.trim()
					.split("\n")
					.map((l) => JSON.parse(l).kind),
				["fold", "retraction"],
			);
			assert.equal(parseSeedIndex(text).records.length, 0, "no record of an event that never committed");
		});
	});

	it("a summary whose earlier compactions' records left the index (its file deleted) carries the previous summary whole", async () => {
		await inTempDir(async (dir) => {
			const fs = await import("node:fs");
			const stub = savedStub(dir);
			stub.addMessage({
				role: "user",
				content: "PLANTED first task: port the widget",
				timestamp: 1_600_000_000_000,
			});
			bashSession(stub, 4);
			await stub.emit("session_start", { reason: "startup" });
			/** Compacts messages `from` to `upTo` and stores the entry as Pi would, over `previous`. */
			const compactAndStore = async (from: number, upTo: number, previous?: string): Promise<string> => {
				const messagesToSummarize = messagesOf(stub).slice(from, upTo);
				const result = await compact(stub, upTo, {
					messagesToSummarize,
					...(previous ? { previousSummary: previous } : {}),
				});
				const compaction = result?.compaction;
				assert.ok(compaction, "context-fold compacted");
				stub.entries.push({
					type: "compaction",
					id: `compaction-${stub.entries.length}`,
					parentId: stub.entries.at(-1)?.id,
					summary: compaction.summary,
					firstKeptEntryId: "keep",
					tokensBefore: 1234,
					details: compaction.details,
				} as never);
				return compaction.summary;
			};
			const first = await compactAndStore(0, 4);
			assert.match(first, /PLANTED first task/);
			fs.rmSync(join(dir, "context-fold", "stub", "seed-index.jsonl"));
			bashSession(stub, 3);
			const second = await compactAndStore(4, 12, first);
			assert.match(second, /PLANTED first task/, "the process still held the first record in memory");
			// A new process reads the index file, which holds the second compaction's record alone.
			await stub.emit("session_start", { reason: "resume" });
			bashSession(stub, 3);
			const third = await compactAndStore(12, 20, second);
			assert.match(third, /PLANTED first task/, "the first compaction's facts are not lost");
		});
	});

	it("/fold-handoff after the seed index of a compacted session was deleted lists its turns in order", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 2);
			const ts = moreChecks(stub, 2, 2, 1_700_000_001_000);
			await stub.emit("session_start", { reason: "startup" });
			// Turns 1-2 leave live history; then the index file is lost, and a new process folds later turns.
			await compact(stub, 8);
			stub.compact(String(stub.entries.filter((e) => e.type === "message")[8].id));
			const file = join(dir, "context-fold", "stub", "seed-index.jsonl");
			rmSync(file);
			await stub.emit("session_start", { reason: "resume" });
			moreChecks(stub, 4, 3, ts);
			await stub.request();
			assert.deepEqual(
				parseSeedIndex(readFileSync(file, "utf8")).records.map((r) => r.kind),
				["fold"],
				"the index holds a fold event's record of the turns after the compaction alone",
			);
			await stub.command("fold-handoff", "go on");
			const folder = join(dir, "context-fold", "stub");
			const seed = readFileSync(
				join(folder, readdirSync(folder).find((f) => f.startsWith("handoff-")) ?? ""),
				"utf8",
			);
			/** The turns the lines of section `title` name, in the seed's order. */
			const turns = (title: string) => {
				const body = seed.slice(seed.indexOf(`\n## ${title}\n`)).split("\n## ")[1] ?? "";
				return [...body.matchAll(/^- \[turn (\d+)\]/gm)].map((m) => Number(m[1]));
			};
			for (const title of ["User intents, in order", "Commands"]) {
				const listed = turns(title);
				assert.equal(listed[0], 1, `${title}: from the first turn`);
				assert.deepEqual(
					listed,
					[...listed].sort((a, b) => a - b),
					`${title}: in turn order`,
				);
			}
		});
	});

	it("a /tree branch summary that a compaction takes out of live history gets a fold record: recall reads it", async () => {
		const stub = loadStub();
		bashSession(stub, 4);
		const summary = "BRANCH SUMMARY: side A found that the flux capacitor needs ZORBLAX_42 set.";
		stub.addMessage({ role: "branchSummary", summary, fromId: "side-a", timestamp: 1_700_000_100_000 });
		bashSession(stub, 2);
		await stub.emit("session_start", { reason: "startup" });
		const upTo = messagesOf(stub).findIndex((m) => m.role === "branchSummary") + 3;
		await compact(stub, upTo);
		const records = stub.entries
			.filter((e) => (e.data as { kind?: string } | undefined)?.kind === "records")
			.flatMap((e) => (e.data as { records: { kind: string; code: string }[] }).records);
		const mine = records.find((r) => r.kind === "summary");
		assert.ok(mine, "the branch summary has a fold record");
		const found = await stub.call("recall_folded", { search: "ZORBLAX_42" });
		assert.match(found, /flux capacitor needs ZORBLAX_42/, found);
		assert.match(await stub.call("recall_folded", { codes: [mine.code] }), /BRANCH SUMMARY: side A found/);
	});

	it("while recall_folded is left out of the active tools, the compaction is still deterministic, says its codes wait for the tool, and no handoff seed is written", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			// The user's tool selection (or another extension) leaves the fold tools out.
			stub.active = ["bash"];
			const summary = (await compact(stub, 5))?.compaction?.summary ?? "";
			assert.ok(summary.startsWith(SUMMARY_HEADER), "no model writes it");
			assert.match(summary, /recall_folded, which reads a block back\nby its code, is not active in this session/);
			assert.doesNotMatch(summary, /Read any block back with recall_folded/);
			assert.match(
				stub.stderr.join(""),
				/recall_folded is not active: the compaction summary is still context-fold's, written without a model/,
			);
			const handoff = await stub.command("fold-handoff", "go on");
			assert.match(handoff.stderr, /no handoff seed written: recall_folded is not active/);
			const folder = join(dir, "context-fold", "stub");
			const seeds = () => (existsSync(folder) ? readdirSync(folder).filter((f) => f.startsWith("handoff-")) : []);
			assert.deepEqual(seeds(), []);
			// Active again: both are context-fold's.
			stub.active = ["bash", "recall_folded", "unfold"];
			assert.match((await compact(stub, 5))?.compaction?.summary ?? "", /Read any block back with recall_folded/);
			await stub.command("fold-handoff", "go on");
			assert.equal(seeds().length, 1);
		});
	});

	it("/fold-handoff from a session opened through a symbolic link says its codes cannot be read back", async () => {
		await inTempDir(async (dir) => {
			const real = join(dir, "archive.jsonl");
			writeFileSync(real, "");
			symlinkSync(real, join(dir, "s.jsonl"));
			const stub = savedStub(dir);
			bashSession(stub, 3);
			await stub.emit("session_start", { reason: "startup" });
			const { stderr } = await stub.command("fold-handoff", "go on");
			const link = join(dir, "s.jsonl");
			assert.ok(
				stderr.includes(
					`context-fold: this session's file ${link} is a symbolic link (to ${realpathSync(real)}), which context-fold never follows to read a parent: a session seeded from this handoff cannot read the seed's codes back`,
				),
				stderr,
			);
			assert.match(stderr, /handoff-[^\n]+\.md\n$/, "the seed is still written, its path last");
		});
	});

	it("/fold-handoff writes a deterministic seed and prints its path headless", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 3);
			withFileTools(stub);
			await stub.emit("session_start", { reason: "startup" });
			const printed = await stub.command("fold-handoff", "ship the widget");
			const files = readdirSync(join(dir, "context-fold", "stub")).filter((f) => f.startsWith("handoff-"));
			assert.equal(files.length, 1);
			const text = readFileSync(join(dir, "context-fold", "stub", files[0]), "utf8");
			assert.equal(printed.stdout, "");
			assert.equal(
				printed.stderr,
				`${join(dir, "context-fold", "stub", files[0])}\n`,
				"the path alone on one stderr line",
			);
			assert.match(text, /^# context-fold handoff seed/);
			assert.match(text, /Goal: ship the widget/);
			assert.match(text, new RegExp(`Parent session: ${join(dir, "s.jsonl")}`));
			assert.match(text, /src\/planted\/Widget\.ts/);
			assert.match(text, /Provenance/);
		});
	});

	it("/fold-handoff in the same millisecond as another writes a file of its own beside it, never over it", async (t) => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 3);
			await stub.emit("session_start", { reason: "startup" });
			t.mock.timers.enable({ apis: ["Date"], now: Date.parse("2026-12-06T12:00:00.000Z") });
			const first = await stub.command("fold-handoff", "first goal");
			const second = await stub.command("fold-handoff", "second goal");
			t.mock.timers.reset();
			const folder = join(dir, "context-fold", "stub");
			const files = readdirSync(folder)
				.filter((f) => f.startsWith("handoff-"))
				.sort();
			assert.deepEqual(files, ["handoff-2026-12-06T12-00-00-000Z-2.md", "handoff-2026-12-06T12-00-00-000Z.md"]);
			assert.equal(first.stderr, `${join(folder, files[1])}\n`);
			assert.equal(second.stderr, `${join(folder, files[0])}\n`);
			assert.match(readFileSync(join(folder, files[1]), "utf8"), /Goal: first goal/);
			assert.match(readFileSync(join(folder, files[0]), "utf8"), /Goal: second goal/);
		});
	});

	it("/fold-handoff asked for during a run writes the seed once the run is over, with its last turns", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 3);
			await stub.emit("session_start", { reason: "startup" });
			let settle = () => {};
			stub.busy = new Promise<void>((resolve) => {
				settle = resolve;
			});
			const asked = stub.command("fold-handoff", "ship it");
			// The run goes on: a last command, its result, the answer.
			stub.addMessage({
				role: "assistant",
				content: [{ type: "toolCall", id: "last", name: "bash", arguments: { command: "npm run final-step" } }],
				stopReason: "toolUse",
				timestamp: 1_800_000_000_000,
			});
			stub.addMessage({
				role: "toolResult",
				toolCallId: "last",
				toolName: "bash",
				content: [{ type: "text", text: "done" }],
				isError: false,
				timestamp: 1_800_000_000_001,
			});
			stub.busy = undefined;
			settle();
			const printed = await asked;
			assert.match(printed.stderr, /the handoff seed is written once the agent's run is over/);
			const folder = join(dir, "context-fold", "stub");
			const seed = readFileSync(
				join(folder, readdirSync(folder).find((f) => f.startsWith("handoff-")) ?? ""),
				"utf8",
			);
			assert.match(seed, /npm run final-step/, "the seed holds the run's last turn");
		});
	});

	it("/fold-handoff in a session with no message yet writes nothing and says so", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			await stub.emit("session_start", { reason: "startup" });
			const printed = await stub.command("fold-handoff", "go");
			assert.equal(printed.stderr, "context-fold: nothing to hand off yet: this session has no messages\n");
			assert.equal(printed.exitCode, 1, "headless, no seed written exits 1: a script reads no path");
			assert.deepEqual(
				readdirSync(dir).filter((f) => f === "context-fold"),
				[],
				"no seed written",
			);
		});
	});

	// A session starts from a seed by the offer (a seed message) or by the seed pasted as its prompt.
	const starts: [string, (stub: ReturnType<typeof savedStub>, seed: string) => void][] = [
		[
			"the offer's seed message",
			(stub, seed) =>
				stub.entries.push({
					type: "custom_message",
					id: "c1",
					parentId: null,
					timestamp: "2026-12-05T10:00:00.123Z",
					customType: HANDOFF_MESSAGE_TYPE,
					content: seed,
					display: true,
				}),
		],
		[
			"a seed pasted as its prompt",
			(stub, seed) => {
				stub.addMessage({ role: "user", content: seed, timestamp: 1_600_000_000_000 });
				const reply = { role: "assistant", content: [{ type: "text", text: "on it" }], responseId: "r0" };
				stub.addMessage({ ...reply, timestamp: 1_600_000_000_001 });
			},
		],
	];
	for (const [how, start] of starts) {
		it(`/fold-handoff from a session started by ${how} hands that seed on (the first goal, the grandparent's tags quoted)`, async () => {
			await inTempDir(async (dir) => {
				const stub = savedStub(dir);
				start(
					stub,
					`${HANDOFF_HEADER}\n\nGoal: ALPHA-GOAL ship the parser\nParent session: /p/grandparent.jsonl\n\n{#abcd1234 FOLDED} bash: 40 lines\n`,
				);
				bashSession(stub, 3);
				await stub.emit("session_start", { reason: "startup" });
				await stub.command("fold-handoff", "now the docs");
				const folder = join(dir, "context-fold", "stub");
				const seed = readFileSync(
					join(folder, readdirSync(folder).find((f) => f.startsWith("handoff-")) ?? ""),
					"utf8",
				);
				assert.match(seed, /^Goal: now the docs$/m);
				assert.match(
					seed,
					/## Carried from the handoff seed this session started from\n\(The seed the parent session started from, carried as it was: its codes are of the session before the parent, which recall_folded does not read from here\.\)\n# context-fold handoff seed/,
				);
				assert.match(seed, /Goal: ALPHA-GOAL ship the parser\nParent session: \/p\/grandparent\.jsonl/);
				assert.match(
					seed,
					/\[quoted tag #abcd1234\] bash: 40 lines/,
					"the grandparent's code reads as no code to recall",
				);
				assert.doesNotMatch(seed, /\{#abcd1234 FOLDED\}/);
			});
		});
	}

	it("/fold-handoff tags the raw tail too, and every pointer of the seed resolves in a seeded session", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			const sent = resultTexts(await stub.request());
			const raw = sent.filter((t) => !/^\{#[0-9a-z]{8} FOLDED\}/.test(t));
			assert.ok(
				raw.some((t) => /Error: check \d failed/.test(t)),
				"a newest result with an error line is raw",
			);
			const entries = stub.entries.length;
			await stub.command("fold-handoff", "go on");
			assert.equal(stub.entries.length, entries, "the handoff wrote to the session");
			const folder = join(dir, "context-fold", "stub");
			const seed = readFileSync(
				join(folder, readdirSync(folder).find((f) => f.startsWith("handoff-")) ?? ""),
				"utf8",
			);
			const codes = [...seed.matchAll(/\{#([0-9a-z]{8}) FOLDED\}/g)].map((m) => m[1]);
			assert.ok(codes.length > 0, "the seed points at the folded blocks");
			// The seeded session reads the parent's file: every code the seed names resolves there, the
			// folded ones sha-verified, the raw tail's as the file holds them.
			const file = join(dir, "parent.jsonl");
			const header = { type: "session", id: "stub", timestamp: new Date(0).toISOString(), cwd: dir };
			writeFileSync(file, `${[header, ...stub.entries].map((e) => JSON.stringify(e)).join("\n")}\n`);
			const parent = new ParentSession(file, [dirname(file)]);
			const verified = new Set<boolean>();
			for (const code of new Set(codes)) {
				const hit = parent.resolve(code);
				assert.ok(hit.ok, `${code}: ${hit.ok ? "" : hit.error}`);
				verified.add(hit.verified);
			}
			assert.deepEqual([...verified].sort(), [false, true], "folded blocks verified, the raw tail's not");
			// The raw result's error line carries its own code now.
			const tail = seed.split("\n").find((l) => l.includes("Error: check 5 failed"));
			assert.match(tail ?? "", /\{#[0-9a-z]{8} FOLDED\}/, tail);
		});
	});
});

describe("a parent's tool-call arguments", () => {
	it("are served as a recall of this session's own: key lines, the raw value, and where it sits", async () => {
		await inTempDir(async (dir) => {
			const stub = loadStub();
			const content = Array.from({ length: 80 }, (_, k) => `line ${k + 1} of the file`).join("\n");
			stub.addMessage({ role: "user", content: "write it", timestamp: 1 });
			stub.addMessage({
				role: "assistant",
				content: [{ type: "toolCall", id: "w1", name: "write", arguments: { path: "big.txt", content } }],
				responseId: "r1",
				usage: {},
				stopReason: "toolUse",
				timestamp: 2,
			});
			stub.addMessage({
				role: "toolResult",
				toolCallId: "w1",
				toolName: "write",
				content: [{ type: "text", text: "Wrote big.txt" }],
				isError: false,
				timestamp: 3,
			});
			const file = join(dir, "parent.jsonl");
			const header = { type: "session", id: "p", timestamp: new Date(0).toISOString(), cwd: dir };
			writeFileSync(file, `${[header, ...stub.entries].map((e) => JSON.stringify(e)).join("\n")}\n`);
			const hit = new ParentSession(file, [dirname(file)]).resolve(foldCode("a:w1:args"));
			assert.ok(hit.ok, hit.ok ? "" : hit.error);
			assert.equal(hit.text, `arguments of write:\npath: big.txt\ncontent:\n${content}`);
			assert.deepEqual(hit.fields, [{ path: "content", first: 4, last: 83 }]);
		});
	});
});

describe("a seeded session checks the parent's blocks against the hashes its seed carries", () => {
	/** A parent handed off through the offer: the seed, what its message carries, and the parent's file lines. */
	async function offered(dir: string) {
		const stub = savedStub(dir);
		stub.hasUI = true;
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		await stub.command("fold-handoff", "go on");
		const [started] = stub.newSessions;
		assert.ok(started, "the accepted offer started no session");
		const [message] = started.customMessages;
		assert.equal(message?.customType, HANDOFF_MESSAGE_TYPE);
		const seed = String(message.content);
		const source = seedSource([{ type: "custom_message", ...message }]);
		const header = { type: "session", id: "stub", timestamp: new Date(0).toISOString(), cwd: dir };
		const lines = [header, ...stub.entries].map((e) => JSON.stringify(e));
		const codeOf = (text: string) =>
			/\{#([0-9a-z]{8}) FOLDED\}/.exec(seed.split("\n").find((l) => l.includes(text)) ?? "")?.[1] ?? "";
		return { stub, started, seed, source, lines, codeOf };
	}

	it("the seed message names the parent and carries a sha256 of every block the seed cites", async () => {
		await inTempDir(async (dir) => {
			const { started, seed, source, lines } = await offered(dir);
			assert.equal(started.parentSession, join(dir, "s.jsonl"));
			assert.equal(source.parentSession, join(dir, "s.jsonl"));
			const codes = new Set([...seed.matchAll(/\{#([0-9a-z]{8}) FOLDED\}/g)].map((m) => m[1]));
			assert.ok(codes.size > 1);
			for (const code of codes) assert.ok(source.hashes.has(code), `no hash for #${code}`);
			const file = join(dir, "parent.jsonl");
			writeFileSync(file, `${lines.join("\n")}\n`);
			const parent = new ParentSession(file, [dirname(file)], undefined, source.hashes);
			for (const code of codes) {
				const hit = parent.resolve(code);
				assert.ok(hit.ok && hit.verified, `${code}: ${JSON.stringify(hit).slice(0, 200)}`);
			}
		});
	});

	it("with a provider that repeats call ids, every block the seed cites, folded or raw, is served verified", async () => {
		await inTempDir(async (dir) => {
			const stub = savedStub(dir);
			stub.hasUI = true;
			bashSession(stub, 6);
			// Every call and result under one id, as a provider numbering its calls afresh in each reply gives.
			for (const entry of stub.entries) {
				const message = (entry as { message?: { role?: string; content?: unknown; toolCallId?: string } }).message;
				if (message?.role === "toolResult") message.toolCallId = "call_0";
				if (message?.role === "assistant" && Array.isArray(message.content))
					for (const part of message.content as { type?: string; id?: string }[])
						if (part.type === "toolCall") part.id = "call_0";
			}
			await stub.emit("session_start", { reason: "startup" });
			await stub.request();
			await stub.command("fold-handoff", "go on");
			const [message] = stub.newSessions[0]?.customMessages ?? [];
			const seed = String(message?.content);
			const source = seedSource([{ type: "custom_message", ...message }]);
			const header = { type: "session", id: "stub", timestamp: new Date(0).toISOString(), cwd: dir };
			const file = join(dir, "parent.jsonl");
			writeFileSync(file, `${[header, ...stub.entries].map((e) => JSON.stringify(e)).join("\n")}\n`);
			const parent = new ParentSession(file, [dirname(file)], undefined, source.hashes);
			const codes = new Set([...seed.matchAll(/\{#([0-9a-z]{8}) FOLDED\}/g)].map((m) => m[1]));
			assert.ok(codes.size >= 6, `${codes.size} codes cited`);
			for (const code of codes) {
				const hit = parent.resolve(code);
				assert.ok(hit.ok && hit.verified, `${code}: ${JSON.stringify(hit).slice(0, 200)}`);
			}
		});
	});

	it("a block the seed cites is served as the seed cited it where another branch gave its id to another block", async () => {
		await inTempDir(async (dir) => {
			const { seed, source, lines, codeOf } = await offered(dir);
			// A second process on the same session ran the same calls (the same ids) with other output,
			// on a branch of its own, written after: the parent's last branch is that one.
			const other = savedStub(join(dir, "other"));
			mkdirSync(join(dir, "other"));
			bashSession(other, 6, 200, (i, k) => `line ${k} of the other process's check ${i}`);
			await other.emit("session_start", { reason: "startup" });
			await other.request();
			const branch = other.entries.map((e) => {
				const entry = e as { id?: string; parentId?: string | null };
				return JSON.stringify({
					...entry,
					id: `o${entry.id}`,
					parentId: entry.parentId ? `o${entry.parentId}` : null,
				});
			});
			const file = join(dir, "parent.jsonl");
			writeFileSync(file, `${[...lines, ...branch].join("\n")}\n`);
			const parent = new ParentSession(file, [dirname(file)], undefined, source.hashes);
			const code = codeOf("check 0");
			assert.ok(code && seed.includes(`{#${code} FOLDED}`));
			const hit = parent.resolve(code);
			assert.ok(hit.ok && hit.verified, JSON.stringify(hit).slice(0, 300));
			assert.match(hit.text, /of check 0 output ok/);
			assert.doesNotMatch(hit.text, /other process/);
		});
	});

	it("a raw-tail block changed since the handoff is refused, one removed is named as cited", async () => {
		await inTempDir(async (dir) => {
			const { source, lines, codeOf } = await offered(dir);
			const tail = codeOf("Error: check 5 failed");
			assert.ok(tail && source.hashes.has(tail), "the raw tail's code has no hash");
			const file = join(dir, "parent.jsonl");
			writeFileSync(file, `${lines.join("\n").replace("Error: check 5 failed", "Error: check 5 passed")}\n`);
			const changed = new ParentSession(file, [dirname(file)], undefined, source.hashes).resolve(tail);
			assert.ok(!changed.ok, "a tail block that no longer matches its hash was served");
			assert.match(changed.error, /no copy matching the sha256 the handoff took/);
			// Without the seed's hashes (a seed written before they were carried): served as the file holds it, unverified.
			const bare = new ParentSession(file, [dirname(file)]).resolve(tail);
			assert.ok(bare.ok && !bare.verified && bare.text.includes("Error: check 5 passed"), JSON.stringify(bare));
			// The parent file lost its last lines, the tail's result among them.
			const cut = lines.filter((l) => !l.includes("Error: check 5 failed"));
			writeFileSync(file, `${cut.join("\n")}\n`);
			const gone = new ParentSession(file, [dirname(file)], undefined, source.hashes).resolve(tail);
			assert.ok(!gone.ok);
			assert.match(gone.error, /no longer holds it, though the seed cites it/);
		});
	});

	it("a folded block whose fold record left the parent file is checked against the seed's hash", async () => {
		await inTempDir(async (dir) => {
			const { source, lines, codeOf } = await offered(dir);
			const folded = codeOf("Error: check 0 failed");
			const file = join(dir, "parent.jsonl");
			writeFileSync(file, `${lines.join("\n")}\n`);
			const held = new ParentSession(file, [dirname(file)]).resolve(folded);
			assert.ok(held.ok && held.folded, `#${folded} is not a folded block of the parent`);
			const noRecords = lines.filter((l) => !l.includes('"customType":"contextfold.fold"'));
			writeFileSync(file, `${noRecords.join("\n")}\n`);
			const same = new ParentSession(file, [dirname(file)], undefined, source.hashes).resolve(folded);
			assert.ok(same.ok && same.verified && !same.folded && same.text === held.text, JSON.stringify(same));
			const line = held.text.split("\n")[3];
			writeFileSync(file, `${noRecords.join("\n").replace(line, `${line} EDITED`)}\n`);
			const edited = new ParentSession(file, [dirname(file)], undefined, source.hashes).resolve(folded);
			assert.ok(!edited.ok, "an edited block without its record was served");
			assert.match(edited.error, /no copy matching the sha256 the handoff took/);
		});
	});

	it("a fork of the seeded session reads the seed's codes from the parent its seed names, not from the header's", async () => {
		await inTempDir(async (dir) => {
			const { started, lines, codeOf } = await offered(dir);
			const parentFile = join(dir, "s.jsonl");
			writeFileSync(parentFile, `${lines.join("\n")}\n`);
			// Pi writes the session a fork was copied from into its header: the seeded child, not the seed's parent.
			const fork = loadStub({ sessionDir: dir, parentSession: join(dir, "child.jsonl") });
			const [message] = started.customMessages;
			fork.entries.push({
				type: "custom_message",
				id: "seed",
				parentId: null,
				timestamp: new Date(7e12).toISOString(),
				display: true,
				...message,
			});
			await fork.emit("session_start", { reason: "startup" });
			const code = codeOf("Error: check 0 failed");
			const recalled = await fork.call("recall_folded", { codes: [code] });
			assert.match(
				recalled,
				new RegExp(`from the parent session ${parentFile.replace(/[.]/g, "\\.")}, sha256 verified`),
			);
		});
	});

	it("reads the first seed message only, and nothing from details that are not a seed's", () => {
		const seed = (details: unknown) => ({ type: "custom_message", customType: HANDOFF_MESSAGE_TYPE, details });
		const hash = "a".repeat(64);
		const read = seedSource([seed({ path: "/s.md", parentSession: "/p.jsonl", hashes: { abcd1234: hash } })]);
		assert.equal(read.parentSession, "/p.jsonl");
		assert.deepEqual([...read.hashes], [["abcd1234", hash]]);
		assert.equal(seedSource([seed({ hashes: { abcd1234: "not a sha256" } })]).hashes.size, 0);
		assert.deepEqual(seedSource([seed(undefined), seed({ parentSession: "/p.jsonl" })]), {
			seeded: true,
			hashes: new Map(),
		});
		const other = { type: "custom_message", customType: "other", details: { parentSession: "/x.jsonl" } };
		assert.deepEqual(seedSource([other]), { seeded: false, hashes: new Map() });
		// A seed passed as a prompt (a resumed `pi -p "$(cat seed)"` session) names its parent in its text.
		const prompt = (text: string) => ({
			type: "message",
			message: { role: "user", content: [{ type: "text", text }] },
		});
		const pasted = `${HANDOFF_HEADER}\n\nGoal: g\nParent session: /p/a.jsonl\nWritten: t\n`;
		assert.deepEqual(seedSource([prompt("hello"), prompt(`Go on:\n${pasted}`)]), {
			seeded: true,
			parentSession: "/p/a.jsonl",
			hashes: new Map(),
		});
		// One naming this session itself is passed over for the next, as the prompt's own request did.
		const self = pasted.replace("/p/a.jsonl", "/p/self.jsonl");
		assert.equal(seedSource([prompt(self), prompt(pasted)], ["/p/self.jsonl"]).parentSession, "/p/a.jsonl");
		assert.deepEqual(seedSource([prompt(self)], ["/p/./self.jsonl"]), { seeded: false, hashes: new Map() });
		// Nor the session a fork or clone was copied from: the seed was pasted back into it, and the copy holds its history.
		assert.deepEqual(seedSource([prompt(self)], ["/p/clone.jsonl", "/p/self.jsonl"]), {
			seeded: false,
			hashes: new Map(),
		});
		const unsaved = pasted.replace("/p/a.jsonl", "(in-memory session, not saved)");
		assert.deepEqual(seedSource([prompt(unsaved)]), { seeded: false, hashes: new Map() }, "no file to read");
		assert.equal(seedSource([prompt(pasted), seed({ parentSession: "/p.jsonl" })]).parentSession, "/p.jsonl");
	});

	it("a seed passed as a prompt links the parent it names: declared from that prompt on, never the session itself", async () => {
		await inTempDir(async (dir) => {
			const own = join(dir, "s.jsonl");
			const parent = join(dir, "parent.jsonl");
			for (const [named, linked] of [
				[parent, true],
				[own, false],
			] as const) {
				const stub = loadStub({ sessionDir: dir, sessionFile: own, toolsAsRegistered: true });
				await stub.emit("session_start", { reason: "startup" });
				assert.ok(!stub.active.includes("recall_folded"), "nothing to recall yet");
				const prompt = `${HANDOFF_HEADER}\n\nGoal: g\nParent session: ${named}\nWritten: t\n`;
				await stub.emit("before_agent_start", { prompt, images: [] });
				assert.equal(stub.active.includes("recall_folded"), linked, named);
				if (!linked) continue;
				// A second seed naming another parent is not read: said, not silent.
				const other = prompt.replace(named, join(dir, "other.jsonl"));
				await stub.emit("before_agent_start", { prompt: other, images: [] });
				assert.match(
					stub.stderr.join(""),
					/this session is linked to the parent .*parent\.jsonl its first seed named; the seed just passed names .*other\.jsonl, whose codes it does not read/,
				);
			}
		});
	});

	it("one file named through a symbolic link to its folder is the same file", async () => {
		await inTempDir(async (dir) => {
			mkdirSync(join(dir, "sessions"));
			writeFileSync(join(dir, "sessions", "s.jsonl"), "");
			symlinkSync(join(dir, "sessions"), join(dir, "link"));
			assert.ok(sameFile(join(dir, "link", "s.jsonl"), join(dir, "sessions", "s.jsonl")));
			assert.ok(sameFile(join(dir, "sessions", ".", "gone.jsonl"), join(dir, "sessions", "gone.jsonl")));
			assert.ok(!sameFile(join(dir, "sessions", "s.jsonl"), join(dir, "sessions", "t.jsonl")));
			assert.ok(!sameFile(join(dir, "sessions", "s.jsonl"), undefined));
		});
	});

	it("a parent named through a link and `..` out of the session's folder is not read: the kernel follows the link first", async () => {
		await inTempDir(async (dir) => {
			const folder = join(dir, "sessions");
			mkdirSync(folder);
			mkdirSync(join(dir, "outside", "inner"), { recursive: true });
			const header = { type: "session", id: "p", timestamp: new Date(0).toISOString(), cwd: dir };
			writeFileSync(join(dir, "outside", "victim.jsonl"), `${JSON.stringify(header)}\n`);
			symlinkSync(join(dir, "outside", "inner"), join(folder, "link"));
			const named = join(folder, "link") + "/../victim.jsonl";
			const miss = new ParentSession(named, [folder]).resolve("abcdefgh");
			assert.ok(!miss.ok && /not in this session's folder/.test(miss.error), miss.ok ? "" : miss.error);
			// A link that leads back into the folder is that folder.
			writeFileSync(join(folder, "own.jsonl"), `${JSON.stringify(header)}\n`);
			symlinkSync(join(folder, "link"), join(folder, "back"));
			mkdirSync(join(folder, "sub"));
			const own = new ParentSession(join(folder, "sub") + "/../own.jsonl", [folder]).resolve("abcdefgh");
			assert.ok(!own.ok && !/not in this session's folder/.test(own.error), own.ok ? "" : own.error);
		});
	});

	it("on Windows, a parent folder spelled in another case is the same folder (Pi names it after the cwd as typed)", async () => {
		await inTempDir(async (dir) => {
			// Pi's folder for C:\Users\Ann\proj, and the same folder as a VS Code terminal's lower-case cwd names it.
			const folder = join(dir, "--C--Users-Ann-proj--");
			mkdirSync(folder);
			const file = join(folder, "parent.jsonl");
			const header = { type: "session", id: "p", timestamp: new Date(0).toISOString(), cwd: dir };
			writeFileSync(file, `${JSON.stringify(header)}\n`);
			const lower = join(dir, "--c--Users-Ann-proj--");
			const miss = () => new ParentSession(file, [lower]).resolve("abcdefgh");
			const platform = Object.getOwnPropertyDescriptor(process, "platform") as PropertyDescriptor;
			Object.defineProperty(process, "platform", { value: "win32" });
			try {
				const windows = miss();
				assert.ok(
					!windows.ok && !/not in this session's folder/.test(windows.error),
					windows.ok ? "" : windows.error,
				);
				assert.ok(sameFile(file, join(lower, "parent.jsonl")), "a seed naming itself in another case");
			} finally {
				Object.defineProperty(process, "platform", platform);
			}
			const linux = miss();
			assert.ok(!linux.ok && /not in this session's folder/.test(linux.error), "case counts where names do");
			assert.ok(!sameFile(file, join(lower, "parent.jsonl")));
		});
	});

	it("a session Pi forked or cloned, with no seed message, reads nothing of its parent: not what it did after the fork", async () => {
		await inTempDir(async (dir) => {
			const { lines, codeOf } = await offered(dir);
			const parentFile = join(dir, "s.jsonl");
			writeFileSync(parentFile, `${lines.join("\n")}\n`);
			const code = codeOf("Error: check 0 failed");
			const seeded = loadStub({ sessionDir: dir, parentSession: parentFile, seeded: true });
			await seeded.emit("session_start", { reason: "startup" });
			assert.match(await seeded.call("recall_folded", { codes: [code] }), /from the parent session/);
			// Forked before the parent ran its checks: their output is the future the user forked away from.
			const fork = loadStub({ sessionDir: dir, parentSession: parentFile });
			await fork.emit("session_start", { reason: "fork" });
			assert.match(await fork.call("recall_folded", { codes: [code] }), /not a fold code of this session/);
			assert.match(await fork.call("recall_folded", { search: "check 0 failed" }), /^no folded block contains/);
		});
	});
});

describe("a seeded session reads the parent's raw tail", () => {
	/** A parent whose tail reuses a tool-call id, handed off; its session file written out, and the seed. */
	async function handedOff(dir: string) {
		const stub = savedStub(dir);
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		// An OpenAI-compatible provider may give two calls one id: the first copy on the branch owns it.
		for (const [k, text] of ["Error: first failure", "SECOND_OUTPUT\nError: second failure"].entries()) {
			stub.addMessage({ role: "user", content: `step ${k}`, timestamp: 5e12 + 10 * k });
			stub.addMessage({
				role: "assistant",
				content: [{ type: "toolCall", id: "dup", name: "bash", arguments: { command: `run ${k}` } }],
				stopReason: "toolUse",
				timestamp: 5e12 + 10 * k + 1,
			});
			stub.addMessage({
				role: "toolResult",
				toolCallId: "dup",
				toolName: "bash",
				content: [{ type: "text", text }],
				isError: true,
				timestamp: 5e12 + 10 * k + 2,
			});
		}
		await stub.request();
		await stub.command("fold-handoff", "go on");
		const folder = join(dir, "context-fold", "stub");
		const seed = readFileSync(join(folder, readdirSync(folder).find((f) => f.startsWith("handoff-")) ?? ""), "utf8");
		const file = join(dir, "parent.jsonl");
		const header = { type: "session", id: "stub", timestamp: new Date(0).toISOString(), cwd: dir };
		const write = () =>
			writeFileSync(file, `${[header, ...stub.entries].map((e) => JSON.stringify(e)).join("\n")}\n`);
		write();
		return { stub, seed, file, write };
	}

	it("serves the copy its code was given to, also after the parent went on from an earlier entry", async () => {
		await inTempDir(async (dir) => {
			const { stub, seed, file, write } = await handedOff(dir);
			const line = seed.split("\n").find((l) => l.includes("Error: first failure")) ?? "";
			const code = /\{#([0-9a-z]{8}) FOLDED\}/.exec(line)?.[1];
			assert.ok(code, line);
			const first = new ParentSession(file, [dirname(file)]).resolve(code);
			assert.ok(first.ok && first.text === "Error: first failure", JSON.stringify(first));
			// The parent goes on from its first message (a /tree move): the tail is off its latest branch.
			stub.entries.push({
				type: "message",
				id: "side",
				parentId: stub.entries.find((e) => e.type === "message")?.id,
				timestamp: new Date(6e12).toISOString(),
				message: { role: "user", content: "a side question", timestamp: 6e12 },
			});
			write();
			const moved = new ParentSession(file, [dirname(file)]);
			const again = moved.resolve(code);
			assert.ok(again.ok && again.text === "Error: first failure", JSON.stringify(again));
			const codes = moved.searchCodes();
			assert.ok(Array.isArray(codes) && !codes.includes(code), "without a seed's hashes: the latest branch only");
			// With the seed's hashes, every block the seed cites is searched, on the latest branch or not.
			const cited = new ParentSession(
				file,
				[dirname(file)],
				undefined,
				new Map([[code, "0".repeat(64)]]),
			).searchCodes();
			assert.ok(Array.isArray(cited) && cited.includes(code), "a cited block off the latest branch is not searched");
		});
	});
});

describe("unfold after a compaction", () => {
	it("never claims a compacted block is back: it says so, points to recall_folded and persists nothing", async () => {
		const stub = loadStub();
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		const sent = await stub.request();
		const digest = resultTexts(sent).find((t) => /^\{#[0-9a-z]{8} FOLDED\}/.test(t));
		assert.ok(digest, "the first request folded old results");
		const code = /^\{#([0-9a-z]{8})/.exec(digest)?.[1] ?? "";
		const kept = stub.entries.find(
			(e) => e.type === "message" && (e.message as { content?: unknown }).content === "thanks, next",
		);
		stub.compact(String(kept?.id));
		const unfoldEntries = () =>
			stub.entries.filter((e) => (e.data as { kind?: string } | undefined)?.kind === "unfold");
		for (const restart of [false, true]) {
			if (restart) await stub.emit("session_start", { reason: "resume" });
			await stub.request();
			const answer = await stub.call("unfold", { codes: [code] });
			assert.match(
				answer,
				/no longer in the context the requests carry \(a compaction took it out, or another extension leaves it out\); use recall_folded/,
			);
			assert.doesNotMatch(answer, /Unfolded/);
			assert.equal(unfoldEntries().length, 0, "nothing persisted");
			assert.match(await stub.call("recall_folded", { codes: [code] }), /sha256 verified/);
		}
	});
});

describe("over budget with nothing worth folding", () => {
	/** A stub host whose Pi keeps 1k raw at a compaction, so that ~11k tokens of messages can compact. */
	function smallKeep(window: number) {
		const stub = loadStub({ window });
		stub.settings = { ...stub.settings, compaction: { keepRecentTokens: 1_000 } };
		return stub;
	}

	function bigPrompt(stub: ReturnType<typeof loadStub>) {
		stub.addMessage({
			role: "user",
			content: `constraints:\n${"keep this exact wording. ".repeat(1800)}`,
			timestamp: 1,
		});
		stub.addMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], responseId: "r1", timestamp: 2 });
		stub.addMessage({ role: "user", content: "go on", timestamp: 3 });
	}

	/** A 10k-window session past the budget after one run (Pi keeps 1k), which asked for one compaction. */
	async function compactedOnce() {
		const stub = smallKeep(10_000);
		bigPrompt(stub);
		await stub.emit("session_start", { reason: "startup" });
		await run(stub);
		return stub;
	}

	/** One request and its response's message_end, as Pi runs them inside an agent run. */
	async function turn(stub: ReturnType<typeof loadStub>) {
		await stub.request();
		await stub.emit("message_end", { message: { role: "assistant", content: [], stopReason: "stop" } });
	}
	/** One request, its response, and the end of the agent's run. */
	async function run(stub: ReturnType<typeof loadStub>) {
		await turn(stub);
		await stub.emit("agent_settled", { aborted: false });
	}

	it("asks for no compaction when Pi's own came after the run's last response, and a refusal as 'Already compacted' is no failure", async () => {
		const stub = smallKeep(10_000);
		bigPrompt(stub);
		await stub.emit("session_start", { reason: "startup" });
		await turn(stub);
		// Pi's threshold compaction runs at the end of the run, before agent_settled.
		await stub.emit("session_compact", { reason: "threshold", compactionEntry: undefined, fromExtension: false });
		await stub.emit("agent_settled", { aborted: false });
		assert.equal(stub.compactions.length, 0, "a second compaction was asked for");
		// Should Pi compact between the request and the ask all the same, its refusal is no failure.
		const raced = smallKeep(10_000);
		bigPrompt(raced);
		raced.compactEnd = new Error("Already compacted");
		await raced.emit("session_start", { reason: "startup" });
		await run(raced);
		assert.equal(raced.compactions.length, 1);
		assert.doesNotMatch(raced.stderr.join(""), /compaction failed/);
	});

	it("compacts deterministically once the agent's run is over, once per over-budget state, and says so", async () => {
		const stub = smallKeep(10_000);
		bigPrompt(stub);
		await stub.emit("session_start", { reason: "startup" });
		await turn(stub);
		await turn(stub);
		assert.equal(stub.compactions.length, 0, "no compaction while the run goes on: Pi's compact() would abort it");
		await stub.emit("agent_settled", { aborted: false });
		assert.equal(stub.compactions.length, 1, "one compaction once the run is over");
		assert.match(
			stub.stderr.join(""),
			/past the fold budget .*, so it compacted the context from ~12k tokens with its deterministic summary \(no model call\)/,
			"said once the compaction completed",
		);
		await run(stub);
		assert.equal(stub.compactions.length, 1, "the same over-budget state is acted on once");
		stub.usage = { tokens: 1_000, contextWindow: 10_000 };
		await turn(stub);
		stub.usage = undefined;
		await run(stub);
		assert.equal(stub.compactions.length, 2, "a new over-budget state compacts again");
	});

	it("the run settles only once its compaction has ended, so that Pi takes no prompt meanwhile", async () => {
		for (const end of ["onComplete", "onError"] as const) {
			const stub = smallKeep(10_000);
			stub.compactEnd = "hold";
			bigPrompt(stub);
			await stub.emit("session_start", { reason: "startup" });
			await turn(stub);
			let settled = false;
			const settling = stub.emit("agent_settled", { aborted: false }).then(() => {
				settled = true;
			});
			await new Promise((resolve) => setImmediate(resolve));
			assert.equal(stub.compactions.length, 1);
			assert.equal(settled, false, `the handler waits while the compaction runs (${end})`);
			if (end === "onComplete") stub.compactions[0].onComplete?.({ tokensBefore: 0 });
			else stub.compactions[0].onError?.(new Error("Nothing to compact (session too small)"));
			await settling;
			assert.equal(settled, true, `${end} ends the wait`);
		}
	});

	it("in the terminal UI, says why on the compaction's own notice, once, after it happened", async () => {
		const stub = smallKeep(10_000);
		stub.mode = "tui";
		stub.hasUI = true;
		stub.compactEnd = "hold";
		bigPrompt(stub);
		await stub.emit("session_start", { reason: "startup" });
		await turn(stub);
		const settling = stub.emit("agent_settled", { aborted: false });
		await new Promise((resolve) => setImmediate(resolve));
		const told = () => stub.ui.notices.filter((n) => /past the fold budget/.test(n.message)).map((n) => n.message);
		assert.deepEqual(told(), [], "nothing said while the compaction may yet be refused");
		const result = { tokensBefore: 11_000, details: { contextFold: { v: 1, seq: 1, codes: ["a1", "b2"] } } };
		await stub.emit("session_compact", { reason: "manual", compactionEntry: result, fromExtension: true });
		stub.compactions[0].onComplete?.(result);
		await settling;
		await new Promise((resolve) => setTimeout(resolve, 0));
		assert.equal(told().length, 1, told().join("\n"));
		assert.match(
			told()[0],
			/nothing left is worth folding, so it compacted the context from ~11k tokens with its deterministic summary/,
		);
	});

	it("after a compaction, compacts again only once the context grew past what the compaction left", async () => {
		const stub = await compactedOnce();
		assert.equal(stub.compactions.length, 1);
		await stub.emit("session_compact", { reason: "manual" });
		await run(stub);
		assert.equal(stub.compactions.length, 1, "the same usage after the compaction: nothing to gain");
		stub.addMessage({ role: "user", content: `more:\n${"another constraint to keep. ".repeat(200)}`, timestamp: 4 });
		await run(stub);
		assert.equal(stub.compactions.length, 2, "grown past it: compacts again");
	});

	it("when Pi refuses the compaction, says so once a session, announces no compaction, and tries again once the context has grown", async () => {
		const stub = smallKeep(10_000);
		stub.compactEnd = new Error("Nothing to compact (session too small)");
		bigPrompt(stub);
		await stub.emit("session_start", { reason: "startup" });
		await run(stub);
		assert.equal(stub.compactions.length, 1);
		const refusal =
			/past the fold budget .*, but Pi cannot compact yet: it keeps the newest messages raw \(compaction\.keepRecentTokens, 1000 tokens\)/;
		assert.match(stub.stderr.join(""), refusal);
		assert.doesNotMatch(stub.stderr.join(""), /compact(ing|ed) now|so it compacted/, "no compaction is announced");
		await run(stub);
		assert.equal(stub.compactions.length, 1, "the same context: Pi would refuse again");
		const more = (t: number) =>
			stub.addMessage({
				role: "user",
				content: `more:\n${"another constraint to keep. ".repeat(200)}`,
				timestamp: t,
			});
		more(4);
		await run(stub);
		assert.equal(stub.compactions.length, 2, "grown: tries again");
		assert.equal(
			stub.stderr.join("").match(new RegExp(refusal, "g"))?.length,
			1,
			"the refusal is said once a session",
		);
		await stub.emit("session_start", { reason: "resume" });
		more(5);
		await run(stub);
		assert.equal(stub.stderr.join("").match(new RegExp(refusal, "g"))?.length, 2, "and again in the next session");
		stub.compactEnd = new Error("disk full");
		more(6);
		await run(stub);
		assert.match(stub.stderr.join(""), /the over-budget compaction failed: disk full/);
	});

	it("under policy=economic, waits while the messages hold no more than keepRecentTokens, though usage is past the backstop", async () => {
		process.env.CONTEXTFOLD_POLICY = "economic";
		try {
			// A large system prompt: usage 30k in a 100k window (past the 25k backstop) with a few
			// thousand tokens of messages. Pi keeps its default 20k raw, so it would refuse to compact.
			const stub = loadStub({ window: 100_000 });
			// Its two outputs are worth an event of 1k, so the context is not plain Pi's (which compacts
			// only at Pi's own point).
			stub.settings = { ...stub.settings, "context-fold": { minEvent: 1_000 } };
			bashSession(stub, 2);
			stub.usage = { tokens: 30_000, contextWindow: 100_000 };
			await stub.emit("session_start", { reason: "startup" });
			await run(stub);
			assert.equal(stub.compactions.length, 0);
			assert.doesNotMatch(stub.stderr.join(""), /compacting now/);
			stub.addMessage({
				role: "user",
				content: `constraints:\n${"keep this exact wording. ".repeat(3600)}`,
				timestamp: 9,
			});
			stub.usage = { tokens: 52_000, contextWindow: 100_000 };
			await run(stub);
			assert.equal(stub.compactions.length, 1, "the messages now hold more than 20k: Pi can compact");
		} finally {
			delete process.env.CONTEXTFOLD_POLICY;
		}
	});

	it("under policy=economic, compacts below the budget once folding cannot hold the backstop; the ladder does not", async () => {
		for (const policy of ["economic", "ladder"]) {
			process.env.CONTEXTFOLD_POLICY = policy;
			try {
				// ~11k tokens in a 20k window: past a backstopAt of 3.6k, under the budget (75 %); Pi keeps
				// 1k raw at a compaction.
				const stub = loadStub({ window: 20_000 });
				stub.settings = {
					...stub.settings,
					"context-fold": { backstopAt: 3_600 },
					compaction: { keepRecentTokens: 1_000 },
				};
				bigPrompt(stub);
				await stub.emit("session_start", { reason: "startup" });
				await run(stub);
				if (policy === "economic") {
					assert.equal(stub.compactions.length, 1, "the backstop compacts");
					assert.match(stub.stderr.join(""), /below the economic policy's backstop .*, so it compacted/);
				} else assert.equal(stub.compactions.length, 0, "the ladder waits for the budget");
			} finally {
				delete process.env.CONTEXTFOLD_POLICY;
			}
		}
	});

	it("under policy=economic, does not backstop below what a compaction keeps (Pi's keepRecentTokens)", async () => {
		process.env.CONTEXTFOLD_POLICY = "economic";
		try {
			// The same ~11k tokens past the same backstopAt, but Pi keeps the newest 20k raw at a
			// compaction (its default): no compaction could bring the context lower, so the backstop sits at 25k.
			const stub = loadStub({ window: 20_000 });
			stub.settings = { ...stub.settings, "context-fold": { backstopAt: 3_600 } };
			bigPrompt(stub);
			await stub.emit("session_start", { reason: "startup" });
			await run(stub);
			assert.equal(stub.compactions.length, 0);
			assert.doesNotMatch(stub.stderr.join(""), /backstop/);
		} finally {
			delete process.env.CONTEXTFOLD_POLICY;
		}
	});

	it("under policy=economic, its own compaction keeps the hot tail raw; a compaction Pi or the user starts keeps Pi's cut", async () => {
		// Eight ~3k-token prompts (user text never folds): past the backstop (1.25 x Pi's
		// keepRecentTokens, 15k, above a backstopAt of 18k). Pi's cut keeps its 15k; ours keeps hotTail, 2k.
		// Pi's threshold compaction is off: with it on, a context nothing can fold out of is plain Pi's,
		// compacted only at Pi's own point.
		const session = () => {
			const stub = loadStub({ window: 100_000 });
			stub.settings = {
				"context-fold": { policy: "economic", hotTail: 2_000, backstopAt: 18_000 },
				compaction: { enabled: false, keepRecentTokens: 15_000 },
			};
			for (let i = 0; i < 8; i++) {
				stub.addMessage({
					role: "user",
					content: `prompt ${i}: ${"keep these words. ".repeat(680)}`,
					timestamp: 1,
				});
				stub.addMessage({
					role: "assistant",
					content: [{ type: "text", text: `ok ${i}` }],
					responseId: `r${i}`,
					timestamp: 2,
				});
			}
			return stub;
		};
		/** Pi's preparation: its cut at the fifth-newest prompt (about 15k tokens kept). */
		const answer = async (stub: ReturnType<typeof loadStub>) => {
			const entries = stub.entries.filter((e) => e.type === "message");
			const piCut = entries.length - 10;
			const [result] = (await stub.emit("session_before_compact", {
				preparation: {
					messagesToSummarize: entries.slice(0, piCut).map((e) => e.message),
					turnPrefixMessages: [],
					firstKeptEntryId: entries[piCut].id,
					tokensBefore: 24_000,
				},
				branchEntries: [...stub.entries],
				reason: "manual",
			})) as Compaction[];
			return { result, entries, piCut };
		};

		const own = session();
		await own.emit("session_start", { reason: "startup" });
		await run(own);
		assert.equal(own.compactions.length, 1, "the backstop compacts");
		const ours = await answer(own);
		const lastPrompt = ours.entries.length - 2;
		assert.equal(
			ours.result?.compaction?.firstKeptEntryId,
			ours.entries[lastPrompt].id,
			"only the newest prompt stays raw",
		);
		assert.match(ours.result?.compaction?.summary ?? "", new RegExp(`removed ${lastPrompt} messages`));
		assert.match(
			ours.result?.compaction?.summary ?? "",
			/prompt 6:/,
			"a prompt between the two cuts is in the summary",
		);

		const manual = session();
		await manual.emit("session_start", { reason: "startup" });
		const pis = await answer(manual);
		assert.equal(pis.result?.compaction?.firstKeptEntryId, pis.entries[pis.piCut].id, "/compact keeps Pi's cut");
		assert.match(pis.result?.compaction?.summary ?? "", new RegExp(`removed ${pis.piCut} messages`));
	});

	it("under policy=economic, reads keepRecentTokens for the model in use (compaction.modelOverrides)", async () => {
		process.env.CONTEXTFOLD_POLICY = "economic";
		try {
			// ~11k tokens in a 20k window, past a backstopAt of 3.6k. Pi keeps 1k by default here, 20k for
			// the model in use: no compaction could go below that for this model, so the backstop sits at 25k.
			const compactions = async (model: { provider: string; id: string }) => {
				const stub = loadStub({ window: 20_000 });
				stub.model = model;
				stub.settings = {
					...stub.settings,
					"context-fold": { backstopAt: 3_600 },
					compaction: { keepRecentTokens: 1_000, modelOverrides: { "p/big-keep": { keepRecentTokens: 20_000 } } },
				};
				bigPrompt(stub);
				await stub.emit("session_start", { reason: "startup" });
				await run(stub);
				return stub.compactions.length;
			};
			assert.equal(await compactions({ provider: "p", id: "big-keep" }), 0, "the override keeps 20k");
			assert.equal(await compactions({ provider: "p", id: "other" }), 1, "any other model keeps 1k");
		} finally {
			delete process.env.CONTEXTFOLD_POLICY;
		}
	});

	it("with compact=native it tells the user once and does not compact", async () => {
		process.env.CONTEXTFOLD_COMPACT = "native";
		try {
			const stub = smallKeep(10_000);
			bigPrompt(stub);
			await stub.emit("session_start", { reason: "startup" });
			for (let i = 0; i < 3; i++) {
				await run(stub);
			}
			assert.equal(stub.compactions.length, 0);
			const told = stub.stderr.join("").match(/past the fold budget/g) ?? [];
			assert.equal(told.length, 1);
			assert.match(stub.stderr.join(""), /\/compact or \/fold-handoff frees it/);
		} finally {
			delete process.env.CONTEXTFOLD_COMPACT;
		}
	});
});
