/**
 * The profile table (src/core/policy/profiles.ts): every profile the `policy` setting accepts has an
 * entry, and the footer's tail figures follow the profile in force through it: under `working-set` a
 * file the model wrote keeps the hot tail, under `economic` only an unsuperseded tool result does, and
 * `ladder` keeps one tail of every kind.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { resolveConfig } from "../../src/adapters/pi/config.ts";
import { KNOB_SCHEMAS } from "../../src/adapters/pi/settings-schema.ts";
import { tailIds } from "../../src/adapters/pi/ui/status-facts.ts";
import type { PassRow } from "../../src/core/latest-request.ts";
import { PROFILES } from "../../src/core/policy/profiles.ts";

function row(id: string, kind: PassRow["kind"], tokens: number, toolName?: string): PassRow {
	return {
		id,
		kind,
		tokens,
		raw: tokens,
		folded: false,
		eligible: true,
		frozen: false,
		held: false,
		saving: tokens,
		toolName,
	};
}

/** Oldest first: a 2k-token read result, a 2k-token `write` argument, then 1.5k tokens of newer text. */
const ROWS: PassRow[] = [
	row("r:read", "toolResult", 2000, "read"),
	row("a:write", "toolArgs", 2000, "write"),
	row("t:new", "text", 1500),
];

function tailUnder(policy: string): string[] {
	const { config } = resolveConfig({ policy, hotTail: 5000, coldTail: 1000, tail: 3000 }, {});
	return [...tailIds(ROWS, config, 100_000)].sort();
}

describe("profiles", () => {
	test("every profile the policy setting accepts has an entry, and no other", () => {
		const accepted = (KNOB_SCHEMAS.policy.anyOf as { const: string }[]).map((s) => s.const).sort();
		assert.deepEqual(Object.keys(PROFILES).sort(), accepted);
	});

	test("the footer's tail follows the profile in force", () => {
		// hotTail 5000 and coldTail 1000 for the economic profiles, a 3k tail for the ladder.
		assert.deepEqual(
			tailUnder("working-set"),
			["a:write", "r:read", "t:new"],
			"working-set: the written file is hot",
		);
		assert.deepEqual(tailUnder("economic"), ["r:read", "t:new"], "economic: the argument keeps only the cold tail");
		assert.deepEqual(tailUnder("ladder"), ["a:write", "t:new"], "ladder: one 3k tail of every kind");
	});
});
