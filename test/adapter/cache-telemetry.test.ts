/**
 * Cache telemetry (src/adapters/pi/cache/telemetry.ts): per-response figures, the reset on a model
 * change, fold events' rewrite and net tokens ahead, the cold-anyway facts with Pi's idle refreshes,
 * and the rebuild from a branch's entries.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CacheTelemetry } from "../../src/adapters/pi/cache/telemetry.ts";

const TTL = 300_000;

describe("cache telemetry", () => {
	it("keeps each response's input, cache read and writes, hit ratio and the time of the last hit", () => {
		const t = new CacheTelemetry();
		t.select("anthropic", "m1");
		t.observeResponse({ input: 100, output: 5, cacheRead: 0, cacheWrite: 900, cacheWrite1h: 300 }, 1000);
		t.observeResponse({ input: 50, output: 5, cacheRead: 900, cacheWrite: 50 }, 2000);
		t.observeResponse({ input: 1000, output: 5, cacheRead: 0, cacheWrite: 0 }, 3000);
		const s = t.snapshot();
		assert.equal(s.responses, 3);
		assert.equal(s.hits, 1);
		assert.equal(s.lastHitAt, 2000);
		assert.deepEqual(s.last, { at: 3000, input: 1000, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, hitRatio: 0 });
		t.observeResponse({ input: 50, cacheRead: 900, cacheWrite: 50 }, 4000);
		assert.equal(t.snapshot().last?.hitRatio, 0.9);
	});

	it("never had a cache read: true after two responses without one, false after any hit", () => {
		const t = new CacheTelemetry();
		t.observeResponse({ input: 10, cacheRead: 0 }, 1);
		assert.equal(t.neverCacheRead, false, "one response is not enough to tell");
		t.observeResponse({ input: 10, cacheRead: 0 }, 2);
		assert.equal(t.neverCacheRead, true);
		t.observeResponse({ input: 10, cacheRead: 5 }, 3);
		assert.equal(t.neverCacheRead, false);
	});

	it("a reply that reports no prompt (a provider error) is no response: no count, no time, no verdict", () => {
		const t = new CacheTelemetry();
		t.observeResponse({ input: 900, cacheRead: 0, cacheWrite: 900 }, 1000);
		const error = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
		t.observeResponse(error, 500_000);
		assert.equal(t.neverCacheRead, false, "one good response and an error: still not enough to tell");
		assert.equal(t.snapshot().responses, 1);
		assert.equal(t.facts(400_000, TTL).warm, false, "idle since the good response, not the error");
		t.restore([
			{ type: "message", timestamp: 1000, message: { role: "assistant", usage: { input: 10, cacheRead: 0 } } },
			{ type: "message", timestamp: 2000, message: { role: "assistant", stopReason: "error", usage: error } },
		]);
		assert.equal(t.neverCacheRead, false, "rebuilt from a branch the same way");
	});

	it("starts over when the provider or model changes, not when the same one is named again", () => {
		const t = new CacheTelemetry();
		t.select("anthropic", "m1");
		t.observeResponse({ input: 10, cacheRead: 0 }, 1);
		t.observeResponse({ input: 10, cacheRead: 0 }, 2);
		t.select("anthropic", "m1");
		assert.equal(t.snapshot().responses, 2);
		t.select("anthropic", "m2");
		const s = t.snapshot();
		assert.equal(s.responses, 0);
		assert.equal(s.model, "m2");
		assert.equal(t.neverCacheRead, false);
		t.select("openai", "m2");
		assert.equal(t.snapshot().provider, "openai");
	});

	it("a fold event's rewrite is read from the next response; net tokens ahead grow by its mask each response", () => {
		const t = new CacheTelemetry();
		t.observeResponse({ input: 10, cacheRead: 50_000, cacheWrite: 500 }, 1);
		t.observeFold(1, 8000, 2);
		assert.deepEqual(t.snapshot().events, [
			{ seq: 1, at: 2, masked: 8000, rewrite: undefined, responses: 0, netAhead: 0 },
		]);
		t.observeResponse({ input: 10, cacheRead: 20_000, cacheWrite: 22_000 }, 3);
		assert.deepEqual(t.snapshot().events[0], {
			seq: 1,
			at: 2,
			masked: 8000,
			rewrite: 22_010,
			responses: 1,
			netAhead: -14_010,
		});
		t.observeResponse({ input: 10, cacheRead: 42_000, cacheWrite: 300 }, 4);
		t.observeResponse({ input: 10, cacheRead: 42_300, cacheWrite: 300 }, 5);
		assert.deepEqual(t.snapshot().events[0], {
			seq: 1,
			at: 2,
			masked: 8000,
			rewrite: 22_010,
			responses: 3,
			netAhead: 1990,
		});
	});

	it("the cache is cold once the latest response and the latest idle refresh are both older than the lifetime", () => {
		const t = new CacheTelemetry();
		assert.deepEqual(t.facts(10_000, TTL), { warm: undefined }, "nothing known before a response");
		t.observeResponse({ input: 10, cacheRead: 100 }, 1_000_000);
		assert.deepEqual(t.facts(1_000_000 + TTL, TTL), { warm: true, idleMs: TTL, ttlMs: TTL });
		assert.deepEqual(t.facts(1_000_001 + TTL, TTL), { warm: false, idleMs: TTL + 1, ttlMs: TTL });
		t.observeWarm(1_000_000 + 270_000);
		assert.equal(t.facts(1_000_001 + TTL, TTL).warm, true, "Pi's refresh kept it warm");
		assert.equal(t.facts(1_000_000 + 270_001 + TTL, TTL).warm, false, "warming stopped: cold a lifetime later");
		assert.equal(t.snapshot().warms, 1);
	});

	it("rebuilds from a branch: responses at their entry time, cache_warm entries, model changes", () => {
		const at = (ms: number) => new Date(ms).toISOString();
		const reply = (ms: number, model: string, cacheRead: number) => ({
			type: "message",
			timestamp: at(ms),
			message: {
				role: "assistant",
				provider: "p",
				model,
				usage: { input: 10, output: 1, cacheRead, cacheWrite: 5 },
			},
		});
		const t = new CacheTelemetry();
		t.restore([
			reply(1000, "old", 100),
			{ type: "model_change", timestamp: at(1500), provider: "p", modelId: "m" },
			{ type: "message", timestamp: at(1600), message: { role: "user", content: "hi" } },
			reply(2000, "m", 0),
			reply(3000, "m", 0),
			{ type: "usage", kind: "cache_warm", timestamp: at(4000), provider: "p", model: "m-2026", usage: {} },
			{ type: "usage", kind: "cache_warm", timestamp: at(4500), provider: "other", model: "x", usage: {} },
			{ type: "usage", kind: "other", timestamp: at(5000), provider: "p", model: "m", usage: {} },
		]);
		const s = t.snapshot();
		assert.equal(s.model, "m");
		assert.equal(s.responses, 2, "the response of the old model was dropped by the model change");
		assert.equal(t.neverCacheRead, true);
		assert.equal(s.last?.at, 3000);
		assert.equal(s.warms, 1, "only the current provider's refresh counts");
		assert.equal(s.lastWarmAt, 4000);
		t.restore([{ type: "message", message: { role: "assistant", usage: { input: 1 } } }]);
		assert.deepEqual(t.facts(1e12, TTL), { warm: undefined }, "a response without a time says nothing of idleness");
	});

	it("catches up with the cache_warm refreshes Pi appended since it last read the session's entries", () => {
		const at = (ms: number) => new Date(ms).toISOString();
		const warm = (ms: number) => ({
			type: "usage",
			kind: "cache_warm",
			timestamp: at(ms),
			provider: "p",
			model: "m",
		});
		const entries: unknown[] = [warm(1000)];
		let reads = 0;
		const source = {
			getEntries: () => {
				reads++;
				return entries;
			},
			getEntryCount: () => entries.length,
		};
		const t = new CacheTelemetry();
		t.select("p", "m");
		t.skipEntries(source);
		t.catchUp(source);
		assert.equal(t.snapshot().warms, 0, "entries counted as read after a restore are not read again");
		assert.equal(reads, 0, "an unchanged count reads no entries");
		entries.push({ type: "message", timestamp: at(1500), message: { role: "user" } }, warm(2000));
		t.catchUp(source);
		t.catchUp(source);
		assert.equal(t.snapshot().warms, 1, "each new refresh once");
		assert.equal(t.snapshot().lastWarmAt, 2000);
		assert.equal(reads, 1);
		const noCount = { getEntries: () => [...entries, warm(3000)] };
		t.catchUp(noCount);
		assert.equal(t.snapshot().warms, 2, "without a count, the entries past those read");
	});
});
