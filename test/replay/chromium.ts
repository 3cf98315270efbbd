/**
 * Headless Chromium (Debian's `chromium`, or `chromium-browser`) for the HTML report: found on PATH,
 * and run one way for the browser test and for the script that regenerates the docs' screenshot
 * (scripts/replay-screenshot.ts): headless, no sandbox, no GPU, no network of its own, a fresh
 * profile each run, scrollbars hidden. A screenshot of a page's top `width` × `height` pixels,
 * alone or with the page's DOM after load, from one run of the browser.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What the browser test and the screenshot script say when there is no browser. */
export const NO_CHROMIUM =
	"no chromium on PATH (Debian: apt-get install chromium); the HTML report is not checked in a browser";

/** The path of a Chromium on PATH, or undefined. */
export function findChromium(): string | undefined {
	for (const name of ["chromium", "chromium-browser"]) {
		const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
		if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
	}
	return undefined;
}

/** Runs headless `binary` with `args` in a fresh profile under `dir`; its stdout, or an error with its stderr. */
function run(binary: string, dir: string, args: string[]): string {
	const result = spawnSync(
		binary,
		[
			"--headless",
			"--no-sandbox",
			"--disable-gpu",
			"--disable-quic",
			"--no-first-run",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
			"--hide-scrollbars",
			"--run-all-compositor-stages-before-draw",
			"--virtual-time-budget=10000",
			`--user-data-dir=${mkdtempSync(join(dir, "profile-"))}`,
			...args,
		],
		{ encoding: "utf8", timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
	);
	if (result.status !== 0) throw new Error(`chromium failed (${result.status ?? result.signal}): ${result.stderr}`);
	return result.stdout;
}

/** Runs `use` with a temporary directory, removed after. */
function inTemp<T>(use: (dir: string) => T): T {
	const dir = mkdtempSync(join(tmpdir(), "cf-chromium-"));
	try {
		return use(dir);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** A PNG of the top `width` × `height` CSS pixels of the page at `url` (one device pixel each). */
export function screenshot(binary: string, url: string, width: number, height: number): Buffer {
	return shot(binary, url, width, height, false).png;
}

/**
 * The page at `url` once loaded, from one run of the browser (each run costs about 2 s of CPU): its
 * serialised DOM (`--dump-dom`) and its screenshot, as `screenshot` takes it.
 */
export function domAndScreenshot(
	binary: string,
	url: string,
	width: number,
	height: number,
): { dom: string; png: Buffer } {
	return shot(binary, url, width, height, true);
}

/** A screenshot of the page at `url` and, when `dom`, its serialised DOM (else empty). */
function shot(binary: string, url: string, width: number, height: number, dom: boolean) {
	return inTemp((dir) => {
		const file = join(dir, "shot.png");
		const out = run(binary, dir, [
			`--screenshot=${file}`,
			`--window-size=${width},${height}`,
			"--force-device-scale-factor=1",
			...(dom ? ["--dump-dom"] : []),
			url,
		]);
		return { dom: dom ? out : "", png: readFileSync(file) };
	});
}
