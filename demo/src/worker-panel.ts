/**
 * The engine-worker setting: a dedicated worker per tab (the library's
 * default) or one shared worker for every tab of the origin
 * (`createClient({ worker: "shared" })`), and how many tabs the worker serves
 * now (`client.workerInfo()`). The choice is made before the client exists, so
 * changing it reloads the page; it comes from `?worker=shared|dedicated`, else
 * from the last choice (localStorage), so tabs opened later share the engine.
 */
import type { Client } from "../../src/index.js";
import { h } from "./dom.js";

export type WorkerChoice = "dedicated" | "shared";
const KEY = "webgpu-openai-demo:worker";

export function workerChoice(params: URLSearchParams): WorkerChoice {
  const asked = params.get("worker");
  if (asked === "shared" || asked === "dedicated") {
    try {
      localStorage.setItem(KEY, asked);
    } catch {
      // storage may be off: the URL still decides
    }
    return asked;
  }
  try {
    return localStorage.getItem(KEY) === "shared" ? "shared" : "dedicated";
  } catch {
    return "dedicated";
  }
}

export function workerPanel(client: Client, choice: WorkerChoice): HTMLElement {
  const select = h(
    "select",
    { id: "worker-select", "aria-describedby": "worker-hint" },
    h("option", { value: "dedicated", selected: choice === "dedicated" }, "dedicated: one engine per tab"),
    h("option", { value: "shared", selected: choice === "shared" }, "shared: one engine for all tabs"),
  );
  select.addEventListener("change", () => {
    const url = new URL(location.href);
    url.searchParams.set("worker", select.value);
    location.assign(url);
  });
  const serving = h("dd", {}, "…");
  const tabsCount = h("dd", {}, "…");
  const refresh = async () => {
    try {
      const info = await client.workerInfo();
      serving.textContent = info.fallback ? `${info.worker} (no SharedWorker in this browser)` : info.worker;
      tabsCount.textContent = String(info.tabs);
    } catch (error) {
      serving.textContent = error instanceof Error ? error.message : String(error);
    }
  };
  void refresh();
  // The count changes when other tabs open or close: poll it, cheaply, while this tab is visible.
  setInterval(() => {
    if (document.visibilityState === "visible") void refresh();
  }, 2000);
  return h(
    "section",
    { class: "panel worker", id: "worker-panel", "aria-labelledby": "worker-title" },
    h("h2", { id: "worker-title" }, "Engine worker"),
    select,
    h("small", { id: "worker-hint" }, "Shared: the model loads once for all tabs of this site; their requests take turns in one queue."),
    h("dl", {}, h("div", { class: "kv", id: "worker-kind" }, h("dt", {}, "Serving"), serving), h("div", { class: "kv", id: "worker-tabs" }, h("dt", {}, "Tabs connected"), tabsCount)),
  );
}
