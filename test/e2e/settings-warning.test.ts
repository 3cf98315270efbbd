/**
 * A settings problem on `pi -c` in Pi's real terminal UI (tmux, read with capture-pane) against the
 * scripted model server: Pi draws the restored transcript after the extension's session_start, so
 * the problem (a mistyped CONTEXTFOLD_* variable) stands in a widget above the editor, below the
 * restored transcript, until the next prompt clears it; a variable set to nothing is no problem.
 * Skips without tmux; waits poll the screen.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { lastUserText, type ModelServer, startModelServer } from "./harness/model-server.ts";
import { createPiSandbox, type PiSandbox } from "./harness/pi-runner.ts";
import { flat, startTui, type TuiSession, tmuxAvailable } from "./harness/tui.ts";

const NO_TMUX = tmuxAvailable() ? false : "tmux is not installed (the warning is read off the terminal UI)";
const WAIT_MS = 120_000;
const PROBLEM = "CONTEXTFOLD_HOT_TIAL is not a context-fold variable; ignoring it (did you mean CONTEXTFOLD_HOT_TAIL?)";

describe("a settings problem when a session is resumed", { skip: NO_TMUX }, () => {
	let server: ModelServer | undefined;
	let sandbox: PiSandbox | undefined;
	let tui: TuiSession | undefined;
	after(async () => {
		tui?.close();
		await server?.close();
		await sandbox?.cleanup();
	});

	it("is shown below the restored transcript until the next prompt", async () => {
		server = await startModelServer((req) => ({ text: `Answered: ${lastUserText(req)}` }));
		sandbox = await createPiSandbox({ serverUrl: server.url, contextWindow: 200_000 });
		// A variable set to nothing is unset, not a bad value reported on every launch.
		const first = await sandbox.runPrint({
			prompt: "first prompt",
			extensions: ["."],
			timeoutMs: WAIT_MS,
			env: { CONTEXTFOLD_HOT_TAIL: "" },
		});
		assert.equal(first.code, 0, first.stderr);
		assert.doesNotMatch(first.stderr, /CONTEXTFOLD_HOT_TAIL/);

		tui = startTui(sandbox, sandbox.args({ mode: "tui", extensions: ["."], continueSession: true }), {
			CONTEXTFOLD_HOT_TIAL: "6000",
		});
		const screen = flat(
			await tui.waitFor(
				(s) => flat(s).includes("Answered: first prompt") && flat(s).includes(flat(PROBLEM)),
				WAIT_MS,
				"the restored transcript and the warning",
			),
		);
		assert.ok(
			screen.indexOf(flat(PROBLEM)) > screen.indexOf("Answered: first prompt"),
			`the warning stands below the restored transcript:\n${screen}`,
		);

		tui.send("second prompt", true);
		tui.send("Enter");
		const after = await tui.waitFor((s) => s.includes("Answered: second prompt"), WAIT_MS, "the next answer");
		assert.ok(!flat(after).includes(flat(PROBLEM)), "the next prompt cleared the warning");
	});
});
