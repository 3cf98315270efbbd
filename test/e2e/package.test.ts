/**
 * context-fold as a package people install (issue 7), through the real `pi` CLI:
 * - installed from the tarball `npm pack` makes, with `pi install npm:context-fold@file:<tarball>`
 *   (npm offline, into a clean agent dir): the installed copy has no node_modules of its own (Pi
 *   supplies its own packages), and `pi -p` WITHOUT `-e` folds: a later request carries a
 *   `{#code FOLDED}` digest of an earlier bash result;
 * - the name Pi shows for it: the startup banner's `[Extensions]` list and `pi config` (both only in
 *   the terminal UI, read under tmux) say `context-fold`, never `pi`, for the installed tarball and
 *   for a checkout loaded with `-e <dir>`, `-e <entry file>` and `pi install <dir>`.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ANY_TAG, FoldTracker } from "./harness/fold-wire.ts";
import {
	type CapturedRequest,
	type ModelServer,
	type Reply,
	startModelServer,
	toolNamesOf,
} from "./harness/model-server.ts";
import { npmIsolation, parsePackJson, runNpm } from "./harness/npm.ts";
import { createPiSandbox, type PiSandbox, REPO_ROOT } from "./harness/pi-runner.ts";
import { bannerExtensionLabels, configItemNames, readTuiScreen, tmuxAvailable } from "./harness/tui.ts";

const WINDOW = 20_000;
const BATCHES = 6;
const ENTRY = "src/context-fold/index.ts";
const NO_TMUX = tmuxAvailable() ? false : "tmux is not installed (the banner and pi config exist only in the TUI)";
/** Settings that make the interactive UI list loaded extensions at startup. */
const SHOW_RESOURCES = { quietStartup: false };

const batchId = (k: number) => `toolu_pkg_batch_${k}`;

/** Bash command printing 400 ok lines of batch `k`. */
function batchCommand(k: number): string {
	return `for i in $(seq 1 400); do echo "package batch ${k} line $i ok"; done`;
}

/** The scripted model: six big bash outputs, then an answer. A function of the request only. */
function batchScript() {
	const tracker = new FoldTracker();
	return (req: CapturedRequest): Reply => {
		const folds = tracker.observe(req);
		if (req.index > 20) return { text: "guard: too many requests" };
		for (let k = 1; k <= BATCHES; k++) {
			if (!folds.results.some((r) => r.id === batchId(k))) {
				return { toolCalls: [{ id: batchId(k), name: "bash", args: { command: batchCommand(k) } }] };
			}
		}
		return { text: "batches done" };
	};
}

/** The banner labels of a TUI started with `argv`. */
async function bannerLabels(sandbox: PiSandbox, argv: string[]): Promise<string[]> {
	const screen = await readTuiScreen(sandbox, argv, (s) => bannerExtensionLabels(s) !== undefined);
	return bannerExtensionLabels(screen) ?? [];
}

/** The resource names `pi config` lists in the sandbox. */
async function configNames(sandbox: PiSandbox): Promise<string[]> {
	const screen = await readTuiScreen(sandbox, ["config"], (s) => configItemNames(s).length > 0);
	return configItemNames(screen);
}

describe("context-fold installed from its npm tarball", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let tarball: string;
	let source: string;

	before(async () => {
		server = await startModelServer(batchScript());
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: SHOW_RESOURCES,
			sharedCompileCache: false,
		});
		const packDir = join(sandbox.root, "pack");
		await mkdir(packDir);
		const packed = runNpm(["pack", "--json", "--pack-destination", packDir], REPO_ROOT, sandbox.root);
		assert.equal(packed.status, 0, packed.stderr);
		tarball = join(packDir, parsePackJson(packed.stdout).filename);
		source = `npm:context-fold@file:${tarball}`;
		const installed = await sandbox.runCommand(["install", source], {
			env: npmIsolation(sandbox.root),
			timeoutMs: 60_000,
		});
		assert.equal(installed.code, 0, `pi install failed:\n${installed.stdout}\n${installed.stderr}`);
	});
	after(async () => {
		await sandbox?.cleanup();
		await server?.close();
	});

	it("is recorded in settings.json and installed without dependencies of its own", async () => {
		const settings = JSON.parse(await readFile(join(sandbox.agentDir, "settings.json"), "utf8"));
		assert.deepEqual(settings.packages, [source]);
		const modules = join(sandbox.agentDir, "npm", "node_modules");
		assert.deepEqual(
			(await readdir(modules)).filter((name) => !name.startsWith(".")),
			["context-fold"],
		);
		const root = join(modules, "context-fold");
		assert.ok(existsSync(join(root, ENTRY)), "the entry is not installed");
		assert.ok(!existsSync(join(root, "node_modules")), "the installed copy has a node_modules of its own");
		assert.ok(!existsSync(join(root, "test")), "tests were installed");
	});

	it("folds on the wire in pi -p without -e", async () => {
		const run = await sandbox.runPrint({ prompt: "Run the six batches.", packages: true, timeoutMs: 60_000 });
		assert.equal(run.code, 0, `pi -p failed:\n${run.stderr}`);
		assert.match(run.stdout, /batches done/);
		assert.doesNotMatch(run.stderr, /Failed to load extension/);
		const tracker = new FoldTracker();
		const folded = server.requests.map((req) => tracker.observe(req)).filter((f) => f.folded.size > 0);
		assert.ok(folded.length > 0, "no request carries a folded tool result");
		// Declared from the first digest on, not before.
		assert.ok(!toolNamesOf(server.requests[0]).includes("recall_folded"), "recall_folded is declared before a fold");
		assert.ok(
			toolNamesOf(server.requests[folded[0].index]).includes("recall_folded"),
			"recall_folded is not declared",
		);
		const digest = folded[0].folded.get(batchId(1));
		assert.ok(digest, "batch 1 is not folded in the first folded request");
		assert.match(digest.text, ANY_TAG);
		assert.match(digest.text, /^\{#[0-9a-z]{8} FOLDED\} bash: 400 lines/);
	});

	it("is listed as context-fold in the startup banner", { skip: NO_TMUX }, async () => {
		const labels = await bannerLabels(sandbox, sandbox.args({ mode: "tui", packages: true }));
		// Pi names a package's extension `<source>:<folder of its index.ts>`.
		assert.deepEqual(labels, [`context-fold@file:${tarball}:src/context-fold`]);
	});

	it("is listed as context-fold by pi config", { skip: NO_TMUX }, async () => {
		const names = await configNames(sandbox);
		assert.ok(names.includes("context-fold/index.ts"), `pi config lists ${JSON.stringify(names)}`);
		assert.ok(!names.includes("pi/index.ts"), `pi config lists ${JSON.stringify(names)}`);
	});
});

describe("context-fold loaded from a checkout", { skip: NO_TMUX }, () => {
	let server: ModelServer;
	let sandbox: PiSandbox;

	before(async () => {
		server = await startModelServer(() => ({ text: "unused" }));
		// The checkout's files load from their own paths, as in every other e2e sandbox: its compile
		// cache serves them (a cache of this sandbox's own compiled the extension again, about 3 s of CPU).
		sandbox = await createPiSandbox({ serverUrl: server.url, contextWindow: WINDOW, settings: SHOW_RESOURCES });
	});
	after(async () => {
		await sandbox?.cleanup();
		await server?.close();
	});

	it("is listed as context-fold with pi -e <checkout dir>", async () => {
		assert.deepEqual(await bannerLabels(sandbox, sandbox.args({ mode: "tui", extensions: ["."] })), ["context-fold"]);
	});

	it("is listed as context-fold with pi -e <entry file>", async () => {
		assert.deepEqual(await bannerLabels(sandbox, sandbox.args({ mode: "tui", extensions: [ENTRY] })), [
			"context-fold",
		]);
	});

	it("is listed as context-fold after pi install <checkout dir>", async () => {
		const installed = await sandbox.runCommand(["install", REPO_ROOT]);
		assert.equal(installed.code, 0, `pi install failed:\n${installed.stdout}\n${installed.stderr}`);
		assert.deepEqual(await bannerLabels(sandbox, sandbox.args({ mode: "tui", packages: true })), ["context-fold"]);
		const names = await configNames(sandbox);
		assert.ok(names.includes("context-fold/index.ts"), `pi config lists ${JSON.stringify(names)}`);
		assert.ok(!names.includes("pi/index.ts"), `pi config lists ${JSON.stringify(names)}`);
	});
});
