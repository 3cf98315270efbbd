/**
 * Fails early, with a clear message, when the tests would run on a Node that Pi cannot start on.
 * `npm ci` brings a Node 22 binary for this platform (the dev-only package in scripts/test-node, whose
 * optional dependencies are the per-platform node-* packages) as node_modules/.bin/node, and npm
 * scripts put that directory first on PATH, so this normally passes after the install command.
 */
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
	console.error(
		`context-fold: Node ${process.versions.node} is too old; Pi 1.6 needs >= 22.19.\n` +
			"Run the tests through npm (npm test), which puts node_modules/.bin/node first on PATH.\n" +
			"npm ci installs that Node 22 on linux, macOS and Windows (x64 or arm64) unless optional\n" +
			"dependencies are omitted; on any other platform install Node >= 22.19 yourself.",
	);
	process.exit(1);
}
