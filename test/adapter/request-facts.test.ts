/**
 * RequestFacts (src/adapters/pi/fold/request-facts.ts): what the fold pass reads about a request,
 * from a stand-in for Pi's context: the window (the model's, else Pi's usage report), the context
 * size from the request's own messages (Pi asked only with no response yet), the cache on the
 * extension's clock (warm within the model's lifetime, cold past it, with the model's rewrite price),
 * the cache_warm refreshes Pi recorded meanwhile, and Pi's compaction figures for the model.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { ActiveSettings } from "../../src/adapters/pi/active-settings.ts";
import { learnRetention } from "../../src/adapters/pi/cache/lifetime.ts";
import { CacheTelemetry } from "../../src/adapters/pi/cache/telemetry.ts";
import { RequestFacts } from "../../src/adapters/pi/fold/request-facts.ts";
import { SavedSettings } from "../../src/adapters/pi/ui/settings.ts";
import type { MessageLike } from "../../src/core/block.ts";
import { withRetention } from "./stub-pi.ts";

const MODEL = {
	provider: "acme",
	id: "big",
	api: "openai-completions",
	contextWindow: 100_000,
	cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
};

/**
 * Pi's context, as far as RequestFacts reads it: the model, Pi's usage report and the session's
 * entries; `asked` records each question put to Pi ("usage", "entries").
 */
function context(model: unknown, entries: unknown[] = [], asked: string[] = []): ExtensionContext {
	return {
		model,
		getContextUsage: () => {
			asked.push("usage");
			return { tokens: 4321, contextWindow: 64_000 };
		},
		sessionManager: {
			getEntries: () => {
				asked.push("entries");
				return entries;
			},
		},
	} as unknown as ExtensionContext;
}

const user: MessageLike = { role: "user", content: "go", timestamp: 1 };
const reply: MessageLike = {
	role: "assistant",
	content: [{ type: "text", text: "done" }],
	usage: { input: 100, output: 20, cacheRead: 900, cacheWrite: 0, totalTokens: 1020 },
	stopReason: "stop",
	timestamp: 2,
};

function setup(now: { t: number }) {
	const settings = new ActiveSettings();
	settings.load(() => ({ compaction: { reserveTokens: 20_000, keepRecentTokens: 30_000 } }), new SavedSettings(), {});
	const telemetry = new CacheTelemetry();
	return { telemetry, facts: new RequestFacts(settings, telemetry, () => now.t) };
}

describe("RequestFacts", () => {
	test("the window is the model's, else Pi's usage report's", () => {
		const { facts } = setup({ t: 0 });
		assert.equal(facts.of([user], context(MODEL)).window, 100_000);
		assert.equal(facts.of([user], context(undefined)).window, 64_000);
	});

	test("the size comes from the latest response's usage; Pi is asked only before any response", () => {
		const { facts } = setup({ t: 0 });
		const asked: string[] = [];
		assert.equal(facts.of([user], context(MODEL, [], asked)).usage, 4321, "no response yet: Pi's figure");
		assert.deepEqual(asked, ["usage"]);
		const next: MessageLike = { role: "user", content: "x".repeat(400), timestamp: 3 };
		const usage = facts.of([user, reply, next], context(MODEL, [], asked)).usage;
		assert.ok(
			typeof usage === "number" && usage > 1020 && usage < 1200,
			`1020 from the reply and ~100 for the prompt: ${usage}`,
		);
		assert.deepEqual(asked, ["usage"], "Pi was not asked again");
	});

	test("the cache is warm within the lifetime, cold past it, and a recorded refresh warms it again", () => {
		const now = { t: 0 };
		const { telemetry, facts } = setup(now);
		telemetry.observeResponse(reply.usage as never, 1_000);
		const entries: unknown[] = [];
		const ctx = context(MODEL, entries);
		now.t = 1_000 + 60_000;
		const warm = facts.of([user, reply], ctx).cache;
		assert.equal(warm?.warm, true);
		assert.equal(warm?.rewriteInReads, (3.75 - 0.3) / 0.3, "the model's own write premium, in reads");
		now.t = 1_000 + 301_000;
		assert.equal(facts.of([user, reply], ctx).cache?.warm, false, "past five minutes: cold");
		entries.push({
			type: "usage",
			kind: "cache_warm",
			provider: "acme",
			timestamp: new Date(1_000 + 290_000).toISOString(),
		});
		assert.equal(facts.of([user, reply], ctx).cache?.warm, true, "Pi's idle refresh, read from the session");
		assert.equal(facts.of([user, reply], ctx).neverCacheRead, false);
	});

	test("while the latest response is within the lifetime, the session's entries are not read", () => {
		const now = { t: 0 };
		const { telemetry, facts } = setup(now);
		telemetry.observeResponse(reply.usage as never, 1_000);
		const asked: string[] = [];
		const ctx = context(MODEL, [{ type: "usage", kind: "cache_warm", provider: "acme" }], asked);
		now.t = 1_000 + 200_000;
		assert.equal(facts.of([user, reply], ctx).cache?.warm, true);
		assert.deepEqual(asked, [], "a warm cache needs no refresh from the session");
		now.t = 1_000 + 400_000;
		facts.of([user, reply], ctx);
		assert.deepEqual(asked, ["entries"], "past the lifetime the refreshes are read");
	});

	test("the lifetime and rewrite price kept between requests follow the model, the settings and the retention", () => {
		const now = { t: 0 };
		const settings = new ActiveSettings();
		const load = (section: Record<string, unknown>) =>
			settings.load(() => ({ "context-fold": section }), new SavedSettings(), {});
		load({});
		const telemetry = new CacheTelemetry();
		const facts = new RequestFacts(settings, telemetry, () => now.t);
		telemetry.observeResponse(reply.usage as never, 1_000);
		const anthropic = { ...MODEL, provider: "anthropic", api: "anthropic-messages" };
		const hour = { ...anthropic, promptCache: { short: 300, long: 3600 } };
		now.t = 1_000 + 600_000;
		const cold = (model: unknown) => facts.of([user, reply], context(model)).cache?.warm === false;
		assert.equal(cold(anthropic), true, "ten minutes idle: past the default five");
		assert.equal(cold(anthropic), true, "the same again from the kept figures");
		const price = (model: unknown) => facts.of([user, reply], context(model)).cache?.rewriteInReads;
		const short = price(hour);
		const saved = process.env.PI_CACHE_RETENTION;
		try {
			process.env.PI_CACHE_RETENTION = "long";
			assert.equal(cold(hour), false, "the long retention's hour: still warm");
			assert.ok((price(hour) ?? 0) > (short ?? 0), "the hour's write premium, not the five minutes'");
			// A models.json entry that lists no prices: the hour's premium at the default ratios, (2 - 0.1) / 0.1.
			const { cost: _, ...unpriced } = hour as { cost?: unknown };
			assert.ok(Math.abs((price(unpriced) ?? 0) - 19) < 1e-9, String(price(unpriced)));
		} finally {
			if (saved === undefined) delete process.env.PI_CACHE_RETENTION;
			else process.env.PI_CACHE_RETENTION = saved;
		}
		assert.equal(cold(hour), true, "back to the short retention: cold again");
		load({ cacheTtlSeconds: 900 });
		assert.equal(cold(anthropic), false, "a reload that sets 15 minutes: warm");
		load({ cacheTtlByProvider: "anthropic=60" });
		assert.equal(cold({ ...anthropic }), true, "another model object, under a reloaded table: cold");
	});

	test("the long retention a provider's stored credential sets, and Bedrock's Claude, price and time the cache", async () => {
		const now = { t: 0 };
		const settings = new ActiveSettings();
		settings.load(() => ({ "context-fold": {} }), new SavedSettings(), {});
		const telemetry = new CacheTelemetry();
		const facts = new RequestFacts(settings, telemetry, () => now.t);
		telemetry.observeResponse(reply.usage as never, 1_000);
		now.t = 1_000 + 600_000;
		const cache = (model: unknown) => facts.of([user, reply], context(model)).cache;
		const hour = {
			...MODEL,
			provider: "anthropic",
			api: "anthropic-messages",
			promptCache: { short: 300, long: 3600 },
		};
		const bedrock = {
			...MODEL,
			provider: "amazon-bedrock",
			api: "bedrock-converse-stream",
			id: "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
		};
		const credential = (retention: string | undefined) => ({
			getProviderAuth: async () => ({ auth: {}, env: retention ? { PI_CACHE_RETENTION: retention } : {} }),
		});
		await withRetention(undefined, async () => {
			const short = cache(hour)?.rewriteInReads ?? 0;
			assert.equal(cache(hour)?.warm, false, "ten minutes idle under the short retention");
			await learnRetention(credential("long") as never, "anthropic");
			try {
				assert.equal(cache(hour)?.warm, true, "the credential's long retention: an hour");
				assert.ok((cache(hour)?.rewriteInReads ?? 0) > short, "and its write premium");
				assert.equal(cache(bedrock)?.warm, false, "another provider: the process environment's");
			} finally {
				await learnRetention(credential(undefined) as never, "anthropic");
			}
			assert.equal(cache(hour)?.warm, false, "the credential no longer sets it");
			await learnRetention(
				{ getProviderAuth: async () => Promise.reject(new Error("no auth")) } as never,
				"anthropic",
			);
			assert.equal(cache(hour)?.warm, false, "a registry that cannot say: the process environment");
		});
		await withRetention("long", async () => {
			assert.equal(cache(bedrock)?.warm, true, "Bedrock's Claude under the long retention: Pi's ONE_HOUR mark");
			assert.ok(Math.abs((cache(bedrock)?.rewriteInReads ?? 0) - 19) < 1e-9, "priced at twice the input");
			assert.equal(cache({ ...bedrock, id: "amazon.nova-pro-v1:0" })?.warm, false, "not a Claude model");
		});
	});

	test("Pi's compaction figures come with the facts", () => {
		const { facts } = setup({ t: 0 });
		const f = facts.of([user], context(MODEL));
		assert.equal(f.keepRecent, 30_000);
		assert.equal(f.reserve, 20_000);
	});
});
