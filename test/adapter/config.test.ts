/**
 * The knob table: defaults < saved settings < environment, value parsing, and the off switch.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_CONFIG, disabledByEnv, KNOBS, resolveConfig } from "../../src/adapters/pi/config.ts";

describe("resolveConfig", () => {
	it("uses the defaults when nothing is set", () => {
		assert.deepEqual(resolveConfig(undefined, {}), { config: { ...DEFAULT_CONFIG }, problems: [] });
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
		const { config, problems } = resolveConfig(
			{ foldAt: 0.5, tail: 1000, debug: true },
			{ CONTEXTFOLD_FOLD_AT: "0.6", CONTEXTFOLD_BUDGET_CAP: "90000", CONTEXTFOLD_COMPACT: "NATIVE" },
		);
		assert.deepEqual(problems, []);
		assert.equal(config.foldAt, 0.6);
		assert.equal(config.tail, 1000);
		assert.equal(config.debug, true);
		assert.equal(config.budgetCap, 90_000);
		assert.equal(config.compact, "native");
	});

	it("reads every documented environment variable", () => {
		const env = {
			CONTEXTFOLD_FOLD_AT: "0.4",
			CONTEXTFOLD_FOLD_STEP: "0.1",
			CONTEXTFOLD_COLD_FOLD_AT: "0.2",
			CONTEXTFOLD_BUDGET_FRACTION: "0.7",
			CONTEXTFOLD_BUDGET_CAP: "150000",
			CONTEXTFOLD_TAIL: "5000",
			CONTEXTFOLD_DEBUG: "1",
		};
		const { config } = resolveConfig({}, env);
		assert.deepEqual(
			[
				config.foldAt,
				config.step,
				config.coldFoldAt,
				config.budgetFraction,
				config.budgetCap,
				config.tail,
				config.debug,
			],
			[0.4, 0.1, 0.2, 0.7, 150_000, 5000, true],
		);
		for (const name of Object.keys(env))
			assert.ok(
				KNOBS.some((k) => k.env === name),
				name,
			);
	});

	it("accepts percentages for fractions", () => {
		assert.equal(resolveConfig({}, { CONTEXTFOLD_FOLD_AT: "45%" }).config.foldAt, 0.45);
	});

	it("reports a bad value and keeps the previous one", () => {
		const { config, problems } = resolveConfig(
			{ foldAt: 2, tail: -1 },
			{ CONTEXTFOLD_FOLD_STEP: "lots", CONTEXTFOLD_TAIL: "1.5", CONTEXTFOLD_COMPACT: "llm" },
		);
		assert.equal(config.foldAt, DEFAULT_CONFIG.foldAt);
		assert.equal(config.step, DEFAULT_CONFIG.step);
		assert.equal(config.tail, DEFAULT_CONFIG.tail);
		assert.equal(config.compact, "fold");
		assert.equal(problems.length, 5);
		assert.match(problems.join("\n"), /CONTEXTFOLD_FOLD_STEP="lots" is not a valid fraction/);
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

describe("disabledByEnv", () => {
	it("is on for 0, off, false, no (any case) and off otherwise", () => {
		for (const v of ["0", "off", "FALSE", " no "]) assert.equal(disabledByEnv({ CONTEXTFOLD: v }), true, v);
		for (const v of [undefined, "1", "on", ""]) assert.equal(disabledByEnv({ CONTEXTFOLD: v }), false, String(v));
	});
});
