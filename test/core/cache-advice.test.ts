/**
 * The cache advisories' pure decisions (src/core/cache-advice.ts): cold input, the wire watchdog's
 * line, the handoff pay-back arithmetic, the reset flag, the idle prediction, the per-provider
 * lifetime table and once-per-streak bookkeeping, each checked on exact figures at its boundary.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	ADVICE,
	COLD_INPUT_MIN_TOKENS,
	cacheLifetime,
	DEFAULT_RATIOS,
	duration,
	FORCED_COMPACTIONS,
	foldMissedWire,
	HANDOFF_SEED_MAX_TOKENS,
	handoffPayback,
	isColdInput,
	kTokens,
	PROVIDER_TTL_PATTERN,
	parseProviderTtls,
	predictIdle,
	ratiosOf,
	rawOnWire,
	repeatedProviders,
	resetReason,
	Streaks,
	unfoldable,
	unknownProviders,
	WIRE_PROBE_BLOCKS,
	WIRE_PROBE_MIN_CHARS,
	wireProbes,
} from "../../src/core/cache-advice.ts";

describe("cold input", () => {
	it("flags a response with no cache read at the 20k carried line, not one token below", () => {
		assert.equal(isColdInput({ input: COLD_INPUT_MIN_TOKENS, cacheRead: 0, cacheWrite: 0 }, false), true);
		assert.equal(isColdInput({ input: 5_000, cacheRead: 0, cacheWrite: 15_000 }, false), true);
		assert.equal(isColdInput({ input: COLD_INPUT_MIN_TOKENS - 1, cacheRead: 0, cacheWrite: 0 }, false), false);
	});
	it("never flags a response that read anything, or one right after a fold event or an unfold", () => {
		assert.equal(isColdInput({ input: 30_000, cacheRead: 1, cacheWrite: 0 }, false), false);
		assert.equal(isColdInput({ input: 30_000, cacheRead: 0, cacheWrite: 0 }, true), false);
	});
});

describe("wire watchdog", () => {
	it("trips when the read reaches the pre-fold prompt less half the fold's saving", () => {
		assert.equal(foldMissedWire(50_000, 10_000, 45_000), true, "exactly at the line");
		assert.equal(foldMissedWire(50_000, 10_000, 49_999), true, "the whole pre-fold prompt but a token");
		assert.equal(foldMissedWire(50_000, 10_000, 44_999), false);
		assert.equal(foldMissedWire(50_000, 10_000, 30_000), false, "a fold that landed breaks the prefix earlier");
	});
	it("never trips without a pre-fold prompt or a saving", () => {
		assert.equal(foldMissedWire(0, 10_000, 60_000), false);
		assert.equal(foldMissedWire(50_000, 0, 60_000), false);
		assert.equal(foldMissedWire(50_000, 10_000, 0), false, "nothing read is a cold cache, not a missed fold");
		assert.equal(
			foldMissedWire(15, 4_000, 10),
			false,
			"a saving past the pre-fold prompt: figures of another prompt",
		);
	});
});

describe("wire watchdog on the request's payload", () => {
	const raw = 'ok\nconst message = "a quoted path";\n  status: all twelve checks ran  \nshort';
	it("probes a block by its longest line that JSON writes as it is and no other block holds", () => {
		assert.deepEqual(wireProbes([raw], []), ["status: all twelve checks ran"], "the quoted line is skipped");
		assert.deepEqual(wireProbes([`${"x".repeat(WIRE_PROBE_MIN_CHARS - 1)}\nabc`], []), [], "no line long enough");
		// A later re-read of the same file holds the same lines: a line of the folded block's own is taken.
		const reread = "status: all twelve checks ran\nmore of the file";
		assert.deepEqual(wireProbes([`${raw}\nthe folded read's own line`], [reread]), ["the folded read's own line"]);
		assert.deepEqual(wireProbes([raw], [reread]), [], "every line is the re-read's too");
	});
	it("probes at most WIRE_PROBE_BLOCKS blocks of an event, spread from its first to its last", () => {
		const block = (k: number) => `header\nthe only line of block number ${k}\nfooter`;
		const probes = wireProbes(
			Array.from({ length: 100 }, (_, k) => block(k)),
			["header\nfooter"],
		);
		assert.equal(probes.length, WIRE_PROBE_BLOCKS, "each line tried scans the whole request: bounded per event");
		assert.equal(probes[0], "the only line of block number 0");
		assert.equal(probes.at(-1), "the only line of block number 99");
		assert.equal(new Set(probes).size, probes.length);
		assert.deepEqual(
			wireProbes([block(1), block(2)], []),
			["the only line of block number 1", "the only line of block number 2"],
			"a small event: every block",
		);
	});
	it("finds a call's argument text whether the provider sends the arguments as an object or a JSON string", () => {
		const args = { path: "notes.md", content: 'title: "x"\nevery line of the new notes file\nend' };
		const [probe] = wireProbes([JSON.stringify(args)], []);
		assert.equal(probe, "every line of the new notes file");
		const anthropic = JSON.stringify({ content: [{ type: "tool_use", input: args }] });
		const openai = JSON.stringify({ tool_calls: [{ function: { arguments: JSON.stringify(args) } }] });
		assert.equal(rawOnWire(anthropic, ["{#abc12345 FOLDED}"], [probe]), true);
		assert.equal(rawOnWire(openai, ["{#abc12345 FOLDED}"], [probe]), true);
	});
	it("finds the blocks raw only when no tag and some raw text went out", () => {
		const [probe] = wireProbes([raw], []);
		const tag = "{#abc12345 FOLDED}";
		assert.equal(rawOnWire(JSON.stringify({ content: raw }), [tag], [probe]), true, "restored raw");
		assert.equal(rawOnWire(JSON.stringify({ content: `${tag} digest` }), [tag], [probe]), false, "folded");
		assert.equal(rawOnWire(JSON.stringify({ content: "newest only" }), [tag], [probe]), false, "left out");
		assert.equal(rawOnWire(JSON.stringify({ content: `${raw} ${tag}` }), [tag], [probe]), false);
	});
});

describe("handoff pay-back", () => {
	it("weighs turns × carried × read against seeded × write + (turns - 1) × seeded × read", () => {
		const base = 3_700;
		const seeded = base + HANDOFF_SEED_MAX_TOKENS;
		const p = handoffPayback(100_000, base, DEFAULT_RATIOS, 2);
		assert.equal(p.seeded, seeded);
		assert.ok(Math.abs(p.stay - 2 * 100_000 * 0.1) < 1e-6);
		assert.ok(Math.abs(p.move - (seeded * 1.25 + seeded * 0.1)) < 1e-6);
		assert.equal(p.pays, p.move <= p.stay);
	});
	it("pays exactly from carried = seeded × (write + (turns - 1) × read) / (turns × read)", () => {
		const base = 3_700;
		const seeded = base + HANDOFF_SEED_MAX_TOKENS;
		const ratios = { read: 0.25, write: 1 };
		const line = (seeded * (1 + 0.25)) / (2 * 0.25);
		assert.equal(Number.isInteger(line), true, "the test's figures keep the line whole");
		assert.equal(handoffPayback(line, base, ratios, 2).pays, true);
		assert.equal(handoffPayback(line - 1, base, ratios, 2).pays, false);
	});
	it("reads ratios from the model's prices, and defaults when they do not tell", () => {
		assert.deepEqual(ratiosOf({ input: 4, cacheRead: 0.4, cacheWrite: 5 }), { read: 0.1, write: 1.25 });
		assert.deepEqual(ratiosOf({ input: 2, cacheRead: 0.5, cacheWrite: 0 }), { read: 0.25, write: 1 });
		assert.deepEqual(ratiosOf({ input: 0, cacheRead: 0, cacheWrite: 0 }), DEFAULT_RATIOS);
		assert.deepEqual(
			ratiosOf({ input: 4, cacheRead: 0.4, cacheWrite: 5 }, true),
			{ read: 0.1, write: 2 },
			"one-hour write",
		);
		assert.deepEqual(ratiosOf(undefined), DEFAULT_RATIOS);
		// A model with no prices still writes the one-hour retention at twice the input price.
		assert.deepEqual(ratiosOf(undefined, true), { read: 0.1, write: 2 }, "one-hour write, no prices");
		assert.deepEqual(ratiosOf({ input: 0, cacheRead: 0 }, true), { read: 0.1, write: 2 });
	});
});

describe("reset flag", () => {
	const none = { payback: undefined, forcedCompactions: 0, unfoldable: undefined, window: undefined };
	it("is raised by the second forced compaction, not the first", () => {
		assert.equal(resetReason({ ...none, forcedCompactions: FORCED_COMPACTIONS - 1 }), undefined);
		assert.deepEqual(resetReason({ ...none, forcedCompactions: FORCED_COMPACTIONS }), {
			kind: "compactions",
			count: 2,
		});
	});
	it("says what its count of compactions covers: this process's time on the branch, not the session file's", () => {
		assert.match(
			ADVICE.reset({ kind: "compactions", count: 2 }),
			/^context-fold: reset flag: 2 forced compactions since this session was opened or moved in its tree; /,
		);
	});
	it("is raised when what cannot fold is more than half the window", () => {
		assert.equal(resetReason({ ...none, unfoldable: 50_000, window: 100_000 }), undefined);
		assert.deepEqual(resetReason({ ...none, unfoldable: 50_001, window: 100_000 }), {
			kind: "unfoldable",
			tokens: 50_001,
			window: 100_000,
		});
	});
	it("is raised by a handoff that pays, first of the reasons", () => {
		const payback = handoffPayback(200_000, 2_000, DEFAULT_RATIOS);
		assert.equal(payback.pays, true);
		assert.equal(
			resetReason({ payback, forcedCompactions: 5, unfoldable: 90_000, window: 100_000 })?.kind,
			"handoff",
		);
	});
	it("counts as unfoldable what eligible unfrozen blocks cannot save", () => {
		const blocks = [
			{ eligible: true, frozen: false, saving: 4_000 },
			{ eligible: true, frozen: true, saving: 9_000 },
			{ eligible: false, frozen: false, saving: 7_000 },
		];
		assert.equal(unfoldable(30_000, blocks), 26_000);
		assert.equal(unfoldable(1_000, blocks), 0);
	});
});

describe("recall churn", () => {
	it("points a folded block to unfold or the tail, and an unfolded one to nothing the tail would change", () => {
		assert.match(
			ADVICE.churn("k3x9a0b2", 3, false, "hotTail / coldTail"),
			/widen the protected tail \(hotTail \/ coldTail\)$/,
		);
		const unfolded = ADVICE.churn("k3x9a0b2", 3, true, "hotTail / coldTail");
		assert.match(unfolded, /^context-fold: recall churn: #k3x9a0b2 was asked for 3 times though it is unfolded/);
		assert.doesNotMatch(unfolded, /tail/, "an unfolded block never folds again: the tail has nothing to do with it");
	});
});

describe("idle prediction", () => {
	const at = 1_700_000_000_000;
	const ttlMs = 300_000;
	it("is risky once the latest response and refresh are older than the lifetime, with 20k carried", () => {
		const p = predictIdle({ now: at + ttlMs + 1, completedAt: at, warmedAt: undefined, ttlMs, carried: 30_000 });
		assert.deepEqual(p, { risky: true, idleMs: ttlMs + 1, leftMs: -1, since: at });
		const edge = predictIdle({ now: at + ttlMs, completedAt: at, warmedAt: undefined, ttlMs, carried: 30_000 });
		assert.equal(edge?.risky, false, "exactly at the lifetime the cache still holds");
	});
	it("waits for the least idle time where it is longer than the lifetime", () => {
		const quietMs = 20 * 60_000;
		const early = predictIdle({
			now: at + 10 * 60_000,
			completedAt: at,
			warmedAt: undefined,
			ttlMs,
			carried: 30_000,
			quietMs,
		});
		assert.deepEqual(early, { risky: false, idleMs: 10 * 60_000, leftMs: 10 * 60_000, since: at });
		const late = predictIdle({
			now: at + quietMs + 1,
			completedAt: at,
			warmedAt: undefined,
			ttlMs,
			carried: 30_000,
			quietMs,
		});
		assert.equal(late?.risky, true);
		const shorter = predictIdle({
			now: at + ttlMs + 1,
			completedAt: at,
			warmedAt: undefined,
			ttlMs,
			carried: 30_000,
			quietMs: 1,
		});
		assert.equal(shorter?.risky, true, "a least idle time under the lifetime changes nothing");
	});
	it("counts from Pi's latest refresh when it is newer than the response", () => {
		const p = predictIdle({ now: at + ttlMs + 1, completedAt: at, warmedAt: at + 200_000, ttlMs, carried: 30_000 });
		assert.equal(p?.risky, false);
		assert.equal(p?.since, at + 200_000);
		assert.equal(p?.leftMs, 199_999);
	});
	it("is never risky with little carried, and unknown without a completed response", () => {
		const p = predictIdle({ now: at + 10 * ttlMs, completedAt: at, warmedAt: undefined, ttlMs, carried: 19_999 });
		assert.equal(p?.risky, false);
		assert.equal(predictIdle({ now: at, completedAt: undefined, warmedAt: at, ttlMs, carried: 50_000 }), undefined);
	});
});

describe("per-provider lifetimes", () => {
	it("parses provider=seconds pairs and falls back to the global lifetime", () => {
		assert.deepEqual(
			[...parseProviderTtls(" anthropic=300, openai = 3600 ")],
			[
				["anthropic", 300],
				["openai", 3600],
			],
		);
		const table = "anthropic=300,openai=3600";
		const set = { table, seconds: 120, secondsSet: true };
		assert.deepEqual(cacheLifetime({ ...set, provider: "openai" }), { ms: 3_600_000, source: "cacheTtlByProvider" });
		assert.deepEqual(cacheLifetime({ ...set, provider: "google" }), { ms: 120_000, source: "cacheTtlSeconds" });
		assert.equal(cacheLifetime({ ...set, provider: undefined, table: "anthropic=300" }).ms, 120_000);
	});
	it("matches a provider's name in any case, and names the entries that match no provider", () => {
		const set = { seconds: 300, secondsSet: false };
		assert.deepEqual(cacheLifetime({ ...set, table: "Anthropic=3600", provider: "anthropic" }), {
			ms: 3_600_000,
			source: "cacheTtlByProvider",
		});
		assert.equal(cacheLifetime({ ...set, table: "anthropic=3600", provider: "MyProxy" }).source, "default");
		assert.equal(cacheLifetime({ ...set, table: "myproxy=60", provider: "MyProxy" }).ms, 60_000);
		const known = ["anthropic", "openai", "MyProxy"];
		assert.deepEqual(unknownProviders("Anthropic=3600, antropic=3600, myproxy=60, gemini=1", known), [
			"antropic",
			"gemini",
		]);
		assert.deepEqual(unknownProviders("", known), []);
	});
	it("takes a provider's first entry, in any case, and names the later ones as never applying", () => {
		const set = { provider: "fake", seconds: 120, secondsSet: false };
		for (const table of ["fake=60, Fake=7200", "fake=60, fake=7200", "FAKE=60,fake=7200"]) {
			assert.equal(cacheLifetime({ ...set, table }).ms, 60_000, table);
			assert.equal(repeatedProviders(table).length, 1, table);
		}
		assert.deepEqual(repeatedProviders("fake=60, Fake=7200, other=5, FAKE=9"), ["Fake=7200", "FAKE=9"]);
		assert.deepEqual(repeatedProviders("anthropic=300, openai=3600"), []);
		assert.deepEqual(repeatedProviders(""), []);
	});
	it("puts the model's own lifetime after a saved one and before the default", () => {
		const hour = 3_600_000;
		const base = { provider: "anthropic", table: "", seconds: 300, modelMs: hour };
		const at = (inputs: Partial<typeof base> & { secondsSet: boolean }) => cacheLifetime({ ...base, ...inputs });
		assert.deepEqual(
			at({ secondsSet: false }),
			{ ms: hour, source: "model" },
			"the default gives way to the model's",
		);
		assert.deepEqual(at({ secondsSet: true }), { ms: 300_000, source: "cacheTtlSeconds" }, "a saved one wins");
		assert.deepEqual(at({ secondsSet: false, table: "anthropic=600" }), {
			ms: 600_000,
			source: "cacheTtlByProvider",
		});
		assert.deepEqual(at({ secondsSet: false, modelMs: undefined }), { ms: 300_000, source: "default" });
		assert.deepEqual(at({ secondsSet: false, modelMs: 0 }), { ms: 300_000, source: "default" }, "nor a zero one");
	});
	it("accepts the table's grammar and nothing else", () => {
		const re = new RegExp(PROVIDER_TTL_PATTERN);
		for (const ok of ["", "anthropic=300", "a=1, b.c-d_e = 60"]) assert.equal(re.test(ok), true, ok);
		for (const bad of ["anthropic", "anthropic=0", "anthropic=5m", "a=1,", "=300", "fake=99999999999999999999999"])
			assert.equal(re.test(bad), false, bad);
		assert.equal(re.test("a=999999999999999"), true, "15 digits, below 2^53");
		assert.equal(re.test("a=1000000000000000"), false, "16 digits");
		assert.deepEqual([...parseProviderTtls("a=1000000000000000, b=60")], [["b", 60]]);
	});
});

describe("once per streak", () => {
	it("raises when a condition starts to hold, and again only after it stopped", () => {
		const s = new Streaks();
		assert.deepEqual(
			[true, true, false, true, true].map((holds) => s.update("k", holds)),
			[true, false, false, true, false],
		);
		assert.equal(s.has("k"), true);
		assert.equal(s.update("other", true), true, "keys are independent");
	});
});

describe("texts", () => {
	it("rounds token counts and durations for reading", () => {
		assert.equal(kTokens(999), "999");
		assert.equal(kTokens(12_345), "12.3k");
		assert.equal(kTokens(30_000), "30k");
		assert.equal(kTokens(1_071_600), "1.1M", "a million and more as the status writes it");
		assert.equal(kTokens(999_960), "1M", "a count that rounds to a million is no 1000k");
		assert.equal(kTokens(999_940), "999.9k");
		assert.equal(duration(45_000), "45s");
		assert.equal(duration(125_000), "2m 05s");
		assert.equal(duration(3_725_000), "1h 02m");
	});
	it("gives the debug line's read, write and hit rate", () => {
		assert.equal(
			ADVICE.debugCache({ input: 10, cacheRead: 900, cacheWrite: 90 }),
			"context-fold: cache read 900 · write 90 · input 10: cache read 90% of the prompt",
		);
		// A prompt not all read from the cache never reads 100%, nor one read from it at all 0%.
		assert.match(
			ADVICE.debugCache({ input: 3, cacheRead: 29_990, cacheWrite: 0 }),
			/: cache read 99% of the prompt$/,
		);
		assert.match(
			ADVICE.debugCache({ input: 29_990, cacheRead: 100, cacheWrite: 0 }),
			/: cache read 1% of the prompt$/,
		);
		assert.match(ADVICE.debugCache({ input: 0, cacheRead: 5000, cacheWrite: 0 }), /: cache read 100% of the prompt$/);
	});
});
