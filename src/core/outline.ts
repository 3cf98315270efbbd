/**
 * The outline of a code text: the names it declares at top level (functions, classes, types,
 * constants, in the common spellings of TypeScript/JavaScript, Python, Rust and Go) and the names a
 * TypeScript/JavaScript file imports by name, in order of appearance. A folded file read keeps them
 * in its digest, so the model still sees what the file defines and uses and knows which code to
 * recall. Pure: text in, names out.
 */

/** Modifiers a top-level declaration may open with (TypeScript, Rust). */
const MODIFIERS = String.raw`(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?`;
const NAME_PART = String.raw`([A-Za-z_$][\w$]*)`;
/**
 * A top-level declaration, at column 0: a function (`function`, `def`, `fn`, `func`) before its
 * parameters, a class-like type before its body or heritage, a TypeScript type alias or a Go type,
 * a variable before its type or value. What follows the name tells code from prose ("let it run").
 */
const DECLARATION = new RegExp(
	`^${MODIFIERS}(?:` +
		[
			String.raw`(?:function\*?|def|fn|func)\s+${NAME_PART}\s*[(<[]`,
			String.raw`(?:class|interface|enum|struct|trait)\s+${NAME_PART}\s*(?:[{<(:;]|extends\b|implements\b|$)`,
			String.raw`type\s+${NAME_PART}(?:\s*[=<]|\s+(?:struct|interface)\b)`,
			String.raw`(?:const|let|var)\s+${NAME_PART}\s*[=:]`,
		].join("|") +
		")",
);
/** A named import: `import { a, b as c } from …` (type-only imports too). */
const NAMED_IMPORT = /^import\s+(?:type\s+)?\{([^}]*)\}/;
const NAME = /^[A-Za-z_$][\w$]*$/;

/** Limits of an outline: names kept, and characters they may take together. */
export const OUTLINE_LIMITS = { names: 16, chars: 200 } as const;

/** The names `text` declares at top level or imports by name, each once, in order. */
export function outlineNames(text: string): string[] {
	const names = new Set<string>();
	const add = (name: string): void => {
		if (NAME.test(name)) names.add(name);
	};
	for (let start = 0; start < text.length; ) {
		let end = text.indexOf("\n", start);
		if (end < 0) end = text.length;
		const line = text.slice(start, end);
		start = end + 1;
		const head = line.charCodeAt(0);
		// Only column 0 declares at top level: an indented or empty line is skipped unread.
		if (Number.isNaN(head) || head === 32 || head === 9) continue;
		const declared = DECLARATION.exec(line);
		if (declared) {
			add(declared.slice(1).find((name) => name !== undefined) ?? "");
			continue;
		}
		const imported = NAMED_IMPORT.exec(line);
		if (imported) {
			for (const item of imported[1].split(",")) {
				const local = item
					.trim()
					.replace(/^type\s+/, "")
					.split(/\s+as\s+/)
					.pop();
				if (local) add(local);
			}
		}
	}
	return [...names];
}

/**
 * The outline as one digest line, `Names: a, b, c.` (`, …` when some were left out), bounded by
 * OUTLINE_LIMITS; "" when the text declares nothing.
 */
export function outlineLine(text: string): string {
	const names = outlineNames(text);
	const kept: string[] = [];
	let used = 0;
	for (const name of names) {
		if (kept.length >= OUTLINE_LIMITS.names || used + name.length > OUTLINE_LIMITS.chars) break;
		kept.push(name);
		used += name.length + 2;
	}
	if (kept.length === 0) return "";
	return `Names: ${kept.join(", ")}${kept.length < names.length ? ", …" : ""}.`;
}
