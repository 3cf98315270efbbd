#!/usr/bin/env node
/**
 * The package's command (`npx context-fold replay …`). The command is TypeScript source: from a
 * checkout Node strips its types itself; installed under node_modules, where Node refuses to strip
 * types, it is loaded through jiti, the loader Pi itself loads extensions with (a dependency of the
 * @earendil-works/pi-coding-agent peer, resolved from there; no copy of our own).
 */
import { createRequire } from "node:module";

// From a checkout, `npm ci` there brings both what the command needs: Pi's SDK and a Node 22 that
// `npm run` puts first on the PATH.
const fromCheckout = !import.meta.url.includes("/node_modules/");
const checkoutHint = fromCheckout
	? "; in a checkout, run `npm ci` there first, then `npm run -s replay -- <arguments>` (npm ci brings a Node 22)"
	: "";
const [major, minor] = process.versions.node.split(".").map(Number);
// Node 23 strips TypeScript types by default only from 23.6 on (Pi 1.6 fails on the earlier ones too).
if (major < 22 || (major === 22 && minor < 19) || (major === 23 && minor < 6)) {
	process.stderr.write(
		`context-fold: Node >= 22.19 is needed (Pi 1.6 needs it; on the 23 line 23.6 or later); this is ${process.version}${checkoutHint}\n`,
	);
	process.exit(1);
}
let piVersion;
try {
	// Pi's manifest is the nearest package.json above its entry that names it (a directory of the
	// user's own may be called dist as well).
	const { readFileSync } = await import("node:fs");
	let at = new URL(".", import.meta.resolve("@earendil-works/pi-coding-agent"));
	for (; !piVersion && at.pathname !== "/"; at = new URL("..", at)) {
		try {
			const manifest = JSON.parse(readFileSync(new URL("package.json", at), "utf8"));
			if (manifest.name === "@earendil-works/pi-coding-agent") piVersion = manifest.version;
		} catch {}
	}
} catch {
	piVersion = undefined;
}
if (
	!piVersion ||
	Number(piVersion.split(".")[0]) < 1 ||
	(Number(piVersion.split(".")[0]) === 1 && Number(piVersion.split(".")[1]) < 6)
) {
	// A copy `pi install` made has no packages beside it: Pi installs no peers for the packages it manages.
	const installedHint =
		!fromCheckout && !piVersion
			? "; a copy Pi installed (pi install) has none beside it: install the package with npm (which brings Pi's SDK beside it), or run the replay from a checkout (docs/replay.md)"
			: "";
	const why = `the replay runs Pi's SDK and needs @earendil-works/pi-coding-agent >= 1.6 installed beside it (found ${piVersion ?? "none"})${checkoutHint}${installedHint}`;
	// Asked for help, the command says what it is and why it cannot list its options here.
	if (process.argv.slice(2).some((arg) => arg === "--help" || arg === "-h")) {
		process.stdout.write(
			`usage: context-fold replay <session.jsonl…> [options] (docs/replay.md lists the options)\n${why}\n`,
		);
		process.exit(0);
	}
	process.stderr.write(`context-fold: ${why}\n`);
	process.exit(1);
}
// Run as this package's `replay` script (`npm run replay`, or `npm --prefix <checkout> run replay` from a
// project), npm starts it in the package's own directory: relative paths and `--mine` mean where
// the user ran npm, which npm names in INIT_CWD.
if (
	process.env.npm_package_name === "context-fold" &&
	process.env.npm_lifecycle_event === "replay" &&
	process.env.INIT_CWD
) {
	process.chdir(process.env.INIT_CWD);
}
const entry = new URL("../src/replay/cli.ts", import.meta.url);
let cli;
try {
	cli = await import(entry.href);
} catch (error) {
	if (error?.code !== "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING") throw error;
	const pi = import.meta.resolve("@earendil-works/pi-coding-agent");
	const { createJiti } = createRequire(pi)("jiti");
	cli = await createJiti(import.meta.url).import(entry.href);
}
// A reader that stops early (`| head`) closes the pipe: the rest of the output has nowhere to go.
// Any other failure to write the report (a full disk, a closed descriptor) is said in one line.
process.stdout.on("error", (error) => {
	if (error?.code === "EPIPE") process.exit(process.exitCode ?? 0);
	try {
		process.stderr.write(
			`context-fold replay: the report could not be written to stdout: ${error?.message ?? error}\n`,
		);
	} catch {
		// stderr is gone too: the exit code says it
	}
	process.exit(1);
});
// Progress and notices on stderr are a courtesy: a closed or full stderr does not stop the replay.
process.stderr.on("error", () => {});
process.exitCode = await cli.main(process.argv.slice(2));
