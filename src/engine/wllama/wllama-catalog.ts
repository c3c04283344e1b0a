/**
 * The GGUF records the wllama kind brings to every catalog: one small
 * default, the GGUF variant of Qwen3 0.6B, which web-llm's Qwen3-0.6B records
 * fall back to under `createClient({ engine: "auto" })` where WebGPU is
 * missing or the adapter cannot run them (`fallback_for`, models/catalog.ts).
 *
 * Its wasm comes from jsDelivr's copy of the wllama version this package
 * depends on, as web-llm's prebuilt records take their model libraries from
 * GitHub: a record that names no `wasm` runs with it too. An app that serves
 * wllama's wasm itself (or must, under a strict CSP) names its own.
 */
import type { ModelRecord } from "../../models/record.js";
import { bytesToBase64 } from "../../protocol/base64.js";

/** The `@wllama/wllama` version in package.json (a test keeps the two equal). */
export const WLLAMA_VERSION = "3.8.1";

/** wllama's `esm/wasm/wllama.wasm` of that version, on jsDelivr (CORS-readable). */
export const WLLAMA_WASM_URL = `https://cdn.jsdelivr.net/npm/@wllama/wllama@${WLLAMA_VERSION}/esm/wasm/wllama.wasm`;

/** The default GGUF: Qwen's own Q8_0 build of Qwen3 0.6B (about 640 MB; Qwen publishes no smaller quantization of it). */
export const DEFAULT_GGUF_ID = "Qwen3-0.6B-Q8_0-GGUF";

/**
 * The default GGUF pinned: a commit of `Qwen/Qwen3-0.6B-GGUF`, not `main`, so
 * the file cannot change under its hash, and the file's size and SHA-256 at
 * that commit (the hub's LFS pointer). No network here to ask the hub: the
 * three values are those many public manifests that pin this file agree on.
 */
export const DEFAULT_GGUF_PIN = {
  revision: "23749fefcc72300e3a2ad315e1317431b06b590a",
  file: "Qwen3-0.6B-Q8_0.gguf",
  bytes: 639_446_688,
  sha256Hex: "9465e63a22add5354d9bb4b99e90117043c7124007664907259bd16d043bb031",
} as const;

/** An SRI entry (`sha256-<base64>`) from a hex digest, as hubs publish it. */
function sha256Sri(hex: string): string {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return `sha256-${bytesToBase64(bytes)}`;
}

export function wllamaCatalog(): ModelRecord[] {
  return [
    {
      model_id: DEFAULT_GGUF_ID,
      model: `https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/${DEFAULT_GGUF_PIN.revision}/${DEFAULT_GGUF_PIN.file}`,
      model_lib: "",
      // The download is checked against it (cache/gguf-artifacts.ts); a resumed one hashes its stored part again.
      integrity: { [DEFAULT_GGUF_PIN.file]: sha256Sri(DEFAULT_GGUF_PIN.sha256Hex) },
      // Our ChatML prompt, as web-llm's Qwen3 records get (engine/wllama/chatml-prompt.ts), not the GGUF's Jinja template.
      family: "qwen3",
      overrides: { context_window_size: 4096 },
      // Listed as Q8_0, with its size, without reading the file's header from the hub (several MB for Qwen's vocabulary).
      engine: { kind: "wllama", wasm: WLLAMA_WASM_URL, listing: { quantization: "Q8_0", size_bytes: DEFAULT_GGUF_PIN.bytes } },
      fallback_for: "Qwen3-0.6B",
    },
  ];
}
