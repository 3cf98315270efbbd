/**
 * A minimal PNG reader for the HTML report's browser test and its screenshot script (node:zlib
 * only): 8-bit greyscale, RGB, grey+alpha or RGBA, non-interlaced, as Chromium writes screenshots.
 * Decodes to RGB, counts the pixels a predicate matches (near-white or not, near a colour), and
 * finds the last row and column holding anything but white.
 */
import { inflateSync } from "node:zlib";

/** A decoded image: three bytes (red, green, blue) per pixel, row by row. */
export interface Rgb {
	width: number;
	height: number;
	rgb: Uint8Array;
}

/** Decodes a PNG to RGB (alpha dropped, grey spread to three channels). */
export function decodePng(png: Buffer): Rgb {
	if (png.subarray(0, 8).toString("hex") !== "89504e470d0a1a0a") throw new Error("not a PNG");
	let offset = 8;
	let width = 0;
	let height = 0;
	let channels = 0;
	const idat: Buffer[] = [];
	while (offset < png.length) {
		const length = png.readUInt32BE(offset);
		const type = png.subarray(offset + 4, offset + 8).toString("latin1");
		const data = png.subarray(offset + 8, offset + 8 + length);
		if (type === "IHDR") {
			width = data.readUInt32BE(0);
			height = data.readUInt32BE(4);
			const depth = data[8];
			channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[data[9]] ?? 0;
			if (depth !== 8 || channels === 0 || data[12] !== 0) throw new Error("unsupported PNG format");
		} else if (type === "IDAT") idat.push(data);
		else if (type === "IEND") break;
		offset += 12 + length;
	}
	const raw = inflateSync(Buffer.concat(idat));
	const stride = width * channels;
	const grey = channels < 3;
	const rgb = new Uint8Array(width * height * 3);
	let previous = Buffer.alloc(stride);
	for (let row = 0; row < height; row++) {
		const filter = raw[row * (stride + 1)];
		const line = Buffer.from(raw.subarray(row * (stride + 1) + 1, (row + 1) * (stride + 1)));
		for (let i = 0; i < stride; i++) {
			const a = i >= channels ? line[i - channels] : 0;
			const b = previous[i];
			const c = i >= channels ? previous[i - channels] : 0;
			let add = 0;
			if (filter === 1) add = a;
			else if (filter === 2) add = b;
			else if (filter === 3) add = (a + b) >> 1;
			else if (filter === 4) {
				const p = a + b - c;
				const pa = Math.abs(p - a);
				const pb = Math.abs(p - b);
				const pc = Math.abs(p - c);
				add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
			}
			line[i] = (line[i] + add) & 0xff;
		}
		for (let px = 0; px < width; px++) {
			const at = (row * width + px) * 3;
			for (let ch = 0; ch < 3; ch++) rgb[at + ch] = line[px * channels + (grey ? 0 : ch)];
		}
		previous = line;
	}
	return { width, height, rgb };
}

/** How many pixels `match` their red, green and blue. */
export function countPixels(image: Rgb, match: (r: number, g: number, b: number) => boolean): number {
	let n = 0;
	for (let i = 0; i < image.rgb.length; i += 3) if (match(image.rgb[i], image.rgb[i + 1], image.rgb[i + 2])) n++;
	return n;
}

/** Whether a pixel is darker than `threshold` in any channel (not near-white). */
export const inked =
	(threshold = 240) =>
	(r: number, g: number, b: number): boolean =>
		r < threshold || g < threshold || b < threshold;

/** Whether a pixel is within `tolerance` of the colour `#rrggbb` in every channel. */
export function near(hex: string, tolerance: number): (r: number, g: number, b: number) => boolean {
	const [cr, cg, cb] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
	return (r, g, b) => Math.abs(r - cr) <= tolerance && Math.abs(g - cg) <= tolerance && Math.abs(b - cb) <= tolerance;
}

/** The last row and the last column holding a pixel that is not near-white (-1 each for a blank image). */
export function inkedExtent(image: Rgb): { lastRow: number; lastColumn: number } {
	const isInked = inked();
	let lastRow = -1;
	let lastColumn = -1;
	for (let i = 0; i < image.rgb.length; i += 3) {
		if (!isInked(image.rgb[i], image.rgb[i + 1], image.rgb[i + 2])) continue;
		const pixel = i / 3;
		lastRow = Math.floor(pixel / image.width);
		lastColumn = Math.max(lastColumn, pixel % image.width);
	}
	return { lastRow, lastColumn };
}
