/**
 * Reference visibility on a small synthetic session, exact: a policy that changes nothing sees
 * every reference; a policy that masks every tool result loses exactly the references only those
 * results held, and needs one recall per masked block that held them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageLike } from "../../src/core/block.ts";
import { maskLastN } from "../../src/replay/peers.ts";
import { BlockTable } from "../../src/replay/request-shape.ts";
import { measureVisibility, referencesOf } from "../../src/replay/visibility.ts";

const messages: MessageLike[] = [
	{ role: "user", content: [{ type: "text", text: "fix the bug in alpha" }] },
	{
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "src/alpha_one.ts" } }],
	},
	{
		role: "toolResult",
		toolCallId: "c1",
		toolName: "read",
		content: [{ type: "text", text: "export const betaValue = 123456;\nimport gamma_two from './gamma_two.ts'" }],
	},
	{ role: "assistant", content: [{ type: "text", text: "betaValue in src/alpha_one.ts is 123456; see gamma_two." }] },
];

function run(transform: (m: MessageLike[]) => void) {
	const table = new BlockTable();
	const requests = [messages.slice(0, 1), messages.slice(0, 3)].map((r) => {
		const copy = structuredClone(r);
		transform(copy);
		return table.shape(copy);
	});
	return measureVisibility(
		messages,
		[
			{ message: 1, request: 0, shape: requests[0] },
			{ message: 3, request: 1, shape: requests[1] },
		],
		table,
	);
}

test("distinctive tokens: identifiers, paths and long numbers, not plain words", () => {
	assert.deepEqual(
		[...referencesOf("see betaValue at src/a.ts line 123456, or 12345 because")],
		["betaValue", "src/a.ts", "123456"],
	);
});

test("visibility is 1.0 for a policy that changes nothing", () => {
	const v = run(() => {});
	assert.equal(v.references, 4);
	assert.equal(v.visible, 4);
	assert.equal(v.visibility, 1);
	assert.equal(v.recalls, 0);
});

test("masking every tool result loses exactly the references it hides", () => {
	const v = run((m) => maskLastN(m, 0));
	assert.equal(v.references, 4);
	assert.equal(v.visible, 1, "src/alpha_one.ts stays visible in the call's arguments");
	assert.equal(v.visibility, 0.25);
	assert.equal(v.recalls, 1, "one masked block holds the three unseen references");
	assert.equal(v.recallPoints[0].request, 1);
});

/** Visibility of `produced` (positions of model messages in `session`), each seen by a request of everything before it. */
function measureAll(session: MessageLike[], produced: number[]) {
	const table = new BlockTable();
	return measureVisibility(
		session,
		produced.map((message, request) => ({
			message,
			request,
			shape: table.shape(structuredClone(session.slice(0, message))),
		})),
		table,
	);
}

test("a string only a user message brought in is no reference; one the model repeats in a tool call's arguments is", () => {
	const session: MessageLike[] = [
		{ role: "user", content: [{ type: "text", text: "rename deltaWidget, then fix the bug in alpha" }] },
		...messages.slice(1, 3),
		{
			role: "assistant",
			content: [
				{ type: "text", text: "deltaWidget is the user's name for it." },
				{
					type: "toolCall",
					id: "c2",
					name: "edit",
					arguments: { path: "src/alpha_one.ts", newText: "betaValue = 7" },
				},
			],
		},
	];
	const v = measureAll(session, [1, 3]);
	// deltaWidget came from the user: not counted. src/alpha_one.ts and betaValue, in the second call's
	// arguments, came from the first call's arguments and its result: counted.
	assert.equal(v.references, 2);
	assert.equal(v.visible, 2);
});
