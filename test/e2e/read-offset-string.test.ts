/**
 * A read from an offset the model sent as a string (`"640"`), which Pi 1.6 coerces to the number
 * before its read tool runs, folds numbered as in the file from that line, as a number offset does:
 * real pi against the scripted model server, the digest read off the captured request bodies.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { FoldTracker } from "./harness/fold-wire.ts";
import { type CapturedRequest, type ModelServer, type Reply, startModelServer } from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox } from "./harness/pi-runner.ts";

const FILLERS = 14;
let server: ModelServer;
let sandbox: PiSandbox;
const tracker = new FoldTracker();

/** Reads big.txt from the string offset "640", then runs fillers until that read folds. */
function script(req: CapturedRequest): Reply {
	const facts = tracker.observe(req);
	const has = (id: string) => facts.results.some((r) => r.id === id);
	const call = (id: string, name: string, args: Record<string, unknown>): Reply => ({
		toolCalls: [{ id, name, args }],
	});
	if (!has("toolu_str")) return call("toolu_str", "read", { path: "big.txt", offset: "640" });
	if (!tracker.codes.has("toolu_str")) {
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
	const body = Array.from({ length: 700 }, (_, i) =>
		i + 1 === 650 ? "line 650 TypeError: boom at line 650" : `line ${i + 1} value ok`,
	).join("\n");
	await writeFile(join(sandbox.cwd, "big.txt"), body);
	await sandbox.runPrint({ prompt: "Read the file.", extensions: ["."], timeoutMs: 90_000 });
});

after(async () => {
	await server?.close();
	await sandbox?.cleanup();
});

it("numbers a read from a string offset as in the file, from that line", () => {
	assert.match(tracker.raw.get("toolu_str")?.split("\n")[0] ?? "", /^line 640 value ok$/, "Pi read from line 640");
	const digest = server.requests.map((req) => tracker.observe(req).folded.get("toolu_str")?.text).find(Boolean);
	assert.ok(digest, "the read never folded");
	assert.match(digest, /read: 700 lines, L640-700 held/, digest);
	assert.match(digest, /\nL650: line 650 TypeError: boom at line 650/, digest);
});
