/**
 * The cache advisories through the hooks of a stub Pi (src/adapters/pi/cache/advisor.ts and
 * cache-warning.ts): each advisory's exact text in the terminal UI's notifications (stderr
 * elsewhere), once per streak; the cold input held back right after a fold event; the watchdog
 * and its flag; recall churn; the reset flag; the debug cache line; and the idle warning's opt-in
 * confirmation: Keep draft, Send anyway, untouched automation/RPC/queued input, and fail-open.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Advisor } from "../../src/adapters/pi/cache/advisor.ts";
import { CacheWarning } from "../../src/adapters/pi/cache/cache-warning.ts";
import { DEFAULT_CONFIG, resolveConfig } from "../../src/adapters/pi/config.ts";
import { ADVICE, DEFAULT_RATIOS, KEEP_DRAFT, SEND_ANYWAY } from "../../src/core/cache-advice.ts";
import { withoutAdvisories } from "../e2e/harness/advisories.ts";
import { bashSession, exchangeAt, loadStub, resultTexts, type StubPi, withRetention } from "./stub-pi.ts";

/** A cold response of a provider that caches: it read nothing and wrote the whole prompt again. */
const COLD = { input: 10, output: 5, cacheRead: 0, cacheWrite: 29_990 };
/** A response of a provider that never caches (a local endpoint, caching off). */
const UNCACHED = { input: 30_000, output: 5, cacheRead: 0, cacheWrite: 0 };
const WARM = { input: 10, output: 5, cacheRead: 29_990, cacheWrite: 0 };

async function tui(
	settings: Record<string, unknown> = {},
	options: Parameters<typeof loadStub>[0] = {},
): Promise<StubPi> {
	const stub = loadStub(options);
	stub.settings = { "context-fold": { policy: "ladder", ...settings } };
	stub.mode = "tui";
	stub.hasUI = true;
	stub.model = { provider: "fake", id: "fake-model" };
	return stub;
}

function respond(stub: StubPi, usage: Record<string, number>, content: unknown[] = []) {
	return stub.emit("message_end", {
		message: { role: "assistant", provider: "fake", model: "fake-model", usage, content },
	});
}

const notices = (stub: StubPi) => stub.ui.notices.map((n) => n.message);
/**
 * What the terminal UI shows in the idle warning's widget above the editor, its closing line aside:
 * the warning found on resuming stands there, since Pi draws the restored transcript after
 * session_start and a notice would scroll away above it.
 */
const standing = (stub: StubPi) => (stub.ui.widgets.get("context-fold-idle") ?? []).slice(0, -1);

describe("cold input", () => {
	it("is noticed once per streak, in the terminal UI, with its exact text", async () => {
		const stub = await tui();
		await stub.emit("session_start", { reason: "startup" });
		await respond(stub, COLD);
		await respond(stub, COLD);
		assert.deepEqual(notices(stub), [ADVICE.coldInput(COLD)]);
		assert.match(notices(stub)[0], /^context-fold: cold input: the last response read nothing .* ~30k tokens/);
		await respond(stub, WARM);
		await respond(stub, COLD);
		assert.equal(notices(stub).length, 2, "a new streak after a warm response");
	});

	it("goes to stderr without the terminal UI, and not below 20k carried", async () => {
		const stub = loadStub();
		await stub.emit("session_start", { reason: "startup" });
		await respond(stub, { input: 19_999, cacheRead: 0 });
		assert.equal(stub.stderr.join(""), "");
		await respond(stub, COLD);
		assert.equal(stub.stderr.join(""), `${ADVICE.coldInput(COLD)}\n`);
	});

	it("is never noticed for a provider that never caches: every prompt costs the same", async () => {
		const stub = await tui();
		await stub.emit("session_start", { reason: "startup" });
		for (let i = 0; i < 3; i++) await respond(stub, UNCACHED);
		assert.deepEqual(notices(stub), []);
		assert.equal(stub.statuses.get("context-fold"), undefined, "no advisory flag");
	});

	it("is held back on the first response after a compaction or a model change", async () => {
		const stub = await tui();
		await stub.emit("session_start", { reason: "startup" });
		await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: true });
		await respond(stub, COLD);
		await stub.emit("model_select", { model: { provider: "fake", id: "other-model" } });
		await respond(stub, COLD);
		assert.deepEqual(notices(stub), []);
		await respond(stub, COLD);
		assert.deepEqual(notices(stub), [ADVICE.coldInput(COLD)]);
	});

	it("is held back on a session's first response, and on the first after resuming past a compaction", async () => {
		const fresh = await tui();
		await fresh.emit("session_start", { reason: "startup" });
		await respond(fresh, COLD);
		assert.deepEqual(notices(fresh), [], "a first response has no earlier prompt to read");
		const assistant = (usage: Record<string, number>, id: string) => ({
			type: "message",
			id,
			message: { role: "assistant", provider: "fake", model: "fake-model", usage, content: [] },
		});
		for (const [tail, held] of [
			[[{ type: "compaction", id: "c", summary: "s" }], true],
			[[{ type: "model_change", id: "m" }], true],
			[[], false],
		] as const) {
			const resumed = await tui();
			resumed.entries.push(assistant(WARM, "a1"), ...tail);
			await resumed.emit("session_start", { reason: "resume" });
			await respond(resumed, COLD);
			assert.deepEqual(notices(resumed), held ? [] : [ADVICE.coldInput(COLD)], JSON.stringify(tail));
		}
	});

	it("is held back on the first response of another model than the branch's latest (resumed with --model)", async () => {
		const resumed = await tui();
		resumed.entries.push({
			type: "message",
			id: "a1",
			message: { role: "assistant", provider: "fake", model: "fake-model", usage: WARM, content: [] },
		});
		await resumed.emit("session_start", { reason: "resume" });
		// Pi records no model change for a model chosen on the command line: the reply names its model.
		const other = (usage: Record<string, number>) =>
			resumed.emit("message_end", {
				message: { role: "assistant", provider: "fake", model: "fake-model-2", usage, content: [] },
			});
		await other(COLD);
		assert.deepEqual(notices(resumed), [], "the new model's first write is expected");
		await other(COLD);
		assert.deepEqual(notices(resumed), [ADVICE.coldInput(COLD)], "its second cold one is not");
	});

	it("is held back on the response right after a fold event", async () => {
		const stub = await tui();
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		assert.ok(
			stub.entries.some((e) => e.customType === "contextfold.fold"),
			"a fold event committed",
		);
		await respond(stub, COLD);
		assert.deepEqual(notices(stub), []);
		await respond(stub, COLD);
		assert.deepEqual(notices(stub), [ADVICE.coldInput(COLD)], "the next cold response is noticed");
	});

	it("is held back on the response right after an unfold, which rewrites the prompt from the block on", async () => {
		const stub = await tui();
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		const code = resultTexts(await stub.request()).flatMap((t) => /^\{#([0-9a-z]{8}) FOLDED\}/.exec(t)?.[1] ?? [])[0];
		assert.ok(code, "a fold event committed");
		await respond(stub, WARM);
		assert.match(await stub.call("unfold", { codes: [code] }), /^Unfolded #/);
		await stub.request();
		await respond(stub, COLD);
		assert.deepEqual(notices(stub), [], "the unfold's rewrite is expected");
		await respond(stub, COLD);
		assert.deepEqual(notices(stub), [ADVICE.coldInput(COLD)], "the next cold response is noticed");
	});
});

describe("wire watchdog", () => {
	async function folded() {
		const stub = await tui();
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		const prefold = { input: 10, cacheRead: 8_000, cacheWrite: 100 };
		await respond(stub, prefold);
		await stub.request();
		return stub;
	}

	it("judges nothing by a reply that reported no usage (a stream cut short) or by the response after it", async () => {
		const stub = await folded();
		// The folded request went out and its stream died before the usage chunk; the retry reads what it cached.
		await respond(stub, { input: 0, cacheRead: 0, cacheWrite: 0 });
		await respond(stub, { input: 10, cacheRead: 8_109, cacheWrite: 300 });
		assert.deepEqual(
			notices(stub).filter((m) => m.includes("did not reach the wire")),
			[],
		);
	});

	it("warns once when the response after a fold event still reads the whole pre-fold prompt, and flags it", async () => {
		const stub = await folded();
		await respond(stub, { input: 10, cacheRead: 8_109, cacheWrite: 300 });
		const watch = notices(stub).filter((m) => m.includes("did not reach the wire"));
		assert.deepEqual(watch, [ADVICE.watchdog(8_110, 8_109, 1)]);
	});

	/**
	 * A resumed branch whose last response, stored in the session, is the latest prompt: its request may
	 * already have carried folds the branch no longer records (a torn last entry), so the first fold
	 * event after the resume can read the whole cache and still be on the wire. `payload` is what goes
	 * out for the folding request (`sent`, or the stored messages, raw); the response reads all of it.
	 */
	async function resumedFold(payload: (sent: Record<string, unknown>[], stored: unknown[]) => unknown) {
		const stub = await tui();
		bashSession(stub, 6);
		stub.addMessage({
			role: "assistant",
			provider: "fake",
			model: "fake-model",
			content: [{ type: "text", text: "checked" }],
			usage: { input: 10, output: 5, cacheRead: 8_000, cacheWrite: 100 },
			stopReason: "stop",
			timestamp: 1_700_000_100_000,
		});
		await stub.emit("session_start", { reason: "resume" });
		const sent = await stub.request();
		assert.ok(JSON.stringify(sent).includes(" FOLDED}"), "the request folds");
		const stored = stub.entries.filter((e) => e.type === "message").map((e) => e.message);
		await stub.emit("before_provider_request", { payload: payload(sent, stored) });
		await respond(stub, { input: 10, cacheRead: 8_109, cacheWrite: 300 });
		return notices(stub).filter((m) => m.includes("did not reach the wire"));
	}

	it("judges the first event after a resume by its payload: a whole read of a stored prompt is no miss", async () => {
		assert.deepEqual(await resumedFold((sent) => ({ messages: sent })), []);
	});

	it("still warns after a resume when that event's payload carried its blocks raw", async () => {
		assert.deepEqual(await resumedFold((_sent, stored) => ({ messages: stored })), [ADVICE.watchdogRequest(1)]);
	});

	it("stays quiet when the fold reached the wire (the read stops before the folded blocks)", async () => {
		const stub = await folded();
		await respond(stub, { input: 10, cacheRead: 1_000, cacheWrite: 4_000 });
		assert.deepEqual(
			notices(stub).filter((m) => m.includes("did not reach the wire")),
			[],
		);
	});

	/**
	 * One agent run of bash turns as Pi drives it (before_agent_start; per request the `context` pass,
	 * the provider payload, the response; the tool result's message_end), up to the first request that
	 * folds. `payload` is what goes out for it, `usage` what its response reports. Returns that request.
	 */
	async function firstFold(
		stub: StubPi,
		payload: (sent: Record<string, unknown>[]) => unknown,
		usage: Record<string, number>,
	) {
		await stub.emit("session_start", { reason: "startup" });
		await stub.emit("before_agent_start", { messageType: "user", prompt: "run the checks" });
		stub.addMessage({ role: "user", content: "run the checks", timestamp: 1_700_000_000_000 });
		for (let i = 0; i < 12; i++) {
			const active = [...stub.active];
			const sent = await stub.request();
			const folds = sent.some((m) => JSON.stringify(m.content).includes(" FOLDED}"));
			await stub.emit("before_provider_request", { payload: folds ? payload(sent) : { messages: sent } });
			if (folds) {
				await respond(stub, usage);
				return { active, sent };
			}
			const id = `call_${i}`;
			const call = { type: "toolCall", id, name: "bash", arguments: { command: `check ${i}` } };
			await respond(stub, { input: 10, cacheRead: 1_000 * (i + 1), cacheWrite: 900 }, [call]);
			stub.addMessage({
				role: "assistant",
				content: [call],
				usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
				stopReason: "toolUse",
				timestamp: 1_700_000_000_000 + 10 * i + 1,
			});
			const text = Array.from({ length: 200 }, (_, k) => `line ${k} of check ${i} ok`).join("\n");
			await stub.endMessage({
				role: "toolResult",
				toolCallId: id,
				toolName: "bash",
				content: [{ type: "text", text }],
				isError: false,
				timestamp: 1_700_000_000_000 + 10 * i + 2,
			});
		}
		throw new Error("no request folded");
	}
	// The first folded request also first declares recall_folded and unfold, which changes the prompt at
	// the tool list: its response reads only what comes before, whether the fold went out or not.
	const SHORT_READ = { input: 10, cacheRead: 1_000, cacheWrite: 9_000 };

	it("judges the event whose request first declares the fold tools by that request's payload: its blocks went out raw", async () => {
		const stub = await tui({}, { toolsAsRegistered: true });
		const { active } = await firstFold(
			stub,
			() => ({ messages: stub.entries.filter((e) => e.type === "message").map((e) => e.message) }),
			SHORT_READ,
		);
		assert.deepEqual(active, ["recall_folded", "unfold"], "the request declares the fold tools");
		const watch = notices(stub).filter((m) => m.includes("did not reach the wire"));
		assert.deepEqual(watch, [ADVICE.watchdogRequest(1)]);
	});

	it("stays quiet for that event when another extension left its blocks out altogether", async () => {
		const stub = await tui({}, { toolsAsRegistered: true });
		// A windowing extension keeps the first prompt and the newest messages: neither digests nor raw text go out.
		await firstFold(stub, (sent) => ({ messages: [sent[0], ...sent.slice(-2)] }), SHORT_READ);
		assert.deepEqual(
			notices(stub).filter((m) => m.includes("did not reach the wire")),
			[],
		);
	});

	it("stays quiet for that event when its payload carries the digests", async () => {
		const stub = await tui({}, { toolsAsRegistered: true });
		await firstFold(stub, (sent) => ({ messages: sent }), SHORT_READ);
		assert.deepEqual(
			notices(stub).filter((m) => m.includes("did not reach the wire")),
			[],
		);
	});
});

describe("the footer's view of the advisor", () => {
	const config = () => ({ ...DEFAULT_CONFIG });
	const facts = { window: 200_000, unfoldable: 0, ratios: DEFAULT_RATIOS, caches: true };

	it("expects the request that first declares the fold tools to read nothing, fold event or not", () => {
		const shown: string[] = [];
		const advisor = new Advisor({ notify: (m) => shown.push(m), config });
		advisor.observeResponse({ input: 10, cacheRead: 40_000 }, facts);
		// The tools joined without a fold event in that request (a block became recallable otherwise).
		advisor.observeDeclarations();
		advisor.beginRequest();
		const cold = { input: 41_000, cacheRead: 0, cacheWrite: 0 };
		advisor.observeResponse(cold, facts);
		assert.deepEqual(shown, [], "the new tool list rewrote the cache by design");
		advisor.beginRequest();
		advisor.observeResponse(cold, facts);
		assert.deepEqual(shown, [ADVICE.coldInput(cold)], "a later cold response is noticed");
	});

	it("lists the active advisories and the watchdog flag until their streak ends", () => {
		const shown: string[] = [];
		const advisor = new Advisor({ notify: (m) => shown.push(m), config });
		advisor.observeResponse({ input: 10, cacheRead: 40_000 }, facts);
		advisor.observeFold(1, 12_000);
		advisor.observeResponse({ input: 10, cacheRead: 40_005, cacheWrite: 500 }, facts);
		assert.equal(advisor.watchdogTripped(), true);
		assert.deepEqual(
			advisor.active().map((a) => a.id),
			["watchdog"],
		);
		advisor.observeResponse({ input: 41_000, cacheRead: 0 }, facts);
		assert.deepEqual(
			advisor.active().map((a) => a.id),
			["watchdog", "cold-input"],
		);
		assert.deepEqual(
			advisor.active().map((a) => a.text),
			shown,
		);
		advisor.observeResponse({ input: 10, cacheRead: 41_000 }, facts);
		advisor.observeFold(2, 12_000);
		advisor.observeResponse({ input: 10, cacheRead: 20_000, cacheWrite: 9_000 }, facts);
		assert.equal(advisor.watchdogTripped(), false, "the next fold reached the wire");
		assert.deepEqual(advisor.active(), []);
	});
});

/** A terminal-UI session of six bash turns whose first request folded, and the code of its first fold. */
async function foldedSession(): Promise<{ stub: StubPi; code: string }> {
	const stub = await tui();
	bashSession(stub, 6);
	await stub.emit("session_start", { reason: "startup" });
	await stub.request();
	const record = stub.entries.find((e) => (e.data as { kind?: string } | undefined)?.kind === "records");
	return { stub, code: (record?.data as { records: { code: string }[] }).records[0].code };
}

describe("recall churn", () => {
	it("suggests unfolding a block recalled three times, once; a failed call does not count", async () => {
		const { stub, code } = await foldedSession();
		const recall = (isError: boolean, toolName = "recall_folded") =>
			stub.emit("tool_result", { toolName, input: { codes: [code] }, content: [], isError });
		for (let i = 0; i < 2; i++) {
			await recall(true, "unfold");
			await recall(true);
			await recall(false);
		}
		assert.deepEqual(notices(stub), [], "two served recalls and four failed calls are no churn");
		await recall(false);
		await recall(false);
		await stub.emit("tool_result", { toolName: "recall_folded", input: { codes: ["zzzzzzzz"] }, content: [] });
		await stub.emit("tool_result", { toolName: "bash", input: { codes: [code] }, content: [] });
		assert.equal(notices(stub).length, 1);
		// The code comes with what the block was, as wherever a fold code is shown (commands.md).
		assert.match(
			notices(stub)[0],
			new RegExp(
				`^context-fold: recall churn: #${code} bash: .+ \\([\\d.]+k? tokens\\) was recalled 3 times; /context-fold unfold ${code} keeps it in the context, or widen the protected tail \\(tail\\)$`,
			),
		);
	});
});

describe("recall churn of a block no longer in the context", () => {
	it("is not raised: a compacted block can only be recalled, which no unfold or wider tail would spare", async () => {
		const { stub, code } = await foldedSession();
		// A compaction keeps only the last message: the folded block leaves the context.
		const last = stub.entries.filter((e) => e.type === "message").at(-1);
		stub.compact(String(last?.id));
		await stub.request();
		for (let i = 0; i < 4; i++)
			await stub.emit("tool_result", {
				toolName: "recall_folded",
				input: { codes: [code] },
				content: [],
				isError: false,
			});
		assert.deepEqual(notices(stub), []);
	});
});

describe("recall churn and its remedy", () => {
	it("an unfold after two recalls is the remedy, not a third ask; asking again after it counts anew", async () => {
		const { stub, code } = await foldedSession();
		const done = (toolName: string) =>
			stub.emit("tool_result", { toolName, input: { codes: [code] }, content: [], isError: false });
		await done("recall_folded");
		await done("recall_folded");
		await stub.tools.get("unfold")?.execute("call", { codes: [code] });
		await done("unfold");
		assert.deepEqual(notices(stub), [], "the unfold that puts the block back raises nothing");
		await done("recall_folded");
		await done("recall_folded");
		assert.deepEqual(notices(stub), []);
		await done("recall_folded");
		assert.equal(notices(stub).length, 1);
		assert.match(
			notices(stub)[0],
			new RegExp(
				`recall churn: #${code} bash: .+ was asked for 3 times though it is unfolded: its original is in every request since the unfold`,
			),
		);
	});
});

describe("reset flag", () => {
	it("is raised after the second forced compaction, not after a manual one", async () => {
		const stub = await tui();
		await stub.emit("session_start", { reason: "startup" });
		await stub.emit("session_compact", { reason: "threshold", compactionEntry: {}, fromExtension: true });
		await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: true });
		await respond(stub, WARM);
		assert.deepEqual(notices(stub), []);
		await stub.emit("session_compact", { reason: "overflow", compactionEntry: {}, fromExtension: true });
		await respond(stub, WARM);
		assert.deepEqual(notices(stub), [ADVICE.reset({ kind: "compactions", count: 2 })]);
	});

	it("is raised when a handoff would pay for itself within two warm turns", async () => {
		const stub = await tui();
		await stub.emit("session_start", { reason: "startup" });
		await respond(stub, { input: 10, cacheRead: 2_000, cacheWrite: 0 });
		await respond(stub, { input: 10, cacheRead: 50_000, cacheWrite: 0 });
		assert.deepEqual(notices(stub), [], "50k carried does not yet repay a ~8.3k seeded session (line: 6.75 × 8.3k)");
		await respond(stub, { input: 10, cacheRead: 120_000, cacheWrite: 0 });
		assert.equal(notices(stub).length, 1);
		assert.match(
			notices(stub)[0],
			/^context-fold: reset flag: \/fold-handoff would pay for itself within 2 warm turns: this session carries ~120k tokens per request/,
		);
		// Said once, but the status lists it with the latest response's figures while it holds.
		await respond(stub, { input: 10, cacheRead: 150_000, cacheWrite: 0 });
		assert.equal(notices(stub).length, 1, "not said again");
		await stub.command("context-fold", "status");
		const view = String(stub.ui.views.at(-1)).replace(/\s+/g, " ");
		assert.match(
			view,
			/reset flag: \/fold-handoff would pay for itself within 2 warm turns: this session carries ~150k/,
		);
		assert.doesNotMatch(view, /~120k tokens per request/);
	});

	it("is said once a session: a fold event that breaks its condition and the growth that restores it say nothing more", async () => {
		const stub = await tui();
		await stub.emit("session_start", { reason: "startup" });
		await respond(stub, { input: 10, cacheRead: 2_000, cacheWrite: 0 });
		for (const carried of [120_000, 30_000, 125_000, 20_000, 130_000])
			await respond(stub, { input: 10, cacheRead: carried, cacheWrite: 0 });
		assert.equal(notices(stub).length, 1, notices(stub).join("\n"));
		await stub.command("context-fold", "status");
		assert.match(String(stub.ui.views.at(-1)).replace(/\s+/g, " "), /this session carries ~130k tokens per request/);
		// Another reason gives other advice, and is said in its turn.
		await respond(stub, { input: 10, cacheRead: 3_000, cacheWrite: 0 });
		await stub.emit("session_compact", { reason: "threshold", compactionEntry: {}, fromExtension: true });
		await stub.emit("session_compact", { reason: "overflow", compactionEntry: {}, fromExtension: true });
		await respond(stub, { input: 10, cacheRead: 3_000, cacheWrite: 0 });
		assert.deepEqual(notices(stub).slice(1), [ADVICE.reset({ kind: "compactions", count: 2 })]);
		// Forced compactions while the pay-back still holds: the flag never turns off, and the new advice is said.
		await stub.emit("session_start", { reason: "resume" });
		await respond(stub, { input: 10, cacheRead: 2_000, cacheWrite: 0 });
		await respond(stub, { input: 10, cacheRead: 120_000, cacheWrite: 0 });
		await stub.emit("session_compact", { reason: "threshold", compactionEntry: {}, fromExtension: true });
		await stub.emit("session_compact", { reason: "overflow", compactionEntry: {}, fromExtension: true });
		await respond(stub, { input: 10, cacheRead: 3_000, cacheWrite: 0 });
		assert.equal(notices(stub).at(-1), ADVICE.reset({ kind: "compactions", count: 2 }));
		assert.equal(notices(stub).length, 4);
		// A session opened anew may hear it again.
		await stub.emit("session_start", { reason: "resume" });
		await respond(stub, { input: 10, cacheRead: 2_000, cacheWrite: 0 });
		await respond(stub, { input: 10, cacheRead: 120_000, cacheWrite: 0 });
		assert.equal(notices(stub).length, 5);
	});
});

describe("reset flag: the write price of the cache retention in use", () => {
	// ~8.3k seeded: at Anthropic's 5-minute prices a handoff repays 80k carried within two warm turns
	// (6.75 × 8.3k = 56k); at the one-hour write (2× input) it needs 10.5 × 8.3k = 87k.
	const flagged = async () => {
		const stub = await tui();
		stub.model = {
			provider: "anthropic",
			id: "claude-x",
			api: "anthropic-messages",
			cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
		};
		await stub.emit("session_start", { reason: "startup" });
		await respond(stub, { input: 10, cacheRead: 2_000, cacheWrite: 0 });
		await respond(stub, { input: 10, cacheRead: 80_000, cacheWrite: 0 });
		return notices(stub).filter((n) => n.includes("/fold-handoff would pay"));
	};

	it("is raised at the short retention's write price", async () => {
		assert.equal((await withRetention(undefined, flagged)).length, 1);
	});

	it("stays quiet where the one-hour write makes the handoff dearer than staying", async () => {
		assert.deepEqual(await withRetention("long", flagged), []);
	});
});

describe("reset flag: what cannot fold", () => {
	it("is raised when more than half the window cannot fold, from the latest request", async () => {
		const stub = await tui();
		stub.addMessage({ role: "user", content: "u".repeat(24_000), timestamp: 1 });
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		await respond(stub, WARM);
		assert.equal(notices(stub).length, 1);
		assert.match(
			notices(stub)[0],
			/^context-fold: reset flag: ~6k tokens of the context cannot fold \(the system prompt and tools, digests and summaries, what never folds, and the digest each fold would leave\), more than half the window/,
		);
	});

	it("stays quiet while the request is at most half the window", async () => {
		const stub = await tui();
		stub.addMessage({ role: "user", content: "u".repeat(19_000), timestamp: 1 });
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		await respond(stub, WARM);
		assert.deepEqual(notices(stub), []);
	});
});

describe("debug", () => {
	it("adds a per-turn cache line", async () => {
		const stub = await tui({ debug: true });
		await stub.emit("session_start", { reason: "startup" });
		await respond(stub, WARM);
		assert.deepEqual(notices(stub), [
			"context-fold: cache read 29990 · write 0 · input 10: cache read 99% of the prompt",
		]);
	});
});

describe("idle cache-risk warning", () => {
	const IMAGE = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };

	/** A session whose last response of fake/fake-model carried 30k tokens and ended `ageMs` ago. */
	async function idleSession(settings: Record<string, unknown>, ageMs: number) {
		const stub = await tui(settings);
		exchangeAt(stub, Date.now() - ageMs, { input: 10, output: 5, cacheRead: 29_990, cacheWrite: 0 });
		return stub;
	}
	/** What `/context-fold discard-images` says (in the terminal UI: its notice). */
	const discard = async (stub: StubPi): Promise<string> => {
		await stub.command("context-fold", "discard-images");
		return notices(stub).at(-1) ?? "";
	};
	const input = (stub: StubPi, event: Record<string, unknown>) =>
		stub.emit("input", { text: "next step", source: "interactive", ...event });

	it("counts a block unfolded since the last response in what the next prompt re-sends", async () => {
		const stub = await tui();
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		const sent = await stub.request();
		const code = resultTexts(sent)
			.map((t) => /^\{#([0-9a-z]{8}) FOLDED\}/.exec(t)?.[1])
			.find(Boolean);
		assert.ok(code, "a result folded");
		exchangeAt(stub, Date.now() - 10 * 60_000, { input: 10, output: 5, cacheRead: 29_990, cacheWrite: 0 });
		assert.match(await stub.call("unfold", { codes: [code] }), /^Unfolded/);
		await stub.emit("session_start", { reason: "resume" });
		const warned = /re-sends ~([\d.]+)k tokens uncached$/.exec(standing(stub)[0] ?? "");
		assert.ok(warned, standing(stub).join("\n"));
		assert.ok(Number(warned[1]) > 30.5, `the unfolded block is counted: ~${warned[1]}k`);
		// Pi's count is the last response's, from before the unfold.
		stub.usage = { tokens: 30_000, contextWindow: 200_000 };
		await stub.command("context-fold", "status");
		const status = String(stub.ui.views.at(-1));
		assert.match(status, /Context /, status);
		assert.doesNotMatch(status, /Pi counts/, "Pi's count predates the unfold");
	});

	it("takes the resumed session's idle warning down once a compaction rewrote the prompt anyway", async () => {
		const stub = await idleSession({}, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		assert.equal(standing(stub).length, 1);
		await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: false });
		assert.equal(stub.ui.widgets.has("context-fold-idle"), false);
	});

	it("notices a resumed session whose cache likely expired, once, above the editor until the next prompt", async () => {
		const stub = await idleSession({}, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(notices(stub), [], "not a notice: Pi's restored transcript would bury it");
		assert.equal(standing(stub).length, 1);
		assert.match(
			standing(stub)[0],
			/^context-fold: the prompt cache of fake\/fake-model is likely cold \(idle 10m 0\ds, lifetime 5m 00s\): the next prompt re-sends ~30k tokens uncached$/,
		);
		assert.deepEqual(stub.ui.widgets.get("context-fold-idle")?.at(-1), "(shown until your next prompt)");
		assert.deepEqual(await input(stub, {}), [undefined], "without confirmColdSend the input goes on");
		assert.equal(stub.ui.widgets.has("context-fold-idle"), false, "the next prompt clears it");
		assert.deepEqual(notices(stub), [], "the same idle streak is not noticed twice");
		assert.deepEqual(stub.ui.selects, []);
	});

	it("says nothing after a compaction since the latest response: the next request writes the prompt anew anyway", async () => {
		const stub = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		stub.compact(String(stub.entries.at(-1)?.id));
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual([...notices(stub), ...standing(stub)], [], "no warning quoting the size from before it");
		assert.deepEqual(await input(stub, {}), [undefined], "and no dialog before the prompt");
		assert.deepEqual(stub.ui.selects, []);
	});

	it("says nothing where the provider never caches: a pause makes no prompt dearer", async () => {
		const stub = await tui({ confirmColdSend: true });
		exchangeAt(stub, Date.now() - 10 * 60_000, { input: 30_000, output: 5, cacheRead: 0, cacheWrite: 0 });
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual([...notices(stub), ...standing(stub)], []);
		assert.deepEqual(await input(stub, {}), [undefined]);
		assert.deepEqual(stub.ui.selects, []);
	});

	it("counts from a reply the user aborted once the provider had read its prompt: that request touched the cache", async () => {
		/** An idle session resumed after a reply aborted a minute ago, whose usage is `usage`. */
		const abortedAMinuteAgo = async (usage: Record<string, number>) => {
			const stub = await idleSession({}, 10 * 60_000);
			stub.addMessage({ role: "user", content: "long one", timestamp: Date.now() - 60_010 });
			stub.addMessage({
				role: "assistant",
				content: [],
				provider: "fake",
				model: "fake-model",
				usage,
				stopReason: "aborted",
				timestamp: Date.now() - 60_000,
			});
			stub.mode = "rpc";
			await stub.emit("session_start", { reason: "resume" });
			return stub;
		};
		// Aborted mid-stream, after the provider reported its prompt's usage.
		const stub = await abortedAMinuteAgo({ input: 10, output: 5, cacheRead: 29_000, cacheWrite: 990 });
		assert.doesNotMatch(stub.stderr.join(""), /likely cold/, "a minute idle, within the 5-minute lifetime");
		// Aborted before the provider answered: no prompt reported, the exchange before it counts.
		const early = await abortedAMinuteAgo({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
		assert.match(early.stderr.join(""), /likely cold \(idle 10m 0\ds/);
	});

	it("reads a one-hour retention in the provider's stored credential before it warns on resuming", async () => {
		const stub = await idleSession({}, 30 * 60_000);
		stub.model = { provider: "fake", id: "fake-model", api: "anthropic-messages" };
		stub.providerEnv = { PI_CACHE_RETENTION: "long" };
		try {
			await stub.emit("session_start", { reason: "resume" });
			assert.deepEqual(standing(stub), [], "thirty minutes idle is within the credential's hour");
			await stub.command("context-fold", "status");
			assert.match(String(stub.ui.views.at(-1)), /lifetime 1h 00m/);
		} finally {
			// The retention a credential sets is the process's: the next tests read none.
			stub.providerEnv = {};
			await stub.emit("session_start", { reason: "resume" });
		}
		assert.match(standing(stub)[0] ?? "", /likely cold \(idle 30m 0\ds, lifetime 5m 00s\)/);
	});

	it("outside the terminal UI, the warning on resuming goes to stderr, as every notice there", async () => {
		const stub = await idleSession({}, 10 * 60_000);
		stub.mode = "rpc";
		await stub.emit("session_start", { reason: "resume" });
		assert.equal(stub.ui.widgets.size, 0);
		assert.match(
			stub.stderr.join(""),
			/^context-fold: the prompt cache of fake\/fake-model is likely cold \(idle 10m 0\ds/,
		);
	});

	it("notices, once, when the interval runs out while Pi is idle, and not after a new request starts", async (t) => {
		// A mock clock: the timer fires when the test moves time, never by the machine's speed.
		t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: Date.now() });
		const settle = () => new Promise((r) => setImmediate(r));
		const stub = await idleSession({ cacheTtlByProvider: "fake=1" }, 0);
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(notices(stub), [], "within its lifetime at first");
		await stub.emit("agent_settled", { aborted: false });
		t.mock.timers.tick(500);
		await settle();
		assert.deepEqual(notices(stub), [], "half the lifetime: no notice yet");
		t.mock.timers.tick(2_000);
		await settle();
		assert.equal(notices(stub).length, 1, "the timer noticed the expiry");
		assert.match(
			notices(stub)[0],
			/^context-fold: the prompt cache of fake\/fake-model is likely cold \(idle \ds, lifetime 1s\)/,
		);
		t.mock.timers.tick(60_000);
		await settle();
		assert.equal(notices(stub).length, 1, "noticed once");
		const busy = await idleSession({ cacheTtlByProvider: "fake=1" }, 0);
		await busy.emit("session_start", { reason: "resume" });
		await busy.emit("agent_start", {});
		t.mock.timers.tick(60_000);
		await settle();
		assert.deepEqual(notices(busy), [], "a request in flight disarms the timer");
		await stub.emit("session_shutdown", {});
		await busy.emit("session_shutdown", {});
	});

	it("says so once when the timer's check fails, and lists it in the status", async (t) => {
		t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: Date.now() });
		const settle = () => new Promise((r) => setImmediate(r));
		const stub = await idleSession({ cacheTtlByProvider: "fake=1" }, 0);
		await stub.emit("session_start", { reason: "resume" });
		await stub.emit("agent_settled", { aborted: false });
		stub.failBranch = true;
		t.mock.timers.tick(5_000);
		await settle();
		const said = notices(stub);
		assert.equal(said.length, 1, said.join("\n"));
		assert.match(said[0], /^context-fold: idle cache check skipped: /);
		stub.failBranch = false;
		await stub.command("context-fold", "status");
		const status = String(stub.ui.views.at(-1));
		assert.match(status, /\n *Failures {2}1 announced[^\n]*\n +context-fold: idle cache check skipped: /, status);
		await stub.emit("session_shutdown", {});
	});

	it("waits out an interval longer than Node's longest timer without re-checking in a loop", (t) => {
		// Node fires a timer of more than 2^31-1 ms (24.8 days) after 1 ms; the mock clock does the same.
		t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_000_000 });
		const { config } = resolveConfig({ cacheIdleMinutes: 40_000 }, {});
		const said: string[] = [];
		const warning = new CacheWarning({
			notify: (message) => said.push(message),
			fail: (message) => said.push(message),
			lost: (message) => said.push(message),
			config: () => config,
			ttlMs: () => 300_000,
			now: () => Date.now(),
			caches: () => true,
		});
		const usage = { input: 10, output: 5, cacheRead: 29_990, cacheWrite: 0 };
		const response = { role: "assistant", provider: "fake", model: "fake-model", usage, timestamp: Date.now() };
		let scans = 0;
		const sessionManager = {
			getBranch: () => {
				scans++;
				return [{ type: "message", timestamp: new Date(Date.now()).toISOString(), message: response }];
			},
		};
		warning.idle({ model: { provider: "fake", id: "fake-model" }, sessionManager } as never);
		assert.equal(scans, 1);
		t.mock.timers.tick(60_000);
		assert.equal(scans, 1, "a minute on, the timer has not fired");
		t.mock.timers.tick(2 ** 31);
		assert.equal(scans, 2, "at the longest timer the check runs once, and re-arms for the rest");
		assert.deepEqual(said, []);
		t.mock.timers.tick(40_000 * 60_000 - 2 ** 31 - 60_000);
		assert.deepEqual(said, [], "40000 minutes on, within the interval (the timer allows a second)");
		t.mock.timers.tick(1_000);
		assert.equal(said.length, 1, "the interval ran out: noticed");
		assert.equal(scans, 3);
		assert.match(said[0], /likely cold \(idle 666h 40m, lifetime 5m 00s\)/);
		warning.reset();
	});

	it("cacheIdleMinutes: 0 or off silences the idle warning; N minutes hold it back until then", async () => {
		for (const silent of [0, "off"]) {
			const stub = await idleSession({ cacheIdleMinutes: silent }, 60 * 60_000);
			await stub.emit("session_start", { reason: "resume" });
			assert.deepEqual(
				[...notices(stub), ...standing(stub)],
				[],
				`cacheIdleMinutes ${silent}: an hour idle, nothing said`,
			);
		}
		const early = await idleSession({ cacheIdleMinutes: 20 }, 10 * 60_000);
		await early.emit("session_start", { reason: "resume" });
		assert.deepEqual(standing(early), [], "10 minutes idle, past the 5-minute lifetime but short of 20");
		const late = await idleSession({ cacheIdleMinutes: 20 }, 25 * 60_000);
		await late.emit("session_start", { reason: "resume" });
		assert.equal(standing(late).length, 1, "25 minutes idle: the warning speaks");
		assert.match(standing(late)[0], /likely cold \(idle 25m 0\ds, lifetime 5m 00s\)/);
	});

	it("uses the provider's saved interval over cacheTtlSeconds", async () => {
		const stub = await idleSession({ cacheTtlByProvider: "fake=3600" }, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(standing(stub), []);
		const other = await idleSession({ cacheTtlByProvider: "other=3600", cacheTtlSeconds: 60 }, 2 * 60_000);
		await other.emit("session_start", { reason: "resume" });
		assert.equal(standing(other).length, 1);
	});

	it("takes the model's own lifetime for the cache retention in use unless one is saved", async () => {
		/** What resuming after `ageMs` idle notices, under a model declaring Pi's two cache tiers. */
		const resumed = async (settings: Record<string, unknown>, ageMs: number): Promise<string[]> => {
			const stub = await idleSession(settings, ageMs);
			stub.model = { provider: "fake", id: "fake-model", promptCache: { short: 300, long: 3600 } };
			await stub.emit("session_start", { reason: "resume" });
			return standing(stub);
		};
		await withRetention("long", async () => {
			assert.deepEqual(await resumed({}, 10 * 60_000), [], "an hour's lifetime: 10 minutes idle is still warm");
			assert.match((await resumed({}, 70 * 60_000))[0] ?? "", /\(idle 1h 10m, lifetime 1h 00m\)/);
			const saved = await resumed({ cacheTtlSeconds: 300 }, 10 * 60_000);
			assert.match(saved[0] ?? "", /lifetime 5m 00s/, "a saved cacheTtlSeconds wins over the model's");
		});
		await withRetention(undefined, async () => {
			const short = await resumed({}, 10 * 60_000);
			assert.match(short[0] ?? "", /lifetime 5m 00s/, "the short tier without PI_CACHE_RETENTION");
		});
	});

	it("is quiet while the cache is within its lifetime", async () => {
		const stub = await idleSession({ confirmColdSend: true }, 1_000);
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(await input(stub, {}), [undefined]);
		assert.deepEqual(notices(stub), []);
		assert.deepEqual(stub.ui.selects, []);
	});

	it("Keep draft puts the text back and keeps the images; Send anyway sends them with the next prompt", async () => {
		const stub = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		stub.ui.answers.push(KEEP_DRAFT);
		assert.deepEqual(await input(stub, { images: [IMAGE] }), [{ action: "handled" }]);
		assert.equal(stub.ui.editorText, "next step");
		assert.deepEqual(stub.ui.selects[0].options, [KEEP_DRAFT, SEND_ANYWAY]);
		assert.match(
			stub.ui.selects[0].title,
			/^The prompt cache of fake\/fake-model is likely cold \(idle 10m 0\ds\): this prompt re-sends ~30k tokens uncached\.$/,
		);
		assert.equal(notices(stub).at(-1), ADVICE.keptDraft(1));
		assert.match(
			ADVICE.keptDraft(1),
			/^context-fold: draft kept, nothing sent; Enter sends it \(and asks again while the cache is likely cold\); 1 image kept for the next prompt \(\/context-fold discard-images drops it\)$/,
		);
		stub.ui.answers.push(SEND_ANYWAY);
		assert.deepEqual(await input(stub, { text: "next step, edited" }), [
			{ action: "transform", text: "next step, edited", images: [IMAGE] },
		]);
		assert.equal(await discard(stub), "context-fold: nothing to discard", "sent images are no longer kept");
	});

	it("a dismissed dialog consumes the input like Keep draft; discard-images drops the kept images", async () => {
		const stub = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(await input(stub, { images: [IMAGE, IMAGE] }), [{ action: "handled" }]);
		assert.equal(notices(stub).at(-1), ADVICE.keptDraft(2));
		const other = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		assert.equal(
			await discard(other),
			"context-fold: nothing to discard",
			"another session keeps no images of this one",
		);
		assert.equal(await discard(stub), "context-fold: dropped 2 images kept from a cancelled prompt");
		stub.ui.answers.push(SEND_ANYWAY);
		assert.deepEqual(await input(stub, {}), [undefined], "nothing left to attach");
	});

	it("a session change drops the kept images and says so above the editor; with none kept it says nothing", async () => {
		const dropped =
			"context-fold: dropped 1 image kept from a cancelled prompt: the session changed or moved in its tree";
		/** The restore widget's lines, its trailer left out: what stands above the editor after Pi's redraw. */
		const restored = (stub: StubPi) => (stub.ui.widgets.get("context-fold-restore") ?? []).slice(0, -1);
		const stub = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(await input(stub, { images: [IMAGE] }), [{ action: "handled" }]);
		await stub.emit("session_tree", {});
		assert.deepEqual(restored(stub), [dropped], "a notice would go with Pi's redraw of the tree");
		assert.equal(await discard(stub), "context-fold: nothing to discard");
		// /new: Pi shuts the session down, then starts the new one and draws it.
		await stub.emit("input", { text: "hi", source: "interactive" });
		assert.deepEqual(await input(stub, { images: [IMAGE] }), [{ action: "handled" }]);
		await stub.emit("session_shutdown", {});
		assert.ok(!notices(stub).some((n) => n.startsWith("context-fold: dropped")), "nothing said at shutdown");
		await stub.emit("session_start", { reason: "new" });
		assert.deepEqual(restored(stub), [dropped], "said by the new session, above its editor");
		assert.equal(await discard(stub), "context-fold: nothing to discard");
		const before = notices(stub).length;
		await stub.emit("session_start", { reason: "new" });
		assert.equal(
			notices(stub)
				.slice(before)
				.filter((n) => n.includes("image")).length,
			0,
			"no images kept, nothing said",
		);
	});

	it("passes automation, RPC and queued input untouched, and proceeds when the dialog throws", async () => {
		const stub = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(await input(stub, { source: "extension" }), [undefined]);
		assert.deepEqual(await input(stub, { source: "rpc" }), [undefined]);
		assert.deepEqual(await input(stub, { streamingBehavior: "followUp" }), [undefined]);
		assert.deepEqual(stub.ui.selects, []);
		stub.ui.answers.push(new Error("dialog broke"));
		assert.deepEqual(await input(stub, {}), [undefined]);
		assert.equal(stub.ui.selects.length, 1);
		assert.equal(stub.ui.editorText, "", "the input was sent, not put back");
	});

	it("proceeds when the estimate throws", async () => {
		const stub = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		await stub.emit("session_start", { reason: "resume" });
		stub.failBranch = true;
		assert.deepEqual(await input(stub, {}), [undefined]);
		assert.deepEqual(stub.ui.selects, []);
	});

	it("asks only in the terminal UI", async () => {
		const stub = await idleSession({ confirmColdSend: true }, 10 * 60_000);
		stub.mode = "rpc";
		await stub.emit("session_start", { reason: "resume" });
		assert.deepEqual(await input(stub, {}), [undefined]);
		assert.deepEqual(stub.ui.selects, []);
	});
});

describe("the e2e filter of advisory lines", () => {
	it("drops every advisory text and keeps warnings", () => {
		const prediction = { risky: true, idleMs: 600_000, leftMs: -300_000, since: 0 };
		const advisories = [
			ADVICE.coldInput(COLD),
			ADVICE.watchdog(9_000, 8_990, 2),
			ADVICE.reset({ kind: "compactions", count: 2 }),
			ADVICE.reset({ kind: "unfoldable", tokens: 90_000, window: 100_000 }),
			ADVICE.churn("k3x9a0b2", 3, true, "tail"),
			ADVICE.idle("fake/fake-model", prediction, 300_000, 30_000),
			ADVICE.keptDraft(0),
			ADVICE.debugCache(WARM),
		];
		const warning = "context-fold: fold pass failed, this turn goes out raw: boom";
		assert.equal(withoutAdvisories([...advisories, warning].join("\n")), warning);
	});
});
