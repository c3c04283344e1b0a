/**
 * Cached-token bookkeeping for web-llm's implicit multi-turn KV reuse.
 *
 * web-llm keeps the KV cache of the previous turn and prefills only the new
 * message when (reference/webllm-0.2.86.md §2.1): the previous reply finished
 * with `stop` (≥ 0.2.84 resets after `abort`/`length`; the adapter resets
 * older versions itself), the new request's messages minus the last equal the
 * previous messages plus the reply byte for byte, at least one non-system
 * message precedes the last, and the last is a user or tool message. Its
 * `usage.prompt_tokens` then counts only the new round, so the adapter adds
 * the reused tokens back and reports them as cached. Pure: tested in Node.
 */
import type { EngineMessage, EngineRequest } from "../types.js";

interface Turn {
  /** The conversation as the KV cache holds it: the request's messages plus the reply. */
  history: EngineMessage[];
  /** Tokens in the KV cache after the turn. */
  kvTokens: number;
}

const sameContent = (a: EngineMessage["content"], b: EngineMessage["content"]) =>
  typeof a === "string" || typeof b === "string" ? a === b : JSON.stringify(a) === JSON.stringify(b);

const sameMessages = (a: EngineMessage[], b: EngineMessage[]) =>
  a.length === b.length && a.every((m, i) => m.role === b[i].role && sameContent(m.content, b[i].content));

export class KvTracker {
  private last: Turn | null = null;

  /** Tokens web-llm will reuse for `request` (0 when it will prefill everything). */
  reusedTokens(request: Pick<EngineRequest, "messages" | "continueFinalMessage">): number {
    const turn = this.last;
    if (!turn || request.continueFinalMessage) return 0;
    const messages = request.messages;
    const last = messages[messages.length - 1];
    if (!last || (last.role !== "user" && last.role !== "tool")) return 0;
    const history = messages.slice(0, -1);
    if (!history.some((m) => m.role !== "system")) return 0;
    return sameMessages(history, turn.history) ? turn.kvTokens : 0;
  }

  /**
   * Records a finished chat turn. `reply` is web-llm's stored output message
   * (`getMessage()`), `kvTokens` what its pipeline reports as filled, or
   * undefined to estimate it: every prompt token plus every generated one but
   * the last, which web-llm samples and never feeds back.
   */
  record(request: Pick<EngineRequest, "messages">, reply: string, finish: "stop" | "length" | "abort", promptTokens: number, completionTokens: number, kvTokens?: number): void {
    if (finish !== "stop") {
      this.last = null;
      return;
    }
    this.last = {
      history: [...request.messages, { role: "assistant", content: reply }],
      kvTokens: kvTokens ?? promptTokens + Math.max(completionTokens - 1, 0),
    };
  }

  /** The KV cache no longer holds a chat (reload, text completion, error, reset). */
  forget(): void {
    this.last = null;
  }
}
