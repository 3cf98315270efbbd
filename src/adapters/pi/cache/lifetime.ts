/**
 * The prompt-cache lifetime context-fold assumes for a model: the one place that reads Pi for it. Pi
 * knows a model's lifetime per cache retention (its `promptCache` tiers: Anthropic's models declare
 * 5 minutes for the short tier and 1 hour for the long one, which `PI_CACHE_RETENTION=long` selects)
 * and warms the cache by it; context-fold's idle warning and cold-anyway rule use the same figure
 * unless the user saved a lifetime (`cacheTtlByProvider`, `cacheTtlSeconds`). It also reads the
 * model's prices for what a cache rewrite costs under that retention.
 */
import { getPromptCacheTtlMs } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { cacheLifetime, type Lifetime } from "../../../core/cache-advice.ts";
import { rewriteInReadsOf } from "../../../core/policy/cache-economic.ts";
import type { FoldConfig } from "../settings-schema.ts";

type ModelLike = ExtensionContext["model"];

/** The lifetime Pi gives `model` for the retention in use, in ms; undefined when it declares none. */
function modelLifetimeMs(model: ModelLike): number | undefined {
	if (!model) return undefined;
	try {
		const ms = getPromptCacheTtlMs(model, undefined);
		return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? ms : undefined;
	} catch {
		return undefined;
	}
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

/**
 * What a rewritten cached token costs over a read, in reads, at `model`'s prices for the cache
 * retention in use: Anthropic writes the long retention (`PI_CACHE_RETENTION=long`) at twice the
 * input price, as Pi prices it; undefined when the model declares no cache-read price.
 */
export function rewriteInReadsFor(model: ModelLike): number | undefined {
	if (!model?.cost) return undefined;
	const long = process.env.PI_CACHE_RETENTION === "long" && model.api === "anthropic-messages";
	return rewriteInReadsOf(model.cost, long);
}
