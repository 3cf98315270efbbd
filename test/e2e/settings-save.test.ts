/**
 * `/context-fold settings <knob> <value>` through the real `pi -p`: which settings.json a change goes
 * to and whether the next Pi process reads it back. A project's `.pi/settings.json` is written only
 * while Pi trusts the project (`--approve`); untrusted (the harness's `defaultProjectTrust: "never"`),
 * Pi ignores that file, so the change goes to the global one even where the project file sets the knob.
 * The value `default` removes a saved knob. A `cacheTtlByProvider` entry is judged against the
 * providers of Pi's model registry.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type ModelServer, startModelServer } from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox } from "./harness/pi-runner.ts";

const WAIT_MS = 60_000;

describe("/context-fold settings <knob> <value> in pi -p", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let projectFile: string;
	before(async () => {
		server = await startModelServer(() => ({ text: "ok" }));
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: 200_000,
			settings: { "context-fold": { policy: "working-set" } },
		});
		mkdirSync(join(sandbox.cwd, ".pi"), { recursive: true });
		projectFile = join(sandbox.cwd, ".pi", "settings.json");
	});
	after(async () => {
		await server?.close();
		await sandbox?.cleanup();
	});

	/** Runs one `/context-fold` command line; returns what it printed (Pi moves it to stderr). */
	/** What `/context-fold <line>` prints in pi -p; pi exits 0, or 1 where the save is `refused`. */
	const command = async (
		line: string,
		args: string[] = [],
		env?: Record<string, string>,
		refused = false,
	): Promise<string> => {
		const r = await sandbox.runPrint({
			prompt: `/context-fold ${line}`,
			extensions: ["."],
			args,
			env,
			timeoutMs: WAIT_MS,
		});
		assert.equal(r.code, refused ? 1 : 0, r.stderr);
		return r.stderr + r.stdout;
	};
	const globalSection = () =>
		JSON.parse(readFileSync(join(sandbox.agentDir, "settings.json"), "utf8"))["context-fold"] as Record<
			string,
			unknown
		>;
	const projectSection = () =>
		JSON.parse(readFileSync(projectFile, "utf8"))["context-fold"] as Record<string, unknown>;

	it("saves to the global settings.json while the project is not trusted, and the next session reads it", async () => {
		writeFileSync(projectFile, JSON.stringify({ "context-fold": { hotTail: 5000 } }));
		const saved = await command("settings hotTail 12000");
		assert.ok(saved.includes(`hotTail = 12000, saved to ${join(sandbox.agentDir, "settings.json")};`), saved);
		assert.deepEqual(projectSection(), { hotTail: 5000 }, "the untrusted project's file is left alone");
		assert.equal(globalSection().hotTail, 12000);
		assert.match(await command("settings"), /hotTail +12000 +\(saved\)/, "the next session reads the value");
	});

	it("saves to the project's settings.json that sets the knob while Pi trusts the project", async () => {
		writeFileSync(projectFile, JSON.stringify({ "context-fold": { hotTail: 5000 } }));
		const saved = await command("settings hotTail 9000", ["--approve"]);
		assert.ok(saved.includes(`hotTail = 9000, saved to ${projectFile};`), saved);
		assert.deepEqual(projectSection(), { hotTail: 9000 });
		assert.match(await command("settings", ["--approve"]), /hotTail +9000 +\(saved\)/);
	});

	it("unsets a saved knob with `default`: the key leaves the file and the next session has the default", async () => {
		const unset = await command("settings hotTail default");
		assert.ok(unset.includes(`hotTail unset (removed from ${join(sandbox.agentDir, "settings.json")});`), unset);
		assert.equal(globalSection().hotTail, undefined);
		assert.equal(globalSection().policy, "working-set", "the section's other knobs are kept");
		assert.deepEqual(projectSection(), { hotTail: 9000 }, "the untrusted project's file is left alone");
		assert.match(await command("settings"), /hotTail +4000 +\(default\)/);
	});

	it("a bad value in a trusted project's settings.json keeps the global file's value, naming both files", async () => {
		const globalFile = join(sandbox.agentDir, "settings.json");
		const global = JSON.parse(readFileSync(globalFile, "utf8"));
		writeFileSync(
			globalFile,
			JSON.stringify({ ...global, "context-fold": { ...global["context-fold"], hotTail: 5000 } }),
		);
		writeFileSync(projectFile, JSON.stringify({ "context-fold": { hotTail: "bad", coldTail: "worse" } }));
		const out = await command("settings", ["--approve"]);
		assert.match(out, /hotTail +5000 +\(saved\)/, out);
		const refusal = out.split("\n").find((line) => line.includes('hotTail="bad"')) ?? "";
		assert.ok(
			refusal.includes(`settings context-fold.hotTail="bad" in ${projectFile} is not a valid token count`),
			out,
		);
		assert.ok(refusal.endsWith(`; using 5000 (${globalFile})`), refusal);
		assert.ok(
			out.includes(`settings context-fold.coldTail="worse" in ${projectFile} is not a valid token count`),
			"a value no file beneath sets falls back to the default",
		);
		assert.match(out, /coldTail +1000 +\(default\)/);
	});

	it("refuses a negative count naming its least value; takes 0.5.1's names and words as this version's", async () => {
		const negative = await command("settings useWindow -1", [], undefined, true);
		assert.ok(
			negative.includes(
				'useWindow not changed: "-1" is not a valid number of messages (a whole number of at least 0)',
			),
			negative,
		);
		const word = await command("settings compact det");
		assert.ok(word.includes(`compact = fold, saved to ${join(sandbox.agentDir, "settings.json")};`), word);
		assert.equal(globalSection().compact, "fold", "saved in this version's word");
		const name = await command("settings foldStep 0.2");
		assert.ok(name.includes("step (0.5.1's foldStep) = 0.2, saved to"), name);
		assert.equal(globalSection().step, 0.2);
		assert.equal(globalSection().foldStep, undefined, "saved under this version's name");
	});

	it("removes a saved value an environment variable overrides, saying the variable still applies", async () => {
		await command("settings hotTail 7000");
		const out = await command("settings hotTail default", [], { CONTEXTFOLD_HOT_TAIL: "6000" });
		assert.ok(
			out.includes(
				`hotTail unset (removed from ${join(sandbox.agentDir, "settings.json")}); CONTEXTFOLD_HOT_TAIL still sets it in the environment (6000)`,
			),
			out,
		);
		assert.equal(globalSection().hotTail, undefined);
		const refused = await command("settings hotTail 5000", [], { CONTEXTFOLD_HOT_TAIL: "6000" }, true);
		assert.ok(refused.includes("a saved value would not apply"), "a value to save is still refused");
	});

	it("a trusted project's settings.json that is no JSON leaves saves and removals to the global file", async () => {
		writeFileSync(projectFile, "{ broken");
		const saved = await command("settings hotTail 7000", ["--approve"]);
		assert.ok(saved.includes(`hotTail = 7000, saved to ${join(sandbox.agentDir, "settings.json")};`), saved);
		assert.equal(globalSection().hotTail, 7000);
		const unset = await command("settings hotTail default", ["--approve"]);
		assert.ok(unset.includes(`hotTail unset (removed from ${join(sandbox.agentDir, "settings.json")});`), unset);
		assert.equal(readFileSync(projectFile, "utf8"), "{ broken", "the broken file is left as it is");
	});

	it("names a cacheTtlByProvider entry that matches no provider in Pi's model registry, in any case", async () => {
		const out = await command("settings", [], { CONTEXTFOLD_CACHE_TTL_BY_PROVIDER: "Anthropic=3600, antropic=3600" });
		const named = out.split("\n").filter((line) => line.includes("names no provider"));
		assert.deepEqual(named, [
			'context-fold: cacheTtlByProvider entry "antropic" names no provider Pi knows, so it never applies (did you mean anthropic?)',
		]);
	});
});
