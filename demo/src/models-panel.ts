/**
 * The models panel: a picker grouped by family, a download with progress in
 * bytes and ETA (pause, resume, cancel) through `client.models.load`, and the
 * cache manager (`client.cache`: list, delete, clear, usage vs quota,
 * persistent storage).
 */
import type { CachedModel, CacheUsage, Client, LoadProgress } from "../../src/index.js";
import { h, replace } from "./dom.js";
import { formatBytes, formatContext, formatEta } from "./format.js";
import type { ModelEntry } from "./model-entries.js";
import { engineLabel } from "./gguf-mode.js";

export interface ModelsPanel {
  element: HTMLElement;
  selected(): string;
  /**
   * Progress of a load the panel did not start: the first chat request to a
   * model not yet loaded downloads and loads it (createClient's onProgress).
   */
  showLoad(progress: LoadProgress): void;
}

/** `toRun` maps the picked alias to what is sent as `model` (CPU mode: its GGUF fallback). */
export function createModelsPanel(client: Client, entries: Map<string, ModelEntry[]>, initial: string, toRun: (alias: string) => string = (a) => a): ModelsPanel {
  const all = [...entries.values()].flat();
  let selected = all.find((e) => e.alias.toLowerCase() === initial.toLowerCase()) ?? all[0];
  let cached: CachedModel[] = [];
  let download: { controller: AbortController; alias: string } | null = null;
  const engine = engineLabel(client, () => toRun(selected.alias));

  const select = h("select", { id: "model-select", "aria-label": "Model" });
  const details = h("div", { class: "model-details", id: "model-details" });
  // Two bars: the download in bytes (what takes minutes), and the whole load
  // (download, then web-llm reading the cache into the GPU and compiling).
  const progressBar = h("progress", { id: "download-progress", max: 1, value: 0, "aria-label": "Download" });
  const progressText = h("div", { class: "progress-text", id: "download-text" });
  const overallBar = h("progress", { id: "load-progress", max: 1, value: 0, "aria-label": "Whole load" });
  const overallText = h("div", { class: "progress-text", id: "load-text" });
  const status = h("div", { class: "progress-text", id: "download-status", role: "status" });
  const progress = h("div", { class: "download", hidden: true }, progressBar, progressText, overallBar, overallText, status);
  const buttons = h("div", { class: "actions" });
  const cacheSection = h("section", { class: "cache", id: "cache-manager", "aria-labelledby": "cache-title" });

  select.addEventListener("change", () => {
    selected = all.find((e) => e.alias === select.value) ?? selected;
    renderDetails();
  });

  function cacheState(entry: ModelEntry): "cached" | "partial" | "not downloaded" {
    const hit = cached.find((c) => entry.variants.some((v) => v.id === c.id));
    return !hit ? "not downloaded" : hit.complete ? "cached" : "partial";
  }

  function renderPicker() {
    replace(
      select,
      ...[...entries].map(([family, list]) =>
        h(
          "optgroup",
          { label: family },
          ...list.map((e) => {
            const caps = Object.entries(e.variant.capabilities).filter(([, on]) => on).map(([name]) => name);
            // A GGUF's size and quantization come from its header (models.list reads it).
            const bytes = e.variant.size_bytes ?? (e.variant.vram_required_mb ? e.variant.vram_required_mb * 1024 * 1024 : 0);
            const size = `${e.variant.size_bytes && e.variant.quantization ? ` · ${e.variant.quantization}` : ""}${bytes ? ` · ${formatBytes(bytes)}` : ""}`;
            const state = cacheState(e);
            const label = `${e.alias}${size} · ${formatContext(e.variant.context_window)} · ${caps.join(", ")}${state === "not downloaded" ? "" : ` · ${state}`}${e.fit.ok ? "" : " · won't fit"}`;
            return h("option", { value: e.alias, selected: e === selected }, label);
          }),
        ),
      ),
    );
  }

  function renderDetails() {
    const e = selected;
    const caps = (["tools", "reasoning", "vision"] as const).map((c) => h("span", { class: `cap ${e.variant.capabilities[c] ? "on" : "off"}` }, c));
    replace(
      details,
      h("div", { class: "kv" }, h("dt", {}, "Variant"), h("dd", {}, h("code", { id: "model-variant" }, e.variant.id))),
      h("div", { class: "kv" }, h("dt", {}, "Memory"), h("dd", {}, e.variant.vram_required_mb === null ? "unknown" : e.variant.vram_required_mb === 0 ? "none" : `${e.variant.vram_required_mb} MB`)),
      h("div", { class: "kv" }, h("dt", {}, "Context"), h("dd", {}, `${e.variant.context_window} tokens`)),
      h("div", { class: "kv" }, h("dt", {}, "Fits"), h("dd", { class: e.fit.ok ? "yes" : "no" }, e.fit.reason)),
      h("div", { class: "kv" }, h("dt", {}, "Cache"), h("dd", { id: "model-cache-state" }, cacheState(e))),
      engine.element,
      h("div", { class: "caps" }, ...caps),
    );
    renderButtons();
    void engine.refresh();
  }

  function renderButtons() {
    if (download) {
      replace(
        buttons,
        h("button", { id: "download-pause", onclick: () => download?.controller.abort("pause") }, "Pause"),
        h("button", { id: "download-cancel", onclick: () => download?.controller.abort("cancel") }, "Cancel"),
      );
    } else {
      const state = cacheState(selected);
      replace(buttons, h("button", { id: "download", class: "primary", onclick: () => void startDownload() }, state === "cached" ? "Load into GPU" : state === "partial" ? "Resume download" : "Download"));
    }
  }

  function showProgress(p: LoadProgress, started: number) {
    progress.hidden = false;
    overallBar.value = p.fraction;
    overallText.textContent = `${p.phase === "download" ? "Whole load" : p.phase === "load" ? "Loading into the GPU" : "Compiling shaders"}: ${Math.floor(p.fraction * 100)}%`;
    if (p.phase !== "download" || p.totalBytes === 0) return;
    progressBar.hidden = progressText.hidden = false;
    const share = p.loadedBytes / p.totalBytes;
    progressBar.value = share;
    const seconds = (performance.now() - started) / 1000;
    // The library's ETA when it has one; otherwise extrapolate from the bytes so far.
    const eta = p.etaS ?? (share > 0 ? (seconds * (1 - share)) / share : null);
    progressText.textContent = `Download: ${formatBytes(p.loadedBytes)} / ${formatBytes(p.totalBytes)} · ${Math.floor(share * 100)}% · ${share >= 1 ? "done" : formatEta(eta)}`;
  }

  async function startDownload() {
    const entry = selected;
    const controller = new AbortController();
    download = { controller, alias: entry.alias };
    renderButtons();
    const started = performance.now();
    // The download bar appears with the first bytes; a cached model goes straight to loading.
    progressBar.hidden = progressText.hidden = true;
    status.textContent = "";
    status.classList.remove("no");
    showProgress({ phase: "download", loadedBytes: 0, totalBytes: 0, fraction: 0, etaS: null, file: null }, started);
    try {
      const { model } = await client.models.load(toRun(entry.alias), { signal: controller.signal, onProgress: (p) => showProgress(p, started) });
      overallBar.value = 1;
      status.textContent = `${model} is loaded and ready (${((performance.now() - started) / 1000).toFixed(1)} s).`;
    } catch (error) {
      const reason = controller.signal.reason;
      if (reason === "cancel") {
        // Cancel, unlike pause, drops what was downloaded so far.
        await client.cache.delete(entry.variant.id).catch(() => undefined);
        progress.hidden = true;
      } else if (reason === "pause") {
        status.textContent = "Paused: Resume fetches only the files still missing.";
      } else {
        status.textContent = error instanceof Error ? error.message : String(error);
        status.classList.add("no");
      }
    } finally {
      download = null;
      await refreshCache();
    }
  }

  async function refreshCache() {
    let usage: CacheUsage;
    try {
      // usage() lists the models too, with the origin's usage, quota and persistence.
      usage = await client.cache.usage();
    } catch (error) {
      replace(cacheSection, h("h2", { id: "cache-title" }, "Cache"), h("p", { class: "no" }, error instanceof Error ? error.message : String(error)));
      renderPicker();
      renderDetails();
      return;
    }
    cached = usage.models;
    const { storage } = usage;
    replace(
      cacheSection,
      h("h2", { id: "cache-title" }, "Cache"),
      storage.quota
        ? h(
            "div",
            { class: "usage" },
            h("meter", { min: 0, max: storage.quota, value: storage.usage ?? 0, "aria-label": "Storage used" }),
            h("small", { id: "cache-usage" }, `${formatBytes(storage.usage ?? 0)} used of ${formatBytes(storage.quota)} quota · models ${formatBytes(usage.totalBytes)}`),
          )
        : null,
      h(
        "div",
        { class: "kv" },
        h("dt", {}, "Persistent"),
        h("dd", { id: "cache-persisted" }, storage.persisted === true ? "yes: the browser keeps the weights" : storage.persisted === false ? "no: the browser may evict them" : "not asked yet"),
        storage.persisted !== true ? h("button", { class: "link", onclick: () => void navigator.storage.persist().then(refreshCache) }, "Ask") : null,
      ),
      cached.length === 0
        ? h("p", { class: "muted", id: "cache-empty" }, "No models downloaded yet.")
        : h("ul", { class: "cache-list", id: "cache-list" }, ...cached.map(cacheRow)),
      cached.length > 1 ? h("button", { onclick: () => void client.cache.clear().then(refreshCache) }, "Delete all") : null,
    );
    renderPicker();
    renderDetails();
  }

  function cacheRow(m: CachedModel): HTMLElement {
    return h(
      "li",
      { dataset: { model: m.id } },
      h("code", {}, m.id),
      h("small", {}, `${formatBytes(m.bytes)}${m.complete ? "" : " · incomplete"} · used ${new Date(m.lastUsed).toLocaleString()}`),
      h("button", { class: "delete", "aria-label": `Delete ${m.id}`, onclick: () => void client.cache.delete(m.id).then(refreshCache) }, "Delete"),
    );
  }

  const element = h(
    "section",
    { class: "panel models", id: "models-panel", "aria-labelledby": "models-title" },
    h("h2", { id: "models-title" }, "Model"),
    select,
    details,
    buttons,
    progress,
    cacheSection,
  );
  renderPicker();
  renderDetails();
  void refreshCache(); // then again with each model's cache state
  let implicitStart: number | null = null;
  function showLoad(p: LoadProgress) {
    if (download) return; // the panel's own download reports through its onProgress
    if (implicitStart === null) {
      implicitStart = performance.now();
      progressBar.hidden = progressText.hidden = true;
      status.textContent = "";
    }
    showProgress(p, implicitStart);
    if (p.fraction >= 1) {
      implicitStart = null;
      status.textContent = "Loaded for the chat.";
      void refreshCache();
    }
  }

  return { element, selected: () => toRun(selected.alias), showLoad };
}
