/**
 * Scripted model server for end-to-end tests of the real `pi` CLI.
 *
 * Listens on 127.0.0.1 (ephemeral port) and speaks four streaming wire APIs, exactly in the shapes
 * `@earendil-works/pi-ai` 1.6 parses:
 * - Anthropic Messages: POST `<url>/v1/messages` (the SDK appends `?beta=true`), SSE with named events.
 *   Use `server.url` as the models.json `baseUrl` (the Anthropic SDK adds `/v1/messages`).
 * - OpenAI chat completions: POST `<url>/v1/chat/completions`, SSE `data:` chunks ending in `[DONE]`.
 *   Use `server.url + "/v1"` as the `baseUrl` (the OpenAI SDK appends `/chat/completions` only).
 * - OpenAI Responses: POST `<url>/v1/responses`, SSE with named `response.*` events, one output item
 *   per reasoning, text and function call. Same `baseUrl` as chat completions.
 * - Google Gemini (`google-generative-ai`): POST `<url>/v1beta/models/<id>:streamGenerateContent?alt=sse`,
 *   one `GenerateContentResponse` per `data:` line. Use `server.url + "/v1beta"` as the `baseUrl`.
 *
 * Every request is recorded in `requests`. The reply is produced by a script function: text, tool
 * calls, a thinking block (unsigned on Anthropic, `thinking` without a signature, and on chat
 * completions, `reasoning_content`; on Responses a reasoning item with an opaque `encrypted_content`,
 * which Pi keeps as the block's signature and sends back as it came; on Gemini `thought: true` parts,
 * and as Gemini does, a `thoughtSignature` on the first function call of a reply, or on its text when it
 * calls nothing), an HTTP error, or a stream that stalls until the client hangs up (so an abort can be
 * recorded). Usage is simulated from the prompt size (chars / 4) with a prefix cache: the longest common
 * prefix with the previous prompt (or any earlier prompt, see `cacheMode`) is reported as cache read;
 * `expireCache()` forgets every earlier prompt (an idle gap past the TTL).
 *
 * Nothing here opens an outbound connection.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type WireApi = "anthropic" | "openai" | "responses" | "gemini";

/** A parsed JSON request body (shape depends on the API). */
export type JsonObject = Record<string, unknown>;

export interface CapturedRequest {
	/** 0-based position among all model requests this server has seen. */
	index: number;
	api: WireApi;
	method: string;
	/** Path including query string, e.g. `/v1/messages?beta=true`. */
	path: string;
	headers: IncomingHttpHeaders;
	/** Raw request body as received. */
	raw: string;
	/** Parsed JSON body. */
	body: JsonObject;
}

export interface ScriptedToolCall {
	name: string;
	args: Record<string, unknown>;
	/** Defaults to a generated id (`toolu_e2e_<n>` / `call_e2e_<n>`); on Gemini, none is sent (Pi makes one). */
	id?: string;
}

export interface Reply {
	/**
	 * A thinking block, streamed before the text: unsigned on Anthropic and chat completions; on Responses
	 * a reasoning item whose summary is this text, with an `encrypted_content` made from it and the request.
	 */
	thinking?: string;
	text?: string;
	toolCalls?: ScriptedToolCall[];
	/**
	 * Answer with an HTTP error instead of a stream (e.g. 400 with a context-overflow message).
	 * The body is the provider's usual JSON error envelope.
	 */
	error?: { status: number; message: string; type?: string };
	/**
	 * Stream the thinking and text, then stop sending without finishing the message, until the
	 * client disconnects (e.g. the user aborts). Tool calls are not sent.
	 */
	stall?: boolean;
	/**
	 * Report these usage figures instead of the simulated ones (the rest stay simulated): e.g.
	 * `{ input: 30000, cacheRead: 0, cacheWrite: 0 }` for a large uncached prompt. The simulated
	 * cache still remembers the prompt. For OpenAI, prompt_tokens (Responses: input_tokens) is
	 * input + cacheRead + cacheWrite.
	 */
	usage?: Partial<Pick<ReportedUsage, "input" | "cacheRead" | "cacheWrite" | "output">>;
	/** Gemini: send the step's calls with no `thoughtSignature` (as a model that does not sign them would). */
	unsigned?: boolean;
}

export type Script = (req: CapturedRequest, index: number) => Reply | Promise<Reply>;

/** What the server reported as usage for one request, in tokens. */
export interface ReportedUsage {
	/** ceil(prompt chars / 4): the whole prompt. Equals input + cacheRead + cacheWrite. */
	promptTokens: number;
	/** Uncached input tokens (Anthropic `input_tokens`; OpenAI prompt_tokens or input_tokens - cached_tokens). */
	input: number;
	cacheRead: number;
	/** Anthropic `cache_creation_input_tokens` (always 0 for OpenAI and Gemini). */
	cacheWrite: number;
	output: number;
	/** Length in chars of the common prefix used for cacheRead. */
	commonPrefixChars: number;
	/** Length in chars of the serialized prompt. */
	promptChars: number;
}

export interface ModelServerOptions {
	/**
	 * "previous" (default): cache read = common prefix with the immediately preceding request.
	 * "any": longest common prefix with any earlier request (closer to a real multi-entry cache, so
	 * an interleaved compaction/summary request does not evict the conversation's prefix).
	 * "off": never report cache hits (everything is plain input).
	 */
	cacheMode?: "previous" | "any" | "off";
	/** Anthropic only: tokens reported as plain `input_tokens` after the cached/created part. Default 3. */
	anthropicUncachedTailTokens?: number;
	/** Characters per streamed delta. Default 16. */
	chunkSize?: number;
}

export interface ModelServer {
	/** `http://127.0.0.1:<port>`; the Anthropic baseUrl. */
	url: string;
	/** Base URL for models.json for the given API (both OpenAI APIs need `/v1`, Gemini `/v1beta`). */
	baseUrlFor(
		api: WireApi | "anthropic-messages" | "openai-completions" | "openai-responses" | "google-generative-ai",
	): string;
	port: number;
	requests: CapturedRequest[];
	/** Parallel to `requests` (undefined for error replies). */
	usages: (ReportedUsage | undefined)[];
	/** Errors thrown by the script or by request handling (the client got a 500). */
	errors: Error[];
	/** Forgets every earlier prompt: the next request reads nothing from the simulated cache. */
	expireCache(): void;
	close(): Promise<void>;
}

/** Rough token estimate used everywhere in the simulation. */
export function estimateTokens(chars: number): number {
	return Math.ceil(chars / 4);
}

function stripCacheControl(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(stripCacheControl);
	if (value && typeof value === "object") {
		const out: JsonObject = {};
		for (const [k, v] of Object.entries(value as JsonObject)) {
			if (k === "cache_control") continue;
			out[k] = stripCacheControl(v);
		}
		return out;
	}
	return value;
}

/**
 * Serializes the cacheable prompt (system + tools + messages, Responses `input` items, or Gemini
 * `systemInstruction` + `tools` + `contents`) of a request,
 * without the moving `cache_control` markers, so consecutive requests share a textual prefix exactly
 * when the conversation is append-only.
 */
export function serializePrompt(req: Pick<CapturedRequest, "api" | "body">): string {
	const b = req.body;
	const parts =
		req.api === "anthropic"
			? { system: b.system ?? null, tools: b.tools ?? null, messages: b.messages ?? [] }
			: req.api === "responses"
				? { tools: b.tools ?? null, input: b.input ?? [] }
				: req.api === "gemini"
					? { system: b.systemInstruction ?? null, tools: b.tools ?? null, contents: b.contents ?? [] }
					: { tools: b.tools ?? null, messages: b.messages ?? [] };
	return JSON.stringify(stripCacheControl(parts));
}

function commonPrefixLength(a: string, b: string): number {
	const n = Math.min(a.length, b.length);
	let i = 0;
	while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
	return i;
}

/** Simulated usage with a reply's scripted figures laid over it; promptTokens follows them. */
function scripted(simulated: ReportedUsage, over: NonNullable<Reply["usage"]>): ReportedUsage {
	const merged = { ...simulated, ...over };
	return { ...merged, promptTokens: merged.input + merged.cacheRead + merged.cacheWrite };
}

function sse(res: ServerResponse, data: unknown, event?: string): void {
	const head = event ? `event: ${event}\n` : "";
	res.write(`${head}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

/** Splits a string into n-ish chunks so deltas are really streamed in pieces. */
function splitChunks(s: string, size: number): string[] {
	if (s.length === 0) return [];
	const out: string[] = [];
	for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
	return out;
}

export async function startModelServer(script: Script, options: ModelServerOptions = {}): Promise<ModelServer> {
	const cacheMode = options.cacheMode ?? "previous";
	const tail = options.anthropicUncachedTailTokens ?? 3;
	const chunks = (text: string) => splitChunks(text, options.chunkSize ?? 16);
	const requests: CapturedRequest[] = [];
	const usages: (ReportedUsage | undefined)[] = [];
	const errors: Error[] = [];
	const prompts: string[] = [];
	let toolIdCounter = 0;

	const computeUsage = (api: WireApi, prompt: string, outputChars: number): ReportedUsage => {
		let lcp = 0;
		if (cacheMode === "previous" && prompts.length > 0) {
			lcp = commonPrefixLength(prompt, prompts[prompts.length - 1]);
		} else if (cacheMode === "any") {
			// Newest first; a prompt no longer than the best prefix so far cannot beat it.
			for (let i = prompts.length - 1; i >= 0; i--) {
				if (prompts[i].length > lcp) lcp = Math.max(lcp, commonPrefixLength(prompt, prompts[i]));
			}
		}
		prompts.push(prompt);
		const promptTokens = Math.max(1, estimateTokens(prompt.length));
		const cacheRead = Math.min(Math.floor(lcp / 4), promptTokens);
		const uncached = promptTokens - cacheRead;
		// Anthropic splits uncached input into cache creation (up to the last breakpoint, which Pi puts
		// on the last message) and a small plain-input tail; OpenAI has no cache-write count.
		const input = api === "anthropic" && cacheMode !== "off" ? Math.min(uncached, tail) : uncached;
		return {
			promptTokens,
			input,
			cacheRead,
			cacheWrite: uncached - input,
			output: Math.max(1, estimateTokens(outputChars)),
			commonPrefixChars: lcp,
			promptChars: prompt.length,
		};
	};

	const outputChars = (reply: Reply): number =>
		(reply.thinking ?? "").length +
		(reply.text ?? "").length +
		(reply.toolCalls ?? []).reduce((n, c) => n + c.name.length + JSON.stringify(c.args).length, 0);

	const writeAnthropic = (res: ServerResponse, req: CapturedRequest, reply: Reply, usage: ReportedUsage): void => {
		const model = typeof req.body.model === "string" ? req.body.model : "fake-model";
		const wireUsage = {
			input_tokens: usage.input,
			cache_read_input_tokens: usage.cacheRead,
			cache_creation_input_tokens: usage.cacheWrite,
		};
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
		sse(
			res,
			{
				type: "message_start",
				message: {
					id: `msg_e2e_${req.index}`,
					type: "message",
					role: "assistant",
					model,
					content: [],
					stop_reason: null,
					stop_sequence: null,
					usage: { ...wireUsage, output_tokens: 1 },
				},
			},
			"message_start",
		);
		let index = 0;
		if (reply.thinking) {
			sse(
				res,
				{ type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } },
				"content_block_start",
			);
			for (const piece of chunks(reply.thinking)) {
				sse(
					res,
					{ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } },
					"content_block_delta",
				);
			}
			sse(res, { type: "content_block_stop", index }, "content_block_stop");
			index++;
		}
		if (reply.text !== undefined && reply.text.length > 0) {
			sse(
				res,
				{ type: "content_block_start", index, content_block: { type: "text", text: "" } },
				"content_block_start",
			);
			for (const piece of chunks(reply.text)) {
				sse(
					res,
					{ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } },
					"content_block_delta",
				);
			}
			if (reply.stall) return;
			sse(res, { type: "content_block_stop", index }, "content_block_stop");
			index++;
		}
		if (reply.stall) return;
		for (const call of reply.toolCalls ?? []) {
			const id = call.id ?? `toolu_e2e_${++toolIdCounter}`;
			sse(
				res,
				{ type: "content_block_start", index, content_block: { type: "tool_use", id, name: call.name, input: {} } },
				"content_block_start",
			);
			for (const piece of chunks(JSON.stringify(call.args))) {
				sse(
					res,
					{ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } },
					"content_block_delta",
				);
			}
			sse(res, { type: "content_block_stop", index }, "content_block_stop");
			index++;
		}
		const stopReason = reply.toolCalls && reply.toolCalls.length > 0 ? "tool_use" : "end_turn";
		sse(
			res,
			{
				type: "message_delta",
				delta: { stop_reason: stopReason, stop_sequence: null },
				usage: { ...wireUsage, output_tokens: usage.output },
			},
			"message_delta",
		);
		sse(res, { type: "message_stop" }, "message_stop");
		res.end();
	};

	const writeOpenAI = (res: ServerResponse, req: CapturedRequest, reply: Reply, usage: ReportedUsage): void => {
		const model = typeof req.body.model === "string" ? req.body.model : "fake-model";
		const id = `chatcmpl-e2e-${req.index}`;
		const created = Math.floor(Date.now() / 1000);
		const chunk = (choices: unknown[], extra: JsonObject = {}) => ({
			id,
			object: "chat.completion.chunk",
			created,
			model,
			choices,
			...extra,
		});
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
		sse(res, chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]));
		for (const piece of chunks(reply.thinking ?? "")) {
			sse(res, chunk([{ index: 0, delta: { reasoning_content: piece }, finish_reason: null }]));
		}
		for (const piece of chunks(reply.text ?? "")) {
			sse(res, chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
		}
		if (reply.stall) return;
		(reply.toolCalls ?? []).forEach((call, i) => {
			const callId = call.id ?? `call_e2e_${++toolIdCounter}`;
			sse(
				res,
				chunk([
					{
						index: 0,
						delta: {
							tool_calls: [
								{ index: i, id: callId, type: "function", function: { name: call.name, arguments: "" } },
							],
						},
						finish_reason: null,
					},
				]),
			);
			for (const piece of chunks(JSON.stringify(call.args))) {
				sse(
					res,
					chunk([
						{
							index: 0,
							delta: { tool_calls: [{ index: i, function: { arguments: piece } }] },
							finish_reason: null,
						},
					]),
				);
			}
		});
		const finish = reply.toolCalls && reply.toolCalls.length > 0 ? "tool_calls" : "stop";
		sse(res, chunk([{ index: 0, delta: {}, finish_reason: finish }]));
		sse(
			res,
			chunk([], {
				usage: {
					prompt_tokens: usage.promptTokens,
					completion_tokens: usage.output,
					total_tokens: usage.promptTokens + usage.output,
					prompt_tokens_details: { cached_tokens: usage.cacheRead },
				},
			}),
		);
		sse(res, "[DONE]");
		res.end();
	};

	const writeResponses = (res: ServerResponse, req: CapturedRequest, reply: Reply, usage: ReportedUsage): void => {
		const response = {
			id: `resp_e2e_${req.index}`,
			object: "response",
			created_at: Math.floor(Date.now() / 1000),
			model: typeof req.body.model === "string" ? req.body.model : "fake-model",
		};
		let sequence = 0;
		const emit = (type: string, fields: JsonObject) =>
			sse(res, { type, sequence_number: sequence++, ...fields }, type);
		/** Finished output items, in order. Items stream one at a time, so an open item's `output_index` is their count. */
		const output: JsonObject[] = [];
		const open = (item: JsonObject): number => {
			emit("response.output_item.added", { output_index: output.length, item });
			return output.length;
		};
		const close = (item: JsonObject): void => {
			emit("response.output_item.done", { output_index: output.length, item });
			output.push(item);
		};
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
		emit("response.created", { response: { ...response, status: "in_progress", output: [] } });
		if (reply.thinking) {
			const id = `rs_e2e_${req.index}`;
			const at = open({ type: "reasoning", id, summary: [] });
			for (const delta of chunks(reply.thinking)) {
				emit("response.reasoning_summary_text.delta", { item_id: id, output_index: at, summary_index: 0, delta });
			}
			const sealed = Buffer.from(`e2e reasoning of request ${req.index}: ${reply.thinking}`).toString("base64");
			close({
				type: "reasoning",
				id,
				summary: [{ type: "summary_text", text: reply.thinking }],
				encrypted_content: `gAAAA${sealed}`,
			});
		}
		if (reply.text !== undefined && reply.text.length > 0) {
			const id = `msg_e2e_${req.index}`;
			const at = open({ type: "message", id, role: "assistant", status: "in_progress", content: [] });
			for (const delta of chunks(reply.text)) {
				emit("response.output_text.delta", { item_id: id, output_index: at, content_index: 0, delta });
			}
			if (reply.stall) return;
			const content = [{ type: "output_text", text: reply.text, annotations: [] }];
			close({ type: "message", id, role: "assistant", status: "completed", content });
		}
		if (reply.stall) return;
		for (const call of reply.toolCalls ?? []) {
			const fields = {
				type: "function_call",
				id: `fc_e2e_${req.index}_${output.length}`,
				call_id: call.id ?? `call_e2e_${++toolIdCounter}`,
				name: call.name,
			};
			const args = JSON.stringify(call.args);
			const at = open({ ...fields, arguments: "", status: "in_progress" });
			for (const delta of chunks(args)) {
				emit("response.function_call_arguments.delta", { item_id: fields.id, output_index: at, delta });
			}
			emit("response.function_call_arguments.done", { item_id: fields.id, output_index: at, arguments: args });
			close({ ...fields, arguments: args, status: "completed" });
		}
		const wireUsage = {
			input_tokens: usage.promptTokens,
			input_tokens_details: { cached_tokens: usage.cacheRead },
			output_tokens: usage.output,
			output_tokens_details: { reasoning_tokens: 0 },
			total_tokens: usage.promptTokens + usage.output,
		};
		emit("response.completed", { response: { ...response, status: "completed", output, usage: wireUsage } });
		res.end();
	};

	const writeGemini = (res: ServerResponse, req: CapturedRequest, reply: Reply, usage: ReportedUsage): void => {
		const modelVersion = /\/models\/([^:]+):/.exec(req.path)?.[1] ?? "fake-model";
		const emit = (parts: JsonObject[], extra: JsonObject = {}) =>
			sse(res, {
				candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
				modelVersion,
				responseId: `gemini_e2e_${req.index}`,
			});
		// Opaque, base64 as Google's are (pi-ai drops a signature that is not).
		const sign = (what: string) => Buffer.from(`e2e signature of request ${req.index}: ${what}`).toString("base64");
		const calls = reply.stall ? [] : (reply.toolCalls ?? []);
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
		for (const text of chunks(reply.thinking ?? "")) emit([{ text, thought: true }]);
		const pieces = chunks(reply.text ?? "");
		pieces.forEach((text, i) => {
			// A reply that calls nothing is signed on its last part.
			const signed = calls.length === 0 && !reply.stall && i === pieces.length - 1;
			emit([{ text, ...(signed ? { thoughtSignature: sign("text") } : {}) }]);
		});
		if (reply.stall) return;
		// Gemini signs the first function call of a step only; a parallel call after it goes unsigned.
		calls.forEach((call, i) => {
			const functionCall = { ...(call.id ? { id: call.id } : {}), name: call.name, args: call.args };
			emit([{ functionCall, ...(i === 0 && !reply.unsigned ? { thoughtSignature: sign(call.name) } : {}) }]);
		});
		emit([], { finishReason: "STOP" });
		sse(res, {
			candidates: [],
			usageMetadata: {
				promptTokenCount: usage.promptTokens,
				candidatesTokenCount: usage.output,
				totalTokenCount: usage.promptTokens + usage.output,
				cachedContentTokenCount: usage.cacheRead,
			},
			modelVersion,
			responseId: `gemini_e2e_${req.index}`,
		});
		res.end();
	};

	const server = createServer((httpReq, res) => {
		const bufs: Buffer[] = [];
		httpReq.on("data", (b: Buffer) => bufs.push(b));
		httpReq.on("end", () => {
			void (async () => {
				const path = httpReq.url ?? "/";
				const pathname = path.split("?")[0];
				const api: WireApi | undefined = pathname.endsWith("/messages")
					? "anthropic"
					: pathname.endsWith("/chat/completions")
						? "openai"
						: pathname.endsWith("/responses")
							? "responses"
							: pathname.endsWith(":streamGenerateContent")
								? "gemini"
								: undefined;
				if (httpReq.method !== "POST" || !api) {
					res.writeHead(404, { "content-type": "application/json" });
					res.end(JSON.stringify({ error: { message: `e2e model server: no route ${httpReq.method} ${path}` } }));
					return;
				}
				const raw = Buffer.concat(bufs).toString("utf8");
				let body: JsonObject;
				try {
					body = JSON.parse(raw) as JsonObject;
				} catch (e) {
					errors.push(e as Error);
					res.writeHead(400, { "content-type": "application/json" });
					res.end(JSON.stringify({ error: { message: "invalid JSON body" } }));
					return;
				}
				const captured: CapturedRequest = {
					index: requests.length,
					api,
					method: httpReq.method,
					path,
					headers: httpReq.headers,
					raw,
					body,
				};
				requests.push(captured);
				usages.push(undefined);
				try {
					const reply = await script(captured, captured.index);
					if (reply.error) {
						const type = reply.error.type ?? "invalid_request_error";
						res.writeHead(reply.error.status, { "content-type": "application/json" });
						res.end(
							JSON.stringify(
								api === "anthropic"
									? { type: "error", error: { type, message: reply.error.message } }
									: api === "gemini"
										? { error: { code: reply.error.status, message: reply.error.message, status: type } }
										: { error: { message: reply.error.message, type, code: null, param: null } },
							),
						);
						return;
					}
					const simulated = computeUsage(api, serializePrompt(captured), outputChars(reply));
					const usage = reply.usage ? scripted(simulated, reply.usage) : simulated;
					usages[captured.index] = usage;
					if (api === "anthropic") writeAnthropic(res, captured, reply, usage);
					else if (api === "responses") writeResponses(res, captured, reply, usage);
					else if (api === "gemini") writeGemini(res, captured, reply, usage);
					else writeOpenAI(res, captured, reply, usage);
				} catch (e) {
					const err = e instanceof Error ? e : new Error(String(e));
					errors.push(err);
					if (!res.headersSent) {
						res.writeHead(500, { "content-type": "application/json" });
						res.end(
							JSON.stringify({ error: { type: "api_error", message: `e2e script failed: ${err.message}` } }),
						);
					} else {
						res.destroy(err);
					}
				}
			})();
		});
	});

	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			server.off("error", reject);
			resolve();
		});
	});
	const port = (server.address() as AddressInfo).port;
	const url = `http://127.0.0.1:${port}`;

	return {
		url,
		port,
		baseUrlFor: (api) =>
			api === "anthropic" || api === "anthropic-messages"
				? url
				: api === "gemini" || api === "google-generative-ai"
					? `${url}/v1beta`
					: `${url}/v1`,
		requests,
		usages,
		errors,
		expireCache: () => {
			prompts.length = 0;
		},
		close: () =>
			new Promise<void>((resolve, reject) => {
				server.close((err) => (err ? reject(err) : resolve()));
				server.closeAllConnections();
			}),
	};
}

// ---------------------------------------------------------------------------------------------
// Reading captured requests independent of the wire API
// ---------------------------------------------------------------------------------------------

export interface NormalizedToolCall {
	id: string;
	name: string;
	args: unknown;
}

export interface NormalizedMessage {
	role: "system" | "user" | "assistant" | "tool";
	/** Concatenated text blocks (for tool messages: the tool result text). */
	text: string;
	/** Assistant tool calls. */
	toolCalls?: NormalizedToolCall[];
	/** Tool messages: the id of the call this result answers. */
	toolCallId?: string;
}

function textOfContent(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((b) => {
			const block = b as JsonObject;
			const typed = block.type === "text" || block.type === "input_text" || block.type === "output_text";
			return typed && typeof block.text === "string" ? block.text : "";
		})
		.join("");
}

/** Tool-call arguments as sent (a JSON string on both OpenAI APIs), parsed when they parse. */
function parseArguments(raw: unknown): unknown {
	try {
		return JSON.parse(String(raw));
	} catch {
		return raw;
	}
}

/**
 * Responses `input` items as messages: an assistant turn's items (reasoning, text, function calls) join
 * one assistant message, and each `function_call_output` is a tool message.
 */
function responsesMessages(items: JsonObject[]): NormalizedMessage[] {
	const out: NormalizedMessage[] = [];
	const assistant = (): NormalizedMessage => {
		const last = out.at(-1);
		if (last?.role === "assistant") return last;
		const started: NormalizedMessage = { role: "assistant", text: "" };
		out.push(started);
		return started;
	};
	for (const item of items) {
		if (item.type === "function_call_output") {
			out.push({ role: "tool", toolCallId: String(item.call_id), text: textOfContent(item.output) });
		} else if (item.type === "function_call") {
			const message = assistant();
			const call = { id: String(item.call_id), name: String(item.name), args: parseArguments(item.arguments) };
			message.toolCalls = [...(message.toolCalls ?? []), call];
		} else if (item.type === "reasoning" || item.role === "assistant") {
			assistant().text += textOfContent(item.content);
		} else if (item.role === "user") {
			out.push({ role: "user", text: textOfContent(item.content) });
		} else if (item.role === "developer" || item.role === "system") {
			out.push({ role: "system", text: textOfContent(item.content) });
		}
	}
	return out;
}

/**
 * Gemini `systemInstruction` and `contents` as messages: a model content is an assistant message (its text
 * parts, thought parts included, and its function calls), a user content's `functionResponse` parts are
 * tool messages (the call id when sent, else the function's name) and its text parts one user message.
 */
function geminiMessages(body: JsonObject): NormalizedMessage[] {
	const textOf = (parts: JsonObject[]) => parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
	const partsOf = (content: unknown) => {
		const parts = (content as JsonObject | undefined)?.parts;
		return Array.isArray(parts) ? (parts as JsonObject[]) : [];
	};
	const system =
		typeof body.systemInstruction === "string" ? body.systemInstruction : textOf(partsOf(body.systemInstruction));
	const out: NormalizedMessage[] = system ? [{ role: "system", text: system }] : [];
	for (const content of Array.isArray(body.contents) ? (body.contents as JsonObject[]) : []) {
		const parts = partsOf(content);
		if (content.role === "model") {
			const toolCalls = parts.flatMap((p) => {
				const call = p.functionCall as JsonObject | undefined;
				return call ? [{ id: String(call.id ?? call.name), name: String(call.name), args: call.args }] : [];
			});
			out.push({ role: "assistant", text: textOf(parts), ...(toolCalls.length ? { toolCalls } : {}) });
			continue;
		}
		for (const p of parts) {
			const response = p.functionResponse as JsonObject | undefined;
			if (!response) continue;
			const value = (response.response ?? {}) as JsonObject;
			const text = String(value.output ?? value.error ?? "");
			out.push({ role: "tool", toolCallId: String(response.id ?? response.name), text });
		}
		const rest = parts.filter((p) => !p.functionResponse);
		if (rest.length > 0) out.push({ role: "user", text: textOf(rest) });
	}
	return out;
}

/** The request's conversation as a flat list of roles/texts, the same for every API. */
export function messagesOf(req: Pick<CapturedRequest, "api" | "body">): NormalizedMessage[] {
	if (req.api === "responses") return responsesMessages(Array.isArray(req.body.input) ? req.body.input : []);
	if (req.api === "gemini") return geminiMessages(req.body);
	const out: NormalizedMessage[] = [];
	const msgs = Array.isArray(req.body.messages) ? (req.body.messages as JsonObject[]) : [];
	if (req.api === "anthropic") {
		const sys = textOfContent(req.body.system);
		if (sys) out.push({ role: "system", text: sys });
		for (const m of msgs) {
			if (m.role === "system") {
				out.push({ role: "system", text: textOfContent(m.content) });
				continue;
			}
			const blocks: JsonObject[] =
				typeof m.content === "string" ? [{ type: "text", text: m.content }] : ((m.content as JsonObject[]) ?? []);
			if (m.role === "assistant") {
				const toolCalls = blocks
					.filter((b) => b.type === "tool_use")
					.map((b) => ({ id: String(b.id), name: String(b.name), args: b.input }));
				out.push({ role: "assistant", text: textOfContent(blocks), ...(toolCalls.length ? { toolCalls } : {}) });
				continue;
			}
			for (const b of blocks) {
				if (b.type === "tool_result") {
					out.push({ role: "tool", toolCallId: String(b.tool_use_id), text: textOfContent(b.content) });
				}
			}
			const rest = blocks.filter((b) => b.type !== "tool_result");
			if (rest.length > 0 || blocks.length === 0) out.push({ role: "user", text: textOfContent(rest) });
		}
		return out;
	}
	for (const m of msgs) {
		const role = m.role === "developer" ? "system" : m.role;
		if (role === "tool") {
			out.push({ role: "tool", toolCallId: String(m.tool_call_id), text: textOfContent(m.content) });
		} else if (role === "assistant") {
			const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as JsonObject[]) : [];
			const toolCalls = calls.map((c) => {
				const fn = (c.function ?? {}) as JsonObject;
				return { id: String(c.id), name: String(fn.name), args: parseArguments(fn.arguments) };
			});
			out.push({ role: "assistant", text: textOfContent(m.content), ...(toolCalls.length ? { toolCalls } : {}) });
		} else if (role === "system" || role === "user") {
			out.push({ role, text: textOfContent(m.content) });
		}
	}
	return out;
}

/** Tool results sent in the request, in order. */
export function toolResultsOf(req: Pick<CapturedRequest, "api" | "body">): { toolCallId: string; text: string }[] {
	return messagesOf(req)
		.filter((m) => m.role === "tool")
		.map((m) => ({ toolCallId: m.toolCallId ?? "", text: m.text }));
}

/** The result text of call `callId` in a request, if the request carries it. */
export function toolResultOf(req: Pick<CapturedRequest, "api" | "body">, callId: string): string | undefined {
	return toolResultsOf(req).find((r) => r.toolCallId === callId)?.text;
}

/** Text of the last user message (tool results are not user messages here). */
export function lastUserText(req: Pick<CapturedRequest, "api" | "body">): string | undefined {
	const users = messagesOf(req).filter((m) => m.role === "user");
	return users.length > 0 ? users[users.length - 1].text : undefined;
}

/** The system prompt text (all system messages joined). */
export function systemPromptOf(req: Pick<CapturedRequest, "api" | "body">): string {
	return messagesOf(req)
		.filter((m) => m.role === "system")
		.map((m) => m.text)
		.join("\n");
}

/** Names of the tools declared in the request. */
export function toolNamesOf(req: Pick<CapturedRequest, "api" | "body">): string[] {
	const tools = Array.isArray(req.body.tools) ? (req.body.tools as JsonObject[]) : [];
	if (req.api === "gemini")
		return tools.flatMap((t) => ((t.functionDeclarations ?? []) as JsonObject[]).map((d) => String(d.name)));
	return tools.map((t) => String(req.api === "openai" ? ((t.function ?? {}) as JsonObject).name : t.name));
}

/**
 * True for Pi's compaction / branch-summary requests: they use a fixed system prompt ("You are a
 * context summarization assistant...") and declare no tools. The conversation to summarize arrives
 * serialized as text in the last user message.
 */
export function isSummarizationRequest(req: Pick<CapturedRequest, "api" | "body">): boolean {
	return systemPromptOf(req).startsWith("You are a context summarization assistant");
}
