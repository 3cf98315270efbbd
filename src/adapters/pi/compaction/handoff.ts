/**
 * `/fold-handoff [goal]`: writes a deterministic seed for a fresh session, citing every block of the
 * branch under its fold code (the raw tail's too), to
 * `<sessionDir>/context-fold/<sessionId>/handoff-<timestamp>.md` (an in-memory session's to a folder
 * of the user's own, `<tmp>/context-fold-<uid>/in-memory/`, readable by the user alone), never through a
 * link (owned-files.ts). With a UI it offers to start a new session seeded with it; headless it
 * prints the path alone on one line of stderr.
 */
import { lstatSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { Value } from "typebox/value";
import { linearize, type MessageLike, renderContent } from "../../../core/block.ts";
import { foldCode } from "../../../core/digest.ts";
import { extractSeedRecord } from "../../../core/index/extract.ts";
import { summarizeIndex } from "../../../core/index/merge.ts";
import { type CarriedSeed, handoffSeedIn, renderHandoff, renderSummary, seedParentOf } from "../../../core/summary.ts";
import { errorText } from "../error-text.ts";
import type { FoldEngine } from "../fold/engine.ts";
import { ownFolder, pathKey, userFolderName } from "../owned-files.ts";
import { say as sayTo } from "../ui/command-output.ts";
import { branchRecords, branchView, unrecordedBlocks } from "./deterministic-compaction.ts";
import type { IndexStore } from "./seed-index-store.ts";

/** customType of the message that seeds a new session. */
export const HANDOFF_MESSAGE_TYPE = "contextfold.handoff";

/**
 * Builds the seed text of the current branch and writes it; returns its path, its text, this session's
 * file and the sha256 of each block it may cite, by code (the seeded session checks them:
 * seedSource). Every block
 * of the branch is cited under its fold code, the raw tail's too (the code its id gives it, which the
 * new session resolves in this session's file: parent-session.ts); nothing is written to this session.
 * `warn` hears of a block whose code collides with another's (it is cited without one).
 */
/**
 * The seed a session started from, which its own handoff hands on (its goal, its facts), as a
 * compaction carries it: the seed message of the offer, else a seed passed as a prompt, with the code
 * that reads that prompt back (cited like the rest of the branch). Its own codes are of this
 * session's parent, which the new session does not read (one session back only): its tags go quoted.
 */
function startingSeed(
	branch: readonly { type?: string; customType?: string; content?: unknown }[],
	messages: readonly MessageLike[],
	engine: FoldEngine,
): CarriedSeed | undefined {
	const seeded = branch.find((e) => e.type === "custom_message" && e.customType === HANDOFF_MESSAGE_TYPE);
	if (seeded) return typeof seeded.content === "string" ? { text: seeded.content, unread: "beyond" } : undefined;
	for (const block of linearize(messages)) {
		const text = block.kind === "user" ? handoffSeedIn(block.text) : undefined;
		if (text === undefined) continue;
		const code = engine.registry.record(block.id)?.code ?? (block.durable ? foldCode(block.id) : undefined);
		return { text, ...(code ? { code } : {}), unread: "beyond" };
	}
	return undefined;
}

function writeHandoff(
	goal: string,
	ctx: Pick<ExtensionCommandContext, "sessionManager">,
	engine: FoldEngine,
	index: IndexStore,
	now: Date,
	warn: (message: string) => void = () => {},
): { path: string; text: string; hashes: Record<string, string>; parentSession: string | undefined } {
	const branch = ctx.sessionManager.getBranch() as {
		id?: string;
		type?: string;
		message?: MessageLike;
		customType?: string;
		content?: unknown;
	}[];
	const messages = branch.flatMap((e) => (e.type === "message" && e.message ? [e.message] : []));
	const seed = startingSeed(branch, messages, engine);
	// Coded blocks tag the seed: folded and compacted ones by their records, the rest by their own codes.
	// The branch's messages count turns from its first, with no compaction's base.
	const tail = unrecordedBlocks(messages, engine, warn, 0);
	const cited = [...engine.registry.allRecords(), ...tail];
	const live = extractSeedRecord({
		kind: "compaction",
		seq: 0,
		messages,
		spans: cited,
		recordedOnly: true,
	});
	const summary = renderSummary({
		summary: summarizeIndex([
			...branchRecords(index, branchView(new Set(branch.map((e) => e.id ?? "")), engine)),
			live,
		]),
		seed,
		scope: `The parent session holds ${messages.length} messages on this branch.`,
	});
	const parent = ctx.sessionManager.getSessionFile();
	const linked = parent ? linkedTarget(parent) : undefined;
	if (linked !== undefined)
		warn(
			`context-fold: this session's file ${parent} is a symbolic link (to ${linked}), which context-fold never follows to read a parent: a session seeded from this handoff cannot read the seed's codes back (the seed's text is all it has of this session)`,
		);
	const text = renderHandoff({ goal, parentSession: parent, writtenAt: now.toISOString(), summary });
	// An in-memory session's seed goes to a folder of the user's own in the shared temporary folder,
	// named for the user: one user's folder there never stands in another's way.
	const dir =
		index.ownFolder() ?? ownFolder({ root: tmpdir(), parts: [userFolderName(), "in-memory"], private: true });
	const path = writeNew(
		dir,
		`handoff-${now.toISOString().replace(/[:.]/g, "-")}`,
		text,
		index.folder() ? 0o666 : 0o600,
	);
	// Every code the seed may cite: a seeded session checks a copy against it where the parent's own
	// fold record is missing (the raw tail, never folded; a record lost from the file).
	const hashes: Record<string, string> = {};
	for (const record of cited) if (record.sha256) hashes[record.code] = record.sha256;
	return { path, text, hashes, parentSession: parent };
}

/** Where the symbolic link `path` points, resolved; undefined for a file that is no link (or cannot be read). */
function linkedTarget(path: string): string | undefined {
	try {
		return lstatSync(path).isSymbolicLink() ? realpathSync(path) : undefined;
	} catch {
		return undefined;
	}
}

/**
 * Writes `text` to a file of its own in `dir`, `<stem>.md` or, where one by that name is there (a
 * handoff in another process in the same millisecond), `<stem>-2.md` and on; never over a file.
 * Returns its path.
 */
function writeNew(dir: string, stem: string, text: string, mode: number): string {
	for (let n = 1; ; n++) {
		const path = join(dir, `${stem}${n === 1 ? "" : `-${n}`}.md`);
		try {
			writeFileSync(path, text, { encoding: "utf8", flag: "wx", mode });
			return path;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST" || n >= 100) throw error;
		}
	}
}

/** What a seed message carries beside its text: where the seed was written, the session its codes name, their hashes. */
const SeedDetails = Type.Object({
	path: Type.Optional(Type.String()),
	/** The session file the seed's codes point into (the parent; a fork or clone of the seeded session names another). */
	parentSession: Type.Optional(Type.String({ minLength: 1 })),
	/** fold code → the sha256 the handoff took of the block it names. */
	hashes: Type.Optional(Type.Record(Type.String(), Type.String({ pattern: "^[0-9a-f]{64}$" }))),
});

/**
 * What the seed message on `branch` says of the codes it cites: whether there is one (`seeded`), the
 * session file they point into, and the sha256 the handoff took of each block, by code. The hashes
 * are absent for a seed written before seeds carried them. A seeded session reads its parent's codes
 * from that file (Pi's header names the session a fork or clone was copied from, not the seed's
 * parent) and checks a copy without a fold record there against the hash. Without a seed message, the
 * first seed passed as a prompt (`pi -p "$(cat seed)"`, this version's or 0.5.1's) that names a parent
 * session other than one of `own` (this session's file, and the session Pi copied it from: a seed
 * pasted back into its own session names it, and a fork or clone of that session holds its history)
 * is read the same way, without hashes (such a copy is served unverified, saying so): the one the
 * prompt's request linked (index.ts).
 */
export function seedSource(
	branch: readonly unknown[],
	own: readonly (string | undefined)[] = [],
): {
	seeded: boolean;
	parentSession?: string;
	hashes: ReadonlyMap<string, string>;
} {
	for (const entry of branch) {
		const e = entry as { type?: unknown; customType?: unknown; details?: unknown };
		if (e.type !== "custom_message" || e.customType !== HANDOFF_MESSAGE_TYPE) continue;
		if (!Value.Check(SeedDetails, e.details)) return { seeded: true, hashes: new Map() };
		const { parentSession, hashes } = e.details;
		return {
			seeded: true,
			...(parentSession ? { parentSession } : {}),
			hashes: new Map(Object.entries(hashes ?? {})),
		};
	}
	for (const entry of branch) {
		const e = entry as { type?: unknown; message?: { role?: unknown; content?: unknown } };
		if (e.type !== "message" || e.message?.role !== "user") continue;
		const parentSession = seedParentOf(renderContent(e.message.content).text);
		if (parentSession && !own.some((file) => sameFile(parentSession, file)))
			return { seeded: true, parentSession, hashes: new Map() };
	}
	return { seeded: false, hashes: new Map() };
}

/**
 * True when `file` and `other` name one file: the same real path where both exist, else the same
 * resolved path, in any case on Windows (see pathKey).
 */
export function sameFile(file: string, other: string | undefined): boolean {
	return other !== undefined && pathKey(file) === pathKey(other);
}

/** Registers `/fold-handoff`. */
export function registerHandoff(
	pi: ExtensionAPI,
	engine: FoldEngine,
	index: IndexStore,
	withheld: () => boolean = () => false,
): void {
	pi.registerCommand("fold-handoff", {
		description: "Write a deterministic handoff seed of this session (optionally: /fold-handoff <goal>)",
		handler: async (args, ctx) => {
			// Headless, its lines go to stderr, where its path goes (in print mode Pi keeps stdout for the
			// reply), and a seed not written makes pi exit 1: a script reads the path off stderr's last line
			// only when the exit code says there is one.
			const say = (message: string, level: "info" | "error", failed = level === "error") =>
				sayTo(ctx, message, level, failed, "stderr");
			let written: ReturnType<typeof writeHandoff>;
			try {
				// Asked for during a run, the seed waits for its end: the new session starts only after it,
				// and a seed of the run's middle would leave its last turns out.
				if (!ctx.isIdle()) {
					say("context-fold: the handoff seed is written once the agent's run is over", "info");
					await ctx.waitForIdle();
				}
				// A seed's codes are read by recall_folded alone: while the tool selection leaves it out (of this
				// session, and of the session the seed starts), a seed would point at a tool the model lacks.
				if (withheld()) {
					say(
						"context-fold: no handoff seed written: recall_folded is not active (the tool selection or another extension left it out), and a seed's codes only that tool reads",
						"error",
					);
					return;
				}
				// A session with no message has nothing to hand on, and Pi has not written its file yet: a
				// seed would name a parent that does not exist.
				if (!ctx.sessionManager.getBranch().some((e) => (e as { type?: string }).type === "message")) {
					say("context-fold: nothing to hand off yet: this session has no messages", "info", true);
					return;
				}
				// What writing the seed works around is said; the seed is still written, its path last.
				written = writeHandoff(args ?? "", ctx, engine, index, new Date(), (message) =>
					say(message, "error", false),
				);
			} catch (error) {
				say(`context-fold: could not write the handoff seed: ${errorText(error)}`, "error");
				return;
			}
			if (!ctx.hasUI) {
				// Alone on one line of stderr: in print mode Pi keeps stdout for the model's reply.
				process.stderr.write(`${written.path}\n`);
				return;
			}
			ctx.ui.notify(`Handoff seed written to ${written.path}`, "info");
			try {
				const start = await ctx.ui.confirm("Start a new session?", `Seed a new session with ${written.path}?`);
				if (!start) return;
				const parent = written.parentSession;
				await ctx.newSession({
					parentSession: parent,
					setup: async (sm) => {
						sm.appendCustomMessageEntry(HANDOFF_MESSAGE_TYPE, written.text, true, {
							path: written.path,
							...(parent ? { parentSession: parent } : {}),
							hashes: written.hashes,
						});
					},
				});
			} catch (error) {
				say(
					`context-fold: the seed is written (${written.path}), but no new session was started: ${errorText(error)}`,
					"error",
				);
			}
		},
	});
}
