/**
 * The folders context-fold writes into, and the one way it opens a file there. Everything it writes
 * lives in `<sessionDir>/context-fold/<id>/` (or, for an in-memory session's handoff seed, in
 * `<tmp>/context-fold-<uid>/in-memory/`), and a link, or a file in place of a folder, on the way there
 * would carry a write somewhere else: each folder below the root is made or checked one step at a
 * time, never followed when it is a symbolic link, and files are opened without following a final
 * link, without blocking on a FIFO, and only when they are regular files. The root itself (Pi's
 * session folder, the system's temporary folder) is the user's choice and is taken as it is.
 */

import { constants as bufferConstants } from "node:buffer";
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync } from "node:fs";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";

/** A folder under a root: `root/parts[0]/parts[1]/…`. */
export interface OwnedPlace {
	root: string;
	parts: readonly string[];
	/** Made for the user alone (0700) and refused when another user owns it: a shared temporary folder. */
	private?: boolean;
}

/**
 * The name of the user's own folder in the shared temporary folder: `context-fold-<uid>` (by user
 * name where there is no uid), so that another user's folder never stands in the way.
 */
export function userFolderName(): string {
	const uid = process.getuid?.();
	if (uid !== undefined) return `context-fold-${uid}`;
	try {
		return `context-fold-${userInfo().username.replace(/[^\w.-]/g, "_")}`;
	} catch {
		return "context-fold-user";
	}
}

/** The folder's path. */
export function placePath(place: OwnedPlace): string {
	return join(place.root, ...place.parts);
}

/** Why the folder at `path` may not be used, or undefined when it is a folder this process may use. */
function folderProblem(path: string, isPrivate: boolean): string | undefined {
	const stat = lstatSync(path);
	if (stat.isSymbolicLink()) return `${path} is a symbolic link, which is not followed`;
	if (!stat.isDirectory()) return `${path} is not a folder`;
	const uid = process.getuid?.();
	if (isPrivate && uid !== undefined && stat.uid !== uid) return `${path} belongs to another user`;
	return undefined;
}

/** Makes the folder of `place` where missing, step by step, and returns its path; throws when a step may not be used. */
export function ownFolder(place: OwnedPlace): string {
	let path = place.root;
	for (const part of place.parts) {
		path = join(path, part);
		try {
			mkdirSync(path, { mode: place.private ? 0o700 : 0o777 });
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
		}
		const problem = folderProblem(path, place.private === true);
		if (problem) throw new Error(problem);
	}
	return path;
}

/**
 * Why the folder of `place` may not be read from, without making anything: undefined when every
 * step there is a folder, or when one is missing (nothing was written there yet).
 */
export function placeProblem(place: OwnedPlace): string | undefined {
	let path = place.root;
	for (const part of place.parts) {
		path = join(path, part);
		try {
			const problem = folderProblem(path, place.private === true);
			if (problem) return problem;
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			if (code === "ENOENT" || code === "ENOTDIR") return undefined;
			throw error;
		}
	}
	return undefined;
}

/** Most bytes read as text at once: Node's longest string, so a read never fails half way. */
const MAX_TEXT_BYTES: number = Math.min(512 * 1024 * 1024, bufferConstants.MAX_STRING_LENGTH);

/**
 * Opens `file` with `flags` (plus no following of a final link and no blocking) and returns the
 * descriptor when it is a regular file of at most `maxBytes`; closes it and throws otherwise.
 */
export function openRegular(file: string, flags: number, maxBytes = MAX_TEXT_BYTES, mode?: number): number {
	const fd = openSync(file, flags | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0), mode);
	try {
		const stat = fstatSync(fd);
		if (!stat.isFile()) throw new Error("it is not a regular file");
		if (stat.size > maxBytes) throw new Error(`it is larger than ${Math.floor(maxBytes / 1024 / 1024)} MiB`);
		return fd;
	} catch (error) {
		closeSync(fd);
		throw error;
	}
}

/** Why a file that is not there cannot be read. */
export const NO_SUCH_FILE = "no such file (moved or deleted?)";

/** Why a file could not be opened or read, in words, from the error the attempt threw. */
export function readFailure(error: unknown): string {
	const code = (error as { code?: unknown }).code;
	if (code === "ENOENT") return NO_SUCH_FILE;
	if (code === "ELOOP") return "it is a symbolic link, which is not followed";
	if (code === "EACCES" || code === "EPERM") return "permission denied";
	if (typeof code === "string") return code;
	return error instanceof Error ? error.message : String(error);
}

/** Reads a whole regular file of at most MAX_TEXT_BYTES (see openRegular): its text, or why it cannot be read. */
export function readRegularFile(path: string): { text: string } | { why: string } {
	let fd: number;
	try {
		fd = openRegular(path, constants.O_RDONLY);
	} catch (error) {
		return { why: readFailure(error) };
	}
	try {
		return { text: readFileSync(fd, "utf8") };
	} catch (error) {
		return { why: readFailure(error) };
	} finally {
		closeSync(fd);
	}
}

/**
 * The folder `path` names with every link on the way resolved as the kernel resolves them (a link
 * before a `..` followed first, where Node's own realpathSync drops `x/..` as text), or as written
 * when it cannot be.
 */
export function realDir(path: string): string {
	try {
		return realpathSync.native(path);
	} catch {
		return resolve(path);
	}
}

/**
 * What two paths are compared by: `path` with every link on the way resolved (see realDir), in lower
 * case where Node runs on Windows, whose file names ignore case (`C:\` and `c:\` are one folder, and
 * realpath keeps the case it was given). The platform is read at each call.
 */
export function pathKey(path: string): string {
	const real = realDir(path);
	return process.platform === "win32" ? real.toLowerCase() : real;
}
