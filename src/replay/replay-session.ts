/**
 * The Pi SDK session a replay drives: a faux model (pi-ai's faux provider, priced at the price
 * model's rates so that context-fold prices a rewrite as the replay does) in a runtime of its own,
 * and an in-memory agent session over it that loads the policy's extensions and nothing from this
 * machine's disk (no settings, SYSTEM.md, APPEND_SYSTEM.md, skills, templates or context files), at
 * a fixed agent directory so that the requests do not depend on where the replay runs.
 */
import { type FauxProviderHandle, fauxProvider, InMemoryCredentialStore } from "@earendil-works/pi-ai";
import {
	type AgentSession,
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionFactory,
	ModelRuntime,
	SessionManager,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";
import type { PriceModel } from "./price.ts";

/** The agent directory of every replay, whatever the user's is (nothing is read from it). */
export const AGENT_DIR = "/replay/agent";

/** A faux model with a `window`-token context at `price`'s rates, registered in a runtime of its own. */
export async function replayModel(
	window: number,
	price: PriceModel,
): Promise<{ faux: FauxProviderHandle; runtime: ModelRuntime }> {
	const faux = fauxProvider({
		provider: "replay",
		api: "replay",
		models: [
			{
				id: "recorded",
				contextWindow: window,
				maxTokens: 32_000,
				reasoning: true,
				// The price model's prices, per input token, so that context-fold prices a rewrite as it is priced.
				cost: { input: 1, output: 0, cacheRead: price.read, cacheWrite: price.write },
			},
		],
		tokenSize: { min: 1e9, max: 1e9 },
	});
	const runtime = await ModelRuntime.create({
		modelsPath: null,
		refreshOnCreate: false,
		credentials: new InMemoryCredentialStore(),
	});
	runtime.registerNativeProvider(faux.provider);
	await runtime.setRuntimeApiKey("replay", "replay");
	return { faux, runtime };
}

type SessionOptions = NonNullable<Parameters<typeof createAgentSession>[0]>;

/** What a replay's session is made of. */
export interface ReplaySessionParts {
	cwd: string;
	/** Pi's settings, in memory. */
	settings: Record<string, unknown>;
	/** The extensions loaded, in order. */
	factories: readonly ExtensionFactory[];
	runtime: ModelRuntime;
	model: SessionOptions["model"];
	/** The tools the model calls (the built-in ones are off). */
	tools: SessionOptions["customTools"];
}

/** An in-memory agent session with the extensions bound, loading nothing from the disk. */
export async function replaySession(parts: ReplaySessionParts): Promise<AgentSession> {
	const { cwd, runtime, model, tools } = parts;
	const settingsManager = SettingsManager.inMemory(parts.settings as never);
	// Nothing from this machine's disk: no settings, SYSTEM.md or APPEND_SYSTEM.md under the working
	// or agent directory (the recorded working directory may exist here).
	const loader = new DefaultResourceLoader({
		cwd,
		agentDir: AGENT_DIR,
		settingsManager,
		systemPromptOverride: () => undefined,
		appendSystemPromptOverride: () => [],
		noExtensions: true,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
		extensionFactories: parts.factories.map((factory, i) => ({ name: `replay-policy-${i}`, factory })),
	});
	await loader.reload();
	const { session } = await createAgentSession({
		cwd,
		agentDir: AGENT_DIR,
		modelRuntime: runtime,
		model,
		thinkingLevel: "off",
		resourceLoader: loader,
		sessionManager: SessionManager.inMemory(cwd),
		settingsManager,
		noTools: "builtin",
		customTools: tools,
	});
	await session.bindExtensions({});
	return session;
}
