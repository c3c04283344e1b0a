/**
 * The verify pass on web-llm's loaded pipeline: several tokens forwarded on
 * the request's KV sequence in ONE pass, with next-token logits at every
 * position — what speculative decoding needs and web-llm's own decode (one
 * token, one row) does not give.
 *
 * The call sequence is the one the real-engine probe proved on web-llm
 * 0.2.79's Qwen2 `v0_2_48` library (shared/tools/real-model/verify-probe):
 * embed the tokens, `begin_forward(kv, [seq], [n])` (3 arguments: a chain,
 * so `popn` can roll rejected tokens back afterwards), the library's
 * `batch_prefill(embeddings, logit_positions = 0..n-1, kv, params)`,
 * `end_forward`. Its rows match a normal prefill of each prefix to 1e-6;
 * `batch_verify` gives the same rows but allocates a 594 MiB workspace on
 * first use where `batch_prefill` needs 46 MiB, so `batch_prefill` it is.
 * `begin_forward` goes through the pipeline's member, which the prompt-cache
 * binding hooks to name the request's sequence.
 *
 * The rows are read back once; each is handed to web-llm's own sampler as a
 * fresh device tensor shaped like a decode step's logits ([1, 1, vocab]), so
 * its grammar bitmask, logit processor, `logit_bias`, penalties, logprobs and
 * RNG run on it exactly as on a decode step's.
 */
import type { KvCacheHost, TvmLike } from "../prompt-cache/webllm-kv-ops.js";

/** The slice of a tvmjs NDArray used here. */
export interface TensorLike {
  shape: number[];
  dtype: string;
  view(shape: number[]): TensorLike;
  copyFrom(source: TensorLike | ArrayLike<number>): unknown;
  copyFromRawBytes(bytes: Uint8Array): unknown;
  toRawBytes(): Uint8Array;
  dispose(): void;
}

/** The pipeline members the verify pass uses (web-llm's `LLMChatPipeline`, 0.2.79 – 0.2.86). */
export interface VerifyHost extends KvCacheHost {
  tvm: TvmLike & {
    empty(shape: number[], dtype: string, device: unknown): TensorLike;
    cpu(): unknown;
    attachToCurrentScope<T>(value: T): T;
  };
  device: { sync(): Promise<void> };
  params: unknown;
  filledKVCacheLength: number;
  prefillChunkSize?: number;
  getTokensEmbeddings(tokens: number[]): TensorLike;
  fKVCacheBeginForward: (...args: unknown[]) => unknown;
  fKVCacheEndForward: (kv: unknown) => unknown;
}

/** The logits of one verify pass, read back: row i predicts the token after input token i. */
export class LogitRows {
  constructor(
    private readonly host: VerifyHost,
    private readonly bytes: Uint8Array,
    readonly count: number,
    private readonly dtype: string,
  ) {}

  /**
   * Row `i` as a device tensor [1, 1, vocab], attached to the caller's scope
   * like the logits web-llm's forward returns (its decode step disposes it).
   */
  row(i: number): TensorLike {
    const tvm = this.host.tvm;
    const size = this.bytes.length / this.count;
    tvm.beginScope();
    let tensor: TensorLike;
    try {
      tensor = tvm.detachFromCurrentScope(tvm.empty([1, 1, size / bytesPer(this.dtype)], this.dtype, this.host.device));
    } finally {
      tvm.endScope();
    }
    tensor.copyFromRawBytes(this.bytes.slice(i * size, (i + 1) * size));
    return tvm.attachToCurrentScope(tensor);
  }
}

export interface Verifier {
  /**
   * Forwards `tokens` on the request's sequence (the pipeline's hooked
   * begin_forward picks it) in one pass. The cache then holds all of them;
   * `filledKVCacheLength` is left to the caller (it counts only what was
   * accepted).
   */
  forward(tokens: number[]): Promise<LogitRows>;
}

/** The verify pass of this pipeline, or null when its library lacks `batch_prefill`. */
export function verifierOf(host: VerifyHost): Verifier | null {
  const tvm = host.tvm;
  let batchPrefill: ((...args: unknown[]) => { get(i: number): TensorLike }) | undefined;
  tvm.beginScope();
  try {
    const fn = host.vm?.getFunction("batch_prefill");
    if (typeof fn === "function") batchPrefill = tvm.detachFromCurrentScope(fn) as typeof batchPrefill;
  } catch {
    batchPrefill = undefined;
  } finally {
    tvm.endScope();
  }
  if (!batchPrefill || typeof host.getTokensEmbeddings !== "function" || typeof host.fKVCacheEndForward !== "function") return null;
  const run = batchPrefill;
  return {
    async forward(tokens) {
      const n = tokens.length;
      let logits: TensorLike;
      tvm.beginScope();
      try {
        const embedded = host.getTokensEmbeddings(tokens);
        const embeddings = embedded.view([1, ...embedded.shape]);
        const positions = tvm.empty([n], "int32", host.device);
        positions.copyFrom(Int32Array.from(tokens, (_, i) => i));
        host.fKVCacheBeginForward(host.kvCache, tvm.makeShapeTuple([0]), tvm.makeShapeTuple([n]));
        let result: { get(i: number): TensorLike };
        try {
          result = run(embeddings, positions, host.kvCache, host.params);
        } finally {
          host.fKVCacheEndForward(host.kvCache);
        }
        logits = tvm.detachFromCurrentScope(result.get(0));
      } finally {
        tvm.endScope();
      }
      let cpu: TensorLike;
      tvm.beginScope();
      try {
        cpu = tvm.detachFromCurrentScope(tvm.empty(logits.shape, logits.dtype, tvm.cpu()));
        cpu.copyFrom(logits);
      } finally {
        tvm.endScope();
      }
      try {
        await host.device.sync();
        return new LogitRows(host, cpu.toRawBytes(), n, logits.dtype);
      } finally {
        cpu.dispose();
        logits.dispose();
      }
    },
  };
}

function bytesPer(dtype: string): number {
  const bits = Number(/(\d+)$/.exec(dtype)?.[1] ?? 32);
  return bits / 8;
}
