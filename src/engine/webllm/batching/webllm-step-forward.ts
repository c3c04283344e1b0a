/**
 * One step's decode forward on web-llm's loaded pipeline, for rows that each
 * feed one token on a KV sequence of their own: `batch_decode` over all of
 * them in one pass, or the library's single-sequence `decode` once per row
 * (what web-llm's own decode step runs). Both go through the TVM runtime the
 * way web-llm's `embedAndForward` does (`embed`, `kv_state_begin_forward`
 * with the rows' sequences and lengths, the forward, `end_forward`), and
 * leave each row's logits in a device array of web-llm's decode shape
 * `[1, 1, vocab]`, detached from every scope, for web-llm's sampler.
 *
 * `batch_decode` returns `[rows, 1, vocab]` on the device; a row's slice is
 * copied through the CPU into its own array (tvmjs has no offset views), a
 * vocab-sized copy per row that costs little beside a forward.
 */

/** The tvmjs instance, as far as the forward uses it. */
export interface StepTvm {
  beginScope(): void;
  endScope(): void;
  detachFromCurrentScope<T>(value: T): T;
  makeShapeTuple(shape: number[]): unknown;
  empty(shape: number[], dtype: string, device: unknown): StepArray;
  cpu(): unknown;
}

export interface StepArray {
  shape: number[];
  dtype: string;
  copyFrom(source: StepArray | ArrayLike<number>): StepArray;
  toArray(): ArrayLike<number>;
  view(shape: number[]): StepArray;
  dispose(): void;
}

type Fn = (...args: unknown[]) => unknown;

/** The pipeline members the forward reads (web-llm's `LLMChatPipeline`, 0.2.79 – 0.2.86). */
export interface StepPipeline {
  tvm: StepTvm;
  vm: { getFunction(name: string): Fn };
  device: unknown;
  params: unknown;
  kvCache: unknown;
  fKVCacheEndForward: Fn;
}

export interface StepForwardRow {
  /** The KV sequence the row's token goes to. */
  seq: number;
  token: number;
}

export interface StepForward {
  /** Whether the library exports `batch_decode`. */
  readonly batched: boolean;
  /** Runs one forward: batched over every row, or one single-sequence decode per row. Each row's logits, in row order. */
  run(rows: readonly StepForwardRow[], mode: "batch" | "single"): Promise<StepArray[]>;
}

/** Waits until the device has done the work enqueued so far. */
async function sync(pipe: StepPipeline): Promise<void> {
  await (pipe.device as { sync?: () => Promise<void> }).sync?.();
}

/** The library's functions, fetched once (inside a scope, as tvmjs requires, and kept). */
function fetchFunctions(pipe: StepPipeline, beginForward: Fn): { embed: Fn; decode: Fn; batchDecode: Fn | null; beginForward: Fn } {
  const tvm = pipe.tvm;
  tvm.beginScope();
  try {
    const get = (name: string): Fn | null => {
      try {
        return tvm.detachFromCurrentScope(pipe.vm.getFunction(name));
      } catch {
        return null;
      }
    };
    const embed = get("embed");
    const decode = get("decode");
    if (!embed || !decode) throw new Error("The model library exports no embed or decode function.");
    return { embed, decode, batchDecode: get("batch_decode"), beginForward };
  } finally {
    tvm.endScope();
  }
}

/**
 * The step forward of `pipe`; `beginForward` is the runtime's
 * `kv_state_begin_forward` as the pipeline had it before any binding hooked it.
 */
export function stepForwardOf(pipe: StepPipeline, beginForward: Fn): StepForward {
  const fns = fetchFunctions(pipe, beginForward);
  const tvm = pipe.tvm;

  /** One forward of `rows` with `forward` (batched when there are several); the logits of every row on the device. */
  function forwardOnce(rows: readonly StepForwardRow[], forward: Fn): StepArray {
    const n = rows.length;
    const ids = tvm.empty([n], "int32", pipe.device);
    ids.copyFrom(Int32Array.from(rows, (row) => row.token));
    const embedded = fns.embed(ids, pipe.params) as StepArray;
    const hidden = embedded.shape[embedded.shape.length - 1];
    // batch_decode takes [rows, 1, hidden]; the single decode [1, 1, hidden] (web-llm's view).
    fns.beginForward(pipe.kvCache, tvm.makeShapeTuple(rows.map((row) => row.seq)), tvm.makeShapeTuple(rows.map(() => 1)));
    const out = forward(embedded.view([n, 1, hidden]), pipe.kvCache, pipe.params) as { get(i: number): StepArray };
    pipe.fKVCacheEndForward(pipe.kvCache);
    return out.get(0);
  }

  return {
    batched: fns.batchDecode !== null,
    async run(rows, mode) {
      if (mode === "single" || rows.length === 1 || !fns.batchDecode) {
        const out: StepArray[] = [];
        for (const row of rows) {
          tvm.beginScope();
          try {
            out.push(tvm.detachFromCurrentScope(forwardOnce([row], fns.decode)));
          } finally {
            tvm.endScope();
          }
        }
        // A forward only enqueues its work: waiting for the device here makes the step's time what the device
        // took (the sampler would wait for it anyway), comparable with a batch's, whose read-back waits too.
        await sync(pipe);
        return out;
      }
      tvm.beginScope();
      try {
        const logits = forwardOnce(rows, fns.batchDecode);
        const [, , vocab] = logits.shape;
        const host = tvm.empty(logits.shape, logits.dtype, tvm.cpu());
        host.copyFrom(logits);
        await sync(pipe);
        const all = host.toArray() as Float32Array;
        return rows.map((_, i) => {
          const own = tvm.empty([1, 1, vocab], logits.dtype, pipe.device);
          own.copyFrom(all.subarray(i * vocab, (i + 1) * vocab));
          return tvm.detachFromCurrentScope(own);
        });
      } finally {
        tvm.endScope();
      }
    },
  };
}
