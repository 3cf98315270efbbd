/**
 * The context size the hook hands the policy: Pi's rule (the last valid response's usage plus Pi's
 * estimate of every later message) worked out from the request, with Pi asked only where the request
 * cannot tell: before any response, and after a compaction until Pi has once reported a size.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { calculateContextTokens, estimateTokens } from "@earendil-works/pi-coding-agent";
import { ContextUsage } from "../../src/adapters/pi/fold/context-usage.ts";
import type { MessageLike } from "../../src/core/block.ts";
import { bashSession, loadStub } from "./stub-pi.ts";

const usage = (input: number, cacheRead = 0) => ({
	input,
	output: 50,
	cacheRead,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const user = (text: string): MessageLike => ({ role: "user", content: text, timestamp: 1 });
const reply = (u: ReturnType<typeof usage>, stopReason = "toolUse"): MessageLike => ({
	role: "assistant",
	content: [{ type: "toolCall", id: `c${u.input}`, name: "bash", arguments: { command: "ls" } }],
	usage: u,
	stopReason,
	timestamp: 2,
});
const result = (id: string, text: string): MessageLike => ({
	role: "toolResult",
	toolCallId: id,
	toolName: "bash",
	content: [{ type: "text", text }],
	isError: false,
	timestamp: 3,
});
const summary = (tokensBefore: number): MessageLike => ({
	role: "compactionSummary",
	summary: "earlier work",
	tokensBefore,
	timestamp: 4,
});
const est = (m: MessageLike) => estimateTokens(m as never);
const never = () => assert.fail("Pi was asked although the request tells");

test("the last valid response's usage plus Pi's estimate of every later message", () => {
	const tail = [result("c1200", "a".repeat(4000)), user("go on")];
	const messages = [user("start"), reply(usage(1200, 800)), ...tail];
	const want = calculateContextTokens(usage(1200, 800)) + est(tail[0]) + est(tail[1]);
	assert.equal(new ContextUsage().tokens(messages, never), want);
});

test("aborted, failed and empty responses are skipped, as Pi skips them; a failed or aborted one adds nothing", () => {
	const valid = reply(usage(900));
	const empty = { ...usage(0, 0), output: 0 };
	const failed = { ...reply(usage(5000), "error"), content: [{ type: "text", text: "x".repeat(40_000) }] };
	const later = [result("c900", "ok"), failed, reply(usage(4000), "aborted"), reply(empty, "stop")];
	const messages = [user("start"), valid, ...later];
	// pi-ai sends neither the failed nor the aborted reply in any request.
	const want = calculateContextTokens(usage(900)) + est(later[0]) + est(later[3]);
	assert.equal(new ContextUsage().tokens(messages, never), want);
});

test("a response that reports output tokens and no prompt is estimated, not taken for a context of 50 tokens", () => {
	const valid = reply(usage(900));
	const promptless = reply(usage(0, 0), "stop");
	const later = [result("c900", "a".repeat(40_000)), promptless];
	const messages = [user("start"), valid, ...later];
	const want = calculateContextTokens(usage(900)) + est(later[0]) + est(later[1]);
	assert.equal(new ContextUsage().tokens(messages, never), want);
	assert.ok(want > 10_000);
	// Where no response ever reported a prompt, Pi's figure counts output alone: the request is estimated.
	const only = [user("start"), promptless, result("c0", "a".repeat(40_000)), promptless];
	assert.equal(
		new ContextUsage().tokens(only, () => 50),
		undefined,
	);
});

test("before any response Pi is asked (its estimate counts the system prompt the request lacks)", () => {
	assert.equal(
		new ContextUsage().tokens([user("hello")], () => 321),
		321,
	);
});

test("after a compaction Pi is asked until it reports a size once, and again after a reset", () => {
	const usageOf = new ContextUsage();
	const kept = [summary(90_000), user("kept"), reply(usage(70_000)), result("c70000", "old")];
	let asked = 0;
	assert.equal(
		usageOf.tokens(kept, () => {
			asked++;
			return null;
		}),
		null,
		"no response since the compaction: Pi cannot tell",
	);
	const fresh = [...kept, reply(usage(12_000)), result("c12000", "new")];
	assert.equal(
		usageOf.tokens(fresh, () => {
			asked++;
			return 12_345;
		}),
		12_345,
	);
	assert.equal(asked, 2);
	const next = [...fresh, reply(usage(13_000)), user("more")];
	assert.equal(usageOf.tokens(next, never), calculateContextTokens(usage(13_000)) + est(user("more")));
	const other = [summary(50_000), ...next.slice(1)];
	assert.equal(
		usageOf.tokens(other, () => 7),
		7,
		"a different compaction is asked about again",
	);
	usageOf.reset();
	assert.equal(
		usageOf.tokens(other, () => 8),
		8,
		"a /tree move or a new session forgets",
	);
});

test("right after a switch of model the figure, which holds thinking pi-ai no longer sends, is not given", () => {
	const a = { provider: "fa", api: "anthropic-messages", id: "model-a" };
	const b = { provider: "fo", api: "openai-completions", id: "model-b" };
	const thought = (model: typeof a, u: ReturnType<typeof usage>, thinking = "z".repeat(35_000)): MessageLike => ({
		role: "assistant",
		provider: model.provider,
		api: model.api,
		model: model.id,
		content: [
			{ type: "thinking", thinking },
			{ type: "text", text: "thought." },
		],
		usage: u,
		stopReason: "stop",
		timestamp: 2,
	});
	const messages = [user("start"), thought(a, usage(20_000)), user("go on")];
	const whole = calculateContextTokens(usage(20_000)) + est(user("go on"));
	assert.equal(new ContextUsage().tokens(messages, never, a), whole, "the same model is sent its thinking");
	assert.equal(new ContextUsage().tokens(messages, never), whole, "without a model nothing is left out");
	assert.equal(
		new ContextUsage().tokens(messages, never, b),
		undefined,
		"the pass estimates the request itself: the figure holds thinking, raw or folded, model b is not sent",
	);
	const thoughtless = [user("start"), thought(a, usage(20_000), ""), user("go on")];
	assert.equal(new ContextUsage().tokens(thoughtless, never, b), whole, "a switch with no thinking keeps the figure");
	const answered = [...messages, thought(b, usage(9_000)), user("more")];
	assert.equal(
		new ContextUsage().tokens(answered, never, b),
		calculateContextTokens(usage(9_000)) + est(user("more")),
		"once the new model has answered, its own figure is used",
	);
});

test("right after a switch of model the figure of a conversation holding an image is not given", () => {
	const a = { provider: "fa", api: "anthropic-messages", id: "model-a" };
	const b = { provider: "fo", api: "openai-completions", id: "model-b", images: false };
	const answer = (u: ReturnType<typeof usage>): MessageLike => ({
		role: "assistant",
		provider: a.provider,
		api: a.api,
		model: a.id,
		content: [{ type: "text", text: "seen." }],
		usage: u,
		stopReason: "stop",
		timestamp: 2,
	});
	const shot: MessageLike = {
		role: "user",
		content: [
			{ type: "text", text: "look" },
			{ type: "image", data: "aGVsbG8=", mimeType: "image/png" },
		],
		timestamp: 1,
	};
	const messages = [shot, answer(usage(20_000)), user("go on")];
	const whole = calculateContextTokens(usage(20_000)) + est(user("go on"));
	assert.equal(new ContextUsage().tokens(messages, never, a), whole, "the same model: its figure");
	assert.equal(
		new ContextUsage().tokens(messages, never, b),
		undefined,
		"model b is sent the image as a placeholder, which the figure counted in full: the pass estimates",
	);
	const plain = [user("look"), answer(usage(20_000)), user("go on")];
	assert.equal(new ContextUsage().tokens(plain, never, b), whole, "no image: the figure stands");
});

test("a later message's images count as the placeholder a model without image input is sent, not in full", () => {
	const b = { provider: "fo", api: "openai-completions", id: "model-b", images: false };
	const answer: MessageLike = {
		role: "assistant",
		provider: b.provider,
		api: b.api,
		model: b.id,
		content: [{ type: "text", text: "reading the screenshots" }],
		usage: usage(5_000),
		stopReason: "toolUse",
		timestamp: 2,
	};
	const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };
	const shot = (i: number, parts: unknown[]): MessageLike => ({
		role: "toolResult",
		toolCallId: `s${i}`,
		toolName: "read",
		content: [{ type: "text", text: `Read image file shot${i}.png [image/png]` }, ...parts],
		isError: false,
		timestamp: 3 + i,
	});
	const shots = Array.from({ length: 6 }, (_, i) => shot(i, [image]));
	// As pi-ai sends them to model b: each image (a run of one) as its placeholder text.
	const placeholder = { type: "text", text: "(tool image omitted: model does not support images)" };
	const sent = Array.from({ length: 6 }, (_, i) => shot(i, [placeholder]));
	const size = calculateContextTokens(usage(5_000));
	const figure = new ContextUsage().tokens([user("look"), answer, ...shots], never, b) ?? 0;
	const expected = size + sent.reduce((n, m) => n + est(m), 0);
	assert.ok(
		Math.abs(figure - expected) <= 6,
		`${figure} against ${expected} as sent (Pi's estimate: ${size + shots.reduce((n, m) => n + est(m), 0)})`,
	);
	const vision = { ...b, images: true };
	assert.equal(
		new ContextUsage().tokens([user("look"), answer, ...shots], never, vision),
		size + shots.reduce((n, m) => n + est(m), 0),
		"a model that takes images is sent them: Pi's estimate stands",
	);
	const two = new ContextUsage().tokens([user("look"), answer, shot(9, [image, image])], never, b) ?? 0;
	const one = size + est(shot(9, [placeholder]));
	assert.ok(Math.abs(two - one) <= 3, `two images in a row go as one placeholder: ${two} against ${one}`);
});

test("a figure older than a fold event or an unfold gives none until a response has seen the change", () => {
	const usageOf = new ContextUsage();
	const before = [user("start"), reply(usage(30_000)), result("c30000", "a".repeat(40_000))];
	assert.equal(typeof usageOf.tokens(before, never), "number", "the event is decided on the figure as it stands");
	usageOf.folded();
	// The event's request failed and is retried: the same last response, whose figure counts the folds raw.
	const retried = [...before, { ...reply(usage(1), "error"), content: [{ type: "text", text: "Overloaded" }] }];
	assert.equal(usageOf.tokens(retried, never), undefined, "the pass estimates the request itself");
	const answered = [...before, { ...reply(usage(12_000)), timestamp: 5 }, user("go on")];
	assert.equal(usageOf.tokens(answered, never), calculateContextTokens(usage(12_000)) + est(user("go on")));
	// An unfold comes after the response that asked for it: the next request's figure is that response's.
	usageOf.unfolded();
	const unfoldedNext = [...answered, result("c12000", "Unfolded #abcdefgh")];
	assert.equal(usageOf.tokens(unfoldedNext, never), undefined);
	const later = [...unfoldedNext, { ...reply(usage(20_000)), timestamp: 6 }];
	assert.equal(usageOf.tokens(later, never), calculateContextTokens(usage(20_000)));
	// A session left with /tree or another session starts over.
	usageOf.folded();
	usageOf.reset();
	assert.equal(typeof usageOf.tokens(later, never), "number");
});

test("right after a compaction too, a fold event's or an unfold's old figure gives none", () => {
	const usageOf = new ContextUsage();
	const kept = [summary(90_000), user("go on"), reply(usage(40_000)), result("c40000", "b".repeat(40_000))];
	let asked = 0;
	const pi = () => {
		asked++;
		return 40_050;
	};
	assert.equal(usageOf.tokens(kept, pi), 40_050, "Pi is asked until a response after the compaction");
	usageOf.folded();
	assert.equal(usageOf.tokens(kept, pi), undefined, "the event's request retried: its figure predates the folds");
	assert.equal(asked, 1);
	// An unfold answered by the first response after the compaction: only the request after it loses its figure.
	const answered = [...kept, { ...reply(usage(20_000)), timestamp: 7 }];
	usageOf.unfolded();
	assert.equal(usageOf.tokens(answered, pi), undefined);
	const later = [...answered, result("c20000", "ok"), { ...reply(usage(30_000)), timestamp: 8 }];
	assert.equal(usageOf.tokens(later, never), calculateContextTokens(usage(30_000)));
});

test("a message Pi's estimator cannot read gives no figure, and the turn still folds", async () => {
	const odd: MessageLike[] = [
		{ role: "user", content: null, timestamp: 5 },
		{ role: "assistant", content: null, stopReason: "stop", timestamp: 5 },
		{ role: "assistant", content: [null], stopReason: "stop", timestamp: 5 },
		{ role: "bashExecution", command: "ls", timestamp: 5 },
	] as unknown as MessageLike[];
	for (const message of odd) {
		const usageOf = new ContextUsage();
		const request = [user("go"), reply(usage(1_000)), result("c1000", "ok"), message];
		assert.throws(() => estimateTokens(message as never));
		assert.equal(usageOf.tokens(request, never), undefined, JSON.stringify(message));
	}
	// Through the hooks: the pass estimates the request itself, folds, and reports no failure.
	const stub = loadStub();
	bashSession(stub, 6);
	stub.addMessage({ role: "user", content: null, timestamp: 1_800_000_000_000 });
	stub.usage = { tokens: 9_000, contextWindow: stub.window };
	await stub.emit("session_start", { reason: "startup" });
	const sent = await stub.request();
	assert.ok(JSON.stringify(sent).includes("FOLDED"), "the turn folded");
	assert.deepEqual(stub.stderr, []);
});
