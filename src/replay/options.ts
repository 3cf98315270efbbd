/**
 * The options of `context-fold replay`: the usage text, the parse of the arguments (an option's value
 * after a space or after `=`) and its refusals (a UsageError, said with the usage text), and the policy
 * names: `pi`, the peers, and context-fold under its default profile (`context-fold`) or a named one
 * (`context-fold:<profile>`, the profiles being those the extension's `policy` setting takes); by
 * default every profile is replayed beside plain Pi and the peers, and with `--mine` plain Pi beside
 * context-fold.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_CONFIG, resolveConfig } from "../adapters/pi/config.ts";
import { KNOB_SCHEMAS, SETTINGS_SECTION } from "../adapters/pi/settings-schema.ts";
import type { ImagePricing } from "./image-size.ts";
import { DEFAULT_LAST } from "./mine.ts";
import type { ReplayPolicy } from "./policy-run.ts";
import { PRICE_MODELS } from "./price.ts";

/** The fold profiles, as the extension's `policy` setting names them, in alphabetical order. */
const POLICY_VALUES: readonly string[] = KNOB_SCHEMAS.policy.anyOf.map((member) => member.const).sort();

/** The policy name that replays context-fold under one profile (`context-fold:economic`). */
const PROFILE_PREFIX = "context-fold:";

/**
 * The policies replayed without `--policy`: plain Pi, context-fold under every profile (the default
 * one as plain `context-fold`, the others by name), and the peers.
 */
export const DEFAULT_POLICIES: readonly string[] = [
	"pi",
	"context-fold",
	...POLICY_VALUES.filter((p) => p !== DEFAULT_CONFIG.policy).map((p) => PROFILE_PREFIX + p),
	"compact-only",
	"mask-last-5",
	"clear-tool-uses",
];

/** The policies `--mine` replays without `--policy`: the pair its verdict compares. */
const MINE_POLICIES: readonly string[] = ["pi", "context-fold"];

/** Every profile's policy name, for the usage text and errors. */
const PROFILE_NAMES = POLICY_VALUES.map((p) => PROFILE_PREFIX + p).join(", ");

/** Words wrapped to the usage text's second column (100 characters a line). */
function column(text: string): string {
	const indent = " ".repeat(29);
	const lines: string[] = [];
	for (const word of text.split(" ")) {
		const last = lines.length - 1;
		if (last >= 0 && indent.length + lines[last].length + 1 + word.length <= 100) lines[last] += ` ${word}`;
		else lines.push(word);
	}
	return lines.join(`\n${indent}`);
}

/** The usage text. */
export const USAGE = `usage: context-fold replay <session.jsonl…> [options]
       context-fold replay --mine [--last <n>] [--all-projects] [options]
  --mine                     ${column(
		`replay your own newest Pi sessions, those of the project in the current directory, from Pi's session directory (read only): the verdict over all of them, one line per session (policies: ${MINE_POLICIES.join(",")} unless --policy)`,
  )}
  --last <n>                 with --mine, the newest n sessions (default ${DEFAULT_LAST})
  --all-projects             with --mine, the newest sessions of every project
  --policy <name>[,<name>…]  ${column(
		`pi, context-fold, context-fold:<profile>, compact-only, mask-last-<N>, clear-tool-uses. context-fold runs the default profile (${DEFAULT_CONFIG.policy}, or the one --set policy=… names); ${PROFILE_NAMES} run that profile whatever --set policy says (other --set knobs apply to each) (default: ${DEFAULT_POLICIES.join(", ")})`,
  )}
  --price <model>            anthropic-5m (default), anthropic-1h, openai
  --window <tokens>          context window of the replayed model, 1000 to 100000000 (default 200000)
  --set <key>=<value>        a context-fold knob (e.g. useWindow=6), or trigger/keep/clearAtLeast
                             for clear-tool-uses (default 100000/3/20000); repeatable
  --warming idle|off         model Pi's cache warming, each refresh sent only where Pi's rule finds
                             it pays at Claude Opus 4.5's prices (default idle; never under openai)
  --images text|size         price an image as its placeholder text (default) or by its pixel size,
                             as the price model's provider charges it
  --json                     every figure as JSON on stdout
  --wide                     every column in the table (by default the few that fit 100 columns)
  --quiet                    no progress line (there is none when stderr is not a terminal)
  --jobs <n>                 replays run at once, in worker threads (default 1: in process)
  --html <file>              also write a self-contained HTML report (charts, scatter, table)`;

/** Parsed options. */
export interface ReplayOptions {
	files: string[];
	/** `--mine`: replay the user's newest sessions (how many, of which projects) instead of `files`. */
	mine?: { last: number; allProjects: boolean };
	policies: ReplayPolicy[];
	price: string;
	window: number;
	warming: boolean;
	/** How images are priced (see ReplayJob.images). */
	images: ImagePricing;
	json: boolean;
	/** Every column in the terminal table, not only the brief ones. */
	wide: boolean;
	/** No progress line, even on a terminal. */
	quiet: boolean;
	/** The context-fold knobs given with `--set`. */
	knobs: Record<string, unknown>;
	/** The clear-tool-uses knobs given with `--set` (trigger, keep, clearAtLeast), by name. */
	clearSet: string[];
	/** What the knobs given say as they are read: a 0.5.1 name or word, read as this version's. */
	notices: string[];
	/** Replays run at once (1: all in this thread). */
	jobs: number;
	/** Where to write the HTML report, if asked. */
	html?: string;
	/** False: no hook column (see RunOptions.timeHooks); only callers that print none set it. */
	timeHooks?: boolean;
	/** False: no foresight floors (see policyFigures); only callers that print none set it. */
	foresight?: boolean;
}

/** A command-line mistake, reported with the usage text. */
export class UsageError extends Error {}

const CLEAR_KEYS = new Set(["trigger", "keep", "clearAtLeast"]);

/** A plain decimal number (`140000`, `0.5`), as the usage text writes them; NaN for anything else (`1e5`, `0x10`, ""). */
/** The largest `--window`: ten times the largest window any model offers today. */
const MAX_WINDOW = 100_000_000;

function decimal(text: string): number {
	return /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
}

function value(text: string): unknown {
	const number = decimal(text);
	if (!Number.isNaN(number)) return number;
	if (text === "true" || text === "false") return text === "true";
	return text;
}

/** The options that take a value: each may also be written `--name=value`. */
const VALUED = new Set([
	"--policy",
	"--last",
	"--price",
	"--window",
	"--warming",
	"--set",
	"--images",
	"--html",
	"--jobs",
]);

/** `args` with every `--name=value` of an option that takes a value split in two, as `--name value`. */
function splitValues(args: readonly string[]): string[] {
	return args.flatMap((arg) => {
		const at = arg.indexOf("=");
		return at > 0 && VALUED.has(arg.slice(0, at)) ? [arg.slice(0, at), arg.slice(at + 1)] : [arg];
	});
}

/**
 * A policy name in one spelling: a profile's name in lower case, a mask's count without leading
 * zeros. `context-fold` stays its own name beside the profile it runs (the default profile and the
 * same profile named are two names, both replayed as asked: profiles.test.ts).
 */
function policySpelling(name: string): string {
	if (name.startsWith(PROFILE_PREFIX)) return `${PROFILE_PREFIX}${name.slice(PROFILE_PREFIX.length).toLowerCase()}`;
	const mask = /^mask-last-(\d+)$/.exec(name);
	return mask ? `mask-last-${Number(mask[1])}` : name;
}

/** Parses the arguments after `replay` (an option's value after a space or after `=`). */
export function parseArgs(given: readonly string[]): ReplayOptions {
	const args = splitValues(given);
	const files: string[] = [];
	let names = [...DEFAULT_POLICIES];
	let price = "anthropic-5m";
	let window = 200_000;
	let warming = true;
	let images: ImagePricing = "text";
	let json = false;
	let wide = false;
	let quiet = false;
	let html: string | undefined;
	let jobs = 1;
	let mine = false;
	let last: number | undefined;
	let allProjects = false;
	let policyGiven = false;
	const knobs: Record<string, unknown> = {};
	const clear = { trigger: 100_000, keep: 3, clearAtLeast: 20_000 };
	const clearSet: string[] = [];
	// An option given twice would replay one of its values unseen: each is refused the second time.
	const seen = new Set<string>();
	const once = (name: string, how: string): void => {
		if (seen.has(name)) throw new UsageError(`${name} given twice: ${how}`);
		seen.add(name);
	};
	for (let i = 0; i < args.length; i++) {
		const arg = args[i];
		const next = (): string => {
			const v = args[++i];
			// A forgotten value would take the next option as the value (`--price --json`).
			if (v === undefined || v.startsWith("--")) throw new UsageError(`${arg} needs a value`);
			if (arg !== "--set") once(arg, arg === "--policy" ? "name every policy in one comma list" : "give it once");
			return v;
		};
		if (arg === "--policy") {
			// Spaces around a name are no part of it: the list --help prints reads "pi, context-fold, …".
			names = next()
				.split(",")
				.map((name) => name.trim());
			policyGiven = true;
		} else if (arg === "--mine") mine = true;
		else if (arg === "--last") last = decimal(next());
		else if (arg === "--all-projects") allProjects = true;
		else if (arg === "--price") price = next();
		else if (arg === "--window") window = decimal(next());
		else if (arg === "--warming") {
			const w = next();
			if (w !== "idle" && w !== "off") throw new UsageError(`--warming takes idle or off, not ${w}`);
			warming = w === "idle";
		} else if (arg === "--set") {
			const [key, ...rest] = next().split("=");
			if (!key || rest.length === 0) throw new UsageError("--set takes key=value");
			once(`--set ${key}`, "give each knob once");
			if (key === "policy" && !POLICY_VALUES.includes(rest.join("=").toLowerCase()))
				throw new UsageError(`--set policy takes one of ${POLICY_VALUES.join(", ")}, not ${rest.join("=")}`);
			if (CLEAR_KEYS.has(key)) {
				clear[key as keyof typeof clear] = decimal(rest.join("="));
				clearSet.push(key);
			}
			// Defined, not assigned: a key such as __proto__ is then named as no knob, as any other is.
			else
				Object.defineProperty(knobs, key, {
					value: value(rest.join("=")),
					enumerable: true,
					writable: true,
					configurable: true,
				});
		} else if (arg === "--images") {
			const how = next();
			if (how !== "text" && how !== "size") throw new UsageError(`--images takes text or size, not ${how}`);
			images = how;
		} else if (arg === "--json") json = true;
		else if (arg === "--wide") wide = true;
		else if (arg === "--quiet") quiet = true;
		else if (arg === "--html") {
			once(arg, "give it once");
			html = args[++i] ?? "";
			// A forgotten name would take the next argument: a session file, or an option.
			if (html === "" || html.startsWith("-")) throw new UsageError(`--html needs a file name, not "${html}"`);
		} else if (arg === "--jobs") jobs = decimal(next());
		else if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option ${arg}`);
		else files.push(arg);
	}
	// A knob the extension would refuse or not know would replay its default unseen: a sweep over
	// values would print the default's figures under each one. 0.5.1's names and words are read, as
	// the extension reads them, and said (see ReplayOptions.notices).
	const problems = resolveConfig(knobs, {}).problems.map((problem) =>
		problem.replace(`settings ${SETTINGS_SECTION}.`, "--set "),
	);
	const notices = problems.filter(isReadNotice);
	const refused = problems
		.filter((problem) => !isReadNotice(problem))
		.map((problem) => problem.replace(/; using .*$/, "").replace("; ignoring it", ""));
	if (refused.length > 0) throw new UsageError(refused.join("\n"));
	if (mine && files.length > 0) throw new UsageError("--mine finds the sessions itself: give no session file");
	if (!mine && (last !== undefined || allProjects))
		throw new UsageError(`${last === undefined ? "--all-projects" : "--last"} goes with --mine`);
	if (last !== undefined && (!Number.isInteger(last) || last < 1))
		throw new UsageError("--last takes a whole number ≥ 1");
	if (files.length === 0 && !mine) throw new UsageError("no session file given");
	if (mine && !policyGiven) names = [...MINE_POLICIES];
	if (!Object.hasOwn(PRICE_MODELS, price)) throw new UsageError(`unknown price model ${price}`);
	if (!Number.isInteger(window) || window < 1000 || window > MAX_WINDOW)
		throw new UsageError(`--window takes a whole number from 1000 to ${MAX_WINDOW}`);
	if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError("--jobs takes a whole number ≥ 1");
	for (const [k, v] of Object.entries(clear)) {
		if (!Number.isInteger(v) || v < 0) throw new UsageError(`--set ${k} takes a whole number ≥ 0`);
	}
	if (names.includes("")) throw new UsageError("--policy takes names separated by commas, none of them empty");
	// One file under two spellings (`a.jsonl`, `./a.jsonl`, a link to it) is given twice too.
	const where = files.map(sameFileKey);
	const again = files.find((_, i) => where.indexOf(where[i]) !== i);
	if (again !== undefined) throw new UsageError(`session file ${again} given twice: each is replayed once`);
	// One policy under two spellings (`context-fold:LADDER` and `context-fold:ladder`, `mask-last-07`) is named twice too.
	const spelled = names.map(policySpelling);
	const twice = names.find((_, i) => spelled.indexOf(spelled[i]) !== i);
	if (twice !== undefined) throw new UsageError(`--policy names ${twice} twice`);
	const policies = names.map((name): ReplayPolicy => {
		if (name === "pi") return { name, kind: "pi" };
		if (name === "context-fold") return { name, kind: "context-fold", settings: knobs };
		if (name.startsWith(PROFILE_PREFIX)) {
			const profile = name.slice(PROFILE_PREFIX.length).toLowerCase();
			if (!POLICY_VALUES.includes(profile))
				throw new UsageError(
					`unknown context-fold profile "${profile}" in ${name}: the profiles are ${PROFILE_NAMES}`,
				);
			return { name, kind: "context-fold", settings: { ...knobs, policy: profile } };
		}
		if (name === "compact-only") return { name, kind: "compact-only" };
		if (name === "clear-tool-uses") return { name, kind: "clear", settings: { ...clear } };
		const mask = /^mask-last-(\d+)$/.exec(name);
		if (mask) return { name, kind: "mask", keep: Number(mask[1]) };
		throw new UsageError(
			`unknown policy ${name}: pi, context-fold, ${PROFILE_PREFIX}<profile>, compact-only, mask-last-<N> or clear-tool-uses`,
		);
	});
	return {
		files,
		...(mine ? { mine: { last: last ?? DEFAULT_LAST, allProjects } } : {}),
		policies,
		price,
		window,
		// Pi warms no cache without a lifetime (OpenAI's models declare none): the replay does not either.
		warming: warming && PRICE_MODELS[price].warmed,
		images,
		json,
		wide,
		quiet,
		jobs,
		knobs,
		clearSet,
		notices,
		...(html === undefined ? {} : { html }),
	};
}

/** Where a session file named `file` is: its real path, or its absolute path where it cannot be read. */
function sameFileKey(file: string): string {
	try {
		return realpathSync.native(file);
	} catch {
		return resolve(file);
	}
}

/** True for what resolveConfig says of a knob it still reads: 0.5.1's name or word for it. */
function isReadNotice(problem: string): boolean {
	return problem.endsWith("(read this time)") || problem.endsWith("; read as that");
}
