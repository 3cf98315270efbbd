/**
 * The recall output cap bounds the whole call: every code, grep, line range and search together
 * stay within RECALL_LIMITS.totalChars, and what was cut is named with the call that reads on.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { unfoldFreeRoom } from "../../src/adapters/pi/tools/unfold.ts";
import { RECALL_LIMITS } from "../../src/core/recall.ts";
import { tokenBound } from "../../src/core/tokens.ts";
import { bashSession, loadStub, resultTexts } from "./stub-pi.ts";

const CAP = RECALL_LIMITS.totalChars;

async function foldedCodes(turns: number, lines: number, line?: (i: number, k: number) => string, window = 40_000) {
	const stub = loadStub({ window });
	bashSession(stub, turns, lines, line);
	await stub.emit("session_start", { reason: "startup" });
	const sent = await stub.request();
	const codes = resultTexts(sent).flatMap((t) => /^\{#([0-9a-z]{8}) FOLDED\}/.exec(t)?.[1] ?? []);
	return { stub, codes };
}

describe("recall_folded output cap", () => {
	it("twenty whole codes plus a search stay within the cap and name what was not shown", async () => {
		const { stub, codes } = await foldedCodes(30, 400);
		assert.ok(codes.length >= 20, `folded ${codes.length}`);
		const out = await stub.call("recall_folded", { codes: codes.slice(0, 20), search: "output ok" });
		assert.ok(out.length <= CAP, `${out.length} > ${CAP}`);
		assert.match(out, /not shown: #[0-9a-z]{8}/);
		assert.match(out, /Call recall_folded again with those codes/);
		assert.match(out, /reached before the search; call recall_folded with search alone/);
	});

	it("in a window of fewer tokens than the cap has characters, the cap is one character per token", async () => {
		const window = 12_000;
		const { stub, codes } = await foldedCodes(30, 400, undefined, window);
		assert.ok(codes.length >= 3, `folded ${codes.length}`);
		for (const params of [{ codes: codes.slice(0, 3) }, { codes: [codes[0]] }, { search: "output ok" }]) {
			const out = await stub.call("recall_folded", params);
			assert.ok(out.length <= window, `${out.length} > ${window}`);
			assert.match(out, /(?:\(|, )12000 characters per call\)/, JSON.stringify(Object.keys(params)));
		}
		const next = /lines="(\d+)-(\d+)" reads on/.exec(await stub.call("recall_folded", { codes: [codes[0]] }));
		assert.ok(next, "a whole block cut at the smaller cap names the range that reads on");
	});

	it("never cuts a character in two: no answer holds half of a surrogate pair", async () => {
		// 60 lines of 600-odd characters a block: each past the output cap, so every answer is cut somewhere.
		const { stub, codes } = await foldedCodes(
			30,
			60,
			(i, k) => `check ${i} ${"🙂".repeat(k % 7)}x${"😀".repeat(300)}`,
		);
		const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
		for (const params of [
			{ codes: codes.slice(0, 20), search: "check" },
			{ codes: codes.slice(0, 20) },
			{ codes: codes.slice(0, 20), grep: "x" },
			{ codes: [codes[0]], lines: "1-60" },
			{ codes: [codes[0]], lines: "5" },
			{ codes: [codes[0]], lines: "5@14" },
			{ codes: [codes[0]], lines: "5@15" },
			{ search: "x" },
		]) {
			const out = await stub.call("recall_folded", params);
			assert.ok(out.length <= CAP, `${out.length} > ${CAP}`);
			assert.doesNotMatch(out, lone, JSON.stringify(params));
		}
	});

	it("a search alone stays within the cap, says how many blocks it left out and names their codes", async () => {
		const { stub, codes } = await foldedCodes(60, 400);
		const out = await stub.call("recall_folded", { search: "output ok" });
		assert.ok(out.length <= CAP, `${out.length} > ${CAP}`);
		const more = /… (\d+) more blocks match, not shown/.exec(out);
		assert.ok(more, out.slice(-400));
		const shown = [...out.matchAll(/^Recalled #([0-9a-z]{8})/gm)].map((m) => m[1]);
		const named =
			/\nTheir codes \(recall_folded codes=\[…\] with the same grep reads them, 20 codes a call\): (.*)$/.exec(out);
		assert.ok(named, out.slice(-600));
		const unshown = [...named[1].matchAll(/#([0-9a-z]{8})/g)].map((m) => m[1]);
		assert.equal(unshown.length, Number(more[1]), "every block not shown is named");
		assert.deepEqual(new Set([...shown, ...unshown]), new Set(codes), "shown and named are every folded block, once");
		const grep = await stub.call("recall_folded", { codes: unshown.slice(0, 20), grep: "output ok" });
		assert.match(grep, new RegExp(`^Recalled #${unshown[0]}:`, "m"));
	});

	it("a one-line block's header and a range past its end count it in the singular", async () => {
		const { stub, codes } = await foldedCodes(30, 1, (i) => `check ${i} ${"x".repeat(4000)}`);
		assert.ok(codes.length > 0);
		const whole = await stub.call("recall_folded", { codes: [codes[0]] });
		assert.match(whole, new RegExp(`^Recalled #${codes[0]}: bash, 1 line \\(`));
		const past = await stub.call("recall_folded", { codes: [codes[0]], lines: "5-9" });
		assert.match(past, /line 5 is past the end \(1 line\)/);
		// A number past any safe integer is named as the model wrote it.
		const huge = await stub.call("recall_folded", { codes: [codes[0]], lines: "0099999999999999999999" });
		assert.match(huge, /line 99999999999999999999 is past the end \(1 line\)/);
	});

	it("greps over many codes stay within the cap", async () => {
		const { stub, codes } = await foldedCodes(30, 400);
		const out = await stub.call("recall_folded", { codes: codes.slice(0, 20), grep: "output ok" });
		assert.ok(out.length <= CAP, `${out.length} > ${CAP}`);
	});

	it("a whole block cut at the cap names the next line range, and that call reads on", async () => {
		const { stub, codes } = await foldedCodes(6, 3000);
		const first = await stub.call("recall_folded", { codes: [codes[0]] });
		assert.ok(first.length <= CAP);
		const next = /lines="(\d+)-(\d+)" reads on/.exec(first);
		assert.ok(next, first.slice(-300));
		assert.equal(Number(next[2]), 3000);
		const lastShown = first
			.split("\n")
			.map((l) => /^(\d+): /.exec(l)?.[1])
			.filter(Boolean)
			.at(-1);
		assert.equal(Number(next[1]), Number(lastShown) + 1);
		const more = await stub.call("recall_folded", { codes: [codes[0]], lines: `${next[1]}-${next[2]}` });
		assert.match(more, new RegExp(`^${next[1]}: line ${Number(next[1]) - 1} of check 0 output ok$`, "m"));
	});

	it("greps over many codes whose matching lines are long name every code not shown, and cut none mid-grep", async () => {
		const long = (i: number, k: number) => `${k % 2 ? "needle" : "hay"} ${k} of ${i} ${"x".repeat(700)}`;
		const { stub, codes } = await foldedCodes(30, 60, long);
		const asked = codes.slice(0, 20);
		const out = await stub.call("recall_folded", { codes: asked, grep: "needle" });
		assert.ok(out.length <= CAP, `${out.length} > ${CAP}`);
		assert.doesNotMatch(out, /cut at the output cap/);
		const served = [...out.matchAll(/^Recalled #([0-9a-z]{8})/gm)].map((m) => m[1]);
		const named = /not shown: (.*)\. Call recall_folded again/.exec(out)?.[1].split(", ") ?? [];
		assert.ok(named.length > 0, "the cap was reached");
		assert.deepEqual([...served, ...named.map((c) => c.slice(1))], asked);
	});

	it("a whole block whose long lines are clipped says so, not that lines were cut", async () => {
		const { stub, codes } = await foldedCodes(6, 40, (i, k) => `row ${k} of ${i} ${"y".repeat(1000)}`);
		const out = await stub.call("recall_folded", { codes: [codes[0]] });
		assert.doesNotMatch(out, /not shown/);
		assert.match(
			out,
			/… 40 lines \(the first 1\) are longer than 600 characters, shown clipped: lines="1" serves one line whole/,
		);
		assert.match(out, /^40: row 39 of 0 /m);
	});

	it("a line longer than the cap is read whole, piece by piece, each naming the call that reads on", async () => {
		const line = Array.from({ length: 9000 }, (_, i) => i + 1).join(",");
		const { stub, codes } = await foldedCodes(30, 40, (i, k) =>
			i === 0 && k === 20 ? `${i}:${line}` : `row ${k} of ${i} ${"z".repeat(60)}`,
		);
		const code = codes[0];
		const whole = await stub.call("recall_folded", { codes: [code] });
		assert.match(
			whole,
			/1 line \(21\) is longer than 600 characters, shown clipped: lines="21" serves one line whole/,
		);
		let joined = "";
		let lines = "21";
		for (let calls = 0; calls < 20; calls++) {
			const out = await stub.call("recall_folded", { codes: [code], lines });
			assert.ok(out.length <= CAP, `${out.length} > ${CAP}`);
			joined += /^21: (.*)$/m.exec(out)?.[1] ?? "";
			const next = new RegExp(`recall_folded codes=\\["${code}"\\] lines="(21@\\d+)" reads on`).exec(out);
			if (!next) break;
			lines = next[1];
		}
		assert.equal(joined, `0:${line}`, "the line served whole across calls");
		const far = await stub.call("recall_folded", { codes: [code], lines: "21@999999" });
		assert.match(far, /line 21 has \d+ characters: nothing from character 999999 on/);
	});

	it("an item that is not a code is named clipped, and the codes beside it are served", async () => {
		const { stub, codes } = await foldedCodes(30, 400);
		const out = await stub.call("recall_folded", { codes: [codes[0], "z".repeat(100_000)] });
		assert.doesNotMatch(out, /z{41}/, "the item is not echoed whole");
		assert.match(out, /"z{39}…" is not a fold code/);
		assert.match(out, new RegExp(`^Recalled #${codes[0]}: bash, 400 lines`, "m"));
	});

	it("unfold keeps folded what would bring the next request past the window, and says why", async () => {
		const { stub, codes } = await foldedCodes(30, 400);
		assert.ok(codes.length >= 20, `folded ${codes.length}`);
		const out = await stub.call("unfold", { codes: codes.slice(0, 20) });
		const kept = out.split("\n").filter((l) => l.includes("stays folded"));
		assert.ok(kept.length > 0, out);
		assert.match(
			kept[0],
			/^#[0-9a-z]{8} stays folded: it would add ~[\d.]+k tokens where ~[\d.]+k? are left .*recall_folded reads it/,
		);
		const back = /^Unfolded (.*): the original content/.exec(out)?.[1].split(", ") ?? [];
		assert.equal(back.length + kept.length, 20, "every code is either unfolded or kept, and said");
		const sent = resultTexts(await stub.request());
		const chars = sent.reduce((n, t) => n + t.length, 0);
		// Room for the reply stays too: Pi fits max_tokens into what the window leaves past its 4,096-token margin.
		const free = unfoldFreeRoom(stub.window);
		assert.equal(
			free,
			Math.min(4096 + Math.min(4096, Math.max(1024, Math.floor(stub.window / 16))), stub.window / 8),
		);
		assert.ok(
			chars / 4 + free <= stub.window,
			`the next request's results (~${Math.round(chars / 4)} tokens) leave ${free} free`,
		);
		assert.match(kept[0], /left in the window, room for the reply aside;/);
	});

	it("unfold counts nothing for a block no request carries (an aborted reply), however large", async () => {
		const unfolded = async (aborted: boolean) => {
			const { stub, codes } = await foldedCodes(30, 400);
			if (aborted) {
				const text = "z".repeat(60_000);
				stub.addMessage({
					role: "assistant",
					content: [{ type: "text", text }],
					stopReason: "aborted",
					timestamp: 9e12,
				});
				await stub.request();
			}
			const out = await stub.call("unfold", { codes: codes.slice(0, 20) });
			return /^Unfolded (.*): the original content/m.exec(out)?.[1].split(", ").length ?? 0;
		};
		const plain = await unfolded(false);
		assert.ok(plain > 0, "something unfolds at all");
		assert.equal(await unfolded(true), plain, "an aborted reply took room it does not use");
	});

	it("unfold counts a CJK block at a token a character, where chars/4 would let the request past the window", async () => {
		const { stub, codes } = await foldedCodes(30, 300, (i, k) => `第${i}批第${k}行：解析器输出正常，快照一致。`);
		assert.ok(codes.length >= 10, `folded ${codes.length}`);
		const bound = (texts: string[]) => texts.reduce((n, t) => n + tokenBound(t), 0);
		const before = bound(resultTexts(await stub.request()));
		const out = await stub.call("unfold", { codes: codes.slice(0, 20) });
		assert.match(out, /stays folded: it would add/, out);
		const after = bound(resultTexts(await stub.request()));
		assert.ok(
			after <= Math.max(before, stub.window),
			`unfolds brought the results from ~${before} to ~${after} tokens (a CJK character each), past the window`,
		);
	});
});
