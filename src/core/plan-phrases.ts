/**
 * The phrases a model cites a plan by. A plan the model wrote names its steps in headings and list
 * items of plain words (`## Step 4: Fetch tarballs`, `2. Add the API routes`), which hold no
 * distinctive string (distinctive.ts), so a model working through it ("step 3 is done, fetch
 * tarballs next") would never count as using it. A step's phrase is its first
 * words without numbering, markup or small words (`fetch tarballs`, `add api routes`): a model
 * message whose prose, read the same way, holds one cites the document. Only plans' steps count: in a
 * prose document (Markdown or text; a code file's `#` lines are comments) named as a plan (`PLAN.md`,
 * `todo.md`, `docs/design.md`) every heading and list item, elsewhere only checklist items and
 * numbered steps (`- [ ] …`, `## Step 2: …`): a README's `## Next steps` or `2. Run the tests` are
 * not steps a model works through. Pure.
 */

/** Extensions of the prose documents a plan is written in. */
const PROSE = /\.(md|markdown|mdx|txt|rst|org|adoc)$/i;

/** A file name that says the document is a plan: one of these words in it, whole (`PLAN.md`, `tasks.md`, `api-design.md`). */
const PLAN_NAME =
	/(^|[^a-z])(plans?|todos?|tasks?|roadmap|steps?|checklist|milestones?|progress|specs?|design)([^a-z]|$)/i;

/** A line that is a step of a plan wherever it stands: a checklist item, or a numbered step, phase or stage. */
const PLAN_LINE = /^\s{0,3}(?:[-*+]\s+\[[ xX]\]\s|(?:#{1,6}\s+|\d{1,3}[.)]\s+)?(?:step|phase|stage|milestone)\s+\d)/i;

/** A heading's or a list item's text: `# …`, `1. …`, `1) …`, `- [ ] …`, `* [x] …`. */
const STEP_LINE = /^\s{0,3}(?:#{1,6}\s+|\d{1,3}[.)]\s+|[-*+]\s+\[[ xX]\]\s+)(.+)$/;

/** A step's numbering before its words: `Step 4:`, `Step 4`, `Phase 2 -`, `4.`, `2.1)`, `A.`. */
const NUMBERING =
	/^(?:(?:step|phase|part|stage|task|milestone|section)\s+(?:\d+(?:\.\d+)*|[a-z])\s*[.):\-–—]?|(?:\d+(?:\.\d+)*|[a-z])\s*[.):\-–—])\s*/i;

/** Where a step's name ends: the punctuation that ends a clause. */
const CLAUSE_END = /[.,;:!?()[\]—–]|\s-\s/;

/** Words that say nothing of a step, dropped from phrases and prose alike. */
const SMALL_WORDS = new Set(
	"a an the of to for and or in on at by with from into then now all its it this that be is are".split(" "),
);

/** Characters a phrase needs, to name a step rather than say something common. */
const MIN_CHARS = 8;

/** The words of `text` as a citation reads them: lower case, letters and digits only, small words out. */
function proseWords(text: string): string[] {
	return text
		.toLowerCase()
		.split(/[^\p{L}\p{N}]+/u)
		.filter((w) => w.length > 0 && !SMALL_WORDS.has(w));
}

/**
 * The step phrases of the document at `path` holding `content` (see the file comment): of each
 * step (a heading or list item of a plan by name, else a checklist item or numbered step), the words before the first punctuation that ends a clause, numbering and
 * small words out, the first two (three when two make fewer than MIN_CHARS characters), kept at two
 * words and MIN_CHARS characters or more. Empty for a document that is no plan.
 */
export function stepPhrases(path: string, content: string): string[] {
	if (!PROSE.test(path)) return [];
	const named = PLAN_NAME.test(path.slice(path.lastIndexOf("/") + 1).replace(/\.[^.]*$/, ""));
	const out = new Set<string>();
	for (const line of content.split("\n")) {
		const step = STEP_LINE.exec(line);
		if (!step || !(named || PLAN_LINE.test(line))) continue;
		const words = proseWords(step[1].replace(NUMBERING, "").split(CLAUSE_END)[0]);
		let phrase = words.slice(0, 2).join(" ");
		if (phrase.length < MIN_CHARS) phrase = words.slice(0, 3).join(" ");
		if (words.length >= 2 && phrase.length >= MIN_CHARS) out.add(phrase);
	}
	return [...out];
}

/** True when `prose` (a model message's text, see proseWords) holds `phrase` as whole words. */
export function cites(prose: string, phrase: string): boolean {
	return prose.includes(` ${phrase} `);
}

/** A model message's prose as cites reads it: its words (see proseWords) between single spaces. */
export function citingProse(text: string): string {
	return ` ${proseWords(text).join(" ")} `;
}
