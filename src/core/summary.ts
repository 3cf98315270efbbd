/**
 * The deterministic compaction summary: a bounded, verbatim index of what left live history,
 * rendered from merged seed-index records. Nothing here paraphrases; every listed line, path,
 * command and identifier is copied from the session.
 */
import { foldTag, quoteTags } from "./digest.ts";
import type { SeedSummary } from "./index/merge.ts";
import { clip, estTokens, printable } from "./tokens.ts";

/** The first line of every summary this module writes; lets a later compaction recognize it. */
export const SUMMARY_HEADER = "[context-fold deterministic compaction summary]";

/** Size bounds of a rendered summary, in characters. */
export const SUMMARY_LIMITS = {
	total: 24_000,
	intents: 4_000,
	errors: 6_000,
	files: 3_000,
	commands: 3_000,
	identifiers: 2_000,
	pointers: 3_000,
	previous: 3_000,
} as const;

/** What a summary is rendered from. */
export interface SummaryInput {
	summary: SeedSummary;
	/** The previous compaction's summary, when Pi passes one and it is carried whole. */
	previousSummary?: string;
	/** The fold code that reads `previousSummary` back whole, named where its carried text is cut. */
	previousCode?: string;
	/**
	 * Text an earlier summary of ours carried, and the heading it was carried under, handed on verbatim
	 * when that summary's own facts are in the seed index again (see carriedOver); used without
	 * `previousSummary`.
	 */
	carried?: Carried;
	/** The handoff seed this session started from, when it leaves live history with this compaction. */
	seed?: CarriedSeed;
	/** One line on what the summary covers, e.g. "This compaction removed 40 messages from live history." */
	scope: string;
	/**
	 * recall_folded is not active (the user's tool selection or another extension left it out): the
	 * preamble says the codes cannot be read back until it is, and points to the session file.
	 */
	toolsWithheld?: boolean;
	/** Size cap in characters (default and maximum SUMMARY_LIMITS.total); section budgets shrink with it. */
	maxChars?: number;
}

/** A handoff seed carried by a compaction: its text, and the fold code that reads it back whole. */
export interface CarriedSeed {
	text: string;
	code?: string;
	/**
	 * Why the seed's codes are read nowhere by the summary's reader: `unlinked`, a seed passed as a
	 * prompt that names no saved parent; `beyond`, the seed a handed-off session started from, whose
	 * codes are one session further back than the new session reads. Absent: they are read.
	 */
	unread?: keyof typeof UNREAD_SEED_NOTES;
}

/** Smallest cap a summary is scaled down to. */
export const MIN_SUMMARY_CHARS = 4_000;

/** The summary cap for a context window: ~15 % of it (at 4 characters a token), within [4k, 24k] characters. */
export function summaryCapFor(window: number | undefined): number {
	if (!window || !(window > 0)) return SUMMARY_LIMITS.total;
	return Math.max(MIN_SUMMARY_CHARS, Math.min(SUMMARY_LIMITS.total, Math.floor(window * 4 * 0.15)));
}

/** What the index's caps left out of list `name` of `s`, as section() counts it (`atMost`: a bound, see SeedSummary). */
function droppedOf(s: SeedSummary, name: string, noun: string): { count: number; noun: string; atMost: boolean } {
	return { count: s.dropped?.[name] ?? 0, noun, atMost: s.droppedAtMost?.includes(name) === true };
}

/**
 * A titled list within `budget` characters. When the lines do not fit, the oldest and the newest
 * are kept (the opening task and the latest state) and the middle is counted (`more` names what it
 * holds, or says so given the positions `from` to `to` left out); so are the `dropped` entries the
 * index's caps left out before (a `noun` each), which would otherwise go unsaid.
 */
function section(
	title: string,
	lines: readonly string[],
	budget: number,
	more: string | ((from: number, to: number) => string),
	dropped: { count: number; noun: string; atMost?: boolean } = { count: 0, noun: "" },
): string {
	if (lines.length === 0 && dropped.count === 0) return "";
	const size = (list: readonly string[]) => list.reduce((n, l) => n + l.length + 1, 0);
	if (dropped.count === 0 && size(lines) <= budget) return `## ${title}\n${lines.join("\n")}`;
	const head: string[] = [];
	const tail: string[] = [];
	let used = 0;
	let i = 0;
	let j = lines.length - 1;
	while (i <= j) {
		const takeHead = head.length <= tail.length;
		const line = takeHead ? lines[i] : lines[j];
		if (used + line.length + 1 > budget && head.length + tail.length > 0) break;
		used += line.length + 1;
		if (takeHead) head.push(lines[i++]);
		else tail.unshift(lines[j--]);
	}
	const left = lines.length - head.length - tail.length;
	const counts = [
		...(left > 0 ? [`${left} more ${typeof more === "string" ? more : more(i, j + 1)}`] : []),
		...(dropped.count > 0
			? [`${dropped.atMost ? "up to " : ""}${dropped.count} more ${dropped.noun} left out by the index's caps`]
			: []),
	];
	const gap = counts.length > 0 ? [`- … ${counts.join("; ")}`] : [];
	return `## ${title}\n${[...head, ...gap, ...tail].join("\n")}`;
}

/**
 * Codes an error list's left-out middle names at most (the blocks it came from); the rest are
 * counted. Each is the only way to an error line whose words the model never saw: with 8, a session
 * of 90 distinct failures left 24 of those that left history named nowhere (an audit's /compact in a
 * 20k window). Forty codes take about 450 characters of the summary.
 */
const LEFT_OUT_CODES = 40;

/**
 * What the left-out middle of the error list holds: its lines are of every kind a risk line is (a
 * `FAIL`, a `Killed`, a traceback), so no one search word finds them; the codes of their blocks do.
 */
function errorsLeftOut(errors: readonly { code?: string }[]): string {
	const codes = [...new Set(errors.flatMap((e) => (e.code ? [e.code] : [])))];
	const uncoded = errors.filter((e) => !e.code).length;
	const named = codes.slice(0, LEFT_OUT_CODES).map((c) => `"${c}"`);
	const beyond = codes.length - named.length;
	const parts = [
		...(named.length > 0
			? [
					`recall_folded codes=[${named.join(",")}] reads the blocks they are in${beyond > 0 ? ` (and ${beyond} more blocks)` : ""}`,
				]
			: []),
		...(uncoded > 0 ? [`${uncoded} from blocks without a code (recall_folded search= a word of the line)`] : []),
	];
	return `error lines: ${parts.join("; ")}`;
}

/** Words joined into lines of at most `width` characters. */
function wrap(words: readonly string[], width: number): string[] {
	const lines: string[] = [];
	let line = "";
	for (const word of words) {
		if (line && line.length + 1 + word.length > width) {
			lines.push(line);
			line = word;
		} else line = line ? `${line} ${word}` : word;
	}
	if (line) lines.push(line);
	return lines;
}

/** Span kinds worth a recovery pointer line (other recorded spans are still found by search). */
const POINTER_KINDS = new Set(["toolResult", "toolArgs", "thinking"]);

function tag(code: string | undefined): string {
	return code ? `${foldTag(code)} ` : "";
}

/** `[turn N] `, or nothing for turn 0: an entry read from a 0.5.1 index line, which kept no turn. */
function turnMark(turn: number): string {
	return turn > 0 ? `[turn ${turn}] ` : "";
}

/** A file's tools and first turn, as far as they are known. */
function fileNote(tools: readonly string[], turn: number): string {
	const parts = [tools.join(", "), turn > 0 ? `first turn ${turn}` : ""].filter((p) => p.length > 0);
	return parts.length > 0 ? ` (${parts.join("; ")})` : "";
}

/** Marks where a multi-line command (a heredoc) broke its line, so that it stays one list item. */
const LINE_BREAK = " ⏎ ";

/** A command on one line: its line breaks shown as LINE_BREAK, its text kept (a model may cite a heredoc's body). */
function commandLine(command: string): string {
	return printable(command).split("\n").join(LINE_BREAK);
}

/** The first line of the compaction summary context-fold 0.5.1 wrote (no model was involved either). */
export const LEGACY_SUMMARY_HEADER = "# Compaction summary (deterministic seed index — no model involved)";

/** True for a compaction summary context-fold wrote, this version or 0.5.1: its tags are live fold codes. */
export function isOwnSummary(summary: unknown): boolean {
	return (
		typeof summary === "string" && (summary.startsWith(SUMMARY_HEADER) || summary.startsWith(LEGACY_SUMMARY_HEADER))
	);
}

/** The heading of the section a summary carries from the one before it. */
const CARRIED_HEADING = "## Carried from the previous compaction";
/** The heading of a handoff seed carried by the first compaction that removes it. */
const SEED_HEADING = "## Carried from the handoff seed this session started from";
/** What both headings open with: a later compaction finds either. */
const CARRIED_PREFIX = "## Carried from ";
/** The line a foreign summary is carried under: the preamble's claim covers context-fold's own text only. */
const FOREIGN_NOTE = "(Pi's own summary, written by a model and carried as it was: context-fold did not extract it.)";

/**
 * What heads a carried seed whose codes are read nowhere here, by why (see CarriedSeed.unread); its
 * tags are quoted: they name blocks of a session the reader has no link to.
 */
const UNREAD_SEED_NOTES = {
	unlinked:
		"(A seed passed as a prompt, carried as it was: it names no saved parent session, so recall_folded cannot read its codes here.)",
	beyond:
		"(The seed the parent session started from, carried as it was: its codes are of the session before the parent, which recall_folded does not read from here.)",
} as const;

/** What a summary carried, and the heading it carried it under (a seed keeps its own). */
export interface Carried {
	heading: string;
	text: string;
}

/**
 * What a summary of ours carried from the one before it or from a handoff seed (a foreign summary's
 * text or the seed, kept nowhere else: the seed index holds only context-fold's own facts), with
 * its heading; undefined when it carried nothing.
 */
export function carriedOver(summary: string): Carried | undefined {
	const at = summary.indexOf(`\n${CARRIED_PREFIX}`);
	const end = at < 0 ? -1 : summary.indexOf("\n", at + 1);
	return end < 0 ? undefined : { heading: summary.slice(at + 1, end), text: summary.slice(end + 1) };
}

/**
 * `text` within `budget` characters; a cut one ends saying that `what` is cut there and naming the
 * code that reads it whole (the session file, without one).
 */
function carriedText(text: string, budget: number, what: string, code: string | undefined): string {
	if (text.length <= budget) return text;
	const whole = code ? `recall_folded codes=["${code}"] reads it whole` : "the session file holds it whole";
	const note = `… ${what} is cut here; ${whole}`;
	const room = Math.max(0, budget - note.length - 1);
	// Cut after a whole line where one fits, so no line (nor a fold tag in it) is cut in half.
	const end = text.lastIndexOf("\n", room);
	return `${end > 0 ? text.slice(0, end) : clip(text, room)}\n${note}`;
}

/** The previous summary's body without its own header and preamble, when it was one of ours. */
function carried(previous: string): string {
	if (!previous.startsWith(SUMMARY_HEADER)) return previous;
	const at = previous.indexOf("\n## ");
	return at < 0 ? "" : previous.slice(at + 1);
}

/** Renders the compaction summary; the result never exceeds its cap (SUMMARY_LIMITS.total at most). */
export function renderSummary(input: SummaryInput): string {
	const s = input.summary;
	const cap = Math.max(MIN_SUMMARY_CHARS, Math.min(SUMMARY_LIMITS.total, input.maxChars ?? SUMMARY_LIMITS.total));
	const scale = cap / SUMMARY_LIMITS.total;
	const L = Object.fromEntries(
		Object.entries(SUMMARY_LIMITS).map(([key, value]) => [key, Math.floor(value * scale)]),
	) as Record<keyof typeof SUMMARY_LIMITS, number>;
	const preamble = [
		SUMMARY_HEADER,
		`${input.scope} This summary was extracted by context-fold, not written by a model:`,
		"every intent, path, command, error line and identifier below is copied verbatim from the session (a long one cut where … marks it, colour codes left out),",
		"and nothing else is claimed.",
		...(input.toolsWithheld
			? [
					"It is an index, not the record: the ground truth is the session file. recall_folded, which reads a block back",
					"by its code, is not active in this session (the tool selection leaves it out): the codes below name the blocks",
					"for when it is again, and the user's /context-fold recall <code> shows one.",
				]
			: [
					"It is an index, not the record: the ground truth is the session file. Read any block back with recall_folded —",
					'codes=["<code>"] (whole, or with grep / lines), or search="<text>" across every folded block; the identifiers below make good search keys.',
				]),
	].join("\n");
	/** The sections, each within its budget scaled by `f` (each counts what it leaves out). */
	const sections = (f: number): string[] => {
		const budget = (key: keyof typeof SUMMARY_LIMITS) => Math.floor(L[key] * f);
		return [
			section(
				"User intents, in order",
				s.intents.map((i) => `- ${turnMark(i.turn)}${quoteTags(i.text)}`),
				budget("intents"),
				"intents (recall_folded search=… finds them)",
				droppedOf(s, "intents", "intents (recall_folded search=… finds them)"),
			),
			section(
				"Error lines (verbatim)",
				s.errors.map(
					(e) =>
						`- ${turnMark(e.turn)}${tag(e.code)}${e.tool ? `${e.tool}: ` : ""}${quoteTags(printable(e.line))}`,
				),
				budget("errors"),
				(from, to) => errorsLeftOut(s.errors.slice(from, to)),
				droppedOf(s, "errors", "error lines (each still in its folded block)"),
			),
			section(
				"Files (paths exactly as the tools received them)",
				s.files.map((f) => `- ${quoteTags(f.path)}${fileNote(f.tools, f.turn)}`),
				budget("files"),
				"files",
				droppedOf(s, "files", "files"),
			),
			section(
				"Commands",
				s.commands.map(
					(c) =>
						`- ${turnMark(c.turn)}${tag(c.code)}\`${quoteTags(commandLine(c.command))}\`${c.error ? " (error)" : ""}`,
				),
				budget("commands"),
				"commands",
				droppedOf(s, "commands", "commands"),
			),
			section(
				"Exact identifiers (search keys for recall_folded)",
				wrap(s.identifiers.map(quoteTags), 160),
				budget("identifiers"),
				"lines of identifiers",
				droppedOf(s, "identifiers", "identifiers"),
			),
			section(
				"Recovery pointers",
				s.spans
					.filter((p) => POINTER_KINDS.has(p.kind) && p.tokens >= 64)
					.map(
						(p) =>
							`- ${foldTag(p.code)} ${p.kind === "toolArgs" ? `${p.tool ?? "tool"} arguments` : (p.tool ?? p.kind)}${p.turn > 0 ? `, turn ${p.turn}` : ""}, ~${estTokens(p.chars)} tokens`,
					),
				budget("pointers"),
				"folded blocks (recall_folded search=…)",
				droppedOf(s, "spans", "blocks (recall_folded search=… finds them)"),
			),
		];
	};
	const previous = input.previousSummary ? carried(input.previousSummary).trim() : (input.carried?.text.trim() ?? "");
	const carriedParts: string[] = [];
	if (previous) {
		// Our own summary's tags were written by the engine (and what it carried, quoted there); a
		// foreign summary's tags are content, and it says who wrote it.
		const own = input.previousSummary === undefined || isOwnSummary(input.previousSummary);
		carriedParts.push(
			own
				? carriedText(previous, L.previous, "the previous summary", input.previousCode)
				: carriedText(`${FOREIGN_NOTE}\n${quoteTags(previous)}`, L.previous, "Pi's summary", input.previousCode),
		);
	}
	// A seed's codes are its parent's, which recall_folded serves as they stand; those of a seed that
	// names no saved parent, or a handoff's own seed, are read nowhere by the reader, so its tags are
	// quoted as content (invariant 2).
	const seed = input.seed;
	if (seed) {
		const text = seed.unread ? `${UNREAD_SEED_NOTES[seed.unread]}\n${quoteTags(seed.text)}` : seed.text;
		carriedParts.push(carriedText(text, L.previous, "the seed", seed.code));
	}
	// What is carried keeps its place (and a cut seed its pointer to the whole); the sections fit in what
	// is left of the cap beside the preamble: their budgets shrink until they do, each still counting what
	// it leaves out, so that no line is cut in half and no count falls short.
	// What an earlier summary carried keeps its heading: a seed a later compaction hands on is still the seed.
	const heading = !previous
		? SEED_HEADING
		: input.previousSummary
			? CARRIED_HEADING
			: (input.carried?.heading ?? CARRIED_HEADING);
	const carriedBlock = carriedParts.length === 0 ? "" : `${heading}\n${carriedParts.join("\n\n")}`;
	const room = carriedBlock ? Math.max(0, L.total - carriedBlock.length - 2) : L.total;
	const bodyAt = (f: number) => [preamble, ...sections(f)].filter((p) => p.length > 0).join("\n\n");
	let body = bodyAt(1);
	for (let f = 1, tries = 0; body.length > room && tries < SHRINK_TRIES; tries++) {
		f *= Math.min(0.9, room / body.length);
		body = bodyAt(f);
	}
	if (body.length > room) body = cutAtLine(body, room);
	return carriedBlock ? `${body}\n\n${carriedBlock}` : body;
}

/** How many times renderSummary shrinks the sections' budgets before it cuts at a line instead. */
const SHRINK_TRIES = 12;

/** `text` cut at a line's end within `max` characters, the cut said on a line of its own. */
function cutAtLine(text: string, max: number): string {
	const note = "… the rest is cut at the summary's cap (recall_folded search=… reads what it held)";
	const end = text.lastIndexOf("\n", Math.max(0, max - note.length - 1));
	return end < 0 ? clip(text, max) : `${text.slice(0, end)}\n${note}`;
}

/** What a handoff seed is rendered from. */
export interface HandoffInput {
	goal: string;
	/** The parent session file; undefined for an in-memory parent, whose codes nothing can read back. */
	parentSession: string | undefined;
	/** When the seed was written (the adapter supplies the clock). */
	writtenAt: string;
	/** A rendered summary of the parent session (see renderSummary). */
	summary: string;
}

/** The first line of every handoff seed. */
export const HANDOFF_HEADER = "# context-fold handoff seed";

/** The start of the first line of a handoff seed context-fold 0.5.1 wrote (then the time it was written). */
const LEGACY_HANDOFF_HEADER = "# Session handoff seed — ";

/** A line that opens a handoff seed, this version's or 0.5.1's. */
const SEED_START = new RegExp(`^(?:${HANDOFF_HEADER}$|${LEGACY_HANDOFF_HEADER})`, "m");

/**
 * The handoff seed `text` holds, this version's or 0.5.1's, from its first line on: a user may paste
 * one as a prompt, after words of their own. Undefined when it holds none.
 */
export function handoffSeedIn(text: string): string | undefined {
	const at = text.search(SEED_START);
	return at < 0 ? undefined : text.slice(at);
}

/**
 * `text` with the head of the handoff seed it holds (this version's, see renderHandoff) left out but
 * its goal line: the parent's path, the time it was written and the words on reading codes back say
 * nothing of the work. `text` itself when it holds no such seed.
 */
export function withoutSeedHead(text: string): string {
	const seed = handoffSeedIn(text);
	if (seed === undefined || !seed.startsWith(HANDOFF_HEADER)) return text;
	const lines = seed.split("\n");
	// The head is the header, a blank line, the goal, parent and written lines, a blank line, then the
	// words on reading codes back up to the next blank line.
	const end = lines.indexOf("", 6);
	if (end < 0 || !lines[2]?.startsWith("Goal: ")) return text;
	return [text.slice(0, text.length - seed.length), lines[2], ...lines.slice(end + 1)].join("\n");
}

/**
 * The line of a seed (this version's or 0.5.1's) that names the parent session its codes point into:
 * a whole line between `\n`s (a regular expression's `m` flag also breaks lines at U+2028, U+2029
 * and `\r`, which a goal may hold).
 */
const PARENT_LINE = /^Parent session: ([^\n]+)$/;

/** A goal on one line, within GOAL_CHARS (a cut one says so). */
function goalLine(goal: string): string {
	const line = goal.trim().replace(/\s*[\r\n\u0085\u2028\u2029]+\s*/g, " ");
	if (line.length <= GOAL_CHARS) return line;
	const note = ` (goal cut at ${GOAL_CHARS} characters of ${line.length})`;
	return `${clip(line, GOAL_CHARS - note.length)}${note}`;
}

/** What a seed's parent line says when the parent was never saved: no file names it. */
const UNSAVED_PARENT = "(in-memory session, not saved)";

/**
 * The parent session file named by the seed `text` holds (handoffSeedIn; its `Parent session:` line
 * among its first lines), or undefined when it holds no seed, or one naming none or an unsaved one.
 */
export function seedParentOf(text: string): string | undefined {
	const seed = handoffSeedIn(text);
	if (seed === undefined) return undefined;
	const line = seed
		.split("\n", 8)
		.map((l) => PARENT_LINE.exec(l.replace(/\r$/, "")))
		.find((m) => m !== null);
	const named = line?.[1].trim();
	return named && named !== UNSAVED_PARENT ? named : undefined;
}

/**
 * The longest goal a seed carries, in characters: the rest of the seed is capped (its summary at
 * SUMMARY_LIMITS.total), and a goal pasted whole into /fold-handoff (300k characters in an audit) made
 * the new session's first message that size. A longer goal is cut, and says so.
 */
export const GOAL_CHARS = 1_000;

/**
 * A deterministic seed for a fresh session: the goal, the parent session, and the parent's summary,
 * with its fold codes flagged as provenance pointers into the parent rather than live codes.
 */
export function renderHandoff(input: HandoffInput): string {
	const body = input.summary.startsWith(SUMMARY_HEADER) ? carried(input.summary) : input.summary;
	return [
		HANDOFF_HEADER,
		"",
		// One line: the seed's head keeps its place, so its parent line is found (seedParentOf) and no goal
		// can pass for it.
		`Goal: ${quoteTags(goalLine(input.goal)) || "(none given: continue the parent session's work)"}`,
		`Parent session: ${input.parentSession ?? UNSAVED_PARENT}`,
		`Written: ${input.writtenAt}`,
		"",
		"Everything below was extracted deterministically from the parent session; no model wrote it: every intent,",
		...(input.parentSession === undefined
			? [
					"path, command, error line and identifier is copied verbatim. The parent session was not saved, so this",
					"text is all that is left of it: codes such as {#<code> FOLDED} name blocks of the parent that nothing can",
					"read back (recall_folded does not reach them).",
				]
			: [
					"path, command, error line and identifier is copied verbatim, and the parent session file is the ground truth.",
					"Provenance: codes such as {#<code> FOLDED} point into the PARENT session file named above, not into this",
					'session. recall_folded codes=["<code>"] (whole, or with grep / lines) reads them from that file, read-only and',
					"checked against the parent's fold-time sha256 where it folded them; unfold cannot bring them into this context.",
					"search covers this session's folds and every block of the parent's branch.",
					"The codes reach one session back: a code that the parent's own seed named (a grandparent's) is not read",
					"from here.",
				]),
		"",
		body.trim(),
		"",
	].join("\n");
}
