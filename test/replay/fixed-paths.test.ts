/**
 * A replay's requests do not depend on where it runs: the system prompt carries the session's
 * recorded working directory and a fixed install path for Pi's documentation, never this checkout
 * (its node_modules, or the process's working directory), and a system message's timestamp is not
 * priced. Replayed again from another working directory with Pi's package directory elsewhere
 * (`PI_PACKAGE_DIR`, Pi's own override), every request has the same bytes. Nothing on this machine's
 * disk reaches a request either: a recorded working directory that exists here, holding an AGENTS.md,
 * a SYSTEM.md, an APPEND_SYSTEM.md and Pi settings, gives the same requests as one that does not.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { getPackageDir } from "@earendil-works/pi-coding-agent";
import type { PolicyRun, ReplayPolicy } from "../../src/replay/policy-run.ts";
import { messageBlockTexts } from "../../src/replay/request-shape.ts";
import { replayPolicy } from "../../src/replay/run.ts";
import { SyntheticSession } from "./synthetic-session.ts";

const CHECKOUT = resolve(import.meta.dirname, "../..");
const synthetic = new SyntheticSession(Date.parse("2026-01-01T00:00:00.000Z"));
synthetic.add(1, { role: "user", content: [{ type: "text", text: "read it" }] });
synthetic.read(2, "c1", [{ type: "text", text: "a" }], "src/a.ts");
synthetic.add(4, { role: "assistant", content: [{ type: "text", text: "read" }], stopReason: "stop" });
const script = synthetic.script();

/** Every request as the block texts a price model sees. */
function bytes(run: PolicyRun): string[][] {
	return run.requests.map((r) => (r.messages ?? []).flatMap((m) => messageBlockTexts(m).map((b) => b.text)));
}

for (const policy of [
	{ name: "pi", kind: "pi" },
	{ name: "context-fold", kind: "context-fold", settings: {} },
] as ReplayPolicy[]) {
	test(`${policy.name}: the system prompt names the recorded working directory and no path of this checkout`, async () => {
		const run = await replayPolicy(script, policy, { window: 200_000, keepMessages: true });
		const system = run.requests[0].messages?.[0];
		assert.equal(system?.role, "system");
		const text = JSON.stringify(system);
		assert.match(text, /<cwd>\\n\/nowhere\\n<\/cwd>/);
		assert.match(text, /\/usr\/local\/lib\/node_modules\/@earendil-works\/pi-coding-agent\/README\.md/);
		const all = JSON.stringify(run.requests.map((r) => r.messages));
		for (const local of [CHECKOUT, getPackageDir(), process.cwd()]) assert.ok(!all.includes(local), local);
		assert.ok(!messageBlockTexts(system ?? { role: "system" })[0].text.includes("timestamp"));
	});

	test(`${policy.name}: the same bytes from another working directory and another Pi install`, async () => {
		const here = bytes(await replayPolicy(script, policy, { window: 200_000, keepMessages: true }));
		const cwd = process.cwd();
		process.chdir(tmpdir());
		process.env.PI_PACKAGE_DIR = "/opt/elsewhere/pi-coding-agent";
		try {
			assert.equal(getPackageDir(), "/opt/elsewhere/pi-coding-agent");
			const there = bytes(await replayPolicy(script, policy, { window: 200_000, keepMessages: true }));
			assert.deepEqual(there, here);
		} finally {
			delete process.env.PI_PACKAGE_DIR;
			process.chdir(cwd);
		}
	});
}

test("nothing from the recorded working directory's disk reaches a request", async () => {
	const dir = mkdtempSync(join(tmpdir(), "cf-replay-cwd-"));
	try {
		mkdirSync(join(dir, ".pi"));
		writeFileSync(join(dir, "AGENTS.md"), "PLANTED-AGENTS context file\n");
		writeFileSync(join(dir, "CLAUDE.md"), "PLANTED-CLAUDE context file\n");
		writeFileSync(join(dir, ".pi", "SYSTEM.md"), "PLANTED-SYSTEM prompt\n");
		writeFileSync(join(dir, ".pi", "APPEND_SYSTEM.md"), "PLANTED-APPEND prompt\n");
		writeFileSync(join(dir, ".pi", "settings.json"), JSON.stringify({ "context-fold": { policy: "ladder" } }));
		const policy: ReplayPolicy = { name: "context-fold", kind: "context-fold", settings: {} };
		const run = await replayPolicy({ ...script, cwd: dir }, policy, { window: 200_000, keepMessages: true });
		const all = JSON.stringify(run.requests.map((r) => r.messages));
		assert.ok(all.includes(dir), "the recorded working directory is named");
		assert.doesNotMatch(all, /PLANTED-/);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
