/**
 * The settings schema, defined once: the checked-in docs/settings.schema.json is what the schema
 * produces, the file really validates settings.json objects (compiled from the parsed file, as an
 * editor would read it), it agrees with resolveConfig, and Pi's own settings schema lets the
 * section through.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { Compile } from "typebox/compile";
import { DEFAULT_CONFIG, KNOBS, resolveConfig } from "../../src/adapters/pi/config.ts";
import { SETTINGS_SECTION, settingsSchemaText } from "../../src/adapters/pi/settings-schema.ts";
import { DEFAULT_LADDER } from "../../src/core/contract.ts";

const FILE = new URL("../../docs/settings.schema.json", import.meta.url);
const fileText = readFileSync(FILE, "utf8");
const fileSchema = Compile(JSON.parse(fileText));

/** Settings objects the file must accept: a section with canonical values beside Pi's own keys. */
const VALID: readonly Record<string, unknown>[] = [
	{},
	{ defaultModel: "x", compaction: { enabled: true } },
	{ $schema: "./settings.schema.json", [SETTINGS_SECTION]: {} },
	{ [SETTINGS_SECTION]: { foldAt: 0.5, tail: 30_000 } },
	{ [SETTINGS_SECTION]: { budgetCap: "off", tail: 1000 } },
	{ [SETTINGS_SECTION]: { budgetCap: 0 } },
	{
		theme: "dark",
		[SETTINGS_SECTION]: {
			foldAt: 1,
			coldFoldAt: 0.2,
			step: 0.1,
			budgetFraction: 0.7,
			budgetCap: 150_000,
			floor: 0.01,
			tail: 5000,
			debug: true,
			compact: "native",
		},
	},
];

/** Sections the file rejects and resolveConfig reports, each for one reason. */
const REJECTED: readonly Record<string, unknown>[] = [
	{ foldAt: 0 },
	{ foldAt: 1.5 },
	{ tail: -1 },
	{ tail: 1.5 },
	{ tail: 999 },
	{ budgetCap: "none" },
	{ debug: "maybe" },
	{ compact: "llm" },
	{ foldat: 0.5 },
];

/** Sections the file rejects (it describes canonical values) that resolveConfig reads tolerantly. */
const TOLERATED: readonly Record<string, unknown>[] = [
	{ foldAt: "45%" },
	{ budgetCap: "200000" },
	{ debug: "yes" },
	{ compact: "NATIVE" },
	{ budgetCap: "OFF" },
];

describe("docs/settings.schema.json", () => {
	it("is what the settings schema produces (run `npm run schema` after changing a knob)", () => {
		assert.equal(fileText, settingsSchemaText());
	});

	it("accepts settings.json objects with a valid section and Pi's own keys", () => {
		for (const settings of VALID) assert.ok(fileSchema.Check(settings), JSON.stringify(settings));
	});

	it("rejects a bad section, naming the offending key", () => {
		for (const section of [...REJECTED, ...TOLERATED, null, [], "fold"]) {
			const settings = { [SETTINGS_SECTION]: section };
			assert.equal(fileSchema.Check(settings), false, JSON.stringify(section));
			const paths = fileSchema.Errors(settings).map((error) => error.instancePath);
			assert.ok(
				paths.some((path) => path.startsWith(`/${SETTINGS_SECTION}`)),
				`${JSON.stringify(section)}: ${paths}`,
			);
		}
	});

	it("agrees with resolveConfig, which also reads tolerant text forms", () => {
		for (const settings of VALID) {
			assert.deepEqual(resolveConfig(settings[SETTINGS_SECTION], {}).problems, [], JSON.stringify(settings));
		}
		for (const section of REJECTED) {
			assert.equal(resolveConfig(section, {}).problems.length, 1, JSON.stringify(section));
		}
		for (const section of TOLERATED)
			assert.deepEqual(resolveConfig(section, {}).problems, [], JSON.stringify(section));
	});

	it("carries every knob's default, meaning and environment variable", () => {
		const section = JSON.parse(fileText).properties[SETTINGS_SECTION];
		assert.deepEqual(Object.keys(section.properties), Object.keys(DEFAULT_CONFIG));
		for (const knob of KNOBS) {
			const property = section.properties[knob.key];
			assert.deepEqual(property.default, DEFAULT_CONFIG[knob.key], knob.key);
			assert.equal(property["x-env"], knob.env, knob.key);
			assert.match(property.description, new RegExp(`Environment: ${knob.env}\\.$`), knob.key);
		}
		assert.equal(new Set(KNOBS.map((knob) => knob.env)).size, KNOBS.length, "one variable per knob");
	});
});

describe("the defaults", () => {
	it("are the ladder's from core, and each passes its own schema", () => {
		for (const key of Object.keys(DEFAULT_LADDER) as (keyof typeof DEFAULT_LADDER)[]) {
			assert.equal(DEFAULT_CONFIG[key], DEFAULT_LADDER[key], key);
		}
		assert.ok(fileSchema.Check({ [SETTINGS_SECTION]: { ...DEFAULT_CONFIG } }));
	});
});

describe("Pi's own settings schema", () => {
	it("lets the context-fold section through, so both schemas can apply to one file", () => {
		const piFile = new URL(
			"../../node_modules/@earendil-works/pi-coding-agent/schemas/settings.schema.json",
			import.meta.url,
		);
		const piSchema = JSON.parse(readFileSync(piFile, "utf8"));
		assert.equal(piSchema.properties[SETTINGS_SECTION], undefined);
		const pi = Compile(piSchema);
		for (const settings of VALID) assert.ok(pi.Check(settings), JSON.stringify(settings));
	});
});
