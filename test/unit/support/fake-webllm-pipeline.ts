/**
 * A stand-in for web-llm's `LLMChatPipeline` (0.2.79 / 0.2.86 shape) over a
 * simulated paged KV cache, for the prompt-cache binding's tests. It follows
 * web-llm's request flow (reference/webllm-0.2.86.md §2): a request that is
 * not its previous conversation calls `resetChat()` (→ `resetKVCache()`), then
 * `getInputData()` tokenizes (the full prompt when `filledKVCacheLength` is 0,
 * else only the tail), prefill forwards it in chunks of `prefillChunkSize`
 * through `embedAndForward`, which calls `fKVCacheBeginForward(cache,
 * seqIds, lengths)` with sequence 0, then decode feeds each generated token
 * but the last. The runtime functions (`vm.builtin.kv_state_*`) act on the
 * simulated cache with the checks TVM makes, including the one the binding
 * must respect: a sequence forked from at its end takes no new tokens.
 * Every call is logged.
 */
type Scalar = { value: number; dtype: string };
type Shape = { shape: number[] };

/** Device bytes one KV token takes in the fake runtime (Qwen2-0.5B's: 24 layers × 2 × 2 KV heads × 64 × 4 bytes). */
export const FAKE_KV_BYTES_PER_TOKEN = 24 * 2 * 2 * 64 * 4;

export class SimKvCache {
  readonly seqs = new Map<number, number[]>([[0, []]]);
  /** Sequences a child was forked from at their end (TVM: their last block is referenced). */
  readonly sealed = new Set<number>();
  disposed = false;
  constructor(
    readonly maxSequences: number,
    readonly totalTokens: number,
  ) {}
  dispose() {
    this.disposed = true;
  }
}

export interface FakeRequest {
  /** The full prompt web-llm's tokenizer would produce. */
  prompt: number[];
  /** Generated tokens (the last is sampled, never fed). */
  reply: number[];
  /** web-llm found the request extends its stored conversation (no resetChat). */
  multiround?: boolean;
  /** Fail inside prefill (after its first chunk) or during decode. */
  fail?: "prefill" | "decode";
  /** `[index, size]`: an image occupies `size` positions from `index` of the prompt (its ids there are ignored). */
  image?: [number, number];
}

export class FakePipeline {
  readonly log: string[] = [];
  kvCache = new SimKvCache(1, 4096);
  filledKVCacheLength = 0;
  contextWindowSize = 4096;
  prefillChunkSize = 8;
  slidingWindowSize = -1;
  /** The conversation web-llm would tokenize next. */
  protected prompt: number[] = [];
  private image: [number, number] | undefined;
  /** 0.2.86 returns getInputData's result as a promise. */
  constructor(private readonly asyncInput = false) {}

  /** tvmjs refuses to make TVM objects (functions, shapes) outside a scope: "Must call beginScope…". */
  private scopes = 0;
  private inScope(): void {
    if (this.scopes === 0) throw new Error("Must call beginScope to use functions that returns TVM objects");
  }

  readonly tvm = {
    /** tvmjs's count of device memory held: a KV cache takes FAKE_KV_BYTES_PER_TOKEN per token of room when made. */
    lib: { webGPUContext: { currAllocatedBytes: 0 } },
    beginScope: () => void this.scopes++,
    endScope: () => void this.scopes--,
    detachFromCurrentScope: <T>(v: T) => v,
    scalar: (value: number, dtype: string): Scalar => ({ value, dtype }),
    makeShapeTuple: (shape: number[]): Shape => {
      this.inScope();
      return { shape };
    },
    getGlobalFunc: (name: string) => {
      this.inScope();
      const fn = this.runtime[name];
      if (!fn) throw new Error(`Cannot find global function ${name}`);
      return fn;
    },
  };

  readonly vm = {
    getFunction: (name: string) => {
      this.inScope();
      if (name !== "create_tir_paged_kv_cache") throw new Error(`no ${name}`);
      return (maxSeq: Shape, total: Shape, chunk: Shape, page: Shape, sliding: Shape) => {
        this.log.push(`create_kv_cache seqs=${maxSeq.shape[0]} total=${total.shape[0]} chunk=${chunk.shape[0]} page=${page.shape[0]} sliding=${sliding.shape[0]}`);
        const cache = new SimKvCache(maxSeq.shape[0], total.shape[0]);
        this.tvm.lib.webGPUContext.currAllocatedBytes += total.shape[0] * FAKE_KV_BYTES_PER_TOKEN;
        cache.seqs.clear();
        return cache;
      };
    },
  };

  private readonly runtime: Record<string, (...args: never[]) => void> = {
    "vm.builtin.kv_state_popn": (kv: SimKvCache, seq: Scalar, n: Scalar) => {
      const held = this.seq(kv, seq.value);
      if (n.dtype !== "int32" || n.value < 0 || n.value > held.length) throw new Error(`popn ${n.value} of ${held.length}`);
      held.length -= n.value;
      if (n.value > 0) kv.sealed.delete(seq.value);
      this.log.push(`popn ${seq.value} ${n.value}`);
    },
    "vm.builtin.kv_state_fork_sequence": (kv: SimKvCache, parent: Scalar, child: Scalar, at: Scalar) => {
      const held = this.seq(kv, parent.value);
      if (kv.seqs.has(child.value)) throw new Error(`The child sequence "${child.value}" is already in the KV cache.`);
      const pos = at.value === -1 ? held.length : at.value;
      if (pos < 0 || pos > held.length) throw new Error("The forked position should not exceed the total length of parent sequence.");
      kv.seqs.set(child.value, held.slice(0, pos));
      if (pos === held.length) kv.sealed.add(parent.value);
      this.log.push(`fork ${parent.value}->${child.value} at ${at.value}`);
    },
    "vm.builtin.kv_state_remove_sequence": (kv: SimKvCache, seq: Scalar) => {
      this.seq(kv, seq.value);
      kv.seqs.delete(seq.value);
      kv.sealed.delete(seq.value);
      this.log.push(`remove ${seq.value}`);
    },
    "vm.builtin.kv_state_add_sequence": (kv: SimKvCache, seq: Scalar) => {
      if (kv.seqs.has(seq.value)) throw new Error(`The sequence "${seq.value}" is already in the KV cache.`);
      kv.seqs.set(seq.value, []);
      this.log.push(`add ${seq.value}`);
    },
  };

  /** What the next forward appends to (set by fKVCacheBeginForward). */
  protected forwardSeq = -1;
  private failForward = false;
  protected pending: number[] = [];

  fKVCacheBeginForward: (...args: unknown[]) => unknown = (kv: unknown, seqIds: unknown, lengths: unknown) => {
    const cache = kv as SimKvCache;
    const seq = (seqIds as Shape).shape[0];
    const held = this.seq(cache, seq);
    if (cache.sealed.has(seq)) throw new Error("The block is one-time referenced by other blocks, thus cannot accept new KV values.");
    held.push(...this.pending);
    if (this.pending.length !== (lengths as Shape).shape[0]) throw new Error("length mismatch");
    this.forwardSeq = seq;
    return undefined;
  };

  resetKVCache(): void {
    const kv = this.kvCache;
    kv.seqs.clear();
    kv.sealed.clear();
    kv.seqs.set(0, []);
    this.log.push("clear");
  }

  resetChat(): void {
    this.resetKVCache();
    this.filledKVCacheLength = 0;
  }

  getInputData(): [Array<number[] | object>, number] | Promise<[Array<number[] | object>, number]> {
    const from = this.filledKVCacheLength; // web-llm: 0 → the whole conversation, else its last round
    const tokens = this.prompt.slice(from);
    const chunks: Array<number[] | object> = [];
    if (this.image && this.image[0] >= from) {
      const [at, size] = this.image;
      chunks.push(this.prompt.slice(from, at), { image: size }, this.prompt.slice(at + size));
    } else chunks.push(tokens);
    const out: [Array<number[] | object>, number] = [chunks.filter((c) => !Array.isArray(c) || c.length > 0), tokens.length];
    if (this.prompt.length > this.contextWindowSize) {
      const error = new Error("Prompt tokens exceed context window size");
      error.name = "ContextWindowSizeExceededError";
      throw error;
    }
    return this.asyncInput ? Promise.resolve(out) : out;
  }

  async embedAndForward(inputData: Array<number[] | object>, inputDataLen: number): Promise<unknown> {
    this.pending = [];
    for (const chunk of inputData) {
      if (Array.isArray(chunk)) this.pending.push(...chunk);
      else for (let i = 0; i < (chunk as { image: number }).image; i++) this.pending.push(-1);
    }
    this.tvm.beginScope(); // as web-llm's embedAndForward
    try {
      this.fKVCacheBeginForward(this.kvCache, this.tvm.makeShapeTuple([0]), this.tvm.makeShapeTuple([inputDataLen]));
    } finally {
      this.tvm.endScope();
    }
    if (this.failForward) throw new Error("the GPU failed during prefill"); // tokens were appended: contents uncertain
    this.log.push(`forward ${inputDataLen} on ${this.forwardSeq}`);
    this.filledKVCacheLength += inputDataLen;
    return { logits: true };
  }

  /** One request the way web-llm runs it: maybe resetChat, tokenize, prefill in chunks, decode. */
  async request(r: FakeRequest): Promise<void> {
    this.prompt = r.prompt;
    this.image = r.image;
    if (!r.multiround) this.resetChat();
    const [chunks, length] = await this.getInputData();
    let sent = 0;
    this.failForward = r.fail === "prefill";
    for (const part of chunkInput(chunks, this.prefillChunkSize)) {
      await this.embedAndForward(part.chunks, part.length);
      sent += part.length;
    }
    if (sent !== length) throw new Error(`prefilled ${sent} of ${length}`);
    if (r.fail === "decode") throw new Error("sampling failed");
    for (const token of r.reply.slice(0, -1)) await this.embedAndForward([[token]], 1);
  }

  /** The tokens the simulated cache holds for a sequence. */
  held(seq: number): number[] | undefined {
    return this.kvCache.seqs.get(seq)?.slice();
  }

  private seq(kv: SimKvCache, seq: number): number[] {
    const held = kv.seqs.get(seq);
    if (!held) throw new Error(`The sequence "${seq}" cannot be found in KV cache.`);
    return held;
  }
}

/** web-llm's getChunkedPrefillInputData: chunks of at most `size` positions (an image is not split). */
export function chunkInput(chunks: Array<number[] | object>, size: number): Array<{ chunks: Array<number[] | object>; length: number }> {
  const out: Array<{ chunks: Array<number[] | object>; length: number }> = [];
  let cur: Array<number[] | object> = [];
  let len = 0;
  const flush = () => {
    if (len > 0) out.push({ chunks: cur, length: len });
    cur = [];
    len = 0;
  };
  for (const chunk of chunks) {
    if (!Array.isArray(chunk)) {
      const n = (chunk as { image: number }).image;
      if (len + n > size) flush();
      cur.push(chunk);
      len += n;
      continue;
    }
    let rest = chunk;
    while (rest.length > 0) {
      const take = Math.min(size - len, rest.length);
      if (take === 0) {
        flush();
        continue;
      }
      cur.push(rest.slice(0, take));
      len += take;
      rest = rest.slice(take);
      if (len === size) flush();
    }
  }
  flush();
  return out;
}
