/**
 * The strings a long file read repeats most: ranking (most frequent, then first seen), the bounds
 * (a share of the text, at most a fixed size, none below a length), what the rest of the digest
 * already shows left out, which tools' results keep a line, and the digest that carries it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolResultDigest } from "../../src/core/digest.ts";
import { distinctiveCounts } from "../../src/core/distinctive.ts";
import { FREQUENT_LIMITS, frequentStringsLine, readsFile } from "../../src/core/frequent-strings.ts";

/** A source file of `lines` lines, calling `this.agent.subscribe` on every line, `waitForIdle()` on every third. */
function source(lines: number): string {
	const out = ["import { Agent } from './agent_core';"];
	for (let i = 1; i < lines; i++) {
		out.push(
			`\tthis.agent.subscribe(handler${i % 7}); ${i % 3 === 0 ? "await this.agent.waitForIdle();" : "// plain words"}`,
		);
	}
	return out.join("\n");
}

describe("distinctiveCounts", () => {
	it("counts each distinctive string, repeats included, in order of first occurrence", () => {
		const counts = distinctiveCounts("call user_id then user_id, and maxRetries; user_id. plain words");
		assert.deepEqual(
			[...counts],
			[
				["user_id", 3],
				["maxRetries", 1],
			],
		);
	});
});

describe("frequentStringsLine", () => {
	it("lists the most frequent strings first, and those alike in order of first occurrence", () => {
		const line = frequentStringsLine(source(800));
		assert.match(line, /^Strings: this\.agent\.subscribe, /);
		const listed = line.slice("Strings: ".length).split(", ");
		assert.ok(listed.indexOf("this.agent.waitForIdle") > 0, "the second most frequent comes next");
		assert.ok(listed.indexOf("handler1") < listed.indexOf("handler2"), "equal counts keep the order seen");
	});

	it("keeps none for a text under its least length", () => {
		const text = source(800);
		assert.ok(text.length >= FREQUENT_LIMITS.minChars);
		assert.equal(frequentStringsLine(text.slice(0, FREQUENT_LIMITS.minChars - 1)), "");
		assert.equal(frequentStringsLine("x".repeat(FREQUENT_LIMITS.minChars)), "", "nothing distinctive in it");
	});

	it("takes at most its share of the text, and never more than its bound", () => {
		const many = Array.from({ length: 6000 }, (_, i) => `value_${i}`).join(" ");
		const line = frequentStringsLine(many);
		assert.ok(line.length - "Strings: ".length <= FREQUENT_LIMITS.chars);
		assert.ok(line.length > FREQUENT_LIMITS.chars - 40, "fills its bound");
		const short = many.slice(0, FREQUENT_LIMITS.minChars + 10);
		const room = Math.floor(short.length * FREQUENT_LIMITS.share);
		assert.ok(frequentStringsLine(short).length - "Strings: ".length <= room);
	});

	it("leaves out what the rest of the digest shows", () => {
		const line = frequentStringsLine(source(800), "Names: this.agent.subscribe");
		assert.ok(!line.includes("this.agent.subscribe"));
		assert.match(line, /^Strings: this\.agent\.waitForIdle, /);
	});
});

describe("readsFile", () => {
	it("is true for the tools whose result is a file's text, in any case", () => {
		assert.deepEqual(["read", "Read", "read_file", "bash", "grep", "ctx_read_more"].map(readsFile), [
			true,
			true,
			true,
			false,
			false,
			false,
		]);
	});
});

describe("a folded file read's digest", () => {
	it("keeps the strings the file repeats most after its outline; a shell result as long keeps none", () => {
		const text = source(800);
		const read = toolResultDigest({ code: "abcd1234", toolName: "read", text, isError: false });
		assert.match(read, /Names: Agent\. Strings: this\.agent\.subscribe, this\.agent\.waitForIdle, /);
		assert.ok(read.length < text.length / 10, "still a small share of the file");
		const shell = toolResultDigest({ code: "abcd1234", toolName: "bash", text, isError: false });
		assert.ok(!shell.includes("Strings:"));
	});
});
