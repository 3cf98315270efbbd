/**
 * The replay's hook time covers every `context` handler a policy's extension registers, summed per
 * request (context-fold registers two: the fold pass and the footer refresh), with the clone time of
 * the first; other events pass through unwrapped. Driven by a fake clock the handlers advance. The
 * clone of a request's input is handed on once its first handler is timed, as that handler got it.
 * A replay told not to time hooks nor work out the foresight floors has neither and the same figures.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import type { ExtensionAPI, ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { HookTimer, timed } from "../../src/replay/hook-timer.ts";
import { type ReplayJob, runJob } from "../../src/replay/jobs.ts";
import type { PolicyFigures } from "../../src/replay/report.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

function host(): { pi: ExtensionAPI; handlers: [string, Handler][] } {
	const handlers: [string, Handler][] = [];
	const pi = {
		on(event: string, handler: Handler) {
			handlers.push([event, handler]);
		},
	};
	return { pi: pi as unknown as ExtensionAPI, handlers };
}

test("a request's hook time is the sum of every context handler, its clone time the first one's", async () => {
	let clock = 0;
	const onEnd: Handler = () => undefined;
	const factory: ExtensionFactory = (pi) => {
		pi.on("context", () => {
			clock += 5;
			return undefined;
		});
		pi.on("turn_end", onEnd as never);
		pi.on("context", async () => {
			clock += 3;
			return undefined;
		});
	};
	const timer = new HookTimer();
	const { pi, handlers } = host();
	await timed(factory, timer, () => clock)(pi);

	assert.deepEqual(
		handlers.map(([event]) => event),
		["context", "turn_end", "context"],
	);
	assert.equal(handlers[1][1], onEnd, "other events are registered as they are");
	const event = { type: "context", messages: [{ role: "user", content: "hi", timestamp: 1 }] };
	assert.ok(timer.fresh, "the first handler of a request clones its input");
	await handlers[0][1](event, {});
	assert.ok(!timer.fresh, "later handlers of the same request do not clone again");
	await handlers[2][1](event, {});
	assert.deepEqual(timer.take(), { hookMs: 8, cloneMs: 0 });
	assert.deepEqual(timer.take(), {}, "taking starts the next request's");
	assert.ok(timer.fresh);

	await handlers[2][1](event, {});
	assert.deepEqual(timer.take(), { hookMs: 3, cloneMs: 0 });
});

test("the clone of a request's input is handed on after its first handler, as that handler got it", async () => {
	const factory: ExtensionFactory = (pi) => {
		for (let k = 0; k < 2; k++) {
			pi.on("context", (event) => {
				for (const message of event.messages as { content: unknown }[]) message.content = "folded";
				return undefined;
			});
		}
	};
	const timer = new HookTimer();
	const inputs: unknown[] = [];
	const { pi, handlers } = host();
	await timed(factory, timer, undefined, (messages) => inputs.push(messages))(pi);
	const event = { type: "context", messages: [{ role: "user", content: "hi", timestamp: 1 }] };
	await handlers[0][1](event, {});
	assert.deepEqual(
		inputs,
		[[{ role: "user", content: "hi", timestamp: 1 }]],
		"the input before the handler changed it",
	);
	await handlers[1][1](event, {});
	assert.equal(inputs.length, 1, "one per request");
	timer.take();
	await handlers[0][1](event, {});
	assert.deepEqual(inputs[1], [{ role: "user", content: "folded", timestamp: 1 }]);
});

test("a replay told not to time hooks or work out floors has neither, and every other figure as it was", async () => {
	const file = fileURLToPath(new URL("../fixtures/sessions/debug-branchy.jsonl", import.meta.url));
	const job = (lean: boolean): ReplayJob => ({
		file,
		policy: { name: "context-fold", kind: "context-fold", settings: {} },
		price: "anthropic-5m",
		window: 140_000,
		warming: true,
		images: "text",
		...(lean ? { timeHooks: false, foresight: false } : {}),
	});
	const pi = (lean: boolean): ReplayJob => ({ ...job(lean), policy: { name: "pi", kind: "pi" } });
	const [full, lean, piFull, piLean] = await Promise.all(
		[job(false), job(true), pi(false), pi(true)].map((j) => runJob(j, () => {})),
	);
	assert.ok(full.hookMsP50 !== null && full.cloneMsP50 !== null, "timed by default");
	assert.equal(lean.hookMsP50, null);
	assert.equal(lean.cloneMsP50, null);
	assert.ok(piFull.foresight !== null && piFull.foresightScheduled !== null, "floors by default");
	assert.equal(piLean.foresight, null);
	assert.equal(piLean.foresightAtBar, null);
	assert.equal(piLean.foresightScheduled, null);
	const rest = ({
		hookMsP50,
		hookMsP99,
		cloneMsP50,
		foresight,
		foresightAtBar,
		foresightScheduled,
		...r
	}: PolicyFigures) => r;
	assert.deepEqual(rest(lean), rest(full));
	assert.deepEqual(rest(piLean), rest(piFull));
});
