/**
 * The replay's hook column: the time a policy's `context` handlers take inside real Pi, summed per
 * request, beside one structuredClone of the request's input (the copy Pi itself makes per request);
 * `timed` wraps a policy's extension factory so that each of its `context` handlers is timed, and
 * hands that clone on to whoever replays the handlers' input elsewhere (the handler bench).
 */
import type { ExtensionAPI, ExtensionFactory } from "@earendil-works/pi-coding-agent";
import type { MessageLike } from "../core/block.ts";

/**
 * A request's hook time: the sum over every `context` handler a policy's extension registered
 * (context-fold has three: the fold pass, the fold tools' declaration check and the footer refresh),
 * beside the clone time measured before the first of them.
 */
export class HookTimer {
	private pending: { hookMs: number; cloneMs: number } | undefined;

	/** Adds one handler's time. */
	add(hookMs: number, cloneMs: number): void {
		this.pending = { hookMs: (this.pending?.hookMs ?? 0) + hookMs, cloneMs: this.pending?.cloneMs ?? cloneMs };
	}

	/** True before the first handler of a request: the one whose input is cloned for comparison. */
	get fresh(): boolean {
		return this.pending === undefined;
	}

	/** The request's times so far, and starts the next request's. */
	take(): { hookMs?: number; cloneMs?: number } {
		const out = this.pending ?? {};
		this.pending = undefined;
		return out;
	}
}

/**
 * Wraps a factory so each of its `context` handlers is timed into `timer`, beside one structuredClone
 * of a request's input; `onInput` gets that clone after the request's first handler has been timed.
 */
export function timed(
	factory: ExtensionFactory,
	timer: HookTimer,
	now: () => number = () => performance.now(),
	onInput?: (messages: MessageLike[]) => void,
): ExtensionFactory {
	return (pi: ExtensionAPI) => {
		const on = pi.on.bind(pi);
		const wrapped = Object.create(pi) as ExtensionAPI;
		// biome-ignore lint/suspicious/noExplicitAny: the wrapper forwards every event type unchanged
		(wrapped as any).on = (event: string, handler: (e: any, ctx: any) => unknown) => {
			if (event !== "context") return on(event as never, handler as never);
			return on("context", async (e, ctx) => {
				// One clone per request, before its first handler: the price Pi pays once per request.
				const c0 = now();
				const input = timer.fresh ? structuredClone(e.messages) : undefined;
				const c1 = now();
				const result = await handler(e, ctx);
				timer.add(now() - c1, c1 - c0);
				if (input) onInput?.(input as unknown as MessageLike[]);
				return result as never;
			});
		};
		return factory(wrapped);
	};
}
