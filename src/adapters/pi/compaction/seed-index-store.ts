/**
 * The seed index on disk: `<sessionDir>/context-fold/<sessionId>/seed-index.jsonl`, one record per
 * committed fold event and per compaction, append-only. An in-memory session (`--no-session`)
 * keeps the records in memory only and writes no file. Another process may append to the same file
 * (a second `pi` on the session) and die mid-line: each append looks at the file's last byte first
 * and starts a new line after such a fragment, so the record stays a line of its own.
 */
import { closeSync, constants, fstatSync, readSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { cancels, parseSeedIndex, retraction, serializeRecord } from "../../../core/index/reader.ts";
import type { SeedRecord, SeedRetraction } from "../../../core/index/seed-index.ts";
import { errorText } from "../error-text.ts";
import { sessionHeaderOf } from "../fold/parent-session.ts";
import {
	NO_SUCH_FILE,
	type OwnedPlace,
	openRegular,
	ownFolder,
	placePath,
	placeProblem,
	readRegularFile,
} from "../owned-files.ts";

/** The parts of Pi's session manager the store reads. */
export interface SessionPlace {
	getSessionDir(): string;
	getSessionId(): string;
	getSessionFile(): string | undefined;
	/** The session header: a forked or cloned session's names the file it came from. */
	getHeader?(): { parentSession?: unknown } | null | undefined;
}

/**
 * The name of a session's own folder: its id with every character but letters, digits, `.`, `_`
 * and `-` made `_`, and an id of dots alone (`.`, `..`) made underscores, so no id names a folder
 * above its own.
 */
function folderName(id: string): string {
	const name = id.replace(/[^A-Za-z0-9._-]/g, "_");
	return /^\.*$/.test(name) ? name.replace(/\./g, "_") || "_" : name;
}

/** The place of this extension's files for the session `id` stored in `dir`. */
function artifactPlace(dir: string, id: string): OwnedPlace {
	return { root: dir, parts: ["context-fold", folderName(id)] };
}

/** The place of this extension's files for a session, or undefined for an in-memory session. */
function artifactPlaceOf(session: SessionPlace | undefined): OwnedPlace | undefined {
	if (!session) return undefined;
	const dir = session.getSessionDir();
	const id = session.getSessionId();
	if (!dir || !id || !session.getSessionFile()) return undefined;
	return artifactPlace(dir, id);
}

/** Most ancestors whose seed indexes a session reads (a fork of a fork of …). */
const MAX_ANCESTORS = 32;

/**
 * The seed indexes of the sessions `session` descends from by fork or clone, oldest first: each
 * header's `parentSession` (a .jsonl file whose header names its id and its own parent) gives the
 * index file beside it. A chain that loops, or runs past MAX_ANCESTORS, stops there; so does one
 * whose next session file cannot be read, which `broken` then names (not when the file is gone: a
 * moved or deleted parent leaves nothing to inherit).
 */
function ancestorIndexFiles(session: SessionPlace): { files: { file: string; place: OwnedPlace }[]; broken?: string } {
	const files: { file: string; place: OwnedPlace }[] = [];
	const seen = new Set<string>();
	let parent = session.getHeader?.()?.parentSession;
	while (typeof parent === "string" && parent.endsWith(".jsonl") && !seen.has(parent) && seen.size < MAX_ANCESTORS) {
		seen.add(parent);
		const header = sessionHeaderOf(parent);
		if ("why" in header) {
			if (header.why === NO_SUCH_FILE) return { files };
			return {
				files,
				broken: `context-fold: the ancestor session ${parent} cannot be read (${header.why}); this session's summaries lack what its seed index held`,
			};
		}
		const place = artifactPlace(dirname(parent), header.id);
		files.unshift({ file: join(placePath(place), INDEX_FILE), place });
		parent = header.parentSession;
	}
	return { files };
}

const INDEX_FILE = "seed-index.jsonl";

/**
 * Seed-index records of one session: read once from disk, appended durably, kept in memory. A fold
 * event's record is its commit precondition (appendDurably throws when it cannot be written, and the
 * event is rejected); a compaction's record or a retraction that cannot be written is said once and
 * kept in memory, as the compaction goes on.
 */
export class IndexStore {
	private records: SeedRecord[] = [];
	private place: OwnedPlace | undefined;
	private dir: string | undefined;
	private readonly warn: (message: string) => void;

	constructor(warn: (message: string) => void = () => {}) {
		this.warn = warn;
	}

	/**
	 * Loads the index of `session` (tolerant reader). A missing file is an empty index; a file that
	 * exists but cannot be read is announced, and only a fold event's record is appended to it after
	 * (when that fails, the event waits). A session forked or cloned from another starts
	 * from the records of the sessions it descends from, the parent's and theirs (read only; readers
	 * keep those of the branch in use, as they do for every branch of one file), so its compactions
	 * merge what their summaries held.
	 */
	open(session: SessionPlace | undefined): { skipped: number } {
		this.place = artifactPlaceOf(session);
		this.dir = this.place && placePath(this.place);
		this.records = [];
		if (!this.dir || !session) return { skipped: 0 };
		const inherited = this.inherited(session);
		const own = this.readOwn();
		this.records = [...inherited.records, ...own.records];
		return { skipped: inherited.skipped + own.skipped };
	}

	/** The records of the sessions this one descends from, oldest first (none without a readable index). */
	private inherited(session: SessionPlace): { records: SeedRecord[]; skipped: number } {
		const out: { records: SeedRecord[]; skipped: number } = { records: [], skipped: 0 };
		const { files, broken } = ancestorIndexFiles(session);
		if (broken) this.warn(broken);
		for (const { file, place } of files) {
			const problem = placeProblem(place);
			const read = problem ? { why: problem } : readRegularFile(file);
			if ("text" in read) {
				const parsed = parseSeedIndex(read.text);
				out.records.push(...parsed.records);
				out.skipped += parsed.skipped;
			} else if (read.why !== NO_SUCH_FILE) {
				this.warn(
					`context-fold: the parent session's seed index ${file} cannot be read (${read.why}); this session's summaries lack what it held`,
				);
			}
		}
		return out;
	}

	/** This session's own index file, parsed (see open). */
	private readOwn(): { records: SeedRecord[]; skipped: number } {
		const file = this.file() as string;
		const problem = this.place && placeProblem(this.place);
		const read = problem ? { why: problem } : readRegularFile(file);
		if ("text" in read) return parseSeedIndex(read.text);
		// No file there (a file in place of a folder on the way counts as none: writing says so).
		if (read.why !== NO_SUCH_FILE && read.why !== "ENOTDIR") {
			this.warn(
				`context-fold: the seed index ${file} cannot be read (${read.why}); this session starts without its earlier records, so summaries lack what it held, and a fold event goes on only if its record can be appended`,
			);
		}
		return { records: [], skipped: 0 };
	}

	/** Path of the index file, or undefined for an in-memory session. */
	file(): string | undefined {
		return this.dir ? join(this.dir, INDEX_FILE) : undefined;
	}

	/** The folder of this session's artifacts, or undefined for an in-memory session. */
	folder(): string | undefined {
		return this.dir;
	}

	/**
	 * Makes the folder of this session's artifacts where missing and returns it, or undefined for an
	 * in-memory session; throws when a step there is a link or not a folder (see owned-files.ts).
	 */
	ownFolder(): string | undefined {
		return this.place && ownFolder(this.place);
	}

	/** Every live record, oldest first. */
	all(): readonly SeedRecord[] {
		return this.records;
	}

	/** Appends a compaction's record: to the file where it can be written (see write), and in memory. */
	append(record: SeedRecord): void {
		this.write(record);
		this.records.push(record);
	}

	/**
	 * Appends a fold event's record durably (in memory alone for an in-memory session), or throws why
	 * it cannot: the record is a commit precondition of its event, which is then rejected. Tried anew
	 * for each event, so folding resumes once the file can be written again.
	 */
	appendDurably(record: SeedRecord): void {
		const file = this.file();
		if (file && this.place) {
			try {
				this.appendToFile(file, this.place, record);
			} catch (error) {
				throw new Error(
					`the seed index ${file} cannot be written (${errorText(error)}); fold events wait until it can`,
				);
			}
		}
		this.records.push(record);
	}

	/**
	 * Appends a retraction of the newest record of compaction (or fold event) `seq`, at that record's
	 * leaf (sequence numbers restart on each branch: another branch's record of the same seq stays),
	 * and drops it from memory.
	 */
	retract(seq: number, reason: string, target: "fold" | "compaction" = "compaction"): void {
		const newest = this.records.findLast((r) => r.kind === target && r.seq === seq);
		const line = retraction(seq, reason, target, newest?.leaf);
		this.write(line);
		this.records = this.records.filter((r) => !cancels(line, r));
	}

	/** The next compaction sequence number. */
	nextCompactionSeq(): number {
		let max = 0;
		for (const r of this.records) if (r.kind === "compaction" && r.seq > max) max = r.seq;
		return max + 1;
	}

	/** Appends `record` to `file`, making this session's folder (`place`) where missing; throws why it cannot. */
	private appendToFile(file: string, place: OwnedPlace, record: SeedRecord | SeedRetraction): void {
		ownFolder(place);
		appendLine(file, serializeRecord(record));
	}

	/**
	 * Appends a compaction's record or a retraction where the file can be written, else says so (once
	 * for each reason) and keeps it in memory. Each is tried anew: a retraction that follows a fold
	 * record appended after an earlier failure must reach the file, or a restart reads that record live.
	 */
	private write(record: SeedRecord | SeedRetraction): void {
		const file = this.file();
		if (!file || !this.place) return;
		try {
			this.appendToFile(file, this.place, record);
		} catch (error) {
			this.warn(
				`context-fold: the seed index ${file} cannot be written (${errorText(error)}); what this session could not write there (a compaction's record, a retraction) is kept in memory only, so a summary after a restart may lack it`,
			);
		}
	}
}

/**
 * Appends `line` (ending in a newline) to `file`, after a newline of its own when the file ends in a
 * line cut mid-write, by this process or any other since it was opened: else the record would join
 * that fragment and be skipped with it. Two system calls more than a plain append, once per record.
 */
function appendLine(file: string, line: string): void {
	const fd = openRegular(
		file,
		constants.O_RDWR | constants.O_APPEND | constants.O_CREAT,
		Number.POSITIVE_INFINITY,
		0o666,
	);
	try {
		const size = fstatSync(fd).size;
		const last = Buffer.alloc(1);
		const torn = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
		const bytes = Buffer.from(`${torn ? "\n" : ""}${line}`, "utf8");
		let written = 0;
		while (written < bytes.length) written += writeSync(fd, bytes, written);
	} finally {
		closeSync(fd);
	}
}
