/**
 * The scripted engine's prompt, as token ids: a chat template in miniature, so
 * its prompt cache compares tokens the way web-llm's does. Each message is
 * `<start> <role> content… <end>`, and the prompt ends with the generation
 * header `<start> <assistant>`; the reply's tokens follow it, so a conversation
 * sent back renders the reply exactly where the cache holds it. A continued
 * final assistant message ends the prompt open (no `<end>`, no header). An
 * image is one `<image>` token, and the reusable prefix ends there (its
 * pixels are not in the id).
 */
import type { EngineMessage } from "./types.js";

const TOKEN = /\s*[\p{L}\p{N}]+|\s*[^\s\p{L}\p{N}]|\s+/gu;

/** Deterministic tokenization: words with their leading space, and single punctuation marks. */
export function scriptedTokens(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

// Control "tokens" cannot collide with text tokens: text never contains NUL.
const START = "\0start";
const END = "\0end";
const IMAGE = "\0image";
const role = (name: string) => `\0${name}`;

/** Token strings → ids, stable for the life of one engine. */
export class Vocabulary {
  private readonly ids = new Map<string, number>();

  id(token: string): number {
    let id = this.ids.get(token);
    if (id === undefined) this.ids.set(token, (id = this.ids.size));
    return id;
  }

  encode(tokens: string[]): number[] {
    return tokens.map((t) => this.id(t));
  }
}

export interface ScriptedPrompt {
  ids: number[];
  /** Index of the first image token, when the prompt has one. */
  imageAt?: number;
}

export function renderPrompt(messages: EngineMessage[], continueFinalMessage: boolean, vocab: Vocabulary): ScriptedPrompt {
  const out: string[] = [];
  let imageAt: number | undefined;
  messages.forEach((message, i) => {
    out.push(START, role(message.role));
    const parts = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content;
    for (const part of parts) {
      // Token by token: spreading a long text's tokens into push() overflows the call stack.
      if (part.type === "text") for (const token of scriptedTokens(part.text)) out.push(token);
      else {
        imageAt ??= out.length;
        out.push(IMAGE);
      }
    }
    const open = continueFinalMessage && i === messages.length - 1;
    if (!open) out.push(END);
  });
  if (!continueFinalMessage) out.push(START, role("assistant"));
  return { ids: vocab.encode(out), ...(imageAt !== undefined ? { imageAt } : {}) };
}

/** A raw prompt (`/completions`): its text tokens alone, no roles, no generation header; the reusable prefix is all of it. */
export function renderRawPrompt(text: string, vocab: Vocabulary): ScriptedPrompt {
  return { ids: vocab.encode(scriptedTokens(text)) };
}
