/**
 * Which files a tool call prints or changes (src/core/file-calls.ts), whatever the agent's tools are
 * called: each case is a call as an agent sends it, and the expected facts are read off the call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { linearize, type MessageLike } from "../../src/core/block.ts";
import { fileCallsOf, printedFile } from "../../src/core/file-calls.ts";

function callsOf(name: string, args: Record<string, unknown>) {
	const messages: MessageLike[] = [
		{ role: "assistant", content: [{ type: "toolCall", id: "c1", name, arguments: args }], timestamp: 1 },
	];
	const block = linearize(messages).find((b) => b.kind === "toolArgs");
	assert.ok(block);
	return fileCallsOf(messages, block);
}

test("a shell command that prints one file and nothing else names it; any other command names none", () => {
	const printing: [string, string][] = [
		["cat package.json", "package.json"],
		["sed -n '1,220p' app/page.tsx", "app/page.tsx"],
		['sed -n "40,80p" src/a.ts', "src/a.ts"],
		["sed -n 1,80p src/a.ts", "src/a.ts"],
		["nl -ba src/a.ts | sed -n '10,40p'", "src/a.ts"],
		['nl -ba src/a.ts | sed -n "10,40p"', "src/a.ts"],
		["nl -ba src/a.ts | sed -n 10,40p", "src/a.ts"],
		["head -n 50 README.md", "README.md"],
		["tail -20 log.txt", "log.txt"],
		['cat "my notes.md"', "my notes.md"],
		["  cat src/a.ts  ", "src/a.ts"],
	];
	for (const [command, path] of printing) assert.equal(printedFile(command), path, command);
	for (const command of [
		"cat a.ts b.ts",
		"cat a.ts | grep x",
		"rg -n foo a.ts",
		"sed -i 's/a/b/' a.ts",
		"sed -n '1,80p' a.ts && sed -n '1,9p' b.ts",
		"cat $FILE",
		"cat src/*.ts",
		"cat {a,b}.ts",
		"cat",
	])
		assert.equal(printedFile(command), undefined, command);
});

test("a path relative to the call's workdir or a leading cd is joined onto it", () => {
	assert.equal(printedFile("sed -n '1,9p' app/page.tsx", "/r/Sol"), "/r/Sol/app/page.tsx");
	assert.equal(printedFile("cat /abs/a.ts", "/r"), "/abs/a.ts");
	assert.equal(printedFile("cd /r/y && cat a.ts"), "/r/y/a.ts");
	assert.equal(printedFile("cd sub && cat a.ts", "/r"), "/r/sub/a.ts");
	const patch = "*** Begin Patch\n*** Update File: app/page.tsx\n*** End Patch";
	assert.deepEqual(callsOf("apply_patch", { input: patch, workdir: "/r/Sol" }), {
		changes: [{ path: "/r/Sol/app/page.tsx", whole: false }],
	});
	const heredoc = `cd /r/Sol && apply_patch <<'EOF'\n${patch}\nEOF`;
	assert.deepEqual(callsOf("bash", { command: heredoc, workdir: "/elsewhere" }), {
		changes: [{ path: "/r/Sol/app/page.tsx", whole: false }],
	});
	assert.deepEqual(callsOf("bash", { command: `cd sub && apply_patch <<'EOF'\n${patch}\nEOF`, workdir: "/r" }), {
		changes: [{ path: "/r/sub/app/page.tsx", whole: false }],
	});
	assert.deepEqual(callsOf("bash", { command: "cat a.ts", workdir: "/r" }), {
		reads: "/r/a.ts",
		shell: true,
		changes: [],
	});
});

test("a call's changes: a path edit tool, a whole-file write, a patch's Update and Add files", () => {
	assert.deepEqual(callsOf("edit", { path: "src/a.ts", edits: [] }), {
		changes: [{ path: "src/a.ts", whole: false }],
	});
	assert.deepEqual(callsOf("Edit", { file_path: "/r/a.ts" }), { changes: [{ path: "/r/a.ts", whole: false }] });
	assert.deepEqual(callsOf("write", { path: "a.md", content: "x" }), { changes: [{ path: "a.md", whole: true }] });
	const patch = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: src/b.ts\n+z\n*** End Patch";
	const changes = [
		{ path: "src/a.ts", whole: false },
		{ path: "src/b.ts", whole: true },
	];
	assert.deepEqual(callsOf("apply_patch", { input: patch }), { changes });
	assert.deepEqual(callsOf("bash", { command: `apply_patch <<'EOF'\n${patch}\nEOF` }), { changes });
	assert.deepEqual(callsOf("read", { path: "src/a.ts", offset: 3 }), { reads: "src/a.ts", changes: [] });
	assert.deepEqual(callsOf("Read", { file_path: "src/a.ts" }), { reads: "src/a.ts", changes: [] });
	assert.deepEqual(callsOf("read_file", { file_path: "src/a.ts" }), { reads: "src/a.ts", changes: [] });
	assert.deepEqual(callsOf("bash", { command: "cat src/a.ts" }), { reads: "src/a.ts", shell: true, changes: [] });
	const quoted = `cat > notes.md <<'EOF'\n${patch}\nEOF`;
	assert.deepEqual(callsOf("bash", { command: quoted }), { changes: [] }, "a heredoc quoting a patch changes nothing");
	for (const [name, args] of [
		["edit", {}],
		["read", { path: 3 }],
		["bash", { command: "npm test" }],
		["grep", { pattern: "x", path: "src" }],
	] as const)
		assert.deepEqual(callsOf(name, args), { changes: [] }, `${name} ${JSON.stringify(args)}`);
});
