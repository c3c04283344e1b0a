/**
 * The Documents view: retrieval-augmented answers from the user's own text.
 * Paste text or drop text files → passages → `client.embeddings.create` in
 * small batches (progress bar) → ask → the question is embedded, passages
 * ranked by cosine similarity, the best shown with their scores → the chat
 * model answers from them (`client.chat.completions.create`, streamed).
 * The embedding model stays loaded next to the chat model, so asking again
 * reloads nothing.
 */
import type { Client } from "../../src/index.js";
import { h, replace } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { groundedMessages, queryText, splitPassages, topPassages, type Passage } from "./passages.js";

/** Passages per embeddings request: small enough for a smooth progress bar. */
const PASSAGES_PER_REQUEST = 8;
const TOP_K = 3;

interface Indexed {
  passage: Passage;
  vector: number[];
}

export function createDocuments(client: Client, embeddingModels: string[], initialEmbeddingModel: string, chatModel: () => string): HTMLElement {
  let documents: Array<{ name: string; text: string }> = [];
  let index: Indexed[] = [];
  let busy: AbortController | null = null;
  let pastedCount = 0;

  const select = h("select", { id: "embed-model", "aria-label": "Embedding model" }, ...embeddingModels.map((id) => h("option", { value: id, selected: id === initialEmbeddingModel }, id)));
  select.addEventListener("change", () => {
    index = [];
    renderState();
  });
  const paste = h("textarea", { id: "doc-text", rows: 5, placeholder: "Paste text here, or drop .txt / .md files on this box", "aria-label": "Document text" });
  const addText = h("button", { id: "doc-add", type: "button", onclick: () => addPasted() }, "Add text");
  const files = h("input", { id: "doc-files", type: "file", multiple: true, accept: ".txt,.md,.markdown,.csv,.json,text/*", "aria-label": "Add text files" });
  const docList = h("ul", { id: "doc-list", class: "doc-list" });
  const embedButton = h("button", { id: "doc-embed", class: "primary", type: "button", onclick: () => void embedAll() }, "Embed passages");
  const progress = h("progress", { id: "doc-progress", max: 1, value: 0 });
  const progressText = h("small", { id: "doc-progress-text" });
  const question = h("input", { id: "doc-question", type: "text", placeholder: "Ask a question about your documents", "aria-label": "Question" });
  const ask = h("button", { id: "doc-ask", class: "primary", type: "submit" }, "Ask");
  const stop = h("button", { id: "doc-stop", type: "button", disabled: true, onclick: () => busy?.abort() }, "Stop");
  const results = h("ol", { id: "doc-results", class: "doc-results", "aria-label": "Retrieved passages" });
  const answer = h("div", { id: "doc-answer", class: "content", "aria-live": "polite" });
  const status = h("p", { id: "doc-status", class: "muted", role: "status" });
  const askForm = h("form", { class: "composer" }, question, h("div", { class: "composer-buttons" }, ask, stop));

  files.addEventListener("change", () => {
    void addFiles([...(files.files ?? [])]);
    files.value = "";
  });
  // Dropping files anywhere on the paste box adds them.
  paste.addEventListener("dragover", (event) => {
    event.preventDefault();
    paste.classList.add("dragging");
  });
  paste.addEventListener("dragleave", () => paste.classList.remove("dragging"));
  paste.addEventListener("drop", (event) => {
    event.preventDefault();
    paste.classList.remove("dragging");
    void addFiles([...(event.dataTransfer?.files ?? [])]);
  });
  askForm.addEventListener("submit", (event) => {
    event.preventDefault();
    void answerQuestion();
  });

  function addPasted() {
    const text = paste.value.trim();
    if (!text) return;
    documents.push({ name: `Pasted text ${++pastedCount}`, text });
    paste.value = "";
    index = [];
    renderState();
  }

  async function addFiles(list: File[]) {
    for (const file of list) documents.push({ name: file.name, text: await file.text() });
    index = [];
    renderState();
  }

  const passages = () => documents.flatMap((d) => splitPassages(d.text, d.name));

  function setBusy(controller: AbortController | null) {
    busy = controller;
    for (const button of [embedButton, ask, addText]) button.disabled = controller !== null;
    stop.disabled = controller === null;
  }

  function renderState() {
    const count = passages().length;
    replace(
      docList,
      ...documents.map((d, i) =>
        h("li", { dataset: { doc: d.name } }, h("span", {}, d.name), h("small", {}, ` ${splitPassages(d.text, d.name).length} passages`), h("button", { class: "link", type: "button", onclick: () => remove(i) }, "Remove")),
      ),
    );
    embedButton.disabled = busy !== null || count === 0;
    if (index.length === 0) {
      progress.value = 0;
      progressText.textContent = count ? `${count} passages to embed` : "Add a document to start.";
    }
  }

  function remove(i: number) {
    documents = documents.filter((_, j) => j !== i);
    index = [];
    renderState();
  }

  async function embedAll() {
    const all = passages();
    if (all.length === 0 || busy) return;
    const controller = new AbortController();
    setBusy(controller);
    status.textContent = "";
    index = [];
    const started = performance.now();
    try {
      // The first time, the embedding model downloads (~240 MB for arctic-embed-s) and loads: the same bar shows it.
      await client.models.load(select.value, {
        signal: controller.signal,
        onProgress: (p) => {
          progress.value = p.fraction;
          progressText.textContent = `Loading ${select.value}: ${Math.round(p.fraction * 100)}%`;
        },
      });
      progress.value = 0;
      for (let start = 0; start < all.length; start += PASSAGES_PER_REQUEST) {
        const batch = all.slice(start, start + PASSAGES_PER_REQUEST);
        const response = await client.embeddings.create({ model: select.value, input: batch.map((p) => p.text) }, { signal: controller.signal });
        response.data.forEach((d, i) => index.push({ passage: batch[i], vector: d.embedding as number[] }));
        progress.value = index.length / all.length;
        progressText.textContent = `${index.length} / ${all.length} passages embedded`;
      }
      progressText.textContent = `${all.length} / ${all.length} passages embedded in ${((performance.now() - started) / 1000).toFixed(1)} s`;
    } catch (error) {
      index = [];
      status.textContent = controller.signal.aborted ? "Stopped." : errorText(error);
    } finally {
      setBusy(null);
      renderState();
    }
  }

  async function answerQuestion() {
    const text = question.value.trim();
    if (!text || busy) return;
    if (index.length === 0) {
      status.textContent = "Embed your passages first.";
      return;
    }
    const controller = new AbortController();
    setBusy(controller);
    status.textContent = "";
    replace(answer);
    try {
      const { data } = await client.embeddings.create({ model: select.value, input: queryText(select.value, text) }, { signal: controller.signal });
      const best = topPassages(data[0].embedding as number[], index.map((x) => x.vector), TOP_K);
      const chosen = best.map((b) => index[b.index].passage);
      replace(
        results,
        ...best.map((b, i) =>
          h(
            "li",
            { class: "passage", dataset: { source: index[b.index].passage.source } },
            h("div", { class: "passage-head" }, h("strong", {}, `[${i + 1}]`), h("span", { class: "score" }, b.score.toFixed(3)), h("small", { class: "source" }, index[b.index].passage.source)),
            h("p", {}, index[b.index].passage.text),
          ),
        ),
      );
      answer.classList.add("streaming");
      const stream = await client.chat.completions.create({ model: chatModel(), messages: groundedMessages(text, chosen), stream: true }, { signal: controller.signal });
      let content = "";
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? "";
        answer.innerHTML = renderMarkdown(content);
      }
    } catch (error) {
      status.textContent = controller.signal.aborted ? "Stopped." : errorText(error);
    } finally {
      answer.classList.remove("streaming");
      setBusy(null);
    }
  }

  renderState();
  return h(
    "section",
    { class: "documents", id: "documents", "aria-label": "Documents" },
    h("p", { class: "muted" }, "Answers from your own text: passages are embedded on this device with ", h("code", {}, "client.embeddings.create"), ", the closest ones go to the chat model with ", h("code", {}, "client.chat.completions.create"), ". Nothing leaves the browser."),
    h("div", { class: "doc-source" }, paste, h("div", { class: "composer-buttons" }, addText, h("label", { class: "file-label" }, "or add files ", files))),
    docList,
    h("div", { class: "doc-embed" }, h("label", {}, "Embedding model ", select), embedButton, progress, progressText),
    askForm,
    status,
    h("h2", {}, "Retrieved passages"),
    results,
    h("h2", {}, "Answer"),
    answer,
  );
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
