/**
 * `/context-fold settings`: the knobs as they resolve now with their sources, as text or, in the
 * terminal UI, as Pi's settings list (each knob's choices, a typed value where it takes any, and a
 * save on change), and `settings <knob> <value>` saving one to Pi's settings.json.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { getSettingsListTheme } from "@earendil-works/pi-coding-agent";
import { Input, type SettingItem, SettingsList, truncateToWidth } from "@earendil-works/pi-tui";
import { knownProviders, providerTableProblems } from "../cache/lifetime.ts";
import { idleUnder, KNOBS, nearestKnob, resolveConfig } from "../config.ts";
import { errorText } from "../error-text.ts";
import { currentWord, renamedKnob } from "../legacy-settings.ts";
import { type FoldConfig, SETTINGS_SECTION } from "../settings-schema.ts";
import type { CommandDeps } from "./command.ts";
import type { Ctx } from "./command-output.ts";
import { type KnobRow, knobRows, meansUnset, savedOrigin, settingsPaths, shownValue } from "./settings.ts";

/** The knobs as they resolve now, with sources. */
export function currentRows(pi: ExtensionAPI, deps: CommandDeps, ctx: ExtensionContext): KnobRow[] {
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
export function saveKnob(pi: ExtensionAPI, deps: CommandDeps, ctx: ExtensionContext, named: string, value: string) {
	// 0.5.1's name for a knob (foldStep) is that knob, said in the answer.
	const renamed = renamedKnob(named);
	const key = renamed ?? named;
	const row = currentRows(pi, deps, ctx).find((r) => r.key === key);
	if (!row) {
		const near = nearestKnob(key);
		const hint = near ? `did you mean ${near.key}?` : `known: ${KNOBS.map((k) => k.key).join(", ")}`;
		return { ok: false, text: `context-fold: no knob "${key}" (${hint})` };
	}
	const was = renamed ? ` (0.5.1's ${named})` : "";
	// Removing a saved value is always possible; while a variable sets the knob, it still applies.
	const unsetting = meansUnset(row.key, value);
	if (row.locked && !unsetting) {
		return {
			ok: false,
			text: `context-fold: ${key}${was} is set by ${row.env} in the environment (${row.value}); a saved value would not apply`,
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
		if (unsetting) {
			const files = deps.settings.unset(row.key, settingsPaths(ctx));
			deps.reload();
			const where = files.length > 0 ? `removed from ${files.join(" and ")}` : "no settings.json set it";
			const then = row.locked
				? `${row.env} still sets it in the environment (${row.value})`
				: "its default applies from the next request";
			return { ok: true, text: `context-fold: ${key}${was} unset (${where}); ${then}` };
		}
		const knob = row.key as keyof FoldConfig;
		const { file, value: saved } = deps.settings.save(knob, currentWord(knob, value), settingsPaths(ctx));
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
			text: `context-fold: ${key}${was} = ${String(saved)}, saved to ${file}; ${idle ?? "applies from the next request"}${never.map((p) => `; but ${p}`).join("")}`,
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
export async function settingsView(pi: ExtensionAPI, deps: CommandDeps, ctx: Ctx): Promise<void> {
	let rows = currentRows(pi, deps, ctx);
	// Pi keeps up to 36 columns for labels: a narrow terminal's labels leave out where a value came
	// from (but a lock), so the values keep room.
	let narrow = false;
	const labelOf = (r: KnobRow) => (r.locked ? `${r.key} · locked` : narrow ? r.key : `${r.key} · ${r.source}`);
	const descriptionOf = (r: KnobRow) => {
		const means = r.defaultMeans ? ` Default now: ${r.defaultMeans}.` : "";
		return r.locked ? `${r.description} Set by ${r.env} in the environment: locked.` : `${r.description}${means}`;
	};
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
