/**
 * The working set from the model's messages (src/core/use-ages.ts): which strings count, how a
 * block's arrival and each later use set its use age, and that a use counts for the newest block
 * holding the strings, and that an edit of a file uses its copy (a read, a part of one, its write). Conversations are built by
 * hand, so each expected age is read off the script.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { distinctiveTokens } from "../../src/core/distinctive.ts";
import { CITED_PLAN_TOKENS, USE_LOOKBACK, useOf } from "../../src/core/use-ages.ts";

let clock = 1_000;

function call(id: string, name: string, args: Record<string, unknown>, text = ""): MessageLike {
	const content: unknown[] = text ? [{ type: "text", text }] : [];
	content.push({ type: "toolCall", id, name, arguments: args });
	return { role: "assistant", content, timestamp: clock++, responseId: `resp_${id}` };
}

function result(id: string, name: string, text: string): MessageLike {
	return { role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], timestamp: clock++ };
}

/** The use age of the result of call `id`. */
function ageOf(messages: MessageLike[], id: string): number {
	const blocks = linearize(messages);
	const index = blocks.findIndex((b) => b.id === `r:${id}`);
	assert.ok(index >= 0, `no result ${id}`);
	return useOf(messages, blocks).ages[index];
}

const FILE = "export function parseHeader(raw_line) {}\nconst MAX_HEADER_SIZE = 8192;\nexport class TokenBucket {}";

describe("distinctiveTokens", () => {
	test("keeps identifiers, paths and numbers of six or more characters, and nothing plain", () => {
		const tokens = distinctiveTokens("see src/cli.ts: parseHeader(raw_line) returned 123456 for the header");
		assert.deepEqual([...tokens].sort(), ["123456", "parseHeader", "raw_line", "src/cli.ts"]);
	});

	test("gives the strings of the plain definition, in order: every run's string, kept when long and distinctive", () => {
		// The definition spelled out: each run of word characters, `.`, `/` and `-`, from its first
		// word character to its last, kept when six characters or more with a digit, `_`, `/`, `.`,
		// `$` or an inner capital.
		const plain = (text: string): string[] => {
			const out: string[] = [];
			for (const [run] of text.matchAll(/[A-Za-z0-9_$./-]+/g)) {
				const token = run.replace(/^[./-]+/, "").replace(/[./-]+$/, "");
				const distinct = /[\d_/.$]/.test(token) || /[a-z][A-Z]/.test(token);
				if (token.length >= 6 && distinct && !out.includes(token)) out.push(token);
			}
			return out;
		};
		const alphabet = [..."aZ9_$./- \n(é", "src/", "parseX", "ab", "abcdef"];
		const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }).map((parts) => parts.join(""));
		fc.assert(
			fc.property(text, (t) => {
				assert.deepEqual([...distinctiveTokens(t)], plain(t));
			}),
			{ numRuns: 2000 },
		);
	});

	test("reads a run of millions of string characters (a minified bundle, a base64 blob) without running out of stack", () => {
		const run = `x1${"a/b-c.d_".repeat(1_000_000)}z`;
		const tokens = distinctiveTokens(`see ${run}. then`);
		assert.deepEqual(
			[...tokens].map((t) => t.length),
			[run.length],
		);
	});
});

/** A prompt, a read of a.ts (c1), then an ls (c2), each call answered. */
function twoCalls(): MessageLike[] {
	return [
		{ role: "user", content: "fix it", timestamp: clock++ },
		call("c1", "read", { path: "a.ts" }),
		result("c1", "read", FILE),
		call("c2", "bash", { command: "ls" }),
		result("c2", "bash", "one two"),
	];
}

describe("useOf", () => {
	test("a result's arrival counts as a use by the first model message that saw it", () => {
		const messages = [...twoCalls(), call("c3", "bash", { command: "pwd" }), result("c3", "bash", "three")];
		// c3's result is not seen yet; c2's was seen by the latest model message; c1's by the one before.
		assert.equal(ageOf(messages, "c3"), 0);
		assert.equal(ageOf(messages, "c2"), 0);
		assert.equal(ageOf(messages, "c1"), 1);
	});

	test("a reply that failed or was aborted is no model message: no model saw what came before it", () => {
		const messages: MessageLike[] = [
			...twoCalls(),
			{ role: "assistant", stopReason: "error", content: [{ type: "text", text: "" }], timestamp: clock++ },
			{ role: "assistant", stopReason: "aborted", content: [{ type: "text", text: "" }], timestamp: clock++ },
		];
		assert.equal(ageOf(messages, "c2"), 0, "not seen yet");
		assert.equal(ageOf(messages, "c1"), 0, "seen by the latest model message, the call of c2");
	});

	test("a model message that repeats one of a block's strings renews it; plain words do not", () => {
		const base: MessageLike[] = [
			{ role: "user", content: "fix it", timestamp: clock++ },
			call("r1", "read", { path: "a.ts" }),
			result("r1", "read", FILE),
		];
		const fillers: MessageLike[] = [];
		for (let i = 0; i < 5; i++)
			fillers.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
		const used = call("e1", "edit", { path: "a.ts", oldText: "parseHeader(raw_line)", newText: "MAX_HEADER_SIZE" });
		// A call that names no file: an edit of a.ts would use the read whatever it repeated (below).
		const plain = call("e2", "bash", { command: "echo header bucket" });
		const after = [result("e1", "edit", "done"), call("z", "bash", { command: "true" }), result("z", "bash", "ok")];
		assert.equal(ageOf([...base, ...fillers, used, ...after], "r1"), 1, "used by the edit");
		const weak = [result("e2", "edit", "done"), call("z2", "bash", { command: "true" }), result("z2", "bash", "ok")];
		assert.equal(ageOf([...base, ...fillers, plain, ...weak], "r1"), 6, "only its arrival (first seen by f0)");
	});

	test("records the strings each block was used for, and none for a block only seen", () => {
		const messages: MessageLike[] = [
			{ role: "user", content: "fix it", timestamp: clock++ },
			call("r1", "read", { path: "a.ts" }),
			result("r1", "read", FILE),
			call("b1", "bash", { command: "ls" }),
			result("b1", "bash", "listing_of_files.txt"),
			call("e1", "edit", { path: "a.ts", oldText: "parseHeader(raw_line)", newText: "MAX_HEADER_SIZE" }),
			result("e1", "edit", "done"),
		];
		const blocks = linearize(messages);
		const { strings } = useOf(messages, blocks);
		const at = (id: string) => blocks.findIndex((b) => b.id === id);
		assert.deepEqual([...(strings.get(at("r:r1")) ?? [])].sort(), ["MAX_HEADER_SIZE", "parseHeader", "raw_line"]);
		assert.equal(strings.get(at("r:b1")), undefined);
	});

	test("a use counts for the newest block that holds the strings", () => {
		const messages: MessageLike[] = [
			{ role: "user", content: "fix it", timestamp: clock++ },
			call("old", "read", { path: "a.ts" }),
			result("old", "read", FILE),
			call("new", "read", { path: "a.ts" }),
			result("new", "read", FILE),
		];
		for (let i = 0; i < 4; i++)
			messages.push(call(`g${i}`, "bash", { command: "true" }), result(`g${i}`, "bash", "ok"));
		messages.push(call("e", "edit", { oldText: "parseHeader raw_line MAX_HEADER_SIZE" }), result("e", "edit", "ok"));
		assert.equal(ageOf(messages, "new"), 0);
		assert.equal(ageOf(messages, "old"), 5, "the older copy keeps only its arrival");
	});

	test("an edit of a file uses its newest read, in any spelling of the path, whatever strings it repeats", () => {
		const messages: MessageLike[] = [
			{ role: "user", content: "fix it", timestamp: clock++ },
			call("old", "read", { path: "src/a.ts" }),
			result("old", "read", FILE),
			call("r", "read", { path: "./src/a.ts", offset: 1, limit: 3 }),
			result("r", "read", FILE),
		];
		for (let i = 0; i < 5; i++)
			messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
		// The previous edit's strings only (as when each edit refines the last): none is the read's.
		messages.push(call("e", "edit", { path: "/repo/src/a.ts", oldText: "limit_2", newText: "limit_3" }));
		messages.push(result("e", "edit", "done"), call("z", "bash", { command: "true" }), result("z", "bash", "ok"));
		assert.equal(ageOf(messages, "r"), 1, "used by the edit");
		assert.equal(ageOf(messages, "old"), 7, "an older read keeps its arrival");
		const blocks = linearize(messages);
		const { strings } = useOf(messages, blocks);
		assert.deepEqual([...(strings.get(blocks.findIndex((b) => b.id === "r:r")) ?? [])], [], "for no string of it");
	});

	test("a write of the file uses its read too; an edit of another file and an edit after a failed read use none", () => {
		const edited = (read: MessageLike, change: MessageLike): MessageLike[] => {
			const messages: MessageLike[] = [{ role: "user", content: "fix it", timestamp: clock++ }];
			messages.push(call("r", "read", { path: "src/a.ts" }), read);
			for (let i = 0; i < 5; i++)
				messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
			messages.push(change, result("e", "edit", "done"), call("z", "bash", { command: "true" }));
			return [...messages, result("z", "bash", "ok")];
		};
		const read = result("r", "read", FILE);
		const failed: MessageLike = { ...result("r", "read", "ENOENT: no such file"), isError: true };
		const editA = call("e", "edit", { path: "src/a.ts", oldText: "limit_2", newText: "limit_3" });
		assert.equal(ageOf(edited(read, editA), "r"), 1, "the edit of a.ts uses it");
		assert.equal(ageOf(edited(read, call("e", "write", { path: "src/a.ts", content: "x" })), "r"), 1, "a write");
		assert.equal(ageOf(edited(read, call("e", "write", { path: "src/b.ts", content: "x" })), "r"), 6, "another file");
		const other = call("e", "edit", { path: "src/ab.ts", oldText: "limit_2", newText: "limit_3" });
		assert.equal(ageOf(edited(read, other), "r"), 6, "another file");
		assert.equal(ageOf(edited(failed, editA), "r"), 6, "a failed read");
	});

	test("an edit names the file a read did in any spelling, and never another file of the same name", () => {
		const ageAfter = (readPath: string, editPath: string): number => {
			const messages: MessageLike[] = [{ role: "user", content: "fix it", timestamp: clock++ }];
			messages.push(call("r", "read", { path: readPath }), result("r", "read", FILE));
			for (let i = 0; i < 5; i++)
				messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
			messages.push(call("e", "edit", { path: editPath, oldText: "limit_2", newText: "limit_3" }));
			messages.push(result("e", "edit", "done"), call("z", "bash", { command: "true" }), result("z", "bash", "ok"));
			return ageOf(messages, "r");
		};
		for (const [read, edit] of [
			["src/a.ts", "./src/a.ts"],
			["src\\a.ts", "src/a.ts"],
			["src/./a.ts", "src/a.ts"],
			["src/lib/../a.ts", "src/a.ts"],
			["/repo/src/a.ts", "src/a.ts"],
			["C:\\repo\\src\\a.ts", "src/a.ts"],
			["~/repo/src/a.ts", "/home/u/repo/src/a.ts"],
			["C:\\repo\\a.ts", "c:\\repo\\a.ts"],
			["src//a.ts", "src/a.ts"],
			["@src/a.ts", "src/a.ts"],
			["file:///repo/a.ts", "/repo/a.ts"],
		])
			assert.equal(ageAfter(read, edit), 1, `${read} and ${edit} are one file`);
		for (const [read, edit] of [
			["src/index.ts", "index.ts"],
			["lib/a.ts", "a.ts"],
			["../a.ts", "a.ts"],
			["/a/src/x.ts", "/b/src/x.ts"],
			["~/repo/a.ts", "~/other/repo/a.ts"],
			["~/a.ts", "/etc/a.ts"],
			["/repo/src/index.ts", "index.ts"],
			["/repo/lib/a.ts", "a.ts"],
		])
			assert.equal(ageAfter(read, edit), 6, `${read} and ${edit} are two files`);
	});

	test("whatever the tools are called: a shell print of a file is its read, a patch or a path edit tool its edit", () => {
		const ageAfter = (read: MessageLike[], change: MessageLike): number => {
			const messages: MessageLike[] = [{ role: "user", content: "fix it", timestamp: clock++ }, ...read];
			for (let i = 0; i < 5; i++)
				messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
			messages.push(change, result("e", "edit", "done"), call("z", "bash", { command: "true" }));
			return ageOf([...messages, result("z", "bash", "ok")], "r");
		};
		const printed = (command: string) => [
			call("r", "bash", { command, workdir: "/repo" }),
			result("r", "bash", FILE),
		];
		const patch = (header: string) =>
			call("e", "apply_patch", { input: `*** Begin Patch\n${header}\n@@\n-limit_2\n+limit_3\n*** End Patch` });
		const update = patch("*** Update File: /repo/src/a.ts");
		for (const command of [
			"sed -n '1,220p' src/a.ts",
			"cat src/a.ts",
			"nl -ba src/a.ts | sed -n '10,40p'",
			"head -n 80 src/a.ts",
			"sed -n 1,80p /repo/src/a.ts",
		])
			assert.equal(ageAfter(printed(command), update), 1, `${command}, then a patch of the file`);
		for (const command of ["cat src/a.ts src/b.ts", "rg -n limit src/a.ts", "cat src/a.ts | grep x", "cat src/b.ts"])
			assert.equal(ageAfter(printed(command), update), 6, `${command} prints no copy of a.ts alone`);
		const read = [call("r", "read", { path: "src/a.ts" }), result("r", "read", FILE)];
		const heredoc = `apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** End Patch\nEOF`;
		for (const change of [
			patch("*** Update File: src/b.ts\n*** Update File: src/a.ts"),
			call("e", "bash", { command: heredoc }),
			call("e", "edit_src", { path: "src/a.ts", input: "limit_3" }),
			call("e", "Edit", { file_path: "/repo/src/a.ts", old_string: "limit_2", new_string: "limit_3" }),
		])
			assert.equal(ageAfter(read, change), 1, `${JSON.stringify(change.content)} edits a.ts`);
		assert.equal(ageAfter(read, patch("*** Update File: src/b.ts")), 6, "a patch of another file");
	});

	test("a shell print is the read only where no read tool read the file, and only of the folder it ran in", () => {
		const messages: MessageLike[] = [{ role: "user", content: "fix it", timestamp: clock++ }];
		messages.push(call("r", "read", { path: "src/a.ts" }), result("r", "read", FILE));
		messages.push(call("h", "bash", { command: "head -n 3 src/a.ts" }), result("h", "bash", "export function"));
		for (let i = 0; i < 5; i++)
			messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
		messages.push(call("e", "edit", { path: "src/a.ts", oldText: "limit_2", newText: "limit_3" }));
		messages.push(result("e", "edit", "done"), call("z", "bash", { command: "true" }), result("z", "bash", "ok"));
		assert.equal(ageOf(messages, "r"), 1, "the whole read, not the few lines a shell printed after it");
		assert.equal(ageOf(messages, "h"), 6);
		const two: MessageLike[] = [{ role: "user", content: "fix it", timestamp: clock++ }];
		const print = (id: string, workdir: string) => [
			call(id, "bash", { command: "sed -n '1,200p' app/page.tsx", workdir }),
			result(id, "bash", FILE),
		];
		two.push(...print("sol", "/r/Sol/frontend"), ...print("old", "/r/Old/frontend"));
		for (let i = 0; i < 5; i++) two.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
		two.push(
			call("e", "apply_patch", {
				input: "*** Begin Patch\n*** Update File: /r/Sol/frontend/app/page.tsx\n@@\n-a\n+b\n*** End Patch",
			}),
		);
		two.push(result("e", "apply_patch", "done"), call("z", "bash", { command: "true" }), result("z", "bash", "ok"));
		assert.equal(ageOf(two, "sol"), 1, "the print in the patched file's folder");
		assert.equal(ageOf(two, "old"), 6, "not the newer print of another folder's file of the same name");
	});

	test("an edit after a failed read uses the newest read that succeeded", () => {
		const messages: MessageLike[] = [{ role: "user", content: "fix it", timestamp: clock++ }];
		messages.push(call("ok", "read", { path: "src/a.ts" }), result("ok", "read", FILE));
		messages.push(call("bad", "read", { path: "src/a.ts", offset: 999 }));
		messages.push({ ...result("bad", "read", "Offset 999 is beyond end of file"), isError: true });
		for (let i = 0; i < 5; i++)
			messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
		messages.push(call("e", "edit", { path: "src/a.ts", oldText: "limit_2", newText: "limit_3" }));
		messages.push(result("e", "edit", "done"), call("z", "bash", { command: "true" }), result("z", "bash", "ok"));
		assert.equal(ageOf(messages, "ok"), 1);
	});

	test("an edit of a file read in parts uses the part holding most of its strings, the newest on a tie", () => {
		const PART_1 = "export function parseHeader(raw_line) {}\nconst MAX_HEADER_SIZE = 8192;";
		const PART_2 = "export class TokenBucket {}\nconst refill_rate_ms = 10;\nconst MAX_HEADER_SIZE_2 = 1;";
		const edited = (oldText: string): MessageLike[] => {
			const messages: MessageLike[] = [{ role: "user", content: "fix it", timestamp: clock++ }];
			messages.push(call("p1", "read", { path: "src/a.ts", offset: 1, limit: 2 }), result("p1", "read", PART_1));
			messages.push(call("p2", "read", { path: "src/a.ts", offset: 3 }), result("p2", "read", PART_2));
			for (let i = 0; i < 5; i++)
				messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
			messages.push(call("e", "edit", { path: "src/a.ts", oldText, newText: "x" }), result("e", "edit", "done"));
			return [...messages, call("z", "bash", { command: "true" }), result("z", "bash", "ok")];
		};
		const first = edited("parseHeader(raw_line) MAX_HEADER_SIZE");
		assert.equal(ageOf(first, "p1"), 1, "the first part holds both strings");
		assert.equal(ageOf(first, "p2"), 6, "the second part keeps its arrival");
		const tie = edited("limit_2");
		assert.equal(ageOf(tie, "p2"), 1, "no part holds a string of it: the newest part");
		assert.equal(ageOf(tie, "p1"), 7);
	});

	test("an edit of a file the model wrote uses the write's arguments; a whole rewrite uses only a read", () => {
		const messages: MessageLike[] = [{ role: "user", content: "write it", timestamp: clock++ }];
		messages.push(call("w", "write", { path: "src/a.ts", content: FILE }), result("w", "write", "Wrote"));
		// A first edit, then five other calls: the path's newest holder is that edit's arguments, not the write's.
		messages.push(call("e1", "edit", { path: "src/a.ts", oldText: "limit_1", newText: "limit_2" }));
		messages.push(result("e1", "edit", "done"));
		for (let i = 0; i < 5; i++)
			messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
		const writeAge = (after: MessageLike[]) => {
			const all = [...messages, ...after, call("z", "bash", { command: "true" }), result("z", "bash", "ok")];
			const blocks = linearize(all);
			return useOf(all, blocks).ages[blocks.findIndex((b) => b.id === "a:w:args")];
		};
		const edit = call("e2", "edit", { path: "src/a.ts", oldText: "limit_2", newText: "limit_3" });
		assert.equal(writeAge([edit, result("e2", "edit", "done")]), 1, "the edit uses the written text");
		const rewrite = call("e2", "write", { path: "src/a.ts", content: "export const x = 1;" });
		assert.equal(writeAge([rewrite, result("e2", "write", "Wrote")]), 7, "a rewrite holds the file itself");
	});

	test("the copy an edit uses is chosen by the file's text, not its path: a newer read beats the write", () => {
		const ageAfter = (copies: MessageLike[], id: string): number => {
			const messages: MessageLike[] = [{ role: "user", content: "go", timestamp: clock++ }, ...copies];
			// Ten edits, each of the previous one's new text: no copy holds their strings, only the path.
			for (let k = 0; k < 10; k++) {
				const edit = { path: "src/a.ts", oldText: `limit_${k}`, newText: `limit_${k + 1}` };
				messages.push(call(`e${k}`, "edit", edit), result(`e${k}`, "edit", "done"));
			}
			return ageOf([...messages, call("z", "bash", { command: "true" }), result("z", "bash", "ok")], id);
		};
		const write = call("w", "write", { path: "src/a.ts", content: FILE });
		const read = [call("r", "read", { path: "src/a.ts" }), result("r", "read", FILE)];
		assert.equal(ageAfter([write, result("w", "write", "Wrote"), ...read], "r"), 1, "the newer read is the copy");
		const failed: MessageLike = { ...result("w", "write", "EACCES: permission denied"), isError: true };
		assert.equal(ageAfter([...read, write, failed], "r"), 1, "a write that failed is no copy");
		// Codex: a patch adds the file, a shell print shows it, then patches update it: the print is the copy.
		const patch = (id: string, kind: string) =>
			call(id, "apply_patch", { input: `*** Begin Patch\n*** ${kind} File: src/a.ts\n+x\n*** End Patch` });
		const codex: MessageLike[] = [{ role: "user", content: "go", timestamp: clock++ }];
		codex.push(patch("add", "Add"), result("add", "apply_patch", "Done"));
		codex.push(call("p", "bash", { command: "sed -n '1,200p' src/a.ts" }), result("p", "bash", FILE));
		for (let k = 0; k < 10; k++) codex.push(patch(`u${k}`, "Update"), result(`u${k}`, "apply_patch", "Done"));
		codex.push(call("z", "bash", { command: "true" }), result("z", "bash", "ok"));
		assert.equal(ageOf(codex, "p"), 1, "the shell print the patches work from");
	});

	test("a model message citing a step of a plan it wrote, in plain words, uses the plan's write", () => {
		const plan = "# Rollout\n## Step 1: Drain the queue\n## Step 2: Swap the brokers\n## Step 3: Replay dead letters";
		const cited = (path: string, content: string): number => {
			const messages: MessageLike[] = [{ role: "user", content: "plan it, then do it", timestamp: clock++ }];
			messages.push(call("w", "write", { path, content }), result("w", "write", "written"));
			for (let i = 0; i < 5; i++)
				messages.push(call(`f${i}`, "bash", { command: "true" }), result(`f${i}`, "bash", "ok"));
			messages.push(call("z", "bash", { command: "true" }, "Queue drained; now step 2, swap the brokers."));
			messages.push(result("z", "bash", "ok"));
			const blocks = linearize(messages);
			return useOf(messages, blocks).ages[blocks.findIndex((b) => b.id === "a:w:args")];
		};
		assert.equal(cited("ROLLOUT.md", plan), 0, "cited by the latest model message");
		assert.equal(cited("rollout.py", plan), 6, "a code file's # lines are comments: only its arrival");
		// The 12.6k-token plan issue 24 names, implemented over a hundred requests, is a plan too.
		const large = `${plan}\n${"More detail on every step of the rollout. ".repeat(12_600 / 10.5)}`;
		assert.ok(linearize([call("w", "write", { path: "x", content: large })])[0].tokens > 12_000);
		assert.equal(cited("ROLLOUT.md", large), 0, "a 12.6k-token plan cited by step");
		const long = `${plan}\n${"More detail on every step of the rollout. ".repeat(CITED_PLAN_TOKENS / 6)}`;
		assert.equal(cited("ROLLOUT.md", long), 6, "a plan over CITED_PLAN_TOKENS keeps only its arrival");
	});

	test("nothing older than the lookback counts", () => {
		const messages: MessageLike[] = [{ role: "user", content: "go", timestamp: clock++ }];
		messages.push(call("r", "read", { path: "a.ts" }), result("r", "read", FILE));
		for (let i = 0; i <= USE_LOOKBACK; i++)
			messages.push(call(`h${i}`, "bash", { command: "true" }), result(`h${i}`, "bash", "ok"));
		assert.equal(ageOf(messages, "r"), Number.POSITIVE_INFINITY);
	});
});
