/**
 * One step's forward on web-llm's loaded pipeline, for rows that each feed
 * tokens on a KV sequence of their own: a decoding row its one token, a row
 * in its prompt the step's chunk of it. Either ONE batched forward over all
 * rows, or one single-sequence forward per row (what web-llm's own steps run):
 *
 * | mode   | every row one token        | some row a prompt chunk                       |
 * |--------|----------------------------|-----------------------------------------------|
 * | batch  | `batch_decode`             | `batch_prefill` (mixed rows)                  |
 * | single | `decode` per row           | `decode`, or `prefill` for a chunk, per row   |
 *
 * All go through the TVM runtime the way web-llm's `embedAndForward` does:
 * `embed` the tokens, `kv_state_begin_forward` with the rows' sequences and
 * their lengths (3 arguments: a chain, as web-llm's and the verify pass's),
 * the forward, `end_forward`. `batch_prefill` takes the rows' tokens packed
 * one after another (`[1, total, hidden]`, in the order begin_forward named
 * the sequences) and logit positions into that packing: the last token of
 * each row, so each row gets the logits after what its sequence then holds
 * (the call the real-engine probe proved for one sequence: verify-probe,
 * webllm-verify.ts). Each row's logits come back in a device array of
 * web-llm's decode shape `[1, 1, vocab]`, detached from every scope, for
 * web-llm's sampler.
 *
 * A decoding row may carry a speculative draft to verify (`verify`): it
 * feeds its token and the draft, and `batch_prefill` gives it logits at
 * every one of its positions (the call web-llm's speculative binding makes
 * for one sequence, webllm-verify.ts), beside the other rows' last-token
 * logits; alone in a single forward it is that call.
 *
 * A batched forward's `[rows, 1, vocab]` or `[1, rows, vocab]` is copied
 * through the CPU into each row's own array (tvmjs has no offset views), a
 * vocab-sized copy per row that costs little beside a forward. No scope is
 * open while waiting for the device: the rows' prefill steps keep web-llm's
 * scopes open across steps, and an await inside a scope would let one of
 * theirs be closed in its place.
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
  /** The KV sequence the row's tokens go to. */
  seq: number;
  /** What it feeds: a decoding row its last token (and a draft), a row in its prompt the step's chunk. */
  tokens: readonly number[];
  /** Logits at every one of its tokens, not only the last: a decoding row's token and the draft it verifies. */
  verify?: boolean;
}

/**
 * The forwards run so far, by the library function each called; of the
 * `batch_prefill` calls, those that verified a draft (logits at several
 * positions of one sequence) beside other rows' tokens, and alone.
 */
export interface ForwardKinds {
  decode: number;
  prefill: number;
  batch_decode: number;
  batch_prefill: number;
  verify_beside_rows: number;
  verify_alone: number;
}

export interface StepForward {
  /** The forwards run so far, by kind (a live count). */
  readonly kinds: Readonly<ForwardKinds>;
  /** Whether the library exports `batch_decode`. */
  readonly batched: boolean;
  /** Whether the library exports `batch_prefill` (mixed rows in one forward) and `prefill`. */
  readonly mixed: boolean;
  /**
   * Runs the step: one batched forward over every row, or one
   * single-sequence forward per row. Each row's logits, in row order: after
   * its last token, or for a `verify` row after each of its tokens.
   */
  run(rows: readonly StepForwardRow[], mode: "batch" | "single"): Promise<StepArray[][]>;
}

interface Functions {
  embed: Fn;
  decode: Fn;
  prefill: Fn | null;
  batchDecode: Fn | null;
  batchPrefill: Fn | null;
  beginForward: Fn;
}

/** How many logits a row gets: one after its last token, or one after each token of a verify row. */
function positionsOf(row: StepForwardRow): number {
  return row.verify ? row.tokens.length : 1;
}

/** The logit positions of `rows` in their tokens packed one after another. */
export function logitPositions(rows: readonly StepForwardRow[]): number[] {
  const at: number[] = [];
  let start = 0;
  for (const row of rows) {
    const end = start + row.tokens.length;
    for (let p = end - positionsOf(row); p < end; p++) at.push(p);
    start = end;
  }
  return at;
}

/** Waits until the device has done the work enqueued so far. */
async function sync(pipe: StepPipeline): Promise<void> {
  await (pipe.device as { sync?: () => Promise<void> }).sync?.();
}

/** The library's functions, fetched once (inside a scope, as tvmjs requires, and kept). */
function fetchFunctions(pipe: StepPipeline, beginForward: Fn): Functions {
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
    return { embed, decode, prefill: get("prefill"), batchDecode: get("batch_decode"), batchPrefill: get("batch_prefill"), beginForward };
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
  const kinds: ForwardKinds = { decode: 0, prefill: 0, batch_decode: 0, batch_prefill: 0, verify_beside_rows: 0, verify_alone: 0 };

  /** Counts a forward of `kind` over `rows` (once it ran). */
  function count(rows: readonly StepForwardRow[], kind: "decode" | "prefill" | "batchDecode" | "batchPrefill"): void {
    if (kind === "decode" || kind === "prefill") kinds[kind]++;
    else if (kind === "batchDecode") kinds.batch_decode++;
    else {
      kinds.batch_prefill++;
      if (rows.some((row) => row.verify && row.tokens.length > 1)) kinds[rows.length > 1 ? "verify_beside_rows" : "verify_alone"]++;
    }
  }

  /**
   * One forward of `rows` (inside the caller's scope): their tokens embedded and packed in row order,
   * begin_forward with each row's sequence and length, then `kind`. Its logits on the device.
   */
  function forwardOnce(rows: readonly StepForwardRow[], kind: "decode" | "prefill" | "batchDecode" | "batchPrefill"): StepArray {
    const total = rows.reduce((n, row) => n + row.tokens.length, 0);
    const ids = tvm.empty([total], "int32", pipe.device);
    ids.copyFrom(Int32Array.from(rows.flatMap((row) => row.tokens)));
    const embedded = fns.embed(ids, pipe.params) as StepArray;
    const hidden = embedded.shape[embedded.shape.length - 1];
    fns.beginForward(pipe.kvCache, tvm.makeShapeTuple(rows.map((row) => row.seq)), tvm.makeShapeTuple(rows.map((row) => row.tokens.length)));
    let out: { get(i: number): StepArray };
    try {
      if (kind === "batchPrefill") {
        // The last token of each row (every token of a verify row), as positions into the packed tokens.
        const at = logitPositions(rows);
        const positions = tvm.empty([at.length], "int32", pipe.device);
        positions.copyFrom(Int32Array.from(at));
        out = (fns.batchPrefill as Fn)(embedded.view([1, total, hidden]), positions, pipe.kvCache, pipe.params) as typeof out;
      } else if (kind === "batchDecode") {
        // batch_decode takes [rows, 1, hidden]
        out = (fns.batchDecode as Fn)(embedded.view([rows.length, 1, hidden]), pipe.kvCache, pipe.params) as typeof out;
      } else {
        // the single forwards take [1, tokens, hidden] (web-llm's view) and give the last token's logits
        out = (kind === "prefill" ? (fns.prefill as Fn) : fns.decode)(embedded.view([1, total, hidden]), pipe.kvCache, pipe.params) as typeof out;
      }
    } finally {
      pipe.fKVCacheEndForward(pipe.kvCache);
    }
    count(rows, kind);
    return out.get(0);
  }

  /** The rows' forwards one by one; each row's logits (a verify row's at each of its tokens). */
  async function singly(rows: readonly StepForwardRow[]): Promise<StepArray[][]> {
    const out: StepArray[][] = [];
    try {
      for (const row of rows) {
        if (row.verify && row.tokens.length > 1) {
          // The speculative binding's verify pass: batch_prefill on one sequence, logits at every position.
          for (const rowLogits of await together([row])) out.push(rowLogits);
          continue;
        }
        if (row.tokens.length > 1 && !fns.prefill) throw new Error("The model library exports no prefill function.");
        tvm.beginScope();
        try {
          out.push([tvm.detachFromCurrentScope(forwardOnce([row], row.tokens.length > 1 ? "prefill" : "decode"))]);
        } finally {
          tvm.endScope();
        }
      }
      // A forward only enqueues its work: waiting for the device here makes the step's time what the device
      // took (the sampler would wait for it anyway), comparable with a batch's, whose read-back waits too.
      await sync(pipe);
    } catch (error) {
      // A later row's forward (or the wait) failed: nobody takes the earlier rows' logits.
      disposeAll(out);
      throw error;
    }
    return out;
  }

  /** One batched forward; each row's logits, copied through the CPU into arrays of their own. */
  async function together(rows: readonly StepForwardRow[]): Promise<StepArray[][]> {
    const oneTokenEach = rows.every((row) => row.tokens.length === 1);
    const kind = oneTokenEach && fns.batchDecode && rows.length > 1 ? "batchDecode" : "batchPrefill";
    if (kind === "batchPrefill" && !fns.batchPrefill) throw new Error("The model library exports no batch_prefill function.");
    let host: StepArray;
    tvm.beginScope();
    try {
      const logits = forwardOnce(rows, kind);
      host = tvm.detachFromCurrentScope(tvm.empty(logits.shape, logits.dtype, tvm.cpu()));
      host.copyFrom(logits);
    } finally {
      tvm.endScope();
    }
    try {
      await sync(pipe);
      const all = host.toArray() as Float32Array;
      const vocab = host.shape[host.shape.length - 1];
      let next = 0;
      // Detached as they are made: should a later row's allocation or copy fail, nobody takes these, so they are freed here.
      const copied: StepArray[] = [];
      tvm.beginScope();
      try {
        return rows.map((row) =>
          Array.from({ length: positionsOf(row) }, () => {
            const own = tvm.empty([1, 1, vocab], host.dtype, pipe.device);
            own.copyFrom(all.subarray(next * vocab, ++next * vocab));
            const kept = tvm.detachFromCurrentScope(own);
            copied.push(kept);
            return kept;
          }),
        );
      } catch (error) {
        disposeAll([copied]);
        throw error;
      } finally {
        tvm.endScope();
      }
    } finally {
      host.dispose();
    }
  }

  return {
    kinds,
    batched: fns.batchDecode !== null,
    mixed: fns.batchPrefill !== null && fns.prefill !== null,
    run: (rows, mode) => (mode === "single" || rows.length === 1 ? singly(rows) : together(rows)),
  };
}

/** Frees the logits of rows that nobody will take (a step that failed part-way). */
export function disposeAll(logits: readonly (readonly StepArray[])[]): void {
  for (const rowLogits of logits) for (const array of rowLogits) array.dispose();
}
