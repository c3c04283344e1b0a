/**
 * A GGUF writer of our own, for tests: a tiny random-weight llama-architecture
 * model (GGUF v3, f32) that the real llama.cpp (@wllama/wllama) loads and runs
 * at hundreds of tokens per second on a CPU. It mirrors
 * shared/tools/gguf-probe/gen_gguf.py: 2 layers, 64-dim embeddings, 4 heads
 * (2 KV heads), a SentencePiece-style toy vocabulary with ASCII byte fallback
 * and ChatML control tokens, and a ChatML `tokenizer.chat_template`.
 *
 * Layout (GGUF v3): "GGUF", version, tensor count, key-value count; typed
 * key-values; tensor infos (name, dims with ne0 first, type, offset); padding
 * to `general.alignment`; then the data, each tensor padded to the alignment.
 * Random weights make random text, deterministic for a given seed.
 */

const U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STR = 8, ARR = 9;
const ALIGN = 32;

export interface TinyGgufOptions {
  /** PRNG seed of the weights (same seed, same bytes). Default 7. */
  seed?: number;
  /** `llama.context_length`. Default 2048. */
  contextLength?: number;
  /** `general.name`. Default "tiny-random". */
  name?: string;
  /** `general.file_type` (llama_ftype, e.g. 15 = Q4_K_M) as a label, though the weights stay f32. Default: not written. */
  fileType?: number;
  /** `tokenizer.chat_template`. Default CHATML_TEMPLATE. */
  chatTemplate?: string;
  /** `llama.pooling_type` (llama.cpp's enum: 1 mean, 2 cls, 3 last), as embedding GGUFs declare it. Default: not written. */
  poolingType?: number;
  /**
   * A bigger model than the default 2 layers of 64 (a measurement needs one whose decode outweighs
   * the per-token overhead, e.g. threads: test/unit/wllama-threads.test.ts). Heads stay 4 (2 KV).
   */
  shape?: { embedding: number; feedForward: number; layers: number };
}

export const CHATML_TEMPLATE =
  "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/**
 * A reasoning template in the style of DeepSeek-R1's (and Qwen3-Thinking-2507's), on our ChatML
 * markers: the generation prompt opens `<think>\n`, so everything the model writes until `</think>`
 * is its reasoning; an assistant turn of the history keeps only what follows its `</think>`.
 */
export const R1_STYLE_TEMPLATE =
  "{% for m in messages %}{% if m['role'] == 'assistant' %}{% set content = m['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1].lstrip() %}{% endif %}" +
  "<|im_start|>assistant\n{{ content }}<|im_end|>\n{% else %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endif %}{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}";

/**
 * Qwen3's thinking switch on our ChatML markers: with `enable_thinking` false the generation prompt
 * closes an empty think block (Qwen3's own template does the same); otherwise the model opens one.
 */
export const THINKING_SWITCH_TEMPLATE =
  "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}";

/**
 * ChatML with the GGUF's BOS and EOS tokens written by the template (`bos_token`
 * first, `eos_token` after each assistant turn), as Llama- and Gemma-style templates do:
 * the prompt depends on the token text read from the GGUF's vocabulary.
 */
export const BOS_EOS_TEMPLATE =
  "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}{% if m['role'] == 'assistant' %}{{ eos_token }}{% endif %}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/**
 * ChatML with a `min` filter, which llama.cpp's Jinja engine (wllama 3.8.1) renders and
 * @huggingface/jinja 0.5.13 does not know ("Unknown ArrayValue filter: min"): the engine
 * falls back to llama.cpp's rendering. Renders as CHATML_TEMPLATE.
 */
export const MIN_FILTER_TEMPLATE =
  "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}{{ '' if [3, 1] | min == 1 else 'x' }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/**
 * ChatML with a floor division (`//`), which @huggingface/jinja renders and llama.cpp's
 * Jinja engine in wllama 3.8.1 cannot: its chat completion aborts the WebAssembly module
 * (measured). Renders as CHATML_TEMPLATE.
 */
export const FLOOR_DIVISION_TEMPLATE =
  "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}{{ '' if loop.index0 // 2 >= 0 else 'x' }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

const WORDS = ("the a of to and in is it you that he was for on are as with his they I at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part hello world user assistant system").split(" ");

/** Little-endian byte sink. */
class Bytes {
  private chunks: Uint8Array[] = [];
  length = 0;
  push(bytes: Uint8Array): this {
    this.chunks.push(bytes);
    this.length += bytes.length;
    return this;
  }
  private num(size: number, write: (view: DataView) => void): this {
    const buffer = new Uint8Array(size);
    write(new DataView(buffer.buffer));
    return this.push(buffer);
  }
  u32(v: number) { return this.num(4, (d) => d.setUint32(0, v, true)); }
  i32(v: number) { return this.num(4, (d) => d.setInt32(0, v, true)); }
  u64(v: number) { return this.num(8, (d) => d.setBigUint64(0, BigInt(v), true)); }
  f32(v: number) { return this.num(4, (d) => d.setFloat32(0, v, true)); }
  bool(v: boolean) { return this.push(new Uint8Array([v ? 1 : 0])); }
  str(s: string) { const b = new TextEncoder().encode(s); return this.u64(b.length).push(b); }
  pad(to: number) { return this.push(new Uint8Array((to - (this.length % to)) % to)); }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) { out.set(c, at); at += c.length; }
    return out;
  }
}

/** mulberry32 + Box-Muller: deterministic Gaussian weights. */
function gaussian(seed: number): () => number {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

/**
 * The toy vocabulary: <unk> <s> </s> <|im_start|> <|im_end|>, byte tokens for
 * ASCII only (<0x00>…<0x7F>), "▁", "\n", then word pieces. No high-byte
 * tokens: a random model emits them alone, which is invalid UTF-8, and on it
 * wllama 3.8.1 stops sending a streamed reply's text (the non-streamed reply
 * has U+FFFD there) and fails a raw completion ("Invalid typed array length").
 * So prompts to this model must be ASCII.
 */
export function tinyVocabulary(): { tokens: string[]; types: number[]; scores: number[] } {
  const words = WORDS.map((w) => "▁" + w);
  const bytes = Array.from({ length: 128 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
  const tokens = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", ...bytes, "▁", "\n", ...words];
  // 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte
  const types = [2, 3, 3, 4, 4, ...bytes.map(() => 6), 1, 1, ...words.map(() => 1)];
  const scores = [0, 0, 0, 0, 0, ...bytes.map(() => 0), -1, -1, ...words.map((_, i) => -(i + 2))];
  return { tokens, types, scores };
}

/** Writes the tiny model; about 0.5 MB (`shape` makes it bigger). */
export function writeTinyGguf(options: TinyGgufOptions = {}): Uint8Array {
  const nEmbd = options.shape?.embedding ?? 64, nFf = options.shape?.feedForward ?? 128, nLayer = options.shape?.layers ?? 2, nHead = 4, nHeadKv = 2;
  const { tokens, types, scores } = tinyVocabulary();
  const kv = new Bytes();
  let kvCount = 0;
  const key = (name: string, type: number) => { kvCount++; return kv.str(name).u32(type); };
  key("general.architecture", STR).str("llama");
  key("general.name", STR).str(options.name ?? "tiny-random");
  key("general.alignment", U32).u32(ALIGN);
  if (options.fileType !== undefined) key("general.file_type", U32).u32(options.fileType);
  key("llama.context_length", U32).u32(options.contextLength ?? 2048);
  key("llama.embedding_length", U32).u32(nEmbd);
  key("llama.block_count", U32).u32(nLayer);
  key("llama.feed_forward_length", U32).u32(nFf);
  key("llama.rope.dimension_count", U32).u32(nEmbd / nHead);
  key("llama.attention.head_count", U32).u32(nHead);
  key("llama.attention.head_count_kv", U32).u32(nHeadKv);
  key("llama.attention.layer_norm_rms_epsilon", F32).f32(1e-5);
  key("llama.vocab_size", U32).u32(tokens.length);
  if (options.poolingType !== undefined) key("llama.pooling_type", U32).u32(options.poolingType);
  key("tokenizer.ggml.model", STR).str("llama");
  key("tokenizer.ggml.tokens", ARR).u32(STR).u64(tokens.length);
  for (const t of tokens) kv.str(t);
  key("tokenizer.ggml.scores", ARR).u32(F32).u64(scores.length);
  for (const s of scores) kv.f32(s);
  key("tokenizer.ggml.token_type", ARR).u32(I32).u64(types.length);
  for (const t of types) kv.i32(t);
  key("tokenizer.ggml.bos_token_id", U32).u32(1);
  key("tokenizer.ggml.eos_token_id", U32).u32(4);
  key("tokenizer.ggml.unknown_token_id", U32).u32(0);
  key("tokenizer.ggml.add_bos_token", BOOL).bool(false);
  key("tokenizer.chat_template", STR).str(options.chatTemplate ?? CHATML_TEMPLATE);

  // Tensors, dims in GGUF order (ne0 first).
  const kvDim = (nEmbd / nHead) * nHeadKv;
  const tensors: Array<[string, number[]]> = [
    ["token_embd.weight", [nEmbd, tokens.length]],
    ["output_norm.weight", [nEmbd]],
    ["output.weight", [nEmbd, tokens.length]],
  ];
  for (let i = 0; i < nLayer; i++) {
    tensors.push(
      [`blk.${i}.attn_norm.weight`, [nEmbd]],
      [`blk.${i}.attn_q.weight`, [nEmbd, nEmbd]],
      [`blk.${i}.attn_k.weight`, [nEmbd, kvDim]],
      [`blk.${i}.attn_v.weight`, [nEmbd, kvDim]],
      [`blk.${i}.attn_output.weight`, [nEmbd, nEmbd]],
      [`blk.${i}.ffn_norm.weight`, [nEmbd]],
      [`blk.${i}.ffn_gate.weight`, [nEmbd, nFf]],
      [`blk.${i}.ffn_up.weight`, [nEmbd, nFf]],
      [`blk.${i}.ffn_down.weight`, [nFf, nEmbd]],
    );
  }
  const infos = new Bytes();
  const data = new Bytes();
  const random = gaussian(options.seed ?? 7);
  for (const [name, dims] of tensors) {
    const n = dims.reduce((a, b) => a * b, 1);
    infos.str(name).u32(dims.length);
    for (const d of dims) infos.u64(d);
    infos.u32(0 /* f32 */).u64(data.length);
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++) values[i] = name.endsWith("norm.weight") ? 1 : random() * 0.08;
    data.push(new Uint8Array(values.buffer)).pad(ALIGN);
  }
  const file = new Bytes().push(new TextEncoder().encode("GGUF")).u32(3).u64(tensors.length).u64(kvCount);
  file.push(kv.concat()).push(infos.concat()).pad(ALIGN).push(data.concat());
  return file.concat();
}
