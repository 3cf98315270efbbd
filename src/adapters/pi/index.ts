/**
 * context-fold's Pi extension entry point: wires the engine to Pi's `context` hook and the cache
 * telemetry and advisories to Pi's events, rebuilds fold state on session start and tree
 * navigation, and registers the recall/unfold tools (declared once there is something to recall),
 * the compaction hooks, the cache-warming answer, the handoff and the user's view. Every hook is
 * fail-open: a failure is announced and the turn proceeds raw.
 */
import { dirname } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../../core/block.ts";
import { blockDescription } from "../../core/block-line.ts";
import { extractSeedRecord } from "../../core/index/extract.ts";
import { PROFILES } from "../../core/policy/profiles.ts";
import { opSaving } from "../../core/session-history.ts";
import { seedParentOf } from "../../core/summary.ts";
import { ActiveSettings } from "./active-settings.ts";
import { Advisor, modelOf } from "./cache/advisor.ts";
import { BreakpointPlacer } from "./cache/breakpoints.ts";
import { CacheWarning } from "./cache/cache-warning.ts";
import {
	knownProviders,
	learnRetentionSoon,
	lifetimeFor,
	priceRatiosFor,
	providerTableProblems,
	withVariable,
} from "./cache/lifetime.ts";
import { CacheTelemetry, type UsageLike } from "./cache/telemetry.ts";
import { registerWarmingAnswer } from "./cache/warming-answer.ts";
import { registerHandoff, sameFile, seedSource } from "./compaction/handoff.ts";
import { registerCompaction } from "./compaction/hooks.ts";
import { IndexStore, type SessionPlace } from "./compaction/seed-index-store.ts";
import { type Env, envSwitch } from "./config.ts";
import { errorText } from "./error-text.ts";
import { blockFacts } from "./fold/block-facts.ts";
import { answersRequest, FoldEngine } from "./fold/engine.ts";
import { ParentSession } from "./fold/parent-session.ts";
import { ENTRY_TYPE } from "./fold/persistence.ts";
import { RequestFacts } from "./fold/request-facts.ts";
import { Ledger, type LedgerSource } from "./fold/session-ledger.ts";
import { type FoldTools, registerFoldTools } from "./tools/loadout.ts";
import { type NoticeSink, Notices, toStderr } from "./ui/notices.ts";
import { registerUserView } from "./ui/register.ts";
import { FoldRecords, labelEntry } from "./ui/renderers.ts";
import {
	legacySettingsFile,
	SavedSettings,
	type SettingsPaths,
	savedOrigin,
	sectionFileProblems,
	settingsPaths,
} from "./ui/settings.ts";

/** Registers context-fold's hooks, tools and commands with Pi (nothing when CONTEXTFOLD=0 or a value not understood). */
export default function contextFold(pi: ExtensionAPI): void {
	register(pi, Date.now);
}

/**
 * context-fold on a given clock (epoch ms) instead of wall time: the replay runs it on the
 * recording's clock, so that it sees the recorded idle gaps as Pi's users lived them, hands its
 * notices (advisories meant for the replayed session's user) to `sink` instead of stderr, and gives
 * it the environment to read its variables from (the replay's has none of the user's) and the agent
 * directory its files are looked for in (the replay's fixed one, not the user's).
 */
export function contextFoldOnClock(
	now: () => number,
	sink: NoticeSink = toStderr,
	env: Env = process.env,
	agentDir?: string,
): (pi: ExtensionAPI) => void {
	return (pi) => register(pi, now, sink, env, agentDir);
}

/**
 * The CONTEXTFOLD values each sink was told are not understood: Pi loads the extension again for
 * every session runtime (a new, resumed, switched or cloned session), and the value is said once.
 */
const switchSaid = new WeakMap<NoticeSink, Set<string>>();

function register(
	pi: ExtensionAPI,
	now: () => number,
	sink: NoticeSink = toStderr,
	env: Env = process.env,
	agentDir?: string,
): void {
	const { on, problem } = envSwitch(env);
	if (problem) {
		const said = switchSaid.get(sink) ?? new Set<string>();
		switchSaid.set(sink, said);
		if (!said.has(problem)) sink(problem, "warning");
		said.add(problem);
	}
	if (!on) return;
	const settings = new ActiveSettings();
	let session: (LedgerSource & SessionPlace) | undefined;

	const notices = new Notices(sink);
	const { warn, warnOnce } = notices;
	// Settings problems also stay in the status's Failures list.
	const settingsWidget = notices.standing(
		"context-fold-settings",
		"(shown until your next prompt; /context-fold status lists them)",
	);
	const idleWidget = notices.standing("context-fold-idle", "(shown until your next prompt)");
	const restoreWidget = notices.standing(
		"context-fold-restore",
		"(shown until your next prompt; /context-fold status lists them)",
	);
	const announceSettings = (problems: readonly string[]): void =>
		notices.standOnce(
			settingsWidget,
			problems.map((problem) => `context-fold: ${problem}`),
		);
	const index = new IndexStore(warnOnce);
	const savedHere = new SavedSettings();
	/** The providers Pi's model registry knew at the latest session start (undefined: it could not be read). */
	let providers: string[] | undefined;
	/** The settings.json files Pi reads for the current session (set at each session start). */
	let settingsFiles: () => SettingsPaths | undefined = () => undefined;
	/** Re-reads the knobs; a problem in `stated` is already in the caller's own message (a save's confirmation). */
	const loadConfig = (stated: readonly string[] = []): void => {
		const { problems, unreadable } = settings.load(
			() => pi.getSettings() as Record<string, unknown>,
			savedHere,
			env,
			savedOrigin(settingsFiles),
		);
		if (unreadable !== undefined)
			warnOnce(
				`context-fold: Pi's settings could not be read (${errorText(unreadable)}); the saved context-fold section is ignored, the defaults and CONTEXTFOLD_* variables apply`,
			);
		for (const problem of stated) notices.reported.add(`context-fold: ${problem}`);
		announceSettings([
			...problems,
			...providerTableProblems(settings.config.cacheTtlByProvider, providers),
			...sectionFileProblems(settingsFiles),
		]);
		const legacy = legacySettingsFile(agentDir);
		if (legacy)
			warnOnce(
				`context-fold: ${legacy} holds context-fold 0.5.1's settings, which this version does not read: set them in Pi's settings.json under "context-fold" (/context-fold settings) or with CONTEXTFOLD_* variables, then remove the file`,
			);
	};

	const telemetry = new CacheTelemetry();
	const requestFacts = new RequestFacts(settings, telemetry, now);
	const advisor = new Advisor({ notify: warn, config: () => settings.config });
	const warning = new CacheWarning({
		notify: warn,
		fail: warnOnce,
		lost: notices.warnListed,
		stand: (message) => idleWidget.show(message.split("\n")),
		config: () => settings.config,
		ttlMs: (model) => lifetimeFor(model, settings.config, settings.ttlSecondsSet).ms,
		now,
		caches: () => telemetry.caches,
		unfoldedBack: (ids) =>
			ids.reduce((n, id) => {
				const op = engine.registry.opOf(id);
				return n + (op ? opSaving(engine.registry.record(id), op) : 0);
			}, 0),
	});

	const engine = new FoldEngine({
		config: () => settings.policy,
		policy: (view) => PROFILES[settings.config.policy].decide(view),
		append: (entry) => {
			records.note(entry);
			pi.appendEntry(ENTRY_TYPE, entry);
			labelEntry(pi, entry, leafOf(), records.record, (id) => engine.registry.opOf(id));
		},
		beforeCommit: (seq, records, messages, blocks) => {
			const scope = new Set(records.map((r) => r.id));
			const record = extractSeedRecord({
				kind: "fold",
				seq,
				messages,
				spans: records,
				scope,
				turnBase: engine.turnBase,
				blocks,
			});
			const leaf = leafOf();
			if (leaf !== undefined) record.leaf = leaf;
			index.appendDurably(record);
		},
		rejected: (seq, reason) => index.retract(seq, reason, "fold"),
		committed: (seq, masked, codes, probes) => {
			requestFacts.folded();
			telemetry.observeFold(seq, masked, now());
			advisor.observeFold(seq, masked, codes, probes);
		},
		unfolded: (codes) => {
			requestFacts.unfolded();
			advisor.observeUnfold(codes);
		},
		warn: warnOnce,
		debug: (message) => {
			if (settings.config.debug) warn(message, "info");
		},
		shared: (id) => {
			try {
				return ledger.lookup(id).length > 1;
			} catch {
				return false;
			}
		},
	});
	const records = new FoldRecords(engine);
	const ledger = new Ledger(
		() => session,
		(error) => warnOnce(`context-fold: the session file could not be read for recall: ${errorText(error)}`),
	);
	let parent: ParentSession | undefined;
	let leafOf: () => string | undefined = () => undefined;
	/** Reads the seed's codes from `file` (none, or this session's own: no parent), only from this session's own folders. */
	const linkParent = (ctx: ExtensionContext, file: string | undefined, hashes?: ReadonlyMap<string, string>) => {
		const ownFile = ctx.sessionManager.getSessionFile?.();
		if (file !== undefined && sameFile(file, ownFile)) file = undefined;
		const folders = [...new Set([ownFile && dirname(ownFile), ctx.sessionManager.getSessionDir?.()])].filter(
			(folder): folder is string => typeof folder === "string" && folder !== "",
		);
		parent = file ? new ParentSession(file, folders, warnOnce, hashes) : undefined;
	};

	const restore = (ctx: ExtensionContext): void => {
		notices.attach(ctx.mode === "tui" && ctx.hasUI ? ctx.ui : undefined);
		try {
			providers = knownProviders(ctx.modelRegistry);
			settingsFiles = () => settingsPaths(ctx, agentDir);
			loadConfig();
			session = ctx.sessionManager;
			leafOf = () => ctx.sessionManager.getLeafId?.() ?? undefined;
			ledger.reset();
			const branch = ctx.sessionManager.getBranch();
			// Only a seeded session reads a parent: a session Pi forked or cloned holds a copy of all it
			// descends from, and what its parent did after the fork is not its history.
			const header = ctx.sessionManager.getHeader?.();
			const seed = seedSource(branch, [ctx.sessionManager.getSessionFile?.(), header?.parentSession]);
			const parentFile: unknown = seed.seeded ? (seed.parentSession ?? header?.parentSession) : undefined;
			linkParent(ctx, typeof parentFile === "string" ? parentFile : undefined, seed.hashes);
			if (parentFile && typeof parentFile !== "string")
				warnOnce(
					"context-fold: this session's header names its parent session by no path; its codes cannot be read",
				);
			const { skipped } = index.open(session);
			if (skipped > 0)
				warnOnce(`context-fold: skipped ${skipped} unreadable seed-index line${skipped === 1 ? "" : "s"}`);
			if (engine.rebuild(branch)) requestFacts.lostFolds();
			telemetry.restore(branch);
			telemetry.select(ctx.model?.provider, ctx.model?.id);
			advisor.restore(branch);
			telemetry.skipEntries(session);
			warning.reset();
			warning.idle(ctx, true);
		} catch (error) {
			engine.reset();
			telemetry.reset();
			advisor.reset();
			warning.reset();
			warnOnce(
				`context-fold: could not restore fold state, prior folds render raw this session: ${errorText(error)}`,
			);
			return;
		}
		// Until this process sends a request, what is live (unfold's completions) is the context Pi restored:
		// a code whose block a compaction removed is not offered. Read only when the branch has folds.
		if (engine.registry.allRecords().length === 0) return;
		try {
			engine.observeLive(ctx.sessionManager.buildSessionProjection().messages as unknown as MessageLike[]);
		} catch (error) {
			warnOnce(
				`context-fold: the restored context was not read, unfold may offer removed blocks: ${errorText(error)}`,
			);
		}
	};

	const breakpoints = new BreakpointPlacer();
	pi.on("session_start", async (_event, ctx) => {
		// The resumed session's idle warning reads the cache lifetime: the credential may make it an hour.
		await learnRetentionSoon(ctx.modelRegistry, ctx.model?.provider);
		notices.startSession();
		requestFacts.reset();
		breakpoints.reset();
		notices.holding(restoreWidget, () => restore(ctx));
	});
	pi.on("session_tree", (_event, ctx) => {
		requestFacts.reset();
		breakpoints.reset();
		notices.holding(restoreWidget, () => restore(ctx));
	});

	pi.on("session_shutdown", () => warning.stop());
	// Pi's compaction settings change between runs (`/settings`, RPC `set_auto_compaction`): read again
	// before each run, not at every request (Pi copies its whole settings object on each read).
	/** Reads Pi's compaction settings again; a read that fails is said once, the figures read last kept. */
	const refreshCompaction = (): void => {
		let error: unknown;
		try {
			error = settings.refreshCompaction();
		} catch (thrown) {
			error = thrown;
		}
		if (error !== undefined) warnOnce(`context-fold: Pi's compaction settings not read again: ${errorText(error)}`);
	};
	pi.on("before_agent_start", (event, ctx) => {
		refreshCompaction();
		// A seed passed as a prompt (`pi -p "$(cat seed)"`) names its parent, as a seed message does.
		try {
			const prompt = event.messageType === "custom" ? undefined : event.prompt;
			const file = prompt === undefined ? undefined : seedParentOf(prompt);
			if (file === undefined) return undefined;
			if (parent === undefined) linkParent(ctx, file);
			else if (!sameFile(file, parent.path) && !sameFile(file, ctx.sessionManager.getSessionFile?.()))
				warnOnce(
					`context-fold: this session is linked to the parent ${parent.path} its first seed named; the seed just passed names ${file}, whose codes it does not read (a session reads one parent's: start a new session with that seed)`,
				);
		} catch (error) {
			warnOnce(`context-fold: the seed's parent session is not read: ${errorText(error)}`);
		}
		return undefined;
	});

	pi.on("message_end", (event, ctx) => {
		try {
			const message = event.message as {
				role?: string;
				provider?: string;
				model?: string;
				usage?: UsageLike;
				stopReason?: string;
			};
			if (message.role !== "assistant") return;
			if (answersRequest(message)) engine.answered();
			telemetry.select(message.provider, message.model);
			telemetry.observeResponse(message.usage, now());
			const window = ctx.model?.contextWindow;
			advisor.observeResponse(message.usage, {
				window,
				// The reset flag asks only whether more than half the window cannot fold.
				unfoldable: window ? engine.unfoldableOver(window / 2) : undefined,
				ratios: priceRatiosFor(ctx.model),
				caches: telemetry.caches,
				model: modelOf(message),
			});
		} catch (error) {
			warnOnce(`context-fold: usage telemetry skipped: ${errorText(error)}`);
		}
	});
	pi.on("tool_result", (event) => {
		try {
			if (!event.isError)
				advisor.observeToolResult(
					event.toolName,
					event.input,
					engine.registry,
					(id) => engine.mayBeLive(id),
					(id) => {
						const record = engine.registry.record(id);
						return record ? blockDescription(blockFacts(record, engine, ledger)) : undefined;
					},
				);
		} catch (error) {
			warnOnce(`context-fold: recall churn check skipped: ${errorText(error)}`);
		}
		return undefined;
	});

	// The idle cache-risk warning: a timer while idle, and the opt-in confirmation before a cold send.
	pi.on("agent_start", () => warning.busy());
	pi.on("agent_settled", (_event, ctx) => {
		try {
			warning.idle(ctx);
		} catch (error) {
			warnOnce(`context-fold: idle cache check skipped: ${errorText(error)}`);
		}
	});
	// A compaction rewrites the prompt anyway: the idle warning's risk is gone with it.
	pi.on("session_compact", () => idleWidget.clear());
	pi.on("input", async (event, ctx) => {
		settingsWidget.clear();
		idleWidget.clear();
		restoreWidget.clear();
		try {
			return await warning.onInput(event, ctx);
		} catch (error) {
			warnOnce(
				`context-fold: the cold-cache check of a prompt failed, the prompt was sent as typed: ${errorText(error)}`,
			);
			return undefined;
		}
	});
	pi.on("model_select", async (event, ctx) => {
		await learnRetentionSoon(ctx.modelRegistry, event.model?.provider);
		try {
			// The last request was measured against the previous model's window: until the next one, the
			// status previews the context in the new model's, with Pi's compaction figures for it.
			engine.forgetPass();
			settings.forModel(event.model);
			telemetry.select(event.model?.provider, event.model?.id);
			advisor.observeModelChange();
		} catch (error) {
			warnOnce(`context-fold: usage telemetry skipped: ${errorText(error)}`);
		}
	});

	registerWarmingAnswer(pi, { engine, telemetry, debug: () => settings.config.debug, warn, fail: warnOnce });

	/** The fold tools, registered below (after the fold pass, whose handler must run first). */
	let foldTools: FoldTools | undefined;
	/** True while the user's tool selection or another extension leaves the fold tools out. */
	const foldToolsWithheld = (): boolean => foldTools?.withheld() ?? false;
	pi.on("context", (event, ctx) => {
		try {
			advisor.beginRequest();
			const messages = event.messages as unknown as MessageLike[];
			engine.restoreReused(messages);
			const facts = requestFacts.of(messages, ctx);
			if (foldTools?.withheld()) {
				warnOnce(
					"context-fold: recall_folded and unfold are not active (the tool selection or another extension left them out), so nothing new folds: the model could not read a folded block back",
				);
				facts.hold = true;
			}
			if (foldTools) facts.mayFold = foldTools.mayFold;
			engine.run(messages, facts);
		} catch (error) {
			warnOnce(`context-fold: fold pass failed, this turn goes out raw: ${errorText(error)}`);
		}
		return undefined;
	});
	// The payload as every extension's context handler left it: the watchdog's evidence for a fold event
	// whose request also first declared the fold tools (see cache/advisor.ts). Then the cache
	// breakpoints that let a fold event read up to its frontier (see cache/breakpoints.ts).
	pi.on("before_provider_request", (event) => {
		try {
			advisor.observePayload(event.payload);
		} catch (error) {
			warnOnce(`context-fold: wire watchdog skipped this request: ${errorText(error)}`);
		}
		try {
			return breakpoints.place(event.payload, engine.frontiers);
		} catch (error) {
			warnOnce(`context-fold: cache breakpoints skipped, this request goes out as Pi built it: ${errorText(error)}`);
			return undefined;
		}
	});

	registerCompaction(pi, {
		engine,
		index,
		advisor,
		config: () => settings.config,
		warn,
		fail: warnOnce,
		keepRecent: () => settings.keepRecent,
		withheld: foldToolsWithheld,
	});
	foldTools = registerFoldTools(pi, {
		engine,
		ledger,
		parent: () => parent,
		foldsNext: (messages, ctx) => engine.foldsNext(messages, requestFacts.of(messages, ctx)),
		declared: () => advisor.observeDeclarations(),
		warn: warnOnce,
	});
	registerHandoff(pi, engine, index, foldToolsWithheld);
	registerUserView(
		pi,
		{
			engine,
			config: () => settings.config,
			neverCacheRead: () => telemetry.neverCacheRead,
			horizonSet: () => settings.policy.horizon !== undefined,
			// Pi's compaction figures as they stand now, read once: the status may be asked between
			// requests, after a change in Pi's settings.
			piCompaction: () => {
				refreshCompaction();
				return { keepRecent: settings.keepRecent, reserve: settings.reserve };
			},
			ledger,
			parent: () => parent,
			settings: savedHere,
			reload: loadConfig,
			advisoryActive: () => advisor.active().length > 0 || advisor.watchdogTripped(),
			advisories: () => advisor.active().map((a) => a.text),
			failures: () => [...notices.reported],
			lifetime: (model) =>
				withVariable(lifetimeFor(model, settings.config, settings.ttlSecondsSet), settings.variables),
			discardImages: () => {
				const n = warning.discardImages();
				return n > 0
					? `context-fold: dropped ${n} image${n === 1 ? "" : "s"} kept from a cancelled prompt`
					: "context-fold: nothing to discard";
			},
		},
		records,
	);
}
