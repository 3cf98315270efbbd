/**
 * The user documents stay readable and linked (issue 25): README.md is the short page a user reads
 * first, under 200 lines and 100 columns, and the rest lives in docs/. Every relative link and image
 * in README.md and docs/*.md must name a file that exists, and a `#fragment` must name a heading of
 * that file (GitHub's heading slugs), so moving a section cannot leave a dead link behind.
 * ARCHITECTURE.md's map names every source file, by its path under src/core/, src/adapters/pi/ or
 * src/replay/, so a new room cannot go unlisted. And the word on the `economic` profile in
 * docs/policy.md, docs/settings.md and its description in the settings schema (its cost in total, its
 * visibility below plain Pi's on average and at worst) is the corpus table's in docs/defaults.md,
 * which `npm run figures` writes. README.md's folded result is the digest of the output it describes.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { resolveConfig } from "../src/adapters/pi/config.ts";
import { toolResultDigest } from "../src/core/digest.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const README_LINES = 200;
const README_COLUMNS = 100;

/** The markdown files checked: README.md and every docs/*.md. */
function documents(): string[] {
	const docs = readdirSync(join(ROOT, "docs"))
		.filter((name) => name.endsWith(".md"))
		.map((name) => join(ROOT, "docs", name));
	return [join(ROOT, "README.md"), ...docs];
}

/** The text outside fenced code blocks, where a `](…)` is not a link. */
function prose(text: string): string {
	return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
}

/** Every link and image target in `text`, inline (`](target)`) or by reference (`[id]: target`). */
function linkTargets(text: string): string[] {
	const body = prose(text);
	const inline = [...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string);
	const reference = [...body.matchAll(/^\[[^\]]+\]:\s+(\S+)/gm)].map((m) => m[1] as string);
	return [...inline, ...reference];
}

/** GitHub's anchor for each heading of `text`: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchors(text: string): Set<string> {
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	for (const match of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
		const slug = (match[1] as string)
			.toLowerCase()
			.replace(/[^\p{L}\p{N}\s_-]/gu, "")
			.replace(/ /g, "-");
		const count = seen.get(slug) ?? 0;
		anchors.add(count === 0 ? slug : `${slug}-${count}`);
		seen.set(slug, count + 1);
	}
	return anchors;
}

/** What is wrong with each relative link of the markdown file at `path`, as readable lines. */
function deadLinks(path: string): string[] {
	const text = readFileSync(path, "utf8");
	const problems: string[] = [];
	for (const target of linkTargets(text)) {
		if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
		const [file = "", fragment] = target.split("#", 2);
		const resolved = file === "" ? path : join(dirname(path), decodeURIComponent(file));
		const where = `${relative(ROOT, path)} → ${target}`;
		if (!existsSync(resolved)) {
			problems.push(`${where}: no such file`);
			continue;
		}
		if (fragment === undefined) continue;
		if (!resolved.endsWith(".md") || statSync(resolved).isDirectory()) continue;
		if (!headingAnchors(readFileSync(resolved, "utf8")).has(fragment)) {
			problems.push(`${where}: no heading with that anchor`);
		}
	}
	return problems;
}

describe("README.md", () => {
	const lines = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\n$/, "").split("\n");

	it(`stays under ${README_LINES} lines`, () => {
		assert.ok(lines.length < README_LINES, `README.md has ${lines.length} lines`);
	});

	it(`has no line wider than ${README_COLUMNS} columns`, () => {
		const wide = lines
			.map((line, i) => ({ line: i + 1, width: [...line].length }))
			.filter((l) => l.width > README_COLUMNS);
		assert.deepEqual(wide, []);
	});

	it("names the idle warning's off switch, cacheIdleMinutes (issue 26)", () => {
		assert.match(lines.join("\n"), /`cacheIdleMinutes` \(`off` silences it\)/);
	});

	it("shows a folded result as the digest of the output it describes reads", () => {
		const shown = /^\{#k3x9a0b2 FOLDED\} bash: error[\s\S]*?(?=\n```)/m.exec(lines.join("\n"))?.[0];
		assert.ok(shown, "README.md shows no folded bash result");
		// The output it describes: `npm test` failing at lines 873 and 880, then Pi's exit line.
		const output = Array.from({ length: 905 }, (_, i) =>
			i === 0
				? "> npm test"
				: i === 872
					? "FAIL test/nest.ts > parses nested blocks"
					: i === 879
						? "Error: expected 3 to equal 4"
						: `  ok ${i + 1} parses case ${i + 1}`,
		);
		const digest = toolResultDigest({
			code: "k3x9a0b2",
			toolName: "bash",
			isError: true,
			text: `${output.join("\n")}\n\nCommand exited with code 1`,
		});
		const sized = (text: string) => text.replace(/~\d+ tokens/, "~N tokens");
		assert.equal(sized(shown), sized(digest));
	});
});

describe("links in README.md and docs/*.md", () => {
	it("finds the documents and their links", () => {
		const files = documents();
		assert.ok(files.length >= 5, `only ${files.length} documents`);
		assert.ok(linkTargets(readFileSync(join(ROOT, "README.md"), "utf8")).length >= 5, "README.md links to docs/");
	});

	for (const path of documents()) {
		it(`${relative(ROOT, path)}: every relative link names an existing file and heading`, () => {
			assert.deepEqual(deadLinks(path), []);
		});
	}

	it("reports a link to a missing file and to a missing heading, and passes good ones", () => {
		const dir = mkdtempSync(join(tmpdir(), "cf-docs-"));
		try {
			const page = join(dir, "page.md");
			writeFileSync(
				page,
				[
					"## The `ladder` profile, and why",
					"[a](no-such-file.md) [b](page.md#no-such-heading) [c](#the-ladder-profile-and-why)",
					"[d](https://example.org/x) [e](page.md)",
					"```",
					"[f](inside-a-fence.md)",
					"```",
					"[g]: gone.md",
				].join("\n"),
			);
			assert.deepEqual(
				deadLinks(page).map((p) => p.replace(/^.*→ /, "")),
				[
					"no-such-file.md: no such file",
					"page.md#no-such-heading: no heading with that anchor",
					"gone.md: no such file",
				],
			);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

/** Every TypeScript file under `dir`, as paths relative to it. */
function sources(dir: string): string[] {
	return readdirSync(dir, { recursive: true, encoding: "utf8" })
		.filter((name) => name.endsWith(".ts") && statSync(join(dir, name)).isFile())
		.map((name) => name.split("\\").join("/"));
}

describe("ARCHITECTURE.md", () => {
	const map = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");

	for (const part of ["src/core", "src/adapters/pi", "src/replay"]) {
		it(`names every file of ${part}/`, () => {
			const files = sources(join(ROOT, part));
			assert.ok(files.length > 5, `only ${files.length} files in ${part}`);
			assert.deepEqual(
				files.filter((file) => !map.includes(file)),
				[],
				"files ARCHITECTURE.md's map does not name",
			);
		});
	}
});

/** The corpus table of docs/defaults.md: per session, plain Pi's visibility and each profile's cell. */
function corpusTable(): { session: string; pi: number; cells: string[] }[] {
	const text = readFileSync(join(ROOT, "docs", "defaults.md"), "utf8");
	const block = /<!-- figures:corpus -->\n([\s\S]*?)<!-- \/figures:corpus -->/.exec(text)?.[1] ?? "";
	return block
		.split("\n")
		.filter((line) => /^\| (project|shared|more)\//.test(line))
		.map((line) => {
			const cells = line.split("|").map((c) => c.trim().replace(/\*/g, ""));
			return { session: cells[1], pi: Number(/, ([\d.]+) %/.exec(cells[2])?.[1]), cells: cells.slice(4, 7) };
		});
}

describe("the economic profile's measured cost and visibility, where its description gives them", () => {
	it("quotes the corpus table's cost and visibility", () => {
		const rows = corpusTable();
		assert.ok(rows.length >= 2, "the corpus table is found");
		const losses = rows.map((r) => r.pi - Number(/\/ ([\d.]+) %/.exec(r.cells[1])?.[1]));
		assert.ok(losses.every(Number.isFinite), JSON.stringify(rows));
		const mean = (losses.reduce((a, b) => a + b, 0) / losses.length).toFixed(1);
		const worst = Math.max(...losses).toFixed(1);
		const defaults = readFileSync(join(ROOT, "docs", "defaults.md"), "utf8");
		const total = /\| all \d+, cost in total \| \| \| \*\*([\d.]+)\*\* \| ([\d.]+) \|/.exec(defaults);
		assert.ok(total, "the table's total row");
		// The profile's own description (the settings schema, the settings table) quotes them too.
		for (const file of ["docs/policy.md", "docs/settings.md", "src/adapters/pi/settings-schema.ts"]) {
			const text = readFileSync(join(ROOT, file), "utf8").replace(/\s+/g, " ");
			assert.ok(
				text.includes(`${total[2]}× plain Pi over the corpus where the default costs ${total[1]}×`),
				`${file}: ${total[0]}`,
			);
			assert.ok(
				text.includes(`${mean} points below plain Pi on average and up to ${worst}`),
				`${file}: ${mean} / ${worst}`,
			);
		}
	});
});

describe("README's table of the default's knobs", () => {
	it("gives each knob the value the settings schema gives it (npm run figures writes it)", () => {
		const schema = JSON.parse(readFileSync(join(ROOT, "docs", "settings.schema.json"), "utf8"));
		const defaults = schema.properties["context-fold"].properties as Record<string, { default?: unknown }>;
		const readme = readFileSync(join(ROOT, "README.md"), "utf8");
		const block = /<!-- figures:defaults -->\n([\s\S]*?)\n<!-- \/figures:defaults -->/.exec(readme)?.[1] ?? "";
		const rows = block.split("\n").slice(2);
		assert.ok(rows.length >= 5, block);
		for (const row of rows) {
			const [, knob, value] = /^\| `(\w+)` \| ([^|]+) \|/.exec(row) ?? [];
			assert.ok(knob, row);
			assert.equal(value.trim(), String(defaults[knob]?.default), `${knob}: README says ${value.trim()}`);
		}
	});
});

describe("settings examples", () => {
	it("every settings.json example in README.md and docs/settings.md parses and sets its knobs without a problem", () => {
		let seen = 0;
		for (const file of ["README.md", "docs/settings.md"]) {
			const text = readFileSync(join(ROOT, file), "utf8");
			for (const [, body] of text.matchAll(/```json\n([\s\S]*?)```/g)) {
				const parsed = JSON.parse(body) as Record<string, unknown>;
				const section = parsed["context-fold"];
				if (section === undefined) continue;
				seen++;
				const { config, problems } = resolveConfig(section, {});
				assert.deepEqual(problems, [], `${file}: ${body}`);
				for (const [key, value] of Object.entries(section as Record<string, unknown>))
					assert.equal((config as unknown as Record<string, unknown>)[key], value, `${file}: ${key}`);
			}
		}
		assert.ok(seen >= 2, `${seen} examples`);
	});
});
