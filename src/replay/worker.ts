/**
 * The replay worker thread's entry: runs the one job it was started with (`workerData`) and posts
 * progress, then the figures or the failure, to its parent.
 */
import { parentPort, workerData } from "node:worker_threads";
import { type JobMessage, type ReplayJob, runJob } from "./jobs.ts";

const post = (message: JobMessage): void => parentPort?.postMessage(message);
try {
	const figures = await runJob(workerData as ReplayJob, (done, total) => post({ type: "progress", done, total }));
	post({ type: "figures", figures });
} catch (error) {
	post({ type: "error", message: error instanceof Error ? error.message : String(error) });
}
