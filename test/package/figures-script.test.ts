/**
 * `npm run figures` (scripts/figures.ts) writes the docs' figures, which are over all three corpora:
 * with one absent (a fresh clone, or a variable naming no folder) it refuses, writing nothing and
 * saying which is absent, where it once rewrote README.md and docs/defaults.md from the two project
 * sessions. Its corpora are the tests' own (test/corpus/corpora.ts), the variables included.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { corpusSessions } from "../../scripts/figures.ts";
import { listSessions, REPO_ROOT } from "../corpus/corpora.ts";

describe("npm run figures", () => {
	it("with a corpus absent, writes nothing, names it and exits 2", () => {
		const docs = ["README.md", "docs/defaults.md"].map((f) => readFileSync(join(REPO_ROOT, f), "utf8"));
		const env: NodeJS.ProcessEnv = { ...process.env, CONTEXTFOLD_SESSIONS_MORE: join(REPO_ROOT, "no-such-folder") };
		delete env.NODE_TEST_CONTEXT;
		const run = spawnSync(process.execPath, [join(REPO_ROOT, "scripts", "figures.ts")], {
			cwd: REPO_ROOT,
			encoding: "utf8",
			env,
		});
		assert.equal(run.status, 2, run.stderr);
		assert.match(
			run.stderr,
			/^figures: the docs' figures are over every corpus, and one is absent; nothing written\n/,
		);
		assert.match(run.stderr, /more: absent \(CONTEXTFOLD_SESSIONS_MORE=.*no-such-folder is not a folder\)/);
		const after = ["README.md", "docs/defaults.md"].map((f) => readFileSync(join(REPO_ROOT, f), "utf8"));
		assert.deepEqual(after, docs, "the docs were written");
	});

	it("replays the sessions the tests list, the corpus variables included", () => {
		assert.deepEqual(
			corpusSessions().map((s) => s.path),
			listSessions().map((s) => s.path),
		);
		for (const s of corpusSessions()) assert.match(s.name, /^(project|shared|more)\/[^/]+$/);
	});
});
