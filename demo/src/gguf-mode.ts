/**
 * GGUF models and the "No WebGPU" mode.
 *
 * `?gguf=<url>` (repeatable) adds a GGUF record run by llama.cpp (wllama,
 * whose wasm the demo bundles); catalog entries with `engine: { kind: "wllama" }`
 * show up in the picker the same way. `?cpu=1` is the "No WebGPU (CPU,
 * llama.cpp)" mode: the client is created with `engine: "auto"`, and the
 * picker sends a web-llm model's `fallback` (its GGUF) instead of the model,
 * so nothing runs on the GPU even where the browser has one. The engine label
 * says what runs the selected model (`models.status(id).engine`).
 */
import wllamaWasm from "@wllama/wllama/esm/wasm/wllama.wasm?url";
import type { Client, ModelRecord } from "../../src/index.js";
import { h, replace } from "./dom.js";
import { aliasOf } from "./model-entries.js";

export const CPU_PARAM = "cpu";

export function cpuMode(params: URLSearchParams): boolean {
  return params.get(CPU_PARAM) === "1";
}

/** `Qwen3-0.6B-Q4_K_M.gguf` → `Qwen3-0.6B-Q4_K_M`: the file name is the model id. */
function ggufId(url: string): string {
  const name = new URL(url, location.href).pathname.split("/").pop() ?? "model.gguf";
  return name.replace(/\.gguf$/i, "");
}

/** A record per `?gguf=` URL (the library checks the URL's shape and confines its downloads). */
export function ggufRecords(params: URLSearchParams): ModelRecord[] {
  return params.getAll("gguf").map((url) => ({ model_id: ggufId(url), model: url, model_lib: "", engine: { kind: "wllama", wasm: new URL(wllamaWasm, location.href).href } }));
}

/** What CPU mode sends for `model` (an id or the picker's alias): the record's GGUF fallback when it names one. */
export function cpuModel(records: ModelRecord[], model: string, cpu: boolean): string {
  if (!cpu) return model;
  const record = records.find((r) => r.model_id === model) ?? records.find((r) => aliasOf(r.model_id) === model && typeof r.fallback === "string");
  return typeof record?.fallback === "string" ? record.fallback : model;
}

/** The toggle: switching reloads the page with or without `?cpu=1` (the client is made once, at start). */
export function cpuToggle(params: URLSearchParams): HTMLElement {
  const box = h("input", { type: "checkbox", id: "cpu-mode", checked: cpuMode(params) });
  box.addEventListener("change", () => {
    const next = new URLSearchParams(params);
    if (box.checked) next.set(CPU_PARAM, "1");
    else next.delete(CPU_PARAM);
    location.search = next.toString();
  });
  return h("label", { class: "field inline", title: 'createClient({ engine: "auto" }); web-llm models run their GGUF fallback' }, box, " No WebGPU (CPU, llama.cpp)");
}

/** `Engine: wllama (single-threaded)` and why, for the model the picker sends. */
export function engineLabel(client: Client, model: () => string): { element: HTMLElement; refresh(): Promise<void> } {
  const element = h("div", { class: "kv" }, h("dt", {}, "Engine"), h("dd", { id: "model-engine" }, "…"));
  const dd = element.querySelector("dd")!;
  async function refresh() {
    try {
      const engine = (await client.models.status(model())).engine;
      replace(dd, engine ? `${engine.kind}${engine.threads ? ` (${engine.threads}-threaded)` : ""}: ${engine.model}` : "webllm");
      dd.title = engine?.reason ?? "the record names no engine kind: web-llm on WebGPU";
    } catch (error) {
      replace(dd, error instanceof Error ? error.message : String(error));
    }
  }
  return { element, refresh };
}
