/**
 * The Prompt API view: Chrome's `LanguageModel` (webgpu-openai/prompt-api) on
 * the page's client and the model chosen in the sidebar.
 *
 *   const LanguageModel = createPromptApi({ client, model });
 *   const session = await LanguageModel.create({ initialPrompts, monitor });
 *   session.promptStreaming(text);                       // the reply as it streams
 *   await session.clone();                               // a branch: the shared prefix stays cached
 *   session.contextUsage / session.contextWindow         // the meter; "contextoverflow" when it fills
 *   await session.prompt(text, { responseConstraint: new RegExp(pattern) });
 */
import type { Client } from "../../src/index.js";
import { createPromptApi, type LanguageModelSession } from "../../src/prompt-api/index.js";
import { h, replace } from "./dom.js";

interface Branch {
  name: string;
  session: LanguageModelSession;
  log: HTMLElement;
}

const DEFAULT_SYSTEM = "You are a concise assistant. Answer in one or two sentences.";

export function createPromptApiView(client: Client, selectedModel: () => string): HTMLElement {
  const system = h("textarea", { id: "pa-system", rows: 2, "aria-label": "System prompt (initialPrompts)" }, DEFAULT_SYSTEM);
  const create = h("button", { id: "pa-create", type: "button", class: "primary" }, "New session");
  const status = h("div", { id: "pa-status", class: "progress-text", role: "status" }, "No session yet.");
  const progress = h("progress", { id: "pa-progress", max: 1, value: 0, hidden: true, "aria-label": "Model load" });
  const branches = h("select", { id: "pa-branch", "aria-label": "Session", disabled: true });
  const clone = h("button", { id: "pa-clone", type: "button", disabled: true }, "Clone");
  const meter = h("meter", { id: "pa-meter", min: 0, max: 1, value: 0, "aria-label": "Context used" });
  const meterText = h("small", { id: "pa-meter-text" }, "");
  const logs = h("div", { class: "pa-logs" });
  const input = h("textarea", { id: "pa-input", rows: 2, "aria-label": "Prompt", placeholder: "Ask something…" });
  const send = h("button", { id: "pa-send", type: "submit", class: "primary", disabled: true }, "Send");
  const constrain = h("input", { type: "checkbox", id: "pa-constrain" });
  const pattern = h("input", { type: "text", id: "pa-pattern", value: "\\d{3}-\\d{4}", size: 18, "aria-label": "RegExp" });
  const report = h("small", { id: "pa-report", class: "progress-text" });
  const all: Branch[] = [];
  let current: Branch | null = null;

  function showMeter() {
    if (!current) return;
    const { contextUsage, contextWindow } = current.session;
    meter.max = contextWindow;
    meter.value = contextUsage;
    replace(meterText, `${contextUsage} / ${contextWindow} tokens of context`);
  }

  function addBranch(name: string, session: LanguageModelSession, log: HTMLElement) {
    const branch = { name, session, log };
    all.push(branch);
    session.addEventListener("contextoverflow", () => entry(branch, "notice", "The context window filled up: the oldest turns were dropped (the system prompt stays)."));
    branches.append(h("option", { value: String(all.length - 1) }, name));
    branches.value = String(all.length - 1);
    show(branch);
  }

  function show(branch: Branch) {
    current = branch;
    for (const b of all) b.log.hidden = b !== branch;
    showMeter();
  }

  const entry = (branch: Branch, kind: string, text: string) => {
    const element = h("div", { class: `pa-entry pa-${kind}` }, text);
    branch.log.append(element);
    return element;
  };

  create.addEventListener("click", async () => {
    const model = selectedModel();
    create.disabled = true;
    progress.hidden = false;
    replace(status, `Loading ${model}…`);
    try {
      const LanguageModel = createPromptApi({ client, model });
      const session = await LanguageModel.create({
        initialPrompts: [{ role: "system", content: system.value }],
        monitor: (m) => m.addEventListener("downloadprogress", (e) => (progress.value = (e as ProgressEvent).loaded)),
      });
      for (const b of all) b.session.destroy();
      all.length = 0;
      replace(branches);
      replace(logs);
      const log = h("div", { class: "pa-log", "aria-live": "polite" });
      logs.append(log);
      addBranch("Session", session, log);
      replace(status, `Ready: ${model}.`);
      status.dataset.state = "ready";
      for (const control of [send, clone, branches]) control.disabled = false;
    } catch (error) {
      replace(status, `${(error as DOMException).name}: ${(error as Error).message}`);
    } finally {
      create.disabled = false;
      progress.hidden = true;
    }
  });

  clone.addEventListener("click", async () => {
    if (!current) return;
    const source = current;
    const session = await source.session.clone();
    const log = source.log.cloneNode(true) as HTMLElement;
    logs.append(log);
    addBranch(`${source.name} → clone ${all.length}`, session, log);
  });

  branches.addEventListener("change", () => show(all[Number(branches.value)]));

  const form = h("form", { class: "pa-form" }, input, h("div", { class: "actions" }, send, h("label", { class: "inline" }, constrain, " constrain to RegExp "), pattern));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const branch = current;
    const text = input.value.trim();
    if (!branch || !text) return;
    input.value = "";
    send.disabled = true;
    entry(branch, "user", text);
    const reply = entry(branch, "assistant", "");
    try {
      if (constrain.checked) {
        const regexp = new RegExp(pattern.value);
        const answer = await branch.session.prompt(text, { responseConstraint: regexp });
        replace(reply, answer, h("span", { class: "pa-badge" }, regexp.test(answer) ? ` ✓ matches /${regexp.source}/` : " ✗ no match"));
      } else {
        for await (const delta of branch.session.promptStreaming(text) as unknown as AsyncIterable<string>) reply.append(delta);
      }
      const last = branch.session.lastReport;
      if (last?.usage && last.stats) {
        replace(report, `Last request: ${last.stats.prefill_tokens} tokens prefilled, ${last.usage.prompt_tokens_details.cached_tokens} from the prompt cache.`);
      }
    } catch (error) {
      reply.classList.add("error");
      replace(reply, `${(error as DOMException).name}: ${(error as Error).message}`);
    } finally {
      send.disabled = false;
      showMeter();
    }
  });

  return h(
    "section",
    { class: "prompt-api", "aria-label": "Prompt API" },
    h("h2", {}, "Prompt API (LanguageModel)"),
    h("p", { class: "hint" }, "Chrome's built-in AI API, served by the model chosen in the sidebar. Clone a session to branch it: the shared prefix stays in the prompt cache."),
    h("label", { class: "field" }, h("span", {}, "System prompt (initialPrompts)"), system),
    h("div", { class: "actions" }, create, branches, clone),
    progress,
    status,
    h("div", { class: "usage" }, meter, meterText),
    logs,
    form,
    report,
  );
}
