/**
 * How context-fold's own rows read in the terminal UI: `contextfold.fold` entries in the transcript
 * ("folded #a, #b · ~4.4k tokens kept out", "unfolded #c", the same words as `/tree` labels, then a
 * line per block saying what it was: `#a bash: npm test (9.8k tokens)`), and the results of
 * recall_folded and unfold (what was recalled or put back, its size, its verification).
 *
 * Pi 1.6's `/tree` draws every custom entry as `[custom: <customType>]` and takes no renderer
 * (tree-selector.js `getEntryDisplayText`); it does draw an entry's label before that text, so each
 * fold event and unfold entry is labelled with its line (`pi.setLabel`, one `label` entry each).
 */
import type { ExtensionAPI, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, Text } from "@earendil-works/pi-tui";
import type { FoldOp } from "../../../core/apply.ts";
import { type BlockFacts, blockLine, blockWhat, clipColumns, LINE_WIDTH } from "../../../core/block-line.ts";
import type { FoldRecord } from "../../../core/fold-registry.ts";
import { eventSaving, readFoldMark, unfoldBack } from "../../../core/session-history.ts";
import { eventLabel } from "../../../core/status.ts";
import { estTokens, linesText, short } from "../../../core/tokens.ts";
import { blockFacts } from "../fold/block-facts.ts";
import type { FoldEngine } from "../fold/engine.ts";
import { ENTRY_TYPE, type FoldEntry } from "../fold/persistence.ts";
import type { Ledger } from "../fold/session-ledger.ts";
import { SERVED_MARK } from "../tools/codes.ts";
import { shownText } from "./viewer.ts";

/**
 * Fold records by block id for the lines: the registry's, and those of the event being committed,
 * whose layer entry is appended (and rendered, and labelled) before the registry holds its records.
 */
export class FoldRecords {
	private pending = new Map<string, FoldRecord>();
	private readonly engine: FoldEngine;

	constructor(engine: FoldEngine) {
		this.engine = engine;
	}

	/** Notes the records of a `records` entry about to be appended. */
	note(entry: FoldEntry): void {
		if (entry.kind === "records") this.pending = new Map(entry.records.map((r) => [r.id, r]));
	}

	/** The fold record of `id`, if known. */
	readonly record = (id: string): FoldRecord | undefined => this.engine.registry.record(id) ?? this.pending.get(id);
}

/**
 * The line a fold event's layer or an unfold entry reads as; undefined for a records entry or anything
 * else. `op` gives the op that folded a block (an unfold puts back the block less its digest).
 */
export function entryLine(
	data: unknown,
	record: (id: string) => FoldRecord | undefined,
	op: (id: string) => FoldOp | undefined = () => undefined,
): string | undefined {
	const mark = readFoldMark(data);
	if (mark?.kind === "layer") {
		return eventLabel(
			"fold",
			mark.ops.map((op) => op.code),
			eventSaving(mark.ops, record),
		);
	}
	if (mark?.kind === "unfold") {
		const records = mark.ids.map((id) => record(id));
		return eventLabel(
			"unfold",
			records.map((r, i) => r?.code ?? mark.ids[i]),
			unfoldBack(records, mark.ids.map(op)),
		);
	}
	return undefined;
}

/**
 * One line per block a fold event's layer or an unfold entry names, `#code what (size)` within 100
 * columns (indented by two): the first `max`, as the event's line names them.
 */
function entryBlocks(
	data: unknown,
	record: (id: string) => FoldRecord | undefined,
	facts: (record: FoldRecord) => BlockFacts,
	max: number,
): string[] {
	const mark = readFoldMark(data);
	const ids = mark?.kind === "layer" ? mark.ops.map((op) => op.id) : (mark?.ids ?? []);
	return ids.slice(0, max).flatMap((id) => {
		const r = record(id);
		return r ? [`  ${blockLine(facts(r), LINE_WIDTH - 2)}`] : [];
	});
}

/**
 * Labels the entry just appended (`leaf`) with its line, so `/tree` names it. Never throws: a label
 * is a convenience, and a fold event must not fail for it.
 */
export function labelEntry(
	pi: Pick<ExtensionAPI, "setLabel">,
	entry: FoldEntry,
	leaf: string | undefined,
	record: (id: string) => FoldRecord | undefined,
	op?: (id: string) => FoldOp | undefined,
): void {
	if (!leaf) return;
	try {
		const line = entryLine(entry, record, op);
		if (line) pi.setLabel(leaf, line);
	} catch {
		// no label: /tree shows the bare custom row
	}
}

/** One recalled block, as the result header names it. */
interface Recalled {
	code: string;
	what: string;
	lines: number;
	how: string;
	/** What of the block was served when not all of it (the tool's SERVED_MARK head). */
	served?: string;
}

const HEADER = /^Recalled #([0-9a-z]+): (.+), (\d+) lines? \((.+?)\)(?:\. Warning: .*)?(?::.*)?$/;
/** A search hit's header: a recall header and the count of matching lines shown under it. */
const HIT = /^Recalled #([0-9a-z]+): (.+), \d+ lines \(.+?\)(?:\. Warning: .*)?: (\d+ match(?:es)?)$/;

/**
 * The lines that open each part of a recall_folded answer: the result's `heads` (its details), else,
 * for a result recorded without them, the first line and each line after a blank one. Only these are
 * read for headers and notices: a recalled block's own lines (a build log's `error: …`) are content.
 */
function headsOf(text: string, heads: unknown): readonly string[] {
	if (Array.isArray(heads) && heads.every((h) => typeof h === "string")) return heads;
	const lines = text.split("\n");
	return lines.filter((_, i) => i === 0 || lines[i - 1] === "");
}

/**
 * The summary lines of a recall_folded result: one per recalled block (what it was by `facts` where
 * the code is this branch's, else by the result's header), then any errors or cut notices; a block's
 * line keeps to `width` columns.
 */
export function recallSummary(
	text: string,
	facts?: (code: string) => BlockFacts | undefined,
	heads?: unknown,
	width = LINE_WIDTH,
): string[] {
	const found: Recalled[] = [];
	const other: string[] = [];
	for (const line of headsOf(text, heads)) {
		const hit = HIT.exec(line);
		if (hit) {
			const what = facts?.(hit[1]);
			const tail = ` · ${hit[3]}`;
			other.push(
				`  #${hit[1]} · ${clipColumns(what ? blockWhat(what) : hit[2], Math.max(10, width - hit[1].length - 6 - tail.length))}${tail}`,
			);
			continue;
		}
		const m = HEADER.exec(line);
		const last = found.at(-1);
		if (line.startsWith(SERVED_MARK) && last) last.served = line.slice(SERVED_MARK.length);
		else if (m) found.push({ code: m[1], what: m[2], lines: Number(m[3]), how: m[4] });
		else if (
			/^(error: |recall_folded|… output cap|… cut at the output cap|… \d+ more blocks match|no folded block contains|\d+ blocks? contains? ")/.test(
				line,
			)
		)
			other.push(line);
	}
	const size = `~${short(estTokens(text))} tokens`;
	const out = found.map((r) => {
		const known = facts?.(r.code);
		const tail = ` · ${linesText(r.lines)}${r.served ? ` (${r.served})` : ""} · ${r.how}`;
		const what = known ? blockWhat(known) : r.what;
		return `recalled #${r.code} · ${clipColumns(what, Math.max(10, width - r.code.length - 13 - tail.length))}${tail}`;
	});
	if (out.length === 0 && other.length === 0) return [`recall_folded · ${size}`];
	// A search alone reads as its own lines, then what it returned.
	if (out.length === 0) return [...other, `${size} returned`];
	return [...out, `${size} returned`, ...other];
}

/**
 * The summary lines of an unfold result: the codes put back with what they add (each block less the
 * digest `op` folded it to), a line per block saying what it was (by `facts`, up to 8, each within
 * `width` columns), then anything refused.
 */
export function unfoldSummary(
	text: string,
	record: (code: string) => FoldRecord | undefined,
	facts?: (code: string) => BlockFacts | undefined,
	op: (code: string) => FoldOp | undefined = () => undefined,
	width = LINE_WIDTH,
): string[] {
	const [first = "", ...rest] = text.split("\n");
	const m = /^Unfolded (#[0-9a-z]+(?:, #[0-9a-z]+)*):/.exec(first);
	if (!m) return refusedLines(text.split("\n"), facts, width);
	const codes = m[1].split(", ").map((c) => c.slice(1));
	const tokens = unfoldBack(codes.map(record), codes.map(op));
	const blocks = codes.slice(0, 8).flatMap((c) => {
		const known = facts?.(c);
		return known ? [`  ${blockLine(known, width - 2)}`] : [];
	});
	// As many codes (up to 8) as keep the line within `width`: the count of the rest follows them.
	let head = "";
	for (let shown = Math.min(8, codes.length); shown >= 1; shown--) {
		head = `${eventLabel("unfold", codes, tokens, shown)} from the next request on`;
		if (head.length <= width) break;
	}
	return [head, ...blocks, ...refusedLines(rest, facts, width)];
}

/** The lines of an unfold's refusals, each one that starts with a code the branch knows followed by what its block was. */
function refusedLines(
	lines: readonly string[],
	facts: ((code: string) => BlockFacts | undefined) | undefined,
	width: number,
) {
	return lines.flatMap((line) => {
		if (line.length === 0) return [];
		const known = facts?.(/^#([0-9a-z]+) /.exec(line)?.[1] ?? "");
		return known ? [line, `  ${blockLine(known, width - 2)}`] : [line];
	});
}

/**
 * Text laid out for the width it is drawn in: Pi draws a tool's result inside a box with a column of
 * padding each side, so lines made for 100 columns would wrap by two in a 100-column terminal.
 */
class WidthText implements Component {
	private drawn: { width: number; text: Text } | undefined;
	private readonly make: (width: number) => string;

	constructor(make: (width: number) => string) {
		this.make = make;
	}

	render(width: number): readonly string[] {
		if (this.drawn?.width !== width) this.drawn = { width, text: new Text(this.make(width), 0, 0) };
		return this.drawn.text.render(width);
	}

	invalidate(): void {
		this.drawn = undefined;
	}
}

/** The text of a tool result. */
function resultText(result: { content?: { type: string; text?: string }[] }): string {
	return (result.content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("\n");
}

/**
 * Registers the entry renderer (the event's line, then a line per block it names, every block when
 * expanded) and the recall_folded / unfold result renderers; `ledger` finds each block's tool call.
 */
export function registerRenderers(pi: ExtensionAPI, engine: FoldEngine, records: FoldRecords, ledger?: Ledger): void {
	const record = records.record;
	const byCode = (code: string) => {
		const id = engine.registry.idOf(code);
		return id ? engine.registry.record(id) : undefined;
	};
	const opOf = (id: string) => engine.registry.opOf(id);
	const opByCode = (code: string) => {
		const id = engine.registry.idOf(code);
		return id ? engine.registry.opOf(id) : undefined;
	};
	const factsOf = (code: string) => {
		const r = byCode(code);
		return r ? blockFacts(r, engine, ledger) : undefined;
	};
	pi.registerEntryRenderer(ENTRY_TYPE, (entry, options, theme: Theme) => {
		const line = entryLine(entry.data, record, opOf);
		if (!line) return undefined;
		const facts = (r: FoldRecord) => blockFacts(r, engine, ledger);
		const blocks = entryBlocks(entry.data, record, facts, options.expanded ? Number.MAX_SAFE_INTEGER : 4);
		return new Text(theme.fg("dim", [`context-fold: ${line}`, ...blocks].join("\n")), 0, 0);
	});
	pi.registerToolRenderer((toolName, next) => {
		if (toolName !== "recall_folded" && toolName !== "unfold") return next();
		return {
			...next(),
			renderResult: (result, options, theme, context) => {
				if (options.isPartial) return new Text(theme.fg("dim", `${toolName}…`), 0, 0);
				const text = resultText(result as { content?: { type: string; text?: string }[] });
				const heads = (result as { details?: { heads?: unknown } }).details?.heads;
				const expanded = options.expanded && toolName === "recall_folded" ? `\n\n${shownText(text)}` : "";
				return new WidthText((width) => {
					const lines =
						toolName === "unfold"
							? unfoldSummary(text, byCode, factsOf, opByCode, width)
							: recallSummary(text, factsOf, heads, width);
					return theme.fg(context?.isError ? "error" : "muted", lines.join("\n")) + expanded;
				});
			},
		};
	});
}
