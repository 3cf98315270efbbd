/**
 * The working-set policy (the default) through real `pi`, every assertion on the request bodies the
 * scripted model server captured. Settings leave `policy` unset and set small knobs (a 4-message use
 * window, 1k tails, a low foldFrom and minEvent, a long horizon) so fold events fire in a short
 * session; bash filler that nothing refers to pushes blocks out of the tails.
 * - A file read, then edited over several turns: the read goes out raw while the edits go on, though
 *   each edit supersedes it and the filler around it folds; once the model has sent `useWindow`
 *   messages without editing or using it, it folds. Twice: edits across the file, each repeating
 *   names only the read holds, and edits refining one line, each repeating the previous edit.
 * - The same where the copy edited is the first part of a file read in two parts (edits in that part),
 *   or a file the model wrote whole itself: that copy stays raw while the edits go on, then folds.
 * - A plan the model wrote: while each of the model's messages cites the plan's step names, the
 *   `write`'s content goes out raw, while the filler folds; once the citing stops it folds too. The
 *   same where the model ticks a checklist plan's items off with edits, citing no step in text.
 * Under the economic policy (no working set, e.g. CONTEXTFOLD_POLICY=economic) the read and the plan
 * fold at the first event that finds them out of the tails, and every assertion on them fails.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { analyze, type RequestFolds, TAG_AT_HEAD, unpaired } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	messagesOf,
	type Reply,
	type ScriptedToolCall,
	toolResultOf,
	toolResultsOf,
} from "./harness/model-server.ts";
import type { RunResult } from "./harness/pi-runner.ts";
import { scriptedPi } from "./harness/scripted.ts";

const WINDOW = 64_000;
/** Model messages a use keeps a block raw for (set here, so the test does not follow the default). */
const USE_WINDOW = 4;
const SETTINGS = {
	compaction: { enabled: false },
	"context-fold": {
		// The harness pins the ladder; an undefined value leaves the key out of settings.json: the default policy.
		policy: undefined,
		useWindow: USE_WINDOW,
		hotTail: 1000,
		coldTail: 1000,
		// A long horizon: any event pays for its rewrite, so firing depends on the tails, uses and sizes alone.
		horizon: 1000,
		foldFrom: 3000,
		minEvent: 500,
		// Far above any prompt here: no backstop compaction, no urgent event (which ignores uses).
		backstopAt: WINDOW,
		budgetFraction: 0.95,
	},
};
const RUN_TIMEOUT_MS = 120_000;

const pad = (k: number) => String(k).padStart(2, "0");

/** One scripted model message: an optional text and one tool call. */
interface Step {
	text?: string;
	call: ScriptedToolCall;
}

/**
 * The scripted model: step k answers the request carrying k tool results (folding rewrites results
 * but never removes one, so the count holds), then `done`.
 */
function stepsScript(steps: readonly Step[], done: string) {
	return (req: CapturedRequest): Reply => {
		const step = steps[toolResultsOf(req).length];
		if (!step) return { text: done };
		return { ...(step.text ? { text: step.text } : {}), toolCalls: [step.call] };
	};
}

/** Bash printing 100 lines (~1.5k tokens) that hold no identifier, path or number the model repeats. */
function filler(k: number): Step {
	const command = `for i in $(seq 1 100); do echo "filler ${k} row $i: routine output that nothing later refers to"; done`;
	return { call: { id: `toolu_filler_${pad(k)}`, name: "bash", args: { command } } };
}

const fillerId = (k: number) => `toolu_filler_${pad(k)}`;

/** Assistant messages of the request after the one that made call `callId` (-1 when none made it). */
function modelMessagesSince(req: CapturedRequest, callId: string): number {
	const models = messagesOf(req).filter((m) => m.role === "assistant");
	const at = models.findIndex((m) => m.toolCalls?.some((c) => c.id === callId));
	return at < 0 ? -1 : models.length - 1 - at;
}

/**
 * The run took every step and ended with `done`: exit 0, no server error, one request per step and
 * the last, and every call paired with its result in every request.
 */
function ranToTheEnd(
	run: RunResult,
	errors: readonly unknown[],
	requests: readonly CapturedRequest[],
	steps: readonly Step[],
	done: string,
): void {
	assert.equal(run.code, 0, run.stderr);
	assert.equal(run.stdout.trim(), done, run.stderr);
	assert.deepEqual(errors, []);
	assert.equal(requests.length, steps.length + 1);
	for (const req of requests) assert.deepEqual(unpaired(req), { callsWithoutResult: [], resultsWithoutCall: [] });
}

/** Runs `prompt` through the scripted pi with the extension: the run, the captured requests and their folds. */
async function ranScenario(
	pi: ReturnType<typeof scriptedPi>,
	prompt: string,
): Promise<{ run: RunResult; requests: CapturedRequest[]; folds: RequestFolds[] }> {
	const run = await pi.sandbox.runPrint({ prompt, extensions: ["."], timeoutMs: RUN_TIMEOUT_MS });
	const requests = pi.server.requests;
	return { run, requests, folds: analyze(requests) };
}

/** Index of the first request carrying the result of `callId`. */
function firstWith(requests: readonly CapturedRequest[], callId: string): number {
	const at = requests.findIndex((r) => toolResultOf(r, callId) !== undefined);
	assert.ok(at >= 0, `no request carries the result of ${callId}`);
	return at;
}

// --- Scenario 1: a file read, then edited over several turns ---

const LEDGER_PATH = "src/ledger.ts";
const SHARDS = 36;
const EDITED = [3, 10, 17, 24, 31];

/** The signature and first line of shard `n`'s function: each name in it is the shard's own. */
function shardHead(n: string, factor = ""): string {
	return (
		`export function reconcileShard_${n}(entries: LedgerEntry[], cursor: number): ShardResult_${n} {\n` +
		`\tconst threshold_${n} = readThreshold("ledger.shard_${n}.threshold")${factor};`
	);
}

/** The module the model reads: ~15k characters, one function per shard, each with its own names. */
const LEDGER = [
	'import type { LedgerEntry } from "./types.ts";',
	'import { readThreshold } from "./config.ts";',
	"",
	...Array.from({ length: SHARDS }, (_, i) => {
		const n = pad(i + 1);
		return [
			`/** Reconciles shard ${n} against /srv/ledger/shard_${n}.db before the nightly close. */`,
			shardHead(n),
			`\tconst pending = entries.filter((entry) => entry.cursor > cursor && entry.amount > threshold_${n});`,
			`\treturn { shard: "${n}", pending, total: pending.reduce((sum, entry) => sum + entry.amount, 0) };`,
			"}",
			"",
		].join("\n");
	}),
].join("\n");

const READ_ID = "toolu_read_ledger";
const editId = (k: number) => `toolu_edit_${pad(k)}`;

/** One edit of the ledger: shard `shard`'s head line, its factor `from` changed to `to`. */
interface LedgerEdit {
	shard: number;
	from: string;
	to: string;
}

/** How the model changes the file: with `edit`, or by writing it whole with `write`. */
type Via = "edit" | "write";

/** The ledger after the first `k` of `edits`. */
function applied(edits: readonly LedgerEdit[], k: number): string {
	return edits
		.slice(0, k)
		.reduce((text, e) => text.replace(shardHead(pad(e.shard), e.from), shardHead(pad(e.shard), e.to)), LEDGER);
}

/** Edit k of `edits`: an `edit` whose arguments repeat the names of the shard it changes, or the whole file written. */
function edit(k: number, edits: readonly LedgerEdit[], via: Via): Step {
	if (via === "write")
		return { call: { id: editId(k), name: "write", args: { path: LEDGER_PATH, content: applied(edits, k) } } };
	const e = edits[k - 1];
	const n = pad(e.shard);
	const change = [{ oldText: shardHead(n, e.from), newText: shardHead(n, e.to) }];
	return { call: { id: editId(k), name: "edit", args: { path: LEDGER_PATH, edits: change } } };
}

/** Filler after the last edit: more than USE_WINDOW model messages of work unrelated to the ledger. */
const AFTER_EDITS = USE_WINDOW + 3;

/** The read, each edit after a filler, then the filler after the edits. */
function ledgerSteps(edits: readonly LedgerEdit[], via: Via): Step[] {
	return [
		{ call: { id: READ_ID, name: "read", args: { path: LEDGER_PATH } } },
		...edits.flatMap((_, i) => [filler(i + 1), edit(i + 1, edits, via)]),
		...Array.from({ length: AFTER_EDITS }, (_, j) => filler(edits.length + j + 1)),
	];
}

/** Across the file: each edit doubles another shard's threshold, repeating names only the read holds. */
const ACROSS = EDITED.map((shard) => ({ shard, from: "", to: " * 2" }));
/** Refining one line: each edit's old text is the previous edit's new text, so it repeats that edit's names. */
const REFINING = [" * 2", " * 3", " * 4", " * 5", " * 6"].map((to, i, all) => ({
	shard: 3,
	from: i === 0 ? "" : all[i - 1],
	to,
}));

for (const [shape, edits, via] of [
	["edits across the file", ACROSS, "edit"],
	["edits refining one line", REFINING, "edit"],
	["the file written whole each time", ACROSS, "write"],
] as const)
	describeLedger(shape, edits, via);

/** The edit scenario with `edits`, made `via` edit or write, on the copy the model got as `copy` says. */
function describeLedger(shape: string, edits: readonly LedgerEdit[], via: Via, copy: Copy = "read"): void {
	describe(`working-set policy: a file ${copy}, then edited over several turns (${shape})`, () => {
		const steps = copy === "read" ? ledgerSteps(edits, via) : copySteps(copy, edits);
		const pi = scriptedPi(stepsScript(steps, "ledger fixed"), { contextWindow: WINDOW, settings: SETTINGS });
		const lastEdit = editId(edits.length);
		let run: RunResult;
		let requests: CapturedRequest[] = [];
		let folds: RequestFolds[] = [];

		before(async () => {
			await mkdir(join(pi.sandbox.cwd, "src"), { recursive: true });
			if (copy !== "written") await writeFile(join(pi.sandbox.cwd, LEDGER_PATH), LEDGER);
			({ run, requests, folds } = await ranScenario(
				pi,
				"Read the ledger, double the thresholds of the shards I named, and tidy up.",
			));
		});

		it("the run reads the file, makes every edit on disk, runs the filler and ends", async () => {
			ranToTheEnd(run, pi.server.errors, requests, steps, "ledger fixed");
			for (let k = 1; k <= edits.length; k++) {
				assert.match(
					toolResultOf(requests.at(-1) as CapturedRequest, editId(k)) ?? "",
					/^Successfully (replaced|wrote)/,
				);
			}
			const expected = applied(edits, edits.length);
			assert.equal(await readFile(join(pi.sandbox.cwd, LEDGER_PATH), "utf8"), expected);
			for (const f of folds)
				assert.deepEqual(f.mutated, [], `request ${f.index}: a result changed without a fold tag`);
		});

		it("the copy goes out raw in every request while the edits go on, while the filler around it folds", () => {
			const readAt = firstWith(requests, READ_ID);
			const raw = folds[readAt].results.find((r) => r.id === READ_ID)?.text ?? "";
			if (copy === "read")
				assert.ok(
					raw.includes(shardHead(pad(1))) && raw.includes(shardHead(pad(SHARDS))),
					"the read holds the file",
				);
			if (copy === "read in two parts")
				assert.ok(raw.includes(shardHead(pad(18))) && !raw.includes(shardHead(pad(19))), "the first part alone");
			const lastEditAt = firstWith(requests, lastEdit);
			for (let i = readAt; i <= lastEditAt; i++)
				assert.ok(
					copyRaw(copy, requests[i], folds[i]),
					`request ${i}: the copy went out folded while the edits went on`,
				);
			// Events fired meanwhile: the filler the model never referred to folded, around the raw read.
			assert.ok(folds[lastEditAt].folded.has(fillerId(1)), `filler 1 never folded: ${folds[lastEditAt].signature}`);
			assert.ok(folds[lastEditAt].folded.size >= 2, `one filler folded: ${folds[lastEditAt].signature}`);
		});

		it("once the edits stop, the copy stays raw for useWindow model messages, then an event folds it", () => {
			const lastEditAt = firstWith(requests, lastEdit);
			let foldedAt = -1;
			for (let i = lastEditAt; i < requests.length; i++) {
				const since = modelMessagesSince(requests[i], lastEdit);
				const folded = !copyRaw(copy, requests[i], folds[i]);
				if (since < USE_WINDOW)
					assert.ok(!folded, `request ${i}: folded ${since} model messages after the last edit`);
				if (folded && foldedAt < 0) foldedAt = i;
				if (foldedAt >= 0) assert.ok(folded, `request ${i}: unfolded again after request ${foldedAt}`);
			}
			assert.ok(foldedAt > lastEditAt, "the copy never folded after the edits stopped");
			if (copy === "written") return;
			const digest = folds[foldedAt].folded.get(READ_ID)?.text ?? "";
			assert.match(digest, /^\{#[0-9a-z]{8} FOLDED\} read: /);
			// Its In use lines show what the edits worked on, not the imports every shard repeats (a whole-file
			// write holds every line itself: the read is used for no string of its own).
			if (via === "write") return;
			const inUse = digest.slice(digest.indexOf("\nIn use:\n"));
			const edited = new Set(edits.map((e) => pad(e.shard)));
			const shown = [...inUse.matchAll(/reconcileShard_(\d\d)|threshold_(\d\d)/g)].map((m) => m[1] ?? m[2]);
			assert.ok(shown.length > 0 && shown.every((n) => edited.has(n)), `In use shows other shards: ${inUse}`);
		});
	});
}

// --- Scenario 1b: the copy edited is part of a file read in parts, or a file the model wrote ---

/** The ledger's lines up to shard 18's: the first of two parts a read with `offset`/`limit` gives. */
const FIRST_PART_LINES = 3 + 18 * 7;
const PART2_ID = "toolu_read_ledger_part2";
/** Edits across the first part only: each repeats names only that part holds. */
const ACROSS_FIRST_PART = [2, 5, 8, 11, 14].map((shard) => ({ shard, from: "", to: " * 2" }));

/** How the model got the copy it edits: a file read whole, read in two parts (edits in the first), or written by itself. */
type Copy = "read" | "read in two parts" | "written";

/** The copy's call(s), each edit after a filler, then the filler after the edits. */
function copySteps(copy: Exclude<Copy, "read">, edits: readonly LedgerEdit[]): Step[] {
	const first: Step[] =
		copy === "written"
			? [{ call: { id: READ_ID, name: "write", args: { path: LEDGER_PATH, content: LEDGER } } }]
			: [
					{ call: { id: READ_ID, name: "read", args: { path: LEDGER_PATH, offset: 1, limit: FIRST_PART_LINES } } },
					{ call: { id: PART2_ID, name: "read", args: { path: LEDGER_PATH, offset: FIRST_PART_LINES + 1 } } },
				];
	return [
		...first,
		...edits.flatMap((_, i) => [filler(i + 1), edit(i + 1, edits, "edit")]),
		...Array.from({ length: AFTER_EDITS }, (_, j) => filler(edits.length + j + 1)),
	];
}

/** True when the request carries the copy raw: the first part's read result, or the write's whole content. */
function copyRaw(copy: Copy, req: CapturedRequest, folds: RequestFolds): boolean {
	if (copy !== "written") return !folds.folded.has(READ_ID);
	const call = messagesOf(req)
		.flatMap((m) => m.toolCalls ?? [])
		.find((c) => c.id === READ_ID);
	return (call?.args as { content?: unknown } | undefined)?.content === LEDGER;
}

for (const [copy, edits] of [
	["read in two parts", ACROSS_FIRST_PART],
	["read in two parts", REFINING],
	["written", REFINING],
] as const)
	describeLedger(edits === REFINING ? "edits refining one line" : "edits across the first part", edits, "edit", copy);

// --- Scenario 2: a plan the model wrote, cited while it works ---

const PLAN_PATH = "docs/plan.md";
const STEP_NAMES = [
	"parse_manifest",
	"resolve_versions",
	"lock_registry",
	"fetch_tarballs",
	"verify_checksums",
	"unpack_sources",
	"patch_headers",
	"build_natives",
	"link_binaries",
	"run_smoke",
	"write_lockfile",
	"publish_report",
	"prune_cache",
	"rotate_keys",
	"notify_owners",
	"archive_logs",
];
const stepName = (k: number) => `step_${pad(k)}_${STEP_NAMES[k - 1]}`;

/** The plan the model writes: ~5k characters, one section per step, each named `step_NN_<what>`. */
const PLAN = [
	"# Migration plan",
	"",
	...STEP_NAMES.flatMap((_, i) => [
		`## ${stepName(i + 1)}`,
		`- do: carry out ${STEP_NAMES[i].replace("_", " ")} for every package in the workspace, one at a time.`,
		`- done when: the log shows ${stepName(i + 1)} finished without a warning, and the next step may start.`,
		"",
	]),
].join("\n");

/** A step's plain words: `Parse manifest`. */
const stepWords = (k: number) => STEP_NAMES[k - 1].replace("_", " ").replace(/^./, (c) => c.toUpperCase());

/** The same plan in plain words, as plans are often written: `## Step 4: Fetch tarballs`, no identifier. */
const PLAIN_PLAN = [
	"# Migration plan",
	"",
	...STEP_NAMES.flatMap((_, i) => [
		`## Step ${i + 1}: ${stepWords(i + 1)}`,
		`- do: carry out ${STEP_NAMES[i].replace("_", " ")} for every package in the workspace, one at a time.`,
		"- done when: the log shows the step finished without a warning, and the next step may start.",
		"",
	]),
].join("\n");

/** The plain-words plan with a page of notes under each step: ~12.6k tokens, the size of the plan issue 24 names. */
const LARGE_PLAIN_PLAN = PLAIN_PLAN.split("\n\n")
	.map((section, i) =>
		i === 0 ? section : `${section}\n${`Notes: check every package of the workspace before moving on. `.repeat(48)}`,
	)
	.join("\n\n");

const WRITE_ID = "toolu_write_plan";
const CITES = 8;

/** Model message k cites three steps of the plan by name in its text, with the plan's path. */
const citeByName = (k: number) =>
	`Following ${PLAN_PATH}: finished ${stepName(k)}, now ${stepName(k + 1)}, then ${stepName(k + 2)}.`;
/** Model message k cites three steps by their plain words alone: no path, no identifier. */
const citeByWords = (k: number) =>
	`Finished step ${k} (${stepWords(k)}); now ${stepWords(k + 1).toLowerCase()}, then ${stepWords(k + 2).toLowerCase()}.`;

/** The plan's write, CITES model messages citing it (message k: `cite(k)` and filler k), then filler. */
function planSteps(plan: string, cite: (k: number) => string): Step[] {
	return [
		{ call: { id: WRITE_ID, name: "write", args: { path: PLAN_PATH, content: plan } } },
		...Array.from({ length: CITES }, (_, i) => ({ ...filler(i + 1), text: cite(i + 1) })),
		...Array.from({ length: USE_WINDOW + 3 }, (_, j) => filler(CITES + j + 1)),
	];
}

/** The `content` argument of the plan's write call as the request sends it. */
function planContent(req: CapturedRequest): string | undefined {
	for (const message of messagesOf(req)) {
		const call = message.toolCalls?.find((c) => c.id === WRITE_ID);
		if (call) return String((call.args as { content?: unknown }).content);
	}
	return undefined;
}

for (const [shape, plan, cite] of [
	["cited by its steps' names and its path", PLAN, citeByName],
	["cited by its steps' plain words alone", PLAIN_PLAN, citeByWords],
	["a 12.6k-token plan cited by its steps' plain words alone", LARGE_PLAIN_PLAN, citeByWords],
] as const)
	describePlan(shape, plan, planSteps(plan, cite), fillerId(CITES));

/** The plain-words plan as a checklist: `- [ ] Step 4: Fetch tarballs`, each item with a note. */
const CHECKLIST_PLAN = [
	"# Migration plan",
	"",
	...STEP_NAMES.flatMap((_, i) => [
		`- [ ] Step ${i + 1}: ${stepWords(i + 1)}`,
		`  - do: carry out ${STEP_NAMES[i].replace("_", " ")} for every package in the workspace, one at a time.`,
		"",
	]),
].join("\n");
const tickId = (k: number) => `toolu_tick_${pad(k)}`;

/** The checklist's write, CITES items ticked off by an `edit` each after a filler, then filler: no step cited in text. */
function tickSteps(): Step[] {
	// Each tick's strings are the previous tick's: only the edit of the file the model wrote keeps the write in use.
	const tick = (k: number): Step => {
		const item = `Step ${k}: ${stepWords(k)}`;
		const edits = [{ oldText: `- [ ] ${item}`, newText: `- [x] ${item}` }];
		return { call: { id: tickId(k), name: "edit", args: { path: PLAN_PATH, edits } } };
	};
	return [
		{ call: { id: WRITE_ID, name: "write", args: { path: PLAN_PATH, content: CHECKLIST_PLAN } } },
		...Array.from({ length: CITES }, (_, i) => [filler(i + 1), tick(i + 1)]).flat(),
		...Array.from({ length: USE_WINDOW + 3 }, (_, j) => filler(CITES + j + 1)),
	];
}

/** The checklist on disk once every item was ticked. */
const TICKED_PLAN = Array.from({ length: CITES }, (_, i) => i + 1).reduce(
	(text, k) => text.replace(`- [ ] Step ${k}:`, `- [x] Step ${k}:`),
	CHECKLIST_PLAN,
);

describePlan(
	"a checklist ticked off by edits, no step cited in text",
	CHECKLIST_PLAN,
	tickSteps(),
	tickId(CITES),
	TICKED_PLAN,
);

/**
 * The plan scenario: `plan` written and used by `steps` up to call `lastCite` (cited in text, or its
 * items ticked off by edits), then filler; `onDisk` is the plan's file at the end.
 */
function describePlan(shape: string, plan: string, steps: readonly Step[], lastCite: string, onDisk = plan): void {
	describe(`working-set policy: a plan the model wrote stays raw while the model cites it (${shape})`, () => {
		const pi = scriptedPi(stepsScript(steps, "plan followed"), { contextWindow: WINDOW, settings: SETTINGS });
		let run: RunResult;
		let requests: CapturedRequest[] = [];
		let folds: RequestFolds[] = [];

		before(async () => {
			({ run, requests, folds } = await ranScenario(pi, "Write the migration plan, then follow it."));
		});

		it("the run writes the plan, cites it, runs the filler and ends", async () => {
			ranToTheEnd(run, pi.server.errors, requests, steps, "plan followed");
			assert.equal(await readFile(join(pi.sandbox.cwd, PLAN_PATH), "utf8"), onDisk);
		});

		it("the write's content goes out raw in every request while the model cites the plan, while the filler folds", () => {
			const writtenAt = requests.findIndex((r) => planContent(r) !== undefined);
			assert.ok(writtenAt > 0, "no request carries the write");
			const lastCiteAt = firstWith(requests, lastCite);
			for (let i = writtenAt; i <= lastCiteAt; i++) {
				assert.equal(planContent(requests[i]), plan, `request ${i}: the plan went out folded while cited`);
			}
			assert.ok(folds[lastCiteAt].folded.has(fillerId(1)), `filler 1 never folded: ${folds[lastCiteAt].signature}`);
			assert.ok(folds[lastCiteAt].folded.size >= 2, `one filler folded: ${folds[lastCiteAt].signature}`);
		});

		it("once the citing stops, the plan stays raw for useWindow model messages, then an event folds it", () => {
			const lastCiteAt = firstWith(requests, lastCite);
			let foldedAt = -1;
			for (let i = lastCiteAt; i < requests.length; i++) {
				const since = modelMessagesSince(requests[i], lastCite);
				const content = planContent(requests[i]) ?? "";
				if (since < USE_WINDOW)
					assert.equal(content, plan, `request ${i}: folded ${since} messages after the citing`);
				if (TAG_AT_HEAD.test(content) && foldedAt < 0) foldedAt = i;
				if (foldedAt >= 0)
					assert.match(content, TAG_AT_HEAD, `request ${i}: unfolded again after request ${foldedAt}`);
			}
			assert.ok(foldedAt > lastCiteAt, "the plan never folded after the citing stopped");
		});
	});
}
