/**
 * What `npm pack` ships (issue 7): the `files` allow-list in package.json keeps the tarball to the
 * extension's source, its docs and the user documents. Read from `npm pack --dry-run --json`, run
 * offline in the repository root. And the shipped CHANGELOG.md has an entry Pi can match to the
 * package version.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { parsePackJson, runNpm } from "../e2e/harness/npm.ts";
import { REPO_ROOT } from "../e2e/harness/pi-runner.ts";

describe("npm pack --dry-run", () => {
	let scratch: string;
	let paths: string[];
	let manifest: { pi: { extensions: string[] } };

	before(async () => {
		scratch = await mkdtemp(join(tmpdir(), "cf-pack-"));
		const packed = runNpm(["pack", "--dry-run", "--json"], REPO_ROOT, scratch);
		assert.equal(packed.status, 0, packed.stderr);
		paths = parsePackJson(packed.stdout).files.map((f) => f.path);
		manifest = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
	});
	after(() => rm(scratch, { recursive: true, force: true }));

	it("ships no tests, benchmarks, CI or scripts", () => {
		const stray = paths.filter((p) => /^(test|bench|\.ci|scripts)\//.test(p));
		assert.deepEqual(stray, []);
	});

	it("ships the extension entry Pi loads, the licence, the README and the changelog", () => {
		const wanted = [
			...manifest.pi.extensions.map((e) => e.replace(/^\.\//, "")),
			"LICENSE",
			"README.md",
			"CHANGELOG.md",
		];
		for (const file of wanted) assert.ok(paths.includes(file), `${file} is not in the tarball`);
	});

	it("ships every source file, so the entry's imports resolve in the installed copy", async () => {
		const sources = (await readdir(join(REPO_ROOT, "src"), { recursive: true }))
			.filter((p) => p.endsWith(".ts"))
			.map((p) => `src/${p.split(sep).join("/")}`);
		assert.ok(sources.length > 20, `only ${sources.length} source files found`);
		assert.deepEqual(
			sources.filter((p) => !paths.includes(p)),
			[],
		);
	});
});

describe("CHANGELOG.md", () => {
	it("has a heading for the package version in Pi's format, which Pi matches its update notes against", async () => {
		const { version } = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
		const changelog = await readFile(join(REPO_ROOT, "CHANGELOG.md"), "utf8");
		const headings = changelog.split("\n").filter((line) => /^## \[?\d+\.\d+\.\d+\]?/.test(line));
		assert.ok(
			headings.some((line) => line.startsWith(`## [${version}]`)),
			`no "## [${version}]" heading among ${JSON.stringify(headings)}`,
		);
	});
});
