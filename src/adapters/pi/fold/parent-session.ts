/**
 * Read-only recall from a parent session. A session started from a `/fold-handoff` seed carries the
 * parent's fold codes as provenance pointers; this module serves them from the parent's own session
 * file, the one the seed names, with the same sha256 check as local recall (for a block without a
 * fold record there, against the hash the seed took at the handoff). Only a `.jsonl` file in this
 * session's own folder, or Pi's session folder for it, is opened (a handoff starts its new session
 * beside its parent), and it is only read. A code is looked up on the parent's last branch first,
 * then on any other branch of the file: the parent may have moved on with `/tree` since the handoff,
 * and its codes stay what they named. A torn last line (a parent still being written) is skipped
 * quietly; an unparsable line anywhere else is announced once and named in every miss, since the
 * codes it held, or that its branch led to, cannot be served.
 */
import { closeSync, constants, readSync } from "node:fs";
import { dirname } from "node:path";
import { Type } from "typebox";
import { Value } from "typebox/value";
import { foldCode } from "../../../core/digest.ts";
import type { FoldRecord, FoldRegistry } from "../../../core/fold-registry.ts";
import type { ArgField } from "../../../core/recall.ts";
import { lastBranch } from "../../../core/session-branch.ts";
import { openRegular, pathKey, readFailure, readRegularFile, realDir } from "../owned-files.ts";
import { rebuildRegistry, recordsOfEveryBranch } from "./persistence.ts";
import { servedText } from "./recall-sources.ts";
import { Ledger, type LedgerHit } from "./session-ledger.ts";
import { sha256 } from "./sha256.ts";

/** A parent code served from the parent's session file. */
export interface ParentHit {
	ok: true;
	record: FoldRecord;
	/** The text to serve (tool-call arguments rendered readably, as a recall of this session's own). */
	text: string;
	/** For tool-call arguments: where each raw value sits in `text`. */
	fields?: ArgField[];
	toolName?: string;
	/** Images the block held, which recall does not serve. */
	images: number;
	/** The parent session file it came from. */
	file: string;
	/**
	 * False for a legacy record without a fold-time sha256, or a block without a fold record in the
	 * parent whose seed carried no sha256 of it (served unverified).
	 */
	verified: boolean;
	/** False for a block with no fold record in the parent (never folded or compacted there, or its record lost). */
	folded: boolean;
}

/** Why a parent code could not be served. */
export interface ParentMiss {
	ok: false;
	error: string;
}

interface Loaded {
	/** The fold state of the parent's last branch. */
	registry: FoldRegistry;
	/** The fold records of every branch by code, the newest for a code recorded more than once. */
	anyBranch: Map<string, FoldRecord>;
	ledger: Ledger;
	/** The blocks of the parent's last branch, by durable id (their first copy on the branch first). */
	branch: Ledger;
	/** Blocks of any branch that have no fold record, by their own fold code (made on first use). */
	unrecorded?: Map<string, string>;
}

/** Most bytes read looking for a session file's header line. */
const MAX_HEADER_BYTES = 64 * 1024;

/** A session file's header line, as far as a seeded session reads it. */
const SessionHeader = Type.Object({
	type: Type.Literal("session"),
	id: Type.String({ minLength: 1 }),
	parentSession: Type.Optional(Type.Unknown()),
});

/**
 * The header (first line) of the session file `path`: its session id and the parent session it
 * names, read without following a final symlink and without reading further; or why it cannot be
 * read or names no id (as readRegularFile words it: "no such file" first when there is none).
 */
export function sessionHeaderOf(path: string): { id: string; parentSession?: string } | { why: string } {
	let fd: number | undefined;
	try {
		fd = openRegular(path, constants.O_RDONLY, Number.POSITIVE_INFINITY);
		const buffer = Buffer.alloc(MAX_HEADER_BYTES);
		const read = readSync(fd, buffer, 0, MAX_HEADER_BYTES, 0);
		const text = buffer.subarray(0, read).toString("utf8");
		const end = text.indexOf("\n");
		const header: unknown = JSON.parse(end < 0 ? text : text.slice(0, end));
		if (!Value.Check(SessionHeader, header)) return { why: "its first line is not a session header with an id" };
		const parent = header.parentSession;
		return typeof parent === "string" && parent ? { id: header.id, parentSession: parent } : { id: header.id };
	} catch (error) {
		if (error instanceof SyntaxError) return { why: "its first line is not JSON" };
		return { why: readFailure(error) };
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/** The parent session of the current one, loaded on first use. */
export class ParentSession {
	private loaded: Loaded | undefined;
	private readonly file: string;
	private readonly warn: (message: string) => void;
	/** The unparsable lines before the last one (1-based), which may have held a code's record or copy. */
	private damaged: number[] = [];

	/** The sha256 the handoff took of each block its seed cites, by code (see seedSource). */
	private readonly seedHashes: ReadonlyMap<string, string>;
	/** This session's folders (its file's, Pi's session folder): the only ones a parent file is read from. */
	private readonly folders: readonly string[];
	/** The same folders as compared (see pathKey). */
	private readonly folderKeys: ReadonlySet<string>;

	/**
	 * `folders` are this session's folders, where the parent file must be; `warn` hears, once, that the
	 * parent file has unparsable lines other than a torn last one; `seedHashes` are the seed's hashes of
	 * the blocks it cites, by code.
	 */
	constructor(
		file: string,
		folders: readonly string[],
		warn: (message: string) => void = () => {},
		seedHashes: ReadonlyMap<string, string> = new Map(),
	) {
		this.file = file;
		this.warn = warn;
		this.seedHashes = seedHashes;
		this.folders = folders.map(realDir);
		this.folderKeys = new Set(folders.map(pathKey));
	}

	/** The parent session file, as this session's header names it. */
	get path(): string {
		return this.file;
	}

	/**
	 * The parent's fold state, read on first use and kept; a file that cannot be read is tried again
	 * on the next use (it may be back), and the answer says why it could not be read.
	 */
	private load(): Loaded | string {
		if (this.loaded !== undefined) return this.loaded;
		const read = !this.file.endsWith(".jsonl")
			? { why: "it is not a .jsonl session file" }
			: // The folder as the kernel reaches it: a link before a `..` is followed first, which resolve drops.
				!this.folderKeys.has(pathKey(dirname(this.file)))
				? { why: `it is not in this session's folder (${this.folders.join(" or ") || "none is known"})` }
				: readRegularFile(this.file);
		if ("why" in read) return `the parent session file ${this.file} cannot be read: ${read.why}`;
		const { text } = read;
		const entries: Record<string, unknown>[] = [];
		const lines = text.split("\n");
		let last = lines.length - 1;
		while (last >= 0 && !lines[last].trim()) last--;
		for (let i = 0; i <= last; i++) {
			const line = lines[i];
			if (!line.trim()) continue;
			try {
				const entry = JSON.parse(line) as unknown;
				if (entry && typeof entry === "object" && (entry as { type?: unknown }).type !== "session") {
					entries.push(entry as Record<string, unknown>);
				}
			} catch {
				// A torn last line of a live parent is skipped quietly; any other is damage, and said.
				if (i < last) this.damaged.push(i + 1);
			}
		}
		if (this.damaged.length > 0) this.warn(`context-fold: ${this.damage()}`);
		// A loop of parentIds (damage) ends the branch where it closes.
		const { branch } = lastBranch(entries);
		this.loaded = {
			registry: rebuildRegistry(branch).registry,
			anyBranch: new Map(recordsOfEveryBranch(entries).map((record) => [record.code, record] as const)),
			ledger: new Ledger(() => ({ getEntries: () => entries })),
			branch: new Ledger(() => ({ getEntries: () => branch })),
		};
		return this.loaded;
	}

	/**
	 * The parent's blocks without a fold record, on any branch, by the code their id gives them (a
	 * handoff cites its raw tail so: see writeHandoff). A code of a block recorded anywhere is the record's.
	 */
	private unrecorded(loaded: Loaded): Map<string, string> {
		if (!loaded.unrecorded) {
			loaded.unrecorded = new Map();
			for (const id of loaded.ledger.ids()) {
				if (loaded.registry.record(id)) continue;
				const code = foldCode(id);
				if (!loaded.anyBranch.has(code) && !loaded.unrecorded.has(code)) loaded.unrecorded.set(code, id);
			}
		}
		return loaded.unrecorded;
	}

	/**
	 * The codes a search looks through: every block on the parent's last branch (folded, compacted, or
	 * never folded) and every block the seed cites (the parent may have gone on from an earlier point
	 * since the handoff); when the file cannot be read, why (a search must not read as finding nothing).
	 */
	searchCodes(): string[] | { error: string } {
		const loaded = this.load();
		if (typeof loaded === "string") return { error: loaded };
		const codes = new Set<string>();
		for (const id of loaded.branch.ids()) {
			const code = this.codeOf(loaded, id);
			if (code) codes.add(code);
		}
		for (const code of this.seedHashes.keys()) codes.add(code);
		return [...codes];
	}

	/** The code the block `id` is served under: its record's, or the one its id gives it where that names it. */
	private codeOf(loaded: Loaded, id: string): string | undefined {
		const recorded = loaded.registry.record(id)?.code;
		if (recorded) return recorded;
		const code = foldCode(id);
		return this.unrecorded(loaded).get(code) === id || loaded.anyBranch.get(code)?.id === id ? code : undefined;
	}

	/** The parent's fold record of `code`: on its last branch, else on any other. */
	private recordOf(loaded: Loaded, code: string): FoldRecord | undefined {
		const id = loaded.registry.idOf(code);
		return (id ? loaded.registry.record(id) : undefined) ?? loaded.anyBranch.get(code);
	}

	/** The parent's session entries as a ledger (to find a folded block's tool call), if the file can be read. */
	ledger(): Ledger | undefined {
		const loaded = this.load();
		return typeof loaded === "string" ? undefined : loaded.ledger;
	}

	/** Why the parent's file cannot be read, or undefined when it can. */
	unreadable(): string | undefined {
		const loaded = this.load();
		return typeof loaded === "string" ? loaded : undefined;
	}

	/** True when any branch of the parent recorded `code`, or holds a never-folded block of that code. */
	has(code: string): boolean {
		const loaded = this.load();
		return (
			typeof loaded !== "string" && (this.recordOf(loaded, code) !== undefined || this.unrecorded(loaded).has(code))
		);
	}

	/** Serves a parent code, sha-verified against the parent's fold record. */
	resolve(code: string): ParentHit | ParentMiss {
		const loaded = this.load();
		if (typeof loaded === "string") return { ok: false, error: `#${code}: ${loaded}` };
		const recorded = this.recordOf(loaded, code);
		const taken = this.seedHashes.get(code);
		// With unreadable lines in the file, a code with no record may be one whose record was lost there:
		// it is not served as a never-folded block (its text could be a later copy) unless the seed's hash
		// tells the copies apart; otherwise the miss says why.
		const never = recorded ? undefined : this.unrecorded(loaded).get(code);
		const withheld = never !== undefined && this.damaged.length > 0 && !taken;
		const id = recorded?.id ?? (withheld ? undefined : never);
		if (!id) {
			const why = taken
				? `#${code}: the parent session file no longer holds it, though the seed cites it`
				: withheld
					? `#${code} names a block of the parent ${this.file} that no fold record there names, and with lines of that file unreadable, a lost record could name another copy: it is not served unchecked (${this.seedHashes.size === 0 ? "a seed passed as a prompt carries no sha256 to tell the copies apart" : "the seed holds no sha256 of it to tell the copies apart"})`
					: `#${code} is not a fold code of this session or of its parent ${this.file}`;
			return { ok: false, error: `${why}${this.damageNote()}` };
		}
		const hits = loaded.ledger.lookup(id);
		const served = (hit: LedgerHit, verified: boolean, ownRecord = true): ParentHit => {
			const own = ownRecord ? recorded : undefined;
			return {
				ok: true,
				record: own ?? {
					id,
					code,
					chars: hit.block.text.length,
					seq: 0,
					kind: hit.block.kind,
					tool: hit.block.toolName,
					turn: hit.block.turn,
				},
				...servedText(hit.block, hit.message),
				toolName: hit.block.toolName,
				images: hit.block.images,
				file: this.file,
				verified,
				folded: own !== undefined,
			};
		};
		// The seed's hash names the block it cited: where two branches gave one id to two blocks (a
		// provider that repeats call ids, two processes on one session), the record of the parent's last
		// branch may be the other block's.
		if (taken && recorded && recorded.sha256 !== taken) {
			const copies = [...loaded.branch.lookup(id), ...hits];
			const match = copies.find((hit) => sha256(hit.block.text) === taken);
			if (match) return served(match, true, false);
		}
		// A block without a fold record there (never folded, or its record lost) has no fold-time hash. The
		// seed that cited it took one: the copy that matches it is served, verified. Without one (a seed
		// written before seeds carried them), the copy its code was given to: the first on the parent's
		// branch (as linearize gives a durable id), or failing that the first in the file.
		if (!recorded) {
			if (taken) {
				const copies = [...loaded.branch.lookup(id), ...hits];
				const match = copies.find((hit) => sha256(hit.block.text) === taken);
				return match
					? served(match, true)
					: {
							ok: false,
							error: `#${code}: the parent session file has no copy matching the sha256 the handoff took${this.damageNote()}`,
						};
			}
			const first = loaded.branch.lookup(id)[0] ?? hits[0];
			return first
				? served(first, false)
				: { ok: false, error: `#${code}: the parent session file no longer holds it${this.damageNote()}` };
		}
		const record = recorded;
		// Without a fold-time hash nothing tells the copies apart: the newest one, as the local route serves.
		const newest = hits.at(-1);
		if (!record.sha256 && newest) return served(newest, false);
		for (const hit of hits) if (sha256(hit.block.text) === record.sha256) return served(hit, true);
		return {
			ok: false,
			error: `#${code}: the parent session file has no ${this.damaged.length > 0 ? "readable " : ""}copy matching the fold-time sha256${this.damageNote()}`,
		};
	}

	private damage(): string {
		const n = this.damaged.length;
		return `the parent session file ${this.file} has ${n} unreadable line${n === 1 ? "" : "s"} (${n === 1 ? "line" : "lines"} ${this.damaged.slice(0, 5).join(", ")}${n > 5 ? ", …" : ""}), skipped; codes recorded there, or on the branch before them, cannot be recalled`;
	}

	private damageNote(): string {
		return this.damaged.length > 0 ? ` (${this.damage()})` : "";
	}

	/** What the file's unreadable lines cost (see damage), once it was read with any; else undefined. */
	unreadableLines(): string | undefined {
		return this.damaged.length > 0 ? this.damage() : undefined;
	}
}
