/**
 * src/core must stay pure: it imports nothing outside itself (no packages, no `node:` modules, no
 * adapter code) and touches no clock, randomness, timers, environment or I/O. The scanner parses
 * each file with the TypeScript compiler, so comments and string contents never count, and it is
 * itself tested on synthetic sources so that a broken scanner cannot pass silently.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const CORE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src/core");

/** Globals that read the clock, draw randomness, schedule work, reach the environment or do I/O. */
const FORBIDDEN_GLOBALS = new Set([
	"Date",
	"performance",
	"crypto",
	"process",
	"setTimeout",
	"setInterval",
	"setImmediate",
	"clearTimeout",
	"clearInterval",
	"clearImmediate",
	"queueMicrotask",
	"fetch",
	"XMLHttpRequest",
	"WebSocket",
	"EventSource",
	"navigator",
	"localStorage",
	"sessionStorage",
	"indexedDB",
	"globalThis",
	"global",
	"require",
	"module",
	"exports",
	"__dirname",
	"__filename",
	"Buffer",
	"console",
	"Intl",
	"eval",
	"Function",
	"Deno",
	"Bun",
]);

/** Members that are nondeterministic (randomness, locale) whatever object they hang off. */
const FORBIDDEN_MEMBERS = new Map([
	["random", "Math.random"],
	["toLocaleString", "locale-dependent formatting"],
	["toLocaleDateString", "locale-dependent formatting"],
	["toLocaleTimeString", "locale-dependent formatting"],
	["localeCompare", "locale-dependent comparison"],
]);

/** One purity violation: where, and what. */
interface Violation {
	file: string;
	line: number;
	what: string;
}

/** True if `specifier`, imported from `file`, resolves to a file inside `root`. */
function insideCore(specifier: string, file: string, root: string): boolean {
	if (!specifier.startsWith("./") && !specifier.startsWith("../")) return false;
	const target = path.resolve(path.dirname(file), specifier);
	return target.startsWith(root + path.sep);
}

/** True if `node` is the name slot of a declaration or a member access, not a reference to a global. */
function isNameSlot(node: ts.Identifier): boolean {
	const parent = node.parent;
	if (!parent) return false;
	if (ts.isPropertyAccessExpression(parent) && parent.name === node) return true;
	if (ts.isQualifiedName(parent) && parent.right === node) return true;
	if (
		(ts.isPropertyAssignment(parent) ||
			ts.isPropertyDeclaration(parent) ||
			ts.isPropertySignature(parent) ||
			ts.isMethodDeclaration(parent) ||
			ts.isMethodSignature(parent) ||
			ts.isGetAccessorDeclaration(parent) ||
			ts.isSetAccessorDeclaration(parent) ||
			ts.isEnumMember(parent)) &&
		parent.name === node
	) {
		return true;
	}
	if (ts.isBindingElement(parent) && parent.propertyName === node) return true;
	if ((ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent)) && parent.propertyName === node) return true;
	// local bindings of an import: the import itself is what gets checked
	if (ts.isImportClause(parent) || ts.isNamespaceImport(parent) || ts.isImportEqualsDeclaration(parent)) return true;
	if (ts.isImportSpecifier(parent)) return true;
	if (ts.isLabeledStatement(parent) || ts.isBreakOrContinueStatement(parent)) return true;
	return false;
}

/**
 * Every purity violation in `source`, read as the file `file` under `root`: imports or re-exports
 * from outside `root`, dynamic imports and requires of any non-literal or outside module,
 * `import.meta`, forbidden globals and nondeterministic members.
 */
function scanSource(source: string, file: string, root: string): Violation[] {
	const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
	const found: Violation[] = [];
	const report = (node: ts.Node, what: string) => {
		const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
		found.push({ file: path.relative(root, file), line: line + 1, what });
	};
	const checkSpecifier = (node: ts.Node, spec: ts.Expression | undefined, how: string) => {
		if (!spec || !ts.isStringLiteralLike(spec)) {
			report(node, `${how} of a computed module`);
			return;
		}
		if (!insideCore(spec.text, file, root)) report(node, `${how} of "${spec.text}" (outside src/core)`);
	};
	const visit = (node: ts.Node): void => {
		if (ts.isImportDeclaration(node)) checkSpecifier(node, node.moduleSpecifier, "import");
		else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
			checkSpecifier(node, node.moduleSpecifier, "export-from");
		} else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
			checkSpecifier(node, node.moduleReference.expression, "import-require");
		} else if (ts.isImportTypeNode(node)) {
			const arg = node.argument;
			const lit = ts.isLiteralTypeNode(arg) ? arg.literal : undefined;
			checkSpecifier(node, lit && ts.isStringLiteral(lit) ? lit : undefined, "import type");
		} else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
			checkSpecifier(node, node.arguments[0], "dynamic import");
		} else if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
			report(node, "import.meta");
		} else if (ts.isPropertyAccessExpression(node) && FORBIDDEN_MEMBERS.has(node.name.text)) {
			report(node, FORBIDDEN_MEMBERS.get(node.name.text) ?? "");
		} else if (ts.isElementAccessExpression(node)) {
			const key = node.argumentExpression;
			const what = ts.isStringLiteralLike(key) ? FORBIDDEN_MEMBERS.get(key.text) : undefined;
			if (what) report(node, what);
		} else if (ts.isIdentifier(node) && FORBIDDEN_GLOBALS.has(node.text) && !isNameSlot(node)) {
			report(node, `global ${node.text}`);
		}
		ts.forEachChild(node, visit);
	};
	visit(sf);
	return found;
}

/** Every .ts file under `dir`, recursively, sorted. */
function tsFiles(dir: string): string[] {
	const out: string[] = [];
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) out.push(...tsFiles(full));
		else if (entry.isFile() && entry.name.endsWith(".ts")) out.push(full);
	}
	return out.sort();
}

describe("purity of src/core", () => {
	const files = tsFiles(CORE);

	it("finds the core's files, nested folders included", () => {
		const names = files.map((f) => path.relative(CORE, f));
		for (const expected of ["tokens.ts", "digest.ts", "block.ts", "apply.ts", "view.ts", "policy/risk-lexicon.ts"]) {
			assert.ok(names.includes(expected.split("/").join(path.sep)), expected);
		}
		assert.ok(files.length >= 11, names.join(", "));
	});

	it("imports nothing from outside src/core and uses no clock, randomness, timers, environment or I/O", () => {
		const violations = files.flatMap((file) => scanSource(readFileSync(file, "utf8"), file, CORE));
		assert.deepEqual(
			violations.map((v) => `${v.file}:${v.line}: ${v.what}`),
			[],
		);
	});
});

describe("the purity scanner", () => {
	const file = path.join(CORE, "policy", "synthetic.ts");
	const scan = (source: string) => scanSource(source, file, CORE).map((v) => v.what);

	it("accepts relative imports that stay inside src/core", () => {
		assert.deepEqual(
			scan(
				[
					'import { clip } from "../tokens.ts";',
					'import type { Block } from "../block.ts";',
					'export { riskLines } from "./ledger.ts";',
					'export * from "./fold-ladder.ts";',
					"// a comment naming Date.now(), process.env and node:fs is fine",
					'const s = "Math.random() inside a string is fine";',
					"const record = { process: 1, date: 2 };",
					"const n = record.process + Math.max(1, 2);",
					"const b36 = n.toString(36) + record.constructor.name + record.hasOwnProperty;",
					"function f(window: number) { return window; }",
					"export const x = clip(s, n);",
				].join("\n"),
			),
			[],
		);
	});

	it("rejects imports from outside src/core, node: modules and packages", () => {
		assert.deepEqual(
			scan(
				[
					'import { readFileSync } from "node:fs";',
					'import crypto from "crypto";',
					'import type { AgentMessage } from "@earendil-works/pi-agent-core";',
					'import { x } from "../../adapters/pi/index.ts";',
					'import "../../../outside.ts";',
					'export { y } from "typebox";',
					'export * from "/abs/path.ts";',
					'import z = require("fs");',
					'type T = import("node:path").ParsedPath;',
				].join("\n"),
			),
			[
				'import of "node:fs" (outside src/core)',
				'import of "crypto" (outside src/core)',
				'import of "@earendil-works/pi-agent-core" (outside src/core)',
				'import of "../../adapters/pi/index.ts" (outside src/core)',
				'import of "../../../outside.ts" (outside src/core)',
				'export-from of "typebox" (outside src/core)',
				'export-from of "/abs/path.ts" (outside src/core)',
				'import-require of "fs" (outside src/core)',
				'import type of "node:path" (outside src/core)',
			],
		);
	});

	it("rejects a relative path that climbs out of src/core and back into a look-alike", () => {
		assert.deepEqual(scan('import { a } from "../../core-copy/x.ts";'), [
			'import of "../../core-copy/x.ts" (outside src/core)',
		]);
	});

	it("rejects dynamic imports and require calls", () => {
		assert.deepEqual(
			scan(
				[
					'const fs = await import("node:fs");',
					"const m = await import(name);",
					'const ok = await import("../tokens.ts");',
					'const cp = require("child_process");',
				].join("\n"),
			),
			['dynamic import of "node:fs" (outside src/core)', "dynamic import of a computed module", "global require"],
		);
	});

	it("rejects the clock, randomness, timers, environment and I/O", () => {
		const cases: [string, string][] = [
			["const t = Date.now();", "global Date"],
			["const d = new Date();", "global Date"],
			["const t = performance.now();", "global performance"],
			["const r = Math.random();", "Math.random"],
			['const r = Math["random"]();', "Math.random"],
			["const id = crypto.randomUUID();", "global crypto"],
			["const home = process.env.HOME;", "global process"],
			["setTimeout(() => {}, 1);", "global setTimeout"],
			["setInterval(() => {}, 1);", "global setInterval"],
			['const res = await fetch("http://x");', "global fetch"],
			["const g = globalThis.foo;", "global globalThis"],
			["const g = global.foo;", "global global"],
			['console.log("x");', "global console"],
			["const u = import.meta.url;", "import.meta"],
			["const s = (1234.5).toLocaleString();", "locale-dependent formatting"],
			['const c = "a".localeCompare("b");', "locale-dependent comparison"],
			["const f = new Intl.NumberFormat();", "global Intl"],
		];
		for (const [source, what] of cases) assert.deepEqual(scan(source), [what], source);
	});

	it("catches a violation planted in a real core file", () => {
		const real = path.join(CORE, "tokens.ts");
		const source = readFileSync(real, "utf8");
		assert.deepEqual(scanSource(source, real, CORE), []);
		const planted = `import { x } from "node:os";\n${source}\nexport const now = () => Date.now();\n`;
		assert.deepEqual(
			scanSource(planted, real, CORE).map((v) => v.what),
			['import of "node:os" (outside src/core)', "global Date"],
		);
	});

	it("reports the line of each violation", () => {
		const found = scanSource("const a = 1;\n\nconst t = Date.now();\n", file, CORE);
		assert.deepEqual(found, [{ file: path.join("policy", "synthetic.ts"), line: 3, what: "global Date" }]);
	});
});
