/**
 * The decoding stand-in of web-llm's pipeline (fake-webllm-decoder.ts) with
 * what continuous batching uses: the library's `embed`, `decode` and
 * `batch_decode` functions over the simulated paged KV cache (a batched
 * forward appends one token to each of its rows' sequences and returns each
 * row's logits from what THAT sequence holds), web-llm's `prefillStep`, and
 * the runtime's one shared random generator (`tvm.rng`, tvmjs's linear
 * congruential generator) that `setSeed` seeds and the sampler draws from.
 *
 * The state a forward reads (`pending` ids, `forwardSeq`) lives in one box
 * shared by the pipeline and every view made of it with `Object.create`, as
 * the TVM runtime's state is shared in web-llm.
 */
import { FakeDecodingPipeline, FakeMatcher, FakeTensor, logitsAfter, VOCAB, type GenConfig } from "./fake-webllm-decoder.js";

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
  /** Forwards by kind, with the rows of each batched one. */
  readonly forwards = { single: 0, batched: [] as number[] };
  private readonly box = { pending: [] as number[], forwardSeq: -1 };

  /** Device work enqueued and not yet waited for (ms of the simulated clock). */
  private queued = 0;

  /**
   * `device`: what a `decode` and a `batch_decode` of n rows cost on the
   * simulated device. As on WebGPU, a forward only enqueues its work: the
   * clock advances by it when someone waits for the device (`device.sync`).
   */
  constructor(private readonly deviceWork: { decode: number; batch(rows: number): number } = { decode: 0, batch: () => 0 }) {
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
    const rng = new FakeRng();
    (this.tvm as unknown as { rng: FakeRng }).rng = rng;
    Object.defineProperty(this, "rng", { configurable: true, get: () => () => rng.randomFloat() });
    const base = this.vm.getFunction;
    (this.vm as { getFunction: (name: string) => unknown }).getFunction = (name: string) => {
      this.tvm.makeShapeTuple([1]); // only inside a scope, as tvmjs
      if (name === "embed") return (ids: FakeTensor) => this.embed(ids);
      if (name === "decode") return (embedded: FakeTensor, kv: unknown) => this.forwardRows(embedded, kv, false);
      if (name === "batch_decode") return (embedded: FakeTensor, kv: unknown) => this.forwardRows(embedded, kv, true);
      return base(name);
    };
    // The runtime's begin_forward: with several sequences, one pending token each (batched decode).
    const single = this.fKVCacheBeginForward;
    this.fKVCacheBeginForward = (kv: unknown, seqIds: unknown, lengths: unknown) => {
      const seqs = (seqIds as Shape).shape;
      if (seqs.length === 1) return single(kv, seqIds, lengths);
      const cache = kv as { seqs: Map<number, number[]> };
      if (this.box.pending.length !== seqs.length || (lengths as Shape).shape.some((n) => n !== 1)) throw new Error("batched begin_forward: one token per sequence");
      seqs.forEach((seq, i) => {
        const held = cache.seqs.get(seq);
        if (!held) throw new Error(`no sequence ${seq}`);
        held.push(this.box.pending[i]);
      });
      this.batchSeqs = seqs.slice();
      return undefined;
    };
  }

  private batchSeqs: number[] = [];

  setSeed(seed: number): void {
    (this.tvm as unknown as { rng: FakeRng }).rng.setSeed(seed);
  }

  private embed(ids: FakeTensor): FakeTensor {
    const tokens = Array.from(ids.data);
    this.box.pending = tokens;
    return new FakeTensor([tokens.length, 4], "float32", "gpu", new Float32Array(tokens.length * 4));
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
    return { get: () => new FakeTensor([seqs.length, 1, VOCAB], "float32", "gpu", out) };
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
    const [chunks] = await this.getInputData();
    const flat = (chunks as number[][]).flat();
    let logits: unknown;
    for (let i = 0; i < flat.length; i += this.prefillChunkSize) {
      const part = flat.slice(i, i + this.prefillChunkSize);
      logits = await this.embedAndForward([part], part.length);
    }
    const first = await this.sampleTokenFromLogits(logits as FakeTensor, config);
    this.processNextToken(first, config);
  }

  /** One request as web-llm's asyncGenerate runs it: seed, a fresh conversation, prefill, decode until stopped. */
  async generateRequest(prompt: number[], config: GenConfig = {}): Promise<void> {
    if (config.seed !== undefined) this.setSeed(config.seed);
    this.resetChat();
    await this.prefillStep(prompt, config);
    while (!this.stopped()) await this.decodeStep(config);
  }
}
