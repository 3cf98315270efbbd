import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { getSettingsListTheme } from "@earendil-works/pi-coding-agent";
import { type AutocompleteItem, Input, type SettingItem, SettingsList, truncateToWidth } from "@earendil-works/pi-tui";
import { type BlockFacts, blockDescription, blockLine, blockWhat, codeLine } from "../../../core/block-line.ts";
import { parseCode } from "../../../core/digest.ts";
import { unfoldCost } from "../../../core/latest-request.ts";
import { patternProblem, RECALL_LIMITS } from "../../../core/recall.ts";
import { statusText, VIEW_WIDTH } from "../../../core/status.ts";
import { blockCost, short } from "../../../core/tokens.ts";
import { knownProviders, providerTableProblems } from "../cache/lifetime.ts";
import { idleUnder, KNOBS, nearestKnob, resolveConfig } from "../config.ts";
import { errorText } from "../fold/engine.ts";
import type { ParentSession } from "../fold/parent-session.ts";
import type { Ledger } from "../fold/session-ledger.ts";
import { type FoldConfig, SETTINGS_SECTION } from "../settings-schema.ts";
import { notCodes } from "../tools/codes.ts";
import { recallHeader, resolveAny, searchFolded } from "../tools/recall-folded.ts";
import { runUnfold } from "../tools/unfold.ts";
import { blockFacts } from "./blocks.ts";
import {
	type KnobRow,
	knobRows,
	knobText,
	meansUnset,
	type SavedSettings,
	savedOrigin,
	settingsPaths,
	shownValue,
} from "./settings.ts";
import { statusFacts, updateFooter, type ViewSources, viewPass } from "./status.ts";
import { TextView, type ViewAction } from "./viewer.ts";

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
}

type Ctx = ExtensionCommandContext;

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
			? KNOBS.filter((k) => k.key.startsWith(rest)).map((k) => ({ value: `${sub} ${k.key}`, label: k.key }))
			: sub === "recall" || sub === "unfold"
				? blocks(sub, rest).map((b) => ({
						value: `${sub} ${b.code}`,
						label: b.code,
						description: blockDescription(b, 80),
					}))
				: [];
	return items.length > 0 ? items.slice(0, 50) : null;
}

/** True in the terminal UI, where views open. */
function inTui(ctx: ExtensionContext): boolean {
	return ctx.mode === "tui" && ctx.hasUI;
}

/** Tells the user: a notification with a UI (TUI, RPC), else a line on stdout (Pi moves it to stderr). */
function say(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
	if (ctx.hasUI) ctx.ui.notify(text, level);
	else process.stdout.write(`${text}\n`);
}

/** Shows a text: a scrollable view in the terminal UI, else as `say` does. Resolves with the action taken. */
async function show(
	ctx: Ctx,
	title: string,
	text: string | ((width: number) => string),
	actions: ViewAction[] = [],
): Promise<string | undefined> {
	if (!inTui(ctx)) {
		say(ctx, typeof text === "string" ? text : text(VIEW_WIDTH));
		return undefined;
	}
	return ctx.ui.custom<string | undefined>(
		(tui, theme, keys, done) =>
			new TextView({
				tui,
				keys,
				title,
				text,
				style: { title: (t) => theme.bold(theme.fg("accent", t)), hint: (t) => theme.fg("dim", t) },
				done,
				actions,
			}),
	);
}

/** The knobs as they resolve now, with sources. */
function currentRows(pi: ExtensionAPI, deps: CommandDeps, ctx: ExtensionContext): KnobRow[] {
	let fromPi: unknown;
	try {
		fromPi = (pi.getSettings() as Record<string, unknown>)[SETTINGS_SECTION];
	} catch {
		fromPi = undefined;
	}
	return knobRows(
		resolveConfig(
			deps.settings.section(fromPi),
			process.env,
			savedOrigin(() => settingsPaths(ctx)),
		),
	);
}

/** Saves one knob; returns the message to show and whether it was saved. */
function saveKnob(pi: ExtensionAPI, deps: CommandDeps, ctx: ExtensionContext, key: string, value: string) {
	const row = currentRows(pi, deps, ctx).find((r) => r.key === key);
	if (!row) {
		const near = nearestKnob(key);
		const hint = near ? `did you mean ${near.key}?` : `known: ${KNOBS.map((k) => k.key).join(", ")}`;
		return { ok: false, text: `context-fold: no knob "${key}" (${hint})` };
	}
	if (row.locked) {
		return {
			ok: false,
			text: `context-fold: ${key} is set by ${row.env} in the environment (${row.value}); a saved value would not apply`,
		};
	}
	// An empty value reads as `false` for a boolean (an empty environment variable is off), but typed
	// without one, a knob is named to be changed, not switched off.
	if (value.trim() === "") {
		return {
			ok: false,
			text: `context-fold: ${key} not changed: give a value (/context-fold settings ${key} <value>)`,
		};
	}
	try {
		if (meansUnset(row.key, value)) {
			const files = deps.settings.unset(row.key, settingsPaths(ctx));
			deps.reload();
			const where = files.length > 0 ? `removed from ${files.join(" and ")}` : "no settings.json set it";
			return { ok: true, text: `context-fold: ${key} unset (${where}); its default applies from the next request` };
		}
		const { file, value: saved } = deps.settings.save(row.key as keyof FoldConfig, value, settingsPaths(ctx));
		// An entry naming no provider Pi knows never applies: the confirmation says so where the user
		// looks, and only there (the reload would announce it as well).
		const never =
			row.key === "cacheTtlByProvider"
				? providerTableProblems(String(saved), knownProviders(ctx.modelRegistry))
				: [];
		deps.reload(never);
		const policy = currentRows(pi, deps, ctx).find((r) => r.key === "policy")?.value;
		const idle = idleUnder(row.key as keyof FoldConfig, policy as FoldConfig["policy"]);
		return {
			ok: true,
			text: `context-fold: ${key} = ${String(saved)}, saved to ${file}; ${idle ?? "applies from the next request"}${never.map((p) => `; but ${p}`).join("")}`,
		};
	} catch (error) {
		// resolveConfig's words name the settings path and the fallback; here only the reason matters.
		const why = errorText(error)
			.replace(`settings ${SETTINGS_SECTION}.${key}=`, "")
			.replace(/; using .*$/, "");
		return { ok: false, text: `context-fold: ${key} not changed: ${why}` };
	}
}

/**
 * `/context-fold settings` in the terminal UI: a title naming the active policy, then Pi's
 * SettingsList; a locked knob cannot be changed. After each change every row and the title are read
 * again, since a change of policy changes other knobs' values (their profile defaults).
 */
async function settingsView(pi: ExtensionAPI, deps: CommandDeps, ctx: Ctx): Promise<void> {
	let rows = currentRows(pi, deps, ctx);
	// Pi keeps up to 36 columns for labels: a narrow terminal's labels leave out where a value came
	// from (but a lock), so the values keep room.
	let narrow = false;
	const labelOf = (r: KnobRow) => (r.locked ? `${r.key} · locked` : narrow ? r.key : `${r.key} · ${r.source}`);
	const descriptionOf = (r: KnobRow) =>
		r.locked ? `${r.description} Set by ${r.env} in the environment: locked.` : r.description;
	await ctx.ui.custom<void>((tui, theme, _keys, done) => {
		const items: SettingItem[] = rows.map((r) => {
			const item: SettingItem = {
				id: r.key,
				label: labelOf(r),
				description: descriptionOf(r),
				currentValue: shownValue(r.value),
			};
			if (r.locked) return item;
			if (r.choices) item.values = r.choices;
			else {
				item.submenu = (current, close) => {
					const input = new Input({ prompt: `${r.key} (now ${current}, Esc keeps it): ` });
					input.focused = true;
					input.onSubmit = (text) => close(text.trim() === "" ? undefined : text.trim());
					input.onEscape = () => close();
					return input;
				};
			}
			return item;
		});
		const list = new SettingsList(
			items,
			Math.min(items.length, 20),
			getSettingsListTheme(),
			(id, value) => {
				const result = saveKnob(pi, deps, ctx, id, value);
				ctx.ui.notify(result.text, result.ok ? "info" : "error");
				rows = currentRows(pi, deps, ctx);
				refresh();
				// A new profile orders the knobs anew (its own first): the list holds this array.
				const order = new Map<string, number>(rows.map((r, i) => [r.key, i]));
				items.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
				list.selectItem(id);
				tui.requestRender();
			},
			() => done(undefined),
			{ enableSearch: true },
		);
		// Every row read again from `rows`: its label (which the width shapes), description and value.
		const refresh = () => {
			for (const item of items) {
				const row = rows.find((r) => r.key === item.id);
				if (!row) continue;
				item.label = labelOf(row);
				item.description = descriptionOf(row);
				list.updateValue(item.id, shownValue(row.value));
			}
		};
		const hint = theme.fg(
			"dim",
			"Saved to Pi's settings.json (type default to unset a number); a knob set by its CONTEXTFOLD_* variable is locked. Esc closes.",
		);
		const title = () => {
			const policy = rows.find((r) => r.key === "policy")?.value;
			return theme.bold(theme.fg("accent", `context-fold settings · policy ${String(policy)}`));
		};
		return {
			render: (width: number) => {
				if (narrow !== width < NARROW_SETTINGS) {
					narrow = width < NARROW_SETTINGS;
					refresh();
				}
				return [...[title(), hint].map((line) => truncateToWidth(line, width)), ...list.render(width)];
			},
			handleInput: (data: string) => list.handleInput(data),
			invalidate: () => list.invalidate(),
		};
	});
}

/** Below this many columns the settings list's labels leave out each value's source (see settingsView). */
const NARROW_SETTINGS = 70;

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
	if (!id) {
		const parent = deps.parent();
		return parent?.has(code)
			? `#${code} belongs to the parent session ${parent.path}, so it cannot be unfolded here; ${read}`
			: `#${code} is not a fold code of this session branch`;
	}
	if (compactedAway(deps, ctx, id)) {
		return `#${code} is no longer in the context (a compaction removed it), so it cannot be unfolded; ${read}`;
	}
	return registry.isUnfolded(id) ? `#${code} is already unfolded` : undefined;
}

/** True when a compaction removed the block `id` from the context the next request sends (see inContext). */
function compactedAway(deps: CommandDeps, ctx: ExtensionContext, id: string): boolean {
	return deps.engine.leftContext(id, inContext(deps, ctx, id));
}

/**
 * The blocks `/context-fold recall` (every record) or `unfold` (those it can unfold: judged with `ctx`
 * where there is one, else by the engine alone) may name whose code starts with `typed`, newest first.
 */
function blocksFor(deps: CommandDeps, sub: "recall" | "unfold", typed: string, ctx?: ExtensionContext): BlockFacts[] {
	const { registry } = deps.engine;
	const may = (id: string, code: string) =>
		sub === "recall" ||
		(ctx ? unfoldRefusal(deps, ctx, code) === undefined : !registry.isUnfolded(id) && !deps.engine.leftContext(id));
	const out: BlockFacts[] = [];
	for (const record of registry.allRecords().reverse()) {
		if (out.length >= PICKED) break;
		if (record.code.startsWith(typed) && may(record.id, record.code)) {
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
	const lines = blocks.map((b) => blockLine(b));
	const chosen = await ctx.ui.select(sub === "recall" ? "Recall a folded block" : "Unfold a folded block", lines);
	return chosen === undefined ? undefined : blocks[lines.indexOf(chosen)]?.code;
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
		ctx.ui.notify(`#${code} stays folded`, "info");
		return;
	}
	const answer = runUnfold({ codes: [code] }, deps.engine, deps.parent(), deps.ledger);
	// The tool's own refusals name the model's tools; the user reads why in the user's words.
	const why = answer.failed ? (unfoldRefusal(deps, ctx, code) ?? `#${code} was not unfolded`) : undefined;
	ctx.ui.notify(why ? `context-fold: ${why}` : answer.text, answer.failed ? "error" : "info");
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
		say(ctx, "usage: /context-fold recall <code>", "warning");
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
		? "\nNo longer in the context (a compaction removed it): it can be read here, not unfolded."
		: "";
	// A parent code's tool call is in the parent's file.
	const ledger = r.source === "parent" ? deps.parent()?.ledger() : deps.ledger;
	const title = blockLine(factsOf(deps, bare) ?? blockFacts(r.record, deps.engine, ledger));
	const action = await show(ctx, title, `${recallHeader(r)}${gone}\n\n${r.text}`, actions);
	if (action === "u") await confirmUnfold(deps, ctx, bare);
}

/** `/context-fold search <text>`: every folded block holding the text, each headed by what it was. */
function search(deps: CommandDeps, pattern: string): string {
	const problem = patternProblem(pattern);
	if (problem) return `context-fold: the search text ${problem}`;
	return searchFolded(
		pattern,
		deps.engine,
		deps.ledger,
		RECALL_LIMITS.totalChars,
		{
			// A parent block's tool call is in the parent's file; the line says where the block came from.
			head: (r) =>
				r.source === "parent"
					? `${blockLine(blockFacts(r.record, deps.engine, deps.parent()?.ledger()))} (from the parent session${r.warning ? ", unverified" : ""})`
					: blockLine(blockFacts(r.record, deps.engine, deps.ledger)),
			narrow: "narrow the search, or read a block whole with /context-fold recall <code>",
		},
		deps.parent(),
	).text;
}

/** Registers `/context-fold`. */
export function registerCommand(pi: ExtensionAPI, deps: CommandDeps): void {
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
			case "search":
				if (!rest) return say(ctx, "usage: /context-fold search <text>", "warning");
				return void (await show(ctx, `search "${rest}"`, search(deps, rest)));
			case "unfold": {
				if (!rest) return say(ctx, "usage: /context-fold unfold <code>", "warning");
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
			return input?.trim() ? run(`search ${input.trim()}`, ctx) : undefined;
		}
		return run(choice, ctx);
	};
	pi.registerCommand(COMMAND, {
		description: "context-fold: status, settings, recall, search, unfold",
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
