/**
 * The raw text of replies this host produced, keyed by what an app sends back
 * for them. Apps return `content` without `<think>` or call markup; restoring
 * the raw text makes the history byte-identical to what web-llm holds, so it
 * reuses its KV cache instead of prefilling the whole conversation again.
 */
import type { NormalizedMessage } from "../protocol/validate.js";

const LIMIT = 256;

export class ConversationMemory {
  private readonly entries = new Map<string, string>();

  remember(key: string, rawText: string): void {
    this.entries.delete(key);
    this.entries.set(key, rawText);
    if (this.entries.size > LIMIT) this.entries.delete(this.entries.keys().next().value as string);
  }

  recall(key: string): string | undefined {
    return this.entries.get(key);
  }

  /** Key of an assistant message: its visible content and call ids, and the text of the message it answered. */
  static keyOf(message: Pick<NormalizedMessage, "content" | "toolCalls">, answered: NormalizedMessage | undefined, cacheKey: string | undefined): string {
    const text = (m: Pick<NormalizedMessage, "content">) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));
    return JSON.stringify([cacheKey ?? "", answered ? text(answered) : "", text(message).trim(), message.toolCalls.map((c) => c.id)]);
  }
}
