/**
 * What an image in a request costs a provider, for `context-fold replay --images size`: its pixel
 * size read from the encoded header (PNG, GIF, JPEG, WebP), then the provider's own rule. Anthropic
 * scales an image down until its long side is at most 1568 px and it holds at most about 1.15
 * megapixels, and charges width × height / 750 tokens; OpenAI (high detail) fits it in 2048 × 2048,
 * brings its short side down to 768 px, and charges 85 tokens plus 170 for each 512-px tile. An
 * image whose size cannot be read costs what Pi estimates for any image (4800 characters, 1200
 * tokens). Pure.
 */

/** How the replay prices an image part: as its placeholder text, or by its pixel size as the provider charges. */
export type ImagePricing = "text" | "size";

/** How a provider prices an image. */
export type Vision = "anthropic" | "openai";

/** Pi's estimate of any image (`ESTIMATED_IMAGE_CHARS` 4800, at four characters a token). */
export const UNKNOWN_IMAGE_TOKENS = 1200;

/** Width and height in pixels. */
export interface ImageSize {
	width: number;
	height: number;
}

const u16be = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1];
const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u24le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) >>> 0) + (b[at + 1] << 16) + (b[at + 2] << 8) + b[at + 3];
const ascii = (b: Uint8Array, at: number, text: string) => [...text].every((c, i) => b[at + i] === c.charCodeAt(0));

/** JPEG: the first start-of-frame segment's size (SOF0-SOF15 but DHT, JPG and DAC). */
function jpegSize(b: Uint8Array): ImageSize | undefined {
	let at = 2;
	while (at + 9 < b.length) {
		if (b[at] !== 0xff) return undefined;
		const marker = b[at + 1];
		if (marker === 0xff) {
			at++;
			continue;
		}
		if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
			return { height: u16be(b, at + 5), width: u16be(b, at + 7) };
		at += 2 + u16be(b, at + 2);
	}
	return undefined;
}

/** WebP: the size in its VP8, VP8L or VP8X chunk. */
function webpSize(b: Uint8Array): ImageSize | undefined {
	if (ascii(b, 12, "VP8 ") && b.length >= 30) return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
	if (ascii(b, 12, "VP8L") && b.length >= 25) {
		const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
		return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
	}
	if (ascii(b, 12, "VP8X") && b.length >= 30) return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
	return undefined;
}

/** The pixel size of a base64-encoded image, or undefined when its format or header is not known. */
export function imageSize(base64: string): ImageSize | undefined {
	const b = Buffer.from(base64, "base64");
	let size: ImageSize | undefined;
	if (b.length >= 24 && b[0] === 0x89 && ascii(b, 1, "PNG")) size = { width: u32be(b, 16), height: u32be(b, 20) };
	else if (b.length >= 10 && ascii(b, 0, "GIF8")) size = { width: u16le(b, 6), height: u16le(b, 8) };
	else if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) size = jpegSize(b);
	else if (b.length >= 16 && ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")) size = webpSize(b);
	return size && size.width > 0 && size.height > 0 ? size : undefined;
}

/** Tokens a provider charges for an image of `size` (UNKNOWN_IMAGE_TOKENS when unknown). */
export function visionTokens(size: ImageSize | undefined, vision: Vision): number {
	if (!size) return UNKNOWN_IMAGE_TOKENS;
	let { width, height } = size;
	if (vision === "anthropic") {
		const scale = Math.min(1, 1568 / Math.max(width, height), Math.sqrt(1_150_000 / (width * height)));
		return Math.ceil((Math.round(width * scale) * Math.round(height * scale)) / 750);
	}
	const fit = Math.min(1, 2048 / Math.max(width, height));
	width *= fit;
	height *= fit;
	const short = Math.min(1, 768 / Math.min(width, height));
	width = Math.round(width * short);
	height = Math.round(height * short);
	return 85 + 170 * Math.ceil(width / 512) * Math.ceil(height / 512);
}
