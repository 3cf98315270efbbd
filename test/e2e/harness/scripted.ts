/**
 * One describe block's scripted model server and the pi sandbox against it: started in a `before`
 * hook, closed and removed in an `after` hook, so a suite names only its script, its sandbox options
 * and its runs.
 */
import { after, before } from "node:test";
import { type ModelServer, type ModelServerOptions, type Script, startModelServer } from "./model-server.ts";
import { createPiSandbox, type PiSandbox, type SandboxOptions } from "./pi-runner.ts";

/** The server and the sandbox of a block; both are set once the block's first `before` hook has run. */
export interface ScriptedPi {
	server: ModelServer;
	sandbox: PiSandbox;
}

/**
 * Registers the block's start and clean-up hooks and returns the holder they fill. Call it before the
 * block's own `before` hooks, which then find the server and the sandbox ready.
 */
export function scriptedPi(
	script: Script,
	options: Omit<SandboxOptions, "serverUrl"> = {},
	serverOptions?: ModelServerOptions,
): ScriptedPi {
	const held = {} as ScriptedPi;
	before(async () => {
		held.server = await startModelServer(script, serverOptions);
		held.sandbox = await createPiSandbox({ ...options, serverUrl: held.server.url });
	});
	after(async () => {
		await held.server?.close();
		await held.sandbox?.cleanup();
	});
	return held;
}
