/**
 * `--images size`: an image's pixel size read from PNG, GIF, JPEG and WebP headers, each provider's
 * token rule on known sizes (OpenAI's own documented example among them), the block table pricing
 * image parts by that rule only when asked, and the command's option.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runReplay } from "../../src/replay/cli.ts";
import { imageSize, UNKNOWN_IMAGE_TOKENS, visionTokens } from "../../src/replay/image-size.ts";
import { parseArgs, UsageError } from "../../src/replay/options.ts";
import { BlockTable } from "../../src/replay/request-shape.ts";

const b64 = (bytes: number[] | Buffer) => Buffer.from(bytes).toString("base64");

function png(width: number, height: number): string {
	const head = Buffer.alloc(33);
	Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head, 0);
	head.writeUInt32BE(13, 8);
	head.write("IHDR", 12, "latin1");
	head.writeUInt32BE(width, 16);
	head.writeUInt32BE(height, 20);
	return b64(head);
}

function gif(width: number, height: number): string {
	const head = Buffer.alloc(13);
	head.write("GIF89a", 0, "latin1");
	head.writeUInt16LE(width, 6);
	head.writeUInt16LE(height, 8);
	return b64(head);
}

/** SOI, an APP0 segment to skip, then a baseline start-of-frame. */
function jpeg(width: number, height: number): string {
	const app0 = [0xff, 0xe0, 0x00, 0x10, ...Buffer.from("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0];
	const sof = [0xff, 0xc0, 0x00, 0x11, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3];
	return b64([0xff, 0xd8, ...app0, ...sof, ...new Array(12).fill(0)]);
}

function webp(chunk: "VP8 " | "VP8L" | "VP8X", width: number, height: number): string {
	const b = Buffer.alloc(32);
	b.write("RIFF", 0, "latin1");
	b.write("WEBP", 8, "latin1");
	b.write(chunk, 12, "latin1");
	if (chunk === "VP8 ") {
		b.writeUInt16LE(width, 26);
		b.writeUInt16LE(height, 28);
	} else if (chunk === "VP8L") {
		b[20] = 0x2f;
		b.writeUInt32LE(((width - 1) | ((height - 1) << 14)) >>> 0, 21);
	} else {
		b.writeUIntLE(width - 1, 24, 3);
		b.writeUIntLE(height - 1, 27, 3);
	}
	return b64(b);
}

test("the pixel size is read from PNG, GIF, JPEG and WebP headers", () => {
	assert.deepEqual(imageSize(png(480, 300)), { width: 480, height: 300 });
	assert.deepEqual(imageSize(gif(64, 48)), { width: 64, height: 48 });
	assert.deepEqual(imageSize(jpeg(1920, 1080)), { width: 1920, height: 1080 });
	assert.deepEqual(imageSize(webp("VP8 ", 800, 600)), { width: 800, height: 600 });
	assert.deepEqual(imageSize(webp("VP8L", 1000, 700)), { width: 1000, height: 700 });
	assert.deepEqual(imageSize(webp("VP8X", 5000, 4000)), { width: 5000, height: 4000 });
	assert.equal(imageSize(b64(Buffer.from("not an image at all, just text"))), undefined);
	assert.equal(imageSize(""), undefined);
	assert.equal(imageSize(png(0, 300)), undefined, "a zero side is no size");
});

test("each provider's rule, on known sizes", () => {
	// Anthropic: width x height / 750, after scaling to a 1568-px long side and about 1.15 megapixels.
	assert.equal(visionTokens({ width: 480, height: 300 }, "anthropic"), 192);
	assert.equal(visionTokens({ width: 1920, height: 600 }, "anthropic"), 1025, "1568 x 490");
	assert.equal(visionTokens({ width: 4000, height: 3000 }, "anthropic"), 1534, "1238 x 929");
	// OpenAI, high detail: OpenAI's own example (2048 x 4096 -> 768 x 1536, six tiles) and a wide one.
	assert.equal(visionTokens({ width: 2048, height: 4096 }, "openai"), 85 + 170 * 6);
	assert.equal(visionTokens({ width: 1920, height: 600 }, "openai"), 85 + 170 * 8);
	assert.equal(visionTokens(undefined, "anthropic"), UNKNOWN_IMAGE_TOKENS);
	assert.equal(visionTokens(undefined, "openai"), UNKNOWN_IMAGE_TOKENS);
});

test("the block table prices an image part by its size only when given the rule", () => {
	const data = png(1920, 600);
	const message = {
		role: "toolResult",
		toolCallId: "c1",
		toolName: "read",
		content: [
			{ type: "text", text: "Read image file [image/png]" },
			{ type: "image", data, mimeType: "image/png" },
		],
	};
	const bySize = new BlockTable((d) => visionTokens(imageSize(d), "anthropic")).shape([message]);
	const asText = new BlockTable().shape([message]);
	assert.deepEqual(bySize.tokens, [7, 1025]);
	assert.deepEqual(asText.tokens, [7, Math.ceil(`[image:${data.length}]`.length / 4)]);
});

test("two images of the same encoded length are two blocks", () => {
	const image = (data: string) => ({
		role: "toolResult",
		toolCallId: data,
		toolName: "read",
		content: [{ type: "image", data, mimeType: "image/png" }],
	});
	const [a, b] = [png(100, 100), png(200, 100)];
	assert.equal(a.length, b.length);
	const shape = new BlockTable().shape([image(a), image(b), image(a)]);
	assert.equal(shape.ids[0], shape.ids[2], "the same image is one block");
	assert.notEqual(shape.ids[0], shape.ids[1]);
});

test("--images takes text (the default) or size", () => {
	assert.equal(parseArgs(["s.jsonl"]).images, "text");
	assert.equal(parseArgs(["s.jsonl", "--images", "size"]).images, "size");
	assert.throws(() => parseArgs(["s.jsonl", "--images", "pixels"]), UsageError);
});

test("replayed with --images size, a session's images cost what the provider charges; one without images does not move", async () => {
	const run = (file: string, images: string) =>
		runReplay(parseArgs([file, "--policy", "pi", "--window", "140000", "--images", images]), () => {});
	const withImages = "test/fixtures/sessions/debug-branchy.jsonl";
	const [[text], [size]] = await Promise.all([run(withImages, "text"), run(withImages, "size")]);
	assert.equal(size.images, "size");
	// debug-branchy reads back 480x300, 640x300 and 1920x600 PNGs: 192, 256 and 1025 tokens each.
	assert.ok(size.policies[0].peakPrompt > text.policies[0].peakPrompt + 1000, `${size.policies[0].peakPrompt}`);
	assert.ok(size.policies[0].cost > text.policies[0].cost);
	const without = "test/fixtures/sessions/refactor-long.jsonl";
	const [[a], [b]] = await Promise.all([run(without, "text"), run(without, "size")]);
	assert.equal(b.policies[0].cost, a.policies[0].cost);
});
