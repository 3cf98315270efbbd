/**
 * Hook-level tests of the Pi adapter over a stub ExtensionAPI: the per-turn pipeline, commit
 * order, persistence and rebuild, the tools, config, and every row of the failure-posture table.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { contextFoldOnClock } from "../../src/adapters/pi/index.ts";
import { foldCode } from "../../src/core/digest.ts";
import {
	bashSession,
	exchangeAt,
	loadStub,
	moreChecks,
	resultTexts,
	type StubModel,
	withRetention,
} from "./stub-pi.ts";

const FOLDED = /^\{#([0-9a-z]{8}) FOLDED\}/;

async function started(n = 6) {
	const stub = loadStub();
	bashSession(stub, n);
	await stub.emit("session_start", { reason: "startup" });
	return stub;
}

function foldEntries(stub: ReturnType<typeof loadStub>) {
	return stub.entries.filter((e) => e.type === "custom" && e.customType === "contextfold.fold");
}

describe("per-turn pipeline", () => {
	it("folds old results past the threshold, keeps length and pairing, and keeps error lines", async () => {
		const stub = await started();
		const raw = structuredClone(stub.entries.filter((e) => e.type === "message").map((e) => e.message));
		const sent = await stub.request();
		assert.equal(sent.length, raw.length);
		const texts = resultTexts(sent);
		const folded = texts.filter((t) => FOLDED.test(t));
		assert.ok(folded.length >= 1, "something folded");
		assert.ok(!FOLDED.test(texts.at(-1) ?? ""), "newest result never folds");
		for (const t of folded) assert.match(t, /Error: check \d+ failed at step 7/);
		const calls = sent
			.filter((m) => m.role === "assistant")
			.flatMap((m) => m.content as { type: string; id?: string }[]);
		const ids = calls.filter((c) => c.type === "toolCall").map((c) => c.id);
		const results = sent.filter((m) => m.role === "toolResult").map((m) => m.toolCallId);
		assert.deepEqual(ids, results);
	});

	it("appends records before the layer, and re-renders the same bytes on the next turn and after a restart", async () => {
		const stub = await started();
		const first = JSON.stringify(await stub.request());
		const kinds = foldEntries(stub).map((e) => (e.data as { kind: string }).kind);
		assert.deepEqual(kinds, ["records", "layer"]);
		const second = JSON.stringify(await stub.request());
		assert.equal(second, first, "no new event: byte-identical");
		await stub.emit("session_start", { reason: "resume" });
		assert.equal(JSON.stringify(await stub.request()), first, "rebuilt state renders the same bytes");
		assert.equal(foldEntries(stub).length, 2, "no second event after the restart");
	});

	it("records durable id, code, extent and sha256 of the folded text", async () => {
		const stub = await started();
		await stub.request();
		const records = (foldEntries(stub)[0].data as { records: Record<string, unknown>[] }).records;
		for (const r of records) {
			assert.match(String(r.id), /^r:call_\d+$/);
			assert.equal(r.code, foldCode(String(r.id)));
			assert.equal(typeof r.chars, "number");
			assert.match(String(r.sha256), /^[0-9a-f]{64}$/);
		}
	});

	it("holds a parallel batch that the model has not seen yet, however large", async () => {
		const stub = loadStub();
		stub.addMessage({ role: "user", content: "go", timestamp: 1 });
		stub.addMessage({
			role: "assistant",
			content: [0, 1, 2, 3].map((i) => ({
				type: "toolCall",
				id: `p${i}`,
				name: "bash",
				arguments: { command: `x${i}` },
			})),
			responseId: "r1",
			usage: {},
			stopReason: "toolUse",
			timestamp: 2,
		});
		for (let i = 0; i < 4; i++) {
			stub.addMessage({
				role: "toolResult",
				toolCallId: `p${i}`,
				toolName: "bash",
				content: [{ type: "text", text: "y\n".repeat(6000) }],
				isError: false,
				timestamp: 3 + i,
			});
		}
		await stub.emit("session_start", { reason: "startup" });
		const sent = await stub.request();
		assert.ok(resultTexts(sent).every((t) => !FOLDED.test(t)));
		assert.equal(foldEntries(stub).length, 0);
	});

	it("holds the batch when another extension's context handler adds an assistant message after it", async () => {
		const stub = await started();
		await stub.request();
		stub.addMessage({ role: "user", content: "more", timestamp: 1_800_000_000_000 });
		stub.addMessage({
			role: "assistant",
			content: [0, 1, 2].map((i) => ({
				type: "toolCall",
				id: `q${i}`,
				name: "bash",
				arguments: { command: `q${i}` },
			})),
			responseId: "rq",
			usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
			stopReason: "toolUse",
			timestamp: 1_800_000_000_001,
		});
		for (let i = 0; i < 3; i++)
			stub.addMessage({
				role: "toolResult",
				toolCallId: `q${i}`,
				toolName: "bash",
				content: [{ type: "text", text: `fresh ${i}\n`.repeat(1500) }],
				isError: false,
				timestamp: 1_800_000_000_002 + i,
			});
		// Loaded before context-fold, it appends a made-up call and its result (a reminder, a plan read).
		stub.handlers.get("context")?.unshift(async (event: unknown) => {
			const { messages } = event as { messages: Record<string, unknown>[] };
			const at = 1_800_000_000_100;
			const call = { type: "toolCall", id: "inj", name: "read", arguments: { path: "PLAN.md" } };
			return {
				messages: [
					...messages,
					{ role: "assistant", content: [call], stopReason: "toolUse", timestamp: at },
					{
						role: "toolResult",
						toolCallId: "inj",
						toolName: "read",
						content: [{ type: "text", text: "plan" }],
						timestamp: at + 1,
					},
				],
			};
		});
		const sent = await stub.request();
		const fresh = sent.filter((m) => String(m.toolCallId).startsWith("q"));
		assert.equal(fresh.length, 3);
		for (const m of fresh) {
			const text = (m.content as { text: string }[])[0].text;
			assert.ok(!FOLDED.test(text), `a result the model has not seen went out folded: ${text.slice(0, 80)}`);
		}
	});
});

describe("another extension that hands on the message objects it keeps", () => {
	it("gets its objects back as it gave them, and nothing reads as changed since its fold", async () => {
		const stub = loadStub({ window: 10_000 });
		// Loaded before context-fold: a memoizing transform, the same tool-result object for a result on every request.
		const kept = new Map<unknown, Record<string, unknown>>();
		stub.handlers.get("context")?.unshift(async (event: unknown) => {
			const { messages } = event as { messages: Record<string, unknown>[] };
			return {
				messages: messages.map((m) => {
					if (m.role !== "toolResult") return m;
					const known = kept.get(m.toolCallId);
					if (known) return known;
					kept.set(m.toolCallId, m);
					return m;
				}),
			};
		});
		await stub.emit("session_start", { reason: "startup" });
		let ts = 1_800_000_000_000;
		const texts = new Map<unknown, string>();
		const folded = new Set<unknown>();
		for (let turn = 0; turn < 10; turn++) {
			stub.addMessage({ role: "user", content: `go ${turn}`, timestamp: ts++ });
			stub.addMessage({
				role: "assistant",
				content: [{ type: "toolCall", id: `m${turn}`, name: "bash", arguments: { command: `check ${turn}` } }],
				responseId: `resp${turn}`,
				usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
				stopReason: "toolUse",
				timestamp: ts++,
			});
			const text = Array.from({ length: 200 }, (_, k) => `line ${k} of check ${turn} ok`).join("\n");
			texts.set(`m${turn}`, text);
			stub.addMessage({
				role: "toolResult",
				toolCallId: `m${turn}`,
				toolName: "bash",
				content: [{ type: "text", text }],
				isError: false,
				timestamp: ts++,
			});
			const sent = await stub.request();
			for (const m of sent)
				if (m.role === "toolResult" && FOLDED.test((m.content as { text: string }[])[0].text))
					folded.add(m.toolCallId);
		}
		assert.ok(folded.size >= 4, `folded ${folded.size}`);
		assert.doesNotMatch(stub.stderr.join(""), /changed since|no new fold events/);
		// Every result folded stays folded, and its digest is of the text the result held.
		const last = await stub.request();
		for (const id of folded) {
			const text = ((last.find((m) => m.toolCallId === id)?.content ?? []) as { text: string }[])[0]?.text ?? "";
			assert.match(text, FOLDED, `${String(id)} went out raw`);
			assert.match(text, new RegExp(`check ${String(id).slice(1)} ok`), "a digest of the result's own text");
		}
	});
});

describe("what Pi pays for the hooks", () => {
	it("registers no turn_end handler", () => {
		// Pi 1.6 builds a preview of the whole branch (a session manager and its projection) once before
		// the turn_end handlers and again after each of them, every turn whichever handler it is, so each
		// one slows every model step in proportion to the session's length (agent-session.js
		// `_dispatchTurnEndBoundary`, extensions/runner.js `emitBoundary`). Nothing would be skipped when
		// no extension registers one.
		const stub = loadStub();
		assert.deepEqual(stub.handlers.get("turn_end") ?? [], []);
	});
});

describe("tools", () => {
	it("recall_folded serves the original whole, by grep, by lines and by search; bad input gets a clear message", async () => {
		const stub = await started();
		const sent = await stub.request();
		const digest = resultTexts(sent).find((t) => FOLDED.test(t)) ?? "";
		const code = FOLDED.exec(digest)?.[1] ?? "";
		const id = "r:call_0";
		assert.equal(code, foldCode(id));
		const whole = await stub.call("recall_folded", { codes: [code] });
		assert.match(whole, /sha256 verified/);
		assert.match(whole, /line 199 of check 0 output ok/);
		const grep = await stub.call("recall_folded", { codes: [`{#${code.toUpperCase()} FOLDED}`], grep: "FAILED AT" });
		assert.match(grep, /Error: check 0 failed at step 7/);
		assert.doesNotMatch(grep, /line 100 of/);
		const lines = await stub.call("recall_folded", { codes: [`#${code}`], lines: "3-4" });
		assert.match(lines, /3: line 2 of check 0 output ok\n4: line 3 of check 0 output ok/);
		const search = await stub.call("recall_folded", { search: "check 1 failed" });
		assert.match(search, /^1 block contains "check 1 failed":/);
		assert.match(search, /Error: check 1 failed at step 7/);
		assert.match(await stub.call("recall_folded", {}), /name at least one fold code/);
		assert.match(await stub.call("recall_folded", { codes: ["zz"] }), /not a fold code/);
		assert.match(await stub.call("recall_folded", { codes: ["abcdefgh"] }), /not a fold code of this session/);
		assert.match(await stub.call("recall_folded", { codes: [code], lines: "9-2" }), /`lines` must look like/);
		assert.match(await stub.call("recall_folded", { search: "x".repeat(5000) }), /at most 500/);
		// A match is within one line: a pattern across lines would count blocks and show no match.
		for (const pattern of ["check 1 output ok\nError: check 1 failed", "\n"]) {
			assert.match(await stub.call("recall_folded", { search: pattern }), /`search` holds a line break/);
			assert.match(await stub.call("recall_folded", { codes: [code], grep: pattern }), /`grep` holds a line break/);
		}
		assert.match(await stub.call("recall_folded", { codes: "nonsense" }), /not a fold code/);
	});

	it("reads a header's parent session that is no path as none: an unknown code is only unknown", async () => {
		for (const parentSession of [5, { path: "x" }]) {
			const stub = loadStub({ parentSession, seeded: true });
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			const code = resultTexts(await stub.request())
				.map((t) => FOLDED.exec(t)?.[1])
				.find((c) => c !== undefined);
			assert.ok(code, "the session folded");
			assert.match(stub.stderr.join(""), /names its parent session by no path/);
			assert.match(await stub.call("recall_folded", { codes: ["zzzzzzzz"] }), /not a fold code of this session/);
			// The good code of a mixed call is served all the same.
			assert.match(await stub.call("recall_folded", { codes: [code, "zzzzzzzz"] }), /sha256 verified/);
			assert.match(await stub.call("unfold", { codes: ["zzzzzzzz"] }), /not a fold code of this session/);
		}
	});

	it("flags a call that served nothing as an error result, and nothing else", async () => {
		const stub = await started();
		const code = FOLDED.exec(resultTexts(await stub.request()).find((t) => FOLDED.test(t)) ?? "")?.[1] ?? "";
		const failed = [
			{},
			{ codes: ["zz"] },
			{ codes: ["abcdefgh"] },
			{ codes: "nonsense" },
			{ codes: [code], lines: "9-2" },
			{ codes: [code], grep: "x", lines: "1-2" },
			{ search: "" },
			{ search: "x".repeat(5000) },
		];
		for (const params of failed) {
			assert.equal((await stub.answer("recall_folded", params)).isError, true, JSON.stringify(params));
		}
		const served = [
			{ codes: [code] },
			{ codes: [code, "abcdefgh"] },
			{ codes: [code], grep: "no such line anywhere" },
			{ search: "no such text anywhere" },
			{ codes: ["abcdefgh"], search: "check 1 failed" },
		];
		for (const params of served) {
			assert.equal((await stub.answer("recall_folded", params)).isError, false, JSON.stringify(params));
		}
		for (const params of [{}, { codes: ["zz"] }, { codes: ["abcdefgh"] }, { codes: 7 }]) {
			assert.equal((await stub.answer("unfold", params)).isError, true, JSON.stringify(params));
		}
		const unfolded = await stub.answer("unfold", { codes: [code, "abcdefgh"] });
		assert.match(unfolded.text, /^Unfolded #/);
		assert.equal(unfolded.isError, false);
		const again = await stub.answer("unfold", { codes: [code] });
		assert.match(again.text, /already unfolded/);
		assert.equal(again.isError, false);
		// A block already where the call wants it, beside a code that names nothing: served in part, not failed.
		for (const codes of [
			["abcdefgh", code],
			["bad!", code],
		]) {
			const mixed = await stub.answer("unfold", { codes });
			assert.match(mixed.text, /already unfolded/);
			assert.equal(mixed.isError, false, JSON.stringify(codes));
		}
	});

	it("unfold says when it brings the next request past the fold budget, where a compaction takes it out again", async () => {
		const stub = await started();
		const codes = resultTexts(await stub.request()).flatMap((t) => FOLDED.exec(t)?.[1] ?? []);
		assert.ok(codes.length >= 3, `too few folds: ${codes.length}`);
		const first = await stub.call("unfold", { codes: codes.slice(0, 1) });
		assert.match(first, /^Unfolded #/);
		assert.doesNotMatch(first, /fold budget/);
		const rest = await stub.call("unfold", { codes: codes.slice(1) });
		assert.match(rest, /^Unfolded #/);
		assert.match(
			rest,
			/past the fold budget \(~7\.5k tokens\): context-fold folds other blocks, and where folding cannot bring the context back under, compacts it at the end of a run/,
		);
	});

	it("unfold counts the system prompt and the tools' declarations in the room the window leaves", async () => {
		const plain = await started();
		const codes = resultTexts(await plain.request()).flatMap((t) => FOLDED.exec(t)?.[1] ?? []);
		assert.ok(codes.length >= 2, `too few folds: ${codes.length}`);
		assert.match(await plain.call("unfold", { codes: codes.slice(0, 1) }), /^Unfolded #/);
		// The same session with a system prompt that leaves less room than one block's return needs.
		const large = await started();
		large.systemPrompt = "Project rule: keep answers short and precise.\n".repeat(700);
		resultTexts(await large.request());
		const answer = await large.call("unfold", { codes: codes.slice(0, 1) });
		assert.match(
			answer,
			new RegExp(
				`^#${codes[0]} stays folded: it would add ~[\\d.]+k? tokens where ~[\\d.]+k? are left in the window`,
			),
		);
		const sent = JSON.stringify(await large.request());
		assert.match(sent, new RegExp(`\\{#${codes[0]} FOLDED\\}`), "still folded in the next request");
	});

	it("unfold of a code another branch folded, whose block is raw on this one, says so as an ordinary answer", async () => {
		const stub = await started();
		const first = await stub.request();
		const code = FOLDED.exec(resultTexts(first)[0])?.[1];
		assert.ok(code, "the first result folded");
		// A /tree move to a branch with the same messages and none of the fold entries, where nothing folds.
		const branch = stub.entries.filter((e) => e.type !== "custom");
		stub.handlers.set("probe", [(_event, ctx) => ctx]);
		const [ctx] = await stub.emit("probe");
		(ctx as { sessionManager: { getBranch: () => unknown[] } }).sessionManager.getBranch = () => branch;
		stub.window = 200_000;
		await stub.emit("session_tree", {});
		const raw = await stub.request();
		assert.doesNotMatch(resultTexts(raw)[0], FOLDED, "raw on this branch");
		const answer = await stub.answer("unfold", { codes: [code] });
		assert.equal(
			answer.text,
			`#${code} is not folded on this branch (another branch folded it): it is in the context as it was read`,
		);
		assert.equal(answer.isError, false);
	});

	it("unfold restores the raw block from the next request on, persists, and survives a restart", async () => {
		const stub = await started();
		const before = await stub.request();
		const idx = resultTexts(before).findIndex((t) => FOLDED.test(t));
		const code = FOLDED.exec(resultTexts(before)[idx])?.[1] ?? "";
		assert.match(await stub.call("unfold", { codes: [code] }), /Unfolded/);
		const after = await stub.request();
		assert.doesNotMatch(resultTexts(after)[idx], FOLDED);
		assert.match(resultTexts(after)[idx], /line 199 of check 0/);
		await stub.emit("session_start", { reason: "resume" });
		const resumed = await stub.request();
		assert.equal(JSON.stringify(resumed), JSON.stringify(after));
		assert.match(await stub.call("unfold", { codes: [code] }), /already unfolded/);
	});

	it("registers both tools; recall_folded's description says what a fold tag stands for", () => {
		const stub = loadStub();
		assert.deepEqual([...stub.tools.keys()].sort(), ["recall_folded", "unfold"]);
		assert.match(stub.tools.get("recall_folded")?.description ?? "", /\{#<code> FOLDED\}/);
		assert.match(stub.tools.get("unfold")?.description ?? "", /recall_folded/);
	});
});

describe("failure posture", () => {
	it("a throwing fold pass sends that turn raw and says so", async () => {
		const stub = await started();
		stub.model = new Proxy({} as never, {
			ownKeys() {
				throw new Error("model exploded");
			},
		});
		const sent = await stub.request();
		assert.ok(resultTexts(sent).every((t) => !FOLDED.test(t)));
		assert.match(stub.stderr.join(""), /fold pass failed, this turn goes out raw: model exploded/);
	});

	it("a persistence failure rejects the whole event: the turn goes out raw and nothing is frozen", async () => {
		const stub = await started();
		stub.failAppend = true;
		const sent = await stub.request();
		assert.ok(resultTexts(sent).every((t) => !FOLDED.test(t)));
		assert.match(stub.stderr.join(""), /fold event rejected/);
		assert.equal(foldEntries(stub).length, 0);
		stub.failAppend = false;
		const retry = await stub.request();
		assert.ok(
			resultTexts(retry).some((t) => FOLDED.test(t)),
			"the next turn can fold again",
		);
	});

	it("a code collision holds only that block raw; the rest of the event commits", async () => {
		const stub = loadStub();
		bashSession(stub, 6);
		const victim = "r:call_1";
		stub.entries.push({
			type: "custom",
			id: "x1",
			customType: "contextfold.fold",
			data: {
				v: 1,
				kind: "records",
				seq: 0,
				records: [{ id: "r:someone-else", code: foldCode(victim), chars: 1, seq: 0 }],
			},
		});
		await stub.emit("session_start", { reason: "startup" });
		const sent = await stub.request();
		const texts = resultTexts(sent);
		assert.doesNotMatch(texts[1], FOLDED, "the colliding block stays raw");
		assert.match(texts[0], FOLDED, "the rest folds");
		assert.match(stub.stderr.join(""), new RegExp(`fold code ${foldCode(victim)} of r:call_1 collides`));
		const again = await stub.request();
		assert.doesNotMatch(resultTexts(again)[1], FOLDED, "held raw for the session");
	});

	it("a failing restore renders prior folds raw for the session and says so", async () => {
		const stub = await started();
		await stub.request();
		const code = FOLDED.exec(resultTexts(await stub.request()).find((t) => FOLDED.test(t)) ?? "")?.[1];
		assert.ok(code, "folded before the restore");
		stub.failBranch = true;
		await stub.emit("session_start", { reason: "resume" });
		assert.match(stub.stderr.join(""), /could not restore fold state/);
		stub.failBranch = false;
		stub.usage = { tokens: 100, contextWindow: stub.window };
		const after = resultTexts(await stub.request());
		assert.ok(!after.some((t) => FOLDED.test(t)), "a prior fold still rendered after the failed restore");
		assert.match(
			await stub.call("recall_folded", { codes: [code] }),
			new RegExp(
				`^Recalled #${code}: bash, 200 lines \\(from this branch's records, which its fold state lacks, sha256 verified\\)`,
			),
			"the session file still serves what the lost fold state named",
		);
		assert.equal(
			await stub.call("unfold", { codes: [code] }),
			`#${code} is already raw: this branch's fold state could not be restored, so its folds are sent raw; recall_folded reads it`,
		);
		const found = await stub.call("recall_folded", { search: "line 3 of check 0 output ok" });
		assert.match(found, new RegExp(`#${code}`), "search finds it too");
	});

	it("a block the ledger cannot verify is served from live history while live, and errors once gone", async () => {
		const stub = await started();
		const sent = await stub.request();
		const code = FOLDED.exec(resultTexts(sent)[0])?.[1] ?? "";
		const entry = stub.entries.find(
			(e) => (e.message as { toolCallId?: string } | undefined)?.toolCallId === "call_0",
		);
		const message = entry?.message as { content: { text: string }[] };
		message.content[0].text = message.content[0].text.replace("line 5 of", "tampered");
		const live = await stub.call("recall_folded", { codes: [code], grep: "tampered" });
		assert.match(live, /does not match the fold-time sha256; served from live history, which matches it/);
		assert.match(live, /no line contains/, "the live copy is the one the hook saw");
		// A new process reads live history from the same tampered file: its copy cannot vouch for itself.
		const resumed = loadStub();
		resumed.entries.push(...stub.entries);
		await resumed.emit("session_start", { reason: "resume" });
		await resumed.request();
		const reread = await resumed.call("recall_folded", { codes: [code], grep: "tampered" });
		assert.match(
			reread,
			/served from live history, which does not match the fold-time sha256 either: the block changed since it was folded/,
		);
		const idx = stub.entries.indexOf(entry as Record<string, unknown>);
		stub.entries.splice(idx - 1, 2);
		await stub.request();
		const gone = await stub.call("recall_folded", { codes: [code] });
		assert.match(gone, /error: .*has left live history/);
	});
});

describe("config", () => {
	it("CONTEXTFOLD=0 registers nothing", () => {
		for (const value of ["0", "off", "false"]) {
			process.env.CONTEXTFOLD = value;
			try {
				const stub = loadStub();
				assert.equal(stub.handlers.size, 0);
				assert.equal(stub.tools.size, 0);
				assert.deepEqual(stub.stderr, []);
			} finally {
				delete process.env.CONTEXTFOLD;
			}
		}
	});

	it("a CONTEXTFOLD value not understood (disable) registers nothing either, and says so on stderr", () => {
		process.env.CONTEXTFOLD = "disable";
		try {
			const stub = loadStub();
			assert.equal(stub.handlers.size, 0);
			assert.equal(stub.tools.size, 0);
			assert.match(
				stub.stderr.join(""),
				/^context-fold: CONTEXTFOLD="disable" is not understood, so context-fold is off/,
			);
		} finally {
			delete process.env.CONTEXTFOLD;
		}
	});

	it("a CONTEXTFOLD value not understood is said once, though Pi loads the extension for every session runtime", () => {
		const said: string[] = [];
		const sink = (message: string) => said.push(message);
		const env = { CONTEXTFOLD: "banana" };
		for (let i = 0; i < 4; i++) contextFoldOnClock(Date.now, sink, env)({} as ExtensionAPI);
		assert.equal(said.length, 1, said.join("\n"));
		assert.match(said[0], /CONTEXTFOLD="banana" is not understood/);
		contextFoldOnClock(Date.now, sink, { CONTEXTFOLD: "disable" })({} as ExtensionAPI);
		assert.equal(said.length, 2, "another value is said too");
	});

	it("environment beats saved settings", async () => {
		const folds = async (saved: number, env: number | undefined) => {
			// The stub's session never read from the cache, so the cold threshold is the one in force.
			if (env === undefined) delete process.env.CONTEXTFOLD_COLD_FOLD_AT;
			else process.env.CONTEXTFOLD_COLD_FOLD_AT = String(env);
			try {
				const stub = loadStub({ window: 100_000 });
				stub.settings = { "context-fold": { policy: "ladder", coldFoldAt: saved, tail: 1000, step: 0.01 } };
				bashSession(stub, 6);
				stub.usage = { tokens: 30_000, contextWindow: 100_000 };
				await stub.emit("session_start", { reason: "startup" });
				return resultTexts(await stub.request()).some((t) => FOLDED.test(t));
			} finally {
				delete process.env.CONTEXTFOLD_COLD_FOLD_AT;
			}
		};
		assert.equal(await folds(0.9, undefined), false, "saved 0.9: no fold at 30 %");
		assert.equal(await folds(0.9, 0.2), true, "the environment's 0.2 wins over the saved 0.9");
		assert.equal(await folds(0.2, 0.9), false, "the environment's 0.9 wins over the saved 0.2");
	});

	it("a bad value is reported once and the previous value used", async () => {
		process.env.CONTEXTFOLD_FOLD_AT = "banana";
		try {
			const stub = loadStub();
			stub.settings = { "context-fold": { policy: "ladder", tail: 5000 } };
			bashSession(stub, 6);
			await stub.emit("session_start", { reason: "startup" });
			await stub.emit("session_tree", {});
			const reports = stub.stderr.join("").match(/CONTEXTFOLD_FOLD_AT="banana" is not a valid fraction/g) ?? [];
			assert.equal(reports.length, 1);
		} finally {
			delete process.env.CONTEXTFOLD_FOLD_AT;
		}
	});

	it("names once a cacheTtlByProvider entry that matches no provider Pi knows, in any case", async () => {
		const stub = loadStub();
		stub.providers = ["anthropic", "openai", "fake"];
		stub.settings = { "context-fold": { cacheTtlByProvider: "Anthropic=3600, antropic=3600, gemeni=60" } };
		await stub.emit("session_start", { reason: "startup" });
		await stub.emit("session_tree", {});
		assert.deepEqual(stub.stderr.join("").trim().split("\n"), [
			'context-fold: cacheTtlByProvider entry "antropic" names no provider Pi knows, so it never applies (did you mean anthropic?)',
			`context-fold: cacheTtlByProvider entry "gemeni" names no provider Pi knows, so it never applies (a provider's name as /model shows it, e.g. anthropic)`,
		]);
		const quiet = loadStub();
		quiet.settings = { "context-fold": { cacheTtlByProvider: "antropic=3600" } };
		await quiet.emit("session_start", { reason: "startup" });
		assert.deepEqual(quiet.stderr, [], "without Pi's model registry nothing is judged");
		// A provider named twice in any case: the later entry never applies, and is named once.
		const twice = loadStub();
		twice.settings = { "context-fold": { cacheTtlByProvider: "fake=60, Fake=7200" } };
		await twice.emit("session_start", { reason: "startup" });
		await twice.emit("session_tree", {});
		assert.deepEqual(twice.stderr.join("").trim().split("\n"), [
			'context-fold: cacheTtlByProvider entry "Fake=7200" names a provider named before, so it never applies (the first does)',
		]);
	});

	/** Whether the next request folds after two responses that read `cacheRead` from the cache, at 30 % usage. */
	const foldsAfterTwoResponses = async (settings: Record<string, unknown>, cacheRead: number) => {
		const stub = loadStub({ window: 100_000 });
		stub.settings = { "context-fold": settings };
		bashSession(stub, 6);
		stub.usage = { tokens: 30_000, contextWindow: 100_000 };
		await stub.emit("session_start", { reason: "startup" });
		for (let i = 0; i < 2; i++) {
			await stub.emit("message_end", {
				message: { role: "assistant", usage: { input: 10, output: 5, cacheRead, cacheWrite: 0 } },
			});
		}
		return resultTexts(await stub.request()).some((t) => FOLDED.test(t));
	};

	it("the cold threshold follows the cache telemetry: two responses without a cache read lower it", async () => {
		const ladder = { policy: "ladder", tail: 1000, step: 0.01 };
		assert.equal(
			await foldsAfterTwoResponses(ladder, 0),
			true,
			"never a cache read: 30 % is past the 25 % cold threshold",
		);
		assert.equal(await foldsAfterTwoResponses(ladder, 500), false, "a warm cache: 30 % is below the 45 % threshold");
	});

	it("under the economic policy, two responses without a cache read make an event of half minEvent worth it", async () => {
		// The results outside the tails save about 7k: less than a 12k minEvent, more than half of it.
		const economic = { policy: "economic", hotTail: 1000, coldTail: 1000, minEvent: 12_000, backstopAt: 90_000 };
		assert.equal(
			await foldsAfterTwoResponses(economic, 0),
			true,
			"never a cache read: the rewrite is free and half of minEvent applies",
		);
		assert.equal(
			await foldsAfterTwoResponses({ ...economic, minEvent: 16_000 }, 0),
			false,
			"never a cache read, but the saving is short of half of minEvent",
		);
		assert.equal(await foldsAfterTwoResponses(economic, 500), false, "a warm cache: the event must reach minEvent");
	});

	/**
	 * Twelve ~1.4k-token results, ~16k in a 32k window, under the economic policy with Pi's `compaction`
	 * settings, after two responses that read from the cache (a warm cache: the least event applies).
	 */
	const warmEconomicSession = async (compaction?: Record<string, unknown>) => {
		const stub = loadStub({ window: 32_000 });
		// A horizon set (taken as given): a session of 12 requests would count an event over 3 of them,
		// and these cases are about the least event alone.
		stub.settings = { "context-fold": { policy: "economic", horizon: 20 }, ...(compaction ? { compaction } : {}) };
		bashSession(stub, 12);
		stub.usage = { tokens: 16_000, contextWindow: 32_000 };
		await stub.emit("session_start", { reason: "startup" });
		for (let i = 0; i < 2; i++) {
			await stub.emit("message_end", {
				message: { role: "assistant", usage: { input: 10, output: 5, cacheRead: 500, cacheWrite: 0 } },
			});
		}
		return stub;
	};

	it("under the economic policy, the least event fits below where Pi compacts on its own (its reserveTokens)", async () => {
		// Twelve ~1.4k-token results, ~16k in a 32k window: the six outside the 7.5k hot tail save ~8k, less
		// than minEvent (11.2k). Pi compacts past 32k - 16,384 (its default reserve), so the least event is a
		// fifth of that, 3.1k; with Pi's compaction off, minEvent stands.
		const folds = async (compaction?: Record<string, unknown>) =>
			resultTexts(await (await warmEconomicSession(compaction)).request()).filter((t) => FOLDED.test(t)).length;
		assert.ok((await folds()) > 0, "Pi's default reserve: the event fires");
		assert.ok((await folds({ reserveTokens: 4_000 })) > 0, "Pi compacts past 28k: a least event of 5.6k");
		assert.equal(await folds({ enabled: false }), 0, "Pi never compacts on its own: minEvent stands");
	});

	it("follows Pi's compaction switched off or on during the session (/settings, RPC set_auto_compaction)", async () => {
		// The same session as above: whether the event fires tells which reserve the request was planned with.
		const stub = await warmEconomicSession();
		const status = async () => (await stub.command("context-fold", "status")).stdout;
		assert.match(await status(), /Pi compacts at/);
		stub.settings = { ...stub.settings, compaction: { enabled: false } };
		assert.doesNotMatch(await status(), /Pi compacts at/, "the status follows before any request");
		// Each request opens a run, as a prompt does: Pi's settings are read again before it.
		const folds = async () => {
			await stub.emit("before_agent_start", { prompt: "go on", images: [] });
			return resultTexts(await stub.request()).filter((t) => FOLDED.test(t)).length;
		};
		assert.equal(await folds(), 0, "Pi's compaction off: minEvent stands");
		stub.settings = { ...stub.settings, compaction: { enabled: true } };
		assert.ok((await folds()) > 0, "back on: the least event fits below Pi's compaction point again");
	});
});

describe("cache facts from telemetry", () => {
	const atHalf = async (warmNow: boolean) => {
		const stub = loadStub({ window: 100_000 });
		stub.settings = { "context-fold": { policy: "ladder", tail: 1000 } };
		bashSession(stub, 6); // responses recorded in 2023: long cold by now
		stub.usage = { tokens: 50_000, contextWindow: 100_000 };
		await stub.emit("session_start", { reason: "startup" });
		if (warmNow) {
			await stub.emit("message_end", {
				message: { role: "assistant", usage: { input: 10, output: 5, cacheRead: 900, cacheWrite: 0 } },
			});
		}
		return resultTexts(await stub.request()).some((t) => FOLDED.test(t));
	};

	it("folds below one step when the cache is cold anyway (the latest response is older than cacheTtlSeconds)", async () => {
		assert.equal(await atHalf(false), true, "cold: 50 % is past the threshold and anything maskable is worth it");
		assert.equal(await atHalf(true), false, "a response just now: warm, and less than one step is maskable");
	});

	it("counts the cache cold by the model's own lifetime for the retention in use (1 h with PI_CACHE_RETENTION=long)", async () => {
		const tiers = { provider: "fake", id: "fake-model", promptCache: { short: 300, long: 3600 } };
		const tenMinutesIdle = (retention: string | undefined, model: StubModel = tiers) =>
			withRetention(retention, async () => {
				const stub = loadStub({ window: 100_000 });
				stub.settings = { "context-fold": { policy: "ladder", tail: 1000 } };
				stub.model = model;
				bashSession(stub, 6);
				exchangeAt(stub, Date.now() - 10 * 60_000, { input: 10, output: 5, cacheRead: 900, cacheWrite: 0 });
				stub.usage = { tokens: 50_000, contextWindow: 100_000 };
				await stub.emit("session_start", { reason: "resume" });
				return resultTexts(await stub.request()).some((t) => FOLDED.test(t));
			});
		assert.equal(await tenMinutesIdle("long"), false, "an hour's lifetime: still warm, less than one step maskable");
		assert.equal(
			await tenMinutesIdle(undefined),
			true,
			"the short tier's 5 minutes: cold, so anything maskable folds",
		);
		assert.equal(
			await tenMinutesIdle("long", { provider: "fake", id: "fake-model", api: "anthropic-messages" }),
			false,
			"Anthropic Messages declaring no tiers (a gateway's Claude): Pi marks the long retention's hour all the same",
		);
		assert.equal(
			await tenMinutesIdle(undefined, { provider: "fake", id: "fake-model", api: "anthropic-messages" }),
			true,
			"and the short retention's 5 minutes without it",
		);
	});

	it("cache_warming_decision: stop when the policy would fold on the next request, else leave Pi's decision", async () => {
		const decide = async (prompt: number, action: "warm" | "stop" = "warm") => {
			const stub = loadStub({ window: 100_000 });
			stub.settings = { "context-fold": { policy: "ladder", tail: 1000, step: 0.01 } };
			bashSession(stub, 6);
			stub.usage = { tokens: 30_000, contextWindow: 100_000 };
			await stub.emit("session_start", { reason: "startup" });
			await stub.emit("message_end", {
				message: { role: "assistant", usage: { input: 10, output: 5, cacheRead: 900, cacheWrite: 0 } },
			});
			const sent = resultTexts(await stub.request());
			assert.ok(!sent.some((t) => FOLDED.test(t)), "30 % is below the threshold: no event yet");
			await stub.emit("message_end", {
				message: { role: "assistant", usage: { input: 100, output: 5, cacheRead: prompt - 200, cacheWrite: 100 } },
			});
			const results = await stub.emit("cache_warming_decision", {
				warmCost: 0.01,
				missCost: 0.5,
				continuationProbability: 0.15,
				action,
			});
			return results.find((r) => r !== undefined);
		};
		assert.deepEqual(await decide(50_000), { action: "stop" }, "50 % with a step maskable: the next request folds");
		assert.equal(await decide(35_000), undefined, "35 % is below the threshold: warming is worth it");
		assert.equal(await decide(50_000, "stop"), undefined, "Pi already stops: nothing to override");
	});
});

describe("folded blocks another extension rewrites", () => {
	it("are sent raw and said in one notice a pass, naming a few and the likely cause", async () => {
		const stub = await started();
		const first = resultTexts(await stub.request());
		const folded = first.filter((t) => FOLDED.test(t)).length;
		assert.ok(folded >= 2, `folded ${folded}`);
		// Every stored tool result rewritten, as an extension that redacts old output would.
		for (const entry of stub.entries) {
			const message = entry.message as { role?: string; content?: { text: string }[] } | undefined;
			if (message?.role !== "toolResult" || !message.content) continue;
			message.content[0].text = message.content[0].text.replace(/ok/g, "OK");
		}
		await stub.request();
		const said = stub.stderr.join("").match(/changed since (it was|they were) folded[^\n]*/g) ?? [];
		assert.equal(said.length, 1, said.join("\n"));
		// Each named on a line of its own by its fold code and what it was, as everywhere a code is shown.
		const notice = stub.stderr.join("").slice(stub.stderr.join("").indexOf(`context-fold: ${folded} folded blocks`));
		const lines = notice.split("\n");
		assert.equal(
			lines[0],
			`context-fold: ${folded} folded blocks changed since they were folded; they are sent raw (does another extension rewrite old messages?):`,
		);
		const named = lines.slice(1, 1 + Math.min(3, folded));
		for (const line of named) assert.match(line, /^ {2}#[a-z0-9]{8} bash: .+ \([\d.k]+ tokens\)$/);
		if (folded > 3) assert.equal(lines[4], `  … ${folded - 3} more`);
		assert.doesNotMatch(notice, /r:call_/, "no internal block id");
		await stub.request();
		assert.equal(stub.stderr.join("").match(/changed since/g)?.length, 1, "said once");
	});
});

describe("an extension that rewrites every old result after each fold", () => {
	it("undoes two events whole, then no event opens for the session, said once; later changes are not said again", async () => {
		const stub = await started();
		let n = 0;
		/** What the other extension does before each request: every stored result gets a new last line. */
		const annotate = () => {
			n++;
			for (const entry of stub.entries) {
				const message = entry.message as { role?: string; content?: { text: string }[] } | undefined;
				if (message?.role !== "toolResult" || !message.content) continue;
				message.content[0].text = `${message.content[0].text.replace(/\n\[annotated \d+\]$/, "")}\n[annotated ${n}]`;
			}
		};
		let ts = 1_800_000_000_000;
		/** Six more checks, as the session goes on, and the user's next prompt. */
		const more = (from: number) => {
			ts = moreChecks(stub, from, 6, ts);
		};
		const layers = () => foldEntries(stub).filter((e) => (e.data as { kind: string }).kind === "layer").length;
		await stub.request();
		assert.equal(layers(), 1, "the first event");
		annotate();
		await stub.request();
		assert.match(stub.stderr.join(""), /changed since they were folded/);
		more(6);
		annotate();
		await stub.request();
		assert.equal(layers(), 2, "a second event, over the new results");
		annotate();
		await stub.request();
		const stopped =
			/the blocks of 2 fold events all changed right after they were folded \(another extension rewrites old messages\), so a fold would only rewrite the prompt cache: no new fold events this session/;
		assert.match(stub.stderr.join(""), stopped);
		more(12);
		annotate();
		await stub.request();
		annotate();
		await stub.request();
		assert.equal(layers(), 2, "no third event");
		assert.equal(stub.stderr.join("").match(/changed since/g)?.length, 1, "the changed blocks said once");
		assert.equal(stub.stderr.join("").match(/no new fold events/g)?.length, 1, "the stop said once");
	});
});

describe("a folded block edited in place", () => {
	it("goes out raw when its text changed to one of the same length, and says so once", async () => {
		const stub = await started();
		const first = resultTexts(await stub.request());
		assert.ok(FOLDED.test(first[0]), "the first result folded");
		// Another extension (or a context edit) rewrites it: same length, a failure where a pass was.
		const entry = stub.entries.find(
			(e) => (e.message as { toolCallId?: string } | undefined)?.toolCallId === "call_0",
		);
		const part = (entry?.message as { content: { text: string }[] }).content[0];
		const edited = part.text.replace("line 3 of check 0 output ok", "line 3 of check 0 output NO");
		assert.equal(edited.length, part.text.length);
		part.text = edited;
		const sent = resultTexts(await stub.request());
		assert.equal(sent[0], edited, "sent raw, as it now is");
		const code0 = FOLDED.exec(first[0])?.[1] ?? "";
		assert.match(
			stub.stderr.join(""),
			new RegExp(
				`context-fold: #${code0} bash: [^\\n]+ \\([\\d.k]+ tokens\\) changed since it was folded; it is sent raw`,
			),
		);
		assert.equal(resultTexts(await stub.request())[0], edited);
		assert.equal(stub.stderr.join("").match(/changed since it was folded/g)?.length, 1, "said once");
		// unfold puts back no original: it says the block is raw already, as it now reads, and records nothing.
		const code = FOLDED.exec(first[0])?.[1] ?? "";
		const unfolds = () => stub.entries.filter((e) => (e.data as { kind?: string } | undefined)?.kind === "unfold");
		const before = unfolds().length;
		const answer = await stub.call("unfold", { codes: [code] });
		assert.match(answer, new RegExp(`#${code} is already raw: its text changed since it was folded`));
		assert.doesNotMatch(answer, /original content is back/);
		assert.equal(unfolds().length, before, "no unfold recorded");
	});
});

describe("restore of malformed fold entries", () => {
	it("sends raw a block whose frozen op has no fold record of its id and code, and says so", async () => {
		for (const damage of ["drop the record", "change the op's code"]) {
			const stub = await started();
			await stub.request();
			const records = stub.entries.find((e) => (e.data as { kind?: string } | undefined)?.kind === "records");
			const layer = stub.entries.find((e) => (e.data as { kind?: string } | undefined)?.kind === "layer");
			const data = records?.data as { records: { id: string }[] };
			const ops = (layer?.data as { ops: { id: string; code: string }[] }).ops;
			const op = ops[0];
			if (damage === "drop the record") data.records = data.records.filter((r) => r.id !== op.id);
			else op.code = "zzzzzzzz";
			stub.stderr.length = 0;
			await stub.emit("session_start", { reason: "resume" });
			const sent = resultTexts(await stub.request());
			assert.ok(!sent.some((t) => t.startsWith("{#zzzzzzzz FOLDED}")), damage);
			assert.match(stub.stderr.join(""), /1 frozen op without its fold record \(that block is sent raw\)/, damage);
			for (const text of sent) {
				const code = FOLDED.exec(text)?.[1];
				if (code) assert.match(await stub.call("recall_folded", { codes: [code] }), /sha256 verified/, code);
			}
		}
	});

	it("counts the records and ops it skips and warns once per restore, naming the counts", async () => {
		const stub = await started();
		await stub.request();
		const records = stub.entries.find((e) => (e.data as { kind?: string } | undefined)?.kind === "records");
		const layer = stub.entries.find((e) => (e.data as { kind?: string } | undefined)?.kind === "layer");
		const data = records?.data as { records: Record<string, unknown>[] };
		const ops = (layer?.data as { ops: Record<string, unknown>[] }).ops;
		assert.ok(data.records.length >= 3 && ops.length >= 3);
		data.records[0].chars = "12";
		data.records[1].id = 7;
		ops[0].code = null;
		stub.stderr.length = 0;
		await stub.emit("session_start", { reason: "resume" });
		const sent = resultTexts(await stub.request());
		await stub.call("recall_folded", { codes: [String(data.records[2].code)] });
		const warnings = stub.stderr
			.join("")
			.split("\n")
			.filter((l) => l.includes("skipped"));
		// The op of the record whose id went bad is readable but backed by no record: raw too.
		assert.deepEqual(warnings, [
			"context-fold: restoring fold state skipped 2 malformed fold records (their codes do not resolve until those blocks fold again), 1 malformed frozen op (that block is sent raw), 1 frozen op without its fold record (that block is sent raw)",
		]);
		// Every digest the request carries is one whose code resolves.
		for (const text of sent) {
			const code = FOLDED.exec(text)?.[1];
			if (code) assert.match(await stub.call("recall_folded", { codes: [code] }), /sha256 verified/, code);
		}
		await stub.emit("session_start", { reason: "resume" });
		assert.equal(
			stub.stderr
				.join("")
				.split("\n")
				.filter((l) => l.includes("skipped")).length,
			2,
			"once per restore",
		);
	});
});
