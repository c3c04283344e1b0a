/**
 * The test servers' teardowns end even while a client still holds a response
 * open. Vitest awaits global teardowns with no limit, before it closes
 * Chromium: a GGUF server that waited on a `hang<N>` response the browser
 * still held kept a CI run going for 90 minutes after every test had passed.
 */
import { request } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { startGgufServer } from "../support/gguf-server.js";
import { boundedTeardown } from "../support/bounded-teardown.js";

/** Starts a GET and resolves once the first body bytes arrived; the response is left open (as a client that never aborts). */
function openResponse(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => res.once("data", () => resolve()));
    req.on("error", () => undefined); // the server's close ends it
    req.once("error", reject);
    req.end();
  });
}

describe("test servers' teardown", () => {
  it("the GGUF server closes while a `hang<N>` response is still held open by its client", async () => {
    const server = await startGgufServer();
    await openResponse(`${server.url}/m/hang64.close/tiny.gguf`);
    const closed = await Promise.race([server.close().then(() => "closed"), new Promise((r) => setTimeout(() => r("still open"), 3000))]);
    expect(closed).toBe("closed");
  });

  it("a teardown that never ends is left behind after its limit, with a warning naming it", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const started = Date.now();
      await boundedTeardown("stuck server", () => new Promise<void>(() => undefined), 200)();
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining("stuck server"));
    } finally {
      warn.mockRestore();
    }
  });

  it("a teardown that ends is awaited, with no warning", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      let ended = false;
      await boundedTeardown("quick", async () => {
        await new Promise((r) => setTimeout(r, 20));
        ended = true;
      })();
      expect(ended).toBe(true);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
