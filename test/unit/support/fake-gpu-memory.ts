/**
 * A WebGPU device with a fixed amount of memory, as far as the KV sizing of
 * continuous batching sees one (webllm-kv-fit.ts): `createBuffer` beyond
 * `capacity` bytes (buffers not yet destroyed) reports an out-of-memory error
 * to the innermost "out-of-memory" error scope, as Chrome does, and returns a
 * buffer that holds nothing; `popErrorScope` resolves to the scope's error.
 */
interface Scope {
  filter: string;
  error: Error | null;
}

export class FakeGpuMemory {
  private held = 0;
  private readonly scopes: Scope[] = [];
  /** Bytes asked for in each outermost error scope (one sizing check each), and whether they fit. */
  readonly checks: Array<{ bytes: number; fitted: boolean }> = [];
  private asked = 0;
  readonly limits = { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30 };

  constructor(private readonly capacity: number) {}

  pushErrorScope(filter: string): void {
    if (this.scopes.length === 0) this.asked = 0;
    this.scopes.push({ filter, error: null });
  }

  popErrorScope(): Promise<Error | null> {
    const scope = this.scopes.pop();
    if (!scope) return Promise.reject(new Error("OperationError: popErrorScope with no scope"));
    if (this.scopes.length === 0) this.checks.push({ bytes: this.asked, fitted: scope.error === null });
    return Promise.resolve(scope.error);
  }

  createBuffer(descriptor: { size: number; usage: number }): { destroy(): void } {
    this.asked += descriptor.size;
    if (this.held + descriptor.size > this.capacity) {
      const scope = [...this.scopes].reverse().find((s) => s.filter === "out-of-memory");
      if (scope) scope.error ??= new Error(`Out of memory allocating ${descriptor.size} bytes`);
      return { destroy: () => undefined };
    }
    this.held += descriptor.size;
    let destroyed = false;
    return {
      destroy: () => {
        if (!destroyed) this.held -= descriptor.size;
        destroyed = true;
      },
    };
  }

  /** Bytes held by buffers not yet destroyed. */
  get inUse(): number {
    return this.held;
  }
}
