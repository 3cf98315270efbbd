/**
 * The user's view over the stub host: the footer status before and after a fold event and a
 * response (and left alone by a context pass that changed nothing it shows), `/context-fold` (completion, status text headless, settings saved to settings.json and
 * applied from the next request, locked by the environment, recall, unfold after a confirmation that
 * states the cache cost), the fold-entry renderer and `/tree` labels, and the recall/unfold result
 * summaries.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { stripVTControlCharacters } from "node:util";
import { initTheme } from "@earendil-works/pi-coding-agent";
import { visibleWidth } from "@earendil-works/pi-tui";
import { KNOBS, resolveConfig } from "../../src/adapters/pi/config.ts";
import { recallSummary, unfoldSummary } from "../../src/adapters/pi/ui/renderers.ts";
import { knobRows } from "../../src/adapters/pi/ui/settings.ts";
import { foldCode } from "../../src/core/digest.ts";
import { bashSession, loadStub, resultTexts, type StubModel, type StubPi, withRetention } from "./stub-pi.ts";

const FOLDED = /^\{#([0-9a-z]{8}) FOLDED\}/;
const plain = { fg: (_c: string, t: string) => t, bold: (t: string) => t };

async function started(
	options: { window?: number; n?: number; settings?: Record<string, unknown> } = {},
): Promise<StubPi> {
	const stub = loadStub({ window: options.window ?? 10_000 });
	if (options.settings) stub.settings = { "context-fold": options.settings };
	bashSession(stub, options.n ?? 6);
	await stub.emit("session_start", { reason: "startup" });
	return stub;
}

/** A response of provider p, model m with `usage`, stored in the session at `at` and announced (message_end). */
async function respond(stub: StubPi, usage: Record<string, number>, at = 2_000_000_000_000): Promise<void> {
	stub.addMessage({
		role: "assistant",
		provider: "p",
		model: "m",
		content: [{ type: "text", text: "ok" }],
		usage,
		stopReason: "stop",
		timestamp: at,
	});
	await stub.emit("message_end", { message: stub.entries.at(-1)?.message });
}

function foldedCodes(sent: Record<string, unknown>[]): string[] {
	return resultTexts(sent).flatMap((t) => FOLDED.exec(t)?.[1] ?? []);
}

/** A session whose first request folded two or more blocks, resumed in a new extension instance that has sent nothing. */
async function resumedAfterFolds(): Promise<{ codes: string[]; resumed: StubPi }> {
	const first = await started();
	const codes = foldedCodes(await first.request());
	assert.ok(codes.length > 1, "the first request folded fewer than two blocks");
	const resumed = loadStub({ window: 10_000 });
	resumed.entries.push(...first.entries);
	await resumed.emit("session_start", { reason: "resume" });
	return { codes, resumed };
}

describe("footer status", () => {
	it("claims nothing before the first fold, then reads folds, tokens kept out and the cache since the event", async () => {
		const stub = await started();
		stub.mode = "tui";
		await stub.emit("session_start", { reason: "resume" });
		assert.equal(stub.statuses.get("context-fold"), undefined);
		const sent = await stub.request();
		const codes = foldedCodes(sent);
		assert.ok(codes.length > 0, "the request folded");
		const footer = stub.statuses.get("context-fold");
		assert.match(String(footer), new RegExp(`^fold ${codes.length} · −\\d+(\\.\\d)?k · cache read –$`));
		await respond(stub, { input: 60, output: 2, cacheRead: 940, cacheWrite: 0 });
		assert.equal(stub.statuses.get("context-fold"), String(footer).replace("cache read –", "cache read 94%"));
	});

	it("after an unfold, the footer and the status count only the folds still in force, before the next request", async () => {
		const stub = await started();
		stub.mode = "tui";
		await stub.emit("session_start", { reason: "resume" });
		const codes = foldedCodes(await stub.request());
		assert.ok(codes.length > 1, "the request folded fewer than two blocks");
		assert.match(await stub.call("unfold", { codes: [codes[0]] }), /^Unfolded/);
		await stub.emit("tool_execution_end", { toolName: "unfold" });
		assert.match(String(stub.statuses.get("context-fold")), new RegExp(`^fold ${codes.length - 1} · `));
		stub.mode = "print";
		stub.mode = "print";
		const status = (await stub.command("context-fold", "status")).stdout;
		assert.match(status, new RegExp(`Folds +${codes.length - 1} in context`));
		assert.ok(!status.includes(`#${codes[0]} `), `the unfolded block is no longer listed as folded:\n${status}`);
		assert.deepEqual(foldedCodes(await stub.request()), codes.slice(1));
	});

	it("a context pass sets the footer again only when the folds in force or the session's blocks changed", async () => {
		const stub = await started();
		stub.mode = "tui";
		const codes = foldedCodes(await stub.request());
		assert.ok(codes.length > 0, "the first request folded");
		const footer = String(stub.statuses.get("context-fold"));
		assert.match(footer, /^fold /);
		stub.statuses.set("context-fold", "as before");
		await stub.request();
		assert.equal(stub.statuses.get("context-fold"), "as before", "nothing changed: the pass leaves the footer");
		await stub.call("unfold", { codes: [codes[0]] });
		stub.statuses.set("context-fold", "as before");
		await stub.request();
		assert.match(String(stub.statuses.get("context-fold")), new RegExp(`^fold ${codes.length - 1} `), "an unfold");
		await stub.emit("session_compact", { reason: "manual" });
		stub.statuses.set("context-fold", "as before");
		await stub.request();
		assert.match(String(stub.statuses.get("context-fold")), /^fold /, "the first pass after a compaction");
	});

	it("after a compaction, counts only the folds the compacted context still holds", async () => {
		const { stub } = await compactedFolds("tui");
		assert.match(String(stub.statuses.get("context-fold")), /^fold 1 · /, "only the kept folded result counts");
		await stub.request();
		assert.match(String(stub.statuses.get("context-fold")), /^fold 1 · /, "as the next request sends it");
	});

	it("flags an active advisory in the footer and lists it in the status, from the cache advisor", async () => {
		const stub = await started();
		stub.mode = "tui";
		await stub.request();
		const footer = String(stub.statuses.get("context-fold"));
		assert.doesNotMatch(footer, /⚠/);
		const cold = { input: 10, output: 5, cacheRead: 0, cacheWrite: 29_990 };
		for (let i = 0; i < 2; i++) {
			await stub.emit("message_end", { message: { role: "assistant", provider: "p", model: "m", usage: cold } });
		}
		assert.match(String(stub.statuses.get("context-fold")), / · ⚠$/);
		stub.mode = "print";
		const { stdout, stderr } = await stub.command("context-fold", "status");
		assert.match(`${stdout}${stderr}`, /Advisories\n\s+⚠ context-fold: cold input: the last response read nothing/);
	});

	it("discard-images says what it dropped, or that there was nothing", async () => {
		const stub = await started();
		const { stdout, stderr } = await stub.command("context-fold", "discard-images");
		assert.match(`${stdout}${stderr}`, /context-fold: nothing to discard/);
	});

	it("sets no status without a UI", async () => {
		const stub = await started();
		await stub.request();
		assert.equal(stub.statuses.size, 0);
	});
});

describe("/context-fold", () => {
	const dir = mkdtempSync(join(tmpdir(), "cf-ui-"));
	const settingsFile = join(dir, "settings.json");
	let saved: string | undefined;
	before(() => {
		saved = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = dir;
	});
	after(() => {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
		rmSync(dir, { recursive: true, force: true });
	});

	it("completes its subcommands, knob names and fold codes", async () => {
		const stub = await started();
		await stub.request();
		const complete = stub.commands.get("context-fold")?.getArgumentCompletions;
		assert.ok(complete);
		const values = (prefix: string) => ((complete(prefix) as { value: string }[] | null) ?? []).map((i) => i.value);
		assert.deepEqual(values(""), ["status", "settings", "recall", "search", "unfold", "discard-images"]);
		assert.deepEqual(values("s"), ["status", "settings", "search"]);
		assert.deepEqual(values("settings fo"), ["settings foldAt", "settings foldFrom"]);
		const code = foldedCodes(await stub.request())[0];
		assert.ok(values(`recall ${code.slice(0, 3)}`).includes(`recall ${code}`));
		// In every form the command takes a code in, and knob names in any case.
		for (const typed of [`#${code.slice(0, 3)}`, code.slice(0, 3).toUpperCase(), `{#${code.slice(0, 3)}`])
			assert.ok(values(`recall ${typed}`).includes(`recall ${code}`), typed);
		assert.deepEqual(values("settings FOLDF"), ["settings foldFrom"]);
		assert.equal(complete("zzz"), null);
		assert.match(String(stub.commands.get("context-fold")?.description), /discard-images/);
	});

	it("names the backstop in force: backstopAt, but never below 1.25 x Pi's keepRecentTokens", async () => {
		const backstopIn = async (compaction?: Record<string, unknown>) => {
			const stub = await started({ window: 100_000, settings: { policy: "economic", backstopAt: 18_000 } });
			if (compaction) stub.settings = { ...stub.settings, compaction };
			await stub.emit("session_start", { reason: "startup" });
			await stub.request();
			const { stdout } = await stub.command("context-fold", "status");
			return stdout.match(/backstop (\S+)/)?.[1];
		};
		assert.equal(await backstopIn(), "25k", "backstopAt is 18k; Pi's default keepRecentTokens (20k) puts it at 25k");
		assert.equal(
			await backstopIn({ keepRecentTokens: 4_000 }),
			"18k",
			"a smaller keepRecentTokens leaves backstopAt",
		);
	});

	it("names the least event in force: minEvent, but at most a fifth of where Pi compacts on its own", async () => {
		const nextFold = async (window: number, compaction?: Record<string, unknown>) => {
			const stub = await started({ window, settings: { policy: "economic" } });
			if (compaction) stub.settings = { ...stub.settings, compaction };
			await stub.emit("session_start", { reason: "startup" });
			await stub.request();
			// A response that read the cache: a session that never did needs no least event (see below).
			await respond(stub, { input: 10, output: 2, cacheRead: 900, cacheWrite: 0 });
			const { stdout } = await stub.command("context-fold", "status");
			return stdout.match(/^Next fold .*(\n {10}.*)*$/m)?.[0].replace(/\n {10}/g, " · ") ?? stdout;
		};
		assert.match(
			await nextFold(100_000),
			/\(economic foldFrom 14000\) · .* · an event of 11200\+ tokens that repays/,
		);
		const small = await nextFold(32_000);
		assert.match(
			small,
			/an event of 3123\+ tokens that repays its( ·)? rewrite within ~2 requests \(a quarter of the 7 so far\) · minEvent 11200 capped at a fifth of where Pi compacts/,
			small,
		);
		const set = await started({ window: 100_000, settings: { policy: "economic", horizon: 5 } });
		await set.request();
		await respond(set, { input: 10, output: 2, cacheRead: 900, cacheWrite: 0 });
		const { stdout } = await set.command("context-fold", "status");
		assert.match(
			stdout.replace(/\s+/g, " "),
			/that repays its rewrite within 5 requests \(horizon\)/,
			"a horizon the user set",
		);
		assert.match(
			await nextFold(32_000, { enabled: false }),
			/an event of 11200\+ tokens that repays/,
			"with Pi's compaction off nothing caps it",
		);
		// Within a least event of where Pi compacts (15.6k in 32k), the policy counts the whole horizon.
		const near = await started({ window: 32_000, settings: { policy: "economic" } });
		near.addMessage({ role: "user", content: "x".repeat(52_000), timestamp: 1_999_000_000_000 });
		await near.request();
		await respond(near, { input: 10, output: 2, cacheRead: 900, cacheWrite: 0 });
		const nearStatus = (await near.command("context-fold", "status")).stdout.replace(/\s+/g, " ");
		assert.match(nearStatus, /Context 1[3-5]k of 32k/, nearStatus);
		assert.match(
			nearStatus,
			/an event of 3123\+ tokens that repays its rewrite within 20 requests \(horizon: Pi would compact before another such event\)/,
			nearStatus,
		);
		// So too within a least event of the fold budget (20k here, Pi's compaction off), as horizonOf counts it.
		const nearBudget = await started({ window: 100_000, settings: { policy: "economic", budgetCap: 20_000 } });
		nearBudget.settings = { ...nearBudget.settings, compaction: { enabled: false } };
		await nearBudget.emit("session_start", { reason: "startup" });
		nearBudget.addMessage({ role: "user", content: "x".repeat(52_000), timestamp: 1_999_000_000_000 });
		await nearBudget.request();
		await respond(nearBudget, { input: 10, output: 2, cacheRead: 900, cacheWrite: 0 });
		const budgetStatus = (await nearBudget.command("context-fold", "status")).stdout.replace(/\s+/g, " ");
		assert.match(budgetStatus, /Context 1[3-5]k of 100k/, budgetStatus);
		assert.match(
			budgetStatus,
			/an event of 11200\+ tokens that repays its rewrite within 20 requests \(horizon: the context would pass the fold budget before another such event\)/,
			budgetStatus,
		);
	});

	it("names half the least event while the session never read from the cache: every rewrite is free then", async () => {
		const stub = await started({ window: 100_000, settings: { policy: "economic" } });
		await stub.request();
		for (const at of [2_000_000_000_000, 2_000_000_001_000])
			await respond(stub, { input: 900, output: 2, cacheRead: 0, cacheWrite: 0 }, at);
		const { stdout } = await stub.command("context-fold", "status");
		assert.match(stdout, /an event of 5600\+ tokens: this session never\s+read from the cache/, stdout);
		assert.doesNotMatch(stdout, /repays its rewrite/);
	});

	it("names the cache lifetime it assumes and where it came from", async () => {
		const lifetimeLine = async (
			settings: Record<string, unknown>,
			promptCache?: Record<string, number>,
			model: Partial<StubModel> = {},
		) => {
			const stub = await started({ settings });
			stub.model = { provider: "fake", id: "fake-model", ...(promptCache ? { promptCache } : {}), ...model };
			await stub.request();
			const { stdout } = await stub.command("context-fold", "status");
			return stdout.match(/^ {2}lifetime .*$/m)?.[0] ?? stdout;
		};
		const tiers = { short: 300, long: 3600 };
		await withRetention("long", async () => {
			assert.equal(await lifetimeLine({}, tiers), "  lifetime 1h 00m (the model's, for the cache retention in use)");
			assert.equal(
				await lifetimeLine({ cacheTtlSeconds: 600 }, tiers),
				"  lifetime 10m 00s (saved: cacheTtlSeconds)",
			);
			assert.equal(
				await lifetimeLine({ cacheTtlByProvider: "fake=120" }, tiers),
				"  lifetime 2m 00s (saved: cacheTtlByProvider)",
			);
			// A knob an environment variable sets is named by that variable: nothing was saved.
			for (const [variable, value, line] of [
				["CONTEXTFOLD_CACHE_TTL_SECONDS", "20", "  lifetime 20s (environment: CONTEXTFOLD_CACHE_TTL_SECONDS)"],
				[
					"CONTEXTFOLD_CACHE_TTL_BY_PROVIDER",
					"fake=90",
					"  lifetime 1m 30s (environment: CONTEXTFOLD_CACHE_TTL_BY_PROVIDER)",
				],
			]) {
				process.env[variable] = value;
				try {
					assert.equal(await lifetimeLine({ cacheTtlSeconds: 600 }, tiers), line);
				} finally {
					delete process.env[variable];
				}
			}
			assert.equal(await lifetimeLine({}), "  lifetime 5m 00s (cacheTtlSeconds default; the model declares none)");
			// Pi marks any Anthropic Messages request with the hour under the long retention (OpenRouter, a gateway).
			const anthropic = { provider: "openrouter", api: "anthropic-messages" };
			assert.equal(
				await lifetimeLine({}, undefined, anthropic),
				"  lifetime 1h 00m (the model's, for the cache retention in use)",
			);
			assert.equal(
				await lifetimeLine({}, undefined, { ...anthropic, compat: { supportsLongCacheRetention: false } }),
				"  lifetime 5m 00s (cacheTtlSeconds default; the model declares none)",
				"a model that refuses the long retention is marked with the short one",
			);
			// Over OpenAI chat completions Pi writes Anthropic's marks where the compat asks for them.
			const gateway = { api: "openai-completions", compat: { cacheControlFormat: "anthropic" } };
			const hour = "  lifetime 1h 00m (the model's, for the cache retention in use)";
			assert.equal(await lifetimeLine({}, undefined, gateway), hour);
			assert.equal(
				await lifetimeLine({}, undefined, {
					provider: "openrouter",
					id: "anthropic/claude-x",
					api: "openai-completions",
				}),
				hour,
			);
			assert.equal(
				await lifetimeLine({}, undefined, { api: "openai-completions" }),
				"  lifetime 5m 00s (cacheTtlSeconds default; the model declares none)",
				"no Anthropic marks: no Anthropic hour",
			);
		});
		assert.equal(
			await lifetimeLine({}, undefined, { provider: "openrouter", api: "anthropic-messages" }),
			"  lifetime 5m 00s (cacheTtlSeconds default; the model declares none)",
			"the short retention",
		);
	});

	it("prints the status headless, naming the fold event, its codes and the largest folds", async () => {
		const stub = await started();
		const codes = foldedCodes(await stub.request());
		const { stdout } = await stub.command("context-fold", "status");
		assert.match(stdout, /^context-fold status\n/);
		assert.match(stdout, new RegExp(`Folds +${codes.length} in context`));
		assert.match(stdout, new RegExp(`#1 fold +${codes.length} blocks`));
		assert.match(stdout, /Largest folded blocks \(\/context-fold recall <code> shows one\)\n/);
		// Each block reads with its tool call's command and size: bashSession runs `check <i>`.
		for (const code of codes) {
			assert.match(stdout, new RegExp(`\n  #${code} bash: check \\d \\(~[\\d.]+k tokens kept out\\)\n`), code);
		}
		assert.match(stdout, /Next fold .* \(ladder coldFoldAt 25%\)/);
		assert.equal(
			(await stub.command("context-fold", "")).stdout,
			stdout,
			"the bare command prints the status headless",
		);
	});

	it("lays the status view out for a narrow terminal: the bar whole, lines broken between parts", async () => {
		const stub = await started();
		await stub.request();
		stub.mode = "tui";
		stub.ui.viewWidth = 44;
		await stub.command("context-fold", "status");
		const view = stripVTControlCharacters(String(stub.ui.views.at(-1))).split("\n");
		for (const line of view) assert.ok(line.trimEnd().length <= 44, `${line.length} columns: ${line}`);
		assert.ok(
			view.some((l) => /^ ?\[[SC#=~T]{20,}\]$/.test(l.trim())),
			`the bar on one line:\n${view.join("\n")}`,
		);
		assert.ok(view.some((l) => /^ *Next fold /.test(l)));
	});

	it("shows a resumed session's context before its first request, as that request then sends it", async () => {
		const { codes, resumed } = await resumedAfterFolds();
		const before = (await resumed.command("context-fold", "status")).stdout;
		assert.doesNotMatch(before, /No request has gone out/);
		const context = /Context +([\d.]+k) of 10k window \(\d+%\) · as the next request would send it\n/.exec(before);
		assert.ok(context, before);
		assert.match(before, new RegExp(`Folds +${codes.length} in context`));
		assert.deepEqual(foldedCodes(await resumed.request()), codes);
		const after = (await resumed.command("context-fold", "status")).stdout;
		assert.match(after, new RegExp(`Context +${context[1].replace(".", "\\.")} of 10k window \\(\\d+%\\)\n`));
		assert.equal(
			after.replace(/Context .*\n/, ""),
			before.replace(/Context .*\n/, ""),
			"the rest of the status is the same before and after",
		);
	});

	it("a resumed session's status before its first request follows an unfold", async () => {
		const { codes, resumed } = await resumedAfterFolds();
		const folds = async () =>
			/Folds +(\d+) in context/.exec((await resumed.command("context-fold", "status")).stdout)?.[1];
		assert.equal(await folds(), String(codes.length));
		assert.equal(await folds(), String(codes.length), "asked again: the same");
		assert.match(await resumed.call("unfold", { codes: [codes[0]] }), /^Unfolded/);
		assert.equal(await folds(), String(codes.length - 1), "the unfolded block is raw in the next request");
		assert.deepEqual(foldedCodes(await resumed.request()), codes.slice(1));
	});

	it("after a compaction, shows the compacted context until the next request, not the one before", async () => {
		const stub = await started();
		await stub.request();
		const sent = (await stub.command("context-fold", "status")).stdout;
		const firstKept = stub.entries.filter((e) => e.type === "message").at(-3);
		stub.compact(String(firstKept?.id), "what happened so far");
		await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: false });
		const after = (await stub.command("context-fold", "status")).stdout;
		const tokens = (text: string) => Number(/Context +([\d.]+)k/.exec(text)?.[1]);
		assert.match(after, /· as the next request would send it\n/);
		assert.match(after, / C summary \d+/);
		assert.ok(tokens(after) < tokens(sent), `${tokens(after)}k after, ${tokens(sent)}k before`);
		await stub.request();
		assert.doesNotMatch((await stub.command("context-fold", "status")).stdout, /as the next request would send it/);
	});

	it("after a switch to a model with another window, shows the context in the new window until the next request", async () => {
		const stub = await started({ window: 20_000 });
		await stub.request();
		assert.match((await stub.command("context-fold", "status")).stdout, /Context +[\d.]+k of 20k window/);
		stub.window = 8_000;
		await stub.emit("model_select", { model: { provider: "p", id: "small" }, source: "set" });
		const after = (await stub.command("context-fold", "status")).stdout;
		assert.match(after, /Context +[\d.]+k of 8k window \(\d+%\) · as the next request would send it\n/);
		await stub.request();
		assert.match((await stub.command("context-fold", "status")).stdout, /Context +[\d.]+k of 8k window \(\d+%\)\n/);
	});

	it("previews the next request for the model it goes to: an image to a model without image input is a placeholder", async () => {
		const stub = loadStub({ window: 200_000 });
		const image = { type: "image", data: "a".repeat(8_000), mimeType: "image/png" };
		stub.addMessage({ role: "user", content: [{ type: "text", text: "look" }, image], timestamp: 1 });
		stub.addMessage({
			role: "assistant",
			content: [{ type: "text", text: "seen" }],
			provider: "p",
			api: "anthropic-messages",
			model: "vision",
			stopReason: "stop",
			timestamp: 2,
		});
		stub.addMessage({ role: "user", content: "next", timestamp: 3 });
		await stub.emit("session_start", { reason: "startup" });
		const context = async () => {
			const m = /Context +([\d.]+)(k?) of/.exec((await stub.command("context-fold", "status")).stdout);
			assert.ok(m, "a Context line");
			return Number(m[1]) * (m[2] ? 1000 : 1);
		};
		stub.model = { provider: "p", id: "vision", api: "anthropic-messages", input: ["text", "image"] };
		const seen = await context();
		stub.model = { provider: "p", id: "text", api: "openai-completions", input: ["text"] };
		await stub.emit("model_select", { model: stub.model, source: "set" });
		const blind = await context();
		assert.ok(blind < seen - 500, `the image counted as a placeholder: ${blind} against ${seen}`);
	});

	it("after a switch to a model with its own compaction figures, says where Pi compacts for the new model", async () => {
		const stub = loadStub({ window: 20_000 });
		stub.settings = { compaction: { reserveTokens: 5_000, modelOverrides: { "p/small": { reserveTokens: 1_000 } } } };
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		await stub.request();
		assert.match((await stub.command("context-fold", "status")).stdout, /Pi compacts at 15k/);
		stub.window = 8_000;
		stub.model = { provider: "p", id: "small" };
		await stub.emit("model_select", { model: { provider: "p", id: "small" }, source: "set" });
		assert.match(
			(await stub.command("context-fold", "status")).stdout,
			/Pi compacts at 7k/,
			"8k less its own 1k reserve",
		);
	});

	it("says there is nothing to show when the session holds no message yet", async () => {
		const stub = loadStub({ window: 10_000 });
		await stub.emit("session_start", { reason: "startup" });
		assert.match(
			(await stub.command("context-fold", "status")).stdout,
			/No request has gone out in this session yet/,
		);
	});

	it("saves a knob to settings.json, keeping the file's other keys, and applies it from the next request", async () => {
		writeFileSync(settingsFile, JSON.stringify({ theme: "dark", "context-fold": { policy: "ladder" } }));
		const stub = await started({ window: 40_000, settings: { policy: "ladder", tail: 1000, step: 0.02 } });
		assert.deepEqual(foldedCodes(await stub.request()), [], "below the threshold nothing folds");
		const { stdout } = await stub.command("context-fold", "settings coldFoldAt 10%");
		assert.match(stdout, /coldFoldAt = 0\.1, saved to .*settings\.json; applies from the next request/);
		const file = JSON.parse(readFileSync(settingsFile, "utf8"));
		assert.deepEqual(file, { theme: "dark", "context-fold": { policy: "ladder", coldFoldAt: 0.1 } });
		assert.ok(foldedCodes(await stub.request()).length > 0, "the next request folds at the new threshold");
		const listing = (await stub.command("context-fold", "settings")).stdout;
		assert.match(listing, /coldFoldAt +0\.1 +\(saved\)/);
		assert.match(listing, /foldAt +0\.45 +\(default\)/);
		assert.match(listing, /cacheTtlByProvider +"" +\(default\)/, "an empty value is shown, not left blank");
	});

	it("unsets a knob saved under 0.5.1's name too, which would apply in its place, and says so truly", async () => {
		const section = { policy: "ladder", step: 0.3, foldStep: 0.2, confirmColdPrompt: true };
		writeFileSync(settingsFile, JSON.stringify({ theme: "dark", "context-fold": section }));
		const stub = await started({ window: 20_000, settings: section });
		const step = (await stub.command("context-fold", "settings step default")).stdout;
		assert.match(step, /^context-fold: step unset \(removed from /);
		const cold = (await stub.command("context-fold", "settings confirmColdSend default")).stdout;
		assert.match(cold, /^context-fold: confirmColdSend unset \(removed from /);
		const file = JSON.parse(readFileSync(settingsFile, "utf8"));
		assert.deepEqual(file, { theme: "dark", "context-fold": { policy: "ladder" } });
		const listing = (await stub.command("context-fold", "settings")).stdout;
		assert.match(listing, /\n {2}step +0\.12 +\(default\)/);
		assert.match(listing, /\n {2}confirmColdSend +false +\(default\)/);
	});

	it("keeps the knobs beneath a section that is no object after a save, as before it", async () => {
		writeFileSync(settingsFile, JSON.stringify({ "context-fold": { hotTail: 7000 } }));
		// Pi's merged settings as a trusted project's `"context-fold": false` leaves them.
		const stub = loadStub({ window: 20_000 });
		stub.settings = { "context-fold": false };
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		assert.match((await stub.command("context-fold", "settings")).stdout, /hotTail +7000 +\(saved\)/);
		const save = (await stub.command("context-fold", "settings coldTail 1500")).stdout;
		assert.match(save, /coldTail = 1500, saved to /);
		const listing = (await stub.command("context-fold", "settings")).stdout;
		assert.match(listing, /hotTail +7000 +\(saved\)/, "the global file's knob still applies");
		assert.match(listing, /coldTail +1500 +\(saved\)/);
	});

	it("lists the cache lifetime's default as what it means: the model's own where Pi knows it", async () => {
		const stub = await started({ window: 20_000 });
		const listing = (await stub.command("context-fold", "settings")).stdout;
		assert.match(listing, /cacheTtlSeconds +300 +\(default: the model's own lifetime where Pi knows it, else 300\)/);
		writeFileSync(settingsFile, JSON.stringify({ "context-fold": { cacheTtlSeconds: 600 } }));
		const saved = await started({ window: 20_000, settings: { cacheTtlSeconds: 600 } });
		assert.match((await saved.command("context-fold", "settings")).stdout, /cacheTtlSeconds +600 +\(saved\)\n/);
	});

	it('unsets a saved knob with `default` (and cacheTtlByProvider with ""), from the file and from the next request', async () => {
		const section = { policy: "ladder", tail: 1000, step: 0.02, coldFoldAt: 0.9, cacheTtlByProvider: "fake=60" };
		writeFileSync(settingsFile, JSON.stringify({ theme: "dark", "context-fold": section }));
		// Pi's settings in memory keep the saved values until Pi reloads: the unset must hold over them.
		const stub = await started({ window: 20_000, settings: section });
		assert.deepEqual(foldedCodes(await stub.request()), [], "below coldFoldAt 0.9 nothing folds");
		const unset = (await stub.command("context-fold", "settings coldFoldAt default")).stdout;
		assert.equal(
			unset,
			`context-fold: coldFoldAt unset (removed from ${settingsFile}); its default applies from the next request\n`,
		);
		const empty = (await stub.command("context-fold", 'settings cacheTtlByProvider ""')).stdout;
		assert.match(empty, /^context-fold: cacheTtlByProvider unset \(removed from /);
		const file = JSON.parse(readFileSync(settingsFile, "utf8"));
		assert.deepEqual(file, { theme: "dark", "context-fold": { policy: "ladder", tail: 1000, step: 0.02 } });
		assert.ok(foldedCodes(await stub.request()).length > 0, "the next request folds at the default 0.25");
		const listing = (await stub.command("context-fold", "settings")).stdout;
		assert.match(listing, /coldFoldAt +0\.25 +\(default\)/);
		assert.match(listing, /cacheTtlByProvider +"" +\(default\)/);
		const again = (await stub.command("context-fold", "settings coldFoldAt DEFAULT")).stdout;
		assert.match(again, /coldFoldAt unset \(no settings.json set it\)/);
		const notEmpty = (await stub.command("context-fold", 'settings hotTail ""')).stdout;
		assert.match(
			notEmpty,
			/hotTail not changed: .*is not a valid token count/,
			'"" unsets only the empty-by-default knob',
		);
	});

	it("in the terminal UI's list, a change of policy brings the title and the other rows to the new profile", async () => {
		writeFileSync(settingsFile, "{}");
		initTheme("dark"); // Pi's settings list draws with Pi's theme, which the terminal UI sets up
		const stub = await started({ settings: { policy: "ladder" } });
		stub.mode = "tui";
		stub.ui.viewKeys.push("\r"); // Enter on the first row, policy: ladder cycles to economic
		await stub.command("context-fold", "settings");
		const bare = (screen: string | undefined) => stripVTControlCharacters(String(screen));
		const before = bare(stub.ui.views.at(-1));
		assert.match(before, /context-fold settings · policy ladder/);
		assert.match(before, /hotTail · default +4000/);
		const after = bare(stub.ui.viewsAfterKey.at(-1));
		assert.match(stub.ui.notices.at(-1)?.message ?? "", /policy = economic, saved to /);
		assert.match(after, /context-fold settings · policy economic/, "the title names the policy now in force");
		assert.match(after, /policy · saved +economic/);
		assert.match(after, /hotTail · default +7500/, "economic's own hot tail");
		assert.match(after, /minEvent · default +11200/, "economic's own least event");
		const order = (screen: string) => [...screen.matchAll(/^\W{0,4}(\w+) · /gm)].map((m) => m[1]);
		await stub.command("context-fold", "settings");
		const fresh = bare(stub.ui.views.at(-1));
		assert.deepEqual(order(after), order(fresh), "the rows in the new profile's order, as a fresh list has them");
		assert.notDeepEqual(order(before), order(fresh));
	});

	it("in a narrow terminal's list, a knob the environment locks leaves its value room", async () => {
		writeFileSync(settingsFile, "{}");
		initTheme("dark");
		process.env.CONTEXTFOLD_HOT_TAIL = "5000";
		try {
			const stub = await started({ settings: { policy: "working-set" } });
			stub.mode = "tui";
			stub.ui.viewWidth = 40;
			await stub.command("context-fold", "settings");
			const screen = stripVTControlCharacters(String(stub.ui.views.at(-1)));
			assert.match(screen, /hotTail · locked +5000/);
			assert.match(screen, /policy +working-set$/m, "the value whole; where it came from is left out");
		} finally {
			delete process.env.CONTEXTFOLD_HOT_TAIL;
		}
	});

	it("lists the policy first, then its own knobs, those of both profiles, and the other profile's last", () => {
		const keys = (saved: Record<string, unknown>) => knobRows(resolveConfig(saved, {})).map((r) => r.key);
		const economicKnobs = ["hotTail", "coldTail", "horizon", "foldFrom", "backstopAt", "minEvent"];
		const ladderKnobs = ["foldAt", "coldFoldAt", "step", "tail"];
		const workingSet = keys({});
		assert.deepEqual(workingSet.slice(0, 8), ["policy", ...economicKnobs, "useWindow"]);
		assert.deepEqual(workingSet.slice(-4), ladderKnobs);
		const economic = keys({ policy: "economic" });
		assert.deepEqual(economic.slice(0, 7), ["policy", ...economicKnobs]);
		assert.deepEqual(economic.slice(-5), [...ladderKnobs, "useWindow"]);
		const ladder = keys({ policy: "ladder" });
		assert.deepEqual(ladder.slice(0, 5), ["policy", ...ladderKnobs]);
		assert.deepEqual(ladder.slice(-7), [...economicKnobs, "useWindow"]);
		assert.deepEqual([...economic].sort(), [...ladder].sort());
		assert.deepEqual([...workingSet].sort(), [...ladder].sort());
		assert.equal(economic.length, KNOBS.length);
	});

	it("suggests the knob a mistyped name meant, and says when a saved knob does nothing under the policy in force", async () => {
		writeFileSync(settingsFile, "{}");
		const stub = await started({ settings: {} });
		const typo = (await stub.command("context-fold", "settings hottail 6000")).stdout;
		assert.match(typo, /no knob "hottail" \(did you mean hotTail\?\)/);
		assert.doesNotMatch(typo, /known:/, "a near name gets the one suggestion, not the list");
		const other = (await stub.command("context-fold", "settings foldAt 45%")).stdout;
		assert.match(
			other,
			/foldAt = 0\.45, saved to .*; it applies under the ladder profile, not under working-set, the policy in force/,
		);
		const own = (await stub.command("context-fold", "settings useWindow 10")).stdout;
		assert.match(own, /useWindow = 10, saved to .*; applies from the next request/);
	});

	it("says in the confirmation when a saved cacheTtlByProvider entry names no provider Pi knows", async () => {
		writeFileSync(settingsFile, "{}");
		const stub = await started({ settings: {} });
		stub.providers = ["anthropic", "openai"];
		const typo = (await stub.command("context-fold", "settings cacheTtlByProvider antropic=3600")).stdout;
		assert.match(
			typo,
			/cacheTtlByProvider = antropic=3600, saved to .*; applies from the next request; but cacheTtlByProvider entry "antropic" names no provider Pi knows, so it never applies \(did you mean anthropic\?\)/,
		);
		const known = (await stub.command("context-fold", "settings cacheTtlByProvider anthropic=3600")).stdout;
		assert.doesNotMatch(known, /never applies/);
	});

	it("says a saved entry naming no provider once, in the confirmation, with the providers known at start", async () => {
		writeFileSync(settingsFile, "{}");
		const stub = loadStub({ window: 10_000 });
		stub.settings = { "context-fold": {} };
		stub.providers = ["anthropic", "openai"];
		bashSession(stub, 6);
		await stub.emit("session_start", { reason: "startup" });
		const out = await stub.command("context-fold", "settings cacheTtlByProvider antropic=3600");
		const said = `${out.stdout}${out.stderr}${stub.notes.map((n) => n.message).join("\n")}${[...stub.ui.widgets.values()].flat().join("\n")}`;
		assert.equal(said.match(/names no provider Pi knows/g)?.length, 1, said);
		assert.match(out.stdout, /saved to .*; but cacheTtlByProvider entry "antropic" names no provider Pi knows/);
	});

	it("refuses a bad value, a missing value and a knob the environment sets, and lists that knob as locked", async () => {
		writeFileSync(settingsFile, "{}");
		const stub = await started();
		process.env.CONTEXTFOLD_TAIL = "5000";
		try {
			const bad = (await stub.command("context-fold", "settings foldAt lots")).stdout;
			assert.match(bad, /foldAt not changed: .*is not a valid fraction/);
			// Without a value a boolean would read as false (an empty variable is off): nothing is saved.
			const bare = (await stub.command("context-fold", "settings debug")).stdout;
			assert.match(bare, /debug not changed: give a value \(\/context-fold settings debug <value>\)/);
			const locked = (await stub.command("context-fold", "settings tail 3000")).stdout;
			assert.match(locked, /tail is set by CONTEXTFOLD_TAIL in the environment \(5000\)/);
			assert.match(
				(await stub.command("context-fold", "settings")).stdout,
				/tail +5000 +\(environment: CONTEXTFOLD_TAIL, locked\)/,
			);
		} finally {
			delete process.env.CONTEXTFOLD_TAIL;
		}
		process.env.CONTEXTFOLD_FOLD_STEP = "0.3";
		try {
			// An earlier release's variable, still read: the one set is named, not the current name.
			const old = (await stub.command("context-fold", "settings step 0.2")).stdout;
			assert.match(old, /step is set by CONTEXTFOLD_FOLD_STEP in the environment \(0\.3\)/);
			assert.match(
				(await stub.command("context-fold", "settings")).stdout,
				/step +0\.3 +\(environment: CONTEXTFOLD_FOLD_STEP, locked\)/,
			);
		} finally {
			delete process.env.CONTEXTFOLD_FOLD_STEP;
		}
		assert.equal(readFileSync(settingsFile, "utf8"), "{}", "nothing was written");
		// A settings file that is no JSON is named, and left as it is.
		writeFileSync(settingsFile, "{ not json");
		const corrupt = (await stub.command("context-fold", "settings foldAt 0.6")).stdout;
		assert.ok(corrupt.includes(`foldAt not changed: ${settingsFile} cannot be read as JSON (`), corrupt);
		assert.equal(readFileSync(settingsFile, "utf8"), "{ not json");
		// A section that is no object (a profile's name written as the whole section) is named, and kept.
		const word = JSON.stringify({ theme: "dark", "context-fold": "economic" });
		writeFileSync(settingsFile, word);
		const over = (await stub.command("context-fold", "settings coldTail 3000")).stdout;
		assert.ok(
			over.includes(
				`coldTail not changed: ${settingsFile} holds "context-fold": "economic", which is not an object`,
			),
			over,
		);
		assert.equal(readFileSync(settingsFile, "utf8"), word);
	});

	it("recalls an original for the user without touching the context", async () => {
		const stub = await started();
		const code = foldedCodes(await stub.request())[0];
		const before = stub.entries.length;
		const { stdout } = await stub.command("context-fold", `recall #${code}`);
		assert.match(stdout, new RegExp(`^Recalled #${code}: bash, 200 lines \\(sha256 verified\\)`));
		assert.match(stdout, /line 199 of check \d output ok/);
		assert.equal(stub.entries.length, before, "no entry appended");
		assert.match((await stub.command("context-fold", "recall zzzzzzzz")).stdout, /not a fold code of this session/);
		// What is not a code is quoted clipped, as the tools quote it, not echoed whole.
		const long = (await stub.command("context-fold", `recall ${"x".repeat(10_000)}`)).stdout;
		assert.match(long, /is not a fold code/);
		assert.ok(long.length < 400, `${long.length} characters`);
		const tagged = await stub.command("context-fold", `recall {#${code.toUpperCase()} FOLDED}`);
		assert.match(tagged.stdout, new RegExp(`^Recalled #${code}:`), "a whole tag in any case names the code");
		const typo = await stub.command("context-fold", "recall see above");
		assert.match(typo.stdout, /"see above" is not a fold code \(a code is 8 letters or digits/);
		const two = await stub.command("context-fold", `unfold ${code} #${code}`);
		assert.match(two.stdout, /\/context-fold unfold takes one code at a time \(got 2\)/);
	});

	it("recalls a block holding terminal escape sequences without them, printed or notified", async () => {
		const stub = loadStub({ window: 10_000 });
		const escapes = "before \u001b]0;PWNED-TITLE\u0007 \u001b]52;c;cm0gLXJmIH4K\u0007 \u001b[2J after";
		bashSession(stub, 6, 200, (i, k) => (k === 0 ? escapes : `line ${k} of check ${i} output ok`));
		await stub.emit("session_start", { reason: "startup" });
		const code = foldedCodes(await stub.request())[0];
		const bare = (text: string) => !text.includes("\u001b") && !text.includes("\u0007");
		const { stdout } = await stub.command("context-fold", `recall ${code}`);
		assert.match(stdout, new RegExp(`^Recalled #${code}: bash`));
		assert.match(stdout, /^before {4}after$/m);
		assert.ok(bare(stdout), JSON.stringify(stdout.slice(0, 200)));
		stub.mode = "rpc";
		await stub.command("context-fold", `recall ${code}`);
		const note = stub.notes.at(-1)?.message ?? "";
		assert.match(note, /^before {4}after$/m);
		assert.ok(bare(note), JSON.stringify(note.slice(0, 200)));
	});

	it("says why an unfold the window has no room for stays folded, with the tokens it would add", async () => {
		const stub = await started();
		const code = foldedCodes(await stub.request())[0];
		stub.systemPrompt = "Project rule: keep answers short and precise.\n".repeat(700);
		await stub.request();
		stub.mode = "rpc";
		stub.confirmAnswer = true;
		await stub.command("context-fold", `unfold ${code}`);
		assert.match(
			stub.notes.at(-1)?.message ?? "",
			new RegExp(
				`^context-fold: #${code} bash: [^\\n]+ \\([\\d.]+k? tokens\\) stays folded: it would add ~[\\d.]+k? tokens where ~[\\d.]+k? are left in the window`,
			),
		);
		assert.ok(foldedCodes(await stub.request()).includes(code), "still folded");
	});

	it("names a block whose command holds $' or $$ whole in the unfold notice", async () => {
		const stub = loadStub({ window: 10_000 });
		bashSession(stub, 6);
		// Bash's ANSI-C quoting and the shell's pid: replacement patterns to String.replace.
		const command = "printf $'col_a\\tcol_b\\n' && echo $$";
		const first = stub.entries.find((e) => (e.message as { role?: string } | undefined)?.role === "assistant");
		(first?.message as { content: { arguments: { command: string } }[] }).content[0].arguments.command = command;
		await stub.emit("session_start", { reason: "startup" });
		const code = foldedCodes(await stub.request())[0];
		stub.mode = "rpc";
		stub.confirmAnswer = true;
		await stub.command("context-fold", `unfold ${code}`);
		const note = stub.notes.at(-1)?.message ?? "";
		assert.ok(
			note.startsWith(`Unfolded #${code} bash: ${command} (`) &&
				note.endsWith(": the original content is back in the context from the next request on."),
			note,
		);
	});

	it("unfolds only after a confirmation that states the cache cost; headless it only states it", async () => {
		const stub = await started();
		const code = foldedCodes(await stub.request())[0];
		const headless = (await stub.command("context-fold", `unfold ${code}`)).stdout;
		assert.match(headless, /tokens back into every later request/);
		assert.match(headless, /Not unfolded/);
		assert.deepEqual(foldedCodes(await stub.request()).includes(code), true);

		stub.mode = "rpc";
		stub.confirmAnswer = false;
		await stub.command("context-fold", `unfold ${code}`);
		assert.equal(stub.confirms.length, 1);
		assert.match(stub.confirms[0].message, /writes ~\d+(\.\d)?k? tokens to the prompt cache again/);
		assert.match(stub.notes.at(-1)?.message ?? "", new RegExp(`^#${code} bash: [^\\n]+ tokens\\) stays folded$`));
		assert.ok(foldedCodes(await stub.request()).includes(code), "declined: still folded");

		stub.confirmAnswer = true;
		// The session file refuses the unfold: the user is told why, and it stays folded.
		stub.failAppend = true;
		await stub.command("context-fold", `unfold ${code}`);
		stub.failAppend = false;
		assert.match(stub.notes.at(-1)?.message ?? "", /^context-fold: unfold failed, nothing was unfolded: disk full$/);
		assert.ok(foldedCodes(await stub.request()).includes(code), "refused: still folded");

		await stub.command("context-fold", `unfold ${code}`);
		assert.ok(!foldedCodes(await stub.request()).includes(code), "confirmed: unfolded");
		assert.match(
			stub.notes.at(-1)?.message ?? "",
			new RegExp(`^Unfolded #${code} bash: [^\\n]+ tokens\\): the original content is back`),
		);
		// One figure for what it puts back: the confirmation's, the /tree label's and the status's.
		const back = /puts ~([\d.]+k?) tokens back/.exec(stub.confirms.at(-1)?.message ?? "")?.[1];
		assert.ok(back, stub.confirms.at(-1)?.message);
		assert.ok(
			[...stub.labels.values()].includes(`unfolded #${code} · ~${back} tokens back in context`),
			[...stub.labels.values()].join("\n"),
		);
		stub.mode = "print";
		const status = (await stub.command("context-fold", "status")).stdout;
		assert.match(status, new RegExp(`unfold +#${code}, ~${back.replace(".", "\\.")} back`), status);
	});

	it("answers discard-images and an unknown subcommand", async () => {
		const stub = await started();
		const discard = await stub.command("context-fold", "discard-images");
		assert.match(discard.stdout, /nothing to discard/);
		assert.equal(discard.exitCode, undefined, "an answer leaves pi's exit code alone");
		const unknown = await stub.command("context-fold", "frobnicate");
		assert.match(unknown.stdout, /unknown subcommand "frobnicate"/);
		assert.equal(unknown.exitCode, 1, "headless, a refused command makes pi exit 1");
		// With a UI (TUI, RPC) pi goes on: a refusal leaves its exit code alone.
		stub.hasUI = true;
		assert.equal((await stub.command("context-fold", "frobnicate")).exitCode, undefined);
	});

	it("tells on stderr when the session was replaced under a command (its context gone stale)", async () => {
		const stub = await started();
		const stale = () => {
			throw new Error("This extension ctx is stale after session replacement");
		};
		Object.defineProperty(stub, "hasUI", { get: stale, configurable: true });
		const out = await stub.command("context-fold", "frobnicate");
		assert.match(out.stderr, /^context-fold: unknown subcommand "frobnicate"/);
		assert.equal(out.exitCode, undefined);
	});
});

describe("renderers and /tree labels", () => {
	it("renders a fold event's layer entry with its codes and saving, and labels it for /tree", async () => {
		const stub = await started();
		const codes = foldedCodes(await stub.request());
		const render = stub.entryRenderers.get("contextfold.fold");
		assert.ok(render);
		const entries = stub.entries.filter((e) => e.customType === "contextfold.fold");
		const lines = entries.map((e) => {
			const c = render(e, { expanded: false }, plain) as { render(w: number): string[] } | undefined;
			return c?.render(200)[0]?.trim();
		});
		assert.equal(lines[0], undefined, "a records entry renders nothing");
		const want = `folded ${codes
			.slice(0, 4)
			.map((c) => `#${c}`)
			.join(", ")}`;
		assert.ok(lines[1]?.startsWith(`context-fold: ${want}`), lines[1]);
		assert.match(String(lines[1]), /· ~\d+(\.\d)?k tokens kept out$/);
		const layer = entries[1].id as string;
		assert.equal(stub.labels.get(layer), lines[1]?.replace("context-fold: ", ""));
	});

	it("summarises recall_folded and unfold results", () => {
		const recall = recallSummary(
			"Recalled #k3x9a0b2: bash, 401 lines (sha256 verified)\nline 1\nline 2\n\nerror: #zzzzzzzz is not a fold code of this session branch",
		);
		assert.equal(recall[0], "recalled #k3x9a0b2 · bash · 401 lines · sha256 verified");
		assert.match(recall[1], /^~\d+ tokens returned$/);
		assert.equal(
			recallSummary("Recalled #k3x9a0b2: bash, 1 line (sha256 verified)\nok")[0],
			"recalled #k3x9a0b2 · bash · 1 line · sha256 verified",
			"a one-line block's header reads in the singular",
		);
		assert.equal(recall[2], "error: #zzzzzzzz is not a fold code of this session branch");
		const unfold = unfoldSummary("Unfolded #k3x9a0b2: the original content is back.\n#q is already unfolded", (c) =>
			c === "k3x9a0b2" ? { id: "r:x", code: c, chars: 4000, seq: 1 } : undefined,
		);
		assert.deepEqual(unfold, [
			"unfolded #k3x9a0b2 · ~1k tokens back in context from the next request on",
			"#q is already unfolded",
		]);
		// A refusal naming a code the branch knows is followed by what its block was.
		const refused = unfoldSummary(
			"#q is already unfolded\n#zz is not a fold code of this session branch",
			() => undefined,
			(c) =>
				c === "q"
					? { code: c, kind: "toolResult", tool: "read", args: { path: "src/a.ts" }, tokens: 2_000 }
					: undefined,
		);
		assert.deepEqual(refused, [
			"#q is already unfolded",
			"  #q read: src/a.ts (2k tokens)",
			"#zz is not a fold code of this session branch",
		]);
		// With the branch's facts, each block reads by what it was.
		const facts = (code: string) =>
			code === "k3x9a0b2"
				? {
						code,
						kind: "toolResult",
						tool: "bash",
						args: { command: `npm test ${"-v ".repeat(50)}` },
						tokens: 1_000,
					}
				: undefined;
		const described = recallSummary("Recalled #k3x9a0b2: bash, 401 lines (sha256 verified)\nline 1", facts)[0];
		assert.match(described, /^recalled #k3x9a0b2 · bash: npm test -v -v .*… · 401 lines · sha256 verified$/);
		assert.equal(described.length, 100);
		const put = unfoldSummary(
			"Unfolded #k3x9a0b2: the original content is back.",
			() => ({ id: "r:x", code: "k3x9a0b2", chars: 4000, seq: 1 }),
			facts,
		)[1];
		assert.match(put, /^ {2}#k3x9a0b2 bash: npm test -v -v .*… \(1k tokens\)$/);
		assert.equal(put.length, 100);
	});

	it("draws a failed recall_folded or unfold in the theme's error colour, any other result muted", () => {
		const stub = loadStub();
		const theme = { fg: (color: string, text: string) => `<${color}>${text}` };
		const drawn = (tool: string, isError: boolean) => {
			const renderers = stub.toolRenderers[0](tool, () => ({})) as {
				renderResult: (r: unknown, o: unknown, t: unknown, c: unknown) => { render(width: number): string[] };
			};
			const result = { content: [{ type: "text", text: "recall_folded: name at least one fold code in `codes`" }] };
			return renderers.renderResult(result, { expanded: false, isPartial: false }, theme, { isError }).render(200);
		};
		for (const tool of ["recall_folded", "unfold"]) {
			assert.match(drawn(tool, true)[0], /^<error>/);
			assert.match(drawn(tool, false)[0], /^<muted>/);
		}
	});

	it("lays a recall_folded or unfold result out for the width Pi's tool box leaves it, without wrapping", () => {
		const stub = loadStub();
		const theme = { fg: (_color: string, text: string) => text };
		const what = `bash: npm test ${"-v ".repeat(50)}`;
		// A command of wide characters takes two columns a character.
		const wide = `bash: grep -rn ${"検索".repeat(40)}`;
		const results = {
			recall_folded: `Recalled #k3x9a0b2: ${what}, 401 lines (sha256 verified)\nline 1\n\nRecalled #q7w8e9r0: ${wide}, 3 lines (sha256 verified)\nx`,
			unfold:
				"Unfolded #k3x9a0b2, #q7w8e9r0, #a1s2d3f4, #z9x8c7v6, #m5n4b3v2, #p0o9i8u7: the original content is back.",
		};
		for (const [tool, text] of Object.entries(results)) {
			const renderers = stub.toolRenderers[0](tool, () => ({})) as {
				renderResult: (r: unknown, o: unknown, t: unknown, c: unknown) => { render(width: number): string[] };
			};
			const drawn = renderers.renderResult({ content: [{ type: "text", text }] }, { expanded: false }, theme, {});
			const wide = drawn.render(400).map((line) => line.trimEnd());
			// A 100-column terminal: Pi's tool box keeps a column of padding each side.
			for (const width of [98, 72]) {
				const lines = drawn.render(width).map((line) => line.trimEnd());
				assert.equal(lines.length, wide.length, `${tool} at ${width} columns:\n${lines.join("\n")}`);
				for (const line of lines) assert.ok(visibleWidth(line) <= width, line);
			}
		}
	});

	it("collapses a whole recall of a build log to its header: the log's own error lines are content", async () => {
		const stub = loadStub({ window: 40_000 });
		bashSession(stub, 30, 400);
		const log = Array.from({ length: 300 }, (_, i) => `error: E0308 mismatched types at src/lib.rs:${i + 1}`);
		const first = stub.entries.find((e) => (e.message as { role?: string } | undefined)?.role === "toolResult");
		(first?.message as { content: { text: string }[] }).content[0].text = log.join("\n");
		await stub.emit("session_start", { reason: "startup" });
		const [code] = foldedCodes(await stub.request());
		assert.ok(code, "the log was folded");
		const drawn = collapsedRecall(stub, await stub.tools.get("recall_folded")?.execute("call", { codes: [code] }));
		assert.equal(drawn.length, 2, drawn.slice(0, 4).join("\n"));
		assert.match(drawn[0], new RegExp(`^recalled #${code} · bash: check 0 · 300 lines · sha256 verified$`));
		assert.match(drawn[1], /^~[\d.]+k tokens returned$/);
	});

	it("collapses a search to the blocks it found, each by what it was, never as recalled whole", async () => {
		const stub = await started();
		const codes = foldedCodes(await stub.request());
		assert.ok(codes.length > 1, "several blocks were folded");
		const drawn = collapsedRecall(
			stub,
			await stub.tools.get("recall_folded")?.execute("call", { search: "failed at step" }),
		);
		assert.equal(drawn[0], `${codes.length} blocks contain "failed at step":`);
		const hits = drawn.slice(1, -1);
		assert.deepEqual(hits.map((l) => l.slice(3, 11)).sort(), [...codes].sort(), drawn.join("\n"));
		for (const line of hits) assert.match(line, /^ {2}#\w{8} · bash: check \d · 1 match$/);
		assert.match(drawn.at(-1) ?? "", /^~[\d.]+k? tokens returned$/);
		assert.ok(!drawn.some((l) => l.startsWith("recalled")), "a search recalls no block whole");
	});
});

/** A recall_folded result as the terminal UI draws it collapsed, by the registered renderer, in plain text. */
function collapsedRecall(stub: StubPi, result: unknown): string[] {
	const renderers = stub.toolRenderers[0]("recall_folded", () => ({})) as {
		renderResult: (r: unknown, o: unknown, t: unknown, c: unknown) => { render(width: number): string[] };
	};
	const theme = { fg: (_color: string, text: string) => text };
	return renderers
		.renderResult(result, { expanded: false, isPartial: false }, theme, {})
		.render(200)
		.map((line) => line.trimEnd());
}

/**
 * A session of eight bash calls whose first request folded some, then compacted so that only the
 * last folded result stays in the context: `gone` is a folded block the compaction removed, `kept`
 * one still folded in the context. `mode`: the run mode the session reports from the start.
 */
async function compactedFolds(
	mode?: StubPi["mode"],
	beforeCompaction?: (stub: StubPi, codes: string[]) => Promise<void>,
): Promise<{ stub: StubPi; codes: string[]; gone: string; kept: string }> {
	const stub = await started({ n: 8 });
	if (mode) stub.mode = mode;
	const sent = await stub.request();
	const codes = foldedCodes(sent);
	assert.ok(codes.length > 1, "the request folded more than one block");
	await beforeCompaction?.(stub, codes);
	// Keep the messages from the last folded result's call on: every earlier folded result leaves.
	const lastFolded = sent.findLastIndex((m) => FOLDED.test(resultTexts([m])[0] ?? ""));
	const messages = stub.entries.filter((e) => e.type === "message");
	stub.compact(String(messages[lastFolded - 1].id), "what happened so far");
	await stub.emit("session_compact", { reason: "manual", compactionEntry: {}, fromExtension: false });
	return { stub, codes, gone: codes[0], kept: codes[codes.length - 1] };
}

/** A block's line as the user reads it: the code, bash and its command (`check <i>`), its size. */
const lineOf = (code: string) => new RegExp(`^#${code} bash: check \\d \\([\\d.]+k? tokens\\)$`);

describe("blocks a user can recognise", () => {
	it("titles the recall view of a parent session's code with its tool call, read from the parent's file", async () => {
		const parent = await started({ n: 8 });
		const codes = foldedCodes(await parent.request());
		const dir = mkdtempSync(join(tmpdir(), "cf-ui-"));
		try {
			const file = join(dir, "parent.jsonl");
			const header = { type: "session", version: 3, id: "p", timestamp: "2026-12-05T10:00:00.000Z", cwd: dir };
			writeFileSync(file, `${[header, ...parent.entries].map((e) => JSON.stringify(e)).join("\n")}\n`);
			const child = loadStub({ window: 10_000, parentSession: file, seeded: true });
			child.addMessage({ role: "user", content: "seeded", timestamp: 1 });
			await child.emit("session_start", { reason: "new" });
			child.mode = "tui";
			await child.command("context-fold", `recall ${codes[0]}`);
			const title = String(child.ui.views.at(-1))
				.split("\n")[0]
				.replace(/ \(rows [^)]*\)$/, "");
			assert.match(title, lineOf(codes[0]));
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it("completes codes with what each block was; unfold only those still in the context", async () => {
		const { stub, codes, gone, kept } = await compactedFolds();
		await stub.request();
		const complete = stub.commands.get("context-fold")?.getArgumentCompletions;
		assert.ok(complete);
		const items = (prefix: string) =>
			(complete(prefix) as { value: string; label: string; description?: string }[] | null) ?? [];
		const recall = items("recall ");
		assert.deepEqual(recall.map((i) => i.label).sort(), [...codes].sort());
		for (const item of recall) assert.match(`#${item.label} ${item.description}`, lineOf(item.label));
		const unfold = items("unfold ").map((i) => i.label);
		assert.ok(unfold.includes(kept), "a folded block in the context is offered for unfolding");
		assert.ok(!unfold.includes(gone), "a compacted block is not offered for unfolding");
	});

	it("after a compaction, before the next request, unfold completes only codes still in the context", async () => {
		const { stub, gone, kept } = await compactedFolds();
		const complete = stub.commands.get("context-fold")?.getArgumentCompletions;
		const unfold = ((complete?.("unfold ") as { label: string }[] | null) ?? []).map((i) => i.label);
		assert.ok(unfold.includes(kept), "a folded block in the context is offered for unfolding");
		assert.ok(!unfold.includes(gone), "a compacted block is not offered for unfolding");
	});

	it("in a resumed session, before its first request, unfold completes only codes still in the context", async () => {
		const { stub, gone, kept } = await compactedFolds();
		// A new process on the same session file: a fresh extension over the entries as written.
		const resumed = loadStub({ window: 10_000 });
		resumed.entries.push(...stub.entries);
		await resumed.emit("session_start", { reason: "resume" });
		const complete = resumed.commands.get("context-fold")?.getArgumentCompletions;
		const unfold = ((complete?.("unfold ") as { label: string }[] | null) ?? []).map((i) => i.label);
		assert.ok(unfold.includes(kept), "a folded block in the context is offered for unfolding");
		assert.ok(!unfold.includes(gone), "a compacted block is not offered for unfolding");
	});

	it("unfold of a block put back, then compacted away, says it left the context, not that it is unfolded", async () => {
		const { stub, gone } = await compactedFolds(undefined, async (s, codes) => {
			await s.tools.get("unfold")?.execute("call", { codes: [codes[0]] });
			await s.request();
		});
		const tool = (await stub.tools.get("unfold")?.execute("call", { codes: [gone] })) as {
			content: { text: string }[];
			isError?: boolean;
		};
		assert.match(
			tool.content[0].text,
			new RegExp(
				`^#${gone} is no longer in the context the requests carry \\(a compaction took it out, or another extension leaves it out\\); use recall_folded`,
			),
		);
		assert.equal(tool.isError, true);
		const { stdout } = await stub.command("context-fold", `unfold ${gone}`);
		assert.match(
			stdout,
			/is no longer in the context \(a compaction took it out, or another extension leaves it out\)/,
		);
		assert.doesNotMatch(stdout, /already unfolded/);
		const recalled = await stub.command("context-fold", `recall ${gone}`);
		assert.match(
			recalled.stdout,
			/No longer in the context \(a compaction took it out, or another extension leaves it out\)/,
		);
		// Recalled again and again, it raises no churn: only recall reads it, no unfold or wider tail would spare that.
		stub.mode = "tui";
		stub.hasUI = true;
		await stub.emit("session_start", { reason: "resume" });
		for (let i = 0; i < 3; i++)
			await stub.emit("tool_result", { toolName: "recall_folded", input: { codes: [gone] }, content: [] });
		const churn = stub.ui.notices.map((n) => n.message).filter((m) => m.includes("recall churn"));
		assert.deepEqual(churn, []);
	});

	it("unfold of a compacted block the session file no longer holds says recall cannot read it either", async () => {
		const { stub, gone } = await compactedFolds();
		// A line Pi could not read when it loaded the session is missing from its entries.
		const at = stub.entries.findIndex((e) => {
			const message = e.message as { role?: string; toolCallId?: string } | undefined;
			return message?.role === "toolResult" && foldCode(`r:${message.toolCallId}`) === gone;
		});
		assert.ok(at >= 0, "the folded result's entry was not found");
		stub.entries.splice(at, 1);
		assert.equal(
			await stub.call("unfold", { codes: [gone] }),
			`#${gone} is no longer in the context the requests carry, nor in the session file as Pi read it (its line is unreadable or gone), so recall_folded cannot read it either`,
		);
		const { stdout } = await stub.command("context-fold", `unfold ${gone}`);
		assert.match(
			stdout,
			/nor in the session file as Pi read it \(its line is unreadable or gone\), so it can be neither/,
		);
	});

	it("the menu's recall picker lists every folded block by what it was, and opens the one chosen", async () => {
		const { stub, codes, kept } = await compactedFolds();
		stub.mode = "tui";
		const picker = async (choice: string) => {
			stub.ui.answers.push(choice);
			stub.ui.answers.push(undefined);
			await stub.command("context-fold", "");
			return stub.ui.selects.at(-1);
		};
		const recall = await picker("recall");
		assert.equal(recall?.title, "Recall a folded block");
		assert.equal(recall?.options.length, codes.length);
		for (const line of recall?.options ?? []) assert.match(line, lineOf(String(/^#(\w+)/.exec(line)?.[1])));
		const unfold = await picker("unfold");
		assert.equal(unfold?.title, "Unfold a folded block");
		assert.deepEqual(
			unfold?.options.map((l) => l.slice(1, 9)),
			[kept],
			"only the block the compaction kept can be unfolded",
		);
		const chosen = recall?.options.find((l) => l.startsWith(`#${kept} `));
		assert.ok(chosen);
		stub.ui.answers.push("recall", chosen);
		await stub.command("context-fold", "");
		assert.ok(stub.ui.views.at(-1)?.startsWith(chosen), "the view is titled with the block's line");
		// In a narrow terminal each option keeps to its width, so that none wraps (Pi pads each).
		const columns = Object.getOwnPropertyDescriptor(process.stdout, "columns");
		Object.defineProperty(process.stdout, "columns", { value: 36, configurable: true });
		try {
			const narrow = await picker("recall");
			assert.equal(narrow?.options.length, codes.length);
			for (const line of narrow?.options ?? []) assert.ok(line.length <= 30, `${line.length}: ${line}`);
			assert.ok(
				narrow?.options.some((l) => l.includes("…")),
				"a line clipped to the terminal",
			);
		} finally {
			if (columns) Object.defineProperty(process.stdout, "columns", columns);
			else delete (process.stdout as { columns?: number }).columns;
		}
	});

	it("heads a search's hits with what each block was, in the user's words", async () => {
		const stub = await started();
		const codes = foldedCodes(await stub.request());
		const { stdout } = await stub.command("context-fold", "search failed at step");
		for (const code of codes)
			assert.match(stdout, new RegExp(`\n#${code} bash: check \\d \\([\\d.]+k tokens\\): 1 match\n`));
		assert.doesNotMatch(stdout, /recall_folded|Recalled/);
		// The text keeps the spaces it starts with after the one that ends `search`: no line of the
		// blocks holds " line 3" (each starts with "line"), and a space typed after the text goes.
		const indented = await stub.command("context-fold", "search  line 3 of check");
		assert.match(indented.stdout, /no folded block contains " line 3 of check"/);
		const trailing = await stub.command("context-fold", "search line 3 of check 1 ");
		assert.match(trailing.stdout, /line 3 of check 1 output ok/);
		const long = await stub.command("context-fold", `search ${"x".repeat(501)}`);
		assert.match(long.stdout, /^context-fold: the search text is 501 characters; at most 500/);
		const twoLines = await stub.command("context-fold", "search failed at\nstep");
		assert.match(twoLines.stdout, /^context-fold: the search text holds a line break; a match is within one line/);
		// In the terminal UI a refusal is a warning, as every other refusal of the command is.
		stub.hasUI = true;
		await stub.command("context-fold", `search ${"x".repeat(501)}`);
		assert.deepEqual(stub.notes.at(-1), {
			message: "context-fold: the search text is 501 characters; at most 500",
			level: "warning",
		});
	});

	it("lists the blocks of a fold event under its line in the transcript, every block when expanded", async () => {
		const stub = await started({ n: 10 });
		const codes = foldedCodes(await stub.request());
		assert.ok(codes.length > 4, "the event folded more than four blocks");
		const render = stub.entryRenderers.get("contextfold.fold");
		assert.ok(render);
		const layer = stub.entries.filter((e) => e.customType === "contextfold.fold")[1];
		const drawn = (expanded: boolean) =>
			(render(layer, { expanded }, plain) as { render(w: number): string[] }).render(200).map((l) => l.trimEnd());
		const [head, ...blocks] = drawn(false);
		assert.match(head, /^context-fold: folded #\w{8}, #\w{8}, #\w{8}, #\w{8} \+\d+ · /);
		assert.deepEqual(
			blocks.map((l) => l.slice(3, 11)),
			codes.slice(0, 4),
		);
		for (const line of blocks) assert.match(line.slice(2), lineOf(line.slice(3, 11)));
		assert.equal(drawn(true).length, 1 + codes.length);
	});
});

describe("no offer that fails", () => {
	it("the recall view offers no unfold for a block a compaction removed, before and after the next request", async () => {
		const { stub, gone } = await compactedFolds();
		stub.mode = "tui";
		for (const when of ["before the next request", "after it"]) {
			stub.ui.viewKeys.push("u");
			await stub.command("context-fold", `recall ${gone}`);
			const view = String(stub.ui.views.at(-1));
			assert.match(view, new RegExp(`^#${gone} bash: check \\d \\([\\d.]+k tokens\\) \\(rows 1-`), when);
			assert.match(
				view,
				/No\s+longer\s+in\s+the\s+context\s+\(a\s+compaction\s+took\s+it\s+out,\s+or\s+another\s+extension\s+leaves\s+it\s+out\):\s+it\s+can\s+be\s+read\s+here,\s+not\s+unfolded\./,
			);
			assert.doesNotMatch(view, /u unfold/, when);
			assert.equal(stub.confirms.length, 0, `${when}: u asked nothing`);
			await stub.request();
		}
	});

	it("the recall view of a block still folded in the context offers unfold, and asks naming the block", async () => {
		const { stub, kept } = await compactedFolds();
		stub.mode = "tui";
		stub.confirmAnswer = false;
		stub.ui.viewKeys.push("u");
		await stub.command("context-fold", `recall ${kept}`);
		assert.match(String(stub.ui.views.at(-1)), /· u unfold ·/);
		assert.equal(stub.confirms.length, 1);
		assert.match(stub.confirms[0].message, new RegExp(`^Unfold #${kept} bash: check \\d\\? It puts`));
	});

	it("unfolding a compacted block answers in the user's commands, never the model's tools", async () => {
		const { stub, gone } = await compactedFolds();
		stub.mode = "rpc";
		await stub.command("context-fold", `unfold ${gone}`);
		assert.equal(stub.confirms.length, 0, "no confirmation for what cannot be done");
		assert.equal(
			stub.notes.at(-1)?.message,
			`context-fold: #${gone} bash: check 0 (1.5k tokens) is no longer in the context (a compaction took it out, or another extension leaves it out), so it cannot be unfolded; /context-fold recall ${gone} shows it`,
		);
		const typo = await stub.command("context-fold", "unfold see above");
		assert.equal(typo.stdout, "");
		assert.match(String(stub.notes.at(-1)?.message), /"see above" is not a fold code/);
		for (const note of stub.notes) assert.doesNotMatch(note.message, /recall_folded|\bunfold tool/);
	});
});
