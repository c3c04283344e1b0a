/**
 * The raw text of replies this host produced, keyed by what an app sends back
 * for them. Apps return `content` without `<think>` or call markup; restoring
 * the raw text makes the history byte-identical to what web-llm holds, so it
 * reuses its KV cache instead of prefilling the whole conversation again.
 *
 * What the model sees must be what the app sent: the raw text is restored
 * only when it renders to exactly the message sent back — same model (another
 * model's markup would leak into its prompt), same content, every call's id,
 * name and arguments, and the reasoning when the app sends it. An app that
 * edits a call (its arguments, its name) or the reasoning gets its own
 * message rendered by the family instead.
 *
 * The openai SDK's stream helpers (`chat.completions.stream()`, `runTools`)
 * merge unknown delta fields with Object.assign, so the message they return
 * carries only the last `reasoning_content` fragment of a streamed reply. Sent
 * back, that fragment is the helper's artifact, not an edit: it restores the
 * raw text like the whole reasoning does.
 *
 * Per client: a reply's raw text (its reasoning, its markup) is restored only
 * for the client (a shared worker's tab) that received it. Another tab that
 * sends the same visible conversation gets its own message rendered, so
 * nothing reaches its prompt that it did not send.
 */
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { ContentPart, ToolCall } from "../protocol/types.js";

const LIMIT = 256;

/** The message as the host returned it, beside the raw text it came from. */
export interface RememberedReply {
  raw: string;
  calls: { id: string; name: string; arguments: string }[];
  reasoning: string;
  /** A streamed reply: the `reasoning_content` of its last reasoning delta. */
  lastReasoningDelta?: string;
}

type SentBack = Pick<NormalizedMessage, "content" | "toolCalls"> & { reasoning?: string };

export class ConversationMemory {
  private readonly entries = new Map<string, RememberedReply>();

  remember(key: string, reply: RememberedReply): void {
    this.entries.delete(key);
    this.entries.set(key, reply);
    if (this.entries.size > LIMIT) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The raw text for `message` (sent back under `key`), or undefined when it would not render to that message. */
  recall(key: string, message: SentBack): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.calls.length !== message.toolCalls.length) return undefined;
    const callsMatch = entry.calls.every((call, i) => sameCall(call, message.toolCalls[i]));
    if (!callsMatch) return undefined;
    if (message.reasoning !== undefined && message.reasoning.trim() !== entry.reasoning.trim() && message.reasoning !== entry.lastReasoningDelta) return undefined;
    return entry.raw;
  }

  /**
   * Key of an assistant message: the model that wrote it, its visible content
   * and call ids, and the text of the message it answered. (Names, arguments
   * and reasoning are checked on recall.) `client` scopes it to one tab.
   */
  static keyOf(model: string, message: Pick<NormalizedMessage, "content" | "toolCalls">, answered: NormalizedMessage | undefined, cacheKey: string | undefined, client?: string): string {
    const text = (m: Pick<NormalizedMessage, "content">) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content.map(partKey)));
    return JSON.stringify([model, client ?? "", cacheKey ?? "", answered ? text(answered) : "", text(message).trim(), message.toolCalls.map((c) => c.id)]);
  }
}

function sameCall(remembered: RememberedReply["calls"][number], sent: ToolCall): boolean {
  return remembered.id === sent.id && remembered.name === sent.function.name && sameArguments(remembered.arguments, sent.function.arguments);
}

/** Same JSON value written the same way up to whitespace (an app may re-serialize what it got); else the same string. */
function sameArguments(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

/** A part as a key: audio data (base64 of megabytes, or a Float32Array, which JSON would spell out sample by sample) by its length and a hash. */
function partKey(part: ContentPart): unknown {
  if (part.type !== "input_audio") return part;
  const data = part.input_audio.data;
  const bytes = typeof data === "string" ? null : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  let hash = 0x811c9dc5;
  const length = bytes ? bytes.length : (data as string).length;
  for (let i = 0; i < length; i++) hash = Math.imul(hash ^ (bytes ? bytes[i] : (data as string).charCodeAt(i)), 0x01000193);
  return { audio: part.input_audio.format, length, hash: hash >>> 0 };
}
