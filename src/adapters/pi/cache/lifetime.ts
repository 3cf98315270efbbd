/**
 * The prompt-cache lifetime context-fold assumes for a model: the one place that reads Pi for it. Pi
 * knows a model's lifetime per cache retention (its `promptCache` tiers: Anthropic's models declare
 * 5 minutes for the short tier and 1 hour for the long one, which `PI_CACHE_RETENTION=long` selects,
 * from the process environment or a provider's stored credential)
 * and warms the cache by it; context-fold's idle warning and cold-anyway rule use the same figure
 * unless the user saved a lifetime (`cacheTtlByProvider`, `cacheTtlSeconds`). It also reads the
 * model's prices for what a cache rewrite costs under that retention, and the providers Pi knows, to
 * name a `cacheTtlByProvider` entry that would never apply.
 */
import { getPromptCacheTtlMs } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import {
	cacheLifetime,
	type Lifetime,
	type PriceRatios,
	ratiosOf,
	repeatedProviders,
	unknownProviders,
} from "../../../core/cache-advice.ts";
import { rewriteInReadsOf } from "../../../core/policy/cache-economic.ts";
import { nearestName } from "../config.ts";
import type { FoldConfig } from "../settings-schema.ts";

type ModelLike = ExtensionContext["model"];

/** Anthropic's long cache retention, in ms: the `ttl: "1h"` Pi's mark carries under it. */
const ANTHROPIC_LONG_MS = 3_600_000;

/** What writesLongRetention reads of a model's compat. */
interface CacheCompat {
	supportsLongCacheRetention?: unknown;
	cacheControlFormat?: unknown;
}

/**
 * The `PI_CACHE_RETENTION` each provider's stored credential sets in its `env`, by provider (Pi's
 * auth: a credential's env takes priority over the process environment for its provider), learnt
 * from Pi's registry when a session starts or a model is chosen (see learnRetention).
 */
const credentialRetention = new Map<string, string | undefined>();

/**
 * Learns the cache retention `provider`'s stored credential sets (see credentialRetention), from Pi's
 * registry as Pi resolves a request's auth. Never throws: a registry that cannot say leaves the
 * process environment as the only source.
 */
export async function learnRetention(
	registry: Partial<Pick<ExtensionContext["modelRegistry"], "getProviderAuth">> | undefined,
	provider: string | undefined,
): Promise<void> {
	if (!provider || typeof registry?.getProviderAuth !== "function") return;
	try {
		const auth = await registry.getProviderAuth(provider);
		credentialRetention.set(provider, auth?.env?.PI_CACHE_RETENTION);
	} catch {
		// No credential env to read: the process environment stands.
	}
}

/**
 * How long a session start waits for the provider's credential (see learnRetention) before it goes on
 * without it: an API key is read from a file at once, but a credential Pi must refresh or run a
 * command for may take longer, and the session should not wait on it.
 */
export const RETENTION_WAIT_MS = 500;

/**
 * learnRetention, waited for up to `waitMs`: what a session start reads next (the idle warning, the
 * status, the first request's cache facts) then sees the credential's retention, as Pi's requests do.
 * A credential that takes longer is learnt when it comes.
 */
export async function learnRetentionSoon(
	registry: Parameters<typeof learnRetention>[0],
	provider: string | undefined,
	waitMs = RETENTION_WAIT_MS,
): Promise<void> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const waited = new Promise<void>((resolve) => {
		timer = setTimeout(resolve, waitMs);
		timer.unref?.();
	});
	try {
		await Promise.race([learnRetention(registry, provider), waited]);
	} finally {
		clearTimeout(timer);
	}
}

/** The `PI_CACHE_RETENTION` Pi uses for `model`'s requests: its credential's, else the process environment's. */
export function retentionOf(model: ModelLike): string | undefined {
	return (model ? credentialRetention.get(model.provider) : undefined) || process.env.PI_CACHE_RETENTION || undefined;
}

/** True for a Claude model on Amazon Bedrock (by id or name, as pi-ai tells one), whose cache marks Pi writes. */
function bedrockClaude(model: NonNullable<ModelLike>): boolean {
	return model.api === "bedrock-converse-stream" && `${model.id} ${model.name ?? ""}`.toLowerCase().includes("claude");
}

/**
 * True when Pi writes `model`'s cache with Anthropic's one-hour mark under `PI_CACHE_RETENTION=long`
 * (the process environment's, or the provider's credential's: see retentionOf), unless the model's
 * compat refuses long retention (Pi then marks the short one): on the Anthropic Messages API, from
 * any provider (OpenRouter, gateways, a models.json entry), for a Claude model on Amazon Bedrock
 * (`ttl: ONE_HOUR`), and on OpenAI chat completions where Pi writes Anthropic's marks
 * (`compat.cacheControlFormat: "anthropic"`, which Pi also takes for OpenRouter's `anthropic/*` models).
 */
function writesLongRetention(model: ModelLike): boolean {
	if (!model || retentionOf(model) !== "long") return false;
	const compat = (model as { compat?: CacheCompat }).compat;
	if (compat?.supportsLongCacheRetention === false) return false;
	if (model.api === "anthropic-messages" || bedrockClaude(model)) return true;
	if (model.api !== "openai-completions") return false;
	const format =
		compat?.cacheControlFormat ??
		(model.provider === "openrouter" && model.id?.startsWith("anthropic/") ? "anthropic" : undefined);
	return format === "anthropic";
}

/**
 * The lifetime Pi gives `model` for the retention in use, in ms: its `promptCache` tier, else the
 * hour of Anthropic's long retention where Pi writes it (see writesLongRetention); undefined when
 * neither applies.
 */
function modelLifetimeMs(model: ModelLike): number | undefined {
	if (!model) return undefined;
	try {
		const retention = retentionOf(model);
		const ms = getPromptCacheTtlMs(model, retention ? { env: { PI_CACHE_RETENTION: retention } } : undefined);
		if (typeof ms === "number" && Number.isFinite(ms) && ms > 0) return ms;
	} catch {
		// A model Pi cannot read a tier of: as if it declared none.
	}
	return writesLongRetention(model) ? ANTHROPIC_LONG_MS : undefined;
}

/** The cache lifetime for `model` under `config` (see cacheLifetime); `secondsSet` when the user set `cacheTtlSeconds`. */
export function lifetimeFor(model: ModelLike, config: FoldConfig, secondsSet: boolean): Lifetime {
	return cacheLifetime({
		provider: model?.provider,
		table: config.cacheTtlByProvider,
		seconds: config.cacheTtlSeconds,
		secondsSet,
		modelMs: modelLifetimeMs(model),
	});
}

/** `lifetime` naming the environment variable that set its knob, where one did (`variables`: by knob). */
export function withVariable(lifetime: Lifetime, variables: Partial<Record<string, string>>): Lifetime {
	const knob =
		lifetime.source === "cacheTtlByProvider" || lifetime.source === "cacheTtlSeconds" ? lifetime.source : "";
	const variable = knob ? variables[knob] : undefined;
	return variable ? { ...lifetime, variable } : lifetime;
}

/**
 * What a rewritten cached token costs over a read, in reads, at `model`'s prices for the cache
 * retention in use: Anthropic writes the long retention (see writesLongRetention) at twice the
 * input price, as Pi prices it. A model that declares no cache-read price: undefined (the policy's
 * 5-minute default), or the default ratios' long-retention figure where Pi writes that retention.
 */
export function rewriteInReadsFor(model: ModelLike): number | undefined {
	const long = writesLongRetention(model);
	const priced = model?.cost ? rewriteInReadsOf(model.cost, long) : undefined;
	if (priced !== undefined || !long) return priced;
	const { read, write } = ratiosOf(undefined, true);
	return (write - read) / read;
}

/** The model's cache price ratios for the retention in use (core ratiosOf; see writesLongRetention). */
export function priceRatiosFor(model: ModelLike): PriceRatios {
	return ratiosOf(model?.cost, writesLongRetention(model));
}

/** The providers of every model Pi's registry knows; undefined when there is no registry or it cannot be read. */
export function knownProviders(
	registry: Pick<ExtensionContext["modelRegistry"], "getAll"> | undefined,
): string[] | undefined {
	try {
		const models = registry?.getAll();
		return models ? [...new Set(models.map((model) => model.provider))] : undefined;
	} catch {
		return undefined;
	}
}

/**
 * One problem for each `cacheTtlByProvider` entry that never applies: a provider named again (its
 * first entry applies), and a name that matches none of `providers` in any case, with the provider
 * a slip of a key away (none of those without `providers`).
 */
export function providerTableProblems(table: string, providers: readonly string[] | undefined): string[] {
	const repeated = repeatedProviders(table).map(
		(entry) =>
			`cacheTtlByProvider entry "${entry}" names a provider named before, so it never applies (the first does)`,
	);
	if (!providers) return repeated;
	return [
		...repeated,
		...unknownProviders(table, providers).map((name) => {
			const near = nearestName(name, providers);
			const hint = near ? `did you mean ${near}?` : "a provider's name as /model shows it, e.g. anthropic";
			return `cacheTtlByProvider entry "${name}" names no provider Pi knows, so it never applies (${hint})`;
		}),
	];
}
