/**
 * The user's view, pure parts: the footer line, the context picture and its bar, the figures read
 * from session entries (hit rate since the latest fold event, cache per model, fold events with
 * their rewrite), an unfold's cost, and the status text.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bar, contextParts, keptOut, type PassRow, passRows, unfoldCost } from "../../src/core/latest-request.ts";
import { cacheByModel, type EventLine, eventLines, hitRateSince } from "../../src/core/session-history.ts";
import {
	compactionNotice,
	eventLabel,
	footerText,
	type StatusFacts,
	statusText,
	thresholdsText,
} from "../../src/core/status.ts";
import { short } from "../../src/core/tokens.ts";

const T = "contextfold.fold";

function row(id: string, tokens: number, raw: number, over: Partial<PassRow> = {}): PassRow {
	return {
		id,
		kind: "toolResult",
		tokens,
		raw,
		folded: tokens < raw,
		frozen: tokens < raw,
		eligible: true,
		held: false,
		saving: 0,
		...over,
	};
}

const assistant = (usage: Record<string, number>, provider = "p", model = "m") => ({
	type: "message",
	message: { role: "assistant", provider, model, usage },
});
const layer = (seq: number, ops: { id: string; code: string; text: string }[]) => ({
	type: "custom",
	customType: T,
	data: { v: 1, kind: "layer", seq, ops },
});

/** Status facts before anything is known: no request, no fold, no event, no response. */
const NOTHING_KNOWN: StatusFacts = {
	usage: undefined,
	window: undefined,
	point: undefined,
	parts: undefined,
	folds: 0,
	keptOut: 0,
	events: [],
	cache: [],
	largest: [],
	advisories: [],
};

describe("footer", () => {
	it("claims nothing before the first fold but an active advisory", () => {
		assert.equal(footerText({ folds: 0, keptOut: 0, hitRate: 0.9, advisory: false }), undefined);
		assert.equal(footerText({ folds: 0, keptOut: 0, hitRate: 0.9, advisory: true }), "context-fold ⚠");
	});

	it("reads folds, tokens kept out, cache since the latest event, and an advisory flag", () => {
		assert.equal(
			footerText({ folds: 12, keptOut: 53_400, hitRate: 0.94, advisory: false }),
			"fold 12 · −53k · cache read 94%",
		);
		assert.equal(
			footerText({ folds: 1, keptOut: 4_400, hitRate: undefined, advisory: true }),
			"fold 1 · −4.4k · cache read – · ⚠",
		);
	});

	it("counts the folds of a pass, this request's event included", () => {
		const view = [
			{ id: "a", kind: "toolResult" as const, tokens: 10, eligible: true, frozen: true, held: false, saving: 0 },
			{ id: "b", kind: "toolResult" as const, tokens: 500, eligible: true, frozen: false, held: false, saving: 450 },
			{ id: "c", kind: "toolResult" as const, tokens: 300, eligible: true, frozen: false, held: false, saving: 200 },
		];
		const rows = passRows(view, [400, 500, 300], new Set(["b"]));
		assert.deepEqual(keptOut(rows), { folds: 2, tokens: 390 + 450 });
		assert.equal(rows[1].tokens, 50);
		assert.equal(rows[2].folded, false);
	});
});

describe("context picture", () => {
	it("splits the request by part", () => {
		const rows = [
			row("s", 100, 100, { kind: "summary", eligible: false, folded: false }),
			row("u", 20, 20, { kind: "user", eligible: false }),
			row("f", 30, 900),
			row("r", 400, 400),
			row("t", 700, 700),
		];
		const parts = contextParts(rows, new Set(["t"]), 250);
		assert.deepEqual(parts, { system: 250, summary: 100, digests: 30, fixed: 20, raw: 400, tail: 700 });
	});

	it("draws a bar of the given width with every non-empty part present, larger parts longer", () => {
		const parts = { system: 1000, summary: 0, digests: 10, fixed: 0, raw: 5000, tail: 3000 };
		const drawn = bar(parts, 40);
		assert.equal(drawn.length, 40);
		assert.deepEqual([...new Set(drawn)], ["S", "#", "~", "T"]);
		const n = (c: string) => drawn.split(c).length - 1;
		assert.ok(n("~") > n("T") && n("T") > n("S") && n("#") >= 1, drawn);
	});
});

describe("figures from session entries", () => {
	it("hit rate counts only the responses after the latest fold event or unfold", () => {
		const branch = [
			assistant({ input: 1000, cacheRead: 0, cacheWrite: 0 }),
			layer(1, [{ id: "r:a", code: "aaaaaaaa", text: "x" }]),
			assistant({ input: 100, cacheRead: 0, cacheWrite: 900 }),
			assistant({ input: 0, cacheRead: 900, cacheWrite: 100 }),
		];
		assert.equal(hitRateSince(branch, T), 900 / 2000);
		assert.equal(
			hitRateSince([...branch, { type: "custom", customType: T, data: { kind: "unfold", ids: [] } }], T),
			undefined,
		);
		assert.equal(hitRateSince(branch, "other.type"), 900 / 3000);
	});

	it("groups cache figures per provider and model, with idle refreshes", () => {
		const lines = cacheByModel([
			assistant({ input: 10, cacheRead: 90, cacheWrite: 0 }, "anthropic", "a"),
			assistant({ input: 10, cacheRead: 0, cacheWrite: 90 }, "openai", "o"),
			{ type: "usage", kind: "cache_warm", provider: "anthropic", model: "a" },
			assistant({ input: 5, cacheRead: 95, cacheWrite: 0 }, "anthropic", "a"),
		]);
		assert.deepEqual(
			lines.map((l) => [l.provider, l.model, l.responses, l.hits, l.cacheRead, l.warms]),
			[
				["anthropic", "a", 2, 2, 185, 1],
				["openai", "o", 1, 0, 0, 0],
			],
		);
	});

	it("counts a refresh Pi recorded under the response's alias for the model it kept warm", () => {
		const lines = cacheByModel([
			assistant({ input: 10, cacheRead: 90, cacheWrite: 0 }, "anthropic", "claude-x"),
			{ type: "usage", kind: "cache_warm", provider: "anthropic", model: "claude-x-20250101" },
			assistant({ input: 10, cacheRead: 0, cacheWrite: 90 }, "openai", "o"),
			{ type: "usage", kind: "cache_warm", provider: "anthropic", model: "claude-x-20250101" },
			{ type: "usage", kind: "cache_warm", provider: "google", model: "g" },
		]);
		assert.deepEqual(
			lines.map((l) => [l.provider, l.model, l.responses, l.warms]),
			[
				["anthropic", "claude-x", 1, 2],
				["openai", "o", 1, 0],
				["google", "g", 0, 1],
			],
			"a provider with no response before its refresh keeps a line of its own",
		);
	});

	it("lists fold events and unfolds with the rewrite of the first response after each", () => {
		const records = new Map([
			["r:a", { id: "r:a", code: "aaaaaaaa", chars: 4000, seq: 1 }],
			["r:b", { id: "r:b", code: "bbbbbbbb", chars: 2000, seq: 1 }],
		]);
		const lines = eventLines(
			[
				layer(1, [
					{ id: "r:a", code: "aaaaaaaa", text: "d".repeat(40) },
					{ id: "r:b", code: "bbbbbbbb", text: "d".repeat(40) },
				]),
				assistant({ input: 300, cacheRead: 500, cacheWrite: 200 }),
				assistant({ input: 0, cacheRead: 1000, cacheWrite: 0 }),
				{ type: "custom", customType: T, data: { v: 1, kind: "unfold", ids: ["r:b"] } },
			],
			T,
			(id) => records.get(id),
		);
		assert.equal(lines.length, 2);
		assert.deepEqual(lines[0].codes, ["aaaaaaaa", "bbbbbbbb"]);
		assert.equal(lines[0].tokens, 1004 - 14 + (504 - 14));
		assert.equal(lines[0].rewrite, 500);
		assert.equal(lines[0].hitRate, 0.5);
		assert.equal(lines[1].kind, "unfold");
		assert.deepEqual(lines[1].codes, ["bbbbbbbb"]);
		assert.equal(lines[1].rewrite, undefined);
	});

	it("takes an event's rewrite from the first reply that reports a prompt, past a provider error", () => {
		const records = new Map([["r:a", { id: "r:a", code: "aaaaaaaa", chars: 4000, seq: 1 }]]);
		const error = { type: "message", message: { role: "assistant", provider: "p", model: "m", stopReason: "error" } };
		const zero = assistant({ input: 0, cacheRead: 0, cacheWrite: 0 });
		const branch = [
			assistant({ input: 100, cacheRead: 900, cacheWrite: 0 }),
			layer(1, [{ id: "r:a", code: "aaaaaaaa", text: "d".repeat(40) }]),
			error,
			zero,
			assistant({ input: 50, cacheRead: 300, cacheWrite: 650 }),
		];
		const [line] = eventLines(branch, T, (id) => records.get(id));
		assert.equal(line.rewrite, 700, "the retry's rewrite, not the error's nothing");
		assert.equal(line.hitRate, 0.3);
		assert.deepEqual(
			cacheByModel(branch).map((l) => [l.responses, l.hits]),
			[[2, 2]],
			"the error replies are no responses",
		);
	});

	it("lists compactions with the fold events, saying whose summary it was", () => {
		const lines = eventLines(
			[
				{
					type: "compaction",
					tokensBefore: 15_995,
					details: { contextFold: { v: 1, seq: 2, codes: ["aaaaaaaa"] } },
				},
				assistant({ input: 900, cacheRead: 0, cacheWrite: 3000 }),
				{ type: "compaction", tokensBefore: 40_000, details: {} },
			],
			T,
			() => undefined,
		);
		assert.deepEqual(
			lines.map((l) => [l.kind, l.ours, l.tokens, l.rewrite]),
			[
				["compaction", true, 15_995, 3900],
				["compaction", false, 40_000, undefined],
			],
		);
		const text = statusText({ ...NOTHING_KNOWN, events: lines });
		assert.match(
			text,
			/\n {2}compaction from ~16k, deterministic summary \(no model call\);\n {12}rewrite 3\.9k, cache read 0% of the next prompt\n/,
			"a line longer than the view breaks between the event and its rewrite",
		);
		assert.match(text, /\n {2}compaction from ~40k, Pi's own summary; no response has reported usage since\n/);
	});

	it("lists a long session's first and latest events and counts the rest, so the view stays bounded", () => {
		const fold = (seq: number): EventLine => ({
			kind: "fold",
			seq,
			codes: ["aaaaaaaa"],
			tokens: 1000 + seq,
			rewrite: 50,
			hitRate: undefined,
		});
		const many = Array.from({ length: 960 }, (_, i) => fold(i + 1));
		const text = statusText({ ...NOTHING_KNOWN, events: many });
		const listed = text.match(/\n {2}#\d+ fold/g) ?? [];
		assert.equal(listed.length, 12, "the first two and the latest ten");
		assert.match(
			text,
			/\n {2}#1 fold .*\n {2}#2 fold .*\n {2}… 948 more events \(the session file holds each one\)\n {2}#951 fold /,
		);
		assert.match(text, /\n {2}#960 fold /);
		assert.ok(text.length < 3000, `${text.length} characters`);
		const few = statusText({ ...NOTHING_KNOWN, events: many.slice(0, 13) });
		assert.equal((few.match(/\n {2}#\d+ fold/g) ?? []).length, 13, "a list that barely fits is whole");
		assert.doesNotMatch(few, /more events/);
	});

	it("names only the thresholds Pi's own compaction leaves reachable, and Pi's point where it hides one", () => {
		const p = {
			policy: "working-set",
			at: 14_000,
			knob: "foldFrom 14000",
			budget: 24_000,
			backstop: 25_000,
		} as const;
		assert.equal(thresholdsText(p), "budget 24k · backstop 25k", "Pi's compaction off: both");
		assert.equal(thresholdsText({ ...p, piCompactsAt: 15_616 }), "Pi compacts at 16k", "a 32k window: neither");
		assert.equal(thresholdsText({ ...p, piCompactsAt: 24_500 }), "budget 24k · Pi compacts at 25k");
		assert.equal(thresholdsText({ ...p, budget: 105_000, piCompactsAt: 123_616 }), "budget 105k · backstop 25k");
	});

	it("tells the user a compaction was deterministic, what stays raw, and that every block is still read", () => {
		assert.equal(
			compactionNotice(15_995, 3),
			"context-fold: compacted the context from ~16k tokens with its deterministic summary (no model call); the newest messages stay raw, and each of the 3 blocks it summarised is still read by /context-fold recall <code>",
		);
		assert.match(compactionNotice(2000, 1), /each of the 1 block it summarised/);
		assert.match(
			compactionNotice(2000, 1, "the context is past the fold budget"),
			/^context-fold: the context is past the fold budget, so it compacted the context from ~2k tokens with its deterministic summary/,
		);
	});
});

describe("labels, costs and the status text", () => {
	it("names a fold event's codes and saving, clipping long lists", () => {
		assert.equal(eventLabel("fold", ["a1", "b2"], 4400), "folded #a1, #b2 · ~4.4k tokens kept out");
		assert.equal(
			eventLabel("fold", ["1", "2", "3", "4", "5", "6"], 900),
			"folded #1, #2, #3, #4 +2 · ~900 tokens kept out",
		);
		assert.equal(eventLabel("unfold", ["c3"], 0), "unfolded #c3");
		assert.equal(short(999), "999");
		assert.equal(short(1_250_000), "1.3M");
	});

	it("prices an unfold: the block back on every request, and the rewrite from it to the end", () => {
		const rows = [row("a", 50, 50), row("f", 20, 1020), row("b", 300, 300), row("c", 200, 200)];
		assert.deepEqual(unfoldCost(rows, "f"), { back: 1000, rewrite: 1020 + 500 });
		assert.equal(unfoldCost(rows, "a"), undefined);
		assert.equal(unfoldCost(rows, "missing"), undefined);
	});

	it("writes every section, and says so when nothing is known yet", () => {
		const empty = statusText(NOTHING_KNOWN);
		assert.match(empty, /No request has gone out/);
		const full = statusText({
			usage: 12_000,
			window: 20_000,
			point: { policy: "ladder", at: 9_000, knob: "foldAt 45%", budget: 15_000 },
			parts: { system: 2000, summary: 0, digests: 500, fixed: 500, raw: 4000, tail: 5000 },
			folds: 3,
			keptOut: 8_800,
			events: [{ seq: 1, kind: "fold", codes: ["x", "y", "z"], tokens: 8_800, rewrite: 6_000, hitRate: 0.4 }],
			cache: [
				{ provider: "p", model: "m", responses: 4, hits: 3, input: 100, cacheRead: 700, cacheWrite: 200, warms: 0 },
			],
			lifetime: { ms: 3_600_000, source: "model" },
			largest: [
				{ code: "k3x9a0b2", what: "bash: npm test", tokens: 4_400 },
				{ code: "q7w8e9r0", what: `read: ${"src/deep/".repeat(20)}file.ts`, tokens: 900 },
			],
			advisories: ["cold input"],
		});
		for (const want of [
			"Context   12k of 20k window (60%)",
			"Next fold 9k (ladder foldAt 45%) · reached · budget 15k",
			"# folded digests 500",
			"Folds     3 in context, ~8.8k tokens kept out of this request",
			"#1 fold   3 blocks, ~8.8k kept out; rewrite 6k, cache read 40% of the next prompt",
			"p/m: 4 responses, 3 read the cache, cache read 70%",
			"lifetime 1h 00m (the model's, for the cache retention in use)",
			"Largest folded blocks (/context-fold recall <code> shows one)\n  #k3x9a0b2 bash: npm test (~4.4k tokens kept out)",
			"  #q7w8e9r0 read: src/deep/src/deep/",
			"⚠ cold input",
		])
			assert.ok(full.includes(want), `missing "${want}" in:\n${full}`);
		const long = full.split("\n").find((l) => l.startsWith("  #q7w8e9r0"));
		assert.equal(long?.length, 98, "a long path is clipped to the 98 columns the view keeps in 100");
		assert.ok(long?.endsWith("… (~900 tokens kept out)"), long);
	});

	it("measures how far the next fold is on Pi's count, as the policy does, not on the chars/4 figure", () => {
		const point = { policy: "ladder" as const, at: 6_600, knob: "foldAt 33%", budget: 15_000 };
		const next = (piUsage?: number) =>
			statusText({ ...NOTHING_KNOWN, usage: 6_300, window: 20_000, point, piUsage })
				.split("\n")
				.find((l) => l.startsWith("Next fold"));
		assert.equal(next(6_780), "Next fold 6.6k (ladder foldAt 33%) · reached · budget 15k");
		assert.equal(next(6_500), "Next fold 6.6k (ladder foldAt 33%) · 100 away · budget 15k");
		assert.equal(next(undefined), "Next fold 6.6k (ladder foldAt 33%) · 300 away · budget 15k", "no count from Pi");
	});

	it("wraps the legend and the next-fold line between entries, within the view's 98 columns", () => {
		const text = statusText({
			...NOTHING_KNOWN,
			usage: 170_000,
			window: 1_000_000,
			point: {
				policy: "working-set",
				at: 140_000,
				knob: "foldFrom 140000",
				event: [
					"an event of 140000+ tokens that repays its rewrite",
					"minEvent 140000 capped at a fifth of where Pi compacts",
				],
				budget: 750_000,
				backstop: 252_000,
			},
			parts: { system: 11_400, summary: 23_300, digests: 16_800, fixed: 46_400, raw: 57_700, tail: 75_000 },
			cache: [
				{
					provider: "anthropic",
					model: "claude-sonnet-4-5-20250929",
					responses: 150,
					hits: 149,
					input: 45_000,
					cacheRead: 2_740_000,
					cacheWrite: 480_000,
					warms: 12,
				},
			],
		});
		const lines = text.split("\n");
		for (const line of lines) assert.ok(line.length <= 98, `${line.length} columns: ${line}`);
		const legend = lines.filter((l) => /^[SC#=~T] [a-z]/.test(l));
		assert.ok(legend.length >= 2, `the legend wraps:\n${text}`);
		for (const line of legend) assert.match(line, /^([SC#=~T] [a-z ]+ [\d.]+k?)( · [SC#=~T] [a-z ]+ [\d.]+k?)*$/);
		const model = lines.findIndex((l) => l.startsWith("  anthropic/"));
		assert.match(
			lines[model + 1],
			/^ {4}cache read 84% \(read 2\.7M, write 480k, uncached 45k\), 12 idle refreshes$/,
		);
		const next = lines.findIndex((l) => l.startsWith("Next fold"));
		assert.equal(
			lines.slice(next, next + 3).join("\n"),
			[
				"Next fold 140k (working-set foldFrom 140000) · reached",
				"          an event of 140000+ tokens that repays its rewrite",
				"          minEvent 140000 capped at a fifth of where Pi compacts · budget 750k · backstop 252k",
			].join("\n"),
		);
	});

	it("names a largest block on a line of at most 100 columns, however wide the terminal", () => {
		const what = `bash: ${"npm test -- --coverage ".repeat(10)}`;
		const text = statusText({ ...NOTHING_KNOWN, width: 200, largest: [{ code: "abcd1234", what, tokens: 7_700 }] });
		const line = text.split("\n").find((l) => l.startsWith("  #abcd1234")) ?? "";
		assert.equal(line.length, 100, line);
		assert.match(line, /… \(~7\.7k tokens kept out\)$/);
	});

	it("keeps to a narrow terminal's width, the bar too, breaking between parts", () => {
		const facts: StatusFacts = {
			...NOTHING_KNOWN,
			usage: 12_000,
			window: 64_000,
			point: {
				policy: "working-set",
				at: 14_000,
				knob: "foldFrom 14000",
				event: ["an event of 14000+ tokens that repays its rewrite"],
				budget: 48_000,
				backstop: 25_200,
			},
			parts: { system: 2000, summary: 300, digests: 500, fixed: 500, raw: 4000, tail: 5000 },
			folds: 3,
			keptOut: 8_800,
			sinceFold: 0.5,
			events: [{ seq: 1, kind: "fold", codes: ["x", "y", "z"], tokens: 8_800, rewrite: 6_000, hitRate: 0.4 }],
			lifetime: { ms: 300_000, source: "default" },
			largest: [{ code: "abcd1234", what: "bash: npm test -- --coverage", tokens: 7_700 }],
			advisories: [
				"context-fold: cold input: the last response read nothing from the prompt cache while carrying ~30k tokens",
			],
			failures: ["context-fold: the fold pass failed (a test failure), so this request went out raw"],
			// The Context line's parts break under its indent too.
			piUsage: 14_500,
			preview: true,
		};
		/** The section headings and the bar: every other line is indented under them. */
		const heading = /^(context-fold status|Context|Next fold|Folds|Events|Cache|Largest|Advisories|Failures|\[)/;
		for (const width of [40, 50, 60]) {
			const lines = statusText({ ...facts, width }).split("\n");
			for (const line of lines) assert.ok(line.length <= width, `${line.length} > ${width}: ${line}`);
			// The bar's legend runs from under the bar to the next blank line, flush left.
			const bar = lines.findIndex((l) => l.startsWith("["));
			const legendEnd = lines.indexOf("", bar);
			for (const [i, line] of lines.entries())
				if (line !== "" && (i < bar || i > legendEnd) && !heading.test(line))
					assert.match(line, /^ /, `line ${i} at ${width} columns lost its indent:\n${lines.join("\n")}`);
			assert.ok(
				lines.some((l) => /^\[[SC#=~T]+\]$/.test(l)),
				"the bar on one line",
			);
			assert.ok(
				lines.some((l) => /(^| )backstop 25k( |$)/.test(l)),
				"no part broken",
			);
			assert.ok(
				lines.some((l) => /(^| )C summary 300( |$)/.test(l)),
				"no legend entry broken",
			);
		}
	});

	it("gives the footer's cache figure under the folds, and none before the first fold", () => {
		const folded = { ...NOTHING_KNOWN, usage: 12_000, window: 20_000, folds: 2, keptOut: 4_000 };
		const line = (text: string) => text.split("\n").find((l) => l.includes("since the latest fold event"));
		const since = statusText({ ...folded, sinceFold: 0.76 });
		assert.equal(line(since), "          cache read 76% since the latest fold event or unfold (the footer's figure)");
		assert.equal(
			since.split("\n").indexOf(line(since) ?? ""),
			since.split("\n").findIndex((l) => l.startsWith("Folds ")) + 1,
			"right under the folds line",
		);
		assert.equal(
			line(statusText(folded)),
			"          cache read since the latest fold event or unfold: – (no response has reported usage yet)",
		);
		assert.equal(line(statusText({ ...folded, folds: 0, keptOut: 0, sinceFold: 0.5 })), undefined);
	});

	it("names Pi's own count of the context when it differs from the chars/4 figure by a tenth or more", () => {
		const facts = { ...NOTHING_KNOWN, usage: 131_000, window: 200_000 };
		const line = (extra: object) => statusText({ ...facts, ...extra }).split("\n")[2];
		assert.equal(line({ piUsage: 177_000 }), "Context   131k of 200k window (66%) · Pi counts 177k");
		assert.equal(line({ piUsage: 125_000 }), "Context   131k of 200k window (66%)");
		assert.equal(line({}), "Context   131k of 200k window (66%)");
		assert.equal(
			line({ piUsage: 100_000, preview: true }),
			"Context   131k of 200k window (66%) · Pi counts 100k · as the next request would send it",
		);
	});
});
