/**
 * The demo page. Everything it does goes through the public API:
 *
 *   const client = createClient({ models });   // models: extra records, e.g. from ?catalog=
 *   await client.gpu.info();                    // adapter, features, limits
 *   await client.models.list();                 // the catalog, with family, size and capabilities
 *   await client.models.load(id, { onProgress, signal });
 *   await client.chat.completions.create({ model, messages, stream: true, tools });
 *   await client.embeddings.create({ model, input });   // the Documents view
 *   await client.audio.transcriptions.create({ file, model, stream: true });   // the Transcribe view
 *   client.cache.*                              // the weights the browser holds
 *   createPromptApi({ client, model })          // the Prompt API view: Chrome's LanguageModel on this client
 *   await client.responses.create({ model, input, tools: [{ type: "mcp", server_url, require_approval }] })   // the MCP view
 *
 * URL parameters: `?catalog=<url>` adds model records (a JSON array of
 * ModelRecord, e.g. local artifacts); `?model=<id or alias>` picks the model;
 * `?embed=<id>` the Documents view's embedding model (default: the catalog's
 * own embedding record, else snowflake-arctic-embed-s, batch 4).
 * `?worker=shared` runs one engine for every tab (`createClient({ worker: "shared" })`).
 * `?gguf=<url>` adds a GGUF model (llama.cpp); `?cpu=1` is the "No WebGPU" mode
 * (`createClient({ engine: "auto" })`, web-llm models run their GGUF fallback): gguf-mode.ts.
 */
import { createClient, type ModelRecord } from "../../src/index.js";
import { createChat } from "./chat.js";
import { h, replace } from "./dom.js";
import { createDropIn } from "./dropin.js";
import { createDocuments } from "./documents.js";
import { createTranscribe } from "./transcribe.js";
import { createPromptApiView } from "./prompt-api-view.js";
import { createMcpView } from "./mcp-view.js";
import { gpuPanel, noWebGpuPage } from "./gpu-panel.js";
import { cpuMode, cpuModel, cpuToggle, ggufRecords } from "./gguf-mode.js";
import { modelEntries } from "./model-entries.js";
import { createModelsPanel, type ModelsPanel } from "./models-panel.js";
import { createSettings } from "./settings.js";
import { installThemeToggle } from "./theme.js";
import { workerChoice, workerPanel } from "./worker-panel.js";

/** The smallest model with both tools and reasoning; the library picks its f16 or f32 variant. */
const DEFAULT_MODEL = "Qwen3-0.6B";
/** The smallest embedding model (384 dimensions, batch 4: ~240 MB next to the chat model). */
const DEFAULT_EMBEDDING_MODEL = "snowflake-arctic-embed-s-q0f32-MLC-b4";

async function loadCatalog(url: string | null): Promise<ModelRecord[]> {
  if (!url) return [];
  const response = await fetch(url);
  if (!response.ok) throw new Error(`?catalog=${url} answered ${response.status}.`);
  const records: unknown = await response.json();
  if (!Array.isArray(records)) throw new Error(`?catalog=${url} must be a JSON array of model records.`);
  return records as ModelRecord[];
}

async function main() {
  const root = document.getElementById("app")!;
  const params = new URLSearchParams(location.search);
  const header = h("header", { class: "top" }, h("h1", {}, "webgpu-openai"), h("span", { class: "tagline" }, "OpenAI's API, served by a model in your GPU"), installThemeToggle());
  replace(root, header, h("p", { class: "loading" }, "Looking for a GPU…"));

  let records: ModelRecord[];
  try {
    records = [...(await loadCatalog(params.get("catalog"))), ...ggufRecords(params)];
  } catch (error) {
    replace(root, header, h("p", { class: "error", role: "alert" }, String(error instanceof Error ? error.message : error)));
    return;
  }
  // Loads the chat starts itself (first message to a model) show in the models panel too.
  let modelsPanel: ModelsPanel | null = null;
  const worker = workerChoice(params);
  const cpu = cpuMode(params);
  const client = createClient({ models: records, worker: worker === "shared" ? "shared" : true, ...(cpu ? { engine: "auto" } : {}), onProgress: (progress) => modelsPanel?.showLoad(progress) });
  const gpu = await client.gpu.info();
  if (!gpu.available && !cpu) {
    replace(root, header, noWebGpuPage(gpu.reason));
    return;
  }

  const { data: models } = await client.models.list();
  // Embedding models serve the Documents view, not the chat picker.
  const entries = modelEntries(models.filter((m) => m.type !== "embedding"), gpu);
  const embeddingIds = models.filter((m) => m.type === "embedding").map((m) => m.id);
  const ownGguf = ggufRecords(params)[0]?.model_id;
  const panel = createModelsPanel(client, entries, params.get("model") ?? ownGguf ?? DEFAULT_MODEL, (alias) => cpuModel(records, alias, cpu));
  modelsPanel = panel;
  const settings = createSettings();
  const chat = createChat(client, settings, panel.selected);
  const dropIn = createDropIn(client, chat.messages, panel.selected);
  const ownEmbedder = records.find((r) => r.model_type === 1)?.model_id;
  const documents = createDocuments(client, embeddingIds, params.get("embed") ?? ownEmbedder ?? DEFAULT_EMBEDDING_MODEL, panel.selected);
  const promptApi = createPromptApiView(client, panel.selected);
  const mcp = createMcpView(client, panel.selected);
  const transcribe = createTranscribe(client, models.filter((m) => m.input_modalities?.includes("audio")).map((m) => m.id), panel.selected());

  replace(
    root,
    header,
    h(
      "div",
      { class: "layout" },
      h("aside", { class: "sidebar" }, panel.element, cpuToggle(params), workerPanel(client, worker), gpu.available ? gpuPanel(gpu.info, entries) : null),
      h("main", { class: "main" }, tabs([["Chat", chat.element], ["Documents", documents], ["Transcribe", transcribe], ["Prompt API", promptApi], ["MCP", mcp], ["OpenAI SDK drop-in", dropIn]])),
    ),
  );
  document.getElementById("prompt")?.focus();
}

/** Accessible tabs: arrow keys move between them, as the WAI-ARIA pattern says. */
function tabs(panels: [string, HTMLElement][]): HTMLElement {
  const buttons = panels.map(([label], i) => h("button", { role: "tab", id: `tab-${i}`, "aria-controls": `panel-${i}`, class: "tab" }, label));
  const bodies = panels.map(([, body], i) => h("div", { role: "tabpanel", id: `panel-${i}`, "aria-labelledby": `tab-${i}`, class: "tabpanel" }, body));
  const show = (index: number) => {
    buttons.forEach((b, i) => {
      b.setAttribute("aria-selected", String(i === index));
      b.tabIndex = i === index ? 0 : -1;
      bodies[i].hidden = i !== index;
    });
  };
  buttons.forEach((button, i) => {
    button.addEventListener("click", () => show(i));
    button.addEventListener("keydown", (event) => {
      const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      const next = (i + step + buttons.length) % buttons.length;
      show(next);
      buttons[next].focus();
    });
  });
  show(0);
  return h("div", { class: "tabs" }, h("div", { role: "tablist", class: "tablist" }, ...buttons), ...bodies);
}

void main().catch((error: unknown) => {
  document.getElementById("app")!.append(h("p", { class: "error", role: "alert" }, error instanceof Error ? error.message : String(error)));
});
