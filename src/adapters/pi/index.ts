/**
 * context-fold's Pi extension entry point.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

/** Registers context-fold's hooks, tools and commands with Pi. */
export default function contextFold(_pi: ExtensionAPI): void {}
