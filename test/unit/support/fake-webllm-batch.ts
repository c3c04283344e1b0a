/**
 * The decoding stand-in of web-llm's pipeline (fake-webllm-decoder.ts) with
 * what continuous batching uses: the library's `embed`, `decode`, `prefill`,
 * `batch_decode` and `batch_prefill` functions over the simulated paged KV
 * cache (begin_forward appends each row's tokens to THAT row's sequence, by
 * the lengths it is given, and a forward returns each row's logits from what
 * its sequence holds at the logit position asked for: `batch_prefill` takes
 * positions into the rows' tokens packed one after another), web-llm's `prefillStep`, and
 * the runtime's one shared random generator (`tvm.rng`, tvmjs's linear
 * congruential generator) that `setSeed` seeds and the sampler draws from.
 *
 * The state a forward reads (`pending` ids, `forwardSeq`) lives in one box
 * shared by the pipeline and every view made of it with `Object.create`, as
 * the TVM runtime's state is shared in web-llm.
 *
 * The runtime's scopes are tvmjs's: one stack of scopes, shared by every
 * view. A tensor the runtime makes (`empty`, `embed`, a forward's output, the
 * logits web-llm's `embedAndForward` returns) goes into the scope on top;
 * `endScope` pops the top scope and disposes what is in it; detaching a
 * tensor that is not in the top scope throws ("Cannot find obj in the
 * current auto conversion pool"). So a binding that let one row's prefill
 * close another's scope, or detach its logits from someone else's, fails here
 * as on the real runtime (the sampler refuses a disposed tensor).
 */
import { FakeDecodingPipeline, FakeMatcher, FakeTensor, logitsAfter, VOCAB, type GenConfig } from "./fake-webllm-decoder.js";
import { chunkInput } from "./fake-webllm-pipeline.js";

type Shape = { shape: number[] };

/** tvmjs's LinearCongruentialGenerator. */
export class FakeRng {
  private readonly modulus = 2147483647;
  rand_state = 1;
  setSeed(seed: number): void {
    this.rand_state = seed % this.modulus || 1;
  }
  randomFloat(): number {
    this.rand_state = (this.rand_state * 48271) % this.modulus;
    return this.rand_state / this.modulus;
  }
}

export class FakeBatchingPipeline extends FakeDecodingPipeline {
  /**
   * Forwards by kind: single `decode`s, each `prefill`'s tokens, each
   * `batch_decode`'s rows, and each `batch_prefill`'s rows as [sequence, tokens].
   */
  readonly forwards = { single: 0, prefill: [] as number[], batched: [] as number[], mixed: [] as Array<Array<[number, number]>> };
  private readonly box = { pending: [] as number[], forwardSeq: -1 };

  /** Device work enqueued and not yet waited for (ms of the simulated clock). */
  private queued = 0;

  /**
   * `device`: what a `decode` and a `batch_decode` of n rows cost on the
   * simulated device. As on WebGPU, a forward only enqueues its work: the
   * clock advances by it when someone waits for the device (`device.sync`).
   */
  constructor(private readonly deviceWork: { decode: number; batch(rows: number): number; prefill?(tokens: number): number; mixed?(rows: number, tokens: number): number } = { decode: 0, batch: () => 0 }) {
    super({ batchPrefill: false });
    const self = this as unknown as Record<string, unknown>;
    self.device = {
      sync: async () => {
        this.clock += this.queued;
        this.queued = 0;
      },
    };
    // Fields of the base classes that a view would otherwise shadow with its own copy.
    delete self.pending;
    delete self.forwardSeq;
    delete self.rng;
    // The forward's state in the shared box (TypeScript sees the base classes' fields; these accessors replace them).
    const box = this.box;
    Object.defineProperty(this, "pending", { configurable: true, get: () => box.pending, set: (value: number[]) => (box.pending = value) });
    Object.defineProperty(this, "forwardSeq", { configurable: true, get: () => box.forwardSeq, set: (value: number) => (box.forwardSeq = value) });
    this.modelScopes();
    const rng = new FakeRng();
    (this.tvm as unknown as { rng: FakeRng }).rng = rng;
    Object.defineProperty(this, "rng", { configurable: true, get: () => () => rng.randomFloat() });
    const base = this.vm.getFunction;
    (this.vm as { getFunction: (name: string) => unknown }).getFunction = (name: string) => {
      this.tvm.makeShapeTuple([1]); // only inside a scope, as tvmjs
      if (name === "embed") return (ids: FakeTensor) => this.embed(ids);
      if (name === "decode") return (embedded: FakeTensor, kv: unknown) => this.forwardRows(embedded, kv, false);
      if (name === "batch_decode") return (embedded: FakeTensor, kv: unknown) => this.forwardRows(embedded, kv, true);
      if (name === "prefill") return (embedded: FakeTensor, kv: unknown) => this.prefillOne(embedded, kv);
      if (name === "batch_prefill") return (embedded: FakeTensor, positions: FakeTensor, kv: unknown) => this.batchPrefillRows(embedded, positions, kv);
      return base(name);
    };
    // The runtime's begin_forward: with several sequences, each takes its length of the pending tokens, in order.
    const single = this.fKVCacheBeginForward;
    this.fKVCacheBeginForward = (kv: unknown, seqIds: unknown, lengths: unknown) => {
      const seqs = (seqIds as Shape).shape;
      const lens = (lengths as Shape).shape;
      this.batchLengths = lens.slice();
      if (seqs.length === 1) return single(kv, seqIds, lengths);
      const cache = kv as { seqs: Map<number, number[]>; sealed: Set<number> };
      if (lens.length !== seqs.length || lens.reduce((a, b) => a + b, 0) !== this.box.pending.length) throw new Error(`batched begin_forward: lengths ${lens} for ${this.box.pending.length} tokens`);
      let at = 0;
      seqs.forEach((seq, i) => {
        const held = cache.seqs.get(seq);
        if (!held) throw new Error(`no sequence ${seq}`);
        if (cache.sealed.has(seq)) throw new Error("The block is one-time referenced by other blocks, thus cannot accept new KV values.");
        held.push(...this.box.pending.slice(at, at + lens[i]));
        at += lens[i];
      });
      this.batchSeqs = seqs.slice();
      return undefined;
    };
  }

  private batchSeqs: number[] = [];
  private batchLengths: number[] = [];
  /** tvmjs's stack of scopes (shared by every view). */
  readonly scopeStack: Array<Set<unknown>> = [];

  /** tvmjs's scopes over the stand-in's runtime (see the file's comment). */
  private modelScopes(): void {
    const tvm = this.tvm as unknown as Record<string, (...args: never[]) => unknown>;
    const counter = this as unknown as { scopes: number };
    const stack = this.scopeStack;
    tvm.beginScope = () => {
      counter.scopes++;
      stack.push(new Set());
    };
    tvm.endScope = () => {
      const top = stack.pop();
      if (!top) throw new Error("tvm.endScope called when the stack is empty.");
      counter.scopes--;
      for (const value of top) (value as FakeTensor).dispose();
    };
    const attach = <T>(value: T): T => {
      if (stack.length === 0) throw new Error("Must call beginScope to use functions that returns TVM objects");
      stack[stack.length - 1].add(value);
      return value;
    };
    tvm.attachToCurrentScope = attach as never;
    tvm.detachFromCurrentScope = (<T>(value: T): T => {
      if (!(value instanceof FakeTensor)) return value; // the stand-in tracks tensors only
      if (!stack[stack.length - 1]?.delete(value)) throw new Error("Cannot find obj in the current auto conversion pool");
      return value;
    }) as never;
    const empty = tvm.empty as unknown as (shape: number[], dtype: string, device: unknown) => FakeTensor;
    tvm.empty = ((shape: number[], dtype: string, device: unknown) => attach(empty(shape, dtype, device))) as never;
    this.made = attach;
  }

  /** A tensor the runtime made, in the scope on top. */
  private made: <T>(value: T) => T = (value) => value;

  /** web-llm's embedAndForward returns the logits in the caller's scope. */
  override async embedAndForward(inputData: Array<number[] | object>, inputDataLen: number): Promise<unknown> {
    return this.made(await super.embedAndForward(inputData, inputDataLen));
  }

  setSeed(seed: number): void {
    (this.tvm as unknown as { rng: FakeRng }).rng.setSeed(seed);
  }

  private embed(ids: FakeTensor): FakeTensor {
    const tokens = Array.from(ids.data);
    this.box.pending = tokens;
    return this.made(new FakeTensor([tokens.length, 4], "float32", "gpu", new Float32Array(tokens.length * 4)));
  }

  /** `decode` (one sequence) or `batch_decode` (the sequences of the last begin_forward). */
  private forwardRows(embedded: FakeTensor, kv: unknown, batched: boolean) {
    const cache = kv as { seqs: Map<number, number[]> };
    const seqs = batched ? this.batchSeqs : [this.box.forwardSeq];
    if (embedded.shape[0] !== seqs.length) throw new Error(`forward of ${embedded.shape[0]} rows over ${seqs.length} sequences`);
    const out = new Float32Array(seqs.length * VOCAB);
    seqs.forEach((seq, i) => out.set(logitsAfter(cache.seqs.get(seq) as number[]), i * VOCAB));
    if (batched) this.forwards.batched.push(seqs.length);
    else this.forwards.single++;
    this.queued += batched ? this.deviceWork.batch(seqs.length) : this.deviceWork.decode;
    this.log.push(`decode ${seqs.join(",")}`);
    this.batchSeqs = [];
    return { get: () => this.made(new FakeTensor([seqs.length, 1, VOCAB], "float32", "gpu", out)) };
  }

  /** The library's `prefill`: one sequence's chunk, the logits after its last token. */
  private prefillOne(embedded: FakeTensor, kv: unknown) {
    const cache = kv as { seqs: Map<number, number[]> };
    const n = embedded.shape[1];
    if (embedded.shape.length !== 3 || embedded.shape[0] !== 1 || n !== this.batchLengths[0]) throw new Error(`prefill of ${embedded.shape} after begin_forward of ${this.batchLengths}`);
    this.forwards.prefill.push(n);
    this.queued += this.deviceWork.prefill?.(n) ?? this.deviceWork.decode;
    this.log.push(`prefill ${this.box.forwardSeq} ${n}`);
    return { get: () => this.made(new FakeTensor([1, 1, VOCAB], "float32", "gpu", logitsAfter(cache.seqs.get(this.box.forwardSeq) as number[]))) };
  }

  /**
   * The library's `batch_prefill` over the sequences of the last
   * begin_forward: `embedded` [1, total, hidden] holds their tokens packed in
   * order; row r of the logits is at packed position `positions[r]`, i.e.
   * after that many tokens of its sequence's part.
   */
  private batchPrefillRows(embedded: FakeTensor, positions: FakeTensor, kv: unknown) {
    const cache = kv as { seqs: Map<number, number[]> };
    const seqs = this.batchSeqs.length > 0 ? this.batchSeqs : [this.box.forwardSeq];
    const lens = this.batchLengths;
    const total = lens.reduce((a, b) => a + b, 0);
    if (embedded.shape.length !== 3 || embedded.shape[0] !== 1 || embedded.shape[1] !== total) throw new Error(`batch_prefill: embeddings of shape ${embedded.shape} for lengths ${lens}`);
    const rows = Array.from(positions.data);
    const out = new Float32Array(rows.length * VOCAB);
    rows.forEach((p, r) => {
      if (p < 0 || p >= total) throw new Error(`batch_prefill: logit position ${p} of ${total}`);
      let start = 0;
      let i = 0;
      while (p >= start + lens[i]) start += lens[i++];
      const held = cache.seqs.get(seqs[i]) as number[];
      out.set(logitsAfter(held.slice(0, held.length - lens[i] + (p - start) + 1)), r * VOCAB);
    });
    this.forwards.mixed.push(seqs.map((seq, i) => [seq, lens[i]]));
    this.queued += this.deviceWork.mixed?.(seqs.length, total) ?? this.deviceWork.batch(seqs.length);
    this.log.push(`mixed ${seqs.map((seq, i) => `${seq}:${lens[i]}`).join(",")}`);
    this.batchSeqs = [];
    return { get: () => this.made(new FakeTensor([1, rows.length, VOCAB], "float32", "gpu", out)) };
  }

  /** web-llm's prefillStep: the conversation's tokens in chunks, then the first token sampled. */
  async prefillStep(prompt: number[], config: GenConfig = {}): Promise<void> {
    this.prompt = prompt;
    this.outputIds = [];
    this.stopTriggered = false;
    this.finishReason = null;
    this.outputMessage = "";
    this.appearedTokensFreq = new Map();
    this.tokenLogprobArray = [];
    this.grammarMatcher = config.grammar ? new FakeMatcher() : undefined;
    this.curRoundPrefillTotalTokens = 0;
    // web-llm 0.2.79: getInputData is not awaited, and the scope opens right after it, before any await
    const [chunks, promptLen] = this.getInputData() as [Array<number[] | object>, number];
    // its chunks of at most prefillChunkSize positions (an image is not split), in one scope,
    // each chunk's logits detached from it, the filled length checked
    let logits: FakeTensor | undefined;
    this.tvm.beginScope();
    try {
      for (const part of chunkInput(chunks, this.prefillChunkSize)) {
        const previous = this.filledKVCacheLength;
        logits = this.tvm.detachFromCurrentScope(await this.embedAndForward(part.chunks, part.length)) as FakeTensor;
        if (this.filledKVCacheLength !== previous + part.length) throw new Error("Internal Error: filledKVCacheLength does not match expected value.");
      }
    } catch (error) {
      // 0.2.86 closes its scope in a `finally`; 0.2.79 leaves it open when a forward throws
      if (this.prefillClosesScopeOnError) this.tvm.endScope();
      throw error;
    }
    this.tvm.endScope();
    await this.device.sync();
    const first = await this.sampleTokenFromLogits(logits as FakeTensor, config);
    (logits as FakeTensor).dispose();
    // web-llm counts the prompt tokens getInputData gave it (its usage's prompt_tokens)
    this.curRoundPrefillTotalTokens += promptLen;
    this.processNextToken(first, config);
  }

  /** Prompt tokens web-llm's prefill step counted for the current request. */
  curRoundPrefillTotalTokens = 0;

  /** Whether a prefill that throws closes its scope (web-llm 0.2.86); false: it leaves it open, as 0.2.79. */
  prefillClosesScopeOnError = false;

  /** One request as web-llm's asyncGenerate runs it: seed, a fresh conversation, prefill, decode until stopped. */
  async generateRequest(prompt: number[], config: GenConfig = {}): Promise<void> {
    if (config.seed !== undefined) this.setSeed(config.seed);
    this.resetChat();
    await this.prefillStep(prompt, config);
    while (!this.stopped()) await this.decodeStep(config);
  }
}
