/**
 * The compaction summary and handoff renderers: golden output on a fixed input, bounds, both-ends
 * truncation, and carrying a previous summary.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SeedSummary } from "../../src/core/index/merge.ts";
import {
	carriedOver,
	GOAL_CHARS,
	HANDOFF_HEADER,
	LEGACY_SUMMARY_HEADER,
	MIN_SUMMARY_CHARS,
	renderHandoff,
	renderSummary,
	SUMMARY_HEADER,
	SUMMARY_LIMITS,
	seedParentOf,
	summaryCapFor,
} from "../../src/core/summary.ts";

const fixed: SeedSummary = {
	sources: [{ kind: "compaction", seq: 1 }],
	files: [{ path: "src/app.ts", tools: ["edit", "read"], turn: 1 }],
	commands: [{ command: "npm test", turn: 2, code: "k3x9a0b2", error: true }],
	errors: [{ line: "Error: expected 3 to equal 4", turn: 2, code: "k3x9a0b2", tool: "bash" }],
	identifiers: ["a1b2c3d", "v1.2.3", "parseNested"],
	intents: [
		{ turn: 1, text: "fix the parser" },
		{ turn: 2, text: "do not touch vendor/" },
	],
	spans: [
		{ id: "r:t1", code: "k3x9a0b2", kind: "toolResult", tool: "bash", turn: 2, chars: 4000, tokens: 1004 },
		{ id: "u:1", code: "zz000001", kind: "user", turn: 1, chars: 14, tokens: 8 },
	],
};

describe("renderSummary", () => {
	it("renders a fixed input to exactly these bytes", () => {
		const out = renderSummary({ summary: fixed, scope: "This compaction removed 12 messages from live history." });
		assert.equal(
			out,
			[
				SUMMARY_HEADER,
				"This compaction removed 12 messages from live history. This summary was extracted by context-fold, not written by a model:",
				"every intent, path, command, error line and identifier below is copied verbatim from the session (a long one cut where … marks it, colour codes left out),",
				"and nothing else is claimed.",
				"It is an index, not the record: the ground truth is the session file. Read any block back with recall_folded —",
				'codes=["<code>"] (whole, or with grep / lines), or search="<text>" across every folded block; the identifiers below make good search keys.',
				"",
				"## User intents, in order",
				"- [turn 1] fix the parser",
				"- [turn 2] do not touch vendor/",
				"",
				"## Error lines (verbatim)",
				"- [turn 2] {#k3x9a0b2 FOLDED} bash: Error: expected 3 to equal 4",
				"",
				"## Files (paths exactly as the tools received them)",
				"- src/app.ts (edit, read; first turn 1)",
				"",
				"## Commands",
				"- [turn 2] {#k3x9a0b2 FOLDED} `npm test` (error)",
				"",
				"## Exact identifiers (search keys for recall_folded)",
				"a1b2c3d v1.2.3 parseNested",
				"",
				"## Recovery pointers",
				// The digest's own estimate of the block (4000 characters), not its cost with framing (1004).
				"- {#k3x9a0b2 FOLDED} bash, turn 2, ~1000 tokens",
			].join("\n"),
		);
	});

	it("is deterministic and stays within its bound however long the session", () => {
		const many: SeedSummary = {
			...fixed,
			intents: Array.from({ length: 5000 }, (_, i) => ({
				turn: i + 1,
				text: `intent number ${i} ${"x".repeat(80)}`,
			})),
			errors: Array.from({ length: 5000 }, (_, i) => ({ line: `Error: failure ${i}`, turn: i, code: "k3x9a0b2" })),
			identifiers: Array.from({ length: 3000 }, (_, i) => `symbolName${i}`),
		};
		const a = renderSummary({ summary: many, scope: "s." });
		assert.equal(a, renderSummary({ summary: many, scope: "s." }));
		assert.ok(a.length <= SUMMARY_LIMITS.total);
		assert.match(a, /intent number 0 /, "keeps the oldest");
		assert.match(a, /intent number 4999 /, "keeps the newest");
		assert.match(a, /- … \d+ more intents/);
		assert.match(a, /Error: failure 4999/);
	});

	it("counts what the index's caps left out, where the list itself fits", () => {
		const errors = Array.from({ length: 20 }, (_, i) => ({
			line: `Error: failure number ${i}`,
			turn: 1,
			code: "k3x9a0b2",
		}));
		const out = renderSummary({
			summary: { ...fixed, errors, dropped: { errors: 130, identifiers: 7 } },
			scope: "s.",
		});
		const section = out.split("## Error lines (verbatim)\n")[1].split("\n\n")[0].split("\n");
		assert.equal(section.length, 21, "every kept line, and one that counts the rest");
		assert.equal(
			section[10],
			"- … 130 more error lines (each still in its folded block) left out by the index's caps",
		);
		assert.match(out, /a1b2c3d v1\.2\.3 parseNested\n- … 7 more identifiers left out by the index's caps/);
		const files = out.split("## Files")[1].split("\n\n")[0];
		assert.doesNotMatch(files, /left out/, "no count where nothing was left out");
		assert.doesNotMatch(out.split("## Recovery pointers")[1] ?? "", /left out/);
	});

	it("names the blocks of the error lines it leaves out, since no one search word finds every kind", () => {
		// Risk lines of every kind (a FAIL, a Killed): a search for "error" finds none of them.
		const errors = Array.from({ length: 600 }, (_, i) => ({
			line: i % 2 ? `FAIL test/suite_${i}.test.ts > parses block ${i}` : `Killed worker ${i}`,
			turn: 1 + Math.floor(i / 50),
			code: `c${String(Math.floor(i / 5)).padStart(7, "0")}`,
		}));
		const out = renderSummary({ summary: { ...fixed, errors }, scope: "s." });
		const section = out.split("## Error lines (verbatim)\n")[1].split("\n\n")[0].split("\n");
		const gap = section.find((line) => line.startsWith("- … "));
		assert.ok(gap, "the middle is left out");
		const kept = new Set(section.filter((line) => line !== gap));
		const leftOut = errors.filter((e) => ![...kept].some((line) => line.endsWith(e.line)));
		const codes = [...new Set(leftOut.map((e) => e.code))];
		assert.ok(codes.length > 40, "the test leaves out more blocks than the line names");
		assert.doesNotMatch(gap, /search="error"/);
		assert.ok(gap.startsWith(`- … ${leftOut.length} more error lines: recall_folded codes=[`), gap);
		for (const code of codes.slice(0, 40)) assert.ok(gap.includes(`"${code}"`), `names ${code}: ${gap}`);
		assert.ok(gap.includes(`(and ${codes.length - 40} more blocks)`), gap);
		assert.ok(out.length <= 24_000, "within the summary's cap");
	});

	it("counts the blocks the index's span cap left out among its recovery pointers", () => {
		const out = renderSummary({ summary: { ...fixed, dropped: { spans: 451 } }, scope: "s." });
		const pointers = out.split("## Recovery pointers\n")[1]?.split("\n\n")[0] ?? "";
		assert.match(
			pointers,
			/^- … 451 more blocks \(recall_folded search=… finds them\) left out by the index's caps$/m,
		);
	});

	it("carries a previous summary that was not ours, and only the body of one that was", () => {
		const foreign = renderSummary({ summary: fixed, scope: "s.", previousSummary: "The user fixed the parser." });
		assert.match(
			foreign,
			/## Carried from the previous compaction\n\(Pi's own summary, written by a model and carried as it was: context-fold did not extract it\.\)\nThe user fixed the parser\./,
		);
		const ours = renderSummary({ summary: fixed, scope: "s." });
		const again = renderSummary({ summary: fixed, scope: "s.", previousSummary: ours });
		assert.equal(again.split(SUMMARY_HEADER).length, 2, "our header is not nested");
	});

	it("prints no terminal control sequence, and keeps a multi-line command to one list item", () => {
		const heredoc = "gh pr create --body \"$(cat <<'EOF'\n## Background\nwhy\n## Scope\nwhat\nEOF\n)\"";
		const text = renderSummary({
			summary: {
				...fixed,
				errors: [
					{ line: "\u001b[31m\u001b[1mError:\u001b[0m build failed\u0007 in src/x.ts", turn: 2, tool: "bash" },
				],
				commands: [{ command: heredoc, turn: 3 }],
			},
			scope: "s.",
		});
		assert.match(text, /\n- \[turn 2\] bash: Error: build failed in src\/x\.ts\n/);
		const controls = [...text].filter((c) => c !== "\n" && c !== "\t" && (c < " " || c === "\u007f"));
		assert.deepEqual(controls, [], "no control character");
		assert.match(
			text,
			/\n- \[turn 3\] `gh pr create --body "\$\(cat <<'EOF' ⏎ ## Background ⏎ why ⏎ ## Scope ⏎ what ⏎ EOF ⏎ \)"`\n/,
		);
		assert.ok(!text.includes("\n## Background"), "the heredoc's headings are no sections of the summary");
	});

	it("carries a summary context-fold 0.5.1 wrote as its own: its tags stay live codes", () => {
		const legacy = `${LEGACY_SUMMARY_HEADER}\n- bash, turn 1 {#lfnrzh FOLDED}`;
		const text = renderSummary({ summary: fixed, scope: "s.", previousSummary: legacy });
		assert.ok(text.includes("- bash, turn 1 {#lfnrzh FOLDED}"), text);
		assert.ok(!text.includes("[quoted tag #lfnrzh]"));
	});

	it("hands on what a summary of ours carried, once, with its tags as they were", () => {
		const foreign = "Pi's summary: decision D-17 keeps the legacy API; see {#k3x9a0b2 FOLDED}.";
		const first = renderSummary({ summary: fixed, scope: "s.", previousSummary: foreign });
		const handed = carriedOver(first);
		assert.equal(handed?.heading, "## Carried from the previous compaction");
		assert.equal(
			handed?.text.trim(),
			"(Pi's own summary, written by a model and carried as it was: context-fold did not extract it.)\nPi's summary: decision D-17 keeps the legacy API; see [quoted tag #k3x9a0b2].",
			"the note on who wrote it travels with it",
		);
		const second = renderSummary({ summary: fixed, scope: "s.", carried: handed });
		assert.deepEqual(carriedOver(second), handed, "the third gets the same text again");
		assert.equal(second.split("## Carried from the previous compaction").length, 2, "one carried section");
		assert.equal(carriedOver(renderSummary({ summary: fixed, scope: "s." })), undefined, "nothing carried");
	});

	it("hands on a handoff seed under its own heading at every later compaction", () => {
		const first = renderSummary({
			summary: fixed,
			scope: "s.",
			seed: { text: "# seed\nGoal: ship it", code: "k3x9a0b2" },
		});
		const handed = carriedOver(first);
		assert.equal(handed?.heading, "## Carried from the handoff seed this session started from");
		for (const later of [renderSummary({ summary: fixed, scope: "s.", carried: handed })]) {
			assert.ok(
				later.includes("\n## Carried from the handoff seed this session started from\n# seed\nGoal: ship it"),
				later,
			);
			assert.ok(!later.includes("## Carried from the previous compaction"), later);
			assert.deepEqual(carriedOver(later), handed, "and so at the third");
		}
	});
});

describe("renderHandoff", () => {
	it("flags codes as provenance pointers into the parent and keeps the body", () => {
		const summary = renderSummary({ summary: fixed, scope: "s." });
		const seed = renderHandoff({
			goal: "ship it",
			parentSession: "/s/p.jsonl",
			writtenAt: "2026-12-02T10:00:00.000Z",
			summary,
		});
		assert.ok(
			seed.startsWith(
				`${HANDOFF_HEADER}\n\nGoal: ship it\nParent session: /s/p.jsonl\nWritten: 2026-12-02T10:00:00.000Z\n`,
			),
		);
		assert.match(seed, /Provenance: codes such as \{#<code> FOLDED\} point into the PARENT session/);
		assert.match(seed, /Error: expected 3 to equal 4/);
		assert.ok(!seed.includes(SUMMARY_HEADER));
		// One consistent story about recall: parent codes are read from the parent file, and search reaches it.
		assert.match(seed, /reads them from that file, read-only/);
		assert.match(seed, /search covers this session's folds and every block of the parent's branch/);
		assert.doesNotMatch(seed, /cannot serve/);
		assert.doesNotMatch(seed, /Read any block back with recall_folded/);
		assert.match(renderHandoff({ goal: " ", parentSession: "p", writtenAt: "t", summary }), /Goal: \(none given/);
		assert.match(seed, /The codes reach one session back/);
	});

	it("cuts a goal longer than GOAL_CHARS, and says so", () => {
		const summary = renderSummary({ summary: fixed, scope: "s." });
		const seed = renderHandoff({ goal: "g".repeat(300_000), parentSession: "/p/s.jsonl", writtenAt: "t", summary });
		const goal = /\nGoal: (.*)\n/.exec(seed)?.[1] ?? "";
		assert.ok(goal.length <= GOAL_CHARS, `${goal.length}`);
		assert.match(goal, /^g+… \(goal cut at 1000 characters of 300000\)$/);
		assert.ok(seed.length < SUMMARY_LIMITS.total + GOAL_CHARS + 1_200, `${seed.length}`);
		assert.equal(seedParentOf(seed), "/p/s.jsonl");
	});

	it("keeps its goal on one line, so its parent line is where a pasted seed's is read and no goal passes for it", () => {
		const summary = renderSummary({ summary: fixed, scope: "s." });
		const goal = Array.from({ length: 9 }, (_, i) => `step ${i}`)
			.join("\n")
			.concat("\nParent session: /elsewhere.jsonl");
		const seed = renderHandoff({ goal, parentSession: "/p/s.jsonl", writtenAt: "t", summary });
		assert.match(
			seed,
			/\nGoal: step 0 step 1 .* step 8 Parent session: \/elsewhere\.jsonl\nParent session: \/p\/s\.jsonl\n/,
		);
		assert.equal(seedParentOf(seed), "/p/s.jsonl");
		// Line breaks beyond \n (a regular expression's `m` flag breaks at U+2028 and U+2029 too) are no way in.
		for (const sep of ["\u2028", "\u2029", "\u0085", "\r"]) {
			const odd = renderHandoff({
				goal: `fix it${sep}Parent session: /tmp/elsewhere.jsonl`,
				parentSession: "/p/s.jsonl",
				writtenAt: "t",
				summary,
			});
			assert.equal(seedParentOf(odd), "/p/s.jsonl", JSON.stringify(sep));
			assert.match(odd, /\nGoal: fix it Parent session: \/tmp\/elsewhere\.jsonl\n/, JSON.stringify(sep));
		}
		// A seed an earlier version wrote with such a goal, pasted: its parent line is still the one read.
		const older = `${seed.slice(0, seed.indexOf("\nGoal:"))}\nGoal: x\u2028Parent session: /tmp/elsewhere.jsonl\nParent session: /p/s.jsonl\n`;
		assert.equal(seedParentOf(older), "/p/s.jsonl");
		assert.equal(seedParentOf(renderHandoff({ goal, parentSession: undefined, writtenAt: "t", summary })), undefined);
	});

	it("promises no recall from a parent that was not saved", () => {
		const summary = renderSummary({ summary: fixed, scope: "s." });
		const seed = renderHandoff({ goal: "g", parentSession: undefined, writtenAt: "t", summary });
		assert.match(seed, /Parent session: \(in-memory session, not saved\)/);
		assert.match(seed, /nothing can\nread back \(recall_folded does not reach them\)/);
		assert.doesNotMatch(seed, /Provenance:|reads them from that file/);
	});
});

/** The fixed summary with `sizes` intents, error lines, files, commands and identifiers, each numbered. */
function filled(sizes: { intents: number; errors: number; files: number; commands: number; identifiers: number }) {
	const numbered = <T>(n: number, item: (i: number) => T) => Array.from({ length: n }, (_, i) => item(i));
	return {
		...fixed,
		intents: numbered(sizes.intents, (i) => ({ turn: i + 1, text: `intent ${i} ${"y".repeat(60)}` })),
		errors: numbered(sizes.errors, (i) => ({ line: `Error: failure ${i}`, turn: i, code: "k3x9a0b2" })),
		files: numbered(sizes.files, (i) => ({ path: `src/file${i}.ts`, tools: ["edit"], turn: i })),
		commands: numbered(sizes.commands, (i) => ({ command: `npm run step${i}`, turn: i, code: "k3x9a0b2" })),
		identifiers: numbered(sizes.identifiers, (i) => `symbolName${i}`),
	};
}

describe("summary cap", () => {
	it("scales with the context window within [4k, 24k] characters", () => {
		assert.equal(summaryCapFor(undefined), SUMMARY_LIMITS.total);
		assert.equal(summaryCapFor(16_000), 9_600);
		assert.equal(summaryCapFor(1_000), MIN_SUMMARY_CHARS);
		assert.equal(summaryCapFor(1_000_000), SUMMARY_LIMITS.total);
	});

	it("keeps a carried seed's pointer to the whole however full the sections, at every cap", () => {
		const full: SeedSummary = {
			...filled({ intents: 400, errors: 900, files: 400, commands: 400, identifiers: 800 }),
			spans: Array.from({ length: 400 }, (_, i) => ({
				id: `r:t${i}`,
				code: "k3x9a0b2",
				kind: "toolResult" as const,
				tool: "bash",
				turn: i,
				chars: 4000,
				tokens: 1004,
			})),
		};
		const seed = {
			text: `# context-fold handoff seed\n\nGoal: ${"finish the parser ".repeat(400)}`,
			code: "s33dc0de",
		};
		for (const maxChars of [undefined, 9_600, MIN_SUMMARY_CHARS]) {
			const out = renderSummary({ summary: full, scope: "s.", seed, maxChars });
			assert.ok(out.length <= (maxChars ?? SUMMARY_LIMITS.total), `${out.length} at ${maxChars}`);
			assert.match(out, /## Carried from the handoff seed this session started from\n# context-fold handoff seed/);
			assert.ok(
				out.endsWith('… the seed is cut here; recall_folded codes=["s33dc0de"] reads it whole'),
				out.slice(-200),
			);
		}
	});

	it("cuts no line in half and counts every pointer it leaves out, at small caps and beside a carried seed", () => {
		const spans = Array.from({ length: 94 }, (_, i) => ({
			id: `r:t${i}`,
			code: `c${String(i).padStart(7, "0")}`,
			kind: "toolResult" as const,
			tool: "bash",
			turn: i + 1,
			chars: 4000,
			tokens: 1004,
		}));
		const full: SeedSummary = {
			...filled({ intents: 60, errors: 90, files: 200, commands: 200, identifiers: 300 }),
			spans,
		};
		const seed = {
			text: `# context-fold handoff seed\n\nGoal: ${"finish the parser ".repeat(40)}`,
			code: "s33dc0de",
		};
		for (const withSeed of [false, true])
			for (const maxChars of [MIN_SUMMARY_CHARS, 6_000, 7_000, 9_600, SUMMARY_LIMITS.total]) {
				const out = renderSummary({ summary: full, scope: "s.", maxChars, ...(withSeed ? { seed } : {}) });
				const at = `${maxChars}${withSeed ? " with a seed" : ""}`;
				assert.ok(out.length <= maxChars, `${out.length} at ${at}`);
				const body = withSeed ? out.slice(0, out.indexOf("## Carried from the handoff seed")) : out;
				// Every tag the summary writes is whole: as many openings as whole tags.
				assert.equal(body.split("{#").length - 1, (body.match(/\{#[0-9a-z]{8} FOLDED\}/g) ?? []).length, at);
				const pointers = body.slice(body.indexOf("## Recovery pointers"));
				const listed = (pointers.match(/^- \{#c\d{7} FOLDED\}/gm) ?? []).length;
				const counted = Number(/^- … (\d+) more folded blocks/m.exec(pointers)?.[1] ?? 0);
				assert.equal(listed + counted, spans.length, `pointers listed ${listed} and counted ${counted} at ${at}`);
			}
	});

	it("a smaller cap still keeps both ends and stays under it", () => {
		const many: SeedSummary = {
			...fixed,
			intents: Array.from({ length: 400 }, (_, i) => ({ turn: i + 1, text: `intent ${i} ${"y".repeat(60)}` })),
		};
		const out = renderSummary({ summary: many, scope: "s.", maxChars: 6_000 });
		assert.ok(out.length <= 6_000);
		assert.match(out, /intent 0 /);
		assert.match(out, /intent 399 /);
		assert.match(out, /Error: expected 3 to equal 4/);
	});
});
