/**
 * ActiveSettings (src/adapters/pi/active-settings.ts): a load from Pi's settings, the variables and
 * this process's saves; a settings file Pi cannot read; and Pi's compaction figures per model, read
 * again from Pi's live settings.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import { ActiveSettings } from "../../src/adapters/pi/active-settings.ts";
import { DEFAULT_CONFIG } from "../../src/adapters/pi/config.ts";
import { SavedSettings } from "../../src/adapters/pi/ui/settings.ts";

const compaction = {
	reserveTokens: 20_000,
	keepRecentTokens: 30_000,
	modelOverrides: { "acme/big": { keepRecentTokens: 50_000, reserveTokens: 40_000 } },
};

describe("ActiveSettings", () => {
	test("loads the section, the variables over it, and Pi's compaction figures", () => {
		const s = new ActiveSettings();
		const load = s.load(
			() => ({ "context-fold": { policy: "economic", hotTail: 9000 }, compaction }),
			new SavedSettings(),
			{ CONTEXTFOLD_DEBUG: "true" },
		);
		assert.deepEqual(load, { problems: [] });
		assert.equal(s.config.policy, "economic");
		assert.equal(s.config.debug, true, "the variable applies");
		assert.equal(s.policy.hotTail, 9000, "a hot tail the user set reaches the policy");
		assert.equal(s.keepRecent, 30_000);
		assert.equal(s.reserve, 20_000);
		assert.equal(s.ttlSecondsSet, false);
	});

	test("a bad value is a problem to announce, and its default applies", () => {
		const s = new ActiveSettings();
		const { problems } = s.load(() => ({ "context-fold": { hotTail: "lots" } }), new SavedSettings(), {});
		assert.equal(problems.length, 1);
		assert.match(problems[0], /hotTail/);
		assert.equal(s.config.hotTail, DEFAULT_CONFIG.hotTail);
	});

	test("settings Pi cannot read: the error is returned, the defaults and variables apply, Pi's figures stay", () => {
		const s = new ActiveSettings();
		s.load(() => ({ compaction }), new SavedSettings(), {});
		const load = s.load(
			() => {
				throw new Error("EACCES");
			},
			new SavedSettings(),
			{ CONTEXTFOLD_POLICY: "ladder" },
		);
		assert.match(String(load.unreadable), /EACCES/);
		assert.equal(s.config.policy, "ladder");
		assert.equal(s.config.hotTail, DEFAULT_CONFIG.hotTail);
		assert.equal(s.keepRecent, 30_000, "the last figures read stay");
	});

	test("Pi's compaction figures follow the model's overrides, and Pi's compaction switched off has no reserve", () => {
		const s = new ActiveSettings();
		assert.equal(s.keepRecent, DEFAULT_COMPACTION_SETTINGS.keepRecentTokens, "Pi's defaults before any load");
		s.load(() => ({ compaction }), new SavedSettings(), {});
		const big = { provider: "acme", id: "big" };
		s.forModel(big);
		assert.equal(s.keepRecent, 50_000);
		assert.equal(s.reserve, 40_000);
		s.forModel({ provider: "acme", id: "small" });
		assert.equal(s.keepRecent, 30_000);
		s.forModel(big);
		s.load(() => ({ compaction: { ...compaction, enabled: false } }), new SavedSettings(), {});
		assert.equal(s.reserve, undefined, "a reload resolves the figures again, for no model until a request names one");
		s.forModel(big);
		assert.equal(s.keepRecent, 50_000, "the same model object after a reload is resolved again");
		assert.equal(s.reserve, undefined);
	});

	test("Pi's compaction figures are read again from Pi's live settings when refreshed, for the model in use", () => {
		const s = new ActiveSettings();
		let live: Record<string, unknown> = { compaction };
		s.load(() => live, new SavedSettings(), {});
		s.forModel({ provider: "acme", id: "big" });
		live = { compaction: { ...compaction, enabled: false } };
		assert.equal(s.reserve, 40_000, "nothing read until asked");
		s.refreshCompaction();
		assert.equal(s.reserve, undefined, "Pi's compaction switched off mid-session");
		assert.equal(s.keepRecent, 50_000, "the model's override still applies");
		live = { compaction };
		s.refreshCompaction();
		assert.equal(s.reserve, 40_000, "and on again");
		s.load(
			() => {
				throw new Error("EACCES");
			},
			new SavedSettings(),
			{},
		);
		s.refreshCompaction();
		assert.equal(s.reserve, 40_000, "unreadable: the figures read last stay");
	});
});

describe("SavedSettings", () => {
	test("reads whether the project's file sets a knob under its lock, never from a file half rewritten", () => {
		const dir = mkdtempSync(join(tmpdir(), "cf-saved-"));
		try {
			const paths = { global: join(dir, "settings.json"), project: join(dir, "project-settings.json") };
			writeFileSync(paths.global, "{}");
			writeFileSync(paths.project, JSON.stringify({ "context-fold": { hotTail: 4000 } }));
			const saved = new SavedSettings();
			assert.equal(saved.save("hotTail", "5000", paths).file, paths.project, "the project's file sets it");
			// Another process rewrites the project's file in place, under its lock: truncated, not yet written.
			mkdirSync(`${paths.project}.lock`);
			writeFileSync(paths.project, "");
			assert.throws(() => saved.save("hotTail", "6000", paths), /is locked by another process/);
			assert.equal(readFileSync(paths.global, "utf8"), "{}", "nothing sent to the global file meanwhile");
			assert.throws(() => saved.unset("hotTail", paths), /is locked by another process/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
