/**
 * The fingerprint a fold takes of a block's text and a recall checks the original against: sha256
 * over its UTF-8 bytes, hex (node:crypto, which the pure core may not call).
 */
import { createHash } from "node:crypto";

/** sha256 of a block text, hex. */
export function sha256(text: string): string {
	return createHash("sha256").update(text, "utf8").digest("hex");
}
