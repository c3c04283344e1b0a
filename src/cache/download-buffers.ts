/**
 * The download's memory: a gauge of the bytes held in buffers (the bound the
 * benchmark reports) and a pool of buffers that verified files filled, reused
 * for the next files instead of left for the garbage collector.
 */
/** Bytes held in download buffers, for the memory bound the benchmark reports. */
export interface BufferGauge {
  current: number;
  peak: number;
}

export function hold(gauge: BufferGauge, bytes: number): void {
  gauge.current += bytes;
  gauge.peak = Math.max(gauge.peak, gauge.current);
}

/**
 * Buffers of committed files, for reuse: a download allocates about as many
 * buffers as files in flight instead of one per shard left for the garbage
 * collector (which, measured, let the heap grow to the whole model's size).
 * Only buffers that a verified file filled are kept, so no size a host merely
 * declared is ever allocated.
 */
export class BufferPool {
  private readonly free = new Map<number, ArrayBuffer[]>();

  take(size: number): ArrayBuffer | null {
    return this.free.get(size)?.pop() ?? null;
  }

  give(buffer: ArrayBuffer): void {
    if (buffer.byteLength === 0 || (buffer as { detached?: boolean }).detached) return;
    const list = this.free.get(buffer.byteLength) ?? [];
    if (list.length < 8) list.push(buffer);
    this.free.set(buffer.byteLength, list);
  }
}
