/**
 * One status line for audio work, shared by the chat's microphone and the
 * Transcribe view: what is happening now (recording, preparing the audio,
 * loading the model with a progress bar, decoding and listening, done or
 * failed), in words, for screen readers too.
 */
import type { LoadProgress } from "../../src/index.js";
import { h, replace } from "./dom.js";

export type AudioState = "idle" | "recording" | "preparing" | "loading" | "listening" | "done" | "error";

export interface AudioStatus {
  element: HTMLElement;
  set(state: AudioState, text: string): void;
  /** The model load's progress (client.models.load's onProgress). */
  loading(progress: LoadProgress): void;
}

export function createAudioStatus(id: string): AudioStatus {
  const text = h("span", { class: "audio-status-text" });
  const bar = h("progress", { max: 1, value: 0, hidden: true, "aria-label": "Model load" });
  const element = h("div", { class: "audio-status", id, role: "status", "aria-live": "polite", dataset: { state: "idle" } }, text, bar);
  const set = (state: AudioState, message: string) => {
    element.dataset.state = state;
    bar.hidden = state !== "loading";
    replace(text, message);
  };
  return {
    element,
    set,
    loading(progress) {
      set("loading", `Loading the model… ${Math.round(progress.fraction * 100)}% (${progress.phase})`);
      bar.value = progress.fraction;
    },
  };
}
