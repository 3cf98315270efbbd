/**
 * Resolving a fold code to its original text: the ledger route (sha-verified), the live-history
 * fallback, and a shell tool's own full-output file for grep and line slices.
 */
import { closeSync, constants, fstatSync, lstatSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, resolve } from "node:path";
import type { Block, MessageLike } from "../../../core/block.ts";
import type { FoldRecord } from "../../../core/fold-registry.ts";
import { SHELL_TOOLS } from "../../../core/output-notices.ts";
import { type ArgField, renderArgsPlaced } from "../../../core/recall.ts";
import { errorText } from "../error-text.ts";
import { openRegular, pathKey } from "../owned-files.ts";
import type { FoldEngine } from "./engine.ts";
import type { Ledger, LedgerHit, PlacedRecord } from "./session-ledger.ts";
import { sha256 } from "./sha256.ts";

/** A resolved folded block. */
export interface ResolvedCode {
	ok: true;
	id: string;
	record: FoldRecord;
	/** The text to serve (tool-call arguments rendered readably). */
	text: string;
	/** For tool-call arguments: where each raw value sits in `text`, whose own lines its digest counted. */
	fields?: ArgField[];
	/**
	 * How it was verified: `ledger` (the session file's copy has the fold-time sha256),
	 * `unverified` (a legacy record without a sha256: the newest session-file copy, as 0.5.1
	 * served it), `live` (the latest request's copy), `branch` (folded on another branch of this
	 * session file, sha-verified unless `warning` says otherwise), `records` (recorded on this branch
	 * but missing from its fold state, one that could not be restored; likewise) or `parent` (from the
	 * parent session file named in `origin`, likewise).
	 */
	source: "ledger" | "unverified" | "live" | "branch" | "records" | "parent";
	/** The parent session file, for a parent code. */
	origin?: string;
	warning?: string;
	/** The full-output file the shell tool (bash, powershell) saved, if the result was truncated. */
	fullOutputPath?: string;
	toolName?: string;
	/** Images the block held, which recall does not serve (it serves text only). */
	images?: number;
}

/** Why a code could not be served. */
export interface Unresolved {
	ok: false;
	error: string;
}

/** A full-output file of Pi's shell tools (see SHELL_TOOLS): `pi-bash-<16 hex>.log`, `pi-powershell-…`. */
const SHELL_LOG = /^pi-(?:bash|powershell)-[0-9a-f]{16}\.log$/;
/** The largest full-output file a recall reads. */
export const MAX_FULL_OUTPUT_BYTES = 64 * 1024 * 1024;

/** A shell tool's own full-output file's name, directly in the temp dir, by a normal absolute path. */
function isShellLogPath(path: unknown): path is string {
	if (typeof path !== "string" || path.length > 4096 || !SHELL_LOG.test(basename(path))) return false;
	// Only a normal absolute path: the kernel follows a link before a `..` after it, which resolve drops.
	return resolve(path) === path && pathKey(dirname(path)) === pathKey(tmpdir());
}

/**
 * What one recall call read of shell tools' full-output files: at most MAX_FULL_OUTPUT_BYTES in all
 * (one file of the largest size a recall reads), each file once. A grep or search over many codes
 * whose logs are large read each one whole, synchronously, before its output cap applied: forty
 * 60 MiB logs held Pi frozen for over a minute. A file past what is left is not read, and said so.
 */
export class OutputReads {
	/** Bytes the call may still read. */
	private left = MAX_FULL_OUTPUT_BYTES;
	/** The text of each file read, by path. */
	private readonly texts = new Map<string, string | undefined>();
	/** Files left unread because the call had read its bytes, by path. */
	readonly skipped = new Set<string>();

	/** The file at `path` (see readToolOutputFile), read once a call; undefined when gone, refused or past the call's bytes. */
	read(path: unknown): string | undefined {
		if (typeof path !== "string") return undefined;
		if (this.texts.has(path)) return this.texts.get(path);
		const text = readToolOutputFile(path, (size) => {
			if (size > this.left) return false;
			this.left -= size;
			return true;
		});
		if (text === SKIPPED) {
			this.skipped.add(path);
			return undefined;
		}
		this.texts.set(path, text);
		return text;
	}

	/** True when the file at `path` could be read (see readToolOutputFile): checked, not read, nothing counted. */
	readable(path: unknown): boolean {
		if (typeof path !== "string") return false;
		if (this.texts.has(path)) return this.texts.get(path) !== undefined;
		return readToolOutputFile(path, () => false) === SKIPPED;
	}
}

/** What readToolOutputFile gives for a file its `admit` refused: there and readable, but left unread. */
const SKIPPED = Symbol("skipped");

/**
 * Reads a shell tool's own full-output file: `pi-bash-<16 hex>.log` (or `pi-powershell-…`) directly in
 * the temp dir, named by a normal absolute path (no `.` or `..` part, as the tool writes it). The file is opened
 * once without following links, and the opened descriptor must be a regular file with a single
 * link, owned by this user, of bounded size; the text is read from that descriptor, so nothing
 * swapped in after the check is read. Any other path, or a file gone, gives undefined; a file that
 * `admit` refuses for its size, SKIPPED.
 */
function readToolOutputFile(path: unknown, admit: (size: number) => boolean): string | typeof SKIPPED | undefined {
	if (!isShellLogPath(path)) return undefined;
	let fd: number | undefined;
	try {
		fd = openRegular(path, constants.O_RDONLY, MAX_FULL_OUTPUT_BYTES);
		const stat = fstatSync(fd);
		const owner = process.getuid?.();
		if (stat.nlink !== 1) return undefined;
		if (owner !== undefined && stat.uid !== owner) return undefined;
		if (!admit(stat.size)) return SKIPPED;
		return readFileSync(fd, "utf8");
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/**
 * The size of a shell tool's own full-output file that readToolOutputFile leaves unread only for its
 * size (a regular file with one link, owned by this user, over MAX_FULL_OUTPUT_BYTES), or undefined:
 * such a file is still there for the shell to read, which a recall says instead of "deleted".
 */
export function oversizedToolOutput(path: unknown): number | undefined {
	if (!isShellLogPath(path)) return undefined;
	try {
		const stat = lstatSync(path);
		const owner = process.getuid?.();
		if (!stat.isFile() || stat.nlink !== 1 || (owner !== undefined && stat.uid !== owner)) return undefined;
		return stat.size > MAX_FULL_OUTPUT_BYTES ? stat.size : undefined;
	} catch {
		return undefined;
	}
}

/**
 * What was worked out once per block object: its sha256 and its readable arguments. The ledger and
 * live history serve the same block object while its message is unchanged, so a `search` over every
 * record hashes and renders each block once per session, not once per call.
 */
const hashes = new WeakMap<Block, string>();
const displays = new WeakMap<Block, { text: string; fields: ArgField[] }>();

function hashOf(block: Block): string {
	let hash = hashes.get(block);
	if (hash === undefined) {
		hash = sha256(block.text);
		hashes.set(block, hash);
	}
	return hash;
}

/** The text a recall serves of `block` of `message` (tool-call arguments rendered readably, with their places). */
export function servedText(block: Block, message: MessageLike): { text: string; fields?: ArgField[] } {
	if (block.kind !== "toolArgs") return { text: block.text };
	let shown = displays.get(block);
	if (shown === undefined) {
		const part = Array.isArray(message.content)
			? (message.content[block.part] as { arguments?: unknown })
			: undefined;
		shown = renderArgsPlaced(block.toolName ?? "tool", part?.arguments ?? {});
		displays.set(block, shown);
	}
	return shown;
}

/** The full output file a shell tool's result names (another tool's details name none it wrote). */
function fullOutputOf(block: Block, message: MessageLike): string | undefined {
	if (block.kind !== "toolResult" || !SHELL_TOOLS.has(block.toolName ?? "")) return undefined;
	const details = message.details as { fullOutputPath?: unknown } | undefined;
	return details && typeof details === "object" ? (details.fullOutputPath as string | undefined) : undefined;
}

/** A resolved block: `block` of `message`, served for `record` from `source`. */
function servedFrom(
	record: FoldRecord,
	block: Block,
	message: MessageLike,
	source: ResolvedCode["source"],
	warning?: string,
): ResolvedCode {
	const { text, fields } = servedText(block, message);
	return {
		ok: true,
		id: record.id,
		record,
		text,
		...(fields && fields.length > 0 ? { fields } : {}),
		source,
		warning,
		fullOutputPath: fullOutputOf(block, message),
		toolName: block.toolName,
		images: block.images,
	};
}

/** Resolves a code through the registry, the ledger and live history. */
export function resolveCode(code: string, engine: FoldEngine, ledger: Ledger): ResolvedCode | Unresolved {
	const id = engine.registry.idOf(code);
	const record = id ? engine.registry.record(id) : undefined;
	if (!id || !record) return { ok: false, error: `#${code} is not a fold code of this session branch` };
	const base = (block: Block, message: MessageLike, source: ResolvedCode["source"], warning?: string): ResolvedCode =>
		servedFrom(record, block, message, source, warning);
	let mismatch = false;
	let unreadable: string | undefined;
	try {
		const hits = ledger.lookup(id);
		const newest = hits.at(-1);
		if (!record.sha256 && newest) return base(newest.block, newest.message, "unverified");
		for (const hit of hits) {
			if (hashOf(hit.block) === record.sha256) return base(hit.block, hit.message, "ledger");
			mismatch = true;
		}
	} catch (error) {
		unreadable = errorText(error);
	}
	const live = engine.liveBlock(id);
	if (live) {
		const why = mismatch
			? "its session-file copy does not match the fold-time sha256"
			: unreadable !== undefined
				? `the session file could not be read (${unreadable})`
				: "the session file has no copy";
		// After a resume live history is read from the same session file: only its own hash can vouch for it.
		const check =
			record.sha256 === undefined
				? ""
				: hashOf(live.block) === record.sha256
					? `, which matches ${mismatch ? "it" : "the fold-time sha256"}`
					: `, which does not match the fold-time sha256${mismatch ? " either" : ""}: the block changed since it was folded`;
		return base(live.block, live.message, "live", `${why}; served from live history${check}`);
	}
	return {
		ok: false,
		error: mismatch
			? `#${code}: the session file's copy does not match the sha256 taken at fold time, and the block has left live history`
			: unreadable !== undefined
				? `#${code}: the session file could not be read (${unreadable}), and the block has left live history`
				: `#${code}: the block is not in the session file and has left live history`,
	};
}

/**
 * Resolves a code the branch's fold state does not hold but the session file records: folded on
 * another branch (it reached this one in a branch summary written after a `/tree` move), or on this
 * branch by a process whose fold state could not be restored. The record comes from the ledger's
 * index of every branch, the copy from the session file, sha-verified. Undefined when no branch
 * recorded the code.
 */
export function resolveOtherBranch(code: string, ledger: Ledger): ResolvedCode | Unresolved | undefined {
	let placed: PlacedRecord | undefined;
	let hits: LedgerHit[];
	let here: boolean;
	try {
		placed = ledger.recordOf(code);
		if (!placed) return undefined;
		hits = ledger.lookup(placed.record.id);
		here = placed.entryId !== undefined && ledger.onBranch(placed.entryId);
	} catch (error) {
		return { ok: false, error: `#${code}: the session file could not be read (${errorText(error)})` };
	}
	const { record } = placed;
	const served = (hit: LedgerHit, warning?: string): ResolvedCode =>
		servedFrom(record, hit.block, hit.message, here ? "records" : "branch", warning);
	const newest = hits.at(-1);
	if (!record.sha256 && newest) return served(newest, "this fold predates fold-time hashes; served unverified");
	for (const hit of hits) if (hashOf(hit.block) === record.sha256) return served(hit);
	const where = here ? "recorded on this branch" : "folded on another branch of this session";
	return { ok: false, error: `#${code} was ${where}, and the session file has no copy matching its fold-time sha256` };
}
