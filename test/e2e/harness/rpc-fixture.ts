/**
 * One scripted model server, one pi sandbox and one `pi --mode rpc` process for a describe block:
 * started before its tests, closed after them (the RPC process, then the server, then the sandbox).
 */
import { after, before } from "node:test";
import { type ModelServer, type Script, startModelServer } from "./model-server.ts";
import { createPiSandbox, type PiRpc, type PiSandbox, type RunOptions, type SandboxOptions } from "./pi-runner.ts";

/** What a describe block's tests read; set once its `before` hook has run. */
export interface RpcFixture {
	server: ModelServer;
	sandbox: PiSandbox;
	rpc: PiRpc;
}

/**
 * Registers the hooks that start and close the fixture; read its fields inside the tests. `prepare`
 * runs on the sandbox before pi starts (files pi reads once, such as models.json).
 */
export function rpcFixture(
	script: Script,
	sandbox: Omit<SandboxOptions, "serverUrl">,
	rpc: RunOptions,
	prepare?: (fixture: Omit<RpcFixture, "rpc">) => Promise<void>,
): RpcFixture {
	const fixture = {} as RpcFixture;
	before(async () => {
		fixture.server = await startModelServer(script);
		fixture.sandbox = await createPiSandbox({ serverUrl: fixture.server.url, ...sandbox });
		await prepare?.(fixture);
		fixture.rpc = await fixture.sandbox.startRpc(rpc);
	});
	after(async () => {
		await fixture.rpc?.close();
		await fixture.server?.close();
		await fixture.sandbox?.cleanup();
	});
	return fixture;
}
