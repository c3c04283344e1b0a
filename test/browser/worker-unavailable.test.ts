/**
 * A worker that never starts (its URL 404s, the server sends an HTML page in
 * its place, it throws at startup, it never answers) must not leave requests
 * waiting: every pending and later request fails within seconds with a 503
 * `worker_unavailable` that names the URL, what the server answered, and the
 * fix — and no new failing worker is started per request.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError, createClient } from "../../src/index.js";
import { workerBackend, type Backend } from "../../src/client/backend.js";
import { startDefaultWorker } from "../../src/client/worker-start.js";

const ask = { model: "Qwen3-0.6B", messages: [{ role: "user" as const, content: "hi" }] };

let started = 0;
const OriginalWorker = globalThis.Worker;
beforeEach(() => {
  started = 0;
  globalThis.Worker = class extends OriginalWorker {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      started++;
    }
  };
});
afterEach(() => {
  globalThis.Worker = OriginalWorker;
});

/** The settled value of `promise`, or "still waiting" after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<unknown> {
  return Promise.race([promise.catch((error: unknown) => error), new Promise((resolve) => setTimeout(() => resolve(`still waiting after ${ms} ms`), ms))]);
}

/** A backend whose default worker is started, exactly as the library does, from `url`. */
function backendAt(url: URL, startTimeoutMs?: number): Backend {
  return workerBackend({ engine: { kind: "webllm" }, startTimeoutMs, spawnDefault: () => startDefaultWorker("webgpu-openai", () => new Worker(url, { type: "module" })) });
}

async function expectUnavailable(backend: Backend, message: RegExp): Promise<void> {
  const t0 = performance.now();
  const pending: Promise<unknown>[] = [
    backend.createChatCompletion(ask, new AbortController().signal),
    backend.listModels(),
    backend.streamChatCompletion({ ...ask, stream: true }, { write() {}, end() {}, fail() {} } as never, new AbortController().signal),
  ];
  for (const result of await Promise.all(pending.map((p) => within(p, 5_000)))) {
    expect(result).toBeInstanceOf(ApiError);
    expect(result).toMatchObject({ status: 503, code: "worker_unavailable", message: expect.stringMatching(message) });
    expect((result as ApiError).message).toMatch(/Using it in your app/);
  }
  expect(performance.now() - t0).toBeLessThan(5_000);
  // Later requests fail fast with the same error; no second worker is started for them.
  const t1 = performance.now();
  for (let i = 0; i < 3; i++) expect(await within(backend.listModels(), 1_000)).toMatchObject({ status: 503, code: "worker_unavailable" });
  expect(performance.now() - t1).toBeLessThan(1_000);
  expect(started).toBe(1);
}

describe("a default worker that cannot start", () => {
  it("404: fails every request with 503 naming the URL and the status", async () => {
    const url = new URL("/no-such-dir/webgpu-openai-worker-404.js", location.href);
    const response = await fetch(url);
    expect(response.status, "the test server must 404 this path").toBe(404);
    await expectUnavailable(backendAt(url), new RegExp(`${url.href.replace(/[.?/]/g, "\\$&")} answered HTTP 404`));
  });

  it("HTML served instead of JavaScript: says so, with the content type", async () => {
    const url = new URL("./support/not-a-worker.html", import.meta.url);
    await expectUnavailable(backendAt(url), /answered HTTP 200 with text\/html.*not JavaScript/);
  });

  it("a script that throws at startup: says it loads but failed to start", async () => {
    const url = URL.createObjectURL(new Blob(["throw new Error('boom at startup');"], { type: "text/javascript" }));
    await expectUnavailable(backendAt(new URL(url)), /failed to start.*boom at startup/);
  });

  it("a worker that never answers: 503 after the start timeout", async () => {
    const url = URL.createObjectURL(new Blob(["/* listens to nothing */"], { type: "text/javascript" }));
    await expectUnavailable(backendAt(new URL(url), 1_000), /did not answer within 1 s/);
  });
});

describe("an app's own Worker that cannot start", () => {
  it("fails requests through the client and its fetch with 503 worker_unavailable", async () => {
    const client = createClient({ worker: new Worker(new URL("./support/not-a-worker.html", import.meta.url), { type: "module" }) });
    const t0 = performance.now();
    const [completion, stream] = await Promise.all([within(client.chat.completions.create(ask), 5_000), within(client.chat.completions.create({ ...ask, stream: true }), 5_000)]);
    expect(completion).toMatchObject({ status: 503, code: "worker_unavailable", message: expect.stringMatching(/createClient\(\{ worker \}\) failed to start/) });
    expect(stream).toMatchObject({ status: 503, code: "worker_unavailable" });
    const response = await within(client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify(ask) }), 1_000);
    expect((response as Response).status).toBe(503);
    expect(((await (response as Response).json()) as { error: { code: string } }).error.code).toBe("worker_unavailable");
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe("no Worker in this environment", () => {
  it("createClient({ worker: true }) fails with 503, not a ReferenceError", async () => {
    const saved = globalThis.Worker;
    // @ts-expect-error: simulating a runtime without workers
    delete globalThis.Worker;
    try {
      const client = createClient({ worker: true });
      const error = await within(client.chat.completions.create(ask), 1_000);
      expect(error).toMatchObject({ status: 503, code: "worker_unavailable", message: expect.stringMatching(/no Worker.*worker: false/) });
    } finally {
      globalThis.Worker = saved;
    }
  });
});
