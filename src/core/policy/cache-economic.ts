/**
 * The cache-economic fold policy (profile `"economic"`). A fold event rewrites the provider's cached
 * prompt from its first changed block on; the rewrite is paid once at the write price, the tokens it
 * masks are saved at the read price on every later request. So an ordinary event fires only when its
 * saving over `horizon` requests (by default no more than a quarter of those the session has made so
 * far, PAYBACK_SHARE) pays for that
 * rewrite and masks at least `minEvent` tokens (few, large events), and it folds everything outside
 * the tails from the start that pays best. Tool results the model re-reads keep a `hotTail` (past
 * the budget, URGENT_HOT_TAIL at least unless the user set one); everything else (thinking, text, arguments, superseded
 * reads) a shorter `coldTail`. When folding everything would still leave the prompt above `backstopAt` tokens,
 * the policy also asks for the deterministic compaction, which runs once the agent's run is over and
 * keeps only the hot tail raw; it keeps folding meanwhile. These sizes are tokens, not shares of the
 * window: neither a saving nor a rewrite depends on the window. The window counts twice only: past the
 * budget an event is urgent and folds whatever it can, paying or not; and where Pi would compact on
 * its own soon after `foldFrom` (a small window), the least event shrinks to fit below that. When the
 * cache is cold anyway (idle past its lifetime), or the session never read from it, the rewrite is
 * free, so an event needs only half the least size (COLD_LEAST_SHARE).
 */
import {
	budgetOf,
	DEFAULT_ECONOMIC,
	type EconomicConfig,
	type FoldCommand,
	type PolicyView,
	plainBeforePi,
	type ViewBlock,
} from "../contract.ts";

/**
 * Price of a cache write over a cache read, in reads, where the model's prices are unknown: a
 * rewritten token costs the write (1.25×) instead of the read (0.1×) it would have cost, so
 * (1.25 − 0.1) / 0.1 saved reads, Anthropic's 5-minute prices.
 */
export const REWRITE_IN_READS = 11.5;

/**
 * How near Pi's own compaction point (window − reserve) the unfolded context must come before a
 * protecting policy asks for its first backstop compaction. Measured on the corpus at 140k
 * (docs/defaults.md): a session whose residue is signed thinking (accordion-sample) compacts late
 * and dear at higher shares (0.82× at 1.0, 0.66× at 0.75, 0.59× at 0.6; 0.557× in total at 0.75,
 * 0.547× at 0.6) and no other session moves more than a hundredth; from 0.6 down to 0.5 no corpus
 * session compacts more often than Pi at 32k, 64k, 140k or 700k, nor any of nine public sessions at
 * 140k, but a lower share widens the band of sessions that peak short of Pi's point and might
 * compact where Pi never does. After a compaction the backstop waits for Pi's point itself (see
 * piCompactionPoint).
 */
const PI_COMPACTION_SHARE = 0.6;

/**
 * The unfolded context at which a protecting policy may ask for a backstop compaction, or 0 where
 * Pi's compaction is off: PI_COMPACTION_SHARE of Pi's point before any compaction, and Pi's point
 * itself after one. Context-fold's compaction keeps only its hot tail raw where Pi's keeps
 * `keepRecent`, so it starts lower, and at the same share it would come round more often than Pi's:
 * a long session then compacted three times where plain Pi compacted twice (docs/defaults.md).
 */
export function piCompactionPoint(view: PolicyView): number {
	if (view.reserve === undefined) return 0;
	return (view.compacted ? 1 : PI_COMPACTION_SHARE) * (view.window - view.reserve);
}

/** A model's prices per token, as Pi's model registry gives them (any unit, the same for all three). */
export interface CachePrices {
	input: number;
	cacheRead: number;
	/** 0 when the provider charges a cache write as plain input (OpenAI). */
	cacheWrite: number;
}

/**
 * The rewrite price in reads at `prices`: (write − read) / read, where a write costs `cacheWrite`, or
 * the input price when that is 0, or twice the input price for a long-retention write (Anthropic's
 * one-hour cache, as Pi prices it). Undefined when the model has no cache-read price.
 */
export function rewriteInReadsOf(prices: CachePrices, longWrite: boolean): number | undefined {
	const { input, cacheRead, cacheWrite } = prices;
	if (!(cacheRead > 0) || !(input > 0)) return undefined;
	const write = longWrite ? 2 * input : cacheWrite > 0 ? cacheWrite : input;
	return Math.max(0, (write - cacheRead) / cacheRead);
}

/**
 * The least hot tail of an urgent event while the user set none, and never more than half the
 * budget. Past the budget an event folds whatever it can, paying or not, and a protecting policy's
 * working set gives way: only the tails keep what the model reads. Measured in a 32k window, where
 * most events are urgent: with a 5k tail there cc-bhavana-rwa sees 8 points less than plain Pi, with
 * 7.5k 3.3 (docs/defaults.md).
 */
export const URGENT_HOT_TAIL = 7500;

/** The hot tail of an event: `knobs.hotTail`, or past the budget URGENT_HOT_TAIL at least (see there). */
export function hotTailOf(view: PolicyView, knobs: EconomicConfig, budget: number, urgent: boolean): number {
	if (!urgent || view.config.hotTail !== undefined) return knobs.hotTail;
	return Math.max(knobs.hotTail, Math.min(URGENT_HOT_TAIL, budget / 2));
}

/** The profile's knobs: those the view carries, else the profile's `defaults`, else the economic ones. */
export function economicKnobs(view: PolicyView, defaults: Partial<EconomicConfig> = {}): EconomicConfig {
	const c = view.config;
	const d = { ...DEFAULT_ECONOMIC, ...defaults };
	return {
		hotTail: c.hotTail ?? d.hotTail,
		coldTail: c.coldTail ?? d.coldTail,
		horizon: c.horizon ?? d.horizon,
		foldFrom: c.foldFrom ?? d.foldFrom,
		backstopAt: c.backstopAt ?? d.backstopAt,
		minEvent: c.minEvent ?? d.minEvent,
	};
}

/** True for what the model re-reads: a tool result whose file version no later call superseded. */
export function isHot(block: ViewBlock): boolean {
	return block.kind === "toolResult" && block.superseded !== true;
}

/**
 * The two tails: the newest block, every hot block (a tool result that no later call superseded:
 * what the model re-reads) that begins within the last `hotTail` tokens, and every other block
 * (thinking, text, arguments, superseded reads) that begins within the last `coldTail` tokens.
 */
export function economicTails(
	blocks: readonly ViewBlock[],
	hotTail: number,
	coldTail: number,
	hot: (block: ViewBlock) => boolean = isHot,
): Set<string> {
	const tail = new Set<string>();
	let after = 0;
	for (let i = blocks.length - 1; i >= 0; i--) {
		const block = blocks[i];
		if (i < blocks.length - 1 && after >= Math.max(hotTail, coldTail)) break;
		if (i === blocks.length - 1 || after < (hot(block) ? hotTail : coldTail)) tail.add(block.id);
		after += block.tokens;
	}
	return tail;
}

/**
 * Usage at and above which folding alone no longer suffices, so the policy also asks for a
 * compaction: `backstopAt` tokens, but never below where Pi can compact at all. Pi prepares a
 * compaction only when the context holds more than its `keepRecent` tokens (its cut keeps that much
 * raw, before context-fold moves the cut on to the hot tail), and the system prompt comes on top (a
 * quarter more, KEPT_OVERHEAD): below that Pi refuses ("Nothing to compact"), and a lower
 * backstop would ask after every run in vain.
 */
export function backstopOf(view: PolicyView, knobs: EconomicConfig): number {
	return backstopFor(knobs.backstopAt, view.keepRecent);
}

/** The backstop of `backstopAt` tokens when Pi keeps `keepRecent` tokens at a compaction (see backstopOf). */
export function backstopFor(backstopAt: number, keepRecent = 0): number {
	return Math.max(backstopAt, KEPT_OVERHEAD * keepRecent);
}

/** The context over Pi's kept tail at which Pi can compact, as a factor of that tail (system prompt, margin). */
export const KEPT_OVERHEAD = 1.25;

/**
 * Share of the usage at which Pi compacts on its own (window - reserveTokens) that the least ordinary
 * event may ask for. In a small window Pi compacts soon after `foldFrom`, before `minEvent` tokens of
 * foldable content can gather, and its compactions (each a cache rewrite) then do the work instead:
 * a 32k window with Pi's 16k reserve compacts past 15.6k, so the least event there is 3.1k.
 */
export const EVENT_ROOM_SHARE = 0.2;

/**
 * The least saving of an ordinary event: `minEvent`, but never more than EVENT_ROOM_SHARE of the usage
 * at which Pi compacts on its own (none binds from a window of about 72k with Pi's defaults and the
 * economic `minEvent`, 86k with the working-set's).
 */
export function leastEventOf(view: PolicyView, knobs: EconomicConfig): number {
	return leastEventFor(knobs.minEvent, view.window, view.reserve);
}

/**
 * Share of the least event an event must still save when its rewrite is free (the cache is cold
 * anyway): the rewrite costs nothing, but every fold risks a recall. Measured once the replay
 * weighed Pi's refreshes by Pi's own rule, where a pause between runs leaves the cache cold (19
 * sessions, 140k): no least event cost 0.546× plain Pi on the corpus at −1.91 points of
 * visibility on average and −5.0 at worst (gjc-youtube-transcripts), the whole one 0.570× at
 * −1.55 and −3.5, half of it 0.557× at −1.57 and −3.5 (and on the nine unseen sessions 0.617×
 * at −2.70, against 0.603× at −2.85 with none).
 */
export const COLD_LEAST_SHARE = 0.5;

/** The least event of `minEvent` in a `window` where Pi reserves `reserve` tokens, if its compaction is on (see leastEventOf). */
export function leastEventFor(minEvent: number, window: number, reserve?: number): number {
	if (reserve === undefined) return minEvent;
	return Math.min(minEvent, EVENT_ROOM_SHARE * Math.max(0, window - reserve));
}

/** One possible event: fold every candidate from `first` on. */
export interface EconomicEvent {
	/** Position, among the candidates, of the oldest one folded. */
	first: number;
	/** Tokens the event masks. */
	saved: number;
	/** Tokens written again after the event: the suffix from its first folded block, once folded. */
	rewrite: number;
}

/**
 * Share of the requests made so far within which an ordinary event must repay its rewrite while the
 * user set no horizon. The only estimate of a session's remaining length it gives is its length so
 * far: a session that has lasted n requests lasts another k with odds n / (n + k) (as likely to end
 * within n more as not), so a quarter of n more with four in five. An event that repays only later
 * is a bet that a short session loses: one fired on the last request of a 52k-peak session took it
 * to 1.17× plain Pi. Measured on 22 sessions at 140k (docs/defaults.md): against the whole of n,
 * 0.547× plain Pi on the corpus where it cost 0.549×, and on the twelve sessions beyond it 0.597×
 * at −1.75 points of visibility on average (−2.78), the dearest 1.09× (1.17×).
 */
export const PAYBACK_SHARE = 0.25;

/**
 * The requests an event's saving is counted over: the default `horizon`, but never more than
 * PAYBACK_SHARE of the requests the session has made so far (see there), and never below one. Where
 * Pi would compact on its own before the context grew by another `least` event (a small window),
 * the alternative to the event is that compaction, not the session's end: the whole horizon then
 * (in a 32k window the share alone cost 0.702× plain Pi on the corpus where this costs 0.682×,
 * debug-branchy compacting six times where an event spared it every one). So too where the context
 * would pass the fold budget first: the alternative is an urgent event, which folds the working set
 * too (in a 128k window the first event came urgent and folded a file the model was editing). A
 * horizon the user set is taken as given: it says how long their sessions last.
 */
export function horizonOf(view: PolicyView, knobs: EconomicConfig, least = 0): number {
	if (view.config.horizon !== undefined || view.requests === undefined) return knobs.horizon;
	if (view.reserve !== undefined && view.usage >= view.window - view.reserve - least) return knobs.horizon;
	if (view.usage >= budgetOf(view.config, view.window) - least) return knobs.horizon;
	return paybackHorizon(knobs.horizon, view.requests);
}

/** The requests an event must repay within after `requests` requests, under the default `horizon` (see horizonOf). */
export function paybackHorizon(horizon: number, requests: number): number {
	return Math.max(1, Math.min(horizon, PAYBACK_SHARE * requests));
}

/** Saving of an event over the horizon, in cache reads. */
function projectedSaving(event: EconomicEvent, horizon: number): number {
	return event.saved * horizon;
}

/** One-time cost of an event's rewrite, in cache reads, at `inReads` reads a rewritten token. */
function rewriteCost(event: EconomicEvent, inReads = REWRITE_IN_READS): number {
	return event.rewrite * inReads;
}

/** A block outside the tails that may fold, with its position in the view. */
interface Outside {
	block: ViewBlock;
	index: number;
}

/** The blocks outside `tail` that may fold (eligible, not frozen, not held), with their positions; no saving is read. */
function outsideTails(view: PolicyView, tail: ReadonlySet<string>): Outside[] {
	const out: Outside[] = [];
	const blocks = view.blocks;
	for (let index = 0; index < blocks.length; index++) {
		const block = blocks[index];
		if (block.eligible && !block.frozen && !block.held && !tail.has(block.id)) out.push({ block, index });
	}
	return out;
}

/** What `blocks` cost as sent: no fold of them saves more. */
function tokensOf(blocks: readonly Outside[]): number {
	let tokens = 0;
	for (const c of blocks) tokens += c.block.tokens;
	return tokens;
}

/**
 * Every event the candidates allow, one per starting candidate (fold it and every later candidate),
 * oldest start first. Costs are from the blocks as they will be sent.
 */
function possibleEvents(view: PolicyView, candidates: readonly { block: ViewBlock; index: number }[]): EconomicEvent[] {
	const events: EconomicEvent[] = [];
	let total = 0;
	for (const block of view.blocks) total += block.tokens;
	let saved = 0;
	for (const c of candidates) saved += c.block.saving;
	let prefix = 0;
	let at = 0;
	for (let k = 0; k < candidates.length; k++) {
		const { index } = candidates[k];
		for (; at < index; at++) prefix += view.blocks[at].tokens;
		events.push({
			first: k,
			saved,
			rewrite: Math.max(0, total - prefix - saved),
		});
		saved -= candidates[k].block.saving;
	}
	return events;
}

/**
 * What a policy built on this one keeps raw besides the tails: `keep` says which blocks are in use
 * (no ordinary event folds them; an urgent one does), and `hot` which blocks keep the hot tail
 * (default: isHot). With a protection, the backstop counts every block that may fold once it leaves
 * the tails and the model has seen it, so only what can never fold asks for a compaction.
 */
export interface Protection {
	keep: (block: ViewBlock) => boolean;
	hot?: (block: ViewBlock) => boolean;
}

/**
 * Decides whether an event fires now, what it folds, or whether to compact instead; `defaults` are
 * the knobs' defaults of a profile built on this one (see economicKnobs).
 */
export function economize(
	view: PolicyView,
	protection?: Protection,
	defaults?: Partial<EconomicConfig>,
): FoldCommand[] {
	const { window, usage } = view;
	if (!(window > 0) || !(usage >= 0)) return [];
	const knobs = economicKnobs(view, defaults);
	const budget = budgetOf(view.config, window);
	const urgent = usage > budget;
	if (!urgent && usage < Math.min(knobs.foldFrom, knobs.backstopAt)) return [];
	const backstop = backstopOf(view, knobs);
	// A cache that is cold anyway (idle past its lifetime) or that this session never read from is
	// rewritten by the next request whatever folds: the rewrite is free, and an event need save only
	// COLD_LEAST_SHARE of the least event.
	const rewriteFree = view.cache?.warm === false || view.neverCacheRead;
	const least = rewriteFree ? COLD_LEAST_SHARE * leastEventOf(view, knobs) : leastEventOf(view, knobs);
	const tail = economicTails(view.blocks, hotTailOf(view, knobs, budget, urgent), knobs.coldTail, protection?.hot);
	const outside = outsideTails(view, tail);
	// Short of the backstop and the budget, only an event saving at least `least` can come out. A fold
	// saves at most its block's cost, so when the blocks that could fold cost less than that in all, no
	// saving needs working out (each is a digest, made the first time it is read).
	if (!urgent && usage < backstop && least > 0 && tokensOf(outside) < least) return [];
	// Savings are read only where a decision needs them (each is a digest, made the first time it is
	// read): the candidates of the event, and the maskable total only for a compaction's figure or the
	// backstop test of a policy that does not protect.
	let allMaskable: number | undefined;
	const maskableOfAll = (): number => {
		if (allMaskable === undefined) {
			allMaskable = 0;
			for (const c of outside) allMaskable += c.block.saving;
		}
		return allMaskable;
	};
	const compact = (): FoldCommand => ({ type: "compact", usage, budget, maskable: maskableOfAll() });
	// A context with (next to) nothing to fold out of it compacts where plain Pi's does (pasted documents, short outputs).
	const asPi = (): boolean => plainBeforePi(view, leastEventOf(view, knobs));
	// With a protection, no compaction comes well before Pi's own would: the context unfolded, as plain
	// Pi holds it, must have reached piCompactionPoint (where Pi's compaction is on).
	const beforePi = protection !== undefined && usage + (view.masked ?? 0) < piCompactionPoint(view);
	// Above the backstop even once all is folded, a compaction is asked for; it runs when the agent's
	// run is over, so folding goes on meanwhile. A policy that protects counts every block that may
	// fold once out of the tails and in the model's sight as foldable: only what never folds compacts.
	// The usage is the provider's count, so each saving is too (providerSaving: CJK text counts about
	// four times its chars/4). Savings are never negative, so the count stops once they could bring
	// the usage under the backstop.
	let backstopped = false;
	if (usage >= backstop && !beforePi && !asPi()) {
		const room = usage - backstop;
		let foldable = 0;
		/** Counts `block` in; true once folding could bring the usage under the backstop. */
		const enough = (block: ViewBlock): boolean => {
			if (block.eligible && !block.frozen) foldable += block.providerSaving ?? block.saving;
			return foldable > room;
		};
		if (protection) view.blocks.some(enough);
		else outside.some((c) => enough(c.block));
		backstopped = foldable <= room;
	}
	const withCompact = (folds: FoldCommand[]): FoldCommand[] => (backstopped ? [...folds, compact()] : folds);
	// Blocks in use stay raw: they count toward the backstop above, so this costs no compaction.
	const keep = protection && !urgent ? protection.keep : undefined;
	const unkept = keep ? outside.filter((c) => !keep(c.block)) : outside;
	// Short of the budget, an event needs `foldFrom` and a saving of `least`; the blocks left cost at
	// least what they would save, so most requests end here without a saving worked out.
	if (!urgent && (usage < knobs.foldFrom || tokensOf(unkept) < least)) return withCompact([]);
	const candidates = unkept.filter((c) => c.block.saving > 0);
	let maskable = 0;
	for (const c of candidates) maskable += c.block.saving;
	const inReads = view.cache?.rewriteInReads ?? REWRITE_IN_READS;
	if (urgent) {
		if (candidates.length === 0 || maskable < view.config.floor * window) return asPi() ? [] : [compact()];
		return withCompact(candidates.map((c) => ({ type: "fold", id: c.block.id, urgent: true })));
	}
	// Every event folds a suffix of the candidates, so none saves more than all of them do.
	if (usage < knobs.foldFrom || candidates.length === 0 || maskable < least) return withCompact([]);
	let best: EconomicEvent | undefined;
	let bestNet = 0;
	const horizon = horizonOf(view, knobs, least);
	for (const event of possibleEvents(view, candidates)) {
		const net = projectedSaving(event, horizon) - (rewriteFree ? 0 : rewriteCost(event, inReads));
		if (net > bestNet && event.saved >= least) {
			best = event;
			bestNet = net;
		}
	}
	if (!best) return withCompact([]);
	return withCompact(candidates.slice(best.first).map((c) => ({ type: "fold", id: c.block.id, urgent: false })));
}
