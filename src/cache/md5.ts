/**
 * Incremental MD5. MLC's `tensor-cache.json` declares an `md5sum` per shard
 * and WebCrypto has no MD5, so shards are hashed as their bytes stream in
 * (no second pass over a shard, no extra copy).
 */

const S = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21];
const K = new Int32Array(64);
for (let i = 0; i < 64; i++) K[i] = Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0;

/** Streaming MD5: `update` with each chunk, then `hex()` once. */
export class Md5 {
  private a = 0x67452301;
  private b = 0xefcdab89 | 0;
  private c = 0x98badcfe | 0;
  private d = 0x10325476;
  private readonly block = new Uint8Array(64);
  private readonly words = new Int32Array(16);
  private blockLength = 0;
  private total = 0;

  update(data: Uint8Array): this {
    let offset = 0;
    this.total += data.length;
    if (this.blockLength > 0) {
      const take = Math.min(64 - this.blockLength, data.length);
      this.block.set(data.subarray(0, take), this.blockLength);
      this.blockLength += take;
      offset = take;
      if (this.blockLength < 64) return this;
      this.compress(this.block, 0);
      this.blockLength = 0;
    }
    for (; offset + 64 <= data.length; offset += 64) this.compress(data, offset);
    if (offset < data.length) {
      this.block.set(data.subarray(offset), 0);
      this.blockLength = data.length - offset;
    }
    return this;
  }

  hex(): string {
    const bits = this.total * 8;
    const padLength = this.blockLength < 56 ? 56 - this.blockLength : 120 - this.blockLength;
    const pad = new Uint8Array(padLength + 8);
    pad[0] = 0x80;
    const view = new DataView(pad.buffer);
    view.setUint32(padLength, bits >>> 0, true);
    view.setUint32(padLength + 4, Math.floor(bits / 2 ** 32), true);
    const total = this.total;
    this.update(pad);
    this.total = total;
    const out = new DataView(new ArrayBuffer(16));
    [this.a, this.b, this.c, this.d].forEach((v, i) => out.setInt32(i * 4, v, true));
    return Array.from(new Uint8Array(out.buffer), (byte) => byte.toString(16).padStart(2, "0")).join("");
  }

  private compress(data: Uint8Array, offset: number): void {
    const x = this.words;
    for (let i = 0; i < 16; i++) {
      const j = offset + i * 4;
      x[i] = data[j] | (data[j + 1] << 8) | (data[j + 2] << 16) | (data[j + 3] << 24);
    }
    let a = this.a, b = this.b, c = this.c, d = this.d;
    for (let i = 0; i < 64; i++) {
      let f: number, g: number;
      if (i < 16) { f = (b & c) | (~b & d); g = i; }
      else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) & 15; }
      else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) & 15; }
      else { f = c ^ (b | ~d); g = (7 * i) & 15; }
      const t = d;
      d = c;
      c = b;
      const sum = (a + f + K[i] + x[g]) | 0;
      b = (b + ((sum << S[i]) | (sum >>> (32 - S[i])))) | 0;
      a = t;
    }
    this.a = (this.a + a) | 0;
    this.b = (this.b + b) | 0;
    this.c = (this.c + c) | 0;
    this.d = (this.d + d) | 0;
  }
}

/** MD5 of `data` as lowercase hex. */
export function md5Hex(data: Uint8Array): string {
  return new Md5().update(data).hex();
}
