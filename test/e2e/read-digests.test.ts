/**
 * What a folded read's digest says, through real pi against the scripted model server, the digests
 * read off the captured request bodies:
 * - a read from an offset the model sent as a string (`"640"`), which Pi 1.6 coerces to the number
 *   before its read tool runs, is numbered as in the file from that line, as a number offset is;
 * - a long file read keeps the strings the file repeats most, most frequent first, and a shell print
 *   of the same file keeps none.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { FREQUENT_LIMITS } from "../../src/core/frequent-strings.ts";
import { FoldTracker } from "./harness/fold-wire.ts";
import type { CapturedRequest, Reply } from "./harness/model-server.ts";
import { scriptedPi } from "./harness/scripted.ts";

const FILLERS = 14;
const tracker = new FoldTracker();

/** A module that calls `this.ledger.settle` on every line after its import, `this.ledger.reopen` on every fourth. */
const MODULE = [
	'import { Ledger } from "./store.ts";',
	...Array.from(
		{ length: 300 },
		(_, i) =>
			`\tconst entry_${i} = this.ledger.settle(batch_${i % 9}, cursor);${i % 4 === 0 ? ` this.ledger.reopen(entry_${i});` : ""}`,
	),
].join("\n");

/** The calls whose results must fold: the two reads and the shell print. */
const CALLS: readonly { id: string; name: string; args: Record<string, unknown> }[] = [
	{ id: "toolu_str", name: "read", args: { path: "big.txt", offset: "640" } },
	{ id: "toolu_read", name: "read", args: { path: "ledger.ts" } },
	{ id: "toolu_cat", name: "bash", args: { command: "cat ledger.ts" } },
];

/** Makes each call of CALLS, then runs fillers until every one of them folded. */
function script(req: CapturedRequest): Reply {
	const facts = tracker.observe(req);
	const has = (id: string) => facts.results.some((r) => r.id === id);
	const next = CALLS.find((c) => !has(c.id));
	if (next) return { toolCalls: [next] };
	if (CALLS.every((c) => tracker.codes.has(c.id))) return { text: "done" };
	for (let k = 1; k <= FILLERS; k++)
		if (!has(`toolu_f${k}`))
			return {
				toolCalls: [
					{
						id: `toolu_f${k}`,
						name: "bash",
						args: { command: `for i in $(seq 1 400); do echo "filler ${k} line $i ok"; done` },
					},
				],
			};
	return { text: "never folded" };
}

describe("a folded read's digest", () => {
	const pi = scriptedPi(script, { contextWindow: 20_000, settings: { compaction: { enabled: false } } });

	before(async () => {
		const body = Array.from({ length: 700 }, (_, i) =>
			i + 1 === 650 ? "line 650 TypeError: boom at line 650" : `line ${i + 1} value ok`,
		).join("\n");
		await writeFile(join(pi.sandbox.cwd, "big.txt"), body);
		await writeFile(join(pi.sandbox.cwd, "ledger.ts"), MODULE);
		await pi.sandbox.runPrint({ prompt: "Read the files.", extensions: ["."], timeoutMs: 90_000 });
	});

	/** The first digest the captured requests show for `id`. */
	function digestOf(id: string): string {
		const digest = pi.server.requests.map((req) => tracker.observe(req).folded.get(id)?.text).find(Boolean);
		assert.ok(digest, `${id} never folded`);
		return digest;
	}

	it("numbers a read from a string offset as in the file, from that line", () => {
		assert.match(tracker.raw.get("toolu_str")?.split("\n")[0] ?? "", /^line 640 value ok$/, "Pi read from line 640");
		const digest = digestOf("toolu_str");
		assert.match(digest, /read: 700 lines, L640-700 held/, digest);
		assert.match(digest, /\nL650: line 650 TypeError: boom at line 650/, digest);
	});

	it("folds a long file read to a digest that keeps the strings it repeats most, most frequent first", () => {
		assert.ok(MODULE.length >= FREQUENT_LIMITS.minChars);
		assert.equal(tracker.raw.get("toolu_read"), MODULE, "Pi read the whole module");
		const digest = digestOf("toolu_read");
		assert.match(digest, / Strings: this\.ledger\.settle, this\.ledger\.reopen, /, digest);
		assert.ok(digest.length < MODULE.length / 5, "still a small share of the file");
	});

	it("keeps no strings line in the digest of a shell print of the same file", () => {
		const digest = digestOf("toolu_cat");
		assert.match(digest, /FOLDED\} bash: /, digest);
		assert.ok(!digest.includes("Strings:"), digest);
	});
});
