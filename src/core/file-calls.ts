/**
 * Which files a tool call reads or changes, whatever the agent calls its tools: Pi's `read` (Claude
 * Code's `Read`, Gemini CLI's `read_file`), `edit` and `write`; the edit tools `edit_src` (a Pi fork's) and Claude Code's `Edit` and `MultiEdit`
 * (`path` or `file_path`); a Codex `apply_patch` (its `*** Update File:` and `*** Add File:` lines, as
 * a tool or a shell heredoc fed to `apply_patch`); and a shell command that only prints one file
 * (`cat`, `sed -n '1,200p'`, `nl -ba`, `head`, `tail`, after an optional `cd <folder> &&`). A path
 * relative to the call's `workdir` (Codex gives one) or a leading `cd` is joined onto it. The
 * working set (use-ages.ts) goes by these to keep what the model read of a file raw while it edits
 * that file. Pure: the facts come from the call's arguments alone.
 */
import type { Block, MessageLike } from "./block.ts";

/** A file a call changes; `whole` when its arguments hold the file's whole new text. */
export interface FileChange {
	path: string;
	whole: boolean;
}

/** What a call does to files: the one file its result prints (`shell`: a shell command's), and the files it changes. */
export interface FileCalls {
	reads?: string;
	shell?: boolean;
	changes: FileChange[];
}

/** The file calls of blocks seen in earlier requests, by block object (see CallFactsMemo: same contract). */
export type FileCallsMemo = WeakMap<Block, FileCalls>;

const NONE: FileCalls = Object.freeze({ changes: Object.freeze([]) as unknown as FileChange[] });

/** Tools changing the one file their `path` (or `file_path`) names, by lower-case name; true: a whole-file write. */
const PATH_EDITS: Readonly<Record<string, boolean>> = {
	edit: false,
	edit_src: false,
	multiedit: false,
	write: true,
};

/** A patch's file headers: `*** Update File: <path>` changes part of a file, `*** Add File: <path>` writes it whole. */
const PATCH_FILE = /^\*\*\* (Update|Add) File: (.+)$/gm;

/** One path as a shell word: plain, or in single or double quotes. */
const WORD = String.raw`(?:'([^']+)'|"([^"]+)"|([^\s'"|;&<>()$\`*?{}]+))`;

/** `sed -n` with a line range, its script in single quotes, double quotes or none. */
const SED_RANGE = String.raw`sed\s+-n\s+(?:'[\d,;p\s$]+'|"[\d,;p\s$]+"|[\d,;p$]+)`;

/** `head` or `tail` with an optional line count. */
const HEAD_TAIL = String.raw`(?:head|tail)(?:\s+-n?\s*\d+)?`;

/**
 * A shell command that prints one file and nothing else: after an optional `cd <folder> &&`, `cat`,
 * `nl -ba`, `head`/`tail` with an optional line count, or `sed -n` with a line range, then the path,
 * optionally piped through `sed -n` or `head` to select lines.
 */
const PRINT_FILE = new RegExp(
	String.raw`^(?:cd\s+${WORD}\s*&&\s*)?(?:cat|nl(?:\s+-ba)?|${HEAD_TAIL}|${SED_RANGE})\s+${WORD}(?:\s*\|\s*(?:${SED_RANGE}|head(?:\s+-n?\s*\d+)?))?\s*$`,
);

/** A command's leading `cd <folder> &&`, the folder as a shell word (see WORD). */
const LEADING_CD = new RegExp(String.raw`^cd\s+${WORD}\s*&&`);

/** The words PRINT_FILE may start with. */
const PRINT_START = /^(?:cat|nl|head|tail|sed|cd)\s/;

/** True for a path from the root, a drive or the home folder. */
function absolute(path: string): boolean {
	return /^(?:[/\\~]|[A-Za-z]:[/\\])/.test(path);
}

/** `path` joined onto the folder `dir` when `dir` is given and `path` is relative. */
function within(dir: string | undefined, path: string): string {
	return dir && !absolute(path) ? `${dir}/${path}` : path;
}

function argumentsOf(messages: readonly MessageLike[], block: Block): Record<string, unknown> | undefined {
	const content = messages[block.msg]?.content;
	const args = Array.isArray(content) ? (content[block.part] as { arguments?: unknown })?.arguments : undefined;
	return args && typeof args === "object" ? (args as Record<string, unknown>) : undefined;
}

function patchChanges(patch: string, dir: string | undefined): FileChange[] {
	const changes: FileChange[] = [];
	for (const [, kind, path] of patch.matchAll(PATCH_FILE))
		changes.push({ path: within(dir, path.trim()), whole: kind === "Add" });
	return changes;
}

/** The file a shell command prints alone (see PRINT_FILE), joined onto `workdir` and a leading `cd`; or undefined. */
export function printedFile(command: string, workdir?: string): string | undefined {
	const line = command.trim();
	// Most commands start with another word: they skip the long pattern.
	if (!PRINT_START.test(line)) return undefined;
	const m = PRINT_FILE.exec(line);
	if (!m) return undefined;
	const cd = m[1] ?? m[2] ?? m[3];
	const path = m[4] ?? m[5] ?? m[6];
	return within(cd === undefined ? workdir : within(workdir, cd), path);
}

/** Tools whose result is a file's text, by lower-case name: Pi's `read` (Claude Code's `Read`), Gemini CLI's `read_file`. */
const READ_TOOLS: ReadonlySet<string> = new Set(["read", "read_file"]);

/** True when a result of `toolName` is a file's text (a read tool's, whatever the agent calls it). */
export function readsFile(toolName: string): boolean {
	return READ_TOOLS.has(toolName.toLowerCase());
}

function parse(args: Record<string, unknown>, tool: string): FileCalls {
	const name = tool.toLowerCase();
	const workdir = typeof args.workdir === "string" ? args.workdir : undefined;
	const path = typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : "";
	if (readsFile(name)) return path ? { reads: path, changes: [] } : NONE;
	if (name in PATH_EDITS) return path ? { changes: [{ path, whole: PATH_EDITS[name] }] } : NONE;
	if (name === "apply_patch") {
		const patch = typeof args.input === "string" ? args.input : typeof args.patch === "string" ? args.patch : "";
		return { changes: patchChanges(patch, workdir) };
	}
	const command = typeof args.command === "string" ? args.command : undefined;
	if (command === undefined) return NONE;
	const patch = command.indexOf("*** Begin Patch");
	if (patch >= 0) {
		const head = command.slice(0, patch);
		if (!/\bapply_patch\b/.test(head)) return NONE;
		const cd = LEADING_CD.exec(head.trimStart());
		const dir = cd ? within(workdir, cd[1] ?? cd[2] ?? cd[3]) : workdir;
		return { changes: patchChanges(command, dir) };
	}
	const printed = printedFile(command, workdir);
	return printed ? { reads: printed, shell: true, changes: [] } : NONE;
}

/** The file calls of the call whose arguments `block` is (a `toolArgs` block), memoized by block object. */
export function fileCallsOf(messages: readonly MessageLike[], block: Block, memo?: FileCallsMemo): FileCalls {
	let calls = memo?.get(block);
	if (calls === undefined) {
		const args = block.kind === "toolArgs" ? argumentsOf(messages, block) : undefined;
		calls = args ? parse(args, block.toolName ?? "") : NONE;
		memo?.set(block, calls);
	}
	return calls;
}
