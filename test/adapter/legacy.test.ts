/**
 * A session context-fold 0.5.1 wrote keeps its folds: the registry rebuild reads 0.5.1's entries
 * (unit tests of the reader), and the hooks, over a stub host holding the fixture session and its
 * 0.5.1 seed index, replay the frozen bytes, serve the 0.5.1 codes, unfold them, fold anew beside
 * them, and compact and hand off with the 0.5.1 index lines.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { rebuildRegistry } from "../../src/adapters/pi/fold/persistence.ts";
import { entryLine } from "../../src/adapters/pi/ui/renderers.ts";
import { fromLegacyId } from "../../src/core/block.ts";
import {
	bigText,
	bytesOf,
	CODES,
	DIGESTS,
	L,
	LEGACY_TYPE,
	legacyCode,
	legacyEntries,
	legacySeedIndex,
	sha,
} from "../fixtures/legacy-0.5.1.ts";
import { foldEntry, loadStub, type StubPi, withEnvVar } from "./stub-pi.ts";

const custom = (data: Record<string, unknown>) => ({ type: "custom", customType: LEGACY_TYPE, data });
const fold = (blockId: string, code: string, extra: Record<string, unknown> = {}) =>
	custom({ kind: "fold", entry: { blockId, code, tool: "bash", isError: false, bytes: 10, ...extra } });
const layer = (seq: number, entries: { id: string; digestText: string }[]) =>
	custom({ kind: "layer", layer: { seq, entries } });

describe("rebuildRegistry over 0.5.1 entries", () => {
	it("reads fold, spool, layer, unfold and layer-break entries without skipping any", () => {
		const { registry, skipped } = rebuildRegistry(legacyEntries());
		assert.deepEqual(skipped, { entries: 0, records: 0, ops: 0, unbacked: 0 });
		const bash = registry.record(L.bashId);
		assert.deepEqual(bash, {
			id: L.bashId,
			code: CODES.bash,
			chars: -1,
			bytes: bytesOf(L.bashText),
			sha256: sha(L.bashText),
			seq: 1,
			kind: "toolResult",
			tool: "bash",
		});
		assert.equal(registry.record("a:resp_4Lw8:0")?.kind, "thinking");
		assert.equal(registry.record("a:resp_4Lw8:1")?.kind, "text");
		assert.equal(registry.idOf(CODES.text), "a:resp_4Lw8:1");
		const spool = registry.record(L.readId);
		assert.equal(spool?.code, CODES.read);
		assert.equal(spool?.sha256, undefined);
		assert.equal(spool?.bytes, bytesOf(L.readText));
		assert.deepEqual(registry.frozenOp(L.bashId), {
			id: L.bashId,
			code: CODES.bash,
			text: DIGESTS.bash,
			legacy: true,
		});
		assert.equal(registry.frozenOp("a:resp_4Lw8:1")?.text, DIGESTS.text);
		assert.equal(registry.frozenOp(L.unfoldedId), undefined);
		assert.equal(registry.isUnfolded(L.unfoldedId), true);
		assert.equal(registry.plannable(L.readId), true, "a spool record folds nothing");
		assert.equal(registry.seq, 2);
	});

	it("keeps the latest record per block id and the latest layer per seq, replayed in ascending seq", () => {
		const { registry, skipped } = rebuildRegistry([
			layer(2, [{ id: "r:b", digestText: "{#bbbbbb FOLDED} b" }]),
			fold("r:a", "aaaaaa", { sha256: "1".repeat(64) }),
			fold("r:b", "bbbbbb"),
			layer(1, [{ id: "r:a", digestText: "{#aaaaaa FOLDED} first" }]),
			layer(1, [{ id: "r:a", digestText: "{#aaaaaa FOLDED} second" }]),
			fold("r:a", "aaaaaa", { sha256: "2".repeat(64) }),
		]);
		assert.deepEqual(skipped, { entries: 0, records: 0, ops: 0, unbacked: 0 });
		assert.equal(registry.record("r:a")?.sha256, "2".repeat(64));
		assert.equal(registry.frozenOp("r:a")?.text, "{#aaaaaa FOLDED} second");
		assert.deepEqual(
			registry.frozenOps().map((op) => op.id),
			["r:a", "r:b"],
		);
		assert.equal(registry.seq, 2);
	});

	it("leaves out a layer op whose block has no record (that block renders raw)", () => {
		const { registry, skipped } = rebuildRegistry([layer(1, [{ id: "r:x", digestText: "{#xxxxxx FOLDED} x" }])]);
		assert.equal(registry.frozenOp("r:x"), undefined);
		assert.equal(registry.seq, 1);
		assert.equal(skipped.unbacked, 1, "and the restore notice counts it");
	});

	it("counts as skipped only what is not a readable shape", () => {
		const { skipped } = rebuildRegistry([
			custom({ kind: "fold", entry: { blockId: "r:a", tool: "bash" } }),
			custom({ kind: "fold", entry: { code: "aaaaaa" } }),
			custom({ kind: "gate", entry: { blockId: "r:g", code: "not a code" } }),
			custom({ kind: "layer", layer: { entries: [] } }),
			custom({ kind: "somethingelse" }),
			custom({ kind: "layer-break", seq: 3 }),
			custom({ kind: "gate", entry: { blockId: "r:g", code: "GGGGGG", tool: "bash", isError: 0 } }),
			layer(2, [{ id: "r:g", digestText: "{#gggggg FOLDED} g" }, { id: "r:h" } as never, "junk" as never]),
		]);
		assert.deepEqual(skipped, { entries: 5, records: 0, ops: 2, unbacked: 0 });
	});

	it("replays 0.5.1 state first, then this version's entries: new 8-character codes coexist", () => {
		const { registry, skipped } = rebuildRegistry([
			...legacyEntries(),
			foldEntry({ kind: "records", seq: 3, records: [{ id: "r:toolu_big1", code: "k3x9a0b2", chars: 10, seq: 3 }] }),
			foldEntry({
				kind: "layer",
				seq: 3,
				ops: [{ id: "r:toolu_big1", code: "k3x9a0b2", text: "{#k3x9a0b2 FOLDED} x" }],
			}),
			foldEntry({ kind: "unfold", ids: ["a:resp_4Lw8:1"] }),
		]);
		assert.deepEqual(skipped, { entries: 0, records: 0, ops: 0, unbacked: 0 });
		assert.equal(registry.seq, 3);
		assert.equal(registry.idOf("k3x9a0b2"), "r:toolu_big1");
		assert.equal(registry.idOf(CODES.bash), L.bashId);
		assert.equal(registry.frozenOp("a:resp_4Lw8:1"), undefined);
		assert.ok(registry.frozenOp(L.bashId));
	});
});

const WINDOW = 32_000;

/** A stub host holding the fixture session (and, with `dir`, its 0.5.1 seed index on disk). */
async function legacyStub(dir?: string) {
	const stub = dir
		? loadStub({ window: WINDOW, sessionDir: dir, sessionFile: join(dir, "s.jsonl") })
		: loadStub({ window: WINDOW });
	let n = 0;
	for (const entry of legacyEntries()) stub.entries.push({ ...entry, id: `l${++n}` });
	if (dir) {
		mkdirSync(join(dir, "context-fold", "stub"), { recursive: true });
		writeFileSync(join(dir, "context-fold", "stub", "seed-index.jsonl"), legacySeedIndex());
	}
	stub.usage = { tokens: 20_000, contextWindow: WINDOW };
	await stub.emit("session_start", { reason: "resume" });
	return stub;
}

async function inTempDir(body: (dir: string) => Promise<void>): Promise<void> {
	const dir = mkdtempSync(join(tmpdir(), "cf-legacy-"));
	try {
		await body(dir);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

type Sent = Record<string, unknown>[];
const resultOf = (sent: Sent, callId: string) => sent.find((m) => m.toolCallId === callId)?.content;
const partsOf = (sent: Sent, responseId: string) =>
	sent.find((m) => m.responseId === responseId)?.content as Record<string, unknown>[];

describe("a 0.5.1 session through the hooks", () => {
	it("restores without a warning and sends 0.5.1's frozen bytes verbatim; the unfolded block goes raw", async () => {
		await inTempDir(async (dir) => {
			const stub = await legacyStub(dir);
			const sent = await stub.request();
			assert.deepEqual(stub.stderr, []);
			assert.deepEqual(resultOf(sent, "toolu_01QmZ7"), [{ type: "text", text: DIGESTS.bash }]);
			const parts = partsOf(sent, "resp_4Lw8");
			assert.equal(parts[0].thinking, DIGESTS.thinking);
			assert.equal(parts[1].text, DIGESTS.text);
			assert.deepEqual(resultOf(sent, "toolu_unf01"), [{ type: "text", text: L.unfoldedText }]);
			assert.deepEqual(resultOf(sent, "call_9fK2xT"), [{ type: "text", text: L.readText }]);
		});
	});

	it("folds anew beside the 0.5.1 folds with 8-character codes, and renders the same bytes after a restart", async () => {
		const stub = await legacyStub();
		const first = await stub.request();
		const tags = (sent: Sent) =>
			sent
				.filter((m) => m.role === "toolResult")
				.map((m) => /^\{#([0-9a-z]+) FOLDED\}/.exec((m.content as { text: string }[])[0].text)?.[1])
				.filter(Boolean);
		const codes = tags(first);
		assert.ok(codes.includes(CODES.bash));
		const fresh = codes.filter((c) => c?.length === 8);
		assert.ok(fresh.length >= 1, `new folds: ${codes}`);
		const records = stub.entries.filter((e) => (e.data as { kind?: string })?.kind === "records");
		assert.equal((records[0].data as { seq: number }).seq, 3, "numbered after 0.5.1's layers");
		await stub.emit("session_start", { reason: "resume" });
		assert.equal(JSON.stringify(await stub.request()), JSON.stringify(first));
		assert.deepEqual(stub.stderr, []);
		const recalled = await stub.call("recall_folded", { codes: [fresh[0], CODES.bash] });
		assert.match(recalled, new RegExp(`^Recalled #${fresh[0]}: bash, 600 lines \\(sha256 verified\\)`));
		assert.match(recalled, new RegExp(`Recalled #${CODES.bash}: bash, 14 lines \\(sha256 verified\\)`));
	});

	it("serves 0.5.1 codes: sha-verified where the record has a hash, marked unverified where it has none", async () => {
		const stub = await legacyStub();
		await stub.request();
		const bash = await stub.call("recall_folded", { codes: [`{#${CODES.bash} FOLDED}`] });
		assert.equal(bash, `Recalled #${CODES.bash}: bash, 14 lines (sha256 verified)\n${L.bashText}`);
		const thinking = await stub.call("recall_folded", { codes: [CODES.thinking, CODES.text] });
		assert.ok(thinking.includes(`(sha256 verified)\n${L.thinkingText}`), thinking);
		assert.ok(thinking.includes(`(sha256 verified)\n${L.textText}`), thinking);
		const spool = await stub.call("recall_folded", { codes: [CODES.read] });
		assert.equal(
			spool,
			`Recalled #${CODES.read}: read, 2 lines (unverified: legacy record without a fold-time sha256)\n${L.readText}`,
		);
		const search = await stub.call("recall_folded", { search: "HEADER_MAGIC" });
		assert.match(search, new RegExp(`Recalled #${CODES.read}`));
	});

	it("serves a sha-less 0.5.1 record whose call id occurs twice from its newest copy, from a child too", async () => {
		await inTempDir(async (dir) => {
			const code = "c0c0c0";
			const message = (m: Record<string, unknown>) => ({ type: "message", message: m });
			const call = (ts: number) =>
				message({
					role: "assistant",
					content: [{ type: "toolCall", id: "call_0", name: "bash", arguments: {} }],
					timestamp: ts,
				});
			const result = (ts: number, text: string) =>
				message({
					role: "toolResult",
					toolCallId: "call_0",
					toolName: "bash",
					content: [{ type: "text", text }],
					timestamp: ts,
				});
			const entries = [
				message({ role: "user", content: "go", timestamp: 10 }),
				call(11),
				result(12, "OLD COPY"),
				call(13),
				result(14, "NEW COPY"),
				custom({ kind: "spool", entry: { blockId: "r:call_0", code, tool: "bash", isError: false, bytes: 8 } }),
			];
			const file = join(dir, "parent.jsonl");
			const header = { type: "session", version: 3, id: "p", timestamp: "2026-09-10T14:00:00.000Z", cwd: dir };
			const lines = entries.map((e, i) =>
				JSON.stringify({ ...e, id: `p${i}`, parentId: i > 0 ? `p${i - 1}` : null }),
			);
			writeFileSync(file, `${[JSON.stringify(header), ...lines].join("\n")}\n`);
			const local = loadStub({ window: WINDOW });
			local.entries.push(...entries.map((e, i) => ({ ...e, id: `p${i}` })));
			await local.emit("session_start", { reason: "resume" });
			assert.match(await local.call("recall_folded", { codes: [code] }), /\nNEW COPY$/);
			const child = loadStub({ window: WINDOW, parentSession: file, seeded: true });
			child.addMessage({ role: "user", content: "seeded", timestamp: 1 });
			await child.emit("session_start", { reason: "new" });
			assert.match(
				await child.call("recall_folded", { codes: [code] }),
				/\nNEW COPY$/,
				"the parent route serves the same copy",
			);
		});
	});

	it("lists 0.5.1's fold events, unfold and deterministic compaction in the status, by code and size", async () => {
		const stub = await legacyStub();
		stub.entries.push({
			type: "compaction",
			id: "c1",
			summary: "# Compaction summary (deterministic seed index — no model involved)\n...",
			firstKeptEntryId: "l1",
			tokensBefore: 171_000,
		});
		const { stdout } = await stub.command("context-fold", "status");
		const events = stdout.slice(stdout.indexOf("\nEvents"));
		assert.match(events, /\n {2}#1 fold {3}3 blocks, ~[\d.]+k? kept out/, events);
		assert.match(events, /\n {2}#2 fold {3}1 block, ~\d+ kept out/);
		assert.match(events, new RegExp(`\n {2}unfold {4}#${CODES.unfolded}, ~\\d+ back`));
		assert.match(events, /\n {2}compaction from ~171k, deterministic summary \(no model call\)/);
		assert.doesNotMatch(events, /~0 kept out|~0 back|#\? fold/);
		const layerOne = legacyEntries().find(
			(e) => (e as { data?: { layer?: { seq?: number } } }).data?.layer?.seq === 1,
		) as { data: unknown };
		const record = (id: string) => rebuildRegistry(legacyEntries()).registry.record(id);
		assert.match(
			entryLine(layerOne.data, record) ?? "",
			new RegExp(`^folded #${CODES.bash}, #${CODES.thinking}, #${CODES.text} · ~[\\d.]+k? tokens kept out$`),
			"the transcript's line for a 0.5.1 layer",
		);
	});

	it("unfolds a 0.5.1 code: raw from the next request on, and after a restart", async () => {
		const stub = await legacyStub();
		await stub.request();
		assert.match(await stub.call("unfold", { codes: [CODES.text] }), new RegExp(`^Unfolded #${CODES.text}`));
		const unfoldEntry = stub.entries.at(-1)?.data as { ids?: string[] };
		assert.deepEqual(unfoldEntry.ids, [fromLegacyId(L.textId)]);
		assert.equal(partsOf(await stub.request(), "resp_4Lw8")[1].text, L.textText);
		await stub.emit("session_start", { reason: "resume" });
		const sent = await stub.request();
		assert.equal(partsOf(sent, "resp_4Lw8")[1].text, L.textText);
		assert.equal(partsOf(sent, "resp_4Lw8")[0].thinking, DIGESTS.thinking);
	});

	it("says a 0.5.1 record without a layer is in the context raw, never that a compaction removed it", async () => {
		const stub = await legacyStub();
		await stub.request();
		const entries = stub.entries.length;
		const answer = await stub.call("unfold", { codes: [CODES.read] });
		assert.equal(answer, `#${CODES.read} is not folded: it is in the context as it was read`);
		assert.equal(stub.entries.length, entries, "nothing recorded");
		const recalled = await stub.command("context-fold", `recall ${CODES.read}`);
		assert.doesNotMatch(recalled.stdout, /No longer in the context/);
		const refused = await stub.command("context-fold", `unfold ${CODES.read}`);
		assert.match(`${refused.stdout}${refused.stderr}`, /is not folded: it is in the context as it was read/);
	});

	it("sends raw, as 0.5.1 did, both blocks of a call id a provider used twice, whatever its layer froze", async () => {
		// A window so large that this version folds nothing new: only 0.5.1's layers decide.
		const stub = loadStub({ window: 10_000_000 });
		const twice = "later result of a reused call id";
		let n = 0;
		const at = (k: number) => 1_757_512_900_000 + k;
		for (const entry of [
			...legacyEntries(),
			{
				type: "message",
				message: {
					role: "assistant",
					content: [
						{ type: "toolCall", id: "toolu_01QmZ7", name: "bash", arguments: { command: "npx vitest run" } },
					],
					stopReason: "toolUse",
					responseId: "resp_again",
					timestamp: at(1),
				},
			},
			{
				type: "message",
				message: {
					role: "toolResult",
					toolCallId: "toolu_01QmZ7",
					toolName: "bash",
					content: [{ type: "text", text: twice }],
					isError: false,
					timestamp: at(2),
				},
			},
		])
			stub.entries.push({ ...entry, id: `l${++n}` });
		await stub.emit("session_start", { reason: "resume" });
		const sent = await stub.request();
		assert.ok(JSON.stringify(sent).includes(DIGESTS.thinking), "0.5.1's other folds stand");
		const copies = sent.filter((m) => m.toolCallId === "toolu_01QmZ7").map((m) => m.content);
		const texts = copies.map((content) => (content as { text: string }[]).map((part) => part.text).join("\n"));
		assert.deepEqual(texts, [L.bashText, twice]);
		assert.ok(!JSON.stringify(copies).includes(DIGESTS.bash), "0.5.1's digest of an ambiguous id is not sent");
		assert.deepEqual(stub.stderr, [], "no block is said to have changed");
		assert.match(
			await stub.call("recall_folded", { codes: [CODES.bash] }),
			new RegExp(`^Recalled #${CODES.bash}: bash, 14 lines \\(sha256 verified\\)`),
		);
	});

	it("a 0.5.1 code of a block this version folded again is served saying which code it has now", async () => {
		const stub = loadStub({ window: WINDOW });
		const big = L.bigIds[0];
		const text = bigText(1);
		const record = {
			blockId: big,
			code: legacyCode(big),
			tool: "bash",
			isError: false,
			bytes: bytesOf(text),
			sha256: sha(text),
		};
		let n = 0;
		for (const entry of [...legacyEntries(), custom({ kind: "fold", entry: record })])
			stub.entries.push({ ...entry, id: `l${++n}` });
		stub.usage = { tokens: 20_000, contextWindow: WINDOW };
		await stub.emit("session_start", { reason: "resume" });
		const sent = await stub.request();
		const now = /^\{#([0-9a-z]{8}) FOLDED\}/.exec(
			((sent.find((m) => m.toolCallId === "toolu_big1")?.content as { text: string }[]) ?? [])[0]?.text ?? "",
		)?.[1];
		assert.ok(now, "this version folded the block anew");
		const answer = await stub.call("recall_folded", { codes: [legacyCode(big)] });
		assert.ok(
			answer.startsWith(
				`#${legacyCode(big)} names the block now folded as #${now}.\nRecalled #${now}: bash, 600 lines`,
			),
			answer.slice(0, 200),
		);
	});

	it("compacts and hands off with the 0.5.1 index lines: their facts and a pointer to a 0.5.1 code", async () => {
		await inTempDir(async (dir) => {
			const stub = await legacyStub(dir);
			await stub.request();
			const messages = stub.entries.filter((e) => e.type === "message").map((e) => e.message);
			const [result] = (await stub.emit("session_before_compact", {
				preparation: {
					messagesToSummarize: messages.slice(0, -3),
					turnPrefixMessages: [],
					firstKeptEntryId: "keep",
					tokensBefore: 20_000,
					previousSummary: undefined,
				},
				reason: "manual",
			})) as { compaction?: { summary: string } }[];
			const summary = result?.compaction?.summary ?? "";
			assert.ok(summary.includes(`- ${L.indexOnlyFile}\n`), summary);
			assert.ok(summary.includes(L.indexOnlyIdentifier), summary);
			assert.ok(summary.includes(`{#${CODES.bash} FOLDED} bash`), summary);
			assert.ok(!summary.includes(L.retractedIdentifier), summary);
			const out = await stub.command("fold-handoff", "finish the header fix");
			const seed = readFileSync(out.stderr.trim(), "utf8");
			assert.ok(seed.includes(L.indexOnlyIdentifier), seed);
			assert.ok(seed.includes(`{#${CODES.bash} FOLDED}`), seed);
			assert.deepEqual(stub.stderr, []);
		});
	});
});

describe("a 0.5.1 fold on another branch", () => {
	const text = Array.from({ length: 300 }, (_, i) => `alpha line ${i} output ok`).join("\n");
	const code = legacyCode("r:ca");
	const foldData = {
		kind: "fold",
		entry: { blockId: "r:ca", code, tool: "bash", isError: false, bytes: bytesOf(text), sha256: sha(text) },
	};

	/** A session whose 0.5.1 fold of `ca`'s result lies off the branch, which a branch summary naming its code closes. */
	async function leftBranch(): Promise<StubPi> {
		const stub = loadStub({ toolsAsRegistered: true });
		stub.addMessage({ role: "user", content: "start", timestamp: 1_700_000_000_000 });
		stub.addMessage({
			role: "assistant",
			content: [{ type: "toolCall", id: "ca", name: "bash", arguments: { command: "a" } }],
			responseId: "ra",
			usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
			stopReason: "toolUse",
			timestamp: 1_700_000_001_000,
		});
		stub.addMessage({
			role: "toolResult",
			toolCallId: "ca",
			toolName: "bash",
			content: [{ type: "text", text }],
			isError: false,
			timestamp: 1_700_000_002_000,
		});
		stub.entries.push({ ...custom(foldData), id: "legacy-fold", parentId: stub.entries.at(-1)?.id });
		stub.entries.push({
			type: "branch_summary",
			id: "summary",
			parentId: stub.entries[0].id,
			fromId: "legacy-fold",
			summary: `Tried the alpha run: {#${code} FOLDED} bash`,
		});
		stub.handlers.set("probe", [(_event, ctx) => ctx]);
		const [ctx] = await stub.emit("probe");
		// The branch now in use: the first user message and the branch summary, as after a /tree move.
		(ctx as { sessionManager: { getBranch: () => unknown[] } }).sessionManager.getBranch = () => [
			stub.entries[0],
			stub.entries.at(-1),
		];
		await stub.emit("session_start", { reason: "resume" });
		return stub;
	}

	it("its code, named by the branch summary, declares the fold tools and is served sha-verified", async () => {
		const stub = await leftBranch();
		await stub.emit("before_agent_start", { prompt: "go on", messageType: "user" });
		assert.ok(stub.active.includes("recall_folded"), `active: ${stub.active}`);
		const recalled = await stub.call("recall_folded", { codes: [code] });
		assert.match(
			recalled,
			new RegExp(`^Recalled #${code}: bash, 300 lines \\(from another branch of this session, sha256 verified\\)`),
		);
		assert.ok(recalled.includes("alpha line 299 output ok"));
	});

	it("a child session reads it from its parent's other branch", async () => {
		await inTempDir(async (dir) => {
			const stub = await leftBranch();
			const parent = join(dir, "parent.jsonl");
			const header = { type: "session", version: 3, id: "parent", timestamp: new Date(0).toISOString(), cwd: dir };
			// The parent's last entry (its leaf) is the branch summary: the fold is off its last branch.
			writeFileSync(parent, `${[header, ...stub.entries].map((e) => JSON.stringify(e)).join("\n")}\n`);
			const child = loadStub({ parentSession: parent, seeded: true });
			child.addMessage({ role: "user", content: `seeded: {#${code} FOLDED}`, timestamp: 1 });
			await child.emit("session_start", { reason: "new" });
			const recalled = await child.call("recall_folded", { codes: [code] });
			assert.match(recalled, /sha256 verified/, recalled);
			assert.ok(recalled.includes("alpha line 299 output ok"), recalled);
		});
	});
});

describe("a settings.json Pi cannot read", () => {
	it("is named once, when it holds a context-fold section, and its settings are said not to apply", async () => {
		await inTempDir(async (dir) => {
			await withEnvVar("PI_CODING_AGENT_DIR", dir, async () => {
				writeFileSync(join(dir, "settings.json"), '{ "theme": "dark",, }\n');
				const quiet = loadStub();
				await quiet.emit("session_start", { reason: "startup" });
				assert.deepEqual(quiet.stderr, [], "no context-fold section in it: Pi's own warning is enough");
				writeFileSync(join(dir, "settings.json"), '{ "context-fold": { "policy": "ladder" },, }\n');
				const stub = loadStub();
				await stub.emit("session_start", { reason: "startup" });
				await stub.emit("session_tree", {});
				const said = stub.stderr.filter((line) => line.includes("settings.json"));
				assert.equal(said.length, 1, stub.stderr.join(""));
				assert.match(
					said[0],
					/^context-fold: .*settings\.json cannot be read as JSON \(.*\): Pi reads none of its settings, so the "context-fold" section saved there does not apply; fix the file/,
				);
				const status = (await stub.command("context-fold", "status")).stdout;
				assert.match(status, /Failures {2}1 announced/, status);
			});
		});
	});
});

describe("a global context-fold section that is no object, under a trusted project's section", () => {
	it("is named, though Pi's merge takes the project's section whole", async () => {
		await inTempDir(async (dir) => {
			await withEnvVar("PI_CODING_AGENT_DIR", dir, async () => {
				const global = join(dir, "settings.json");
				writeFileSync(global, JSON.stringify({ "context-fold": "economic" }));
				mkdirSync(join(dir, ".pi"));
				writeFileSync(join(dir, ".pi", "settings.json"), JSON.stringify({ "context-fold": { policy: "ladder" } }));
				const stub = loadStub({ sessionDir: dir });
				stub.projectTrusted = true;
				// What Pi's getSettings() holds: the project's section over the global word.
				stub.settings = { "context-fold": { policy: "ladder" } };
				await stub.emit("session_start", { reason: "startup" });
				const said = stub.stderr.join("");
				assert.ok(
					said.includes(
						`settings context-fold must be an object (in ${global}); this project's section applies here, and in a project without one it is ignored: fix the file`,
					),
					said,
				);
				assert.equal(said.split(global).length - 1, 1, said);
				const status = (await stub.command("context-fold", "status")).stdout;
				assert.match(status, /Failures {2}1 announced/, status);
				// Untrusted, Pi reads the global word itself: it is named once, as the section Pi merged.
				const alone = loadStub({ sessionDir: dir });
				alone.settings = { "context-fold": "economic" };
				await alone.emit("session_start", { reason: "startup" });
				const aloneSaid = alone.stderr.join("");
				assert.equal(aloneSaid.split("must be an object").length - 1, 1, aloneSaid);
			});
		});
	});
});

describe("0.5.1's settings file", () => {
	it("is named once as not read, with where its knobs go now", async () => {
		await inTempDir(async (dir) => {
			await withEnvVar("PI_CODING_AGENT_DIR", dir, async () => {
				const stub = loadStub();
				await stub.emit("session_start", { reason: "startup" });
				assert.deepEqual(stub.stderr, [], "no file, no word");
				writeFileSync(join(dir, "context-fold.json"), '{\n\t"compact": "native",\n\t"tail": 5000\n}\n');
				await stub.emit("session_start", { reason: "resume" });
				await stub.emit("session_tree", {});
				const said = stub.stderr.join("");
				assert.equal(said.split("context-fold.json").length - 1, 1, said);
				assert.match(
					said,
					/context-fold\.json holds context-fold 0\.5\.1's settings, which this version does not read: set them in Pi's settings\.json under "context-fold"/,
				);
			});
		});
	});
});
