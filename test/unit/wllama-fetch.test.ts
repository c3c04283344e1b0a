/**
 * The wllama engine's stopgap GGUF fetch (engine/wllama/fetch-gguf.ts): only
 * http(s) (or the app's own origin), credentials omitted, byte progress, the
 * whole file as a Blob; a failed answer names the URL and status.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchGguf } from "../../src/engine/wllama/fetch-gguf.js";
import type { LoadProgress } from "../../src/engine/types.js";

afterEach(() => vi.unstubAllGlobals());

describe("fetchGguf", () => {
  it("refuses URLs that are not http(s), before fetching", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    for (const url of ["data:application/octet-stream;base64,R0dVRg==", "file:///etc/passwd", "javascript:alert(1)"]) {
      await expect(fetchGguf(url, {}), url).rejects.toMatchObject({ status: 400, code: "model_url_refused", param: "model" });
    }
    expect(fetch).not.toHaveBeenCalled();
  });

  it("reads the file with byte progress, credentials omitted", async () => {
    const bytes = new Uint8Array(3000).map((_, i) => i % 251);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 1000) controller.enqueue(bytes.slice(at, at + 1000));
        controller.close();
      },
    });
    const fetch = vi.fn(async (_url: URL, _init?: RequestInit) => new Response(body, { headers: { "content-length": "3000" } }));
    vi.stubGlobal("fetch", fetch);
    const progress: LoadProgress[] = [];
    const blob = await fetchGguf("https://example.com/m.gguf", { onProgress: (p) => progress.push(p) });
    expect(new Uint8Array(await blob.arrayBuffer())).toEqual(bytes);
    expect(fetch.mock.calls[0][1]).toMatchObject({ credentials: "omit" });
    expect(progress.map((p) => p.loadedBytes)).toEqual([1000, 2000, 3000]);
    expect(progress.every((p) => p.phase === "download" && p.totalBytes === 3000 && p.fraction <= 1)).toBe(true);
  });

  it("a failed answer is a 502 naming the URL and status", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response("no", { status: 404 })));
    await expect(fetchGguf("https://example.com/missing.gguf", {})).rejects.toMatchObject({ status: 502, code: "model_download_failed", message: expect.stringContaining("HTTP 404") });
  });
});
