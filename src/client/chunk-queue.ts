/**
 * A ChunkSink on one side and an async iterator on the other: chunks pushed by
 * the host wait here until the consumer pulls them.
 */
import type { ChunkSink } from "../host/engine-host.js";
import type { ApiError } from "../protocol/api-error.js";
import type { ChatCompletionChunk } from "../protocol/types.js";

export class ChunkQueue<T = ChatCompletionChunk> implements ChunkSink<T> {
  private buffer: T[] = [];
  private head = 0;
  private ended = false;
  private failure: ApiError | null = null;
  private wake: (() => void) | null = null;

  write(chunks: T[]): void {
    if (this.ended) return;
    for (const chunk of chunks) this.buffer.push(chunk);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: ApiError): void {
    if (this.ended) return;
    this.failure = error;
    this.ended = true;
    this.notify();
  }

  /** Chunks waiting to be read: `next()` returns each of them without waiting (and without throwing). */
  get buffered(): number {
    return this.buffer.length - this.head;
  }

  /** The next chunk, or null at the end; throws the stream's error. */
  async next(): Promise<T | null> {
    for (;;) {
      if (this.head < this.buffer.length) {
        const chunk = this.buffer[this.head++];
        if (this.head > 1024 && this.head * 2 > this.buffer.length) {
          this.buffer = this.buffer.slice(this.head);
          this.head = 0;
        }
        return chunk;
      }
      if (this.failure) throw this.failure;
      if (this.ended) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
