/**
 * The user's view of context-fold as text, pure: the footer line, the `/context-fold status` text,
 * a fold event's or unfold's label in the transcript and `/tree`, and the notice of a deterministic
 * compaction, made from plain figures (the latest request's in latest-request.ts, the session
 * history's in session-history.ts, the fold point and the cache lifetime the adapter passes in).
 * The adapter gathers the data and shows the text; nothing here reads a clock or Pi.
 */
import { codeLine, LINE_WIDTH } from "./block-line.ts";
import { duration, type Lifetime } from "./cache-advice.ts";
import { bar, PART_LABELS, PARTS, type Part } from "./latest-request.ts";
import type { ProfileName } from "./policy/profiles.ts";
import type { CacheLine, EventLine } from "./session-history.ts";
import { percent, short } from "./tokens.ts";

/** How many of a long session's events the status lists: its first ones and its latest. */
const STATUS_EVENTS = { first: 2, last: 10 } as const;

/** What the footer shows. */
export interface FooterFacts {
	folds: number;
	keptOut: number;
	/** Cache hit rate since the latest fold event; undefined when no response came back since. */
	hitRate: number | undefined;
	/** An advisory is active. */
	advisory: boolean;
}

/**
 * The footer line, e.g. `fold 12 · −53k · cache read 94%` (the share of prompt tokens read from the
 * cache since the latest fold event or unfold), with `· ⚠` while an advisory is active. While nothing
 * is folded it claims nothing: undefined, or `context-fold ⚠` while an advisory is active.
 */
export function footerText(facts: FooterFacts): string | undefined {
	if (facts.folds === 0) return facts.advisory ? "context-fold ⚠" : undefined;
	const parts = [`fold ${facts.folds}`, `−${short(facts.keptOut)}`];
	parts.push(facts.hitRate === undefined ? "cache read –" : `cache read ${percent(facts.hitRate)}`);
	if (facts.advisory) parts.push("⚠");
	return parts.join(" · ");
}

/**
 * What the user is told when a compaction used context-fold's deterministic summary: why, when
 * context-fold asked for it itself (`why`), that no model was called, what it summarised and kept
 * raw, and that every block stays readable.
 */
export function compactionNotice(tokensBefore: number, blocks: number, why?: string): string {
	return (
		`context-fold: ${why ? `${why}, so it ` : ""}compacted the context from ~${short(tokensBefore)} tokens with its deterministic summary (no model call); ` +
		`the newest messages stay raw, and each of the ${blocks} block${blocks === 1 ? "" : "s"} it summarised ` +
		"is still read by /context-fold recall <code>"
	);
}

/** How a fold event or unfold reads in the transcript and in `/tree`: "folded #a, #b · ~4.4k tokens kept out". */
export function eventLabel(kind: "fold" | "unfold", codes: readonly string[], tokens: number, max = 4): string {
	const shown = codes.slice(0, max).map((c) => `#${c}`);
	const more = codes.length > max ? ` +${codes.length - max}` : "";
	const list = `${shown.join(", ")}${more}`;
	if (kind === "unfold") return `unfolded ${list}${tokens > 0 ? ` · ~${short(tokens)} tokens back in context` : ""}`;
	return `folded ${list} · ~${short(tokens)} tokens kept out`;
}

/** One folded block for the "largest folded blocks" list. */
export interface FoldedBlock {
	code: string;
	/** What the block was: its tool and the call's command or path, or its kind (core/block-line.ts `blockWhat`). */
	what: string;
	/** Tokens it keeps out of the request. */
	tokens: number;
}

/** Where the next fold may happen, in the terms of the policy in force. */
export interface FoldPoint {
	policy: ProfileName;
	/** Usage (tokens) from which a fold event may fire. */
	at: number;
	/** The knob that sets it, e.g. "foldAt 45%". */
	knob: string;
	/** What an ordinary event must be, one short clause each (the economic profiles'). */
	event?: readonly string[];
	/** The budget in tokens; past it a fold event is urgent. */
	budget: number;
	/** Economic and working-set: above this, when folding cannot get below it, context-fold compacts. */
	backstop?: number;
	/** Where Pi compacts on its own (window − reserveTokens), while its compaction is on. */
	piCompactsAt?: number;
}

/**
 * The thresholds after the next fold, as the status names them: the budget and the backstop, each
 * only while it lies below where Pi compacts on its own (past that Pi's compaction comes first), and
 * that point where it hid one.
 */
export function thresholdsText(p: FoldPoint): string {
	let hidden = false;
	const parts: string[] = [];
	for (const [name, at] of [
		["budget", p.budget],
		["backstop", p.backstop],
	] as const) {
		if (at === undefined) continue;
		if (p.piCompactsAt === undefined || at < p.piCompactsAt) parts.push(`${name} ${short(at)}`);
		else hidden = true;
	}
	if (hidden && p.piCompactsAt !== undefined) parts.push(`Pi compacts at ${short(p.piCompactsAt)}`);
	return parts.join(" · ");
}

/** Columns a status line may take: those the terminal UI's view keeps for text in a 100-column terminal. */
export const VIEW_WIDTH = LINE_WIDTH - 2;

/** Everything `/context-fold status` shows. */
export interface StatusFacts {
	/** Context tokens of the latest request as sent (after its folds); undefined before any request. */
	usage: number | undefined;
	window: number | undefined;
	point: FoldPoint | undefined;
	parts: Record<Part, number> | undefined;
	folds: number;
	keptOut: number;
	/** The footer's figure: cache read since the latest fold event or unfold; undefined when no response came since. */
	sinceFold?: number;
	events: readonly EventLine[];
	cache: readonly CacheLine[];
	/** The cache lifetime assumed for the current model (idle warning, cold-anyway rule), and its source. */
	lifetime?: Lifetime;
	largest: readonly FoldedBlock[];
	advisories: readonly string[];
	/** Failures announced this session (each once), with which context-fold went on degraded. */
	failures?: readonly string[];
	/** The figures are of the conversation as the next request would send it: none went out yet. */
	preview?: boolean;
	/** Pi's own count of the context (the provider's usage plus Pi's estimates), when Pi has one. */
	piUsage?: number;
	/** Width of the bar in characters (default: 60, or less where `width` leaves less). */
	barWidth?: number;
	/** Columns each line may take (default: those the terminal UI's view keeps in a 100-column terminal). */
	width?: number;
}

/** How the status names where the cache lifetime came from (a knob's name, saved or set by its variable). */
const LIFETIME_SOURCES: Record<Lifetime["source"], string> = {
	cacheTtlByProvider: "cacheTtlByProvider",
	cacheTtlSeconds: "cacheTtlSeconds",
	model: "the model's, for the cache retention in use",
	default: "cacheTtlSeconds default; the model declares none",
};

/** Where the cache lifetime came from, in the status's words: `saved: cacheTtlSeconds`, `environment: CONTEXTFOLD_…`. */
function lifetimeSource(l: Lifetime): string {
	if (l.source === "model" || l.source === "default") return LIFETIME_SOURCES[l.source];
	return l.variable ? `environment: ${l.variable}` : `saved: ${LIFETIME_SOURCES[l.source]}`;
}

/** Share by which Pi's count must differ from the chars/4 figure before the status names it. */
const PI_COUNT_SHOWN = 0.1;

/** `Pi counts 177k` when Pi's own count differs from the status's figure by PI_COUNT_SHOWN or more. */
function piCount(f: StatusFacts): string[] {
	if (f.piUsage === undefined || f.usage === undefined || !(f.usage > 0)) return [];
	return Math.abs(f.piUsage - f.usage) >= PI_COUNT_SHOWN * f.usage ? [`Pi counts ${short(f.piUsage)}`] : [];
}

/**
 * Items joined by `sep` into lines of at most `width` columns, breaking between items; an item no
 * indented line holds breaks between its own words, its leading spaces kept. Continuation lines
 * open with `indent` where it leaves room; a single word longer than a line stands alone.
 */
function between(items: readonly string[], sep: string, indent: string, width: number): string[] {
	const lines: string[] = [];
	let line = "";
	const add = (text: string, glue: string) => {
		if (line && line.length + glue.length + text.length > width) {
			lines.push(line);
			line = indent.length + text.length <= width ? indent + text : text;
		} else line = line ? line + glue + text : text;
	};
	for (const item of items) {
		if (indent.length + item.length <= width) add(item, sep);
		else {
			const lead = item.slice(0, item.length - item.trimStart().length);
			for (const [k, word] of item.trimStart().split(" ").entries())
				add(k === 0 ? lead + word : word, k === 0 ? sep : " ");
		}
	}
	if (line) lines.push(line);
	return lines;
}

/** The `/context-fold status` text: plain lines, no colour, the same in every mode. */
export function statusText(f: StatusFacts): string {
	const width = Math.max(20, f.width ?? VIEW_WIDTH);
	const wrap = (items: readonly string[], sep: string, indent: string) => between(items, sep, indent, width);
	// Prose under a 10-column heading, continuation lines indented under its text.
	const words = (heading: string, text: string) => wrap([heading.padEnd(10) + text], " ", "          ");
	const out: string[] = ["context-fold status"];
	if (f.usage === undefined || !f.window) {
		out.push("", "No request has gone out in this session yet: nothing to show.");
	} else {
		const p = f.point;
		const share = percent(f.usage / f.window);
		const context = [
			`Context   ${short(f.usage)} of ${short(f.window)} window (${share})`,
			...piCount(f),
			...(f.preview ? ["as the next request would send it"] : []),
		];
		out.push("", ...wrap(context, " · ", "          "));
		if (p) {
			// The policy's thresholds read Pi's count (see piUsage), so "away" and "reached" do too.
			const toFold = p.at - (f.piUsage ?? f.usage);
			const head = `Next fold ${short(p.at)} (${p.policy} ${p.knob})`;
			const where = toFold > 0 ? `${short(toFold)} away` : "reached";
			const items = [head, where, ...(p.event ?? []), ...thresholdsText(p).split(" · ")];
			out.push(...wrap(items, " · ", "          "));
		}
		if (f.parts) {
			out.push("", `[${bar(f.parts, f.barWidth ?? Math.min(60, width - 2))}]`);
			const legend = PARTS.filter((k) => f.parts && f.parts[k] > 0).map(
				(k) => `${PART_LABELS[k].glyph} ${PART_LABELS[k].label} ${short(f.parts?.[k] ?? 0)}`,
			);
			out.push(...wrap(legend, " · ", ""));
		}
	}
	out.push("", ...words("Folds", `${f.folds} in context, ~${short(f.keptOut)} tokens kept out of this request`));
	if (f.folds > 0) {
		const figure =
			f.sinceFold === undefined
				? "cache read since the latest fold event or unfold: – (no response has reported usage yet)"
				: `cache read ${percent(f.sinceFold)} since the latest fold event or unfold (the footer's figure)`;
		out.push(...words("", figure));
	}
	if (f.events.length === 0) out.push("Events    none yet");
	else {
		out.push("Events");
		// A long session's list keeps its first events and its latest, and counts the rest.
		const { first, last } = STATUS_EVENTS;
		const cut = f.events.length > first + last + 1;
		const shown = cut ? [...f.events.slice(0, first), undefined, ...f.events.slice(-last)] : f.events;
		for (const e of shown) {
			if (!e) {
				out.push(`  … ${f.events.length - first - last} more events (the session file holds each one)`);
				continue;
			}
			const what =
				e.kind === "fold"
					? `  #${e.seq ?? "?"} fold   ${e.codes.length} block${e.codes.length === 1 ? "" : "s"}, ~${short(e.tokens)} kept out`
					: e.kind === "compaction"
						? `  compaction from ~${short(e.tokens)}, ${e.ours ? "deterministic summary (no model call)" : "Pi's own summary"}`
						: `  unfold    ${e.codes.map((c) => `#${c}`).join(", ")}, ~${short(e.tokens)} back`;
			const rewrite =
				e.rewrite === undefined
					? "no response has reported usage since"
					: `rewrite ${short(e.rewrite)}${e.hitRate === undefined ? "" : `, cache read ${percent(e.hitRate)} of the next prompt`}`;
			out.push(...wrap([`${what};`, rewrite], " ", "            "));
		}
	}
	out.push(
		"",
		...words(
			"Cache",
			"cache read = share of prompt tokens read from the provider's cache: the footer's since the latest fold event, an event's on the next prompt; Pi's own CH, the latest prompt's",
		),
	);
	if (f.lifetime)
		out.push(...wrap([`  lifetime ${duration(f.lifetime.ms)} (${lifetimeSource(f.lifetime)})`], " ", "    "));
	if (f.cache.length === 0) out.push("  no response has reported usage yet");
	for (const c of f.cache) {
		const prompt = c.input + c.cacheRead + c.cacheWrite;
		const rate = prompt > 0 ? percent(c.cacheRead / prompt) : "–";
		const items = [
			`  ${c.provider}/${c.model}: ${c.responses} response${c.responses === 1 ? "" : "s"}`,
			`${c.hits} read the cache`,
			`cache read ${rate} (read ${short(c.cacheRead)}, write ${short(c.cacheWrite)}, uncached ${short(c.input)})`,
		];
		if (c.warms > 0) items.push(`${c.warms} idle refresh${c.warms === 1 ? "" : "es"}`);
		out.push(...wrap(items, ", ", "    "));
	}
	out.push(
		"",
		...wrap(
			f.largest.length === 0
				? ["Largest folded blocks"]
				: ["Largest folded blocks", "(/context-fold recall <code> shows one)"],
			" ",
			"  ",
		),
	);
	if (f.largest.length === 0) out.push("  none");
	// A block's line is at most LINE_WIDTH, however wide the terminal (as wherever a code is shown).
	for (const b of f.largest)
		out.push(`  ${codeLine(b.code, b.what, `~${short(b.tokens)} tokens kept out`, Math.min(width, LINE_WIDTH) - 2)}`);
	out.push("", "Advisories");
	if (f.advisories.length === 0) out.push("  none");
	for (const a of f.advisories) out.push(...wrap([`  ⚠ ${a}`], " ", "    "));
	const failures = f.failures ?? [];
	if (failures.length > 0) {
		out.push("", ...words("Failures", `${failures.length} announced this session, each once (context-fold went on)`));
		// Each in full: once its notice is gone, this is where the user reads what went wrong.
		for (const failure of failures) {
			const text = failure.trim().replace(/\s*\n\s*/g, " ");
			out.push(...between([text], " ", "  ", width - 2).map((line) => `  ${line}`));
		}
	}
	return out.join("\n");
}
