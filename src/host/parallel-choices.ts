/**
 * The generations of one request that asks for several (`n` choices, several
 * prompts): on an engine that batches (`Engine.batchRows` > 1) they run at
 * once and share its forward passes as rows; otherwise one after another, as
 * before. Results come back in index order. A failure stops the others (their
 * signal aborts) and rejects with the first error.
 */
export async function generateAll<T>(count: number, together: boolean, signal: AbortSignal, generate: (index: number, signal: AbortSignal) => Promise<T>): Promise<T[]> {
  if (!together || count <= 1) {
    const results: T[] = [];
    for (let index = 0; index < count; index++) results.push(await generate(index, signal));
    return results;
  }
  const controller = new AbortController();
  const stop = () => controller.abort(signal.reason);
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  try {
    return await Promise.all(
      Array.from({ length: count }, (_, index) =>
        generate(index, controller.signal).catch((error: unknown) => {
          controller.abort(error);
          throw error;
        }),
      ),
    );
  } finally {
    signal.removeEventListener("abort", stop);
  }
}
