/**
 * The outline of a code text: declared and imported names across the languages it knows, prose
 * that only looks like code left out, order, bounds, and the digest line that carries it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolResultDigest } from "../../src/core/digest.ts";
import { OUTLINE_LIMITS, outlineLine, outlineNames } from "../../src/core/outline.ts";

const TS = [
	"/**",
	" * Lays out a chart.",
	" */",
	'import { extent } from "./extent.ts";',
	'import { buildGrid, type Grid, type Rect as Box } from "./grid.ts";',
	'import type { ChartSpec } from "../spec.ts";',
	"export const CHAR_W = 8;",
	"export interface Bar {",
	"\tx: number;",
	"}",
	"export type Layout = { bars: Bar[] };",
	"export function layoutChart(spec: ChartSpec): Layout {",
	"\tconst inner = 1;",
	"\tfunction nested() {}",
	"\treturn { bars: [] };",
	"}",
	"export default class Renderer extends Base {}",
	"export abstract class Shape<T> {}",
	"async function* rows() {}",
	"let counter: number;",
	"enum Color { Red }",
].join("\n");

describe("outlineNames", () => {
	it("lists a TypeScript file's top-level declarations and named imports in order, each once", () => {
		assert.deepEqual(outlineNames(TS), [
			"extent",
			"buildGrid",
			"Grid",
			"Box",
			"ChartSpec",
			"CHAR_W",
			"Bar",
			"Layout",
			"layoutChart",
			"Renderer",
			"Shape",
			"rows",
			"counter",
			"Color",
		]);
	});

	it("skips indented declarations: only column 0 is top level", () => {
		const names = outlineNames(TS);
		assert.ok(!names.includes("inner"));
		assert.ok(!names.includes("nested"));
	});

	it("reads Python, Rust and Go declarations", () => {
		const python = "class Parser(Base):\n    def inner(self):\n        pass\ndef parse_all(text):\n    pass\n";
		assert.deepEqual(outlineNames(python), ["Parser", "parse_all"]);
		const rust =
			"pub struct Point {\n    x: i32,\n}\npub(crate) fn distance<T>(a: T) {}\nstruct Unit;\ntrait Shape {}\n";
		assert.deepEqual(outlineNames(rust), ["Point", "distance", "Unit", "Shape"]);
		const go = "type Server struct {\n}\nfunc NewServer() *Server {\n}\nfunc (s *Server) Run() {}\n";
		assert.deepEqual(outlineNames(go), ["Server", "NewServer"]);
	});

	it("leaves out prose that opens with a keyword", () => {
		const log =
			"let it run for a while\ntype check passed\nclass of 2024 results\nconst ant colony\nfunction as expected\n";
		assert.deepEqual(outlineNames(log), []);
		assert.deepEqual(outlineNames(""), []);
		assert.deepEqual(outlineNames("> npm test\n\n✔ 12 passed"), []);
	});

	it("keeps a name that follows a destructuring or anonymous form out", () => {
		assert.deepEqual(outlineNames("const { a, b } = pair;\nexport default function () {}\n"), []);
	});
});

describe("outlineLine", () => {
	it("is one line of names, or nothing when the text declares none", () => {
		assert.equal(outlineLine("export function a1() {}\nexport const b2 = 1;\n"), "Names: a1, b2.");
		assert.equal(outlineLine("plain text\n"), "");
	});

	it("keeps at most OUTLINE_LIMITS.names names and OUTLINE_LIMITS.chars characters, marking the rest", () => {
		const many = Array.from({ length: 40 }, (_, i) => `export const value${i} = ${i};`).join("\n");
		const line = outlineLine(many);
		const kept = line
			.replace(/^Names: /, "")
			.replace(/, …\.$/, "")
			.split(", ");
		assert.equal(kept.length, OUTLINE_LIMITS.names);
		assert.ok(line.endsWith(", …."));
		const long = Array.from({ length: 10 }, (_, i) => `export const ${"n".repeat(60)}${i} = ${i};`).join("\n");
		const longLine = outlineLine(long);
		assert.ok(longLine.length <= "Names: ".length + OUTLINE_LIMITS.chars + ", ….".length);
		assert.ok(longLine.endsWith(", …."));
	});
});

describe("tool-result digest with an outline", () => {
	it("carries the names after the first line and before the error lines", () => {
		const text = `${TS}\nthrow new Error("boom");\n`;
		const out = toolResultDigest({ code: "abc12345", toolName: "read", text, isError: false });
		const firstLine = out.indexOf("First line: /**");
		const names = out.indexOf(" Names: extent, buildGrid,");
		assert.ok(firstLine > 0 && names > firstLine, out);
		const error = out.indexOf("\nL22: ");
		assert.ok(error > names, out);
	});

	it("is the same bytes for the same block", () => {
		const a = toolResultDigest({ code: "abc12345", toolName: "read", text: TS, isError: false });
		const b = toolResultDigest({ code: "abc12345", toolName: "read", text: TS, isError: false });
		assert.equal(a, b);
	});
});
