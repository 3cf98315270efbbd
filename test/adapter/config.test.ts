/**
 * The knob table: defaults < saved settings < environment, value parsing, and the off switch.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
	DEFAULT_CONFIG,
	envSwitch,
	KNOBS,
	nearestKnob,
	reserveOf,
	resolveConfig,
	type SavedOrigin,
} from "../../src/adapters/pi/config.ts";
import { DEPRECATED_VARIABLES } from "../../src/adapters/pi/legacy-settings.ts";
import { savedOrigin } from "../../src/adapters/pi/ui/settings.ts";
import { budgetOf } from "../../src/core/contract.ts";

describe("resolveConfig", () => {
	it("uses the defaults when nothing is set", () => {
		const { config, sources, problems } = resolveConfig(undefined, {});
		assert.deepEqual({ config, problems }, { config: { ...DEFAULT_CONFIG }, problems: [] });
		assert.deepEqual(new Set(Object.values(sources)), new Set(["default"]));
		assert.equal(DEFAULT_CONFIG.foldAt, 0.45);
		assert.equal(DEFAULT_CONFIG.coldFoldAt, 0.25);
		assert.equal(DEFAULT_CONFIG.step, 0.12);
		assert.equal(DEFAULT_CONFIG.budgetFraction, 0.75);
		assert.equal(DEFAULT_CONFIG.budgetCap, 200_000);
		assert.equal(DEFAULT_CONFIG.floor, 0.02);
		assert.equal(DEFAULT_CONFIG.tail, 20_000);
		assert.equal(DEFAULT_CONFIG.compact, "fold");
	});

	it("saved settings override defaults and the environment overrides both", () => {
		const { config, sources, problems } = resolveConfig(
			{ foldAt: 0.5, tail: 1000, debug: true },
			{ CONTEXTFOLD_FOLD_AT: "0.6", CONTEXTFOLD_BUDGET_CAP: "90000", CONTEXTFOLD_COMPACT: "NATIVE" },
		);
		assert.deepEqual(problems, []);
		assert.equal(sources.foldAt, "environment");
		assert.equal(sources.tail, "saved");
		assert.equal(sources.budgetCap, "environment");
		assert.equal(sources.step, "default");
		assert.equal(config.foldAt, 0.6);
		assert.equal(config.tail, 1000);
		assert.equal(config.debug, true);
		assert.equal(config.budgetCap, 90_000);
		assert.equal(config.compact, "native");
	});

	it("reads every knob's environment variable, and docs/settings.md documents each one", () => {
		// A value the knob's schema accepts and that differs from its default, derived from the schema
		// itself, so a new knob is covered without a new line here.
		const other = (knob: (typeof KNOBS)[number]): unknown => {
			const schema = knob.schema as {
				type?: string;
				anyOf?: { const?: unknown; type?: string }[];
				default?: unknown;
			};
			if (schema.type === "boolean") return !schema.default;
			if (schema.type === "number") return schema.default === 0.3 ? 0.35 : 0.3;
			if (schema.type === "integer" || typeof schema.default === "number") return (schema.default as number) + 1000;
			if (schema.type === "string") return "anthropic=600";
			if (schema.anyOf?.some((a) => a.type === "integer")) return 15;
			const choices = (schema.anyOf ?? []).map((a) => a.const).filter((c) => c !== undefined);
			return choices.find((c) => c !== schema.default);
		};
		const values = new Map(KNOBS.map((knob) => [knob, other(knob)] as const));
		const env = Object.fromEntries([...values].map(([knob, value]) => [knob.env, String(value)]));
		const { config, problems, sources } = resolveConfig({}, env);
		assert.deepEqual(problems, []);
		for (const [knob, value] of values) {
			assert.equal(config[knob.key], value, `${knob.env}=${String(value)}`);
			assert.equal(sources[knob.key], "environment", knob.env);
		}
		const table = readFileSync(new URL("../../docs/settings.md", import.meta.url), "utf8");
		const documented = new Set([...table.matchAll(/^\| `\w+` \| `(CONTEXTFOLD_[A-Z_]+)` \|/gm)].map((m) => m[1]));
		assert.deepEqual([...documented].sort(), KNOBS.map((knob) => knob.env).sort(), "docs/settings.md's table");
	});

	it("reads cacheIdleMinutes as auto, off (0) or whole minutes", () => {
		assert.equal(resolveConfig({}, {}).config.cacheIdleMinutes, "auto");
		assert.equal(resolveConfig({ cacheIdleMinutes: "off" }, {}).config.cacheIdleMinutes, 0);
		assert.equal(resolveConfig({}, { CONTEXTFOLD_CACHE_IDLE_MINUTES: "AUTO" }).config.cacheIdleMinutes, "auto");
		assert.equal(resolveConfig({}, { CONTEXTFOLD_CACHE_IDLE_MINUTES: "45" }).config.cacheIdleMinutes, 45);
		const bad = resolveConfig({ cacheIdleMinutes: -3 }, {});
		assert.equal(bad.config.cacheIdleMinutes, "auto");
		assert.equal(bad.problems.length, 1);
	});

	it("names the variable a mistyped CONTEXTFOLD_* name meant, and leaves other CONTEXTFOLD_* names alone", () => {
		const { config, problems } = resolveConfig(
			{ hot_tail: 6000 },
			{ CONTEXTFOLD_HOTTAIL: "abc", CONTEXTFOLD_SESSIONS: "/x" },
		);
		assert.equal(config.hotTail, DEFAULT_CONFIG.hotTail);
		assert.deepEqual(problems, [
			"settings context-fold.hot_tail is not a context-fold setting; ignoring it (did you mean hotTail?)",
			"CONTEXTFOLD_HOTTAIL is not a context-fold variable; ignoring it (did you mean CONTEXTFOLD_HOT_TAIL?)",
		]);
	});

	it("names every variable CONTEXTFOLD_ and the knob's name in upper snake case", () => {
		for (const knob of KNOBS) {
			const snake = knob.key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
			assert.equal(knob.env, `CONTEXTFOLD_${snake}`, knob.key);
		}
	});

	it("still reads an earlier release's variable, saying which name to use; the current name wins", () => {
		const old = resolveConfig({}, { CONTEXTFOLD_FOLD_STEP: "0.2", CONTEXTFOLD_FOLD_FLOOR: "5%" });
		assert.equal(old.config.step, 0.2);
		assert.equal(old.config.floor, 0.05);
		assert.equal(old.sources.step, "environment");
		assert.deepEqual(old.variables, { step: "CONTEXTFOLD_FOLD_STEP", floor: "CONTEXTFOLD_FOLD_FLOOR" });
		assert.deepEqual(old.problems, [
			"CONTEXTFOLD_FOLD_STEP is deprecated; rename it CONTEXTFOLD_STEP (read this time)",
			"CONTEXTFOLD_FOLD_FLOOR is deprecated; rename it CONTEXTFOLD_FLOOR (read this time)",
		]);
		const both = resolveConfig({}, { CONTEXTFOLD_FOLD_STEP: "0.2", CONTEXTFOLD_STEP: "0.3" });
		assert.equal(both.config.step, 0.3);
		assert.deepEqual(both.variables, { step: "CONTEXTFOLD_STEP" });
		assert.deepEqual(both.problems, [
			"CONTEXTFOLD_FOLD_STEP is deprecated; rename it CONTEXTFOLD_STEP (CONTEXTFOLD_STEP wins)",
		]);
		for (const [name, key] of Object.entries(DEPRECATED_VARIABLES)) {
			assert.ok(!KNOBS.some((knob) => knob.env === name), `${name} is no current variable`);
			assert.ok(
				KNOBS.some((knob) => knob.key === key),
				`${name} sets a knob`,
			);
		}
	});

	it("reads 0.5.1's cold-prompt variable as confirmColdSend, and names its retired ones as no longer read", () => {
		const cold = resolveConfig({}, { CONTEXTFOLD_CONFIRM_COLD_PROMPT: "on" });
		assert.equal(cold.config.confirmColdSend, true);
		assert.deepEqual(cold.problems, [
			"CONTEXTFOLD_CONFIRM_COLD_PROMPT is deprecated; rename it CONTEXTFOLD_CONFIRM_COLD_SEND (read this time)",
		]);
		const retired = resolveConfig(
			{},
			{
				CONTEXTFOLD_RECON_TOKENS: "18000",
				CONTEXTFOLD_DUMP: "/tmp/view.json",
				CONTEXTFOLD_SPOOL_RETAIN_DAYS: "3",
				CONTEXTFOLD_L0_TOKENS: "1",
			},
		);
		assert.deepEqual(retired.config, resolveConfig({}, {}).config, "they set nothing");
		assert.deepEqual(
			retired.problems.map((p) => p.split(" is no longer read")[0]),
			["CONTEXTFOLD_RECON_TOKENS", "CONTEXTFOLD_DUMP", "CONTEXTFOLD_SPOOL_RETAIN_DAYS", "CONTEXTFOLD_L0_TOKENS"],
		);
		for (const problem of retired.problems) assert.match(problem, /is no longer read \(.+\); ignoring it$/);
	});

	it("reads 0.5.1's settings file copied into the section: its knobs under their names here, its retired keys named", () => {
		// A real 0.5.1 context-fold.json, verbatim.
		const old = {
			foldStep: 0.1,
			confirmColdPrompt: "on",
			compact: "det",
			tail: 5000,
			reconTokens: 12000,
			providerCacheIdleMinutes: { anthropic: 10 },
		};
		const read = resolveConfig(old, {});
		assert.equal(read.config.step, 0.1);
		assert.equal(read.config.confirmColdSend, true);
		assert.equal(read.config.compact, "fold");
		assert.equal(read.config.tail, 5000);
		assert.equal(read.sources.step, "saved");
		assert.deepEqual(read.problems, [
			"settings context-fold.reconTokens is no longer read (0.5.1's compaction budget; the summary sizes itself to the window); ignoring it",
			"settings context-fold.providerCacheIdleMinutes is no longer read (0.5.1's idle minutes by provider; cacheIdleMinutes holds for every provider); ignoring it",
			"settings context-fold.foldStep is 0.5.1's name; rename it step (read this time)",
			"settings context-fold.confirmColdPrompt is 0.5.1's name; rename it confirmColdSend (read this time)",
			'settings context-fold.compact="det" is 0.5.1\'s word for "fold"; read as that',
		]);
		const both = resolveConfig({ foldStep: 0.1, step: 0.3 }, { CONTEXTFOLD_COMPACT: "DET" });
		assert.equal(both.config.step, 0.3);
		assert.equal(both.config.compact, "fold");
		assert.deepEqual(both.problems, [
			"settings context-fold.foldStep is 0.5.1's name; rename it step (step wins)",
			'CONTEXTFOLD_COMPACT="DET" is 0.5.1\'s word for "fold"; read as that',
		]);
		const bad = resolveConfig({ foldStep: 7 }, {});
		assert.equal(bad.config.step, resolveConfig({}, {}).config.step);
		assert.match(bad.problems.at(-1) ?? "", /^settings context-fold\.foldStep=7 .*; using /);
	});

	it("suggests the knob a slip of a key or two meant, and nothing for a name far from every knob", () => {
		assert.equal(nearestKnob("CONTEXTFOLD_HOT_TIAL")?.key, "hotTail");
		assert.equal(nearestKnob("CONTEXTFOLD_BACKSTOP_ATT")?.key, "backstopAt");
		assert.equal(nearestKnob("minEvnt")?.key, "minEvent");
		assert.equal(nearestKnob("polcy")?.key, "policy");
		assert.equal(nearestKnob("CONTEXTFOLD_SESSIONS"), undefined);
		assert.equal(nearestKnob("tails")?.key, "tail");
		assert.equal(nearestKnob("verbose"), undefined);
		const { problems } = resolveConfig({ useWindw: 4 }, { CONTEXTFOLD_COLD_TALE: "2000" });
		assert.deepEqual(problems, [
			"settings context-fold.useWindw is not a context-fold setting; ignoring it (did you mean useWindow?)",
			"CONTEXTFOLD_COLD_TALE is not a context-fold variable; ignoring it (did you mean CONTEXTFOLD_COLD_TAIL?)",
		]);
	});

	it("accepts percentages for fractions", () => {
		assert.equal(resolveConfig({}, { CONTEXTFOLD_FOLD_AT: "45%" }).config.foldAt, 0.45);
		// 33.3 / 100 is 0.33299999999999996 in floating point: the value saved is the one typed.
		assert.equal(resolveConfig({ foldAt: "33.3%" }, {}).config.foldAt, 0.333);
		assert.equal(resolveConfig({ floor: "1.1%" }, {}).config.floor, 0.011);
		assert.equal(resolveConfig({ step: "12.345678%" }, {}).config.step, 0.12345678);
	});

	it("reports a bad value and keeps the previous one", () => {
		const { config, problems } = resolveConfig(
			{ foldAt: 2, tail: -1 },
			{ CONTEXTFOLD_STEP: "lots", CONTEXTFOLD_TAIL: "1.5", CONTEXTFOLD_COMPACT: "llm" },
		);
		assert.equal(config.foldAt, DEFAULT_CONFIG.foldAt);
		assert.equal(config.step, DEFAULT_CONFIG.step);
		assert.equal(config.tail, DEFAULT_CONFIG.tail);
		assert.equal(config.compact, "fold");
		assert.equal(problems.length, 5);
		assert.match(problems.join("\n"), /CONTEXTFOLD_STEP="lots" is not a valid fraction/);
	});

	it("takes a variable set to nothing as unset, but where nothing is the knob's value", () => {
		const env = {
			CONTEXTFOLD_HOT_TAIL: "",
			CONTEXTFOLD_POLICY: " ",
			CONTEXTFOLD_CACHE_IDLE_MINUTES: "",
			CONTEXTFOLD_CACHE_TTL_BY_PROVIDER: "",
		};
		const { config, sources, problems } = resolveConfig(
			{ hotTail: 9000, policy: "economic", cacheTtlByProvider: "anthropic=600" },
			env,
		);
		assert.deepEqual(problems, []);
		assert.equal(config.hotTail, 9000);
		assert.equal(config.policy, "economic");
		assert.equal(config.cacheIdleMinutes, DEFAULT_CONFIG.cacheIdleMinutes);
		assert.equal(sources.hotTail, "saved");
		// No per-provider lifetimes is a value of cacheTtlByProvider: the variable sets it.
		assert.equal(config.cacheTtlByProvider, "");
		assert.equal(sources.cacheTtlByProvider, "environment");
	});

	it("a refused saved value keeps the valid value of the file Pi merged it over, naming both files", () => {
		const origin: SavedOrigin = (key) =>
			key === "hotTail"
				? { file: "/p/.pi/settings.json", beneath: { file: "/g/settings.json", value: 5000 } }
				: key === "coldTail"
					? { file: "/p/.pi/settings.json", beneath: { file: "/g/settings.json", value: "also bad" } }
					: undefined;
		const { config, sources, problems } = resolveConfig({ hotTail: "bad", coldTail: "worse", tail: -1 }, {}, origin);
		assert.equal(config.hotTail, 5000);
		assert.equal(sources.hotTail, "saved");
		assert.equal(
			config.coldTail,
			DEFAULT_CONFIG.coldTail,
			"a value beneath that is refused too is not used, and named",
		);
		assert.equal(config.tail, DEFAULT_CONFIG.tail);
		assert.deepEqual(
			problems.map((p) => p.replace(/ is not .*; using /, " … using ")),
			[
				"settings context-fold.tail=-1 … using 20000",
				'settings context-fold.hotTail="bad" in /p/.pi/settings.json … using 5000 (/g/settings.json)',
				'settings context-fold.coldTail="worse" in /p/.pi/settings.json … using 1000',
				'settings context-fold.coldTail="also bad" in /g/settings.json … using 1000',
			],
		);
		const overridden = resolveConfig({ hotTail: "bad" }, { CONTEXTFOLD_HOT_TAIL: "7000" }, origin);
		assert.equal(overridden.config.hotTail, 7000);
		assert.match(overridden.problems[0], /; using 7000$/, "a variable over it is what is used, and no file is named");
	});
});

describe("settings footguns", () => {
	it("reads token counts only from plain decimal integer text or non-negative JSON integers", () => {
		for (const text of ["0x10", "1e4", "-0", "+5000", "5_000", "5000.0", "99999999999999999999"]) {
			const { config, problems } = resolveConfig({}, { CONTEXTFOLD_BUDGET_CAP: text });
			assert.equal(config.budgetCap, DEFAULT_CONFIG.budgetCap, text);
			assert.equal(problems.length, 1, text);
		}
		assert.equal(resolveConfig({}, { CONTEXTFOLD_BUDGET_CAP: " 90000 " }).config.budgetCap, 90_000);
		// Past 2^53 a whole number is no longer the one typed.
		for (const value of [-0, -1, 1.5, 1e20, 2 ** 53]) {
			const { config, problems } = resolveConfig({ budgetCap: value }, {});
			assert.equal(config.budgetCap, DEFAULT_CONFIG.budgetCap, String(value));
			assert.equal(problems.length, 1, String(value));
		}
		assert.deepEqual(resolveConfig({ budgetCap: 90_000 }, {}).problems, []);
		assert.deepEqual(resolveConfig({ hotTail: Number.MAX_SAFE_INTEGER }, {}).problems, []);
		assert.equal(resolveConfig({ hotTail: 1e20 }, {}).problems.length, 1);
	});

	it("reads fractions only from plain decimal text", () => {
		for (const text of ["0x1", "1e-1", "0b1", "45%%"]) {
			const { config, problems } = resolveConfig({}, { CONTEXTFOLD_FOLD_AT: text });
			assert.equal(config.foldAt, DEFAULT_CONFIG.foldAt, text);
			assert.equal(problems.length, 1, text);
		}
		for (const [text, value] of [
			["0.5", 0.5],
			[".5", 0.5],
			["1", 1],
			["45 %", 0.45],
		] as const) {
			assert.equal(resolveConfig({}, { CONTEXTFOLD_FOLD_AT: text }).config.foldAt, value, text);
		}
	});

	it("a refused value names what is used instead: the profile's default, the model's lifetime", () => {
		const { config, problems } = resolveConfig({ policy: "economic", hotTail: "lots", cacheTtlSeconds: 0 }, {});
		assert.equal(config.hotTail, 7500);
		assert.deepEqual(problems, [
			"settings context-fold.cacheTtlSeconds=0 is not a valid number of seconds (a whole number of at least 1); using the model's own lifetime where Pi knows it, else 300",
			'settings context-fold.hotTail="lots" is not a valid token count (a whole number of at least 1000); using 7500',
		]);
		assert.deepEqual(resolveConfig({ hotTail: -1 }, { CONTEXTFOLD_HOT_TAIL: "5000" }).problems, [
			"settings context-fold.hotTail=-1 is not a valid token count (a whole number of at least 1000); using 5000",
		]);
	});

	it("reads the economic policy's sizes as token counts, not shares of the window", () => {
		const { config, problems } = resolveConfig(
			{ foldFrom: 0.1, minEvent: "8%" },
			{ CONTEXTFOLD_BACKSTOP_AT: "30000" },
		);
		assert.equal(config.foldFrom, DEFAULT_CONFIG.foldFrom);
		assert.equal(config.minEvent, DEFAULT_CONFIG.minEvent);
		assert.equal(config.backstopAt, 30_000);
		assert.deepEqual(problems, [
			"settings context-fold.foldFrom=0.1 is not a valid token count (a whole number of at least 0); using 14000",
			'settings context-fold.minEvent="8%" is not a valid token count (a whole number of at least 0); using 14000',
		]);
	});

	it("gives minEvent its profile's default: 14000 under working-set, 11200 under economic, unless set", () => {
		assert.equal(resolveConfig({}, {}).config.minEvent, 14_000);
		const economic = resolveConfig({ policy: "economic" }, {});
		assert.equal(economic.config.minEvent, 11_200);
		assert.equal(economic.sources.minEvent, "default");
		assert.equal(resolveConfig({}, { CONTEXTFOLD_POLICY: "economic" }).config.minEvent, 11_200);
		assert.equal(resolveConfig({ policy: "economic", minEvent: 9000 }, {}).config.minEvent, 9000);
		assert.equal(resolveConfig({ minEvent: 9000 }, {}).config.minEvent, 9000);
	});

	it("reads Pi's reserveTokens as Pi does (model override, setting, default), none while its compaction is off", () => {
		assert.equal(reserveOf(undefined), 16_384);
		assert.equal(reserveOf({ reserveTokens: 8_000 }), 8_000);
		const overrides = { reserveTokens: 8_000, modelOverrides: { "p/small": { reserveTokens: 2_000 } } };
		assert.equal(reserveOf(overrides, "p/small"), 2_000);
		assert.equal(reserveOf(overrides, "p/other"), 8_000);
		assert.equal(reserveOf({ reserveTokens: -1 }), 16_384, "a value Pi would reject counts as unset");
		assert.equal(reserveOf({ enabled: false, reserveTokens: 8_000 }), undefined);
		assert.equal(reserveOf({ reserveTokens: 2.5 }), 16_384, "a fraction is not a token count");
		assert.equal(reserveOf({ reserveTokens: 8_000, modelOverrides: "p/small" }, "p/small"), 8_000);
		assert.equal(reserveOf({ reserveTokens: 8_000, modelOverrides: { "p/small": 4 } }, "p/small"), 8_000);
		assert.equal(reserveOf("compaction", "p/small"), 16_384);
	});

	it("warns once about a section that is not an object and uses the defaults", () => {
		for (const section of [null, [], ["foldAt"], "foldAt=0.5", 5, true]) {
			const { config, problems } = resolveConfig(section, {});
			assert.deepEqual(config, { ...DEFAULT_CONFIG }, JSON.stringify(section));
			assert.deepEqual(problems, ["settings context-fold must be an object; ignoring it"], JSON.stringify(section));
		}
		assert.deepEqual(resolveConfig(undefined, {}).problems, []);
	});

	it("reads, under a section that is no object (a project's `false`), the knobs the settings.json beneath it sets", () => {
		// The files as savedOrigin reads them: the project's section is `false`, the global one an object.
		const global: Record<string, unknown> = { policy: "economic", cacheIdleMinutes: 0, foldStep: 0.2 };
		const origin = (key?: string) =>
			key === undefined || global[key] === undefined
				? undefined
				: { file: "/home/u/.pi/agent/settings.json", value: global[key] };
		const { config, problems } = resolveConfig(false, {}, origin);
		assert.equal(config.policy, "economic");
		assert.equal(config.cacheIdleMinutes, 0);
		assert.equal(config.step, 0.2, "0.5.1's name beneath it is read too");
		assert.equal(
			problems[0],
			"settings context-fold must be an object; ignoring it, and reading the knobs the settings.json beneath it sets",
		);
		assert.deepEqual(resolveConfig(false, {}, () => undefined).config, { ...DEFAULT_CONFIG });
	});

	it("names the settings.json whose section is no object, read beneath as Pi merges them", () => {
		const dir = mkdtempSync(join(tmpdir(), "cf-origin-"));
		try {
			const global = join(dir, "settings.json");
			const project = join(dir, "project-settings.json");
			writeFileSync(global, JSON.stringify({ "context-fold": { policy: "economic" } }));
			writeFileSync(project, JSON.stringify({ theme: "dark", "context-fold": false }));
			const origin = savedOrigin(() => ({ global, project }));
			assert.deepEqual(origin(), { file: project });
			const { config, problems } = resolveConfig(false, {}, origin);
			assert.equal(config.policy, "economic", "the global file's knob is read beneath");
			assert.equal(
				problems[0],
				`settings context-fold must be an object (in ${project}); ignoring it, and reading the knobs the settings.json beneath it sets`,
			);
			// The global file alone, its section a word: named, and nothing beneath.
			writeFileSync(global, JSON.stringify({ "context-fold": "economic" }));
			const alone = resolveConfig(
				"economic",
				{},
				savedOrigin(() => ({ global })),
			);
			assert.deepEqual(alone.problems, [`settings context-fold must be an object (in ${global}); ignoring it`]);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it("reads budgetCap 0 or off as no absolute cap", () => {
		for (const [saved, env] of [
			[{ budgetCap: 0 }, {}],
			[{ budgetCap: "off" }, {}],
			[{}, { CONTEXTFOLD_BUDGET_CAP: "OFF" }],
			[{}, { CONTEXTFOLD_BUDGET_CAP: "0" }],
		] as const) {
			const { config, problems } = resolveConfig(saved, env);
			assert.deepEqual(problems, [], JSON.stringify([saved, env]));
			assert.equal(config.budgetCap, 0, JSON.stringify([saved, env]));
			assert.equal(budgetOf(config, 1_000_000), 750_000);
		}
	});

	it("rejects a tail below 1000 tokens, keeping the previous value", () => {
		for (const tail of [0, 1, 999]) {
			const { config, problems } = resolveConfig({ tail }, {});
			assert.equal(config.tail, DEFAULT_CONFIG.tail, String(tail));
			assert.deepEqual(problems, [
				`settings context-fold.tail=${tail} is not a valid token count (a whole number of at least 1000); using 20000`,
			]);
		}
		const env = resolveConfig({ tail: 5000 }, { CONTEXTFOLD_TAIL: "0" });
		assert.equal(env.config.tail, 5000);
		assert.equal(resolveConfig({ tail: 1000 }, {}).config.tail, 1000);
		assert.equal(resolveConfig({ tail: "off" }, {}).problems.length, 1);
	});

	it("says what each kind of knob accepts, in plain words", () => {
		const { problems } = resolveConfig(
			{ foldAt: "lots", budgetCap: "big", cacheIdleMinutes: -1, useWindow: 2.5, debug: "maybe", compact: "llm" },
			{ CONTEXTFOLD_TAIL: "1.5" },
		);
		assert.deepEqual(problems, [
			'settings context-fold.foldAt="lots" is not a valid fraction (a number in (0, 1] or a percentage such as 45%); using 0.45',
			'settings context-fold.budgetCap="big" is not a valid token count (a whole number, or "off"); using 200000',
			'CONTEXTFOLD_TAIL="1.5" is not a valid token count (a whole number of at least 1000); using 20000',
			'settings context-fold.cacheIdleMinutes=-1 is not a valid number of minutes (a whole number, or "auto" or "off"); using "auto"',
			"settings context-fold.useWindow=2.5 is not a valid number of messages (a whole number of at least 0); using 8",
			'settings context-fold.debug="maybe" is not true or false (also yes/no, on/off, 1/0); using false',
			'settings context-fold.compact="llm" is not fold or native; using "fold"',
		]);
	});
});

describe("unknown settings keys", () => {
	it("names each unknown key once, suggests the knob a miscased key meant, and keeps the known ones", () => {
		const { config, problems } = resolveConfig({ foldat: 0.5, tail: 30_000, verbose: true }, {});
		assert.equal(config.foldAt, DEFAULT_CONFIG.foldAt);
		assert.equal(config.tail, 30_000);
		assert.deepEqual(problems, [
			"settings context-fold.foldat is not a context-fold setting; ignoring it (did you mean foldAt?)",
			`settings context-fold.verbose is not a context-fold setting; ignoring it (known: ${KNOBS.map((k) => k.key).join(", ")})`,
		]);
	});
});

describe("envSwitch", () => {
	it("is off for 0, off, false, no (any case), on for 1, on, true, yes, unset or empty", () => {
		for (const v of ["0", "off", "FALSE", " no "]) assert.deepEqual(envSwitch({ CONTEXTFOLD: v }), { on: false }, v);
		for (const v of [undefined, "1", "on", "Yes", "true", ""])
			assert.deepEqual(envSwitch({ CONTEXTFOLD: v }), { on: true }, String(v));
	});
	it("is off for any other value, saying it was not understood and which values are", () => {
		for (const v of ["disable", "disabled", "none"]) {
			assert.deepEqual(envSwitch({ CONTEXTFOLD: v }), {
				on: false,
				problem: `context-fold: CONTEXTFOLD="${v}" is not understood, so context-fold is off as with CONTEXTFOLD=0 (off: 0, off, false, no; on: 1, on, true, yes, or unset)`,
			});
		}
	});
});
