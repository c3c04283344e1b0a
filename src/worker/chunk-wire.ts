/**
 * The wire form of a batch of stream chunks on a request's port. Structured
 * clone pays per value, and a chunk object is about a dozen values of which
 * only the delta text changes from token to token: the benchmark showed the
 * clone of full chunks costing the worker stream more than the whole pipeline.
 * So a batch carries the envelope (id, created, model, usage key) once, each
 * content-only chunk as its bare string and each reasoning-only chunk as a
 * one-string array; every other chunk (role, tool calls, finish, logprobs,
 * usage, x_webgpu) travels whole.
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
  /** A string: a content-only chunk in the envelope; [string]: a reasoning-only one; an object: the chunk itself. */
  items: Array<string | [string] | ChatCompletionChunk>;
}

/** A chunk that is exactly `envelope` + one content-only (string) or reasoning-only ([string]) delta, else null. */
function plainText(chunk: ChatCompletionChunk, envelope: Envelope | null): string | [string] | null {
  const hasUsage = "usage" in chunk;
  if (chunk.choices.length !== 1 || chunk.object !== "chat.completion.chunk") return null;
  if (Object.keys(chunk).length !== (hasUsage ? 6 : 5) || (hasUsage && chunk.usage !== null)) return null;
  const choice = chunk.choices[0];
  if (choice.index !== 0 || choice.finish_reason !== null || choice.logprobs !== null || Object.keys(choice).length !== 4) return null;
  const delta = choice.delta;
  if (Object.keys(delta).length !== 1) return null;
  if (typeof delta.content !== "string" && typeof delta.reasoning_content !== "string") return null;
  if (envelope && (envelope.id !== chunk.id || envelope.created !== chunk.created || envelope.model !== chunk.model || envelope.usage !== hasUsage)) return null;
  return typeof delta.content === "string" ? delta.content : [delta.reasoning_content as string];
}

export function packChunks(chunks: ChatCompletionChunk[]): PackedChunks {
  let envelope: Envelope | null = null;
  const items: PackedChunks["items"] = new Array(chunks.length);
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
    const reasoning = Array.isArray(item);
    if (typeof item !== "string" && !reasoning) {
      chunks[i] = item;
      continue;
    }
    const { id, created, model } = envelope as Envelope;
    const delta = reasoning ? { reasoning_content: item[0] } : { content: item };
    const choices = [{ index: 0, delta, finish_reason: null, logprobs: null }];
    chunks[i] = (envelope as Envelope).usage
      ? { id, object: "chat.completion.chunk", created, model, choices, usage: null }
      : { id, object: "chat.completion.chunk", created, model, choices };
  }
  return chunks;
}
