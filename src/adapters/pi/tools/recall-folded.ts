/**
 * `recall_folded`: reads folded blocks back (whole, grep, line slices, or a search over every folded
 * block, and a parent session's codes in a seeded session) without changing the context. One
 * output cap bounds the whole call. Registered inactive: loadout.ts declares it once there is
 * something to recall.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
	grepBlock,
	matchQuality,
	parseLineRange,
	patternProblem,
	RECALL_LIMITS,
	recallCap,
} from "../../../core/recall.ts";
import { safeSlice } from "../../../core/tokens.ts";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import type { ParentSession } from "../fold/parent-session.ts";
import {
	OutputReads,
	type ResolvedCode,
	resolveCode,
	resolveOtherBranch,
	type Unresolved,
} from "../fold/recall-sources.ts";
import type { Ledger, PlacedRecord } from "../fold/session-ledger.ts";
import {
	codeList,
	FOLD_TOOLS,
	failure,
	notCodes,
	SERVED_MARK,
	type ToolAnswer,
	toolText,
	unknownArguments,
} from "./codes.ts";
import { literalHint, originOf, recallHeader, serve, servedNote, unreadNote } from "./served-block.ts";

/**
 * Parameters of recall_folded. The declaration goes out with every request that declares the tool,
 * so it says only what the names and the description do not: the form of a line range.
 */
const recallParameters = Type.Object({
	codes: Type.Optional(Type.Array(Type.String())),
	grep: Type.Optional(Type.String()),
	lines: Type.Optional(Type.String({ description: '"120-180"' })),
	search: Type.Optional(Type.String()),
});

interface RecallArgs {
	codes?: unknown;
	grep?: unknown;
	lines?: unknown;
	search?: unknown;
}

/** Least room worth serving one more code or a search in; below it the rest is named, not served. */
const MIN_PIECE = 400;

/**
 * Resolves a code of this branch or, failing that, of another branch of this session file, or of the
 * parent session this one was started from (read-only from the parent's file); each sha-verified.
 */
export function resolveAny(code: string, engine: FoldEngine, ledger: Ledger, parent: ParentSession | undefined) {
	const own = resolveCode(code, engine, ledger);
	if (own.ok || engine.registry.idOf(code) !== undefined) return own;
	const elsewhere = resolveOtherBranch(code, ledger);
	if (elsewhere) return elsewhere;
	return parent ? resolveParent(code, parent) : own;
}

/** Resolves a code from the parent session's file (read-only, sha-verified). */
function resolveParent(code: string, parent: ParentSession): ResolvedCode | Unresolved {
	const hit = parent.resolve(code);
	if (!hit.ok) return { ok: false as const, error: hit.error };
	const resolved: ResolvedCode = {
		ok: true,
		id: hit.record.id,
		record: hit.record,
		text: hit.text,
		...(hit.fields && hit.fields.length > 0 ? { fields: hit.fields } : {}),
		source: "parent",
		origin: hit.file,
		toolName: hit.toolName,
		images: hit.images,
		...(hit.verified
			? {}
			: {
					warning: hit.folded
						? "this fold predates fold-time hashes; served unverified"
						: "no fold record of it in the parent, and its seed carries no sha256 of it to check",
				}),
	};
	return resolved;
}

/** How a search heads each block it shows, and what it suggests when more match than it shows. */
export interface SearchWords {
	/** `file`: the shell tool's full output file, where a block holding part of it matched. */
	head: (r: ResolvedCode, file?: string) => string;
	narrow: string;
	/** How to read the blocks a search matched and did not show, named by their codes. */
	unshown: string;
	/** How to see a block's matching lines a search left out. */
	grep: (code: string) => string;
}

/** The model's words: recall headers, and recall_folded's own arguments to narrow with. */
const MODEL_WORDS: SearchWords = {
	head: (r, file) => recallHeader(r, file),
	narrow: "narrow the search, or recall a code with grep",
	unshown: "recall_folded codes=[…] with the same grep reads them, 20 codes a call",
	grep: (code) => `recall_folded codes=["${code}"] with the same grep shows them`,
};

/** A search's answer, and the lines that head it: its first, each block's it shows, and a notice of more. */
export interface SearchAnswer {
	text: string;
	heads: string[];
}

/**
 * The codes of the blocks a search matched and did not show, as many as fit in `room` characters (the
 * rest counted): without them a block whose words the model does not know (an error line it never
 * saw, among many that left history) could be found by no narrower search.
 */
function unshownCodes(codes: readonly string[], room: number, words: SearchWords): string {
	const lead = `\nTheir codes (${words.unshown}): `;
	let text = "";
	let named = 0;
	for (const code of codes) {
		const item = `${named > 0 ? ", " : ""}#${code}`;
		if (lead.length + text.length + item.length + 40 > room) break;
		text += item;
		named++;
	}
	if (named === 0) return "";
	return `${lead}${text}${named < codes.length ? `, and ${codes.length - named} more` : ""}`;
}

/** Codes a search names whose full output file it left unread; the rest are counted. */
const UNSEARCHED_NAMED = 8;

/**
 * Searches every recorded block (folded, or removed by a compaction; a bash result Pi cut, in its full
 * output file too), then every block of the last branch of the `parent` session this one was seeded
 * from, within `room` characters of the call's output cap `cap`, in `words` (the model's by default;
 * the user's command passes its own). Blocks holding the pattern in its exact case as a whole token
 * come first, then in its exact case inside a longer token, then in another case (matchQuality), so
 * an exact identifier finds its own blocks before longer tokens and case variants; within a block
 * its own such lines come first too (grepText). Full output files are read through the call's `reads`;
 * those it leaves unread are named by their codes.
 */
export function searchFolded(
	pattern: string,
	engine: FoldEngine,
	ledger: Ledger,
	room: number,
	cap: number,
	words: SearchWords = MODEL_WORDS,
	parent?: ParentSession,
	reads = new OutputReads(),
): SearchAnswer {
	const tiers: ResolvedCode[][] = [[], [], []];
	// A bash result Pi cut holds the rest of its output in the tool's full output file: where the copy
	// lacks the pattern, the file is searched too (as a grep of its code reads it).
	const files = new Map<ResolvedCode, string>();
	/** Codes whose full output file the call left unread (see OutputReads), and the tool's name. */
	const unsearched: string[] = [];
	let shell = "bash";
	let unreadable = 0;
	const take = (r: ResolvedCode | Unresolved | undefined): void => {
		if (!r?.ok) {
			unreadable++;
			return;
		}
		let quality = matchQuality(r.text, pattern);
		if (quality === 3 && r.fullOutputPath !== undefined) {
			const file = reads.read(r.fullOutputPath);
			if (file !== undefined) quality = matchQuality(file, pattern);
			if (file !== undefined && quality < 3) files.set(r, file);
			if (reads.skipped.has(r.fullOutputPath)) {
				unsearched.push(`#${r.record.code}`);
				shell = r.record.tool ?? r.toolName ?? shell;
			}
		}
		if (quality < 3) tiers[quality].push(r);
	};
	for (const record of engine.registry.allRecords()) take(resolveCode(record.code, engine, ledger));
	// Folds this branch recorded that its fold state lacks (a restore that failed) are searched too.
	const branch = branchRecordsOf(ledger);
	if (Array.isArray(branch)) {
		for (const { record } of branch)
			if (engine.registry.idOf(record.code) === undefined) take(resolveOtherBranch(record.code, ledger));
	}
	// A seeded session's parent: the blocks of its branch, and every block the seed cites.
	const parentCodes = parent?.searchCodes() ?? [];
	if (Array.isArray(parentCodes)) {
		for (const code of parentCodes)
			if (engine.registry.idOf(code) === undefined) take(resolveParent(code, parent as ParentSession));
	}
	// Blocks of a damaged parent are served only where a fold record vouches for them: the damage says why.
	const damage = parent?.unreadableLines();
	const notes = [
		...(unreadable ? [`${unreadable} could not be read`] : []),
		...(Array.isArray(branch)
			? []
			: [`the session file could not be read for this branch's records: ${branch.error}`]),
		...(Array.isArray(parentCodes) ? [] : [`not searched: ${parentCodes.error}`]),
		...(damage ? [damage] : []),
		...(unsearched.length > 0
			? [
					`${unreadNote(shell)}, so the full output of ${unsearched.length === 1 ? "one block" : `${unsearched.length} blocks`} was not searched, only its copy: grep ${unsearched.slice(0, UNSEARCHED_NAMED).join(", ")}${unsearched.length > UNSEARCHED_NAMED ? ` and ${unsearched.length - UNSEARCHED_NAMED} more` : ""} one code at a time`,
				]
			: []),
	];
	const note = notes.length > 0 ? ` (${notes.join("; ")})` : "";
	// A fold tool's own result only quotes blocks: within a tier, the blocks it quotes come first (a
	// session that recalled a block often holds as many folded echoes of it as the search shows).
	const echo = (r: ResolvedCode) => (FOLD_TOOLS as readonly string[]).includes(r.record.tool ?? "");
	const hits = tiers.flatMap((tier) => [...tier.filter((r) => !echo(r)), ...tier.filter(echo)]);
	if (hits.length === 0) {
		const none = `no folded block contains "${pattern}"${note}${literalHint(pattern)}`;
		return { text: none, heads: [none] };
	}
	const out: string[] = [];
	const heads = [`${hits.length === 1 ? "1 block contains" : `${hits.length} blocks contain`} "${pattern}"${note}:`];
	let budget = room - 200;
	for (const r of hits) {
		if (out.length >= RECALL_LIMITS.searchBlocks || budget < 400) break;
		const file = files.get(r);
		const g = grepBlock(r.text, pattern, Math.min(2000, budget - 250), {
			maxMatches: 8,
			context: 1,
			file,
			...originOf(r),
		});
		const head = `${words.head(r, file)}: ${g.matches} match${g.matches === 1 ? "" : "es"}`;
		const left = g.cut
			? `\n… ${g.matches - g.shown} more matching lines in this block not shown; ${words.grep(r.record.code)}`
			: "";
		const entry = `${head}\n${g.text}${left}`;
		heads.push(head);
		out.push(entry);
		budget -= entry.length + 2;
	}
	let more = "";
	if (hits.length > out.length) {
		more = `… ${hits.length - out.length} more blocks match, not shown (at most ${RECALL_LIMITS.searchBlocks} blocks per search, ${cap} characters per call); ${words.narrow}`;
		heads.push(more);
		more += unshownCodes(
			hits.slice(out.length).map((r) => r.record.code),
			budget - more.length,
			words,
		);
	}
	return { text: `${heads[0]}\n\n${out.join("\n\n")}${more ? `\n${more}` : ""}`, heads };
}

/** The fold records of the current branch as the session file holds them, or why it cannot be read. */
function branchRecordsOf(ledger: Ledger): PlacedRecord[] | { error: string } {
	try {
		return ledger.branchRecords();
	} catch (error) {
		return { error: errorText(error) };
	}
}

/**
 * The recall_folded tool's work (never throws), within `cap` characters in all. It failed when the
 * arguments were wrong or no code it named could be served; a search that finds nothing is an answer,
 * not a failure.
 */
function runRecall(
	args: RecallArgs,
	engine: FoldEngine,
	ledger: Ledger,
	cap: number,
	parent?: ParentSession,
): ToolAnswer {
	try {
		const unknown = unknownArguments("recall_folded", args, Object.keys(recallParameters.properties));
		if (unknown) return failure(unknown);
		const parsed = codeList(args?.codes);
		if (typeof parsed === "string") return failure(`recall_folded: ${parsed}`);
		for (const [name, value] of [
			["grep", args?.grep],
			["search", args?.search],
		] as const) {
			if (value === undefined) continue;
			if (typeof value !== "string" || value.length === 0)
				return failure(`recall_folded: \`${name}\` must be non-empty text`);
			const problem = patternProblem(value);
			if (problem) return failure(`recall_folded: \`${name}\` ${problem}`);
		}
		const range = args?.lines === undefined ? null : parseLineRange(args.lines);
		if (args?.lines !== undefined && !range)
			return failure('recall_folded: `lines` must look like "120-180" (1-based, start <= end)');
		if (args?.grep !== undefined && range) return failure("recall_folded: give either `grep` or `lines`, not both");
		const search = args?.search as string | undefined;
		if (parsed.codes.length === 0 && search === undefined) {
			if (parsed.bad.length > 0) return failure(`recall_folded: ${notCodes(parsed.bad)}`);
			return failure("recall_folded: name at least one fold code in `codes`, or give `search`");
		}
		const parts: string[] = [];
		if (parsed.bad.length > 0) parts.push(notCodes(parsed.bad));
		// `grep` and `lines` read the blocks `codes` names; without any, say they went unused.
		const unused = (["grep", "lines"] as const).filter((name) => args?.[name] !== undefined);
		if (parsed.codes.length === 0 && unused.length > 0)
			parts.push(
				`(\`${unused.join("` and `")}\` read the blocks \`codes\` names, and none was given: the search below is whole)`,
			);
		// Room is kept for the closing notices, so the cap holds with them.
		const reserve = 160 + 12 * parsed.codes.length + (search === undefined ? 0 : 120);
		let budget = cap - reserve - parts.reduce((n, p) => n + p.length + 2, 0);
		const unserved: string[] = [];
		let served = 0;
		const reads = new OutputReads();
		/** What part k served of its block when not all of it (see servedNote), by part. */
		const notes = new Map<number, string | undefined>();
		for (const code of parsed.codes) {
			if (budget < MIN_PIECE) {
				unserved.push(`#${code}`);
				continue;
			}
			const r = resolveAny(code, engine, ledger, parent);
			if (r.ok) served++;
			// A block 0.5.1 recorded and this version folded again answers to both codes: say they are one.
			const alias =
				r.ok && r.record.code !== code ? `#${code} names the block now folded as #${r.record.code}.\n` : "";
			const body = r.ok
				? `${alias}${serve(r, args?.grep as string | undefined, range, budget - alias.length, cap, reads)}`
				: `error: ${r.error}`;
			parts.push(body);
			if (r.ok)
				notes.set(
					parts.length - 1,
					servedNote(body, args?.grep !== undefined, range ? String(args?.lines) : undefined),
				);
			budget -= body.length + 2;
		}
		// What follows the blocks served is never cut: the codes not shown, then the search.
		const closing: string[] = [];
		if (unserved.length > 0) {
			closing.push(
				`… output cap (${cap} characters per call) reached; not shown: ${unserved.join(", ")}. Call recall_folded again with those codes.`,
			);
		}
		// The line opening each part, and after a block's, what of it was served when not all (for the
		// transcript); a search's hits each head a part of their own.
		const heads = [...parts, ...closing].flatMap((part, k) => {
			const note = notes.get(k);
			return [part.split("\n", 1)[0], ...(note ? [`${SERVED_MARK}${note}`] : [])];
		});
		if (search !== undefined) {
			const late = `… output cap (${cap} characters per call) reached before the search; call recall_folded with search alone.`;
			const found: SearchAnswer =
				budget < MIN_PIECE
					? { text: late, heads: [late] }
					: searchFolded(search, engine, ledger, budget, cap, MODEL_WORDS, parent, reads);
			closing.push(found.text);
			heads.push(...found.heads);
		}
		const body = parts.join("\n\n");
		const after = closing.join("\n\n");
		const cut = `… cut at the output cap (${cap} characters per call)`;
		const whole = body.length + after.length + 2 <= cap;
		const kept = whole ? body : `${safeSlice(body, Math.max(0, cap - after.length - 80))}\n${cut}`;
		const text = [kept, after].filter((part) => part.length > 0).join("\n\n");
		return {
			text: safeSlice(text, cap),
			failed: search === undefined && served === 0 && unserved.length === 0,
			heads: whole ? heads : [...heads, cut],
		};
	} catch (error) {
		return failure(`recall_folded failed: ${errorText(error)}`);
	}
}

/** Registers recall_folded, inactive (see loadout.ts). */
export function registerRecallFolded(
	pi: ExtensionAPI,
	engine: FoldEngine,
	ledger: Ledger,
	parent: () => ParentSession | undefined = () => undefined,
): void {
	pi.registerTool({
		name: "recall_folded",
		label: "Recall folded",
		defaultActive: false,
		description:
			"Reads back what a `{#<code> FOLDED} …` digest stands for: whole, or only `grep` matches or `lines`. " +
			"`search` looks in every folded block.",
		parameters: recallParameters,
		async execute(_id, params, _signal, _onUpdate, ctx) {
			// A small model's window lowers the cap, so that a recall never fills it.
			const cap = recallCap(ctx?.model?.contextWindow);
			const answer = runRecall(params as RecallArgs, engine, ledger, cap, parent());
			return toolText(answer, answer.heads ? { heads: answer.heads } : {});
		},
	});
}
