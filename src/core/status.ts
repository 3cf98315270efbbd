/**
 * The user's view of context-fold, pure: what the latest request carried (folded, raw, protected),
 * the footer line, the `/context-fold status` text, and the figures they are made of, read from
 * plain data (the engine's pass snapshot, session entries as Pi stores them, fold records). The
 * adapter gathers the data and shows the text; nothing here reads a clock or Pi.
 */
import type { FoldOp } from "./apply.ts";
import { codeLine, LINE_WIDTH } from "./block-line.ts";
import { duration, type Lifetime } from "./cache-advice.ts";
import type { ViewBlock } from "./contract.ts";
import type { FoldRecord } from "./fold-registry.ts";
import { blockCost, clip, firstLine, short } from "./tokens.ts";

/** One block of the latest request as it went out (the fold event of that request applied). */
export interface PassRow extends ViewBlock {
	/** Tokens of the block unfolded. */
	raw: number;
	/** Folded in this request (by an earlier event or by this request's). */
	folded: boolean;
}

/** The latest request, as the status reads it. */
export interface PassSnapshot {
	rows: PassRow[];
	/** Context tokens of the request before this request's fold event. */
	usage: number;
	window: number;
}

/**
 * The rows of a pass: each view block with its raw cost, and the blocks `event` folds now marked
 * folded at their folded cost (their saving taken off).
 */
export function passRows(blocks: readonly ViewBlock[], raw: readonly number[], event: ReadonlySet<string>): PassRow[] {
	return blocks.map((b, i) => {
		const now = event.has(b.id);
		return {
			id: b.id,
			kind: b.kind,
			tokens: now ? Math.max(0, b.tokens - b.saving) : b.tokens,
			eligible: b.eligible,
			frozen: b.frozen || now,
			held: b.held,
			saving: 0,
			superseded: b.superseded,
			raw: raw[i] ?? b.tokens,
			folded: b.frozen || now,
		};
	});
}

/** Folds in the request and the tokens they keep out of it. */
export function keptOut(rows: readonly PassRow[]): { folds: number; tokens: number } {
	let folds = 0;
	let tokens = 0;
	for (const row of rows) {
		if (!row.folded) continue;
		folds++;
		tokens += Math.max(0, row.raw - row.tokens);
	}
	return { folds, tokens };
}

/** The parts of the context picture, in the order the bar draws them. */
export const PARTS = ["system", "summary", "digests", "fixed", "raw", "tail"] as const;
export type Part = (typeof PARTS)[number];

/** What each part is called, and the character the bar draws it with. */
export const PART_LABELS: Readonly<Record<Part, { label: string; glyph: string }>> = {
	system: { label: "system and tools", glyph: "S" },
	summary: { label: "summary", glyph: "C" },
	digests: { label: "folded digests", glyph: "#" },
	fixed: { label: "never folds", glyph: "=" },
	raw: { label: "raw foldable", glyph: "~" },
	tail: { label: "protected tail", glyph: "T" },
};

/**
 * Splits the request by part: `system` tokens as given, compaction summaries, folded digests, the
 * protected tail (`tail` ids not folded), foldable blocks outside it, and the rest (user text,
 * signed thinking and whatever else never folds).
 */
export function contextParts(
	rows: readonly PassRow[],
	tail: ReadonlySet<string>,
	system: number,
): Record<Part, number> {
	const parts: Record<Part, number> = { system, summary: 0, digests: 0, fixed: 0, raw: 0, tail: 0 };
	for (const row of rows) {
		const part: Part =
			row.kind === "summary"
				? "summary"
				: row.folded
					? "digests"
					: tail.has(row.id)
						? "tail"
						: row.eligible
							? "raw"
							: "fixed";
		parts[part] += row.tokens;
	}
	return parts;
}

/** A ratio as a whole percentage. */
export function percent(ratio: number): string {
	return `${Math.round(ratio * 100)}%`;
}

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
 * cache since the latest fold event or unfold); undefined while nothing is folded (before the first
 * fold it claims nothing).
 */
export function footerText(facts: FooterFacts): string | undefined {
	if (facts.folds === 0) return undefined;
	const parts = [`fold ${facts.folds}`, `−${short(facts.keptOut)}`];
	parts.push(facts.hitRate === undefined ? "cache read –" : `cache read ${percent(facts.hitRate)}`);
	if (facts.advisory) parts.push("⚠");
	return parts.join(" · ");
}

/** One bar of `width` characters, each part's share drawn with its glyph (a non-empty part gets at least one). */
export function bar(parts: Readonly<Record<Part, number>>, width: number): string {
	const total = PARTS.reduce((n, p) => n + Math.max(0, parts[p]), 0);
	if (total <= 0 || width <= 0) return "";
	const present = PARTS.filter((p) => parts[p] > 0);
	const cells = present.map((p) => Math.max(1, Math.floor((parts[p] / total) * width)));
	let extra = width - cells.reduce((n, c) => n + c, 0);
	// Hand leftover cells to the largest parts; take surplus from them likewise.
	const order = present.map((_, i) => i).sort((a, b) => parts[present[b]] - parts[present[a]]);
	for (let k = 0; extra !== 0 && k < order.length * width; k++) {
		const i = order[k % order.length];
		if (extra > 0) {
			cells[i]++;
			extra--;
		} else if (cells[i] > 1) {
			cells[i]--;
			extra++;
		}
	}
	return present.map((p, i) => PART_LABELS[p].glyph.repeat(cells[i])).join("");
}

/** The fields of a session entry the status reads (Pi's shapes, read tolerantly). */
export interface EntryLike {
	type?: string;
	customType?: string;
	kind?: string;
	provider?: string;
	model?: string;
	data?: unknown;
	/** A compaction entry's size before it, and its details (context-fold's own carry `contextFold`). */
	tokensBefore?: number;
	details?: { contextFold?: { codes?: unknown } };
	message?: {
		role?: string;
		provider?: string;
		model?: string;
		usage?: { input?: number; cacheRead?: number; cacheWrite?: number };
	};
}

function count(value: unknown): number {
	return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** The fold payload of an entry of `entryType` (a fold event's layer, or an unfold), else undefined. */
function foldMark(
	entry: EntryLike,
	entryType: string,
): { kind: string; seq?: number; data: Record<string, unknown> } | undefined {
	if (entry.type !== "custom" || entry.customType !== entryType) return undefined;
	const data = entry.data as Record<string, unknown> | undefined;
	if (!data || typeof data !== "object" || (data.kind !== "layer" && data.kind !== "unfold")) return undefined;
	return { kind: data.kind, seq: typeof data.seq === "number" ? data.seq : undefined, data };
}

/**
 * The cache hit rate (cache reads over prompt tokens) of the responses after the latest fold event
 * or unfold on `branch`; undefined when no response with a prompt came back since.
 */
export function hitRateSince(branch: readonly unknown[], entryType: string): number | undefined {
	let read = 0;
	let prompt = 0;
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i] as EntryLike;
		if (foldMark(entry, entryType)) break;
		if (entry.type === "message" && entry.message?.role === "assistant") {
			const u = entry.message.usage ?? {};
			read += count(u.cacheRead);
			prompt += count(u.input) + count(u.cacheRead) + count(u.cacheWrite);
		}
	}
	return prompt > 0 ? read / prompt : undefined;
}

/** Cache figures of one provider and model over a branch. */
export interface CacheLine {
	provider: string;
	model: string;
	responses: number;
	/** Responses that read anything from the cache. */
	hits: number;
	input: number;
	cacheRead: number;
	cacheWrite: number;
	/** Pi's idle refreshes (`usage` entries of kind `cache_warm`). */
	warms: number;
}

/** Cache figures per provider and model, in order of first use on `branch`. */
export function cacheByModel(branch: readonly unknown[]): CacheLine[] {
	const lines = new Map<string, CacheLine>();
	const line = (provider = "?", model = "?"): CacheLine => {
		const key = `${provider}/${model}`;
		let found = lines.get(key);
		if (!found) {
			found = { provider, model, responses: 0, hits: 0, input: 0, cacheRead: 0, cacheWrite: 0, warms: 0 };
			lines.set(key, found);
		}
		return found;
	};
	for (const raw of branch) {
		const entry = raw as EntryLike;
		if (entry.type === "message" && entry.message?.role === "assistant" && entry.message.usage) {
			const l = line(entry.message.provider, entry.message.model);
			const u = entry.message.usage;
			l.responses++;
			if (count(u.cacheRead) > 0) l.hits++;
			l.input += count(u.input);
			l.cacheRead += count(u.cacheRead);
			l.cacheWrite += count(u.cacheWrite);
		} else if (entry.type === "usage" && entry.kind === "cache_warm") {
			line(entry.provider, entry.model).warms++;
		}
	}
	return [...lines.values()];
}

/** One fold event or unfold on a branch, with the rewrite the next response paid. */
export interface EventLine {
	/** The layer's sequence number; undefined for an unfold or a compaction. */
	seq: number | undefined;
	kind: "fold" | "unfold" | "compaction";
	/** A compaction's summary was context-fold's deterministic one (no model call). */
	ours?: boolean;
	codes: string[];
	/** Tokens kept out (a fold event's estimate) or put back (an unfold's), from the fold records. */
	tokens: number;
	/** input + cacheWrite of the first response after it: the part of the prompt written again. */
	rewrite: number | undefined;
	/** That response's cache hit rate. */
	hitRate: number | undefined;
}

/**
 * Tokens a fold keeps out, estimated from its record and op: the block's cost at fold time minus
 * the cost of what replaced it. 0 when the record is unknown or predates character extents.
 */
export function opSaving(record: FoldRecord | undefined, op: FoldOp): number {
	if (!record || record.chars < 0) return 0;
	const folded = op.args ? (JSON.stringify(op.args) ?? "").length : (op.text?.length ?? 0);
	return Math.max(0, blockCost(record.chars) - blockCost(folded));
}

/** The estimated tokens a fold event's ops keep out, given its records by id. */
export function eventSaving(ops: readonly FoldOp[], record: (id: string) => FoldRecord | undefined): number {
	return ops.reduce((n, op) => n + opSaving(record(op.id), op), 0);
}

/**
 * The fold events and unfolds on `branch`, oldest first, each with the rewrite of the first
 * response after it. `record` resolves a block id to its fold record (codes and sizes).
 */
export function eventLines(
	branch: readonly unknown[],
	entryType: string,
	record: (id: string) => FoldRecord | undefined,
): EventLine[] {
	const lines: EventLine[] = [];
	let open: EventLine[] = [];
	for (const raw of branch) {
		const entry = raw as EntryLike;
		const mark = foldMark(entry, entryType);
		if (mark?.kind === "layer") {
			const ops = (Array.isArray(mark.data.ops) ? mark.data.ops : []) as FoldOp[];
			const line: EventLine = {
				seq: mark.seq,
				kind: "fold",
				codes: ops.map((op) => op.code),
				tokens: eventSaving(ops, record),
				rewrite: undefined,
				hitRate: undefined,
			};
			lines.push(line);
			open.push(line);
		} else if (mark?.kind === "unfold") {
			const ids = (Array.isArray(mark.data.ids) ? mark.data.ids : []) as string[];
			const records = ids.map((id) => record(id));
			const line: EventLine = {
				seq: undefined,
				kind: "unfold",
				codes: records.map((r, i) => r?.code ?? ids[i]),
				tokens: records.reduce((n, r) => n + (r && r.chars >= 0 ? blockCost(r.chars) : 0), 0),
				rewrite: undefined,
				hitRate: undefined,
			};
			lines.push(line);
			open.push(line);
		} else if (entry.type === "compaction") {
			const codes = entry.details?.contextFold?.codes;
			const line: EventLine = {
				seq: undefined,
				kind: "compaction",
				codes: Array.isArray(codes) ? codes.filter((c): c is string => typeof c === "string") : [],
				tokens: count(entry.tokensBefore),
				rewrite: undefined,
				hitRate: undefined,
				ours: entry.details?.contextFold !== undefined,
			};
			lines.push(line);
			open.push(line);
		} else if (entry.type === "message" && entry.message?.role === "assistant" && open.length > 0) {
			const u = entry.message.usage ?? {};
			const prompt = count(u.input) + count(u.cacheRead) + count(u.cacheWrite);
			for (const line of open) {
				line.rewrite = count(u.input) + count(u.cacheWrite);
				line.hitRate = prompt > 0 ? count(u.cacheRead) / prompt : undefined;
			}
			open = [];
		}
	}
	return lines;
}

/**
 * What the user is told when a compaction used context-fold's deterministic summary: that no model
 * was called, what it summarised and kept raw, and that every block stays readable.
 */
export function compactionNotice(tokensBefore: number, blocks: number): string {
	return (
		`context-fold: compacted ~${short(tokensBefore)} tokens with its deterministic summary (no model call); ` +
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
	policy: "ladder" | "economic" | "working-set";
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
const VIEW_WIDTH = LINE_WIDTH - 2;

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
	/** Width of the bar in characters. */
	barWidth?: number;
}

/** How the status names where the cache lifetime came from. */
const LIFETIME_SOURCES: Record<Lifetime["source"], string> = {
	cacheTtlByProvider: "saved: cacheTtlByProvider",
	cacheTtlSeconds: "saved: cacheTtlSeconds",
	model: "the model's, for the cache retention in use",
	default: "cacheTtlSeconds default; the model declares none",
};

/** Share by which Pi's count must differ from the chars/4 figure before the status names it. */
const PI_COUNT_SHOWN = 0.1;

/** ` · Pi counts 177k` when Pi's own count differs from the status's figure by PI_COUNT_SHOWN or more. */
function piCount(f: StatusFacts): string {
	if (f.piUsage === undefined || f.usage === undefined || !(f.usage > 0)) return "";
	return Math.abs(f.piUsage - f.usage) >= PI_COUNT_SHOWN * f.usage ? ` · Pi counts ${short(f.piUsage)}` : "";
}

/**
 * Items joined by `sep` into lines of at most VIEW_WIDTH columns, breaking only between items;
 * continuation lines open with `indent`. An item longer than a line stands alone.
 */
function between(items: readonly string[], sep: string, indent: string): string[] {
	const lines: string[] = [];
	let line = "";
	for (const item of items) {
		if (line && line.length + sep.length + item.length > VIEW_WIDTH) {
			lines.push(line);
			line = indent + item;
		} else line = line ? line + sep + item : item;
	}
	if (line) lines.push(line);
	return lines;
}

/** The `/context-fold status` text: plain lines, no colour, the same in every mode. */
export function statusText(f: StatusFacts): string {
	const out: string[] = ["context-fold status"];
	if (f.usage === undefined || !f.window) {
		out.push("", "No request has gone out in this session yet: nothing to show.");
	} else {
		const p = f.point;
		const share = percent(f.usage / f.window);
		const next = f.preview ? " · as the next request would send it" : "";
		out.push("", `Context   ${short(f.usage)} of ${short(f.window)} window (${share})${piCount(f)}${next}`);
		if (p) {
			const toFold = p.at - f.usage;
			const head = `Next fold ${short(p.at)} (${p.policy} ${p.knob})`;
			const where = toFold > 0 ? `${short(toFold)} away` : "reached";
			const items = [head, where, ...(p.event ?? []), ...thresholdsText(p).split(" · ")];
			out.push(...between(items, " · ", "          "));
		}
		if (f.parts) {
			out.push("", `[${bar(f.parts, f.barWidth ?? 60)}]`);
			const legend = PARTS.filter((k) => f.parts && f.parts[k] > 0).map(
				(k) => `${PART_LABELS[k].glyph} ${PART_LABELS[k].label} ${short(f.parts?.[k] ?? 0)}`,
			);
			out.push(...between(legend, " · ", ""));
		}
	}
	out.push("", `Folds     ${f.folds} in context, ~${short(f.keptOut)} tokens kept out of this request`);
	if (f.folds > 0) {
		const since = f.sinceFold === undefined ? "– (no response since)" : percent(f.sinceFold);
		out.push(`          cache read ${since} since the latest fold event or unfold (the footer's figure)`);
	}
	if (f.events.length === 0) out.push("Events    none yet");
	else {
		out.push("Events");
		for (const e of f.events) {
			const what =
				e.kind === "fold"
					? `  #${e.seq ?? "?"} fold   ${e.codes.length} block${e.codes.length === 1 ? "" : "s"}, ~${short(e.tokens)} kept out`
					: e.kind === "compaction"
						? `  compaction of ~${short(e.tokens)}, ${e.ours ? "deterministic summary (no model call)" : "Pi's own summary"}`
						: `  unfold    ${e.codes.map((c) => `#${c}`).join(", ")}, ~${short(e.tokens)} back`;
			const rewrite =
				e.rewrite === undefined
					? "no response since"
					: `rewrite ${short(e.rewrite)}${e.hitRate === undefined ? "" : `, cache read ${percent(e.hitRate)} of the next prompt`}`;
			out.push(`${what}; ${rewrite}`);
		}
	}
	out.push(
		"",
		"Cache     cache read = share of prompt tokens read from the provider's cache: the footer's since",
		"          the latest fold event, an event's on the next prompt; Pi's own CH, the latest prompt's",
	);
	if (f.lifetime) out.push(`  lifetime ${duration(f.lifetime.ms)} (${LIFETIME_SOURCES[f.lifetime.source]})`);
	if (f.cache.length === 0) out.push("  no response yet");
	for (const c of f.cache) {
		const prompt = c.input + c.cacheRead + c.cacheWrite;
		const rate = prompt > 0 ? percent(c.cacheRead / prompt) : "–";
		const items = [
			`  ${c.provider}/${c.model}: ${c.responses} response${c.responses === 1 ? "" : "s"}`,
			`${c.hits} read the cache`,
			`cache read ${rate} (read ${short(c.cacheRead)}, write ${short(c.cacheWrite)}, uncached ${short(c.input)})`,
		];
		if (c.warms > 0) items.push(`${c.warms} idle refresh${c.warms === 1 ? "" : "es"}`);
		out.push(...between(items, ", ", "    "));
	}
	out.push(
		"",
		f.largest.length === 0
			? "Largest folded blocks"
			: "Largest folded blocks (/context-fold recall <code> shows one)",
	);
	if (f.largest.length === 0) out.push("  none");
	for (const b of f.largest)
		out.push(`  ${codeLine(b.code, b.what, `~${short(b.tokens)} tokens kept out`, VIEW_WIDTH - 2)}`);
	out.push("", "Advisories");
	if (f.advisories.length === 0) out.push("  none");
	for (const a of f.advisories) out.push(`  ⚠ ${a}`);
	const failures = f.failures ?? [];
	if (failures.length > 0) {
		out.push("", `Failures  ${failures.length} announced this session, each once (context-fold went on)`);
		for (const failure of failures) out.push(`  ${clip(firstLine(failure), VIEW_WIDTH - 2)}`);
	}
	return out.join("\n");
}

/**
 * What unfolding `id` costs, from the latest request's rows: the tokens it puts back into every
 * later request, and the tokens the next request writes to the cache again (the block, raw, and
 * everything after it). Undefined when the block is not folded in that request.
 */
export function unfoldCost(rows: readonly PassRow[], id: string): { back: number; rewrite: number } | undefined {
	const at = rows.findIndex((r) => r.id === id);
	if (at < 0 || !rows[at].folded) return undefined;
	let after = 0;
	for (let i = at + 1; i < rows.length; i++) after += rows[i].tokens;
	const row = rows[at];
	return { back: Math.max(0, row.raw - row.tokens), rewrite: row.raw + after };
}
