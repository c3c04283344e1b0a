/**
 * Bench only: fetches a file and hashes it with MD5 (WebAssembly) in this
 * worker, posting the digest back. The download bench runs one per stream to
 * show what hashing off the page's thread would give (the library hashes on
 * the thread that reads the network).
 */
import { createMD5 } from "hash-wasm";

self.onmessage = async ({ data: { url } }: MessageEvent<{ url: string }>) => {
  try {
    const md5 = (await createMD5()).init();
    const reader = (await fetch(url, { cache: "no-store" })).body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      md5.update(value);
    }
    self.postMessage({ hex: md5.digest("hex") });
  } catch (error) {
    self.postMessage({ error: String((error as Error)?.message ?? error) });
  }
};
