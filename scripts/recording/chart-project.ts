/**
 * The sandbox project of the debugging session: `chartkit`, a small TypeScript library that lays
 * out bar charts and renders them to PNG with its own pixel font and encoder (node:zlib only). Its
 * git history ends with a pull request (#142, descending value axes) that broke `npm test` with
 * `RangeError: Invalid array length`. This file holds the project before the session (`chartFiles`,
 * then `MERGE_142` on top) and the texts the agent writes while fixing it.
 */

const PACKAGE = `${JSON.stringify(
	{
		name: "chartkit",
		version: "2.3.0",
		private: true,
		type: "module",
		exports: { ".": "./src/index.ts" },
		scripts: {
			test: "node --test --test-reporter=spec 'test/*.test.ts'",
			typecheck: "tsc --noEmit -p .",
			bench: "node bench/render.ts",
		},
		engines: { node: ">=22.18" },
	},
	null,
	2,
)}\n`;

const TSCONFIG = `${JSON.stringify(
	{
		compilerOptions: {
			target: "ES2023",
			module: "NodeNext",
			moduleResolution: "NodeNext",
			lib: ["ES2023"],
			types: ["node"],
			strict: true,
			noEmit: true,
			allowImportingTsExtensions: true,
			verbatimModuleSyntax: true,
			erasableSyntaxOnly: true,
			skipLibCheck: true,
		},
		include: ["src", "test", "bench"],
	},
	null,
	2,
)}\n`;

const README = `# chartkit

Bar charts as PNG, with no native dependencies: layout (\`src/layout/\`), a tiny raster with a 3x5
pixel font (\`src/raster/\`), and a PNG encoder on top of node:zlib. Used by the ops dashboards
(\`renderChart(spec)\` is the public API; keep it stable).

    node src/cli.ts examples/q3-revenue.json -o out/q3-revenue.png
    npm test
    npm run bench

A spec is JSON: \`title\`, \`categories\`, \`series: [{ name, values }]\`, optional \`width\`,
\`height\`, \`valueLabel\` and \`descending\` (rankings: the axis runs from 0 at the top downwards).
`;

const CHANGELOG = `# Changelog

## 2.3.0

- Descending value axes (\`descending: true\`) for rankings (#142)
- \`valueLabel\` in the spec, shown with the axis range

## 2.2.0

- Grouped bars for several series
- PNG output through node:zlib; the \`pngjs\` dependency is gone
`;

const SPEC_V1 = `/**
 * The chart spec: what callers pass to renderChart().
 */

/** One named series of values, one value per category. */
export interface Series {
	name: string;
	values: number[];
}

/** A bar chart. */
export interface ChartSpec {
	title: string;
	categories: string[];
	series: Series[];
	/** Pixels; default 480. */
	width?: number;
	/** Pixels; default 300. */
	height?: number;
	/** Name of the value axis, shown with its range. */
	valueLabel?: string;
}

/** Problems that make a spec unrenderable (empty when it is fine). */
export function checkSpec(spec: ChartSpec): string[] {
	const problems: string[] = [];
	if (typeof spec.title !== "string") problems.push("title must be a string");
	if (!Array.isArray(spec.categories) || spec.categories.length === 0) problems.push("categories must not be empty");
	if (!Array.isArray(spec.series) || spec.series.length === 0) problems.push("series must not be empty");
	for (const [i, s] of (spec.series ?? []).entries()) {
		if (!s.values.every(Number.isFinite)) problems.push(\`series[\${i}] (\${s.name}) has a non-finite value\`);
	}
	if (spec.width !== undefined && (spec.width < 160 || spec.width > 4000)) problems.push("width must be 160..4000");
	if (spec.height !== undefined && (spec.height < 120 || spec.height > 4000)) problems.push("height must be 120..4000");
	return problems;
}
`;

const SPEC_V2 = SPEC_V1.replace(
	`	/** Name of the value axis, shown with its range. */
	valueLabel?: string;
}`,
	`	/** Name of the value axis, shown with its range. */
	valueLabel?: string;
	/** Rankings: the value axis runs from 0 at the top downwards (#142). */
	descending?: boolean;
}`,
);

const EXTENT_V1 = `/**
 * The value domain of a chart: the smallest and the largest value, widened to include zero so bars
 * start at the axis. A flat series gets a domain of height 1.
 */
export function extent(values: readonly number[]): [number, number] {
	if (values.length === 0) return [0, 1];
	let lo = 0;
	let hi = 0;
	for (const v of values) {
		if (!Number.isFinite(v)) throw new TypeError(\`not a finite value: \${v}\`);
		if (v < lo) lo = v;
		if (v > hi) hi = v;
	}
	if (lo === hi) hi = lo + 1;
	return [lo, hi];
}
`;

const EXTENT_142 = `/**
 * The value domain of a chart: the smallest and the largest value, widened to include zero so bars
 * start at the axis. A flat series gets a domain of height 1.
 */
export function extent(values: readonly number[], descending = false): [number, number] {
	if (values.length === 0) return [0, 1];
	let lo = 0;
	let hi = 0;
	for (const v of values) {
		if (!Number.isFinite(v)) throw new TypeError(\`not a finite value: \${v}\`);
		if (v < lo) lo = v;
		if (v > hi) hi = v;
	}
	if (lo === hi) hi = lo + 1;
	// #142: descending value axes run from high to low.
	return descending ? [hi, lo] : [lo, hi];
}
`;

const TICKS = `/**
 * Tick values for the value axis: "nice" steps (1, 2 or 5 times a power of ten).
 */

/** Rounds away floating-point noise (0.30000000000000004 becomes 0.3). */
export function clean(value: number): number {
	return Number.parseFloat(value.toPrecision(12));
}

/** A nice step that splits \`span\` into about \`count\` parts. */
export function niceStep(span: number, count: number): number {
	const raw = span / count;
	const magnitude = 10 ** Math.floor(Math.log10(raw));
	const fraction = raw / magnitude;
	const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
	return nice * magnitude;
}

/** Tick values covering [lo, hi] at a nice step, about \`count\` of them, ascending. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
	const step = niceStep(hi - lo, count);
	const first = Math.floor(lo / step) * step;
	const last = Math.ceil(hi / step) * step;
	const n = Math.round((last - first) / step) + 1;
	const ticks = new Array<number>(n);
	for (let i = 0; i < n; i++) ticks[i] = clean(first + i * step);
	return ticks;
}
`;

const GRID_V1 = `/**
 * The value grid of the plot area: tick values and the mapping from values to pixel rows.
 */
import { extent } from "./extent.ts";
import { niceTicks } from "./ticks.ts";

/** A rectangle in pixels. */
export interface Rect {
	x: number;
	y: number;
	w: number;
	h: number;
}

/** Ticks and the value-to-row mapping of a plot. */
export interface Grid {
	ticks: number[];
	min: number;
	max: number;
	/** Pixel row of \`value\`. */
	yOf(value: number): number;
}

/** One tick per 40 pixels of plot height, at least two. */
export function tickCount(plot: Rect): number {
	return Math.max(2, Math.floor(plot.h / 40));
}

/** The grid for \`values\` drawn into \`plot\`; larger values are higher up. */
export function buildGrid(values: readonly number[], plot: Rect): Grid {
	const [lo, hi] = extent(values);
	const ticks = niceTicks(lo, hi, tickCount(plot));
	const min = ticks[0];
	const max = ticks[ticks.length - 1];
	const yOf = (value: number) => Math.round(plot.y + plot.h - ((value - min) / (max - min)) * plot.h);
	return { ticks, min, max, yOf };
}
`;

const GRID_142 = `/**
 * The value grid of the plot area: tick values and the mapping from values to pixel rows.
 */
import { extent } from "./extent.ts";
import { niceTicks } from "./ticks.ts";

/** A rectangle in pixels. */
export interface Rect {
	x: number;
	y: number;
	w: number;
	h: number;
}

/** Ticks and the value-to-row mapping of a plot. */
export interface Grid {
	ticks: number[];
	min: number;
	max: number;
	/** Pixel row of \`value\`. */
	yOf(value: number): number;
}

/** One tick per 40 pixels of plot height, at least two. */
export function tickCount(plot: Rect): number {
	return Math.max(2, Math.floor(plot.h / 40));
}

/**
 * The grid for \`values\` drawn into \`plot\`; larger values are higher up, unless \`descending\`
 * (#142): then the domain comes reversed from extent() and the mapping flips with it.
 */
export function buildGrid(values: readonly number[], plot: Rect, descending = false): Grid {
	const [lo, hi] = extent(values, descending);
	const ticks = niceTicks(lo, hi, tickCount(plot));
	const min = ticks[0];
	const max = ticks[ticks.length - 1];
	const yOf = (value: number) => Math.round(plot.y + plot.h - ((value - min) / (max - min)) * plot.h);
	return { ticks, min, max, yOf };
}
`;

/** grid.ts as the agent's second approach leaves it: extent stays ascending, the mapping flips. */
export const GRID_FIXED_BUILD = `/**
 * The grid for \`values\` drawn into \`plot\`; larger values are higher up, unless \`descending\`
 * (#142): then 0 is at the top and larger values are lower down. The domain and the ticks stay
 * ascending either way; only the mapping to rows flips.
 */
export function buildGrid(values: readonly number[], plot: Rect, descending = false): Grid {
	const [lo, hi] = extent(values);
	const ticks = niceTicks(lo, hi, tickCount(plot));
	const min = ticks[0];
	const max = ticks[ticks.length - 1];
	const yOf = (value: number) => {
		const t = (value - min) / (max - min);
		return Math.round(descending ? plot.y + t * plot.h : plot.y + plot.h - t * plot.h);
	};
	return { ticks, min, max, yOf };
}`;

/** The part of grid.ts (#142 version) that GRID_FIXED_BUILD replaces. */
export const GRID_142_BUILD = GRID_142.slice(GRID_142.indexOf("/**\n * The grid for")).trimEnd();

const LAYOUT = (withDescending: boolean) => `/**
 * Layout of a bar chart: plot area, value grid, one bar per category and series, category labels.
 * Pure arithmetic; drawing happens in render.ts.
 */
import type { ChartSpec } from "../spec.ts";
import { extent } from "./extent.ts";
import { buildGrid, type Grid, type Rect } from "./grid.ts";

/** Width of one character of the pixel font at scale 2, including spacing. */
export const CHAR_W = 8;

/** A bar in pixels. */
export interface Bar {
	x: number;
	y: number;
	w: number;
	h: number;
	series: number;
	category: number;
	value: number;
}

/** A text placed at a pixel position (top left). */
export interface Label {
	text: string;
	x: number;
	y: number;
}

/** Everything render.ts needs to draw a chart. */
export interface Layout {
	width: number;
	height: number;
	plot: Rect;
	grid: Grid;
	bars: Bar[];
	labels: Label[];
	title: Label;
	axisTitle: string;
}

/** Lays out \`spec\`. */
export function layoutChart(spec: ChartSpec): Layout {
	const width = spec.width ?? 480;
	const height = spec.height ?? 300;
	const plot: Rect = { x: 56, y: 40, w: width - 56 - 16, h: height - 40 - 40 };
	const values = spec.series.flatMap((s) => s.values);
	const grid = buildGrid(values, plot${withDescending ? ", spec.descending ?? false" : ""});
	const [first, last] = extent(values${withDescending ? ", spec.descending ?? false" : ""});
	const axisTitle = \`\${spec.valueLabel ?? "value"} (\${first} to \${last})\`;
	const slot = plot.w / spec.categories.length;
	const barW = Math.max(1, Math.floor((slot * 0.8) / spec.series.length));
	const zero = grid.yOf(0);
	const bars: Bar[] = [];
	spec.categories.forEach((_, category) => {
		spec.series.forEach((s, series) => {
			const value = s.values[category] ?? 0;
			const y = grid.yOf(value);
			bars.push({
				x: Math.round(plot.x + category * slot + slot * 0.1 + series * barW),
				y: Math.min(zero, y),
				w: barW,
				h: Math.abs(y - zero),
				series,
				category,
				value,
			});
		});
	});
	const labels = spec.categories.map((text, category) => ({
		text,
		x: Math.round(plot.x + category * slot + slot / 2 - (text.length * CHAR_W) / 2),
		y: plot.y + plot.h + 10,
	}));
	return { width, height, plot, grid, bars, labels, title: { text: spec.title, x: plot.x, y: 12 }, axisTitle };
}
`;

const GLYPH_ROWS: Record<string, string> = {
	" ": "... ... ... ... ...",
	"0": "### #.# #.# #.# ###",
	"1": ".#. ##. .#. .#. ###",
	"2": "##. ..# .#. #.. ###",
	"3": "##. ..# .#. ..# ##.",
	"4": "#.# #.# ### ..# ..#",
	"5": "### #.. ##. ..# ##.",
	"6": ".## #.. ### #.# ###",
	"7": "### ..# .#. .#. .#.",
	"8": "### #.# ### #.# ###",
	"9": "### #.# ### ..# ##.",
	A: ".#. #.# ### #.# #.#",
	B: "##. #.# ##. #.# ##.",
	C: ".## #.. #.. #.. .##",
	D: "##. #.# #.# #.# ##.",
	E: "### #.. ##. #.. ###",
	F: "### #.. ##. #.. #..",
	G: ".## #.. #.# #.# .##",
	H: "#.# #.# ### #.# #.#",
	I: "### .#. .#. .#. ###",
	J: "..# ..# ..# #.# .#.",
	K: "#.# #.# ##. #.# #.#",
	L: "#.. #.. #.. #.. ###",
	M: "#.# ### ### #.# #.#",
	N: "##. #.# #.# #.# #.#",
	O: ".#. #.# #.# #.# .#.",
	P: "##. #.# ##. #.. #..",
	Q: ".#. #.# #.# ##. .##",
	R: "##. #.# ##. #.# #.#",
	S: ".## #.. .#. ..# ##.",
	T: "### .#. .#. .#. .#.",
	U: "#.# #.# #.# #.# ###",
	V: "#.# #.# #.# #.# .#.",
	W: "#.# #.# ### ### #.#",
	X: "#.# #.# .#. #.# #.#",
	Y: "#.# #.# .#. .#. .#.",
	Z: "### ..# .#. #.. ###",
	"-": "... ... ### ... ...",
	".": "... ... ... ... .#.",
	",": "... ... ... .#. #..",
	":": "... .#. ... .#. ...",
	"%": "#.# ..# .#. #.. #.#",
	"(": ".#. #.. #.. #.. .#.",
	")": ".#. ..# ..# ..# .#.",
	"/": "..# ..# .#. #.. #..",
	"+": "... .#. ### .#. ...",
	"&": ".#. #.# .#. #.# .##",
	"'": ".#. .#. ... ... ...",
	"?": "##. ..# .#. ... .#.",
};

function fontSource(withEllipsis: boolean): string {
	const rows = { ...GLYPH_ROWS, ...(withEllipsis ? { "…": "... ... ... ... #.#" } : {}) };
	const entries = Object.entries(rows)
		.map(([ch, r]) => {
			const lines = r.split(" ");
			const art = lines.map((l) => `\t// ${l.replaceAll(".", " ").replaceAll("#", "█")}`).join("\n");
			return `${art}\n\t${JSON.stringify(ch)}: [${lines.map((l) => JSON.stringify(l)).join(", ")}],`;
		})
		.join("\n");
	return `/**
 * The 3x5 pixel font: digits, capital letters and a little punctuation. Lower case is drawn with
 * the capitals. Each glyph is five rows of three pixels, "#" inked; the comment above each glyph
 * shows it. Characters without a glyph are drawn as "?".
 */

/** Glyph width in pixels (without spacing). */
export const GLYPH_WIDTH = 3;
/** Glyph height in pixels. */
export const GLYPH_HEIGHT = 5;

/** Every glyph, by character. */
export const GLYPHS: Readonly<Record<string, readonly string[]>> = {
${entries}
};

/** The glyph of \`ch\` (upper-cased), or the "?" glyph. */
export function glyph(ch: string): readonly string[] {
	return GLYPHS[ch] ?? GLYPHS[ch.toUpperCase()] ?? GLYPHS["?"];
}
`;
}

const CANVAS = `/**
 * An RGB pixel buffer with the few drawing operations charts need.
 */
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from "./font.ts";

/** A colour as [r, g, b], 0..255. */
export type Rgb = readonly [number, number, number];

/** An RGB canvas, 3 bytes per pixel, row-major. */
export class Canvas {
	readonly width: number;
	readonly height: number;
	readonly pixels: Uint8Array;

	constructor(width: number, height: number, background: Rgb) {
		if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
			throw new RangeError(\`invalid canvas size \${width}x\${height}\`);
		}
		this.width = width;
		this.height = height;
		this.pixels = new Uint8Array(width * height * 3);
		this.fillRect(0, 0, width, height, background);
	}

	/** Sets one pixel; outside the canvas nothing happens. */
	setPixel(x: number, y: number, color: Rgb): void {
		if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
		const i = (y * this.width + x) * 3;
		this.pixels[i] = color[0];
		this.pixels[i + 1] = color[1];
		this.pixels[i + 2] = color[2];
	}

	/** The colour of a pixel. */
	getPixel(x: number, y: number): Rgb {
		const i = (y * this.width + x) * 3;
		return [this.pixels[i], this.pixels[i + 1], this.pixels[i + 2]];
	}

	/** Fills a rectangle (clipped to the canvas). */
	fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
		for (let yy = y; yy < y + h; yy++) {
			for (let xx = x; xx < x + w; xx++) this.setPixel(xx, yy, color);
		}
	}

	/** A horizontal line from x0 to x1 inclusive. */
	hline(x0: number, x1: number, y: number, color: Rgb): void {
		for (let x = x0; x <= x1; x++) this.setPixel(x, y, color);
	}

	/** A vertical line from y0 to y1 inclusive. */
	vline(x: number, y0: number, y1: number, color: Rgb): void {
		for (let y = y0; y <= y1; y++) this.setPixel(x, y, color);
	}

	/** Draws \`text\` with the pixel font, top left at (x, y), each font pixel \`scale\` pixels wide. */
	text(text: string, x: number, y: number, color: Rgb, scale = 2): void {
		let cx = x;
		for (const ch of text) {
			const rows = glyph(ch);
			for (let gy = 0; gy < GLYPH_HEIGHT; gy++) {
				for (let gx = 0; gx < GLYPH_WIDTH; gx++) {
					if (rows[gy][gx] === "#") this.fillRect(cx + gx * scale, y + gy * scale, scale, scale, color);
				}
			}
			cx += (GLYPH_WIDTH + 1) * scale;
		}
	}
}

/** Width in pixels of \`text\` drawn at \`scale\`. */
export function textWidth(text: string, scale = 2): number {
	return [...text].length * (GLYPH_WIDTH + 1) * scale - scale;
}
`;

/** fillRect and hline as the agent rewrites them for speed (same pixels, row-wise copies). */
export const CANVAS_FAST = {
	fillRect: {
		oldText: `	/** Fills a rectangle (clipped to the canvas). */
	fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
		for (let yy = y; yy < y + h; yy++) {
			for (let xx = x; xx < x + w; xx++) this.setPixel(xx, yy, color);
		}
	}`,
		newText: `	/** Fills a rectangle (clipped to the canvas): one row is built once and copied into every row. */
	fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
		const x0 = Math.max(0, Math.round(x));
		const x1 = Math.min(this.width, Math.round(x + w));
		const y0 = Math.max(0, Math.round(y));
		const y1 = Math.min(this.height, Math.round(y + h));
		if (x1 <= x0 || y1 <= y0) return;
		const row = new Uint8Array((x1 - x0) * 3);
		for (let i = 0; i < row.length; i += 3) {
			row[i] = color[0];
			row[i + 1] = color[1];
			row[i + 2] = color[2];
		}
		for (let yy = y0; yy < y1; yy++) this.pixels.set(row, (yy * this.width + x0) * 3);
	}`,
	},
	hline: {
		oldText: `	/** A horizontal line from x0 to x1 inclusive. */
	hline(x0: number, x1: number, y: number, color: Rgb): void {
		for (let x = x0; x <= x1; x++) this.setPixel(x, y, color);
	}`,
		newText: `	/** A horizontal line from x0 to x1 inclusive. */
	hline(x0: number, x1: number, y: number, color: Rgb): void {
		this.fillRect(x0, y, x1 - x0 + 1, 1, color);
	}`,
	},
};

const PNG = `/**
 * PNG encoding of an RGB buffer (8-bit truecolour, no interlace, filter 0), with node:zlib.
 */
import { crc32, deflateSync } from "node:zlib";

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
	const length = Buffer.alloc(4);
	length.writeUInt32BE(data.length);
	const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(body));
	return Buffer.concat([length, body, crc]);
}

/** The PNG file for a \`width\` x \`height\` RGB buffer (3 bytes per pixel, row-major). */
export function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
	if (rgb.length !== width * height * 3) {
		throw new RangeError(\`expected \${width * height * 3} bytes of RGB, got \${rgb.length}\`);
	}
	const stride = width * 3;
	const raw = Buffer.alloc((stride + 1) * height);
	for (let y = 0; y < height; y++) raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
	const header = Buffer.alloc(13);
	header.writeUInt32BE(width, 0);
	header.writeUInt32BE(height, 4);
	header[8] = 8;
	header[9] = 2;
	return Buffer.concat([SIGNATURE, chunk("IHDR", header), chunk("IDAT", deflateSync(raw, { level: 9 })), chunk("IEND", Buffer.alloc(0))]);
}
`;

const THEME = `/**
 * Colours.
 */
import type { Rgb } from "./raster/canvas.ts";

/** A colour theme. */
export interface Theme {
	background: Rgb;
	ink: Rgb;
	grid: Rgb;
	axis: Rgb;
	series: readonly Rgb[];
}

/** The built-in themes. */
export const themes: Readonly<Record<"light" | "dark", Theme>> = {
	light: {
		background: [255, 255, 255],
		ink: [33, 37, 41],
		grid: [222, 226, 230],
		axis: [108, 117, 125],
		series: [
			[31, 119, 180],
			[255, 127, 14],
			[44, 160, 44],
			[214, 39, 40],
			[148, 103, 189],
		],
	},
	dark: {
		background: [24, 26, 27],
		ink: [233, 236, 239],
		grid: [52, 58, 64],
		axis: [134, 142, 150],
		series: [
			[77, 171, 247],
			[255, 169, 77],
			[105, 219, 124],
			[255, 107, 107],
			[177, 151, 252],
		],
	},
};

/**
 * The series colours of the light theme.
 * @deprecated since 2.1: use themes.light.series
 */
export function palette(): readonly Rgb[] {
	process.emitWarning("palette() is deprecated; use themes.light.series", {
		type: "DeprecationWarning",
		code: "CHARTKIT_DEP_PALETTE",
	});
	return themes.light.series;
}
`;

const RENDER = `/**
 * renderChart(): the public API. Lays the chart out and draws it into a PNG.
 */
import { layoutChart } from "./layout/index.ts";
import { Canvas, textWidth } from "./raster/canvas.ts";
import { encodePng } from "./raster/png.ts";
import type { ChartSpec } from "./spec.ts";
import { palette, themes } from "./theme.ts";

/** Renders \`spec\` as a PNG. */
export function renderChart(spec: ChartSpec): Buffer {
	const layout = layoutChart(spec);
	const theme = themes.light;
	const colors = palette();
	const canvas = new Canvas(layout.width, layout.height, theme.background);
	const { plot, grid } = layout;
	canvas.text(layout.title.text, layout.title.x, layout.title.y, theme.ink, 2);
	for (const tick of grid.ticks) {
		const y = grid.yOf(tick);
		canvas.hline(plot.x, plot.x + plot.w, y, tick === 0 ? theme.axis : theme.grid);
		const label = String(tick);
		canvas.text(label, plot.x - 6 - textWidth(label), y - 5, theme.ink, 2);
	}
	canvas.vline(plot.x, plot.y, plot.y + plot.h, theme.axis);
	for (const bar of layout.bars) canvas.fillRect(bar.x, bar.y, bar.w, bar.h, colors[bar.series % colors.length]);
	for (const label of layout.labels) canvas.text(label.text, label.x, label.y, theme.ink, 2);
	canvas.text(layout.axisTitle, plot.x, layout.height - 14, theme.axis, 1);
	return encodePng(canvas.width, canvas.height, canvas.pixels);
}
`;

const INDEX = `/**
 * chartkit's public API.
 */
export { renderChart } from "./render.ts";
export { type ChartSpec, checkSpec, type Series } from "./spec.ts";
`;

const CLI = `/**
 * \`node src/cli.ts <spec.json> [-o out.png]\`: renders a chart spec to a PNG file.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { renderChart } from "./render.ts";
import { type ChartSpec, checkSpec } from "./spec.ts";

const [specPath, ...rest] = process.argv.slice(2);
if (!specPath) {
	console.error("usage: node src/cli.ts <spec.json> [-o out.png]");
	process.exit(2);
}
const o = rest.indexOf("-o");
const out = o >= 0 ? rest[o + 1] : specPath.replace(/\\.json$/, ".png");
const spec = JSON.parse(readFileSync(specPath, "utf8")) as ChartSpec;
const problems = checkSpec(spec);
if (problems.length > 0) {
	for (const p of problems) console.error(\`\${specPath}: \${p}\`);
	process.exit(1);
}
const png = renderChart(spec);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, png);
console.log(\`wrote \${out} (\${spec.width ?? 480}x\${spec.height ?? 300}, \${png.length} bytes)\`);
`;

const BENCH = `/**
 * How long renderChart takes for a big dashboard chart: \`node bench/render.ts\`.
 */
import { renderChart } from "../src/render.ts";

const categories = Array.from({ length: 240 }, (_, i) => \`W\${i + 1}\`);
const spec = {
	title: "Weekly signups by region",
	categories,
	series: [0, 1, 2].map((k) => ({
		name: \`R\${k}\`,
		values: categories.map((_, i) => Math.round(Math.sin(i / 9 + k) * 120 + 40)),
	})),
	width: 1920,
	height: 1080,
};
const runs = 12;
renderChart(spec);
const started = performance.now();
for (let i = 0; i < runs; i++) renderChart(spec);
const ms = (performance.now() - started) / runs;
console.log(\`renderChart \${spec.width}x\${spec.height}, \${categories.length} categories x 3 series: \${ms.toFixed(1)} ms per render (\${runs} runs)\`);
`;

const Q3 = {
	title: "Q3 revenue (kEUR)",
	valueLabel: "kEUR",
	categories: ["Jul", "Aug", "Sep"],
	series: [
		{ name: "EMEA", values: [40, -25, 95] },
		{ name: "APAC", values: [60, 35, 70] },
	],
	width: 480,
	height: 300,
};

const RANKINGS = {
	title: "Support ranking",
	valueLabel: "rank",
	categories: ["Oslo", "Lyon", "Graz", "Porto"],
	series: [{ name: "rank", values: [1, 4, 9, 2] }],
	width: 480,
	height: 300,
	descending: true,
};

const LONG_LABELS = {
	title: "Tickets by team",
	valueLabel: "tickets",
	categories: ["Payments Platform", "Identity & Access", "Data Warehouse", "Mobile", "Customer Success EMEA"],
	series: [{ name: "open", values: [42, 17, 29, 8, 55] }],
	width: 640,
	height: 300,
};

const OUTAGES = ["2025-03-14", "2025-07-02", "2025-11-20"];

/** A year of daily traffic; the mobile series has no value on three outage days (JSON null). */
function traffic(): string {
	const days: string[] = [];
	for (let d = new Date(Date.UTC(2025, 0, 1)); d.getUTCFullYear() === 2025; d.setUTCDate(d.getUTCDate() + 1)) {
		days.push(d.toISOString().slice(0, 10));
	}
	const series = ["web", "api", "mobile"].map((name, k) => ({
		name,
		values: days.map((day, i) =>
			name === "mobile" && OUTAGES.includes(day)
				? null
				: Math.round(1200 + 450 * Math.sin(i / 7 + k) + 300 * Math.sin(i / 58) + ((i * 37 + k * 11) % 97)),
		),
	}));
	return `${JSON.stringify({ title: "Daily requests 2025 (thousands)", valueLabel: "k requests", categories: days, series, width: 1920, height: 600 }, null, 2)}\n`;
}

const TEST_TICKS = `import assert from "node:assert/strict";
import { it } from "node:test";
import { clean, niceStep, niceTicks } from "../src/layout/ticks.ts";

it("picks nice steps", () => {
	assert.equal(niceStep(140, 5), 50);
	assert.equal(niceStep(9, 5), 2);
	assert.equal(niceStep(0.9, 3), 0.5);
});

it("covers the range with ticks", () => {
	assert.deepEqual(niceTicks(-40, 100, 5), [-50, 0, 50, 100]);
	assert.deepEqual(niceTicks(0, 9, 5), [0, 2, 4, 6, 8, 10]);
});

it("cleans floating-point noise", () => {
	assert.equal(clean(0.1 + 0.2), 0.3);
});
`;

const TEST_LAYOUT = (withDescending: boolean) => `import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { layoutChart } from "../src/layout/index.ts";
import type { ChartSpec } from "../src/spec.ts";

const q3: ChartSpec = ${JSON.stringify(Q3)};
${withDescending ? `const rankings: ChartSpec = ${JSON.stringify(RANKINGS)};\n` : ""}
describe("layout", () => {
	it("ascending chart: ticks cover the data", () => {
		assert.deepEqual(layoutChart(q3).grid.ticks, [-50, 0, 50, 100]);
	});

	it("bars start at the zero line", () => {
		const { bars, grid } = layoutChart(q3);
		const zero = grid.yOf(0);
		for (const bar of bars) assert.ok(bar.y === zero || bar.y + bar.h === zero, \`bar \${bar.category}/\${bar.series}\`);
	});

	it("negative values hang below the zero line", () => {
		const { bars, grid } = layoutChart(q3);
		const aug = bars.find((b) => b.category === 1 && b.series === 0)!;
		assert.equal(aug.y, grid.yOf(0));
		assert.ok(aug.h > 0);
	});
${
	withDescending
		? `
	it("descending chart: ticks from 0 to the largest rank", () => {
		assert.deepEqual(layoutChart(rankings).grid.ticks, [0, 2, 4, 6, 8, 10]);
	});

	it("descending chart: the largest value reaches lowest", () => {
		const { bars } = layoutChart(rankings);
		const nine = bars[2];
		const one = bars[0];
		assert.ok(nine.y + nine.h > one.y + one.h, \`rank 9 ends at \${nine.y + nine.h}, rank 1 at \${one.y + one.h}\`);
	});
`
		: ""
}});
`;

const TEST_RENDER = `import assert from "node:assert/strict";
import { it } from "node:test";
import { inflateSync } from "node:zlib";
import { renderChart } from "../src/index.ts";

const PNG_SIGNATURE = "89504e470d0a1a0a";

it("renders a PNG with the requested size", () => {
	const png = renderChart({ title: "t", categories: ["a", "b"], series: [{ name: "s", values: [1, 2] }], width: 200, height: 150 });
	assert.equal(png.subarray(0, 8).toString("hex"), PNG_SIGNATURE);
	assert.equal(png.readUInt32BE(16), 200);
	assert.equal(png.readUInt32BE(20), 150);
});

it("draws the bars in the series colour", () => {
	const png = renderChart({ title: "", categories: ["a"], series: [{ name: "s", values: [10] }], width: 200, height: 150 });
	const idat = png.subarray(41, png.length - 16);
	const raw = inflateSync(idat);
	const stride = 200 * 3 + 1;
	const y = 100;
	const x = 56 + 64;
	const i = y * stride + 1 + x * 3;
	assert.deepEqual([...raw.subarray(i, i + 3)], [31, 119, 180]);
});
`;

/** Every file of the project at its first commit (before pull request #142). */
export function chartFiles(): Record<string, string> {
	return {
		"package.json": PACKAGE,
		"tsconfig.json": TSCONFIG,
		".gitignore": "node_modules/\nout/\n",
		"README.md": README,
		"CHANGELOG.md": CHANGELOG.replace(/## 2\.3\.0[\s\S]*?(?=## 2\.2\.0)/, ""),
		"src/index.ts": INDEX,
		"src/spec.ts": SPEC_V1,
		"src/theme.ts": THEME,
		"src/render.ts": RENDER,
		"src/cli.ts": CLI,
		"src/layout/extent.ts": EXTENT_V1,
		"src/layout/ticks.ts": TICKS,
		"src/layout/grid.ts": GRID_V1,
		"src/layout/index.ts": LAYOUT(false),
		"src/raster/font.ts": fontSource(false),
		"src/raster/canvas.ts": CANVAS,
		"src/raster/png.ts": PNG,
		"bench/render.ts": BENCH,
		"examples/q3-revenue.json": `${JSON.stringify(Q3, null, 2)}\n`,
		"examples/long-labels.json": `${JSON.stringify(LONG_LABELS, null, 2)}\n`,
		"examples/traffic-2025.json": traffic(),
		"test/ticks.test.ts": TEST_TICKS,
		"test/layout.test.ts": TEST_LAYOUT(false),
		"test/render.test.ts": TEST_RENDER,
	};
}

/** The files pull request #142 (descending value axes) changed. */
export const MERGE_142: Record<string, string> = {
	"CHANGELOG.md": CHANGELOG,
	"src/spec.ts": SPEC_V2,
	"src/layout/extent.ts": EXTENT_142,
	"src/layout/grid.ts": GRID_142,
	"src/layout/index.ts": LAYOUT(true),
	"examples/rankings.json": `${JSON.stringify(RANKINGS, null, 2)}\n`,
	"test/layout.test.ts": TEST_LAYOUT(true),
};

/** extent.ts before and after the agent's fix. */
export const EXTENT_FIX = { before: EXTENT_142, after: EXTENT_V1 };

/** The regression test the agent writes for extent(). */
export const TEST_EXTENT = `import assert from "node:assert/strict";
import { it } from "node:test";
import { extent } from "../src/layout/extent.ts";

it("extent is always ascending, whatever the order of the values (#142 regression)", () => {
	assert.deepEqual(extent([1, 4, 9, 2]), [0, 9]);
	assert.deepEqual(extent([9, 4, 1]), [0, 9]);
	assert.deepEqual(extent([-3, -8]), [-8, 0]);
});

it("extent includes zero and never collapses", () => {
	assert.deepEqual(extent([5, 5]), [0, 5]);
	assert.deepEqual(extent([0, 0]), [0, 1]);
	assert.deepEqual(extent([]), [0, 1]);
});

it("extent rejects non-finite values", () => {
	assert.throws(() => extent([1, Number.NaN]), /not a finite value: NaN/);
});
`;

/** The label truncation module the agent writes. */
export const LABELS_SOURCE = `/**
 * Category labels: long labels are cut so neighbouring labels don't overlap.
 */

/** Longest label drawn in full, in characters. */
export const MAX_LABEL = 12;

/**
 * \`text\` if it has at most \`max\` characters, else its first \`max - 1\` characters (trailing
 * spaces dropped) and an ellipsis. Counts code points, so an emoji is one character.
 */
export function truncateLabel(text: string, max = MAX_LABEL): string {
	const chars = [...text];
	if (chars.length <= max) return text;
	return \`\${chars.slice(0, max - 1).join("").trimEnd()}…\`;
}
`;

/** Its tests, as the agent first writes them (one expectation forgets the trimmed space). */
export const TEST_LABELS = `import assert from "node:assert/strict";
import { it } from "node:test";
import { layoutChart } from "../src/layout/index.ts";
import { truncateLabel } from "../src/layout/labels.ts";
import { glyph } from "../src/raster/font.ts";

it("keeps short labels", () => {
	assert.equal(truncateLabel("Mobile"), "Mobile");
	assert.equal(truncateLabel("Twelve chars"), "Twelve chars");
});

it("cuts long labels with an ellipsis", () => {
	assert.equal(truncateLabel("Payments Platform"), "Payments Pl…");
	assert.equal(truncateLabel("Identity & Access"), "Identity & …");
});

it("the font can draw the ellipsis", () => {
	assert.notDeepEqual(glyph("…"), glyph("?"));
});

it("layout uses the truncated labels", () => {
	const { labels } = layoutChart({
		title: "t",
		categories: ["Customer Success EMEA", "Mobile"],
		series: [{ name: "s", values: [1, 2] }],
	});
	assert.deepEqual(
		labels.map((l) => l.text),
		["Customer Su…", "Mobile"],
	);
});
`;

/** The edit that adds an ellipsis glyph to the font (after "?"). */
export const ELLIPSIS_EDIT = {
	oldText: `\t"?": ["##.", "..#", ".#.", "...", ".#."],`,
	newText: `\t"?": ["##.", "..#", ".#.", "...", ".#."],\n\t//    \n\t//    \n\t//    \n\t//    \n\t// █ █\n\t"…": ["...", "...", "...", "...", "#.#"],`,
};

/** The edits that let series values be null (a gap: no bar), in spec.ts and the layout. */
export const GAPS = {
	specType: {
		oldText: "\tname: string;\n\tvalues: number[];",
		newText:
			"\tname: string;\n\t/** One per category; null is a gap (no bar), e.g. a day without data. */\n\tvalues: (number | null)[];",
	},
	specCheck: {
		oldText: `		if (!s.values.every(Number.isFinite)) problems.push(\`series[\${i}] (\${s.name}) has a non-finite value\`);`,
		newText: `		if (!s.values.every((v) => v === null || Number.isFinite(v))) {
			problems.push(\`series[\${i}] (\${s.name}) has a value that is neither a finite number nor null\`);
		}`,
	},
	bars: {
		oldText: "\t\t\tconst value = s.values[category] ?? 0;\n",
		newText: "\t\t\tconst value = s.values[category];\n\t\t\tif (value === null || value === undefined) return;\n",
	},
	values: {
		oldText: "\tconst values = spec.series.flatMap((s) => s.values);",
		newText: "\tconst values = spec.series.flatMap((s) => s.values).filter((v): v is number => v !== null);",
	},
};

/** The test the agent writes for gaps. */
export const TEST_GAPS = `import assert from "node:assert/strict";
import { it } from "node:test";
import { layoutChart } from "../src/layout/index.ts";
import { checkSpec } from "../src/spec.ts";

const spec = {
	title: "gaps",
	categories: ["a", "b", "c"],
	series: [
		{ name: "s", values: [3, null, 5] },
		{ name: "t", values: [1, 2, 4] },
	],
};

it("accepts null values and still rejects NaN", () => {
	assert.deepEqual(checkSpec(spec), []);
	assert.match(checkSpec({ ...spec, series: [{ name: "x", values: [1, Number.NaN, 2] }] }).join(), /neither a finite number nor null/);
});

it("draws no bar for a gap", () => {
	const { bars } = layoutChart(spec);
	assert.equal(bars.length, 5);
	assert.ok(!bars.some((b) => b.series === 0 && b.category === 1));
});
`;
