/**
 * What `models.list()` shows of a GGUF model, read from the file's own
 * header: its quantization (`general.file_type`, llama.cpp's `llama_ftype`,
 * e.g. "Q4_K_M"; where a file does not declare it, the type holding most of
 * its weights, e.g. "F32") and its architecture and name.
 *
 * The header is the start of the file (GGUF v2/v3: magic, version, tensor
 * count, key-value count, the key-values, then the tensor infos); a real
 * model's is a few MB (its tokenizer's vocabulary). `readGgufHeader` reads a
 * growing prefix until the header parses, at most MAX_GGUF_HEADER_BYTES,
 * so a list never downloads the weights.
 */

/** The most of a file read for its header (a 256k-token vocabulary is ~8 MB). */
export const MAX_GGUF_HEADER_BYTES = 32 * 1024 * 1024;
/** The first read; doubled while the header runs past it. */
const FIRST_READ_BYTES = 256 * 1024;
/** Bounds on the counts a header declares (a corrupt count must not allocate). */
const MAX_TENSORS = 1_000_000;
const MAX_KEYS = 100_000;

export interface GgufHeader {
  version: number;
  architecture: string | null;
  name: string | null;
  /** "Q4_K_M", "F16", …; null when neither the file type nor the tensors name a known one. */
  quantization: string | null;
  tensorCount: number;
}

/** llama.cpp's `llama_ftype` (general.file_type): the file's quantization as its tools name it. */
const FILE_TYPES: Record<number, string> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M",
  13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS",
  21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
  29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
};

/** ggml's tensor types (`ggml_type`), for files without general.file_type. */
const TENSOR_TYPES: Record<number, string> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 9: "Q8_1", 10: "Q2_K", 11: "Q3_K",
  12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 15: "Q8_K", 16: "IQ2_XXS", 17: "IQ2_XS", 18: "IQ3_XXS", 19: "IQ1_S",
  20: "IQ4_NL", 21: "IQ3_S", 22: "IQ2_S", 23: "IQ4_XS", 24: "I8", 25: "I16", 26: "I32", 27: "I64", 28: "F64",
  29: "IQ1_M", 30: "BF16", 34: "TQ1_0", 35: "TQ2_0", 39: "MXFP4",
};

/** The bytes given end inside the header: read more. */
export class GgufTruncated extends Error {}

/** Not a GGUF, or a header this parser refuses (message says which). */
export class GgufInvalid extends Error {}

/** A little-endian cursor that throws GgufTruncated past the end. */
class Cursor {
  private at = 0;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private take(n: number): number {
    if (this.at + n > this.bytes.length) throw new GgufTruncated();
    const start = this.at;
    this.at += n;
    return start;
  }
  u8() { return this.view.getUint8(this.take(1)); }
  u32() { return this.view.getUint32(this.take(4), true); }
  u64(): number {
    const value = this.view.getBigUint64(this.take(8), true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new GgufInvalid("a 64-bit count or length is out of range");
    return Number(value);
  }
  skip(n: number) { this.take(n); }
  str(): string {
    const length = this.u64();
    const start = this.take(length);
    return new TextDecoder().decode(this.bytes.subarray(start, start + length));
  }
}

const STRING = 8, ARRAY = 9;
/** Byte sizes of the scalar value types (GGUF's gguf_type). */
const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

function readScalar(cursor: Cursor, type: number): number | string | null {
  if (type === STRING) return cursor.str();
  if (type === 4) return cursor.u32();
  if (type === 5) return cursor.u32() | 0;
  const size = SCALAR_BYTES[type];
  if (size === undefined) throw new GgufInvalid(`unknown value type ${type}`);
  cursor.skip(size);
  return null;
}

function skipValue(cursor: Cursor, type: number): number | string | null {
  if (type !== ARRAY) return readScalar(cursor, type);
  const itemType = cursor.u32();
  const count = cursor.u64();
  if (itemType === STRING) for (let i = 0; i < count; i++) cursor.skip(cursor.u64());
  else if (itemType === ARRAY) throw new GgufInvalid("nested arrays");
  else {
    const size = SCALAR_BYTES[itemType];
    if (size === undefined) throw new GgufInvalid(`unknown array item type ${itemType}`);
    cursor.skip(count * size);
  }
  return null;
}

/** Parses a GGUF header from the file's first bytes (GgufTruncated: give it more). */
export function parseGgufHeader(bytes: Uint8Array): GgufHeader {
  const cursor = new Cursor(bytes);
  if (bytes.length >= 4 && new TextDecoder().decode(bytes.subarray(0, 4)) !== "GGUF") throw new GgufInvalid("no GGUF magic");
  cursor.skip(4);
  const version = cursor.u32();
  if (version !== 2 && version !== 3) throw new GgufInvalid(`GGUF version ${version} (2 and 3 are read)`);
  const tensorCount = cursor.u64();
  const keyCount = cursor.u64();
  if (tensorCount > MAX_TENSORS || keyCount > MAX_KEYS) throw new GgufInvalid(`${tensorCount} tensors, ${keyCount} keys: over the bounds`);
  const values = new Map<string, number | string | null>();
  for (let i = 0; i < keyCount; i++) {
    const key = cursor.str();
    values.set(key, skipValue(cursor, cursor.u32()));
  }
  // Elements per tensor type: the type holding most weights names a file without general.file_type.
  const elements = new Map<number, number>();
  for (let i = 0; i < tensorCount; i++) {
    cursor.skip(cursor.u64());
    const dims = cursor.u32();
    let n = 1;
    for (let d = 0; d < dims; d++) n *= cursor.u64();
    const type = cursor.u32();
    cursor.skip(8);
    elements.set(type, (elements.get(type) ?? 0) + n);
  }
  const fileType = values.get("general.file_type");
  let quantization = typeof fileType === "number" ? (FILE_TYPES[fileType] ?? null) : null;
  if (quantization === null && elements.size > 0) {
    const [dominant] = [...elements].sort((a, b) => b[1] - a[1])[0];
    quantization = TENSOR_TYPES[dominant] ?? null;
  }
  const text = (key: string) => (typeof values.get(key) === "string" ? (values.get(key) as string) : null);
  return { version, architecture: text("general.architecture"), name: text("general.name"), quantization, tensorCount };
}

/**
 * The header of a file read by `read(end)` (its first `end` bytes, or fewer
 * at its end): a growing prefix until it parses; null past
 * MAX_GGUF_HEADER_BYTES or at the file's end.
 */
export async function readGgufHeader(read: (end: number) => Promise<Uint8Array>): Promise<GgufHeader | null> {
  for (let end = FIRST_READ_BYTES; end <= MAX_GGUF_HEADER_BYTES; end *= 2) {
    const bytes = await read(end);
    try {
      return parseGgufHeader(bytes);
    } catch (error) {
      if (!(error instanceof GgufTruncated) || bytes.length < end) throw error;
    }
  }
  return null;
}

/** What a chat template needs from a GGUF (gguf-prompt.ts): its source and the text of some tokens. */
export interface GgufTemplateInfo {
  /** `tokenizer.chat_template`; null where the file has none. */
  chatTemplate: string | null;
  /** The text of the asked tokens of `tokenizer.ggml.tokens` (BOS, EOS); an id the vocabulary lacks is absent. */
  tokenTexts: Map<number, string>;
}

/**
 * The chat template and the text of the vocabulary's tokens `ids` (for the
 * template's `bos_token`/`eos_token`: llama.cpp's metadata strings leave
 * arrays out). Reads the key-values only (GgufTruncated: give it more).
 */
export function parseGgufTemplateInfo(bytes: Uint8Array, ids: number[]): GgufTemplateInfo {
  const cursor = new Cursor(bytes);
  if (bytes.length >= 4 && new TextDecoder().decode(bytes.subarray(0, 4)) !== "GGUF") throw new GgufInvalid("no GGUF magic");
  cursor.skip(4);
  const version = cursor.u32();
  if (version !== 2 && version !== 3) throw new GgufInvalid(`GGUF version ${version} (2 and 3 are read)`);
  cursor.u64();
  const keyCount = cursor.u64();
  if (keyCount > MAX_KEYS) throw new GgufInvalid(`${keyCount} keys: over the bounds`);
  const wanted = new Set(ids);
  const info: GgufTemplateInfo = { chatTemplate: null, tokenTexts: new Map() };
  for (let i = 0; i < keyCount; i++) {
    const key = cursor.str();
    const type = cursor.u32();
    if (key === "tokenizer.chat_template" && type === STRING) {
      info.chatTemplate = cursor.str();
    } else if (key === "tokenizer.ggml.tokens" && type === ARRAY) {
      const itemType = cursor.u32();
      const count = cursor.u64();
      if (itemType !== STRING) throw new GgufInvalid("tokenizer.ggml.tokens is not an array of strings");
      for (let id = 0; id < count; id++) {
        if (wanted.has(id)) info.tokenTexts.set(id, cursor.str());
        else cursor.skip(cursor.u64());
      }
    } else {
      skipValue(cursor, type);
    }
  }
  return info;
}

/** `parseGgufTemplateInfo` on a growing prefix of a file read by `read(end)`, as readGgufHeader reads; null past MAX_GGUF_HEADER_BYTES. */
export async function readGgufTemplateInfo(read: (end: number) => Promise<Uint8Array>, ids: number[]): Promise<GgufTemplateInfo | null> {
  for (let end = FIRST_READ_BYTES; end <= MAX_GGUF_HEADER_BYTES; end *= 2) {
    const bytes = await read(end);
    try {
      return parseGgufTemplateInfo(bytes, ids);
    } catch (error) {
      if (!(error instanceof GgufTruncated) || bytes.length < end) throw error;
    }
  }
  return null;
}
