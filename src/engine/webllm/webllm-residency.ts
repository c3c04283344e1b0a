/**
 * What the web-llm engine holds loaded: the chat model (its id, the key of
 * the options it was loaded with, its record, its reload options) and the
 * embedding model resident next to it. Every way of forgetting it is here,
 * named for when it happens; the prompt-cache slot is forgotten by the
 * caller where it was before (it is not part of every case).
 */
import type { ModelRecord } from "../../models/record.js";

export interface ResidentEmbedding {
  id: string;
  key: string;
  record: ModelRecord;
}

export class WebLlmResidency {
  /** The loaded chat model's id. */
  loaded: string | null = null;
  /** What it was loaded with (a second load with the same key is a no-op). */
  loadedKey = "";
  record: ModelRecord | null = null;
  /** The resident embedding model, next to the chat model. */
  embedding: ResidentEmbedding | null = null;
  /** The chat model's reload options, to reload it together with an embedding model. */
  chatOpts: Record<string, unknown> | undefined;

  /** The chat model now resident. */
  setChat(modelId: string, key: string, record: ModelRecord): void {
    this.loaded = modelId;
    this.loadedKey = key;
    this.record = record;
  }

  /** The chat model is being replaced, or goes to make room. */
  forgetChat(): void {
    this.loaded = null;
    this.loadedKey = "";
    this.record = null;
  }

  /** Every model is gone (a failed or aborted reload unloads them all; unload). */
  forgetAll(): void {
    this.forgetChat();
    this.embedding = null;
  }

  /**
   * The device was lost: nothing is loaded any more. The chat record is kept,
   * as it always was here (a following embedding load still lists it in
   * web-llm's app config; the ids decide what is loaded).
   */
  deviceLost(): void {
    this.loaded = null;
    this.loadedKey = "";
    this.embedding = null;
  }
}
