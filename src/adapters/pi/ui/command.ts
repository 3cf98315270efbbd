/**
 * `/context-fold`: its subcommands (status, settings, recall, search, unfold, discard-images), the
 * menu it opens bare in the terminal UI, and the completion of subcommands, knob names and fold
 * codes. The block subcommands are here: recall shows a folded block's original without changing the
 * context, search greps every folded block, and unfold puts a block back after a confirmation that
 * names what it costs, or says why it cannot. Settings are command-settings.ts's; how an answer is
 * shown, command-output.ts's.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import {
	type BlockFacts,
	blockDescription,
	blockLine,
	blockWhat,
	codeLine,
	LINE_WIDTH,
} from "../../../core/block-line.ts";
import { parseCode } from "../../../core/digest.ts";
import { unfoldCost } from "../../../core/latest-request.ts";
import { patternProblem, RECALL_LIMITS } from "../../../core/recall.ts";
import { statusText } from "../../../core/status.ts";
import { blockCost, short } from "../../../core/tokens.ts";
import { KNOBS } from "../config.ts";
import { errorText } from "../error-text.ts";
import { blockFacts } from "../fold/block-facts.ts";
import type { ParentSession } from "../fold/parent-session.ts";
import type { Ledger } from "../fold/session-ledger.ts";
import { notCodes } from "../tools/codes.ts";
import { resolveAny, searchFolded } from "../tools/recall-folded.ts";
import { recallHeader } from "../tools/served-block.ts";
import { runUnfold } from "../tools/unfold.ts";
import { type Ctx, inTui, say, show } from "./command-output.ts";
import { currentRows, saveKnob, settingsView } from "./command-settings.ts";
import { knobText, type SavedSettings } from "./settings.ts";
import { statusFacts, systemTokens, updateFooter, type ViewSources, viewPass } from "./status-facts.ts";

/** The command's name. */
const COMMAND = "context-fold";

/** The subcommands, with what each does. */
const SUBCOMMANDS: readonly { name: string; description: string }[] = [
	{ name: "status", description: "Context usage, its picture by kind, fold events, cache figures, largest folds" },
	{ name: "settings", description: "Every knob with its value and source; `settings <knob> <value>` saves one" },
	{ name: "recall", description: "Show a folded block's original (`recall <code>`), without changing the context" },
	{ name: "search", description: "Search every folded block for a text (`search <text>`)" },
	{ name: "unfold", description: "Put a folded block back into the context (`unfold <code>`), after a confirmation" },
	{ name: "discard-images", description: "Drop the images a kept draft still holds" },
];

/** What the command needs from the extension. */
export interface CommandDeps extends ViewSources {
	ledger: Ledger;
	parent: () => ParentSession | undefined;
	settings: SavedSettings;
	/**
	 * Re-reads the knobs (defaults < settings < environment); a saved change applies from the next
	 * request. Problems in `stated` are said by the caller's own message, so they are not announced again.
	 */
	reload: (stated?: readonly string[]) => void;
	/** `/context-fold discard-images`: drops the images a kept draft holds, and says what it dropped. */
	discardImages?: () => string;
	/** What a request carries besides its messages (see systemTokens); set by registerCommand. */
	system?: (ctx: ExtensionContext) => number;
}

/**
 * Completions for the text after `/context-fold `: subcommands, then knob names, or fold codes with
 * what each block was (`blocks` gives those `recall` or `unfold` may name whose code starts with the
 * text typed, newest first).
 */
function completions(
	prefix: string,
	blocks: (sub: "recall" | "unfold", typed: string) => readonly BlockFacts[],
): AutocompleteItem[] | null {
	const space = prefix.indexOf(" ");
	if (space < 0) {
		const items = SUBCOMMANDS.filter((s) => s.name.startsWith(prefix)).map((s) => ({
			value: s.name,
			label: s.name,
			description: s.description,
		}));
		return items.length > 0 ? items : null;
	}
	const sub = prefix.slice(0, space);
	const rest = prefix.slice(space + 1);
	if (rest.includes(" ")) return null;
	const items: AutocompleteItem[] =
		sub === "settings"
			? KNOBS.filter((k) => k.key.toLowerCase().startsWith(rest.toLowerCase())).map((k) => ({
					value: `${sub} ${k.key}`,
					label: k.key,
				}))
			: sub === "recall" || sub === "unfold"
				? blocks(sub, rest).map((b) => ({
						value: `${sub} ${b.code}`,
						label: b.code,
						description: blockDescription(b, 80),
					}))
				: [];
	return items.length > 0 ? items.slice(0, 50) : null;
}

/** Blocks the picker and completion list at most. */
const PICKED = 200;

/** The facts of a code of this branch, or undefined. */
function factsOf(deps: CommandDeps, code: string): BlockFacts | undefined {
	const id = deps.engine.registry.idOf(code);
	const record = id ? deps.engine.registry.record(id) : undefined;
	return record ? blockFacts(record, deps.engine, deps.ledger) : undefined;
}

/**
 * True when folded block `id` is in the context the next request sends (the rows the status reads);
 * with no rows to read, what the engine knows.
 */
function inContext(deps: CommandDeps, ctx: ExtensionContext, id: string): boolean {
	const rows = viewPass(deps, ctx)?.rows;
	return rows ? rows.some((r) => r.id === id) : deps.engine.mayBeLive(id);
}

/**
 * Why the user cannot unfold `code` now, in the user's words (it names `/context-fold recall`, never
 * the model's tools); undefined when it can be unfolded.
 */
function unfoldRefusal(deps: CommandDeps, ctx: ExtensionContext, code: string): string | undefined {
	const registry = deps.engine.registry;
	const id = registry.idOf(code);
	const read = `/context-fold recall ${code} shows it`;
	// Named only in a refusal: the pickers and completion ask this of every record.
	const block = () => named(deps, code);
	if (!id) {
		const parent = deps.parent();
		if (parent?.has(code))
			return `#${code} belongs to the parent session ${parent.path}, so it cannot be unfolded here; ${read}`;
		const unreadable = parent?.unreadable();
		return unreadable
			? `#${code} is not a fold code of this session branch; it may be one of the parent session's, but ${unreadable}`
			: `#${code} is not a fold code of this session branch`;
	}
	if (compactedAway(deps, ctx, id)) {
		return deps.ledger.holds(id)
			? `${block()} is no longer in the context (a compaction took it out, or another extension leaves it out), so it cannot be unfolded; ${read}`
			: `${block()} is no longer in the context, nor in the session file as Pi read it (its line is unreadable or gone), so it can be neither unfolded nor recalled`;
	}
	if (registry.isUnfolded(id)) return `${block()} is already unfolded`;
	return registry.frozenOp(id) ? undefined : `${block()} is not folded: it is in the context as it was read`;
}

/** `code` with what its block was, `#6vv2m26b bash: npm test (9.8k tokens)`, or `#code` alone for a code the branch lacks. */
function named(deps: CommandDeps, code: string): string {
	const facts = factsOf(deps, code);
	return facts ? blockLine(facts) : `#${code}`;
}

/** True when a compaction removed the block `id` from the context the next request sends (see inContext). */
function compactedAway(deps: CommandDeps, ctx: ExtensionContext, id: string): boolean {
	return deps.engine.leftContext(id, inContext(deps, ctx, id));
}

/**
 * The blocks `/context-fold recall` (every record) or `unfold` (those it can unfold: judged with `ctx`
 * where there is one, else by the engine alone) may name whose code starts with `typed` (in any of the
 * forms a code is taken in: after `#` or `{#`, in any case), newest first.
 */
function blocksFor(deps: CommandDeps, sub: "recall" | "unfold", typed: string, ctx?: ExtensionContext): BlockFacts[] {
	const { registry } = deps.engine;
	const start = typed.replace(/^\{?\s*#/, "").toLowerCase();
	const may = (id: string, code: string) =>
		sub === "recall" ||
		(ctx ? unfoldRefusal(deps, ctx, code) === undefined : !registry.isUnfolded(id) && !deps.engine.leftContext(id));
	const out: BlockFacts[] = [];
	for (const record of registry.allRecords().reverse()) {
		if (out.length >= PICKED) break;
		if (record.code.startsWith(start) && may(record.id, record.code)) {
			out.push(blockFacts(record, deps.engine, deps.ledger));
		}
	}
	return out;
}

/** The recall or unfold picker: one line per block the subcommand may name; resolves with the code chosen. */
async function pick(deps: CommandDeps, ctx: Ctx, sub: "recall" | "unfold"): Promise<string | undefined> {
	const blocks = blocksFor(deps, sub, "", ctx);
	if (blocks.length === 0) {
		say(
			ctx,
			sub === "recall"
				? "context-fold: nothing is folded in this session branch yet"
				: "context-fold: no folded block is in the context to unfold (/context-fold recall <code> shows any other)",
		);
		return undefined;
	}
	const lines = blocks.map((b) => blockLine(b, pickerWidth()));
	const chosen = await ctx.ui.select(sub === "recall" ? "Recall a folded block" : "Unfold a folded block", lines);
	return chosen === undefined ? undefined : blocks[lines.indexOf(chosen)]?.code;
}

/** Columns Pi's select list takes around an option (its marker and padding). */
const PICKER_MARGIN = 6;

/** The width of a picker's lines: LINE_WIDTH, or less in a narrower terminal, so that no option wraps. */
function pickerWidth(): number {
	const columns = process.stdout.columns;
	return columns > 0 ? Math.max(30, Math.min(LINE_WIDTH, columns - PICKER_MARGIN)) : LINE_WIDTH;
}

/** The confirmation text of an unfold, stating what the block was and what unfolding it costs the cache. */
function unfoldQuestion(deps: CommandDeps, code: string, ctx: Ctx): string | undefined {
	const id = deps.engine.registry.idOf(code);
	const record = id ? deps.engine.registry.record(id) : undefined;
	const facts = factsOf(deps, code);
	if (!id || !record || !facts) return undefined;
	// The latest request's rows, or after an unfold or a compaction the next request's (see viewPass).
	const cost = unfoldCost(viewPass(deps, ctx)?.rows ?? [], id);
	const back = cost?.back ?? (record.chars >= 0 ? blockCost(record.chars) : 0);
	const rewrite = cost
		? `the next request writes ~${short(cost.rewrite)} tokens to the prompt cache again (this block and everything after it) instead of reading them`
		: "the next request writes this block and everything after it to the prompt cache again";
	return `Unfold ${codeLine(code, blockWhat(facts), undefined)}? It puts ~${short(back)} tokens back into every later request, and ${rewrite}.`;
}

/** Unfolds `code` after the user confirmed its cache cost; headless (no dialog) it only states the cost. */
async function confirmUnfold(deps: CommandDeps, ctx: Ctx, code: string): Promise<void> {
	const refusal = unfoldRefusal(deps, ctx, code);
	const question = refusal ? undefined : unfoldQuestion(deps, code, ctx);
	if (!question) {
		say(ctx, `context-fold: ${refusal ?? `#${code} cannot be unfolded`}`, "warning");
		return;
	}
	if (!ctx.hasUI) {
		say(ctx, `${question}\nNot unfolded: an unfold needs a confirmation (terminal UI or RPC).`);
		return;
	}
	const yes = await ctx.ui.confirm("Unfold?", question);
	if (!yes) {
		ctx.ui.notify(`${named(deps, code)} stays folded`, "info");
		return;
	}
	// An unfold the session file refuses says why (the tool's own refusals name the model's tools; the
	// user reads those in the user's words).
	let refused: string | undefined;
	const answer = runUnfold(
		{ codes: [code] },
		deps.engine,
		deps.parent(),
		deps.ledger,
		(message) => {
			refused = message;
		},
		() => deps.system?.(ctx) ?? 0,
	);
	// A refusal in the user's words where there is one; else the tool's own reason (the room it lacks).
	// The tool's text names the bare code; the user reads it with what the block was.
	const text = answer.text.replace(`#${code}`, () => named(deps, code));
	const why = answer.failed ? (unfoldRefusal(deps, ctx, code) ?? text) : undefined;
	ctx.ui.notify(refused ?? (why ? `context-fold: ${why}` : text), answer.failed ? "error" : "info");
	updateFooter(deps, ctx);
}

/** Why `rest` is no code for `sub`: several codes are named as such (the subcommands take one), anything else as no code. */
function codeRefusal(sub: "recall" | "unfold", rest: string): string {
	const words = rest.split(/\s+/);
	if (words.length > 1 && words.every((word) => parseCode(word) !== null)) {
		return `context-fold: /context-fold ${sub} takes one code at a time (got ${words.length})`;
	}
	return `context-fold: ${notCodes([rest])}`;
}

/**
 * `/context-fold recall <code>`: the whole original (not the model's capped recall), titled with what
 * the block was; a block still folded in the context may then be unfolded, one a compaction removed
 * only read.
 */
async function recall(deps: CommandDeps, ctx: Ctx, code: string): Promise<void> {
	if (!code) {
		say(ctx, "context-fold: usage: /context-fold recall <code>", "warning");
		return;
	}
	const bare = parseCode(code);
	if (!bare) {
		say(ctx, codeRefusal("recall", code), "warning");
		return;
	}
	const r = resolveAny(bare, deps.engine, deps.ledger, deps.parent());
	if (!r.ok) {
		say(ctx, `context-fold: ${r.error}`, "warning");
		return;
	}
	const registry = deps.engine.registry;
	const id = registry.idOf(bare);
	// A block put back and then compacted away has left the context as surely as a folded one.
	const compacted = id !== undefined && compactedAway(deps, ctx, id);
	const folded = id !== undefined && !registry.isUnfolded(id) && registry.frozenOp(id) !== undefined;
	const actions = folded && !compacted ? [{ key: "u", hint: "unfold" }] : [];
	const gone = compacted
		? "\nNo longer in the context (a compaction took it out, or another extension leaves it out): it can be read here, not unfolded."
		: "";
	// A parent code's tool call is in the parent's file.
	const ledger = r.source === "parent" ? deps.parent()?.ledger() : deps.ledger;
	const title = blockLine(factsOf(deps, bare) ?? blockFacts(r.record, deps.engine, ledger));
	const action = await show(ctx, title, `${recallHeader(r)}${gone}\n\n${r.text}`, actions);
	if (action === "u") await confirmUnfold(deps, ctx, bare);
}

/** `/context-fold search <text>` of a text patternProblem accepts: every folded block holding it, each headed by what it was. */
function search(deps: CommandDeps, pattern: string): string {
	return searchFolded(
		pattern,
		deps.engine,
		deps.ledger,
		RECALL_LIMITS.totalChars,
		RECALL_LIMITS.totalChars,
		{
			// A parent block's tool call is in the parent's file; the line says where the block came from.
			head: (r) =>
				r.source === "parent"
					? `${blockLine(blockFacts(r.record, deps.engine, deps.parent()?.ledger()))} (from the parent session${r.warning ? ", unverified" : ""})`
					: blockLine(blockFacts(r.record, deps.engine, deps.ledger)),
			narrow: "narrow the search, or read a block whole with /context-fold recall <code>",
			unshown: "/context-fold recall <code> reads one whole",
			grep: (code) => `/context-fold recall ${code} reads the block whole`,
		},
		deps.parent(),
	).text;
}

/** Registers `/context-fold`. */
export function registerCommand(pi: ExtensionAPI, sources: CommandDeps): void {
	const deps: CommandDeps = { ...sources, system: (ctx) => systemTokens(pi, ctx) };
	const status = (ctx: Ctx) => {
		const facts = statusFacts(deps, pi, ctx);
		const text = statusText(facts);
		if (!inTui(ctx)) return show(ctx, text.split("\n", 1)[0], text);
		// In the terminal UI the view is laid out for its width: the heading is the view's title.
		const body = (width: number) =>
			statusText({ ...facts, width })
				.split("\n")
				.slice(1)
				.join("\n")
				.trimStart();
		return show(ctx, text.split("\n", 1)[0], body);
	};
	const run = async (args: string, ctx: Ctx): Promise<void> => {
		const text = args.trim();
		const space = text.indexOf(" ");
		const sub = space < 0 ? text : text.slice(0, space);
		const rest = space < 0 ? "" : text.slice(space + 1).trim();
		// A search text keeps the spaces it starts with after the one that ends `search` (an indented
		// line is searchable); spaces after it are not seen in typing, and go.
		const typed =
			text.length === 0
				? ""
				: args
						.trimStart()
						.slice(space + 1)
						.trimEnd();
		switch (sub) {
			case "":
				if (!inTui(ctx)) return void (await status(ctx));
				return menu(ctx);
			case "status":
				return void (await status(ctx));
			case "settings": {
				if (rest) {
					const [key, ...value] = rest.split(/\s+/);
					const result = saveKnob(pi, deps, ctx, key, value.join(" "));
					return say(ctx, result.text, result.ok ? "info" : "error");
				}
				if (inTui(ctx)) return settingsView(pi, deps, ctx);
				return say(ctx, knobText(currentRows(pi, deps, ctx)));
			}
			case "recall":
				return recall(deps, ctx, rest);
			case "search": {
				if (!rest) return say(ctx, "context-fold: usage: /context-fold search <text>", "warning");
				const problem = patternProblem(typed);
				if (problem) return say(ctx, `context-fold: the search text ${problem}`, "warning");
				return void (await show(ctx, `search "${typed}"`, search(deps, typed)));
			}
			case "unfold": {
				if (!rest) return say(ctx, "context-fold: usage: /context-fold unfold <code>", "warning");
				const bare = parseCode(rest);
				if (!bare) return say(ctx, codeRefusal("unfold", rest), "warning");
				return confirmUnfold(deps, ctx, bare);
			}
			case "discard-images":
				return say(ctx, deps.discardImages?.() ?? "context-fold: nothing to discard");
			default:
				return say(
					ctx,
					`context-fold: unknown subcommand "${sub}" (one of ${SUBCOMMANDS.map((s) => s.name).join(", ")})`,
					"warning",
				);
		}
	};
	const menu = async (ctx: Ctx): Promise<void> => {
		const choice = await ctx.ui.select(
			"context-fold",
			SUBCOMMANDS.map((s) => s.name),
		);
		if (!choice) return;
		if (choice === "recall" || choice === "unfold") {
			const code = await pick(deps, ctx, choice);
			return code ? run(`${choice} ${code}`, ctx) : undefined;
		}
		if (choice === "search") {
			const input = await ctx.ui.input("Search folded blocks for", "");
			return input?.trim() ? run(`search ${input}`, ctx) : undefined;
		}
		return run(choice, ctx);
	};
	pi.registerCommand(COMMAND, {
		description: "context-fold: status, settings, recall, search, unfold, discard-images",
		getArgumentCompletions: (prefix) => completions(prefix, (sub, typed) => blocksFor(deps, sub, typed).slice(0, 50)),
		handler: async (args, ctx) => {
			try {
				await run(args ?? "", ctx);
			} catch (error) {
				say(ctx, `context-fold: /${COMMAND} failed: ${errorText(error)}`, "error");
			}
		},
	});
}
