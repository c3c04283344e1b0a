/**
 * The value `create({ stream: true })` resolves to: an async iterable of
 * `chat.completion.chunk` objects with `controller.abort()`, like the OpenAI
 * SDK's `Stream`. Leaving a `for await` early (break, throw) stops generation.
 */
import type { ChatCompletionChunk } from "../protocol/types.js";
import type { ChunkQueue } from "./chunk-queue.js";

/** Library-internal: how many chunks a Stream holds that its iterator returns without waiting (fetch-handler batches them). */
export const bufferedChunks = Symbol("bufferedChunks");

export class Stream<T = ChatCompletionChunk> implements AsyncIterable<T> {
  private consumed = false;

  constructor(
    private readonly queue: ChunkQueue<T>,
    readonly controller: AbortController,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.consumed) throw new Error("This stream has already been iterated; a stream can be consumed once (use tee() for two readers).");
    this.consumed = true;
    const { queue, controller } = this;
    return {
      async next() {
        try {
          const chunk = await queue.next();
          return chunk ? { value: chunk, done: false } : { value: undefined, done: true };
        } catch (error) {
          controller.abort();
          throw error;
        }
      },
      async return() {
        controller.abort();
        return { value: undefined, done: true };
      },
    };
  }

  [bufferedChunks](): number {
    return this.queue.buffered;
  }

  /** Two independent readers of the same chunks. */
  tee(): [AsyncIterable<T>, AsyncIterable<T>] {
    const iterator = this[Symbol.asyncIterator]();
    const buffers: T[][] = [[], []];
    let pending: Promise<IteratorResult<T>> | null = null;
    const reader = (side: 0 | 1): AsyncIterable<T> => ({
      [Symbol.asyncIterator]: () => ({
        async next() {
          if (buffers[side].length > 0) return { value: buffers[side].shift() as T, done: false };
          pending ??= iterator.next().finally(() => (pending = null));
          const result = await pending;
          if (!result.done) buffers[1 - side].push(result.value);
          return result;
        },
      }),
    });
    return [reader(0), reader(1)];
  }

  /** A ReadableStream of the chunks as newline-delimited JSON bytes (as the OpenAI SDK's toReadableStream). */
  toReadableStream(): ReadableStream<Uint8Array> {
    const iterator = this[Symbol.asyncIterator]();
    const encoder = new TextEncoder();
    return new ReadableStream({
      async pull(controller) {
        try {
          const { value, done } = await iterator.next();
          if (done) controller.close();
          else controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
        } catch (error) {
          controller.error(error);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    });
  }
}
