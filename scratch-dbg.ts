import { sessionScript } from "./src/replay/jobs.ts";
import { replayPolicy } from "./src/replay/run.ts";
import { PRICE_MODELS } from "./src/replay/price.ts";
import { messageBlockTexts, tokensOf } from "./src/replay/blocks.ts";
import { referencesOf } from "./src/replay/visibility.ts";
import { parts } from "./src/replay/script.ts";
const file = process.argv[2];
const target = Number(process.argv[3]);
const settings = JSON.parse(process.argv[4] ?? "{}");
const script = sessionScript(file);
const model = PRICE_MODELS["anthropic-5m"];
const run = await replayPolicy(script, { name: "cf", kind: "context-fold", settings } as never, { window: 140000, cache: { model, warming: true }, onProgress: () => {}, keepMessages: true } as never);
const req: any = run.requests[target];
const msgIdx = req.produced;
const first = new Map<string, string>();
script.messages.forEach((m: any, i: number) => {
	if (i >= msgIdx) return;
	const blocks = messageBlockTexts(m);
	const tool = m.role === "toolResult";
	parts(m).forEach((part: any, j: number) => {
		const b = blocks[j]; if (!b) return;
		const t = tool || (m.role === "assistant" && part.type === "toolCall");
		for (const r of referencesOf(b.search)) if (!first.has(r)) first.set(r, t ? `${i}:${j}` : "");
	});
});
const sent = req.messages.map((m: any) => messageBlockTexts(m).map((b: any) => b.search).join("\n")).join("\n");
const sentRefs = new Set(referencesOf(sent));
const m: any = script.messages[msgIdx];
const own = new Set<string>();
const blocks = messageBlockTexts(m);
parts(m).forEach((p: any, j: number) => { if (p.type === "text" || p.type === "toolCall") for (const r of referencesOf(blocks[j].search)) own.add(r); });
const bySrc = new Map<string, string[]>();
for (const r of own) { const s = first.get(r); if (!s) continue; if (sentRefs.has(r)) continue; (bySrc.get(s) ?? bySrc.set(s, []).get(s)!).push(r); }
for (const [s, refs] of bySrc) {
	const [i, j] = s.split(":").map(Number);
	const sm: any = script.messages[i];
	const b = messageBlockTexts(sm)[j];
	const name = sm.role === "toolResult" ? sm.toolName : "call:" + (sm.content[j]?.name);
	const args = sm.role === "toolResult" ? JSON.stringify((script.messages as any[]).slice(0, i).reverse().find((x: any) => x.role === "assistant")?.content?.find((c: any) => c.id === sm.toolCallId)?.arguments).slice(0, 150) : "";
	console.log(`src ${s} ${name} tok ${tokensOf(b.text)} unseen ${refs.length}: ${refs.slice(0, 8).join(" ")}\n   args ${args}`);
}
