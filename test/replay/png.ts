/**
 * A minimal PNG reader for tests (node:zlib only): 8-bit greyscale, RGB, grey+alpha or RGBA,
 * non-interlaced, as Chromium writes screenshots. Counts pixels that are not near-white.
 */
import { inflateSync } from "node:zlib";

/** The width, height and count of pixels darker than `threshold` in any channel. */
export function countInkedPixels(png: Buffer, threshold = 240): { width: number; height: number; inked: number } {
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
	const colourChannels = channels === 2 || channels === 4 ? channels - 1 : channels;
	let previous = Buffer.alloc(stride);
	let inked = 0;
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
			for (let ch = 0; ch < colourChannels; ch++) {
				if (line[px * channels + ch] < threshold) {
					inked++;
					break;
				}
			}
		}
		previous = line;
	}
	return { width, height, inked };
}
