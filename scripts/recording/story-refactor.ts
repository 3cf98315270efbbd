/**
 * Session "refactor-long": a long refactoring of ledger-service (floating-point major units to
 * integer minor units) over thirteen modules, a money helper module, a large statement renderer
 * and the CLI. It is sized to run the context up to about 185k tokens of a 200k window, so Pi
 * compacts automatically in the middle of a turn (right after the renderer is written), and then
 * goes on. The story has the usual texture of real work: failing test runs with stack traces, a
 * deprecation warning, large reads, multi-KB edits and writes, parallel reads, an edit whose old
 * text does not match, a type error only the typecheck finds, a CLI crash, and two long breaks.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Call, calls, expect, type Step, say, type Task, type TurnView } from "./agent.ts";
import {
	LEDGER_MODULES,
	type LedgerModule,
	ledgerFiles,
	MONEY_ALLOCATION_FIX,
	MONEY_TEST,
	moneySource,
	RENDER_TEST,
	statementRenderer,
} from "./ledger-project.ts";
import { bash, edit, find, grep, lineOf, ls, type PlayContext, read, type SessionSpec, write } from "./session.ts";

const TEST = (name: string) => `node --test --test-reporter=spec test/${name}.test.ts`;
const FAILING = /ℹ fail [1-9]/;
const PASSING = /ℹ fail 0/;

const MODULE_PROMPTS = [
	"Let's start the migration with src/invoices.ts. The tests in test/invoices.test.ts already expect minor units; make them pass without touching the tests.",
	"Next: src/payments.ts. Watch the currency conversion: exchange rates stay decimals, only the amounts become integers.",
	"Now refunds, same approach. Allocation must be exact: finance complained that partial refunds lose a cent now and then.",
	"Subscriptions next please. Seat-based line totals must round per line, not on the total, like in invoices.",
	"Discounts. Note that percentOff on coupons stays a percentage, don't convert that one.",
	"Back from lunch. Payouts now, and run the typecheck too this time: I want to be sure the types line up, not just the tests.",
	"fees.ts next. Basis points stay integers; only the amounts change.",
	"Transfers please, same rules.",
	"Disputes next. Same rules as before; keep the evidence and deadline code as it is.",
	"Settlements: careful, the acquirer files are matched by amount, so there must be no rounding drift at all.",
	"Quotes.",
	"Orders next.",
	"Credits next, same rules.",
	"Back to the migration: wallets next, same rules as for the other modules.",
	"Rewards.",
	"Last module: budgets. Then run the whole suite so we see where we stand.",
];

function thinkingFor(m: LedgerModule, i: number, stage: "start" | "read" | "edit" | "done"): string {
	const src = `src/${m.name}.ts`;
	const fns = m.money.map((f) => f.name).join(", ");
	const variants: Record<typeof stage, string[]> = {
		start: [
			`The user wants ${src} migrated to minor units. I'll run its tests first to see exactly which expectations fail, then read the module.`,
			`Same procedure as before for ${src}: run the module's tests, look at the failures, then change the money functions (${fns}) to use the helpers in src/money.ts.`,
			`Let me check the current failures in test/${m.name}.test.ts before touching ${src}. The money functions here should be ${fns}.`,
		],
		read: [
			`The failures are all in the money describe block: the tests pass amounts in minor units and expect integer results, while the module still rounds with Math.round(x * 100) / 100. The domain part (validation, CSV parsing, stores) passes. I need to read ${src} to see the exact text of ${fns}.`,
			`As expected, only the minor-unit tests fail. Reading ${src} to get the current implementations; the file is long, most of it is domain code I won't touch.`,
			`Failures match the pattern from the previous modules. Let me read the module source so my edits match the file exactly.`,
		],
		edit: [
			`I'll replace the float implementations with the money helpers: applyRate for rates and taxes (rounds half up per operation), allocateMinor for splits (largest remainder, exact), formatMinor for display, sumMinor for sums. The import line needs the helpers this module uses. I'll do it in two edits to keep each replacement small.`,
			`Plan for ${src}: import the helpers from ./money.ts, then swap ${fns} for the minor-unit versions. Public names and parameter lists stay the same, only the unit and the return type annotation (Minor) change.`,
			`Editing ${src}: the import first, then the money functions. Doc comments should say minor units now so nobody passes major units by habit.`,
		],
		done: [
			`All tests in test/${m.name}.test.ts pass now. Let me check the diff stat to make sure I only touched ${src}.`,
			`Tests pass. Quick look at git diff --stat to confirm the change is limited to the module.`,
			`Green. I'll confirm the scope of the change with git before reporting.`,
		],
	};
	return variants[stage][i % 3];
}

function moduleTask(cwd: string, m: LedgerModule, i: number): Task {
	const src = `src/${m.name}.ts`;
	const test = `test/${m.name}.test.ts`;
	// Even modules get one edit with everything; odd ones two (so a slip can hit the second).
	const half = i % 2 === 0 ? m.money.length : Math.ceil(m.money.length / 2);
	const typeSlip = i === 5;
	const forget = i === 3;
	const staleText = i % 4 === 1;
	const allocateFn = m.money.find((f) => f.name.startsWith("allocate"));
	const newTextOf = (fnName: string, text: string) =>
		typeSlip && allocateFn && fnName === allocateFn.name
			? text.replace(
					"allocateMinor(assertMinor(amount), weights)",
					'allocateMinor(assertMinor(amount), weights, "largest-remainder")',
				)
			: text;
	const first = [
		m.header,
		{ oldText: m.importLine, newText: m.newImportLine },
		...m.money.slice(0, half).map((f) => ({ oldText: f.oldText, newText: newTextOf(f.name, f.newText) })),
	];
	const restFns = m.money.slice(half);
	const forgotten = forget ? [...restFns].reverse().find((f) => f.failsBefore) : undefined;
	const second = restFns
		.filter((f) => f !== forgotten)
		.map((f) => ({ oldText: f.oldText, newText: newTextOf(f.name, f.newText) }));
	const steps: Step[] = [];
	steps.push(calls([bash(TEST(m.name))], thinkingFor(m, i, "start")));
	const reads: Call[] = i % 2 === 0 ? [read(src), read(test)] : [read(src)];
	steps.push(expect(FAILING, calls(reads, thinkingFor(m, i, "read"))));
	if (i % 3 === 1) {
		const names = m.money.filter((f) => /^(format|convert)/.test(f.name)).map((f) => f.name);
		steps.push(
			calls(
				[grep(`\\b(${names.join("|")})\\(`, { path: "src" })],
				`Before changing ${names.join(" and ")}, let me check whether anything else in src/ calls them: callers passing major units would break silently.`,
			),
		);
	}
	steps.push(calls([edit(src, first)], thinkingFor(m, i, "edit")));
	if (staleText && second.length > 0) {
		const slipped = second[0].oldText.replace(/\bamount\b/, "value");
		if (slipped === second[0].oldText) throw new Error(`no slip possible in ${restFns[0].name}`);
		const stale = [{ ...second[0], oldText: slipped }, ...second.slice(1)];
		const fnName = restFns[0].name;
		steps.push(expect(/Successfully replaced/, calls([edit(src, stale)])));
		steps.push(
			expect(/Could not find/, () =>
				calls(
					[read(src, Math.max(1, lineOf(cwd, src, `export function ${fnName}(`) - 6), 40)],
					`The second edit did not apply: I quoted the doc comment of ${fnName} from memory and it differs. Let me read that part of the file again.`,
				),
			),
		);
		steps.push(calls([edit(src, second)], "Now with the exact text from the file."));
	} else if (second.length > 0) {
		steps.push(expect(/Successfully replaced/, calls([edit(src, second)])));
	}
	steps.push(expect(/Successfully replaced/, calls([bash(TEST(m.name))])));
	if (forgotten) {
		steps.push(
			expect(
				/ℹ fail 1\b/,
				calls(
					[edit(src, [{ oldText: forgotten.oldText, newText: forgotten.newText }])],
					`One failure left: ${forgotten.name} still uses the float version. I missed it in the second edit.`,
				),
			),
		);
		steps.push(expect(/Successfully replaced/, calls([bash(TEST(m.name))])));
	}
	if (typeSlip && allocateFn) {
		steps.push(
			expect(PASSING, calls([bash("npm run typecheck")], "Tests pass; now the typecheck the user asked for.")),
		);
		steps.push(
			expect(
				/error TS2554/,
				calls(
					[
						edit(src, [
							{
								oldText: 'allocateMinor(assertMinor(amount), weights, "largest-remainder")',
								newText: "allocateMinor(assertMinor(amount), weights)",
							},
						]),
					],
					"allocateMinor takes two arguments; the method is not a parameter. Node strips types, so the tests could not catch the extra argument. Removing it.",
				),
			),
		);
		steps.push(expect(/Successfully replaced/, calls([bash("npm run typecheck")])));
		steps.push(expect(/tsc --noEmit/, calls([bash("git diff --stat")], thinkingFor(m, i, "done"))));
	} else if (i === 0 || i === 9) {
		steps.push(expect(PASSING, calls([bash("npm run typecheck && git diff --stat")], thinkingFor(m, i, "done"))));
	} else {
		steps.push(expect(PASSING, calls([bash("git diff --stat")], thinkingFor(m, i, "done"))));
	}
	const migrated = m.money.map((f) => `\`${f.name}\``).join(", ");
	steps.push(
		say(
			[
				`\`${src}\` now works in integer minor units; all tests in \`${test}\` pass.`,
				"",
				`- Migrated ${migrated} to the helpers in \`src/money.ts\` (${m.money.some((f) => f.name.startsWith("allocate")) ? "allocation uses the largest-remainder method, so shares always add up" : "rounding is half up, once per operation"}).`,
				"- Names and parameter lists are unchanged; the return types are `Minor` now and the doc comments say minor units.",
				"- Validation, CSV import, lifecycle and query code is untouched.",
				...(typeSlip
					? ["- The typecheck caught an extra argument I had passed to `allocateMinor`; fixed, `tsc` is clean."]
					: []),
				...(forgotten ? [`- I had missed \`${forgotten.name}\` in the first pass; the rerun caught it.`] : []),
				...(i === LEDGER_MODULES.length - 1 ? ["", "That was the last module. Next I'd run the whole suite."] : []),
			].join("\n"),
		),
	);
	return { prompt: MODULE_PROMPTS[i], steps, ...(i === 5 ? { idleBefore: 4_310 } : {}) };
}

function overviewTask(): Task {
	let counts = "";
	return {
		prompt:
			"I want to move ledger-service from floating-point amounts to integer minor units (cents) everywhere, issue #412. Before we change anything: look around, tell me how amounts flow through the code and what the test suite says today.",
		steps: [
			calls(
				[ls("."), find("*.ts", "src"), read("package.json"), read("README.md")],
				"Let me get oriented: project layout, the source files, scripts, and the README, which mentions #412.",
			),
			calls(
				[bash("npm test")],
				"Now the test suite as it stands, to see how many tests already expect minor units.",
			),
			expect(
				/AssertionError/,
				calls(
					[bash("npm test 2>&1 | grep -E '^ℹ (tests|pass|fail)'")],
					"Lots of assertion failures, all in the 'money in minor units' blocks by the look of it, but the output was truncated and the summary at its end is cut off. Let me get just the counts.",
				),
			),
			expect(FAILING, (view: TurnView) => {
				const count = (label: string) => new RegExp(`ℹ ${label} (\\d+)`).exec(view.resultText)?.[1] ?? "?";
				counts = `${count("tests")} tests, ${count("fail")} failing`;
				return calls(
					[grep("Math\\.round\\(.*\\* 100\\) / 100", { path: "src" })],
					"Now every place that rounds to cents with the float idiom.",
				);
			}),
			calls(
				[bash("git log --oneline -12")],
				"Let me also check recent history to see whether anyone started on this.",
			),
			calls(
				[read("src/invoices.ts")],
				"I'll read one full module to understand the structure; invoices is the one the CLI uses.",
			),
			() =>
				say(`Here's the lay of the land.

**Structure.** ${LEDGER_MODULES.length} domain modules in \`src/\` (${LEDGER_MODULES.map((m) => m.name).join(", ")}), each with the same shape: entity types, \`validate*\`, CSV row parsing, a lifecycle state machine, SQL builders, an in-memory store, and a handful of money functions at the end of each entity block. Plus \`src/legacy/csv-export.ts\` (frozen, emits a deprecation warning when imported) and \`src/cli.ts\`.

**How amounts flow.** Every amount is a \`number\` in major units. The money functions compute in floats and round with \`Math.round(x * 100) / 100\` on the way out (the grep found it in every module). Line totals round once at the end, allocations round each share independently (so shares don't add up), conversions and taxes round the product.

**Test suite today.** ${counts}. All failures are in the "money in minor units" describe blocks: the tests were already rewritten for #412 (they pass cents and expect integers). The domain tests all pass. Typical failure: \`5397.3 !== 5397\` for line totals, \`[333.33, 333.33, 333.33]\` vs \`[334, 333, 333]\` for allocation, \`"123456.00 EUR"\` vs \`"1234.56 EUR"\` for formatting.

**Suggested plan.** A small \`src/money.ts\` with integer helpers (rounding half up, rate application, largest-remainder allocation, sum, formatting, parsing at the edges), then migrate module by module, keeping function names and signatures. \`src/legacy/\` stays as is.`),
		],
	};
}

const MONEY: Task = {
	prompt:
		"Good overview. Constraints for the whole migration: public function names stay as they are (only the unit changes), src/legacy/ is frozen (the bank byte-compares its CSV), and no new dependencies. Start with a small money module with the helpers you need, plus tests.",
	steps: [
		calls(
			[write("src/money.ts", moneySource(true))],
			"Helpers needed across the modules: assertMinor (guard against floats sneaking in), roundHalfUp (finance rounds half up, away from zero for negatives), applyRate (amount * rate rounded once), sumMinor, allocateMinor with the largest-remainder method so shares always add up, toMinor/fromMinor/parseMajor for the edges, and formatMinor for display. Currencies with 0 or 3 decimals need a small table (JPY, KWD, ...). No dependencies, plain functions.",
		),
		calls([write("test/money.test.ts", MONEY_TEST)]),
		calls([bash("node --test --test-reporter=spec test/money.test.ts")]),
		expect(
			/ℹ fail 1\b/,
			calls(
				[edit("src/money.ts", [MONEY_ALLOCATION_FIX])],
				"The negative allocation fails: with amount -1000 the truncated shares sum to -999, so the remainder is -1, and my loop only runs while rest > 0. The remainder can be negative; distribute it with its sign, and rank shares by the absolute fractional part.",
			),
		),
		calls([bash("node --test --test-reporter=spec test/money.test.ts")]),
		expect(PASSING, calls([bash("npm run typecheck")])),
		say(`Added \`src/money.ts\` and \`test/money.test.ts\` (all 6 tests pass, typecheck clean):

- \`Minor\` type alias and \`assertMinor()\`: throws a \`TypeError\` on anything that is not a safe integer
- \`roundHalfUp()\`, \`applyRate(amount, rate)\`: one rounding per operation
- \`sumMinor()\`, \`allocateMinor(amount, weights)\`: largest-remainder split, shares always add up (also for negative amounts, which the first version got wrong)
- \`toMinor\` / \`fromMinor\` / \`parseMajor\` for the edges, \`formatMinor\` for display, with a small table of currencies whose minor unit isn't 1/100

No dependencies, nothing in \`src/legacy/\` touched.`),
	],
};

const LEGACY_CHECK: Task = {
	prompt: "Does the legacy exporter test still pass? I'm nervous about that one.",
	steps: [
		calls([bash("node --test --test-reporter=spec test/legacy.test.ts")]),
		expect(
			PASSING,
			say(
				"It passes, and `src/legacy/csv-export.ts` is unchanged (`git diff --stat` shows nothing under `src/legacy/`). The `DeprecationWarning` (`LEDGER_LEGACY_CSV`) in the output is the module's own warning on import, not something new.",
			),
		),
	],
};

const CLI_CHECK: Task = {
	prompt: "Quick check: does the statement CLI still work for ACC-1042, February?",
	idleBefore: 545,
	steps: [
		calls([bash("node src/cli.ts statement --account ACC-1042 --month 2024-02")]),
		expect(
			/Total: /,
			say(
				"Yes. It prints the February entries of ACC-1042 with amounts like `21.36 EUR`: `data/ledger.json` already stores cents, and `formatInvoiceAmount` now reads minor units, so the CLI output is actually correct for the first time (before, it printed `2136.00 EUR`). The total is summed in integers.",
			),
		),
	],
};

function fillTasks(cwd: string): { task: Task; estimate: number }[] {
	return [
		{
			estimate: 6_800,
			task: {
				prompt:
					"While we're at it: walk me through how settlements parse the acquirer CSV rows and what happens with a malformed row. I need to explain it to finance tomorrow.",
				steps: [
					calls([read("src/settlements.ts")], "Let me read the settlements module again to answer precisely."),
					say(`In \`src/settlements.ts\` every record type has its own \`parse*Row(line, lineNo)\`:

1. The line is split on \`;\`; a wrong field count throws \`SyntaxError("settlements.csv:<line>: expected N fields, got M")\`.
2. The status column must be one of the known statuses, otherwise another \`SyntaxError\` naming the line.
3. The remaining fields are trimmed; numeric fields go through \`Number()\`.

Parsing does not validate: the importer is expected to call \`validateSettlement\` (id format \`ST-<number>\`, ISO dates, non-empty strings) and store only clean rows. A malformed row therefore stops the import with the line number in the message; nothing is half-imported because the store's \`add\` validates again.

For finance: amounts are matched in minor units now, so an acquirer file's \`12.34\` has to become \`1234\` (\`parseMajor\` in \`src/money.ts\`) before matching. There is no rounding anywhere in the matching path.`),
				],
			},
		},
		{
			estimate: 6_800,
			task: {
				prompt: "Same kind of question for payouts: what happens when a bank account fails verification?",
				steps: [
					calls([read("src/payouts.ts")]),
					say(
						"`src/payouts.ts` models it as a status: a `BankAccount` goes `new` → `verified` → `errored` through `nextBankAccountStatus` (`advance` moves one step, `cancel` jumps to `errored`, `reopen` back to `new`). Nothing in the module blocks a payout to an errored account by itself: `PayoutStore.add` only validates the payout's own fields. The check has to happen where payouts are created (not in this repo). Worth a follow-up issue if finance relies on it.",
					),
				],
			},
		},
		{
			estimate: 3_200,
			task: {
				prompt: "Run the whole suite once, I want to see it green.",
				steps: [
					calls([bash("npm test")]),
					expect(
						PASSING,
						say(
							"All green: every suite passes, including `test/money.test.ts` and the untouched `test/legacy.test.ts` (its deprecation warning is expected).",
						),
					),
				],
			},
		},
		{
			estimate: 3_500,
			task: {
				prompt: "Show me the full diff of src/invoices.ts, I want to review the first module properly.",
				steps: [
					calls([bash("git diff src/invoices.ts")]),
					say(
						"That's the whole change in `src/invoices.ts`: the import of the money helpers, and the money functions replaced one for one (same names and parameters, `Minor` return types, doc comments updated). Nothing in the validation, CSV, lifecycle or store code changed.",
					),
				],
			},
		},
		{
			estimate: 2_200,
			task: {
				prompt: "How many places still use the old Math.round(x * 100) / 100 idiom?",
				steps: [
					calls([grep("Math\\.round\\(.*\\* 100\\)", { path: "src" })]),
					expect(
						/No matches found/,
						say(
							"None left. The only rounding in `src/` now is `roundHalfUp` in `src/money.ts`; `src/legacy/` formats with `toFixed(2)` and stays frozen.",
						),
					),
				],
			},
		},
		{
			estimate: 1_200,
			task: {
				prompt: "What's the git status right now? Short form is fine.",
				steps: [
					calls([bash("git status --short && git diff --stat | tail -n 3")]),
					say(
						"All changes are uncommitted on `main`: the migrated modules (modified) and the new `src/money.ts` and `test/money.test.ts` (untracked). Nothing outside `src/` and `test/`.",
					),
				],
			},
		},
		{
			estimate: 900,
			task: {
				prompt: "Show me allocateMinor again, I want to double-check the tie-breaking.",
				steps: [
					() =>
						calls([read("src/money.ts", lineOf(cwd, "src/money.ts", "export function allocateMinor(") - 5, 30)]),
					say(
						"Ties go to the earlier weight: the order is sorted by the absolute fractional remainder, descending, then by index. So `allocateMinor(1000, [1, 1, 1])` gives `[334, 333, 333]`, and negative amounts hand out the remainder with its sign.",
					),
				],
			},
		},
		{
			estimate: 500,
			task: {
				prompt: "Any TODO or FIXME comments left in src?",
				steps: [calls([grep("TODO|FIXME", { path: "src" })]), say("None in `src/`.")],
			},
		},
	];
}

const RENDERER: Task = {
	prompt:
		"Finance wants proper statements. Write src/statements/render.ts: a plain-text renderer (fixed width, per-currency decimal and grouping style, sections for opening, invoices, payments, refunds, fees, adjustments and closing, labels for our 13 languages, pagination with carried-forward lines). Amounts in minor units only. Add tests.",
	steps: [
		calls(
			[write("src/statements/render.ts", statementRenderer())],
			"This is a self-contained module: a currency style table (decimal separator and grouping per ISO code), a label table for the 13 locales, formatting on top of minorDigits from src/money.ts, padding/wrapping helpers, one function per section, pagination with carried-forward amounts, and renderStatement tying it together. The renderer must never do arithmetic in major units: formatAmount splits the integer into major and minor parts itself.",
		),
		calls([write("test/render.test.ts", RENDER_TEST)]),
		calls([bash("node --test --test-reporter=spec test/render.test.ts")]),
		expect(
			/ℹ fail 1\b/,
			calls(
				[
					edit("test/render.test.ts", [
						{
							oldText: 'assert.equal(formatAmount(-7, { currency: "CHF" }), "-0,07 CHF");',
							newText: 'assert.equal(formatAmount(-7, { currency: "CHF" }), "-0.07 CHF");',
						},
					]),
				],
				"The failing expectation is mine: Swiss francs use a decimal point (and an apostrophe for grouping), which is what the style table says. The test was wrong, not the renderer.",
			),
		),
		calls([bash("node --test --test-reporter=spec test/render.test.ts && npm run typecheck")]),
		expect(
			PASSING,
			say(`Added \`src/statements/render.ts\` and \`test/render.test.ts\` (5 tests, all pass; typecheck clean).

- \`formatAmount\` formats minor units with the currency's separator and grouping (\`1.234,56 EUR\`, \`1,234.56 USD\`, \`1,234,567 JPY\`)
- labels for en, de, fr, es, it, nl, pt, sv, da, nb, pl, fi, cs (\`labelsFor("de-CH")\` falls back to \`de\`)
- one function per section, each with a subtotal; \`renderStatement\` adds the header and the balance
- \`paginate\` / \`footer\` / \`joinPages\` split long statements with carried-forward lines
- \`checkStatement\` reports non-integer amounts, items outside the month, overlong references

One of my own test expectations was wrong (CHF uses a decimal point); fixed the test.`),
		),
	],
};

const INVALID_MONTH: Task = {
	prompt: "What happens with an invalid month, say 2024-13?",
	steps: [
		calls([bash("node src/cli.ts statement --account ACC-1042 --month 2024-13")]),
		expect(
			/RangeError: invalid month: 2024-13/,
			say(
				"It throws `RangeError: invalid month: 2024-13` from `parseMonth` and Node prints the stack trace. That's input validation doing its job, but the crash output is ugly for a CLI; we could catch it in the entry point and print just the message with exit code 2.",
			),
		),
	],
};

const CLI_ERRORS: Task = {
	prompt: "Yes, do that: a one-line error and exit code 2 instead of the stack trace.",
	steps: [
		calls([
			edit("src/cli.ts", [
				{
					oldText: `if (command === "statement") statement(rest);
else {
	console.error("usage: node src/cli.ts statement --account <id> --month YYYY-MM");
	process.exitCode = 2;
}`,
					newText: `try {
	if (command === "statement") statement(rest);
	else {
		console.error("usage: node src/cli.ts statement --account <id> --month YYYY-MM [--locale de]");
		process.exitCode = 2;
	}
} catch (error) {
	console.error(\`error: \${error instanceof Error ? error.message : String(error)}\`);
	process.exitCode = 2;
}`,
				},
			]),
		]),
		calls([bash('node src/cli.ts statement --account ACC-1042 --month 2024-13; echo "exit code $?"')]),
		expect(
			/error: invalid month: 2024-13\nexit code 2/,
			say(
				"Now it prints `error: invalid month: 2024-13` and exits with code 2; the usage line mentions `--locale`.",
			),
		),
	],
};

const CLI_NEW_BLOCK = `/** data/ledger.json: entries per account, amounts in minor units of the account's currency. */
interface LedgerFile {
	accounts: Record<string, { currency: string; holder?: string; entries: LedgerEntry[] }>;
}

/** One booked entry: its date, its free text ("Invoice INV-1000") and its amount (minor units). */
interface LedgerEntry {
	date: string;
	text: string;
	amount: number;
}

/** \`--month\` as YYYY-MM; throws a RangeError for anything else. */
function parseMonth(value: string | undefined): string {
	if (!value || !/^\\d{4}-\\d{2}$/.test(value)) throw new RangeError(\`--month must be YYYY-MM, got \${value}\`);
	const month = Number(value.slice(5));
	if (month < 1 || month > 12) throw new RangeError(\`invalid month: \${value}\`);
	return value;
}

/** The value after \`name\` in \`args\`, if any. */
function option(args: string[], name: string): string | undefined {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : undefined;
}

/** \`--locale\` (default "en"); throws for a language the renderer has no labels for. */
function localeOf(args: string[]): string {
	const locale = option(args, "--locale") ?? "en";
	if (!(locale in LABELS) && !(locale.split("-")[0] in LABELS)) {
		throw new RangeError(\`unsupported locale: \${locale} (supported: \${Object.keys(LABELS).join(", ")})\`);
	}
	return locale;
}

/** The statement section of an entry, from the first word of its text. */
function sectionOf(text: string): StatementItem["section"] {
	if (text.startsWith("Invoice")) return "invoices";
	if (text.startsWith("Payment")) return "payments";
	if (text.startsWith("Refund")) return "refunds";
	if (text.startsWith("Fee")) return "fees";
	return "adjustments";
}

/** A ledger entry as a statement item: the reference is the last word of the text. */
function itemOf(entry: LedgerEntry): StatementItem {
	const reference = entry.text.split(" ").at(-1) ?? "";
	return { section: sectionOf(entry.text), date: entry.date, reference, text: entry.text, amount: entry.amount };
}

/** \`statement --account <id> --month YYYY-MM [--locale de]\`: prints the rendered statement. */
function statement(args: string[]): void {
	const month = parseMonth(option(args, "--month"));
	const accountId = option(args, "--account") ?? "";
	const locale = localeOf(args);
	const ledger = JSON.parse(readFileSync(new URL("../data/ledger.json", import.meta.url), "utf8")) as LedgerFile;
	const account = ledger.accounts[accountId];
	if (!account) throw new Error(\`unknown account \${accountId}\`);
	const items = account.entries.filter((e) => e.date.startsWith(month)).map(itemOf);
	const holder = account.holder ?? accountId;
	process.stdout.write(renderStatement({ accountId, holder, month, currency: account.currency, items }, { locale }));
}`;

function cliTask(cwd: string): Task {
	const cli = readFileSync(join(cwd, "src/cli.ts"), "utf8");
	const start = cli.indexOf("interface LedgerFile {");
	const end = cli.indexOf("\n}\n", cli.indexOf("function statement(")) + 2;
	const oldBlock = cli.slice(start, end);
	return {
		prompt:
			"Wire the renderer into the CLI instead of the ad-hoc printing. data/ledger.json already stores cents. Add a --locale option while you're at it.",
		steps: [
			calls([read("src/cli.ts")]),
			calls(
				[
					edit("src/cli.ts", [
						{
							oldText: 'import { formatInvoiceAmount } from "./invoices.ts";',
							newText: 'import { LABELS, renderStatement, type StatementItem } from "./statements/render.ts";',
						},
						{ oldText: oldBlock, newText: CLI_NEW_BLOCK },
					]),
				],
				"I'll rewrite the statement part of the CLI as a whole: typed ledger entries, renderStatement instead of the console.log loop, and a validated --locale. The ledger entries carry free text like 'Invoice INV-1000'; the section comes from the first word and the reference from the last. Amounts go through unchanged since they're already minor units.",
			),
			calls([bash("node src/cli.ts statement --account ACC-1042 --month 2024-02 --locale de && npm run typecheck")]),
			expect(
				/Kontoauszug ACC-1042/,
				say(
					"Done: `node src/cli.ts statement --account ACC-1042 --month 2024-02 --locale de` now prints the rendered statement (German labels, `1.234,56 EUR` style amounts, sections with subtotals, balance). The CLI no longer imports `formatInvoiceAmount`. Typecheck is clean.",
				),
			),
		],
	};
}

const README_TASK: Task = {
	prompt: "Update the README's Amounts section to describe the new convention. Keep it short.",
	steps: [
		calls([read("README.md")]),
		calls([
			edit("README.md", [
				{
					oldText:
						"Historically every amount is a JavaScript number in major units (12.5 = 12.50 EUR), rounded with\n`Math.round(x * 100) / 100`. This loses cents in allocations and drifts in sums; see issue #412.\nThe plan (#412) is integer minor units everywhere, with decimal strings only at the edges.",
					newText:
						"Every amount is an integer number of minor units (`Minor`, see `src/money.ts`): 1234 EUR cents is\n12.34 EUR. Helpers round half up once per operation (`applyRate`), split exactly (`allocateMinor`,\nlargest remainder) and format at the edges (`formatMinor`, `src/statements/render.ts`). Decimal\nstrings appear only in imports, statements and the frozen legacy CSV export (#412).",
				},
			]),
		]),
		say(
			"Updated the Amounts section of `README.md`: minor units everywhere, the helpers to use, and where decimals still appear.",
		),
	],
};

const FINISH: Task = {
	prompt:
		"Run everything (tests and typecheck), then commit on a new branch money-minor-units with a message that references #412.",
	steps: [
		calls([bash("npm test 2>&1 | tail -n 12 && npm run typecheck")]),
		expect(
			PASSING,
			calls([
				bash(
					'git checkout -q -b money-minor-units && git add -A && git commit -q -m "Amounts in integer minor units (#412)\n\nAll domain modules, the CLI and the new statement renderer use src/money.ts.\nsrc/legacy/ is unchanged." && git log --oneline -3 && git status --short | wc -l',
				),
			]),
		),
		say(
			'All tests pass and `tsc` is clean. Committed everything on `money-minor-units` ("Amounts in integer minor units (#412)"); the working tree is clean and `src/legacy/` is untouched.',
		),
	],
};

/** Runs the story; see the file comment. */
async function play(ctx: PlayContext): Promise<void> {
	await ctx.run(overviewTask());
	await ctx.run(MONEY);
	let next = 0;
	while (next < LEDGER_MODULES.length && ctx.contextTokens() < 158_000) {
		await ctx.run(moduleTask(ctx.cwd, LEDGER_MODULES[next], next));
		if (next === 1) await ctx.run(LEGACY_CHECK);
		if (next === 6) await ctx.run(CLI_CHECK);
		next++;
	}
	// Fill up to just below Pi's compaction threshold (200000 - 16384), then write the renderer: its
	// long write pushes the context past 185k and Pi compacts before the next request of that turn.
	const pool = fillTasks(ctx.cwd);
	while (ctx.contextTokens() < 178_500) {
		const room = 182_000 - ctx.contextTokens();
		const i = pool.findIndex((f) => f.estimate <= room);
		if (i < 0) throw new Error(`no filler task fits at ${ctx.contextTokens()} tokens`);
		await ctx.run(pool.splice(i, 1)[0].task);
	}
	await ctx.run(RENDERER);
	for (; next < LEDGER_MODULES.length; next++) await ctx.run(moduleTask(ctx.cwd, LEDGER_MODULES[next], next));
	await ctx.run(cliTask(ctx.cwd));
	await ctx.run(INVALID_MONTH);
	await ctx.run(CLI_ERRORS);
	for (const f of pool.slice(0, 2)) await ctx.run(f.task);
	await ctx.run(README_TASK);
	await ctx.run(FINISH);
}

/** The session. */
export const REFACTOR_LONG: SessionSpec = {
	name: "refactor-long",
	project: "ledger-service",
	goal: "Migrate ledger-service from floating-point major units to integer minor units everywhere (issue #412), module by module, keeping public names and signatures, without touching src/legacy/ and without new dependencies.",
	start: "2026-03-17T08:41:27.000Z",
	files: ledgerFiles,
	history: [
		{ message: "Initial import of ledger-service 3.x", date: "2026-02-02T10:12:00Z" },
		{ message: "Rewrite money tests for minor units (#412)", date: "2026-03-16T16:45:00Z" },
	],
	play,
};
