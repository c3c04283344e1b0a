/**
 * The GGUF header reader behind models.list()'s size and quantization
 * (models/gguf-header.ts), on files our own GGUF writer makes.
 */
import { describe, expect, it } from "vitest";
import { GgufInvalid, GgufTruncated, parseGgufHeader, readGgufHeader } from "../../src/models/gguf-header.js";
import { writeTinyGguf } from "../support/gguf-writer.js";

describe("GGUF header", () => {
  it("a file without general.file_type: the type of most weights (f32 here)", () => {
    const header = parseGgufHeader(writeTinyGguf());
    expect(header).toMatchObject({ version: 3, architecture: "llama", name: "tiny-random", quantization: "F32", tensorCount: 21 });
  });

  it.each([[15, "Q4_K_M"], [1, "F16"], [7, "Q8_0"], [30, "IQ4_XS"]])("general.file_type %i names the quantization %s", (fileType, label) => {
    expect(parseGgufHeader(writeTinyGguf({ fileType })).quantization).toBe(label);
  });

  it("a prefix that ends inside the header asks for more; readGgufHeader reads a growing prefix, never the weights", async () => {
    const file = writeTinyGguf({ fileType: 15 });
    expect(() => parseGgufHeader(file.subarray(0, 200))).toThrow(GgufTruncated);
    const reads: number[] = [];
    const header = await readGgufHeader(async (end) => {
      reads.push(end);
      return file.subarray(0, end);
    });
    expect(header?.quantization).toBe("Q4_K_M");
    // The header of this ~0.5 MB file is a few KB: the first read suffices.
    expect(reads).toEqual([256 * 1024]);
  });

  it("not a GGUF: refused, not read on", async () => {
    expect(() => parseGgufHeader(new TextEncoder().encode("<!doctype html><html>"))).toThrow(GgufInvalid);
    const bytes = writeTinyGguf();
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(4, 9, true);
    expect(() => parseGgufHeader(bytes)).toThrow(/version 9/);
  });

  it("a corrupt tensor count does not allocate or loop: refused", () => {
    const bytes = writeTinyGguf();
    new DataView(bytes.buffer, bytes.byteOffset).setBigUint64(8, 1n << 40n, true);
    expect(() => parseGgufHeader(bytes)).toThrow(GgufInvalid);
  });
});
