/**
 * The settings table, defined once: one TypeBox schema whose properties are context-fold's knobs.
 * Each property carries its meaning (`description`), its default (the ladder's from core's
 * DEFAULT_LADDER) and its environment variable (the `x-env` keyword). `config.ts` derives the
 * defaults, the environment mapping and validation from it; `scripts/schema.ts` writes the
 * settings.json schema built from it to `docs/settings.schema.json` for editors.
 */
import { type TSchema, Type } from "typebox";
import { PROVIDER_TTL_PATTERN } from "../../core/cache-advice.ts";
import {
	DEFAULT_ECONOMIC,
	DEFAULT_LADDER,
	DEFAULT_WORKING_SET,
	type EconomicConfig,
	type LadderConfig,
	WORKING_SET_ECONOMIC,
	type WorkingSetConfig,
} from "../../core/contract.ts";
import { URGENT_HOT_TAIL } from "../../core/policy/cache-economic.ts";
import type { ProfileName } from "../../core/policy/profiles.ts";

/** Every knob's effective value. */
export interface FoldConfig extends LadderConfig, EconomicConfig, WorkingSetConfig {
	/** The fold policy: `working-set` (the default), `economic` (its frugal peer) or `ladder` (the seed's static ladder); see core/policy. */
	policy: ProfileName;
	debug: boolean;
	/** `fold`: deterministic compaction summary; `native`: leave compaction to Pi. */
	compact: "fold" | "native";
	/** The provider's prompt-cache lifetime, in seconds: past it without a refresh the cache is cold. */
	cacheTtlSeconds: number;
	/** Per-provider lifetimes overriding cacheTtlSeconds: `provider=seconds`, comma separated ("" for none). */
	cacheTtlByProvider: string;
	/** Ask "Keep draft / Send anyway" before an interactive prompt that likely finds the cache cold. */
	confirmColdSend: boolean;
	/** Idle minutes before the cold-cache warning may speak: `auto` (the cache lifetime alone), or 0: never. */
	cacheIdleMinutes: number | "auto";
}

/** The settings.json key holding context-fold's section. */
export const SETTINGS_SECTION = "context-fold";

/** The schema keyword naming a knob's environment variable. */
export const ENV_KEYWORD = "x-env";

/** The schema keyword naming what a whole-number knob counts, where that is not tokens (a refusal says it). */
export const UNIT_KEYWORD = "x-unit";

/** The annotations every knob carries: default, meaning (naming the variable) and variable. */
function annotations(env: string, fallback: unknown, meaning: string) {
	return { default: fallback, description: `${meaning} Environment: ${env}.`, [ENV_KEYWORD]: env };
}

function fraction(env: string, fallback: number, meaning: string) {
	return Type.Number({ exclusiveMinimum: 0, maximum: 1, ...annotations(env, fallback, meaning) });
}

function tokens(env: string, fallback: number, meaning: string) {
	return Type.Integer({ minimum: 0, ...annotations(env, fallback, meaning) });
}

/**
 * The least protected tail a user may set, in tokens (about 4000 characters): with less, only the
 * newest block stays raw and the result the model read one request ago folds at the next event.
 */
const MIN_TAIL = 1000;

/** One schema per knob, keyed by its settings.json name. */
export const KNOB_SCHEMAS = {
	foldAt: fraction(
		"CONTEXTFOLD_FOLD_AT",
		DEFAULT_LADDER.foldAt,
		"ladder policy: first-fold threshold, as a share of the context window.",
	),
	coldFoldAt: fraction(
		"CONTEXTFOLD_COLD_FOLD_AT",
		DEFAULT_LADDER.coldFoldAt,
		"ladder policy: first-fold threshold once two responses came back and none read from the prompt cache.",
	),
	step: fraction(
		"CONTEXTFOLD_STEP",
		DEFAULT_LADDER.step,
		"ladder policy: least foldable mass worth an ordinary fold event, as a share of the context window.",
	),
	budgetFraction: fraction(
		"CONTEXTFOLD_BUDGET_FRACTION",
		DEFAULT_LADDER.budgetFraction,
		"Budget, as a share of the context window; past it a fold event is urgent.",
	),
	budgetCap: Type.Union(
		[Type.Integer({ minimum: 0 }), Type.Literal("off")],
		annotations(
			"CONTEXTFOLD_BUDGET_CAP",
			DEFAULT_LADDER.budgetCap,
			'Absolute cap on the budget, in tokens; 0 or "off": no cap, the budget is budgetFraction of the window.',
		),
	),
	floor: fraction(
		"CONTEXTFOLD_FLOOR",
		DEFAULT_LADDER.floor,
		"Least saving of an urgent fold event, as a share of the context window.",
	),
	tail: Type.Integer({
		minimum: MIN_TAIL,
		...annotations(
			"CONTEXTFOLD_TAIL",
			DEFAULT_LADDER.tail,
			`ladder policy: protected tail in tokens, at least ${MIN_TAIL}: the newest tokens never fold (clamped to half the budget).`,
		),
	}),
	cacheTtlSeconds: Type.Integer({
		minimum: 1,
		[UNIT_KEYWORD]: "number of seconds",
		...annotations(
			"CONTEXTFOLD_CACHE_TTL_SECONDS",
			300,
			"Prompt-cache lifetime in seconds. After an idle gap this long with no refresh by Pi's cache warming, the cache is cold and a fold event needs half the least size (working-set, economic: minEvent) or none (ladder: step). Unset, the model's own lifetime for the cache retention in use comes first where Pi knows it (Anthropic: 300, or 3600 with PI_CACHE_RETENTION=long, in the environment or the provider's stored credential's env, wherever Pi writes Anthropic's marks: any Anthropic Messages model, a Claude model on Amazon Bedrock, and chat-completions models with compat.cacheControlFormat \"anthropic\"), and this default (5 minutes) only where it does not.",
		),
	}),
	cacheTtlByProvider: Type.String({
		pattern: PROVIDER_TTL_PATTERN,
		...annotations(
			"CONTEXTFOLD_CACHE_TTL_BY_PROVIDER",
			"",
			'Prompt-cache lifetimes per provider, overriding cacheTtlSeconds and the lifetime the model declares for that provider: "provider=seconds", comma separated, e.g. "anthropic=300, openai=3600" (provider names in any case); empty: none. These saved intervals drive the idle cache-risk warning and the cold-anyway facts; they do not change what the provider retains.',
		),
	}),
	confirmColdSend: Type.Boolean(
		annotations(
			"CONTEXTFOLD_CONFIRM_COLD_SEND",
			false,
			'Terminal UI: before sending a prompt that likely finds the prompt cache cold (idle past its lifetime, 20k+ tokens carried), ask "Keep draft / Send anyway". Keep draft puts the text back in the editor and keeps its images for the next prompt.',
		),
	),
	cacheIdleMinutes: Type.Union([Type.Integer({ minimum: 0 }), Type.Literal("auto"), Type.Literal("off")], {
		[UNIT_KEYWORD]: "number of minutes",
		...annotations(
			"CONTEXTFOLD_CACHE_IDLE_MINUTES",
			"auto",
			'The idle cache-risk warning (and confirmColdSend\'s question) waits at least this many idle minutes besides the cache lifetime; "auto": the lifetime alone; 0 or "off": the warning never speaks.',
		),
	}),
	policy: Type.Union(
		[Type.Literal("ladder"), Type.Literal("economic"), Type.Literal("working-set")],
		annotations(
			"CONTEXTFOLD_POLICY",
			"working-set",
			"working-set (default): fold what the model stopped using (useWindow), only when the saving pays for the cache rewrite, with hotTail/coldTail, horizon, foldFrom, minEvent and backstopAt; economic: the frugal profile, the same purchase by age and size alone, for users who accept more recalls for less cost (measured: 0.47× plain Pi over the corpus where the default costs 0.55×, the model seeing 5.5 points below plain Pi on average and up to 13.9); ladder: the seed's static ladder, fold at foldAt down one step, keeping tail.",
		),
	),
	hotTail: Type.Integer({
		minimum: MIN_TAIL,
		...annotations(
			"CONTEXTFOLD_HOT_TAIL",
			WORKING_SET_ECONOMIC.hotTail,
			`economic and working-set policies: tool results (and, under working-set, files the model wrote) within the newest this many tokens never fold, unless a later call superseded them (left unset, ${URGENT_HOT_TAIL} at least, and at most half the budget, when an event is urgent, past the budget); the backstop compaction keeps this many tokens raw (at least ${MIN_TAIL}; ${DEFAULT_ECONOMIC.hotTail} by default under economic).`,
		),
	}),
	coldTail: Type.Integer({
		minimum: MIN_TAIL,
		...annotations(
			"CONTEXTFOLD_COLD_TAIL",
			DEFAULT_ECONOMIC.coldTail,
			`economic and working-set policies: thinking, assistant text, arguments and superseded reads within the newest this many tokens never fold (at least ${MIN_TAIL}).`,
		),
	}),
	horizon: Type.Integer({
		minimum: 1,
		[UNIT_KEYWORD]: "number of requests",
		...annotations(
			"CONTEXTFOLD_HORIZON",
			DEFAULT_ECONOMIC.horizon,
			"economic and working-set policies: requests over which a fold event's saving must repay its cache rewrite; unset, 20 but never more than a quarter of the requests the session has made so far.",
		),
	}),
	foldFrom: tokens(
		"CONTEXTFOLD_FOLD_FROM",
		DEFAULT_ECONOMIC.foldFrom,
		"economic and working-set policies: least usage, in tokens, at which an ordinary fold event may fire, whatever the context window.",
	),
	backstopAt: tokens(
		"CONTEXTFOLD_BACKSTOP_AT",
		DEFAULT_ECONOMIC.backstopAt,
		"economic and working-set policies: when folding everything would still leave at least this many tokens (a figure never below 1.25 × Pi's compaction.keepRecentTokens, below which Pi cannot compact), also compact (deterministic summary, keeping hotTail raw) once the agent's run is over; under working-set, not before the unfolded context reaches 60% of where Pi compacts on its own (Pi's point itself after a first compaction).",
	),
	minEvent: tokens(
		"CONTEXTFOLD_MIN_EVENT",
		WORKING_SET_ECONOMIC.minEvent,
		"economic and working-set policies: least saving of an ordinary fold event, in tokens (11200 by default under economic); in a small window at most a fifth of the usage at which Pi compacts on its own (window - compaction.reserveTokens).",
	),
	useWindow: Type.Integer({
		minimum: 0,
		[UNIT_KEYWORD]: "number of messages",
		...annotations(
			"CONTEXTFOLD_USE_WINDOW",
			DEFAULT_WORKING_SET.useWindow,
			"working-set policy: a block the model used (repeated one of its names) or received within its last this many messages stays raw.",
		),
	}),
	debug: Type.Boolean(
		annotations(
			"CONTEXTFOLD_DEBUG",
			false,
			"Report each fold event and each response's cache figures (read, write, hit rate) (stderr, or a notification in the terminal UI).",
		),
	),
	compact: Type.Union(
		[Type.Literal("fold"), Type.Literal("native")],
		annotations(
			"CONTEXTFOLD_COMPACT",
			"fold",
			"fold: a deterministic compaction summary, no model call; native: leave compaction to Pi.",
		),
	),
} satisfies Record<keyof FoldConfig, TSchema>;

/** The `context-fold` section of settings.json: every knob optional, no other key. */
const SettingsSection = Type.Object(
	Object.fromEntries(Object.entries(KNOB_SCHEMAS).map(([key, schema]) => [key, Type.Optional(schema)])),
	{
		additionalProperties: false,
		description:
			"context-fold settings. Each may be overridden by the environment variable named in x-env: " +
			"defaults < settings < environment.",
	},
);

/**
 * A Pi settings.json holding the section: Pi's own keys pass untouched (`additionalProperties`),
 * so an editor can apply this schema beside Pi's.
 */
const SettingsFile = Type.Object(
	{
		$schema: Type.Optional(Type.String({ description: "JSON Schema reference." })),
		[SETTINGS_SECTION]: Type.Optional(SettingsSection),
	},
	{ additionalProperties: true },
);

/** The text of `docs/settings.schema.json`: SettingsFile under a JSON Schema header, tab-indented. */
export function settingsSchemaText(): string {
	const header = {
		$schema: "https://json-schema.org/draft/2020-12/schema",
		$comment: "Generated from src/adapters/pi/settings-schema.ts by `npm run schema`; do not edit by hand.",
		title: "Pi settings.json with context-fold's section",
		description: `Validates the "${SETTINGS_SECTION}" section of Pi's settings.json; every other key passes.`,
	};
	return `${JSON.stringify({ ...header, ...SettingsFile }, null, "\t")}\n`;
}
