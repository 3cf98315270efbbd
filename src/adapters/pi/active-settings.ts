/**
 * The settings in force for one extension instance: context-fold's knobs as resolved from the
 * `context-fold` section of Pi's settings, the saves this process made and the CONTEXTFOLD_*
 * variables (config.ts); the knobs the fold policy reads; and Pi's own compaction figures
 * (`keepRecentTokens`, `reserveTokens`) for the model of the latest request, read again from Pi's
 * live settings when asked (Pi changes them mid-session: `/settings`, RPC `set_auto_compaction`).
 */
import type { PolicyView } from "../../core/contract.ts";
import {
	DEFAULT_CONFIG,
	type Env,
	keepRecentOf,
	policyConfigOf,
	type ResolvedConfig,
	reserveOf,
	resolveConfig,
	type SavedOrigin,
} from "./config.ts";
import { type FoldConfig, SETTINGS_SECTION } from "./settings-schema.ts";
import type { SavedSettings } from "./ui/settings.ts";

/** What a load found: the settings problems to announce, and Pi's settings' read error, if any. */
export interface SettingsLoad {
	problems: readonly string[];
	unreadable?: unknown;
}

/** A model as Pi's context names it. */
interface ModelLike {
	provider: string;
	id: string;
}

/** context-fold's settings and Pi's compaction figures, as they stand now. */
export class ActiveSettings {
	config: FoldConfig = { ...DEFAULT_CONFIG };
	/** The knobs the fold policy reads: `config`, less a horizon or hot tail left at its default (see policyConfigOf). */
	policy: PolicyView["config"] = policyConfigOf(resolveConfig(undefined, {}));
	/** Whether the user set cacheTtlSeconds; unset, a model's own cache lifetime comes first (cache/lifetime.ts). */
	ttlSecondsSet = false;
	/** The environment variable that set each knob the environment sets (see ResolvedConfig). */
	variables: ResolvedConfig["variables"] = {};
	/** Pi's keepRecentTokens for the latest request's model. */
	keepRecent = keepRecentOf(undefined);
	/** Pi's reserveTokens for the latest request's model, undefined while Pi's compaction is off. */
	reserve = reserveOf(undefined);
	private compaction: unknown;
	private model: ModelLike | undefined;
	private read: (() => Record<string, unknown>) | undefined;
	/** The last load could not read Pi's settings (and said so). */
	private loadFailed = false;

	/**
	 * Loads the settings: Pi's (`read`, which may throw: then the saved section is ignored and the
	 * defaults and variables apply), the saves `saved` holds, and `env`; `origin` names the file of a
	 * refused saved value and finds the value beneath it (see resolveConfig).
	 */
	load(read: () => Record<string, unknown>, saved: SavedSettings, env: Env, origin?: SavedOrigin): SettingsLoad {
		let section: unknown;
		let unreadable: unknown;
		this.read = read;
		this.loadFailed = false;
		try {
			const settings = read();
			section = settings[SETTINGS_SECTION];
			this.compaction = settings.compaction;
			this.model = undefined;
			this.resolveCompaction();
		} catch (error) {
			section = undefined;
			unreadable = error;
			this.loadFailed = true;
		}
		const resolved = resolveConfig(saved.section(section), env, origin);
		this.config = resolved.config;
		this.policy = policyConfigOf(resolved);
		this.ttlSecondsSet = resolved.sources.cacheTtlSeconds !== "default";
		this.variables = resolved.variables;
		return unreadable === undefined ? { problems: resolved.problems } : { problems: resolved.problems, unreadable };
	}

	/** Resolves Pi's compaction figures for `model` when it is another model object than the last one. */
	forModel(model: ModelLike | undefined): void {
		if (model === this.model) return;
		this.model = model;
		this.resolveCompaction();
	}

	/**
	 * Reads Pi's compaction settings again through the reader of the last load. When that read throws,
	 * the figures read last stay, and the error is returned for the caller to say, unless the last load
	 * could not read them either (it said so).
	 */
	refreshCompaction(): unknown {
		if (!this.read) return undefined;
		try {
			this.compaction = this.read().compaction;
		} catch (error) {
			return this.loadFailed ? undefined : error;
		}
		this.resolveCompaction();
		return undefined;
	}

	private resolveCompaction(): void {
		const name = this.model ? `${this.model.provider}/${this.model.id}` : undefined;
		this.keepRecent = keepRecentOf(this.compaction, name);
		this.reserve = reserveOf(this.compaction, name);
	}
}
