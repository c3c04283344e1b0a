/**
 * "Transcribe a file": `client.audio.transcriptions.create({ file, model,
 * language, stream: true })`, the OpenAI call, answered by a local chat model
 * that takes audio. States: loading the model (with progress), decoding and
 * listening, the text as it streams, done with token counts.
 */
import type { Client } from "../../src/index.js";
import { createAudioStatus } from "./audio-status.js";
import { h, replace } from "./dom.js";

/** `audioModels`: ids of the models that take audio; `preferred`: the chat's model (alias or id), chosen when it is one of them. */
export function createTranscribe(client: Client, audioModels: string[], preferred: string): HTMLElement {
  const chosen = audioModels.find((id) => id === preferred || id.toLowerCase().startsWith(`${preferred.toLowerCase()}-`)) ?? audioModels[0];
  const model = h("select", { id: "transcribe-model", "aria-label": "Model" }, ...audioModels.map((id) => h("option", { value: id, selected: id === chosen }, id)));
  const file = h("input", { type: "file", id: "transcribe-file", accept: "audio/*,.wav,.mp3,.webm,.ogg,.opus", "aria-label": "Audio file" });
  const language = h("input", { type: "text", id: "transcribe-language", placeholder: "auto (or en, fr, de…)", size: 12, "aria-label": "Language" });
  const prompt = h("input", { type: "text", id: "transcribe-prompt", placeholder: "names or terms it should spell right", "aria-label": "Prompt" });
  const stream = h("input", { type: "checkbox", id: "transcribe-stream", checked: true });
  const run = h("button", { id: "transcribe-run", class: "primary", type: "submit", disabled: true }, "Transcribe");
  const cancel = h("button", { id: "transcribe-cancel", type: "button", disabled: true }, "Cancel");
  const preview = h("audio", { id: "transcribe-preview", controls: true, hidden: true });
  const status = createAudioStatus("transcribe-status");
  const output = h("div", { id: "transcribe-output", class: "transcript", "aria-live": "polite" });
  const usage = h("small", { id: "transcribe-usage", class: "progress-text" });
  let controller: AbortController | null = null;
  let previewUrl = "";

  const field = (label: string, input: HTMLElement) => h("label", { class: "field" }, h("span", {}, label), input);
  const form = h(
    "form",
    { class: "transcribe-form" },
    field("Audio file (WAV, MP3, WebM, Ogg)", file),
    h("div", { class: "transcribe-options" }, field("Model", model), field("Language", language), field("Prompt", prompt), h("label", { class: "inline" }, stream, " stream")),
    h("div", { class: "actions" }, run, cancel),
  );

  file.addEventListener("change", () => {
    const chosen = file.files?.[0];
    run.disabled = !chosen || audioModels.length === 0;
    if (previewUrl) URL.revokeObjectURL(previewUrl);
    previewUrl = chosen ? URL.createObjectURL(chosen) : "";
    preview.src = previewUrl;
    preview.hidden = !chosen;
    if (chosen) status.set("idle", `${chosen.name} · ${(chosen.size / 1024).toFixed(0)} KB — ready to transcribe.`);
  });
  cancel.addEventListener("click", () => controller?.abort());

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (chosen && !controller) void transcribe(chosen);
  });

  async function transcribe(chosen: File) {
    controller = new AbortController();
    const { signal } = controller;
    run.disabled = true;
    cancel.disabled = false;
    replace(output);
    replace(usage);
    const started = performance.now();
    try {
      // Loading first, on its own, so its progress shows here; then the request only decodes and listens.
      status.set("loading", "Loading the model…");
      await client.models.load(model.value, { signal, onProgress: (p) => status.loading(p) });
      status.set("listening", "Decoding the audio and listening…");
      const params = { file: chosen, model: model.value, language: language.value.trim() || undefined, prompt: prompt.value.trim() || undefined };
      if (stream.checked) {
        const events = await client.audio.transcriptions.create({ ...params, stream: true }, { signal });
        let text = "";
        for await (const event of events) {
          if (event.type === "transcript.text.delta") {
            text += event.delta;
            replace(output, text);
            status.set("listening", "Transcribing…");
          } else {
            replace(output, event.text);
            showUsage(event.usage, started);
          }
        }
      } else {
        const result = await client.audio.transcriptions.create(params, { signal });
        replace(output, result.text);
        showUsage(result.usage, started);
      }
      status.set("done", signal.aborted ? "Stopped." : "Done.");
    } catch (error) {
      status.set("error", signal.aborted ? "Stopped." : error instanceof Error ? error.message : String(error));
    } finally {
      controller = null;
      run.disabled = false;
      cancel.disabled = true;
    }
  }

  function showUsage(u: { input_tokens: number; output_tokens: number }, started: number) {
    replace(usage, `${u.input_tokens} tokens in (audio and instruction) · ${u.output_tokens} out · ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }

  const note =
    audioModels.length === 0
      ? h("p", { class: "error", role: "alert" }, "No model in this catalog takes audio. Gemma 4 E2B (gemma-4-E2B-it) does.")
      : h("p", { class: "hint" }, "The model listens and writes what it hears: no timestamps, so json and text only.");
  return h("section", { class: "transcribe", "aria-label": "Transcribe a file" }, h("h2", {}, "Transcribe a file"), note, form, preview, status.element, output, usage);
}
