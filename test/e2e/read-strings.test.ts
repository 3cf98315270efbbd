/**
 * A long file read folds to a digest that keeps the strings the file repeats most, most frequent
 * first, and a shell print of the same file keeps none: real pi against the scripted model server,
 * the digests read off the captured request bodies.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { FREQUENT_LIMITS } from "../../src/core/frequent-strings.ts";
import { FoldTracker } from "./harness/fold-wire.ts";
import { type CapturedRequest, type ModelServer, type Reply, startModelServer } from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox } from "./harness/pi-runner.ts";

const FILLERS = 14;
let server: ModelServer;
let sandbox: PiSandbox;
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

/** Reads the module, prints it through the shell, then runs fillers until both fold. */
function script(req: CapturedRequest): Reply {
	const facts = tracker.observe(req);
	const has = (id: string) => facts.results.some((r) => r.id === id);
	const call = (id: string, name: string, args: Record<string, unknown>): Reply => ({
		toolCalls: [{ id, name, args }],
	});
	if (!has("toolu_read")) return call("toolu_read", "read", { path: "ledger.ts" });
	if (!has("toolu_cat")) return call("toolu_cat", "bash", { command: "cat ledger.ts" });
	if (!tracker.codes.has("toolu_read") || !tracker.codes.has("toolu_cat")) {
		for (let k = 1; k <= FILLERS; k++)
			if (!has(`toolu_f${k}`))
				return call(`toolu_f${k}`, "bash", {
					command: `for i in $(seq 1 400); do echo "filler ${k} line $i ok"; done`,
				});
		return { text: "never folded" };
	}
	return { text: "done" };
}

before(async () => {
	server = await startModelServer(script);
	sandbox = await createPiSandbox({
		serverUrl: server.url,
		contextWindow: 20_000,
		settings: { compaction: { enabled: false } },
	});
	await writeFile(join(sandbox.cwd, "ledger.ts"), MODULE);
	await sandbox.runPrint({ prompt: "Read the ledger.", extensions: ["."], timeoutMs: 90_000 });
});

after(async () => {
	await server?.close();
	await sandbox?.cleanup();
});

/** The first digest the captured requests show for `id`. */
function digestOf(id: string): string {
	const digest = server.requests.map((req) => tracker.observe(req).folded.get(id)?.text).find(Boolean);
	assert.ok(digest, `${id} never folded`);
	return digest;
}

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
