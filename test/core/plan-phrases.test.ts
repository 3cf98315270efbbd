/**
 * The phrases a model cites a plan by (src/core/plan-phrases.ts): each heading's and list item's first
 * words, numbering, markup and small words out, only in prose documents; and a citation holds one as
 * whole words.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cites, citingProse, stepPhrases } from "../../src/core/plan-phrases.ts";

const PLAN = [
	"# Migration plan",
	"## Step 1: Parse the manifest",
	"## Step 2 Resolve versions (all of them)",
	"1. Lock the registry",
	"2) Fetch tarballs from the mirror, then verify",
	"- [ ] Write the **lockfile**",
	"- [x] Add API endpoint",
	"- a plain bullet is no step",
	"## A. Intro",
	"### Phase 3 — Rotate keys",
	"Body text: Prune the cache.",
].join("\n");

describe("stepPhrases", () => {
	it("takes each heading's and list item's first words, numbering, markup and small words out", () => {
		assert.deepEqual(stepPhrases("PLAN.md", PLAN), [
			"migration plan",
			"parse manifest",
			"resolve versions",
			"lock registry",
			"fetch tarballs",
			"write lockfile",
			"add api endpoint",
			"rotate keys",
		]);
	});

	it("reads plans only: prose documents named as a plan or holding a checklist or numbered steps", () => {
		assert.deepEqual(stepPhrases("notes/TODO.md", "1. Clean the cache dir"), ["clean cache"]);
		assert.deepEqual(stepPhrases("docs/steps.txt", "# Build the natives"), ["build natives"]);
		assert.deepEqual(stepPhrases("docs/rollout.md", "# Rollout\n- [ ] Swap the brokers"), ["swap brokers"]);
		assert.deepEqual(stepPhrases("docs/rollout.md", "## Phase 2: Swap the brokers"), ["swap brokers"]);
		const readme = "# Tool\n## Getting started\n2. Run the tests\n## Next steps";
		assert.deepEqual(stepPhrases("README.md", readme), [], "a README's sections are no steps");
		assert.deepEqual(stepPhrases("src/tool.py", "# Step 1: parse the arguments"), [], "a comment");
		assert.deepEqual(stepPhrases("deploy.sh", "# Build the natives"), []);
		assert.deepEqual(stepPhrases("Dockerfile", "# Install dependencies"), []);
		assert.deepEqual(stepPhrases("CMakeLists.txt", "# Find dependencies\n# Add executable"), []);
		// Elsewhere only the lines that are steps: a README's one Step heading or feature checklist makes
		// no other heading a step.
		const stepped = `${readme}\n### Step 3: Configure the proxy\n- [x] Dark mode`;
		assert.deepEqual(stepPhrases("README.md", stepped), ["configure proxy", "dark mode"]);
		for (const name of ["inspect.md", "designer.md", "planet.md", "RELEASE_NOTES.md"])
			assert.deepEqual(stepPhrases(name, "## Run the tests"), [], `${name} is not named as a plan`);
		assert.deepEqual(stepPhrases("docs/IMPLEMENTATION-PLAN.md", "## Run the tests"), ["run tests"]);
	});
});

describe("cites", () => {
	it("finds a step's phrase in a model's prose as whole words, in any case and around its numbering", () => {
		const prose = citingProse("Step 3 (Lock the registry) is done; starting Step 4: **Fetch** tarballs.");
		assert.ok(cites(prose, "lock registry"));
		assert.ok(cites(prose, "fetch tarballs"));
		assert.ok(!cites(prose, "parse manifest"));
		assert.ok(!cites(citingProse("unlock registry_v2 now"), "lock registry"), "whole words only");
	});
});
