/**
 * Session "debug-branchy": debugging chartkit after a merge broke `npm test`
 * (`RangeError: Invalid array length`). The agent diagnoses the bug, tries a fix in the wrong place
 * (ticks.ts), starts proposing a rewrite and is stopped (an aborted turn), and the user goes back in
 * the session tree (`/tree` with a summary of the abandoned branch), reverts the file with a `!`
 * command and asks for the real fix. The session goes on with a regression test, a type error the
 * typecheck finds, looking at rendered PNGs (image tool results), a label feature, a performance
 * fix, a changelog entry whose first long draft the user aborts, and a commit.
 */
import type { Reply } from "../../test/e2e/harness/model-server.ts";
import { calls, expect, say, type Task, type TurnView } from "./agent.ts";
import {
	CANVAS_FAST,
	chartFiles,
	ELLIPSIS_EDIT,
	EXTENT_FIX,
	GAPS,
	GRID_142_BUILD,
	GRID_FIXED_BUILD,
	LABELS_SOURCE,
	MERGE_142,
	TEST_EXTENT,
	TEST_GAPS,
	TEST_LABELS,
} from "./chart-project.ts";
import {
	bash,
	type EntryLike,
	edit,
	find,
	grep,
	ls,
	type PlayContext,
	read,
	type SessionSpec,
	write,
} from "./session.ts";

const FAILING = /ℹ fail [1-9]/;
const PASSING = /ℹ fail 0/;
const DIAGNOSIS = "**Diagnosis.**";

const TOUR: Task = {
	prompt:
		"Give me a quick tour of chartkit's layout code before we dig into anything. I haven't touched this repo in months.",
	steps: [
		calls([ls("."), find("*.ts", "src"), read("README.md")], "Let me look at the layout of the repository first."),
		calls(
			[read("src/layout/index.ts"), read("src/render.ts")],
			"The layout entry point and the renderer are the two files that tie everything together.",
		),
		say(`chartkit in five minutes:

- **\`src/render.ts\`**: \`renderChart(spec)\`, the public API. It calls \`layoutChart\`, draws into a \`Canvas\` (grid lines and tick labels, bars, category labels, the axis title) and encodes a PNG.
- **\`src/layout/\`**: pure arithmetic. \`extent.ts\` computes the value domain (always including zero), \`ticks.ts\` picks "nice" tick values (1/2/5 × 10ⁿ), \`grid.ts\` turns them into a value→pixel-row mapping, \`index.ts\` places one bar per category and series and centres the category labels.
- **\`src/raster/\`**: \`canvas.ts\` (RGB buffer, rectangles, lines, text), \`font.ts\` (a 3x5 pixel font, capitals only), \`png.ts\` (encoder on top of node:zlib).
- **\`src/theme.ts\`**: colours; \`palette()\` is deprecated but \`render.ts\` still calls it, which is why you see a \`DeprecationWarning\` on every render.
- \`src/cli.ts\` renders a JSON spec from \`examples/\` to a file; \`bench/render.ts\` times a big chart.`),
	],
};

const DIAGNOSE: Task = {
	prompt:
		"CI is red on main since Friday's merge of #142: npm test fails with RangeError: Invalid array length. Find out why; don't fix anything yet. And the public API of renderChart() must not change, three internal dashboards import it.",
	steps: [
		calls([bash("npm test")], "First, reproduce the failure locally."),
		expect(
			FAILING,
			calls(
				[read("src/layout/ticks.ts"), read("src/layout/grid.ts")],
				"Two failures, both in the descending-chart tests, both from `new Array(n)` in niceTicks (ticks.ts:25), called from buildGrid. An invalid array length means n is negative or NaN. Let me read both files.",
			),
		),
		calls(
			[bash("git log --oneline -6")],
			"niceTicks computes n from (last - first) / step. If hi < lo, the span is negative, Math.log10 of a negative number is NaN, so the step is NaN and n is NaN. buildGrid passes extent(values, descending) straight in. Let me see what #142 changed.",
		),
		calls([bash("git show --stat HEAD")]),
		calls([bash("git diff HEAD~1 -- src/layout/extent.ts src/layout/grid.ts")]),
		calls([read("test/layout.test.ts")], "And the tests #142 added, to see what behaviour they expect."),
		say(`${DIAGNOSIS} #142 made \`extent()\` return a reversed domain for descending charts: \`[hi, lo]\` instead of \`[lo, hi]\` (\`src/layout/extent.ts\`, "descending value axes run from high to low"). \`buildGrid\` passes that straight to \`niceTicks(lo, hi)\`, which assumes \`lo <= hi\`:

- span \`hi - lo\` is negative (\`0 - 9\` for the rankings example),
- \`niceStep\` takes \`Math.log10\` of a negative number → \`NaN\`,
- so \`first\`, \`last\` and \`n\` are \`NaN\`, and \`new Array(NaN)\` throws \`RangeError: Invalid array length\` (\`ticks.ts:25\`).

Only descending charts are affected, which is why the two failing tests are exactly the ones #142 added; ascending charts and the render tests pass. The PR's tests expect ticks \`[0, 2, 4, 6, 8, 10]\` (ascending!) and the largest value drawn lowest, so the intent is "flip the drawing", not "reverse the numbers".

Nothing changed yet. The fix can go either into \`ticks.ts\` (tolerate a reversed range) or into \`extent.ts\`/\`grid.ts\` (never produce one). \`renderChart()\`'s signature is not involved either way.`),
	],
};

const TICKS_CLAMP = {
	oldText: "\tconst n = Math.round((last - first) / step) + 1;\n\tconst ticks = new Array<number>(n);",
	newText:
		"\tconst n = Math.round((last - first) / step) + 1;\n\tif (!Number.isFinite(n) || n < 1) return [];\n\tconst ticks = new Array<number>(n);",
};

const TICKS_SWAP = {
	oldText: "export function niceTicks(lo: number, hi: number, count = 5): number[] {\n",
	newText:
		"export function niceTicks(lo: number, hi: number, count = 5): number[] {\n\tif (lo > hi) [lo, hi] = [hi, lo];\n",
};

const TICKS_FIRST: Task = {
	prompt: "Makes sense. Fix it in ticks.ts so niceTicks can't blow up like that.",
	steps: [
		calls(
			[edit("src/layout/ticks.ts", [TICKS_CLAMP])],
			"Guard in niceTicks: if n is not a positive finite number, return no ticks instead of throwing.",
		),
		calls([bash("node --test --test-reporter=spec test/layout.test.ts test/ticks.test.ts")]),
		expect(
			/ℹ fail 2/,
			calls(
				[edit("src/layout/ticks.ts", [TICKS_SWAP])],
				"No more RangeError, but now the descending chart has no ticks at all, and with no ticks yOf divides by NaN. Returning [] only hides the problem. Better: accept a reversed range by swapping lo and hi, so the ticks come out ascending as the test expects.",
			),
		),
		calls([bash("node --test --test-reporter=spec test/layout.test.ts test/ticks.test.ts")]),
	],
	abort: true,
};

/** The long answer the user interrupts: the last step of TICKS_FIRST streams this and stalls. */
const REWRITE_PITCH: Reply = say(
	`Down to one failure: "the largest value reaches lowest". With the swap, the ticks are right, but \`buildGrid\` still maps values as if the axis were ascending, because it relied on the reversed domain to flip the mapping. Patching ticks.ts alone can't fix that.

I think the cleanest way out is to restructure the layout around an explicit scale object instead of passing \`[lo, hi]\` pairs around:

1. A new \`src/layout/scale.ts\` with \`LinearScale { domain, range, map(value), invert(row), ticks(count) }\`, where the range can be reversed for descending axes.
2. \`extent.ts\` goes away in favour of \`LinearScale.fromValues(values)\`.
3. \`grid.ts\` becomes a thin wrapper that asks the scale for ticks and rows.
4. \`index.ts\` and \`render.ts\` take the scale instead of the grid, which also lets us`,
	"The swap fixed the ticks; the remaining failure is the mapping. Let me explain the bigger picture and propose a proper structure.",
);

const ROOT_FIX: Task = {
	prompt:
		"Let's not patch ticks.ts, that only hides the problem, and no big restructuring either. I reverted ticks.ts. The real bug is extent() returning a reversed domain: keep extent() ascending always and let the grid flip its mapping for descending charts. Add a regression test for extent().",
	steps: [
		calls(
			[read("src/layout/extent.ts"), read("src/layout/grid.ts")],
			"The user reverted ticks.ts and wants the fix at the source: extent() always ascending, the grid flips rows for descending charts. Let me re-read both files.",
		),
		calls([
			edit("src/layout/extent.ts", [
				{
					oldText: EXTENT_FIX.before.slice(EXTENT_FIX.before.indexOf("export function")),
					newText: EXTENT_FIX.after.slice(EXTENT_FIX.after.indexOf("export function")),
				},
			]),
		]),
		calls(
			[edit("src/layout/grid.ts", [{ oldText: GRID_142_BUILD, newText: GRID_FIXED_BUILD }])],
			"In the grid, ticks and min/max stay ascending; only yOf changes: for descending charts row = top + t * height, so 0 is at the top and larger values go down.",
		),
		calls([bash("npm test")]),
		expect(
			PASSING,
			calls([write("test/extent.test.ts", TEST_EXTENT)], "All green. Now the regression test for extent()."),
		),
		calls([bash("node --test --test-reporter=spec test/extent.test.ts && npm run typecheck")]),
		expect(
			/error TS2554/,
			calls(
				[grep("extent\\(", { path: "src" })],
				"The typecheck fails: something still calls extent() with two arguments. Node strips types, so the tests couldn't see it.",
			),
		),
		calls(
			[
				edit("src/layout/index.ts", [
					{
						oldText: "\tconst [first, last] = extent(values, spec.descending ?? false);",
						newText:
							"\tconst [lo, hi] = extent(values);\n\tconst [first, last] = spec.descending ? [hi, lo] : [lo, hi];",
					},
				]),
			],
			"layoutChart used the reversed domain for the axis title ('rank (9 to 0)'). Keep that text as it was by flipping it there.",
		),
		calls([bash("npm test 2>&1 | tail -n 9 && npm run typecheck")]),
		expect(
			PASSING,
			say(`Fixed at the source; \`ticks.ts\` is untouched (as you reverted it).

- \`src/layout/extent.ts\`: \`extent(values)\` is always ascending again; the \`descending\` parameter is gone.
- \`src/layout/grid.ts\`: \`buildGrid(values, plot, descending)\` keeps ascending ticks and flips only the value→row mapping, so 0 is at the top of a descending chart and larger values go down.
- \`src/layout/index.ts\`: the axis title still reads "rank (9 to 0)" for descending charts.
- \`test/extent.test.ts\`: regression tests (order of values, zero, flat series, NaN).

All 13 tests pass, typecheck clean. \`renderChart()\` is unchanged.`),
		),
	],
};

const LOOK: Task = {
	prompt: "Render examples/q3-revenue.json and examples/rankings.json into out/ and look at them. Do they look right?",
	idleBefore: 7_860,
	steps: [
		calls([
			bash(
				"node src/cli.ts examples/q3-revenue.json -o out/q3-revenue.png && node src/cli.ts examples/rankings.json -o out/rankings.png",
			),
		]),
		calls([read("out/q3-revenue.png"), read("out/rankings.png")], "Both rendered. Let me look at the images."),
		say(`Both look right:

- **q3-revenue.png**: grouped bars (EMEA blue, APAC orange) for Jul–Sep, grid lines at -50, 0, 50, 100 with the zero line darker; EMEA's August bar (-25) hangs below the zero line.
- **rankings.png**: the axis starts at 0 at the top; each city's bar hangs down to its rank, so Graz (9) is the longest and Oslo (1) the shortest, which is what #142 wanted.

The deprecation warning on the console is \`palette()\` again, unrelated.`),
	],
};

const TRAFFIC: Task = {
	prompt: "Ops wants the 2025 traffic chart from examples/traffic-2025.json, but the CLI refuses it. Why?",
	steps: [
		calls([bash("node src/cli.ts examples/traffic-2025.json -o out/traffic-2025.png")]),
		expect(
			/non-finite value/,
			calls(
				[read("examples/traffic-2025.json")],
				"checkSpec rejects series[2] (mobile) for a non-finite value. JSON can't hold NaN or Infinity, so it must be a null somewhere. Let me look at the file.",
			),
		),
		calls(
			[grep("null", { path: "examples/traffic-2025.json", context: 1 })],
			"The file is long (365 days × 3 series) and the read was cut off. Let me search for the nulls directly.",
		),
		calls([
			bash(
				"node -e 'const s=require(\"./examples/traffic-2025.json\");s.series.forEach(x=>x.values.forEach((v,i)=>{if(v===null)console.log(x.name,s.categories[i])}))'",
			),
		]),
		say(`The mobile series has \`null\` on three days: 2025-03-14, 2025-07-02 and 2025-11-20 (the mobile API outages, I assume). \`checkSpec\` requires every value to be a finite number, and \`null\` isn't, so the CLI stops with "series[2] (mobile) has a non-finite value" before rendering anything.

Two ways out: fill the gaps in the data (0 would be a lie, interpolation would hide the outage), or let chartkit treat \`null\` as "no data": no bar for that day. I'd do the latter; \`renderChart()\`'s signature stays the same, the value type just widens to \`number | null\`.`),
	],
};

const GAPS_TASK: Task = {
	prompt:
		"Agreed: treat null as a gap, no bar for that category. checkSpec should still reject NaN and strings. Add a test.",
	steps: [
		calls([read("src/spec.ts")]),
		calls(
			[edit("src/spec.ts", [GAPS.specType, GAPS.specCheck]), edit("src/layout/index.ts", [GAPS.bars])],
			"Widen Series.values to (number | null)[], accept null in checkSpec, and skip the bar when the value is null.",
		),
		calls([bash("node src/cli.ts examples/traffic-2025.json -o out/traffic-2025.png")]),
		expect(
			/TypeError: not a finite value: null/,
			calls(
				[edit("src/layout/index.ts", [GAPS.values])],
				"extent() still sees the nulls: layoutChart flattens every value into the domain computation. Filter them out there with a type guard, so extent keeps its number-only contract.",
			),
		),
		calls([bash("node src/cli.ts examples/traffic-2025.json -o out/traffic-2025.png")]),
		calls([read("out/traffic-2025.png")]),
		calls([write("test/gaps.test.ts", TEST_GAPS)], "The chart renders with the three gaps. Now the test."),
		calls([bash("npm test 2>&1 | tail -n 9 && npm run typecheck")]),
		expect(
			PASSING,
			say(`\`null\` values are gaps now:

- \`src/spec.ts\`: \`Series.values\` is \`(number | null)[]\`; \`checkSpec\` accepts \`null\` and still rejects NaN, Infinity and non-numbers ("neither a finite number nor null").
- \`src/layout/index.ts\`: no bar for a \`null\`, and nulls are left out of the value domain (the first attempt crashed in \`extent()\` with \`TypeError: not a finite value: null\`).
- \`test/gaps.test.ts\`: both behaviours.

out/traffic-2025.png renders: a year of daily bars for web, api and mobile, with mobile missing on 2025-03-14, 2025-07-02 and 2025-11-20. All tests pass, typecheck clean.`),
		),
	],
};

const LABEL_INDEX_EDIT = {
	oldText: `	const labels = spec.categories.map((text, category) => ({
		text,
		x: Math.round(plot.x + category * slot + slot / 2 - (text.length * CHAR_W) / 2),
		y: plot.y + plot.h + 10,
	}));`,
	newText: `	const labels = spec.categories.map((name, category) => {
		const text = truncateLabel(name);
		return {
			text,
			x: Math.round(plot.x + category * slot + slot / 2 - ([...text].length * CHAR_W) / 2),
			y: plot.y + plot.h + 10,
		};
	});`,
};

const LABELS: Task = {
	prompt:
		"Next thing: in examples/long-labels.json the category labels overlap. Truncate labels longer than 12 characters with an ellipsis.",
	idleBefore: 395,
	steps: [
		calls([bash("node src/cli.ts examples/long-labels.json -o out/long-labels.png")]),
		calls([read("out/long-labels.png")]),
		calls(
			[read("src/raster/font.ts")],
			"Yes: 'Payments Platform' and 'Identity & Access' run into each other. Before using '…' I need to know whether the pixel font has a glyph for it; unknown characters are drawn as '?'.",
		),
		calls(
			[write("src/layout/labels.ts", LABELS_SOURCE)],
			"No ellipsis glyph. I'll add one to the font (three dots don't fit in 3x5 anyway; two pixels on the bottom row read as an ellipsis at this size), and put the truncation in its own small module.",
		),
		calls([
			edit("src/layout/index.ts", [
				{
					oldText: 'import { buildGrid, type Grid, type Rect } from "./grid.ts";',
					newText:
						'import { buildGrid, type Grid, type Rect } from "./grid.ts";\nimport { truncateLabel } from "./labels.ts";',
				},
				LABEL_INDEX_EDIT,
			]),
			edit("src/raster/font.ts", [ELLIPSIS_EDIT]),
		]),
		calls([write("test/labels.test.ts", TEST_LABELS)]),
		calls([bash("npm test 2>&1 | tail -n 40")]),
		expect(
			/✖ cuts long labels with an ellipsis/,
			calls(
				[
					edit("test/labels.test.ts", [
						{
							oldText: 'assert.equal(truncateLabel("Identity & Access"), "Identity & …");',
							newText: 'assert.equal(truncateLabel("Identity & Access"), "Identity &…");',
						},
					]),
				],
				'The implementation is right and my expectation is wrong: truncateLabel trims the space before the ellipsis, which is the point ("Identity & …" wastes a character). Fixing the test.',
			),
		),
		calls([bash("npm test 2>&1 | tail -n 9 && node src/cli.ts examples/long-labels.json -o out/long-labels.png")]),
		expect(PASSING, calls([read("out/long-labels.png")], "All tests pass. Let me look at the chart again.")),
		say(`Labels longer than 12 characters are now cut with an ellipsis: "Payments Pl…", "Identity &…", "Data Wareho…", "Customer Su…"; "Mobile" stays as it is. They no longer overlap in out/long-labels.png.

- \`src/layout/labels.ts\`: \`truncateLabel(text, max = 12)\` (counts code points, trims the space before the ellipsis)
- \`src/layout/index.ts\`: labels are truncated before they are centred
- \`src/raster/font.ts\`: new "…" glyph (the font had none, it would have drawn "?")
- \`test/labels.test.ts\`: truncation, the glyph, and the layout`),
	],
};

function benchMs(text: string): number {
	const m = /([\d.]+) ms per render/.exec(text);
	if (!m) throw new Error(`no bench figure in:\n${text}`);
	return Number(m[1]);
}

function perfTask(): Task {
	let before = 0;
	let afterCanvas = 0;
	return {
		prompt:
			"The big dashboards render slowly. bench/render.ts reproduces it. Can you make rendering faster? The pixels must stay exactly the same.",
		steps: [
			calls([bash("node bench/render.ts 2>/dev/null")]),
			(view: TurnView) => {
				before = benchMs(view.resultText);
				return calls(
					[read("src/raster/canvas.ts")],
					`${before} ms per 1920x1080 render. The obvious suspect is the canvas: every rectangle, including the full-size background, goes through setPixel one pixel at a time with a bounds check each.`,
				);
			},
			calls(
				[edit("src/raster/canvas.ts", [CANVAS_FAST.fillRect, CANVAS_FAST.hline])],
				"Clip the rectangle once, build one row of pixels, and copy it into each row with TypedArray.set. hline becomes a 1-pixel-high fillRect.",
			),
			calls([bash("npm test 2>&1 | tail -n 8 && node bench/render.ts 2>/dev/null")]),
			expect(PASSING, (view: TurnView) => {
				afterCanvas = benchMs(view.resultText);
				return calls(
					[
						bash(
							`node --input-type=module -e 'import { deflateSync } from "node:zlib"; import { Canvas } from "./src/raster/canvas.ts"; const c = new Canvas(1920, 1080, [255, 255, 255]); for (let x = 60; x < 1900; x += 24) c.fillRect(x, 200 + (x % 500), 16, 800 - (x % 500), [31, 119, 180]); const raw = Buffer.from(c.pixels); for (const level of [9, 6, 1]) { const t = performance.now(); const out = deflateSync(raw, { level }); console.log(\`level \${level}: \${(performance.now() - t).toFixed(1)} ms, \${out.length} bytes\`); }'`,
						),
					],
					`Tests pass but only ${before} → ${afterCanvas} ms: the canvas was not the main cost. The remaining suspect is the PNG encoder, which deflates 6 MB of raw pixels at level 9. Let me time deflate alone.`,
				);
			}),
			calls(
				[edit("src/raster/png.ts", [{ oldText: "deflateSync(raw, { level: 9 })", newText: "deflateSync(raw)" }])],
				"Level 9 is by far the slowest for this kind of data. zlib's default (6) is the usual trade-off; the pixels are identical, only the compressed bytes differ.",
			),
			calls([
				bash(
					"npm test 2>&1 | tail -n 8 && node bench/render.ts 2>/dev/null && node src/cli.ts examples/q3-revenue.json -o out/q3-after.png 2>/dev/null && ls -l out/q3-revenue.png out/q3-after.png",
				),
			]),
			expect(PASSING, (view: TurnView) => {
				const after = benchMs(view.resultText);
				return say(`Rendering the bench chart went from ${before} ms to ${after} ms (${(before / after).toFixed(1)}× faster):

1. \`Canvas.fillRect\` clips once and copies a prebuilt row (\`${before}\` → \`${afterCanvas}\` ms, small).
2. \`encodePng\` deflates at zlib's default level instead of 9: that was the real cost.

Pixels are unchanged (the render tests check colours at fixed positions, and the PNGs decode to the same image); small PNGs can come out a few hundred bytes larger at the default level, as \`ls -l\` shows for the Q3 chart.`);
			}),
		],
	};
}

const CHANGELOG_LONG: Task = {
	prompt: "Write the changelog entry for today's fixes.",
	abort: true,
	steps: [
		say(
			`Here's a draft for \`CHANGELOG.md\`:

## 2.3.1

### Fixed

- **Descending charts no longer crash.** Since 2.3.0 (#142), rendering a chart with \`descending: true\` threw \`RangeError: Invalid array length\` from \`niceTicks\`. The root cause was that \`extent()\` returned a reversed domain (\`[hi, lo]\`) for descending charts, which \`niceTicks\` cannot handle: the negative span made \`Math.log10\` return \`NaN\`, and the tick count became \`NaN\`. \`extent()\` now always returns an ascending domain, and \`buildGrid()\` flips only the mapping from values to pixel rows, so 0 is drawn at the top and larger values further down. The axis title keeps its "from 9 to 0" order. Added regression tests in \`test/extent.test.ts\`.
- **Long category labels no longer overlap.** Labels longer than 12 characters are truncated with an ellipsis. The pixel font gained an ellipsis glyph; before, unknown characters were drawn as a question mark, which`,
			"A changelog entry with the background for each fix.",
		),
	],
};

const CHANGELOG_SHORT: Task = {
	prompt: "Too long. Three bullets, no internals, under a new 2.3.1 heading in CHANGELOG.md.",
	steps: [
		calls([read("CHANGELOG.md")]),
		calls([
			edit("CHANGELOG.md", [
				{
					oldText: "# Changelog\n\n## 2.3.0",
					newText:
						"# Changelog\n\n## 2.3.1\n\n- Fix: descending charts (`descending: true`) crashed with `RangeError: Invalid array length` (#142)\n- Long category labels are cut at 12 characters with an ellipsis instead of overlapping\n- Rendering is several times faster for large charts\n\n## 2.3.0",
				},
			]),
		]),
		say(
			"Added a 2.3.1 section to `CHANGELOG.md` with three bullets: the descending-chart crash, label truncation, faster rendering.",
		),
	],
};

const COMMIT: Task = {
	prompt: "Run the whole suite and the typecheck once more, then commit on a new branch fix/descending-axes.",
	steps: [
		calls([bash("npm test 2>&1 | tail -n 9 && npm run typecheck")]),
		expect(
			PASSING,
			calls([
				bash(
					'git checkout -q -b fix/descending-axes && git add -A && git commit -q -m "Fix descending axes (#142), truncate long labels, faster PNG encoding" && git log --oneline -4 && git status --short',
				),
			]),
		),
		say(
			"Committed on `fix/descending-axes` (tests and typecheck green). `out/` is git-ignored, so the rendered PNGs are not part of the commit.",
		),
	],
};

/** Runs the story; see the file comment. */
async function play(ctx: PlayContext): Promise<void> {
	await ctx.run(TOUR);
	await ctx.run(DIAGNOSE);
	await ctx.run({ ...TICKS_FIRST, steps: [...TICKS_FIRST.steps, expect(/ℹ fail 1\b/, REWRITE_PITCH)] });
	await ctx.goto((entries: EntryLike[]) => {
		const diagnosis = entries.find(
			(e) =>
				e.message?.role === "assistant" &&
				Array.isArray(e.message.content) &&
				e.message.content.some(
					(b: { type?: string; text?: string }) => b.type === "text" && b.text?.startsWith(DIAGNOSIS),
				),
		);
		if (!diagnosis) throw new Error("diagnosis message not found");
		return diagnosis.id;
	}, true);
	await ctx.userBash("git checkout -- src/layout/ticks.ts && git status --short");
	await ctx.run(ROOT_FIX);
	await ctx.run(LOOK);
	await ctx.run(TRAFFIC);
	await ctx.run(GAPS_TASK);
	await ctx.run(LABELS);
	await ctx.run(perfTask());
	await ctx.run(CHANGELOG_LONG);
	await ctx.run(CHANGELOG_SHORT);
	await ctx.run(COMMIT);
}

/** The session. */
export const DEBUG_BRANCHY: SessionSpec = {
	name: "debug-branchy",
	project: "chartkit",
	goal: "Fix chartkit's test failure after the merge of #142 (RangeError: Invalid array length for descending charts) without changing renderChart()'s API, then polish labels, speed and the changelog.",
	start: "2026-04-08T13:02:44.000Z",
	files: chartFiles,
	history: [
		{ message: "chartkit 2.2.0: grouped bars, PNG through node:zlib", date: "2026-03-30T09:20:00Z" },
		{ message: "Merge pull request #142 from mkoch/descending-axes", date: "2026-04-03T16:58:00Z", files: MERGE_142 },
	],
	play,
};
