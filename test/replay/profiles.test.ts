/**
 * The replay's policy name for each fold profile: `context-fold` is the default profile, and
 * `context-fold:economic`, `context-fold:ladder` and `context-fold:working-set` set the extension's
 * `policy` whatever `--set policy` says, keeping every other `--set` knob. Replayed on the project's
 * debug-branchy session (140k window), each name gives its own profile's run: the plain name the
 * working-set one, `context-fold:economic` the same run as `--set policy=economic`, and the three
 * profiles three different runs (there the ladder never reaches its threshold, and the working-set
 * profile keeps raw, longer than the economic one, what the model still uses). An unknown profile is
 * refused with the names that exist. By default every profile is replayed beside plain Pi and the
 * peers: the command's JSON names each run's policy, and its HTML scatter holds a labelled point of
 * its own colour for each, labels apart even where the points coincide.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { resolveConfig } from "../../src/adapters/pi/config.ts";
import { idleKnobs, runReplay } from "../../src/replay/cli.ts";
import { parseArgs, UsageError } from "../../src/replay/options.ts";
import type { ReplayPolicy } from "../../src/replay/policy-run.ts";
import type { PolicyFigures, SessionReport } from "../../src/replay/report.ts";
import { replayCommand } from "./replay-command.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const DEBUG_BRANCHY = fileURLToPath(new URL("../fixtures/sessions/debug-branchy.jsonl", import.meta.url));
const EVERY = [
	"pi",
	"context-fold",
	"context-fold:economic",
	"context-fold:ladder",
	"compact-only",
	"mask-last-5",
	"clear-tool-uses",
];

/** The `policy` setting and the other knobs a context-fold run hands the extension. */
function settingsOf(policy: ReplayPolicy): Record<string, unknown> {
	assert.equal(policy.kind, "context-fold", policy.name);
	return policy.kind === "context-fold" ? policy.settings : {};
}

test("every profile name sets its profile over --set policy and keeps the other knobs", () => {
	const options = parseArgs([
		"s.jsonl",
		"--set",
		"policy=ladder",
		"--set",
		"hotTail=5000",
		"--policy",
		"context-fold:economic,context-fold:ladder,context-fold:working-set,context-fold",
	]);
	assert.deepEqual(
		options.policies.map((p) => [p.name, settingsOf(p)]),
		[
			["context-fold:economic", { policy: "economic", hotTail: 5000 }],
			["context-fold:ladder", { policy: "ladder", hotTail: 5000 }],
			["context-fold:working-set", { policy: "working-set", hotTail: 5000 }],
			["context-fold", { policy: "ladder", hotTail: 5000 }],
		],
	);
	assert.deepEqual(settingsOf(parseArgs(["s.jsonl", "--policy", "context-fold"]).policies[0]), {});
});

test("a --set knob no replayed profile reads is named, with the profiles that do", () => {
	const idle = (...args: string[]) => idleKnobs(parseArgs(["s.jsonl", ...args]));
	assert.deepEqual(idle("--policy", "pi,context-fold", "--set", "foldAt=0.1", "--set", "hotTail=5000"), [
		"--set foldAt changes nothing in this replay: only the ladder profile reads it, and it runs working-set",
	]);
	assert.deepEqual(idle("--policy", "pi,context-fold,context-fold:ladder", "--set", "foldAt=0.1"), []);
	assert.deepEqual(idle("--policy", "pi,context-fold:ladder", "--set", "minEvent=9000"), [
		"--set minEvent changes nothing in this replay: only the working-set and economic profiles read it, and it runs ladder",
	]);
	assert.deepEqual(idle("--policy", "pi,mask-last-5", "--set", "foldAt=0.1"), [
		"--set foldAt changes nothing in this replay: no context-fold policy runs",
	]);
	// compact-only runs the extension under fixed knobs of its own: a knob given changes nothing there.
	assert.deepEqual(idle("--policy", "pi,compact-only", "--set", "foldAt=0.1"), [
		"--set foldAt changes nothing in this replay: no context-fold policy runs (compact-only runs fixed knobs)",
	]);
	assert.deepEqual(idle("--policy", "pi,context-fold", "--set", "policy=ladder", "--set", "foldAt=0.1"), []);
	assert.deepEqual(idle("--policy", "pi,context-fold", "--set", "trigger=5000", "--set", "keep=1"), [
		"--set trigger changes nothing in this replay: only clear-tool-uses reads it",
		"--set keep changes nothing in this replay: only clear-tool-uses reads it",
	]);
	assert.deepEqual(idle("--policy", "pi,clear-tool-uses", "--set", "clearAtLeast=0"), []);
	// The replayed model's provider is the replay's own: a lifetime for a named provider never applies.
	assert.deepEqual(idle("--policy", "pi,context-fold", "--set", "cacheTtlByProvider=anthropic=60"), [
		'--set cacheTtlByProvider changes nothing in this replay: the replayed model\'s provider is "replay"; cacheTtlSeconds sets its cache lifetime',
	]);
	assert.deepEqual(idle("--policy", "pi,context-fold", "--set", "cacheTtlSeconds=60"), []);
	assert.deepEqual(idle("--policy", "pi,context-fold", "--set", "cacheTtlByProvider=anthropic=60, replay=60"), []);
});

test("a profile's name is read in any case, as the extension reads the policy knob", () => {
	const [run] = parseArgs(["s.jsonl", "--policy", "context-fold:Economic"]).policies;
	assert.equal(settingsOf(run).policy, "economic");
	assert.equal(settingsOf(parseArgs(["s.jsonl", "--set", "policy=Ladder"]).policies[1]).policy, "Ladder");
	assert.equal(resolveConfig({ policy: "Ladder" }, {}).config.policy, "ladder");
});

test("0.5.1's names and words are read, as the extension reads them, and said", () => {
	const options = parseArgs(["s.jsonl", "--set", "foldStep=0.3", "--set", "compact=det"]);
	assert.deepEqual(options.notices, [
		"--set foldStep is 0.5.1's name; rename it step (read this time)",
		'--set compact="det" is 0.5.1\'s word for "fold"; read as that',
	]);
	const settings = settingsOf(options.policies[1]);
	const read = resolveConfig(settings, {}).config;
	assert.equal(read.step, 0.3);
	assert.equal(read.compact, "fold");
	assert.deepEqual(parseArgs(["s.jsonl", "--set", "step=0.3"]).notices, []);
});

test("the default policy list holds every profile beside plain Pi and the peers", () => {
	assert.deepEqual(
		parseArgs(["s.jsonl"]).policies.map((p) => p.name),
		EVERY,
	);
	const profiles = parseArgs(["s.jsonl"]).policies.filter((p) => p.kind === "context-fold");
	assert.deepEqual(
		profiles.map((p) => settingsOf(p).policy ?? "the default"),
		["the default", "economic", "ladder"],
	);
});

test("an unknown profile is refused, naming the profiles there are", () => {
	const names = "context-fold:economic, context-fold:ladder, context-fold:working-set";
	for (const name of ["context-fold:frugal", "context-fold:"]) {
		assert.throws(
			() => parseArgs(["s.jsonl", "--policy", `pi,${name}`]),
			(error: unknown) =>
				error instanceof UsageError &&
				error.message ===
					`unknown context-fold profile "${name.slice("context-fold:".length)}" in ${name}: the profiles are ${names}`,
		);
	}
	assert.throws(
		() => parseArgs(["s.jsonl", "--set", "policy=frugal"]),
		(error: unknown) =>
			error instanceof UsageError &&
			error.message === "--set policy takes one of economic, ladder, working-set, not frugal",
	);
	const run = replayCommand(["s.jsonl", "--policy", "context-fold:frugal"]);
	assert.equal(run.status, 2);
	assert.equal(
		run.stderr.split("\n")[0],
		`context-fold replay: unknown context-fold profile "frugal" in context-fold:frugal: the profiles are ${names}`,
	);
	const help = replayCommand(["--help"]);
	assert.equal(help.status, 0);
	assert.match(help.stdout.replace(/\s+/g, " "), /context-fold runs the default profile \(working-set/);
	assert.ok(help.stdout.replace(/\s+/g, " ").includes(names), "the help names every profile");
});

test("a policy named twice is refused: it would replay the same run twice under one name", () => {
	for (const [list, name] of [
		["pi,pi", "pi"],
		["context-fold,pi,context-fold", "context-fold"],
		["context-fold:economic,context-fold:economic", "context-fold:economic"],
	]) {
		assert.throws(
			() => parseArgs(["s.jsonl", "--policy", list]),
			(error: unknown) => error instanceof UsageError && error.message === `--policy names ${name} twice`,
		);
	}
	// The default profile and the same profile named are two names: both replay, as asked.
	assert.equal(parseArgs(["s.jsonl", "--policy", "context-fold,context-fold:working-set"]).policies.length, 2);
});

/** What a run did, without its timings. */
function outcome(f: PolicyFigures) {
	return {
		cost: f.cost,
		compactions: f.compactions,
		visibility: f.visibility,
		rewrites: f.rewriteEvents.map((e) => e.request),
		prompts: f.series.map((s) => s.prompt),
	};
}

function byName(report: SessionReport): Map<string, ReturnType<typeof outcome>> {
	return new Map(report.policies.map((f) => [f.policy, outcome(f)]));
}

test("each profile name replays its own profile", async () => {
	// Under its own least event (14000) the working set folds nothing in debug-branchy, as the ladder:
	// at the economic profile's (11200, set for every run) the three profiles fold apart.
	const replay = async (...args: string[]) =>
		byName(
			(
				await runReplay(
					parseArgs([DEBUG_BRANCHY, "--window", "140000", "--set", "minEvent=11200", ...args]),
					() => {},
				)
			)[0],
		);
	const named = await replay(
		"--policy",
		"context-fold,context-fold:working-set,context-fold:economic,context-fold:ladder",
	);
	const set = await replay("--set", "policy=economic", "--policy", "context-fold,context-fold:ladder");
	assert.deepEqual(
		[...named.keys()],
		["context-fold", "context-fold:working-set", "context-fold:economic", "context-fold:ladder"],
	);
	assert.deepEqual(named.get("context-fold"), named.get("context-fold:working-set"), "the default is working-set");
	const [workingSet, economic, ladder] = ["working-set", "economic", "ladder"].map((p) =>
		named.get(`context-fold:${p}`),
	);
	assert.notDeepEqual(workingSet, economic, "working-set and economic replay alike");
	assert.notDeepEqual(workingSet, ladder, "working-set and ladder replay alike");
	assert.notDeepEqual(economic, ladder, "economic and ladder replay alike");
	assert.deepEqual(set.get("context-fold"), economic, "context-fold:economic is --set policy=economic");
	assert.deepEqual(set.get("context-fold:ladder"), ladder, "the profile name wins over --set policy");
});

test("by default the JSON names every run's policy and the HTML scatter labels a point for each", async () => {
	const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
	synthetic.add(1, { role: "user", content: [{ type: "text", text: "look" }] });
	synthetic.add(2, {
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "src/alpha_module.ts" } }],
		stopReason: "toolUse",
	});
	synthetic.add(3, {
		role: "toolResult",
		toolCallId: "c1",
		toolName: "read",
		content: [{ type: "text", text: "export const alphaValue = 123456;" }],
	});
	synthetic.add(4, {
		role: "assistant",
		content: [{ type: "text", text: "alphaValue is 123456" }],
		stopReason: "stop",
	});
	const dir = mkdtempSync(join(tmpdir(), "replay-profiles-"));
	try {
		const file = join(dir, "tiny.jsonl");
		const html = join(dir, "report.html");
		writeFileSync(file, synthetic.text());
		const run = replayCommand([file, "--json", "--html", html]);
		assert.equal(run.status, 0, run.stderr);
		const reports = JSON.parse(run.stdout) as SessionReport[];
		assert.deepEqual(
			reports[0].policies.map((p) => p.policy),
			EVERY,
		);
		const page = readFileSync(html, "utf8");
		const points = [...page.matchAll(/<circle class="point" data-policy="([^"]+)" [^>]*fill="([^"]+)"/g)];
		assert.deepEqual(points.map((m) => m[1]).sort(), [...EVERY].sort(), "one point per policy");
		assert.equal(new Set(points.map((m) => m[2])).size, EVERY.length, "each point its own colour");
		const labels = [
			...page.matchAll(/<text class="point-label" data-policy="([^"]+)" x="([^"]+)" y="([^"]+)"[^>]*>([^<]*)</g),
		];
		for (const name of EVERY) {
			const label = labels.filter((m) => m[1] === name);
			assert.equal(label.length, 1, `one label for ${name}`);
			assert.ok(label[0][4].startsWith(`${name} (`), `${name}'s label names it: ${label[0][4]}`);
		}
		// Nothing folds in so short a session, so every point sits at 1×, 100 %: the labels stack apart.
		assert.equal(new Set(labels.map((m) => `${m[2]},${m[3]}`)).size, EVERY.length, "labels apart");
		for (const name of EVERY) assert.match(page, new RegExp(`<span class="legend-item" data-policy="${name}">`));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
