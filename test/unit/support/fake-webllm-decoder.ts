/**
 * A stand-in for web-llm's `LLMChatPipeline` that DECODES: the simulated
 * paged KV cache of fake-webllm-pipeline.ts plus a model whose next-token
 * logits are a deterministic function of the tokens the sequence holds, and
 * web-llm 0.2.79's generation loop copied step for step (prefillStep,
 * decodeStep → embedAndForward → sampleTokenFromLogits → processNextToken):
 * stop tokens, stop strings, max_tokens, logit_bias, presence/frequency and
 * repetition penalties over the tokens so far, a grammar matcher that
 * throws on a token it does not allow, logprobs with top alternatives,
 * temperature sampling with a seeded RNG. The library exports `batch_prefill`
 * (logits at chosen positions), so a speculative binding can verify drafts.
 *
 * Because logits are computed from what the cache really holds, a draft
 * token left in the cache after a rejection changes every later token: a
 * rollback bug cannot go unseen.
 */
import { FakePipeline } from "./fake-webllm-pipeline.js";

export const VOCAB = 40;
/** The model's end-of-reply token (web-llm's stop token). */
export const EOS = 39;

/** Token i is one character: a–z, then A–N (N = EOS). */
export const decodeIds = (ids: ArrayLike<number>) => Array.from(ids, (id) => (id < 26 ? String.fromCharCode(97 + id) : String.fromCharCode(65 + id - 26))).join("");
export const encodeText = (text: string) => Array.from(text, (c) => (c >= "a" && c <= "z" ? c.charCodeAt(0) - 97 : c.charCodeAt(0) - 65 + 26));

/** Deterministic pseudo-random in [0, 1) from integers. */
function hash(...xs: number[]): number {
  let h = 0x9e3779b9;
  for (const x of xs) {
    h = Math.imul(h ^ (x + 0x7f4a7c15), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return (h >>> 0) / 2 ** 32;
}

/**
 * The model: small noise from the last two tokens, plus a strong pull to copy
 * (the token that followed the latest earlier occurrence of the last two
 * tokens), so replies repeat their context the way n-gram drafts expect.
 */
export function logitsAfter(prefix: readonly number[]): Float32Array {
  const n = prefix.length;
  const a = prefix[n - 1] ?? -2;
  const b = prefix[n - 2] ?? -2;
  const out = new Float32Array(VOCAB);
  for (let v = 0; v < VOCAB; v++) out[v] = 2 * hash(a, b, v, n % 3);
  for (let j = n - 2; j >= 1; j--) {
    if (prefix[j] === a && prefix[j - 1] === b) {
      const next = prefix[j + 1];
      if (next >= 0) out[next] += 3;
      break;
    }
  }
  return out;
}

export class FakeTensor {
  disposed = false;
  constructor(
    readonly shape: number[],
    readonly dtype: string,
    readonly device: "gpu" | "cpu",
    public data: Float32Array | Int32Array,
  ) {}
  view(shape: number[]): FakeTensor {
    return new FakeTensor(shape, this.dtype, this.device, this.data);
  }
  copyFrom(source: FakeTensor | ArrayLike<number>): this {
    this.check();
    const from = source instanceof FakeTensor ? source.data : source;
    if (from.length !== this.data.length) throw new Error(`copyFrom: ${from.length} values into ${this.data.length}`);
    this.data.set(from as ArrayLike<number>);
    return this;
  }
  copyFromRawBytes(bytes: Uint8Array): this {
    this.check();
    const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    if (values.length !== this.data.length) throw new Error(`copyFromRawBytes: ${values.length} values into ${this.data.length}`);
    this.data.set(values);
    return this;
  }
  toRawBytes(): Uint8Array {
    this.check();
    if (this.device !== "cpu") throw new Error("Can only sync copy CPU array");
    return new Uint8Array(Float32Array.from(this.data).buffer);
  }
  toArray(): Float32Array {
    return Float32Array.from(this.data);
  }
  dispose(): void {
    this.disposed = true;
  }
  private check() {
    if (this.disposed) throw new Error("use of a disposed tensor");
  }
}

/** web-llm's generation config, the fields the loop reads. */
export interface GenConfig {
  max_tokens?: number;
  stop?: string[];
  temperature?: number;
  logit_bias?: Record<string, number>;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  logprobs?: boolean;
  top_logprobs?: number;
  /** A grammar: the matcher allows token t after s accepted tokens iff (t + s) % 5 !== 0; or a TemplateGrammar. */
  grammar?: boolean | TemplateGrammar;
  /** What web-llm reads to know the request is constrained (the stand-in's matcher follows `grammar`). */
  response_format?: { type: string };
  seed?: number;
}

export interface Logprob {
  token: string;
  logprob: number;
  top_logprobs: Array<{ token: string; logprob: number }>;
}

/** The grammar matcher: a state web-llm advances with each sampled token; a token it does not allow throws. */
export class FakeMatcher {
  accepted = 0;
  allows(token: number): boolean {
    return (token + this.accepted) % 5 !== 0;
  }
  acceptToken(token: number): boolean {
    if (!this.allows(token)) throw new Error(`grammar matcher: token ${token} not allowed at ${this.accepted}`);
    this.accepted++;
    return true;
  }
}

/**
 * A grammar with forced text, for jump-forward: fixed strings, each but the
 * last followed by free text that ends with `terminator` (then the next fixed
 * string is forced); free text after the last. Tokens are texts (`tokenText`):
 * a multi-character token may cross from a fixed string into free text.
 */
export interface TemplateGrammar {
  fixed: string[];
  terminator: string;
  tokenText: (id: number) => string;
}

/** The template's matcher: web-xgrammar's members the pipeline and a speculative binding use. */
export class TemplateMatcher {
  /** Fixed string being matched (index into `fixed`), and the offset in it; free text while `inFree`. */
  private segment = 0;
  private offset = 0;
  private inFree = false;

  constructor(private readonly grammar: TemplateGrammar) {}

  private step(state: { segment: number; offset: number; inFree: boolean }, text: string): boolean {
    const { fixed, terminator } = this.grammar;
    for (const ch of text) {
      if (!state.inFree) {
        if (fixed[state.segment][state.offset] !== ch) return false;
        if (++state.offset === fixed[state.segment].length) state.inFree = true;
      } else if (ch === terminator && state.segment < fixed.length - 1) {
        state.segment++;
        state.offset = 0;
        state.inFree = false;
      }
    }
    return true;
  }

  allows(token: number): boolean {
    const state = { segment: this.segment, offset: this.offset, inFree: this.inFree };
    if (token === EOS) return this.inFree && this.segment === this.grammar.fixed.length - 1;
    return this.step(state, this.grammar.tokenText(token));
  }

  acceptToken(token: number): boolean {
    if (!this.allows(token)) throw new Error(`grammar matcher: token ${token} not allowed`);
    if (token === EOS) return true;
    const state = { segment: this.segment, offset: this.offset, inFree: this.inFree };
    this.step(state, this.grammar.tokenText(token));
    ({ segment: this.segment, offset: this.offset, inFree: this.inFree } = state);
    return true;
  }

  findJumpForwardString(): string {
    return this.inFree ? "" : this.grammar.fixed[this.segment].slice(this.offset);
  }
}

export class FakeDecodingPipeline extends FakePipeline {
  readonly device = { sync: async () => undefined };
  readonly params = { weights: true };
  tokenizer: { encode(text: string): number[]; decode(ids: ArrayLike<number>): string } = { encode: encodeText, decode: decodeIds };
  outputIds: number[] = [];
  stopTriggered = false;
  finishReason: string | null = null;
  outputMessage = "";
  stopTokens = [EOS];
  appearedTokensFreq = new Map<number, number>();
  tokenLogprobArray: Logprob[] = [];
  grammarMatcher: FakeMatcher | TemplateMatcher | undefined;
  /** Forward passes by kind, for the tests' accounting. */
  readonly passes = { prefill: 0, decode: 0, batchPrefill: 0 };
  /** Tensors given to the sampler (each must be a live device tensor of a decode step's shape). */
  private rng = mulberry32(1);
  /** batch_prefill calls: the token count of each. */
  readonly verifies: number[] = [];
  /**
   * The simulated device's clock (ms): each decode and verify forward
   * advances it by what `device` says a forward over that many tokens costs
   * (speculation sizes its drafts by the times it measures with it).
   */
  clock = 0;
  /** web-llm's decode clock (s) and token count, kept by its decode step (its usage's decode_tokens_per_s), on `clock`. */
  curRoundDecodingTotalTime = 0;
  curRoundDecodingTotalTokens = 0;
  private readonly deviceCost: { single(tokens: number): number };

  /** `device`: forward cost by tokens fed; default GPU-like (a decode 10 ms, a verify of up to 8 drafts 11 ms). */
  constructor(options: { batchPrefill?: boolean; webllm?: "0.2.79" | "0.2.86"; device?: { single(tokens: number): number } } = {}) {
    super(options.webllm === "0.2.86");
    this.deviceCost = options.device ?? { single: (tokens) => (tokens <= 1 ? 10 : 11 + 0.5 * Math.max(0, tokens - 9)) };
    if (options.webllm === "0.2.86") this.decodeStep = this.decodeStep086;
    const tvm = this.tvm as unknown as Record<string, unknown>;
    tvm.empty = (shape: number[], dtype: string, device: unknown) => {
      const size = shape.reduce((a, b) => a * b, 1);
      return new FakeTensor(shape, dtype, device === "cpu" ? "cpu" : "gpu", dtype === "int32" ? new Int32Array(size) : new Float32Array(size));
    };
    tvm.cpu = () => "cpu";
    tvm.attachToCurrentScope = <T>(v: T) => v;
    const base = this.vm.getFunction;
    (this.vm as { getFunction: (name: string) => unknown }).getFunction = (name: string) => {
      if (name === "batch_prefill" && options.batchPrefill !== false) {
        this.tvm.makeShapeTuple([1]); // only inside a scope, as tvmjs
        return (embeddings: FakeTensor, positions: FakeTensor, kv: unknown) => this.batchPrefill(embeddings, positions, kv);
      }
      return base(name);
    };
  }

  /** The logits of the sequence the last forward went to, at its end (as `prefill`/`decode` return them). */
  override async embedAndForward(inputData: Array<number[] | object>, inputDataLen: number): Promise<unknown> {
    await super.embedAndForward(inputData, inputDataLen);
    if (inputDataLen > 1) this.passes.prefill++;
    else {
      this.passes.decode++;
      this.clock += this.deviceCost.single(1);
    }
    const held = this.held(this.forwardSeq) as number[];
    return new FakeTensor([1, 1, VOCAB], "float32", "gpu", logitsAfter(held));
  }

  getTokensEmbeddings(tokens: number[]): FakeTensor {
    this.tvm.makeShapeTuple([1]);
    if (tokens.length > this.prefillChunkSize) throw new Error("getTokensEmbeddings input should be <= prefillChunkSize");
    this.pending = tokens.slice(); // what begin_forward appends (the fake cache holds ids)
    return new FakeTensor([tokens.length, 4], "float32", "gpu", Float32Array.from({ length: tokens.length * 4 }));
  }

  fKVCacheEndForward = (_kv: unknown) => undefined;

  private batchPrefill(embeddings: FakeTensor, positions: FakeTensor, kv: unknown) {
    if (embeddings.shape.length !== 3 || embeddings.shape[0] !== 1) throw new Error(`batch_prefill: embeddings of shape ${embeddings.shape}`);
    const n = embeddings.shape[1];
    const held = (kv as { seqs: Map<number, number[]> }).seqs.get(this.forwardSeq) as number[];
    const rows = Array.from(positions.data);
    const out = new Float32Array(rows.length * VOCAB);
    rows.forEach((p, r) => out.set(logitsAfter(held.slice(0, held.length - n + p + 1)), r * VOCAB));
    this.passes.batchPrefill++;
    this.clock += this.deviceCost.single(n);
    this.verifies.push(n);
    this.log.push(`verify ${n} on ${this.forwardSeq}`);
    return { get: () => new FakeTensor([1, rows.length, VOCAB], "float32", "gpu", out) };
  }

  /** One request as web-llm 0.2.79 runs it: maybe resetChat, prefill in chunks, sample, then decode until stopped. */
  async generate(prompt: number[], config: GenConfig = {}, multiround = false): Promise<void> {
    this.prompt = prompt;
    if (!multiround) this.resetChat();
    this.outputIds = [];
    this.stopTriggered = false;
    this.finishReason = null;
    this.outputMessage = "";
    this.appearedTokensFreq = new Map();
    this.tokenLogprobArray = [];
    this.grammarMatcher = config.grammar ? (typeof config.grammar === "object" ? new TemplateMatcher(config.grammar) : new FakeMatcher()) : undefined;
    this.rng = mulberry32(config.seed ?? 1);
    const [chunks] = await this.getInputData();
    const flat = (chunks as number[][]).flat();
    let logits: unknown;
    for (let i = 0; i < flat.length; i += this.prefillChunkSize) {
      const part = flat.slice(i, i + this.prefillChunkSize);
      logits = await this.embedAndForward([part], part.length);
    }
    const first = await this.sampleTokenFromLogits(logits as FakeTensor, config);
    this.processNextToken(first, config);
    while (!this.stopped()) await this.decodeStep(config);
  }

  stopped(): boolean {
    return this.stopTriggered;
  }

  // web-llm 0.2.79's decodeStep
  async decodeStep(genConfig?: GenConfig): Promise<void> {
    if (this.stopTriggered) throw Error("Cannot run decode when stopped");
    const tstart = this.clock;
    this.tvm.beginScope();
    const chunk = [this.outputIds.slice(this.outputIds.length - 1)];
    const prevFilledLen = this.filledKVCacheLength;
    const logits = this.tvm.detachFromCurrentScope(await this.embedAndForward(chunk, chunk.length)) as FakeTensor;
    if (this.filledKVCacheLength !== prevFilledLen + 1) throw new Error("Internal Error: filledKVCacheLength does not match expected value.");
    this.tvm.endScope();
    const nextToken = await this.sampleTokenFromLogits(logits, genConfig);
    logits.dispose();
    this.countDecode(tstart);
    this.processNextToken(nextToken, genConfig);
  }

  /** web-llm's bookkeeping at the end of a decode step: one token, the time since the step began. */
  private countDecode(tstart: number): void {
    this.curRoundDecodingTotalTokens += 1;
    this.curRoundDecodingTotalTime += (this.clock - tstart) / 1e3;
  }

  // web-llm 0.2.86's decodeStep: sampleDecodeStep (forwardDecodeToken → embedAndForward, sample), then commit
  async decodeStep086(genConfig?: GenConfig): Promise<void> {
    if (this.stopTriggered) throw Error("Cannot run decode when stopped");
    const tstart = this.clock;
    const lastToken = this.outputIds[this.outputIds.length - 1];
    this.tvm.beginScope();
    let logits: FakeTensor;
    try {
      const previousLength = this.filledKVCacheLength;
      const out = await this.embedAndForward([[lastToken]], 1);
      if (this.filledKVCacheLength !== previousLength + 1) throw new Error("Internal Error: filledKVCacheLength does not match expected value.");
      logits = this.tvm.detachFromCurrentScope(out) as FakeTensor;
    } finally {
      this.tvm.endScope();
    }
    let token: number;
    try {
      token = await this.sampleTokenFromLogits(logits, genConfig);
    } finally {
      logits.dispose();
    }
    this.countDecode(tstart);
    this.processNextToken(token, genConfig);
  }

  triggerStop(): void {
    if (this.stopTriggered) return;
    this.stopTriggered = true;
    this.finishReason = "abort";
  }

  // web-llm 0.2.79's processNextToken
  processNextToken(nextToken: number, genConfig?: GenConfig): void {
    if (this.stopTriggered) throw Error("Cannot call process when it is stoppped");
    const maxTokens = genConfig?.max_tokens ?? Infinity;
    if (this.stopTokens.includes(nextToken)) {
      this.stopTriggered = true;
      this.finishReason = "stop";
    }
    if (!this.stopTriggered) {
      this.outputIds.push(nextToken);
      this.appearedTokensFreq.set(nextToken, (this.appearedTokensFreq.get(nextToken) ?? 0) + 1);
    }
    let message = decodeIds(this.outputIds);
    for (const stop of genConfig?.stop ?? []) {
      const at = message.lastIndexOf(stop);
      if (at !== -1) {
        message = message.substring(0, at);
        this.stopTriggered = true;
        this.finishReason = "stop";
        break;
      }
    }
    this.outputMessage = message;
    if (this.outputIds.length >= maxTokens) {
      this.stopTriggered = true;
      this.finishReason = "length";
    }
  }

  // web-llm 0.2.79's sampleTokenFromLogits, on the stand-in's CPU arrays
  async sampleTokenFromLogits(logitsOnGPU: FakeTensor, genConfig: GenConfig = {}): Promise<number> {
    if (!(logitsOnGPU instanceof FakeTensor) || logitsOnGPU.device !== "gpu" || logitsOnGPU.disposed) throw new Error("the sampler needs a live device tensor");
    if (logitsOnGPU.data.length !== VOCAB) throw new Error(`the sampler needs one row of logits, got ${logitsOnGPU.shape}`);
    const logits = Float32Array.from(logitsOnGPU.data);
    if (this.grammarMatcher) for (let v = 0; v < VOCAB; v++) if (!this.grammarMatcher.allows(v)) logits[v] = -Infinity;
    for (const [id, bias] of Object.entries(genConfig.logit_bias ?? {})) logits[Number(id)] += bias;
    const { presence_penalty: presence, frequency_penalty: frequency, repetition_penalty: repetition = 1 } = genConfig;
    if (presence !== undefined || frequency !== undefined) {
      for (const [id, count] of this.appearedTokensFreq) logits[id] -= (presence ?? 0) + count * (frequency ?? 0);
    } else if (repetition !== 1) {
      for (const id of this.appearedTokensFreq.keys()) logits[id] = logits[id] > 0 ? logits[id] / repetition : logits[id] * repetition;
    }
    const temperature = genConfig.temperature ?? 0;
    let token: number;
    const probs = softmax(logits, Math.max(1e-6, temperature));
    if (temperature === 0) token = argmax(logits);
    else {
      let u = this.rng();
      token = VOCAB - 1;
      for (let v = 0; v < VOCAB; v++) {
        u -= probs[v];
        if (u < 0) {
          token = v;
          break;
        }
      }
    }
    if (genConfig.logprobs) {
      const order = Array.from(probs.keys()).sort((x, y) => probs[y] - probs[x] || x - y);
      this.tokenLogprobArray.push({
        token: decodeIds([token]),
        logprob: Math.log(probs[token]),
        top_logprobs: order.slice(0, genConfig.top_logprobs ?? 0).map((id) => ({ token: decodeIds([id]), logprob: Math.log(probs[id]) })),
      });
    }
    this.grammarMatcher?.acceptToken(token);
    return token;
  }
}

function softmax(logits: Float32Array, temperature: number): Float64Array {
  const max = Math.max(...logits);
  const out = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += out[i] = Math.exp((logits[i] - max) / temperature);
  for (let i = 0; i < logits.length; i++) out[i] /= sum;
  return out;
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
