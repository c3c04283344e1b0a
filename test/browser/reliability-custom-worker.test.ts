/**
 * An app's own Worker (createClient({ worker })) that dies cannot be restarted
 * by the library: the open stream fails with 503 and later requests fail fast
 * with 503 worker_lost — never a request left waiting on a dead worker.
 */
import { describe, expect, it } from "vitest";
import { ApiError, createClient } from "../../src/index.js";

const ask = { model: "Qwen3-0.6B", messages: [{ role: "user" as const, content: "go" }] };

describe("an app's own worker that dies", () => {
  it("fails the open stream with 503 and every later request fast with 503 worker_lost", async () => {
    const worker = new Worker(new URL("./support/scripted-host-worker.ts", import.meta.url), { type: "module" });
    const client = createClient({ worker });
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    let n = 0;
    const error = await (async () => {
      try {
        for await (const _chunk of stream) if (++n === 3) client.terminate();
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: "worker_lost" });
    const started = performance.now();
    const later = await Promise.race([
      client.chat.completions.create(ask).catch((e: unknown) => e),
      new Promise((resolve) => setTimeout(() => resolve("still waiting after 5 s"), 5_000)),
    ]);
    expect(later).toMatchObject({ status: 503, code: "worker_lost", message: expect.stringMatching(/new client with a new Worker/) });
    expect(performance.now() - started).toBeLessThan(1_000);
    const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify(ask) });
    expect(response.status).toBe(503);
  }, 150_000);
});
