/**
 * Past the fold budget with nothing worth folding (a huge user message never folds) and Pi's own
 * compaction off, context-fold compacts at once with its deterministic summary through real `pi`
 * (with Pi's on, that context is plain Pi's and waits for Pi's own point): a fromHook compaction entry,
 * no summarization request at the model server, and one notice for the streak; and in `pi -p` or
 * `--mode json` with several messages, the compaction between two of them ends before the next is sent;
 * when Pi refuses the compaction (the newest messages fill keepRecentTokens), no compaction is
 * announced, and the refusal is said once.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isSummarizationRequest, lastUserText, type ModelServer, startModelServer } from "./harness/model-server.ts";
import { createPiSandbox, type PiRpc, type PiSandbox, readSessionFile, waitForEntries } from "./harness/pi-runner.ts";

const WINDOW = 16_000;
const OUR_HEADER = "[context-fold deterministic compaction summary]";

describe("over budget with nothing worth folding", () => {
	let server: ModelServer;
	let sandbox: PiSandbox;
	let rpc: PiRpc;

	before(async () => {
		server = await startModelServer((req) =>
			isSummarizationRequest(req) ? { text: "MODEL SUMMARY" } : { text: `reply ${req.index}` },
		);
		sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: WINDOW,
			settings: { compaction: { enabled: false, keepRecentTokens: 1_000 }, "context-fold": { budgetFraction: 0.5 } },
		});
		rpc = await sandbox.startRpc({ extensions: ["."], timeoutMs: 60_000 });
	});
	after(async () => {
		await rpc?.close();
		await server?.close();
		await sandbox?.cleanup();
	});

	it("compacts deterministically at once, calls no model for it, and says so once", async () => {
		await rpc.prompt("Start: note the plan.");
		const huge = `Constraints, keep verbatim:\n${"the parser must keep every byte of the input. ".repeat(800)}`;
		await rpc.prompt(huge);
		const state = await rpc.call<{ sessionFile: string }>({ type: "get_state" });
		const compactions = await waitForEntries(state.sessionFile, "compaction");
		assert.equal(compactions.length, 1, rpc.stderr());
		assert.equal(compactions[0].fromHook, true);
		assert.ok(String(compactions[0].summary).startsWith(OUR_HEADER));
		assert.deepEqual(
			server.requests.filter((r) => isSummarizationRequest(r)).map((r) => r.index),
			[],
			"no summarization request",
		);
		await rpc.prompt("And now?");
		const notices = rpc.stderr().match(/past the fold budget/g) ?? [];
		assert.equal(notices.length, 1, rpc.stderr());
		assert.match(
			rpc.stderr(),
			/, so it compacted the context from ~[\d.]+k? tokens with its deterministic summary \(no model call\)/,
		);
	});
});

/**
 * A sandbox under the default policy in a 200k window, Pi's own compaction off (so only context-fold's
 * compacts), against a server that answers each request with its number.
 */
async function defaultPolicySandbox(): Promise<{ server: ModelServer; sandbox: PiSandbox }> {
	const server = await startModelServer((req) =>
		isSummarizationRequest(req) ? { text: "MODEL SUMMARY" } : { text: `reply ${req.index}` },
	);
	const sandbox = await createPiSandbox({
		serverUrl: server.url,
		contextWindow: 200_000,
		settings: { compaction: { enabled: false }, "context-fold": { policy: "working-set" } },
	});
	return { server, sandbox };
}

describe("over budget between the messages of one print-mode run", () => {
	// Four ~6.3k-token notes (user text never folds) pass the default policy's backstop (25.2k in a
	// 200k window) after the fourth; Pi's own compaction is off, so only context-fold's compacts.
	const note = (k: number) =>
		`Notes ${k}, keep verbatim:\n${`constraint ${k}: the parser must keep every byte of the input. `.repeat(450)}`;
	const messages = [note(1), note(2), note(3), note(4), "Last: what now?"];

	for (const mode of ["text", "json"] as const) {
		it(`${mode === "text" ? "pi -p" : "--mode json"}: the compaction ends before the next message, which Pi sends`, async () => {
			const { server, sandbox } = await defaultPolicySandbox();
			try {
				const run = await sandbox.runCommand([...sandbox.args({ extensions: ["."], mode }), "--", ...messages], {
					timeoutMs: 120_000,
				});
				assert.equal(run.code, 0, run.stderr);
				assert.deepEqual(
					server.requests.map((r) => lastUserText(r)),
					messages,
					"every message reached the model, in order",
				);
				const file = await sandbox.latestSessionFile();
				assert.ok(file);
				const compactions = (await readSessionFile(file)).filter((e) => e.type === "compaction");
				assert.equal(compactions.length, 1, "context-fold compacted between two messages");
				if (mode === "text") assert.match(run.stdout, /reply 4/, "the last message's answer is printed");
			} finally {
				await server.close();
				await sandbox.cleanup();
			}
		});
	}
});

describe("nothing to fold, with Pi's own compaction on", () => {
	it("no compaction before Pi's own point: the context is plain Pi's, past the backstop", async () => {
		// Five ~15k-token notes (user text never folds) in a 120k window: past the backstop (25.2k) and its
		// share of Pi's point (60 % of 103.6k) after the fifth, well short of Pi's point (window - its
		// 16,384 reserve). Plain Pi does not compact here; neither may context-fold.
		const note = (k: number) =>
			`Notes ${k}, keep verbatim:\n${`constraint ${k}: the parser must keep every byte of the input. `.repeat(1000)}`;
		const server = await startModelServer((req) =>
			isSummarizationRequest(req) ? { text: "MODEL SUMMARY" } : { text: `reply ${req.index}` },
		);
		const sandbox = await createPiSandbox({
			serverUrl: server.url,
			contextWindow: 120_000,
			settings: { "context-fold": { policy: "working-set" } },
		});
		try {
			const messages = [note(1), note(2), note(3), note(4), note(5), "Last: what now?"];
			const run = await sandbox.runCommand([...sandbox.args({ extensions: ["."] }), "--", ...messages], {
				timeoutMs: 120_000,
			});
			assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}`);
			const file = await sandbox.latestSessionFile();
			assert.ok(file);
			const compactions = (await readSessionFile(file)).filter((e) => e.type === "compaction");
			assert.equal(compactions.length, 0, run.stderr);
			assert.doesNotMatch(run.stderr, /compacting now|so it compacted/);
			// Every note reached the model raw, in every request after it.
			const last = server.requests.at(-1);
			assert.ok(last);
			for (let k = 1; k <= 5; k++)
				assert.ok(JSON.stringify(last.body).includes(`constraint ${k}: the parser`), `note ${k}`);
		} finally {
			await server.close();
			await sandbox.cleanup();
		}
	});
});

describe("over budget when Pi refuses to compact", () => {
	it("announces no compaction that did not happen, and says once why there is none", async () => {
		// Two ~14k-token notes pass the backstop (25.2k in a 200k window); Pi keeps its default 20k raw,
		// which the notes fill: it has nothing older to compact after the second note, nor the third prompt.
		const note = (k: number) =>
			`Notes ${k}, keep verbatim:\n${`constraint ${k}: the parser must keep every byte of the input. `.repeat(1000)}`;
		const { server, sandbox } = await defaultPolicySandbox();
		try {
			const run = await sandbox.runCommand(
				[...sandbox.args({ extensions: ["."] }), "--", note(1), note(2), "Third: what now?"],
				{ timeoutMs: 120_000 },
			);
			assert.equal(run.code, 0, run.stderr);
			const file = await sandbox.latestSessionFile();
			assert.ok(file);
			const compactions = (await readSessionFile(file)).filter((e) => e.type === "compaction");
			assert.equal(compactions.length, 0, "Pi refused every compaction");
			assert.doesNotMatch(run.stderr, /compacting now|so it compacted/, "no compaction is announced");
			assert.equal(run.stderr.match(/but Pi cannot compact yet/g)?.length, 1, run.stderr);
		} finally {
			await server.close();
			await sandbox.cleanup();
		}
	});
});
