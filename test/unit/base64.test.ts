/** Bytes ↔ base64 for audio and images an app sends: every byte value, and sizes far past the call-argument limit. */
import { describe, expect, it } from "vitest";
import { binaryString, bytesToBase64 } from "../../src/protocol/base64.js";
import { base64ToBytes } from "../../src/audio/base64.js";

describe("base64", () => {
  it("encodes every byte value as Node's Buffer does, and decodes it back", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(bytesToBase64(all)).toBe(Buffer.from(all).toString("base64"));
    expect(base64ToBytes(bytesToBase64(all))).toEqual(all);
    expect(binaryString(Uint8Array.of(0x4f, 0x67, 0x67, 0x53, 0x80, 0x9f, 0xff))).toBe("OggS\u0080\u009f\u00ff");
  });

  it("encodes 5 MB (well past ~100 k call arguments) across its internal chunks", () => {
    const big = new Uint8Array(5 * 1024 * 1024 + 3).map((_, i) => (i * 131) & 0xff);
    expect(bytesToBase64(big)).toBe(Buffer.from(big).toString("base64"));
    expect(bytesToBase64(new Uint8Array(0))).toBe("");
  });
});
