/**
 * The strings a long file read repeats most: ranking (most frequent, then first seen), the bounds
 * (a share of the text, at most a fixed size, none below a length), what the rest of the digest
 * already shows left out, which tools' results keep a line, and the digest that carries it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolResultDigest } from "../../src/core/digest.ts";
import { readsFile } from "../../src/core/file-calls.ts";
import { FREQUENT_LIMITS, frequentStringsLine } from "../../src/core/frequent-strings.ts";

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
		const many = Array.from({ length: 6000 }, (_, i) => `value_${i % 3000}`).join(" ");
		const line = frequentStringsLine(many);
		assert.ok(line.length - "Strings: ".length <= FREQUENT_LIMITS.chars);
		assert.ok(line.length > FREQUENT_LIMITS.chars - 40, "fills its bound");
		const short = many.slice(0, FREQUENT_LIMITS.minChars + 10);
		const room = Math.floor(short.length * FREQUENT_LIMITS.share);
		assert.ok(frequentStringsLine(short).length - "Strings: ".length <= room);
	});

	it("leaves out the strings the rest of the digest shows, whole strings only", () => {
		const line = frequentStringsLine(source(800), "Names: this.agent.subscribe, handler1_old");
		assert.ok(!line.includes("this.agent.subscribe"));
		assert.match(line, /^Strings: this\.agent\.waitForIdle, /);
		assert.ok(line.includes(" handler1,"), "a string the digest holds only inside a longer one is not shown");
	});

	it("fills the room the repeated strings leave with those named once, in order", () => {
		const once = Array.from({ length: 2000 }, (_, i) => `keyed_${i}`).join(" ");
		const line = frequentStringsLine(`${once} keyed_7 keyed_9 keyed_9`);
		assert.match(line, /^Strings: keyed_9, keyed_7, keyed_0, keyed_1, keyed_2, /);
	});

	it("reads the text as a terminal shows it: colour codes are no strings, nor do they hide one", () => {
		const log = Array.from(
			{ length: 400 },
			(_, i) => `\x1b[32mPASS\x1b[39m \x1b[1mmaxRetries\x1b[22m honoured in run ${i} (\x1b[33m${i % 50}ms\x1b[39m)`,
		).join("\n");
		assert.equal(frequentStringsLine(log, "First line: \x1b[32mPASS\x1b[39m"), "Strings: maxRetries");
	});

	it("takes no fragment of a name written with letters outside ASCII", () => {
		const json = Array.from(
			{ length: 600 },
			(_, i) => `{"durée_totale": ${i}, "prénom_client": "c${i}", "catégorie_id": 7, "client_id": ${i % 3}}`,
		).join("\n");
		assert.equal(frequentStringsLine(json), "Strings: client_id");
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

	it("does not list again the strings its risk lines show", () => {
		const text = `${source(800)}\n${'\tthrow new Error("quota_exceeded for tenant_42");\n'.repeat(7)}`;
		const read = toolResultDigest({ code: "abcd1234", toolName: "read", text, isError: false });
		assert.match(read, /\nL\d+ ×7: \tthrow new Error\("quota_exceeded for tenant_42"\);/);
		const strings = read.split("\n")[0].slice(read.indexOf("Strings: "));
		assert.ok(!strings.includes("quota_exceeded") && !strings.includes("tenant_42"), strings);
	});
});
