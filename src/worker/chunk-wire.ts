/**
 * The wire form of a batch of stream chunks on a request's port. Structured
 * clone pays per value, and a chunk object is about a dozen values of which
 * only the delta text changes from token to token: the benchmark showed the
 * clone of full chunks costing the worker stream more than the whole pipeline.
 * So a batch carries the envelope (id, created, model, usage key) once and
 * each plain text chunk as its bare string; every other chunk (role, reasoning,
 * tool calls, finish, logprobs, usage, x_webgpu) travels whole.
 * `unpackChunks(packChunks(chunks))` deep-equals `chunks`, key order included.
 */
import type { ChatCompletionChunk } from "../protocol/types.js";

interface Envelope {
  id: string;
  created: number;
  model: string;
  /** Whether chunks carry `usage: null` (stream_options.include_usage). */
  usage: boolean;
}

export interface PackedChunks {
  envelope: Envelope | null;
  /** A string: a content-only chunk in the envelope; an object: the chunk itself. */
  items: Array<string | ChatCompletionChunk>;
}

/** The text of a chunk that is exactly `envelope` + one content-only delta, else null. */
function plainText(chunk: ChatCompletionChunk, envelope: Envelope | null): string | null {
  const hasUsage = "usage" in chunk;
  if (chunk.choices.length !== 1 || chunk.system_fingerprint !== null || chunk.object !== "chat.completion.chunk") return null;
  if (Object.keys(chunk).length !== (hasUsage ? 7 : 6) || (hasUsage && chunk.usage !== null)) return null;
  const choice = chunk.choices[0];
  if (choice.index !== 0 || choice.finish_reason !== null || choice.logprobs !== null || Object.keys(choice).length !== 4) return null;
  const delta = choice.delta;
  if (typeof delta.content !== "string" || Object.keys(delta).length !== 1) return null;
  if (envelope && (envelope.id !== chunk.id || envelope.created !== chunk.created || envelope.model !== chunk.model || envelope.usage !== hasUsage)) return null;
  return delta.content;
}

export function packChunks(chunks: ChatCompletionChunk[]): PackedChunks {
  let envelope: Envelope | null = null;
  const items: Array<string | ChatCompletionChunk> = new Array(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i];
    const text = plainText(chunk, envelope);
    if (text === null) {
      items[i] = chunk;
      continue;
    }
    envelope ??= { id: chunk.id, created: chunk.created, model: chunk.model, usage: "usage" in chunk };
    items[i] = text;
  }
  return { envelope, items };
}

export function unpackChunks({ envelope, items }: PackedChunks): ChatCompletionChunk[] {
  const chunks: ChatCompletionChunk[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "string") {
      chunks[i] = item;
      continue;
    }
    const { id, created, model } = envelope as Envelope;
    const choices = [{ index: 0, delta: { content: item }, finish_reason: null, logprobs: null }];
    chunks[i] = (envelope as Envelope).usage
      ? { id, object: "chat.completion.chunk", created, model, system_fingerprint: null, choices, usage: null }
      : { id, object: "chat.completion.chunk", created, model, system_fingerprint: null, choices };
  }
  return chunks;
}
