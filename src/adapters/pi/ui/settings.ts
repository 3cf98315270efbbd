/**
 * The settings side of `/context-fold`: every knob with its value and where it comes from
 * (default, saved, environment), and saving a change to the `context-fold` section of the
 * settings.json Pi reads. Pi offers extensions no settings write API, so the file is edited here the
 * way Pi edits it: under its lock (a `settings.json.lock` directory, as proper-lockfile takes it),
 * read fresh, every other key kept, written back whole. Pi's in-memory settings do not see the change
 * until it reloads, so the values saved (and unset) by this process are kept as an overlay over
 * `pi.getSettings()`. A knob is unset with the word `default` (see meansUnset): its key is removed from
 * the files that set it, and it falls back to its default, or to what unset means for it.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CONFIG_DIR_NAME, type ExtensionContext, getAgentDir } from "@earendil-works/pi-coding-agent";
import {
	defaultInWords,
	KNOBS,
	type KnobSource,
	PROFILE_KNOBS,
	type ResolvedConfig,
	resolveConfig,
	type SavedOrigin,
} from "../config.ts";
import { errorText } from "../error-text.ts";
import { savedKeysOf } from "../legacy-settings.ts";
import { type FoldConfig, SETTINGS_SECTION } from "../settings-schema.ts";

/** One knob as the settings view lists it. */
export interface KnobRow {
	key: keyof FoldConfig;
	/** The environment variable that sets it: the one read where one is (maybe an earlier release's name), else its own. */
	env: string;
	value: string;
	source: KnobSource;
	/** The environment sets it: a saved change would not apply. */
	locked: boolean;
	/** What its default means where that is not always `value` (the model's own cache lifetime); only while it is the default. */
	defaultMeans?: string;
	description: string;
	/** The values to cycle through (booleans and choices); undefined for numbers, typed in. */
	choices?: string[];
}

/** The JSON Schema keywords the rows read. */
interface Shape {
	type?: string;
	anyOf?: Shape[];
	const?: unknown;
	description?: string;
}

/** Where a knob stands in the listing: the policy, its own knobs, those every profile reads, the other profiles' last. */
function rank(key: keyof FoldConfig, policy: FoldConfig["policy"]): number {
	if (key === "policy") return 0;
	if (PROFILE_KNOBS[policy].includes(key)) return 1;
	return Object.values(PROFILE_KNOBS).some((keys) => keys.includes(key)) ? 3 : 2;
}

/**
 * The knob table with values and sources from a resolution, in the order a user reads it: `policy`,
 * then the knobs of the profile in use, then those every profile reads, then the other profile's.
 */
export function knobRows(resolved: Pick<ResolvedConfig, "config" | "sources" | "variables">): KnobRow[] {
	const policy = resolved.config.policy;
	const ordered = KNOBS.map((knob, index) => ({ knob, index })).sort(
		(a, b) => rank(a.knob.key, policy) - rank(b.knob.key, policy) || a.index - b.index,
	);
	return ordered.map(({ knob }) => {
		const shape = knob.schema as Shape;
		const words = (shape.anyOf ?? []).filter((m) => typeof m.const === "string").map((m) => String(m.const));
		const choices =
			shape.type === "boolean"
				? ["true", "false"]
				: words.length > 0 && !shape.anyOf?.some((m) => m.type === "integer")
					? words
					: undefined;
		const source = resolved.sources[knob.key];
		const value = String(resolved.config[knob.key]);
		const means = source === "default" ? defaultInWords(knob.key, value) : undefined;
		return {
			key: knob.key,
			env: resolved.variables[knob.key] ?? knob.env,
			value,
			source,
			locked: source === "environment",
			description: shape.description ?? "",
			choices,
			...(means === undefined ? {} : { defaultMeans: means }),
		};
	});
}

/** A knob's value as the listings show it: an empty one (no per-provider lifetimes) as `""`, as docs/settings.md shows it. */
export function shownValue(value: string): string {
	return value === "" ? '""' : value;
}

/** The plain-text listing of the knobs, for modes without the terminal UI. */
export function knobText(rows: readonly KnobRow[]): string {
	const width = Math.max(...rows.map((r) => r.key.length));
	const lines = rows.map(
		(r) =>
			`  ${r.key.padEnd(width)}  ${shownValue(r.value)}  (${r.source}${r.defaultMeans ? `: ${r.defaultMeans}` : ""}${r.locked ? `: ${r.env}, locked` : ""})`,
	);
	return [
		"context-fold settings (default < settings.json < environment)",
		...lines,
		`Change one: /context-fold settings <knob> <value>; it is saved to settings.json under "${SETTINGS_SECTION}" (the value default removes it).`,
	].join("\n");
}

/** Where settings.json files live: Pi's global one, and the project's when Pi trusts the project. */
export interface SettingsPaths {
	global: string;
	project?: string;
}

/**
 * context-fold 0.5.1's own settings file, `<agentDir>/context-fold.json`, when one is there: this
 * version reads its knobs from Pi's settings.json only, so a user who kept one is told. `agentDir`
 * is Pi's (the replay's own, fixed, in a replay).
 */
export function legacySettingsFile(agentDir: string = getAgentDir()): string | undefined {
	const file = join(agentDir, "context-fold.json");
	return existsSync(file) ? file : undefined;
}

/**
 * The settings.json files Pi reads for `ctx`: the global one, and the project's only while Pi trusts
 * the project, since Pi ignores an untrusted project's settings.json (a value saved there would
 * never apply).
 */
export function settingsPaths(
	ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">,
	agentDir: string = getAgentDir(),
): SettingsPaths {
	const global = join(agentDir, "settings.json");
	return ctx.isProjectTrusted() ? { global, project: join(ctx.cwd, CONFIG_DIR_NAME, "settings.json") } : { global };
}

/**
 * What the settings.json files `paths` gives hold of context-fold's section that Pi's merged settings
 * cannot show, each as a problem. A file Pi cannot read (not JSON, or no object) while its text names
 * the section: Pi skips such a file with a warning of its own, and the section saved there silently
 * stops applying. And a global section that is no object (`"context-fold": "economic"`) under a
 * trusted project's section that is one: Pi's merge takes the project's whole, so the broken value
 * is never read here and goes unseen until a project without a section reads it. `paths` may throw:
 * nothing found.
 */
export function sectionFileProblems(paths: () => SettingsPaths | undefined): string[] {
	let found: SettingsPaths | undefined;
	try {
		found = paths();
	} catch {
		return [];
	}
	const problems: string[] = [];
	const sections = new Map<string, unknown>();
	for (const file of [found?.project, found?.global]) {
		if (file === undefined) continue;
		try {
			if (!existsSync(file) || !readFileSync(file, "utf8").includes(`"${SETTINGS_SECTION}"`)) continue;
			sections.set(file, readObject(file)[SETTINGS_SECTION]);
		} catch (error) {
			problems.push(
				`${errorText(error).replace(/; fix or remove it$/, "")}: Pi reads none of its settings, so the "${SETTINGS_SECTION}" section saved there does not apply; fix the file`,
			);
		}
	}
	const global = found?.global === undefined ? undefined : sections.get(found.global);
	const project = found?.project === undefined ? undefined : sections.get(found.project);
	if (global !== undefined && !isPlainSection(global) && isPlainSection(project))
		problems.push(
			`settings ${SETTINGS_SECTION} must be an object (in ${found?.global}); this project's section applies here, and in a project without one it is ignored: fix the file`,
		);
	return problems;
}

/**
 * Where a refused saved value came from (see SavedOrigin), read from the files `paths` gives: the
 * project's file when it sets the knob, with the global file's value beneath it, else the global
 * file; without a knob, the file whose section Pi's merge took. The files are read once, on the first
 * refusal, and a file that cannot be read counts as setting nothing; `paths` may throw (a context
 * without the trust check), and then nothing is found.
 */
export function savedOrigin(paths: () => SettingsPaths | undefined): SavedOrigin {
	let files: { file: string; raw: unknown; section: Record<string, unknown> | undefined }[] | undefined;
	const rawIn = (file: string): unknown => {
		try {
			return readObject(file)[SETTINGS_SECTION];
		} catch {
			return undefined;
		}
	};
	return (key) => {
		if (!files) {
			let found: SettingsPaths | undefined;
			try {
				found = paths();
			} catch {
				found = undefined;
			}
			files = [found?.project, found?.global]
				.filter((file): file is string => file !== undefined)
				.map((file) => {
					const raw = rawIn(file);
					return { file, raw, section: isPlainSection(raw) ? raw : undefined };
				});
		}
		if (key === undefined) {
			const holder = files.find((f) => f.raw !== undefined);
			return holder ? { file: holder.file } : undefined;
		}
		const setting = files.filter((f) => f.section?.[key] !== undefined);
		if (setting.length === 0) return undefined;
		const [top, under] = setting;
		const value = top.section?.[key];
		return under
			? { file: top.file, value, beneath: { file: under.file, value: under.section?.[key] } }
			: { file: top.file, value };
	};
}

const LOCK_ATTEMPTS = 50;
const LOCK_WAIT_MS = 20;
/** proper-lockfile's default: a lock older than this is stale. */
const LOCK_STALE_MS = 10_000;

function pause(ms: number): void {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `fn` holding Pi's lock on `file` (the `<file>.lock` directory proper-lockfile uses). */
function withLock<T>(file: string, fn: () => T): T {
	const lock = `${file}.lock`;
	mkdirSync(dirname(file), { recursive: true });
	for (let attempt = 1; ; attempt++) {
		try {
			mkdirSync(lock);
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
			let stale = false;
			try {
				stale = Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS;
			} catch {
				stale = false;
			}
			if (stale) rmSync(lock, { recursive: true, force: true });
			else if (attempt >= LOCK_ATTEMPTS) throw new Error(`${file} is locked by another process`);
			else pause(LOCK_WAIT_MS);
		}
	}
	try {
		return fn();
	} finally {
		rmdirSync(lock);
	}
}

/** The settings object of a file: {} when it is missing; throws, naming the file, when it is no JSON object. */
function readObject(file: string): Record<string, unknown> {
	if (!existsSync(file)) return {};
	let value: unknown;
	try {
		const text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
		if (text.trim() === "") return {};
		value = JSON.parse(text);
	} catch (error) {
		throw new Error(`${file} cannot be read as JSON (${errorText(error)}); fix or remove it`);
	}
	if (!value || typeof value !== "object" || Array.isArray(value))
		throw new Error(`${file} does not hold a JSON object`);
	return value as Record<string, unknown>;
}

/**
 * True when the project's settings.json sets one of `keys`. A project file Pi cannot read sets
 * nothing (Pi leaves it out of its merge, as savedOrigin does): a save then goes to the global
 * file, and the broken one is left as it is.
 */
function projectSets(file: string, keys: readonly string[]): boolean {
	let section: Record<string, unknown> | undefined;
	try {
		section = sectionOf(readObject(file));
	} catch {
		return false;
	}
	return keys.some((k) => section?.[k] !== undefined);
}

function sectionOf(settings: Record<string, unknown>): Record<string, unknown> | undefined {
	const section = settings[SETTINGS_SECTION];
	return isPlainSection(section) ? section : undefined;
}

/** True for a `context-fold` value that is an object of knobs (not null, an array or a word). */
function isPlainSection(section: unknown): section is Record<string, unknown> {
	return typeof section === "object" && section !== null && !Array.isArray(section);
}

/**
 * True when `text` asks to unset `key` rather than give it a value: the word `default` (any case),
 * or for `cacheTtlByProvider`, whose default is empty, also `""` as the listings show it.
 */
export function meansUnset(key: keyof FoldConfig, text: string): boolean {
	const word = text.trim();
	return word.toLowerCase() === "default" || (key === "cacheTtlByProvider" && word === '""');
}

/** The values this process saved or unset, kept over Pi's settings until Pi reloads them. */
export class SavedSettings {
	/** By knob: the value saved, or undefined for a knob unset. */
	private readonly written = new Map<string, unknown>();

	/**
	 * Pi's `context-fold` section with this process's saved values over it and its unset knobs left out.
	 * A section that is no object (a project's `false`) is left as it is: resolveConfig then reads the
	 * knobs beneath it from the files, where every save went.
	 */
	section(fromPi: unknown): unknown {
		if (this.written.size === 0 || (fromPi !== undefined && !isPlainSection(fromPi))) return fromPi;
		const base = fromPi ?? {};
		const section: Record<string, unknown> = { ...base };
		for (const [key, value] of this.written) {
			if (value === undefined) for (const k of savedKeysOf(key as keyof FoldConfig)) delete section[k];
			else section[key] = value;
		}
		return section;
	}

	/**
	 * Validates `text` for `key` and saves the normalised value to the project's settings.json when
	 * that file already sets this knob, else to the global one. Returns the file written; throws
	 * with the reason when the value is rejected or the file cannot be written.
	 */
	save(key: keyof FoldConfig, text: string, paths: SettingsPaths): { file: string; value: unknown } {
		const checked = resolveConfig({ [key]: text }, {});
		if (checked.problems.length > 0) throw new Error(checked.problems.join("; "));
		const value = checked.config[key];
		const write = (file: string) => {
			const settings = readObject(file);
			const held = settings[SETTINGS_SECTION];
			// A section that is no object holds what its writer meant ("economic"): never written over unasked.
			if (held !== undefined && sectionOf(settings) === undefined)
				throw new Error(
					`${file} holds "${SETTINGS_SECTION}": ${JSON.stringify(held)}, which is not an object of knobs; fix or remove it, then save again`,
				);
			settings[SETTINGS_SECTION] = { ...sectionOf(settings), [key]: value };
			writeFileSync(file, JSON.stringify(settings, null, 2), "utf8");
		};
		// Whether the project's file sets the knob is read under its lock: a writer rewrites a file in
		// place, and a read in between would find it empty and send the value to the global file.
		const project = paths.project && existsSync(paths.project) ? paths.project : undefined;
		const toProject =
			project !== undefined &&
			withLock(project, () => {
				if (!projectSets(project, [key])) return false;
				write(project);
				return true;
			});
		const file = toProject && project ? project : paths.global;
		if (!toProject) withLock(file, () => write(file));
		this.written.set(key, value);
		return { file, value };
	}

	/**
	 * Removes `key` from the `context-fold` section of every file in `paths` that sets it (the global
	 * one, and the project's), so that the knob falls back to its default from the next request.
	 * Returns the files changed (none when no file set it); throws when one cannot be read or written.
	 */
	unset(key: keyof FoldConfig, paths: SettingsPaths): string[] {
		// 0.5.1's name for the knob sets it too (foldStep for step): both go, or the old one would apply.
		const keys = savedKeysOf(key);
		const setsIt = (section: Record<string, unknown> | undefined) => keys.some((k) => section?.[k] !== undefined);
		const files: string[] = [];
		for (const file of [paths.global, paths.project]) {
			if (file === undefined || !existsSync(file)) continue;
			// Whether the file sets the knob is read under its lock, as in save.
			withLock(file, () => {
				if (file === paths.project ? !projectSets(file, keys) : !setsIt(sectionOf(readObject(file)))) return;
				const settings = readObject(file);
				const section = { ...sectionOf(settings) };
				for (const k of keys) delete section[k];
				settings[SETTINGS_SECTION] = section;
				writeFileSync(file, JSON.stringify(settings, null, 2), "utf8");
				files.push(file);
			});
		}
		this.written.set(key, undefined);
		return files;
	}
}
