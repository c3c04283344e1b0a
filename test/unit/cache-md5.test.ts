import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { Md5, md5Hex } from "../../src/cache/md5.js";

describe("md5 (shard checksums from tensor-cache.json)", () => {
  it("matches Node's MD5 for lengths around block edges", () => {
    for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 100_003]) {
      const data = new Uint8Array(length).map((_, i) => (i * 31 + length) & 255);
      expect(md5Hex(data)).toBe(createHash("md5").update(data).digest("hex"));
    }
  });

  it("gives the same digest however the bytes are chunked", () => {
    const data = new Uint8Array(5000).map((_, i) => (i * 7) & 255);
    const md5 = new Md5();
    for (let at = 0; at < data.length; ) {
      const size = 1 + ((at * 13) % 97);
      md5.update(data.subarray(at, at + size));
      at += size;
    }
    expect(md5.hex()).toBe(createHash("md5").update(data).digest("hex"));
  });
});
