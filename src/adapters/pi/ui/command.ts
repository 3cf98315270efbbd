/**
 * `/context-fold [status|settings|recall|search|unfold|discard-images]`, with completion of its
 * subcommands, knob names and fold codes. In the terminal UI it opens views (a scrollable status or
 * original, Pi's SettingsList, a confirmation that states an unfold's cache cost); over RPC it
 * answers with notifications and dialogs; in print and json modes it prints text (Pi routes an
 * extension's stdout to stderr there). Nothing here calls the model or changes the model's context,
 * except an unfold the user confirmed.
 */
import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { CONFIG_DIR_NAME, getAgentDir, getSettingsListTheme } from "@earendil-works/pi-coding-agent";
import { type AutocompleteItem, Input, type SettingItem, SettingsList } from "@earendil-works/pi-tui";
import { parseCode } from "../../../core/digest.ts";
import { short, statusText, unfoldCost } from "../../../core/status.ts";
import { blockCost } from "../../../core/tokens.ts";
import { KNOBS, resolveConfig } from "../config.ts";
import { errorText } from "../fold/engine.ts";
import type { ParentSession } from "../fold/parent-session.ts";
import type { Ledger } from "../fold/session-ledger.ts";
import { type FoldConfig, SETTINGS_SECTION } from "../settings-schema.ts";
import { notCodes } from "../tools/codes.ts";
import { recallHeader, resolveAny, runRecall } from "../tools/recall-folded.ts";
import { runUnfold } from "../tools/unfold.ts";
import { type KnobRow, knobRows, knobText, type SavedSettings, shownValue } from "./settings.ts";
import { statusFacts, updateFooter, type ViewSources } from "./status.ts";
import { TextView, type ViewAction } from "./viewer.ts";

/** The command's name. */
export const COMMAND = "context-fold";

/** The subcommands, with what each does. */
export const SUBCOMMANDS: readonly { name: string; description: string }[] = [
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
	/** Re-reads the knobs (defaults < settings < environment); a saved change applies from the next request. */
	reload: () => void;
	/** `/context-fold discard-images`: drops the images a kept draft holds, and says what it dropped. */
	discardImages?: () => string;
}

type Ctx = ExtensionCommandContext;

/** Completions for the text after `/context-fold `: subcommands, then knob names or fold codes. */
export function completions(prefix: string, codes: () => readonly string[]): AutocompleteItem[] | null {
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
	const words =
		sub === "settings"
			? KNOBS.map((k) => k.key as string)
			: sub === "recall" || sub === "unfold"
				? codes().slice(-200)
				: [];
	const items = words.filter((w) => w.startsWith(rest)).map((w) => ({ value: `${sub} ${w}`, label: w }));
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
async function show(ctx: Ctx, title: string, text: string, actions: ViewAction[] = []): Promise<string | undefined> {
	if (!inTui(ctx)) {
		say(ctx, text);
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

/** The settings.json files a change may go to. */
function settingsPaths(ctx: ExtensionContext): { global: string; project: string } {
	return { global: join(getAgentDir(), "settings.json"), project: join(ctx.cwd, CONFIG_DIR_NAME, "settings.json") };
}

/** The knobs as they resolve now, with sources. */
function currentRows(pi: ExtensionAPI, deps: CommandDeps): KnobRow[] {
	let fromPi: unknown;
	try {
		fromPi = (pi.getSettings() as Record<string, unknown>)[SETTINGS_SECTION];
	} catch {
		fromPi = undefined;
	}
	return knobRows(resolveConfig(deps.settings.section(fromPi), process.env));
}

/** Saves one knob; returns the message to show and whether it was saved. */
function saveKnob(pi: ExtensionAPI, deps: CommandDeps, ctx: ExtensionContext, key: string, value: string) {
	const row = currentRows(pi, deps).find((r) => r.key === key);
	if (!row) {
		return { ok: false, text: `context-fold: no knob "${key}" (known: ${KNOBS.map((k) => k.key).join(", ")})` };
	}
	if (row.locked) {
		return {
			ok: false,
			text: `context-fold: ${key} is set by ${row.env} in the environment (${row.value}); a saved value would not apply`,
		};
	}
	try {
		const { file, value: saved } = deps.settings.save(row.key as keyof FoldConfig, value, settingsPaths(ctx));
		deps.reload();
		return {
			ok: true,
			text: `context-fold: ${key} = ${String(saved)}, saved to ${file}; applies from the next request`,
		};
	} catch (error) {
		// resolveConfig's words name the settings path and the fallback; here only the reason matters.
		const why = errorText(error)
			.replace(`settings ${SETTINGS_SECTION}.${key}=`, "")
			.replace(/; using .*$/, "");
		return { ok: false, text: `context-fold: ${key} not changed: ${why}` };
	}
}

/** `/context-fold settings` in the terminal UI: Pi's SettingsList; a locked knob cannot be changed. */
async function settingsView(pi: ExtensionAPI, deps: CommandDeps, ctx: Ctx): Promise<void> {
	const rows = currentRows(pi, deps);
	const labelOf = (r: KnobRow) => `${r.key} · ${r.locked ? `${r.env}, locked` : r.source}`;
	await ctx.ui.custom<void>((tui, _theme, _keys, done) => {
		const items: SettingItem[] = rows.map((r) => {
			const item: SettingItem = {
				id: r.key,
				label: labelOf(r),
				description: r.locked ? `${r.description} Set by the environment: locked.` : r.description,
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
				const row = rows.find((r) => r.key === id);
				const result = saveKnob(pi, deps, ctx, id, value);
				ctx.ui.notify(result.text, result.ok ? "info" : "error");
				const now = currentRows(pi, deps).find((r) => r.key === id);
				const item = items.find((i) => i.id === id);
				if (item && now) item.label = labelOf(now);
				list.updateValue(id, shownValue(now?.value ?? row?.value ?? value));
				tui.requestRender();
			},
			() => done(undefined),
			{ enableSearch: true },
		);
		return list;
	});
}

/** The confirmation text of an unfold, stating what it costs the cache. */
export function unfoldQuestion(deps: CommandDeps, code: string): string | undefined {
	const id = deps.engine.registry.idOf(code);
	const record = id ? deps.engine.registry.record(id) : undefined;
	if (!id || !record) return undefined;
	const what = record.tool ?? record.kind ?? "block";
	const cost = unfoldCost(deps.engine.pass()?.rows ?? [], id);
	const back = cost?.back ?? (record.chars >= 0 ? blockCost(record.chars) : 0);
	const rewrite = cost
		? `the next request writes ~${short(cost.rewrite)} tokens to the prompt cache again (this block and everything after it) instead of reading them`
		: "the next request writes this block and everything after it to the prompt cache again";
	return `Unfold #${code} (${what})? It puts ~${short(back)} tokens back into every later request, and ${rewrite}.`;
}

/** Unfolds `code` after the user confirmed its cache cost; headless (no dialog) it only states the cost. */
async function confirmUnfold(deps: CommandDeps, ctx: Ctx, code: string): Promise<void> {
	const question = unfoldQuestion(deps, code);
	if (!question) {
		say(ctx, runUnfold({ codes: [code] }, deps.engine, deps.parent()).text, "warning");
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
	const answer = runUnfold({ codes: [code] }, deps.engine, deps.parent());
	ctx.ui.notify(answer.text, answer.failed ? "error" : "info");
	updateFooter(deps, ctx);
}

/** `/context-fold recall <code>`: the whole original (not the model's capped recall), then an optional unfold. */
async function recall(deps: CommandDeps, ctx: Ctx, code: string): Promise<void> {
	if (!code) {
		say(ctx, "usage: /context-fold recall <code>", "warning");
		return;
	}
	const bare = parseCode(code);
	if (!bare) {
		say(ctx, `context-fold: ${notCodes([code])}`, "warning");
		return;
	}
	const r = resolveAny(bare, deps.engine, deps.ledger, deps.parent());
	if (!r.ok) {
		say(ctx, `context-fold: ${r.error}`, "warning");
		return;
	}
	const registry = deps.engine.registry;
	const id = registry.idOf(bare);
	const unfoldable = id !== undefined && !registry.isUnfolded(id) && registry.frozenOp(id) !== undefined;
	const actions = unfoldable ? [{ key: "u", hint: "unfold" }] : [];
	const action = await show(ctx, `#${bare}`, `${recallHeader(r)}\n\n${r.text}`, actions);
	if (action === "u") await confirmUnfold(deps, ctx, bare);
}

/** Registers `/context-fold`. */
export function registerCommand(pi: ExtensionAPI, deps: CommandDeps): void {
	const codes = () => deps.engine.registry.allRecords().map((r) => r.code);
	const status = (ctx: Ctx) => {
		const [heading, ...body] = statusText(statusFacts(deps, pi, ctx)).split("\n");
		return inTui(ctx)
			? show(ctx, heading, body.join("\n").trimStart())
			: show(ctx, heading, [heading, ...body].join("\n"));
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
				return say(ctx, knobText(currentRows(pi, deps)));
			}
			case "recall":
				return recall(deps, ctx, rest);
			case "search":
				if (!rest) return say(ctx, "usage: /context-fold search <text>", "warning");
				return void (await show(
					ctx,
					`search "${rest}"`,
					runRecall({ search: rest }, deps.engine, deps.ledger, deps.parent()).text,
				));
			case "unfold":
				if (!rest) return say(ctx, "usage: /context-fold unfold <code>", "warning");
				return confirmUnfold(deps, ctx, parseCode(rest) ?? rest);
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
		if (choice === "recall" || choice === "search" || choice === "unfold") {
			const input = await ctx.ui.input(choice === "search" ? "Search folded blocks for" : "Fold code", "");
			if (!input?.trim()) return;
			return run(`${choice} ${input.trim()}`, ctx);
		}
		return run(choice, ctx);
	};
	pi.registerCommand(COMMAND, {
		description: "context-fold: status, settings, recall, search, unfold",
		getArgumentCompletions: (prefix) => completions(prefix, codes),
		handler: async (args, ctx) => {
			try {
				await run(args ?? "", ctx);
			} catch (error) {
				say(ctx, `context-fold: /${COMMAND} failed: ${errorText(error)}`, "error");
			}
		},
	});
}
