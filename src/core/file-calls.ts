/**
 * Which files a tool call reads or changes, whatever the agent calls its tools: Pi's `read`, `edit`
 * and `write`, an edit tool of another name that takes a `path` (`edit_src`, Claude Code's `Edit`
 * with `file_path`), a Codex `apply_patch` (its `*** Update File:` and `*** Add File:` lines, as a
 * tool or a shell heredoc), and a shell command that only prints one file (`cat`, `sed -n '1,200p'`,
 * `nl -ba`, `head`, `tail`). The working set (use-ages.ts) goes by these to keep what the model read
 * of a file raw while it edits that file. Pure: the facts come from the call's arguments alone.
 */
import type { Block, MessageLike } from "./block.ts";

/** A file a call changes; `whole` when its arguments hold the file's whole new text. */
export interface FileChange {
	path: string;
	whole: boolean;
}

/** What a call does to files: the one file its result prints, and the files it changes. */
export interface FileCalls {
	reads?: string;
	changes: FileChange[];
}

/** The file calls of blocks seen in earlier requests, by block object (see CallFactsMemo: same contract). */
export type FileCallsMemo = WeakMap<Block, FileCalls>;

const NONE: FileCalls = Object.freeze({ changes: Object.freeze([]) as unknown as FileChange[] });

/** Tools that change one file named by their `path` (or `file_path`), by lower-case name; true for a whole-file write. */
const PATH_EDITS: Readonly<Record<string, boolean>> = {
	edit: false,
	edit_src: false,
	multiedit: false,
	write: true,
};

/** A patch's file headers: `*** Update File: <path>` changes part of a file, `*** Add File: <path>` writes it whole. */
const PATCH_FILE = /^\*\*\* (Update|Add) File: (.+)$/gm;

/** One path as a shell word: plain, or in single or double quotes. */
const WORD = String.raw`(?:'([^']+)'|"([^"]+)"|([^\s'"|;&<>()$\`]+))`;

/**
 * A shell command that prints one file and nothing else: `cat`, `nl -ba`, `head`/`tail` with an
 * optional line count, or `sed -n` with a line range, then the path, optionally piped through
 * `sed -n`/`head` to select lines.
 */
const PRINT_FILE = new RegExp(
	String.raw`^(?:cat|nl(?:\s+-ba)?|head(?:\s+-n?\s*\d+)?|tail(?:\s+-n?\s*\d+)?|sed\s+-n\s+(?:'[\d,;p\s$]+'|"[\d,;p\s$]+"|[\d,;p$]+))\s+${WORD}(?:\s*\|\s*(?:sed\s+-n\s+'[\d,;p\s$]+'|head(?:\s+-n?\s*\d+)?))?\s*$`,
);

function argumentsOf(messages: readonly MessageLike[], block: Block): Record<string, unknown> | undefined {
	const content = messages[block.msg]?.content;
	const args = Array.isArray(content) ? (content[block.part] as { arguments?: unknown })?.arguments : undefined;
	return args && typeof args === "object" ? (args as Record<string, unknown>) : undefined;
}

function patchChanges(patch: string): FileChange[] {
	const changes: FileChange[] = [];
	for (const [, kind, path] of patch.matchAll(PATCH_FILE)) changes.push({ path: path.trim(), whole: kind === "Add" });
	return changes;
}

/** The file a shell command prints and nothing else (see PRINT_FILE), or undefined. */
export function printedFile(command: string): string | undefined {
	const m = PRINT_FILE.exec(command.trim());
	return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

function parse(args: Record<string, unknown>, tool: string): FileCalls {
	const name = tool.toLowerCase();
	const path = typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : "";
	if (name === "read") return path ? { reads: path, changes: [] } : NONE;
	if (name in PATH_EDITS) return path ? { changes: [{ path, whole: PATH_EDITS[name] }] } : NONE;
	if (name === "apply_patch") {
		const patch = typeof args.input === "string" ? args.input : typeof args.patch === "string" ? args.patch : "";
		return { changes: patchChanges(patch) };
	}
	const command = typeof args.command === "string" ? args.command : undefined;
	if (command === undefined) return NONE;
	if (command.includes("*** Begin Patch")) return { changes: patchChanges(command) };
	const printed = printedFile(command);
	return printed ? { reads: printed, changes: [] } : NONE;
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
