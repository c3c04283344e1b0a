/**
 * The GPU panel: what `client.gpu.info()` reports (adapter, `shader-f16`, key
 * limits) and, per catalog model, whether it fits and which variant loads.
 */
import type { GpuInfo } from "../../src/index.js";
import { h } from "./dom.js";
import { formatBytes } from "./format.js";
import { CPU_PARAM } from "./gguf-mode.js";
import type { ModelEntry } from "./model-entries.js";

export function gpuPanel(info: GpuInfo, entries: Map<string, ModelEntry[]>): HTMLElement {
  const f16 = info.features.includes("shader-f16");
  const all = [...entries.values()].flat();
  const fitting = all.filter((e) => e.fit.ok).length;
  const row = (label: string, value: string | Node, id?: string) => h("div", { class: "kv", id }, h("dt", {}, label), h("dd", {}, value));
  return h(
    "section",
    { class: "panel gpu", id: "gpu-panel", "aria-labelledby": "gpu-title" },
    h("h2", { id: "gpu-title" }, "GPU"),
    h(
      "dl",
      {},
      row("Vendor", info.vendor || "unknown", "gpu-vendor"),
      row("Architecture", info.architecture || "unknown", "gpu-architecture"),
      info.description ? row("Description", info.description) : null,
      row("shader-f16", h("span", { class: f16 ? "yes" : "no" }, f16 ? "yes: f16 variants (smaller, faster)" : "no: f32 variants are used"), "gpu-f16"),
      row("Max buffer", formatBytes(info.limits.maxBufferSize)),
      row("Max storage binding", formatBytes(info.limits.maxStorageBufferBindingSize)),
      row("Workgroup storage", formatBytes(info.limits.maxComputeWorkgroupStorageSize)),
      row("Invocations / workgroup", String(info.limits.maxComputeInvocationsPerWorkgroup)),
      info.isFallbackAdapter ? row("Note", "software fallback adapter: expect slow generation") : null,
    ),
    h(
      "details",
      { class: "fit" },
      h("summary", {}, `Catalog fit: ${fitting} of ${all.length} models`),
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, h("th", {}, "Model"), h("th", {}, "Variant used"), h("th", {}, "Fits"))),
        h(
          "tbody",
          {},
          ...all.map((e) =>
            h("tr", {}, h("td", {}, e.alias), h("td", {}, e.variant.quantization ?? "—"), h("td", { class: e.fit.ok ? "yes" : "no" }, `${e.fit.ok ? "✓" : "✗"} ${e.fit.reason}`)),
          ),
        ),
      ),
    ),
  );
}

/** The page shown instead of the app when there is no WebGPU: why, and what to do. */
export function noWebGpuPage(reason: string): HTMLElement {
  const secure = window.isSecureContext;
  return h(
    "main",
    { class: "no-webgpu", id: "no-webgpu" },
    h("h1", {}, "This browser cannot run models here: no WebGPU"),
    h("p", { class: "reason" }, reason),
    h("h2", {}, "What to do"),
    h(
      "ol",
      {},
      h("li", {}, "Use a current Chrome or Edge (113 or later) on Windows, macOS, ChromeOS or Android; on Linux, Chrome 121+ with a supported GPU."),
      !secure ? h("li", {}, "Open this page over https:// or http://localhost — WebGPU exists only in secure contexts.") : null,
      h("li", {}, "Turn on hardware acceleration (Settings → System) and check chrome://gpu: “WebGPU: Hardware accelerated”."),
      h("li", {}, "If your GPU is blocklisted, try chrome://flags/#enable-unsafe-webgpu (and on Linux #enable-vulkan), then restart the browser."),
      h("li", {}, "Firefox Nightly and Safari Technology Preview have WebGPU behind settings; stable versions may not."),
      h("li", {}, "Or run on the CPU: ", h("a", { id: "cpu-mode-link", href: cpuModeHref() }, "No WebGPU mode"), " (llama.cpp runs a model's GGUF fallback, or a GGUF added with ?gguf=<url>)."),
    ),
    h("p", {}, "The library itself still works without WebGPU for tests: a catalog record with the scripted engine answers with no GPU (see the README)."),
  );
}

/** This page's URL with `?cpu=1` (gguf-mode.ts), its other parameters kept. */
function cpuModeHref(): string {
  const params = new URLSearchParams(location.search);
  params.set(CPU_PARAM, "1");
  return `?${params}`;
}
