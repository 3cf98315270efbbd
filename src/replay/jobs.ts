/**
 * Replay jobs, one per (session, policy), run in parallel worker threads. Each job reads its session,
 * replays one policy and returns that policy's figures (plain data), so the figures do not depend on
 * where or in which order the jobs ran. A pool of `jobs` workers takes them in order; with one job at
 * a time (the default: each worker loads Pi afresh, which cost more than it saved on a loaded
 * 2-core machine), or when the source runs from under node_modules (where Node does not strip types, so a
 * worker cannot load it), they run in this thread instead.
 */
import { Worker } from "node:worker_threads";
import { type ImagePricing, imageSize, visionTokens } from "./image-size.ts";
import type { ReplayPolicy } from "./policy-run.ts";
import { PRICE_MODELS } from "./price.ts";
import { type PolicyFigures, policyFigures } from "./report.ts";
import { replayPolicy } from "./run.ts";
import { type ReplayScript, replayScript } from "./script.ts";
import { readPiSession, SessionFileError } from "./session-file.ts";

/** One policy's replay of one session file. */
export interface ReplayJob {
	file: string;
	policy: ReplayPolicy;
	price: string;
	window: number;
	warming: boolean;
	/** How images are priced: as their placeholder text, or by pixel size as the provider charges. */
	images: ImagePricing;
	/** False: no hook column (see RunOptions.timeHooks). */
	timeHooks?: boolean;
	/** False: no foresight floors (see policyFigures). */
	foresight?: boolean;
}

/** A message from a worker: progress, the figures, or the failure. */
export type JobMessage =
	| { type: "progress"; done: number; total: number }
	| { type: "figures"; figures: PolicyFigures }
	| { type: "error"; message: string };

const scripts = new Map<string, ReplayScript>();

/**
 * The replay script of one session file, read once per thread. A file Pi would not open as a session,
 * or a session without a user message or without a recorded reply (nothing to replay), is refused with a
 * SessionFileError.
 */
export function sessionScript(file: string): ReplayScript {
	let script = scripts.get(file);
	if (!script) {
		const session = readPiSession(file);
		script = replayScript(session, file);
		if (script.turns.length === 0) {
			const { unread } = session;
			const lines = `line${unread.length === 1 ? "" : "s"} ${unread.slice(0, 3).join(", ")}${unread.length > 3 ? ", …" : ""}`;
			const torn = unread.length > 0 ? ` (${lines} not a JSON object, skipped as Pi skips them)` : "";
			throw new SessionFileError(file, `a Pi session without a user message${torn}: nothing to replay`);
		}
		// A prompt with no recorded reply has no request to price: its figures would read as a replay.
		if (script.turns.every((turn) => turn.assistants.length === 0))
			throw new SessionFileError(file, "a Pi session without a recorded reply of the model: nothing to replay");
		// Pi 1.6 looks a tool's prompt guidelines up by name in a plain object, so a tool named after a
		// key of Object.prototype (`constructor`, `toString`) breaks its system prompt: no run can start.
		const inherited = script.toolNames.find((name) => name in Object.prototype);
		if (inherited !== undefined)
			throw new SessionFileError(file, `a recorded tool is named "${inherited}", a name Pi 1.6 cannot load`);
		scripts.set(file, script);
	}
	return script;
}

/** Runs one job in this thread. */
export async function runJob(
	job: ReplayJob,
	onProgress: (done: number, total: number) => void,
): Promise<PolicyFigures> {
	const script = sessionScript(job.file);
	const model = PRICE_MODELS[job.price];
	// Pi warms no cache without a lifetime (see PriceModel.warmed), whatever the job asks.
	const warming = job.warming && model.warmed;
	const cache = { model, warming };
	const imageTokens =
		job.images === "size" ? (data: string) => visionTokens(imageSize(data), model.vision) : undefined;
	const run = await replayPolicy(script, job.policy, {
		window: job.window,
		cache,
		onProgress,
		imageTokens,
		timeHooks: job.timeHooks,
	});
	return policyFigures(script, run, model, warming, job.window, job.foresight);
}

const WORKER = new URL("./worker.ts", import.meta.url);

function inWorker(job: ReplayJob, onProgress: (done: number, total: number) => void): Promise<PolicyFigures> {
	return new Promise((resolve, reject) => {
		const worker = new Worker(WORKER, { workerData: job });
		let settled = false;
		worker.on("message", (message: JobMessage) => {
			if (message.type === "progress") onProgress(message.done, message.total);
			else {
				settled = true;
				void worker.terminate();
				if (message.type === "figures") resolve(message.figures);
				else reject(new Error(message.message));
			}
		});
		worker.on("error", (error) => {
			settled = true;
			reject(error);
		});
		worker.on("exit", (code) => {
			if (!settled) reject(new Error(`replay worker exited with code ${code}`));
		});
	});
}

/**
 * Whether replays can run in worker threads: from a checkout, not from an installed copy, whose
 * TypeScript Node does not strip under node_modules (the command loads it through jiti instead).
 */
export const WORKERS_RUN = !import.meta.url.includes("/node_modules/");

/**
 * Runs every job, at most `parallel` at a time, and returns their figures in job order. `onProgress`
 * gets the job's index with each progress report.
 */
export async function runJobs(
	jobs: readonly ReplayJob[],
	parallel: number,
	onProgress: (job: number, done: number, total: number) => void,
): Promise<PolicyFigures[]> {
	const threaded = parallel > 1 && jobs.length > 1 && WORKERS_RUN;
	const results: PolicyFigures[] = new Array(jobs.length);
	let next = 0;
	const lane = async (): Promise<void> => {
		while (next < jobs.length) {
			const i = next++;
			const progress = (done: number, total: number): void => onProgress(i, done, total);
			results[i] = await (threaded ? inWorker(jobs[i], progress) : runJob(jobs[i], progress));
		}
	};
	await Promise.all(Array.from({ length: threaded ? Math.min(parallel, jobs.length) : 1 }, lane));
	return results;
}
