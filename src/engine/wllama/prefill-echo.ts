/**
 * Continuing a final assistant message on the GGUF-template path. llama-server
 * (`prefill_assistant`, on by default in wllama 3.8.1) renders the
 * conversation before the final assistant message with the generation prompt,
 * appends that message's text, and generates after it. Its reply then starts
 * with that text again, and, where the template's generation prompt opens a
 * think block, with the block closed before it (`<think></think>`: a prefilled
 * reply is content, not reasoning). The engine yields only what llama.cpp
 * generated, as web-llm's continuation does: this holds the streamed text until
 * the echoed message has passed, and drops it with what came before it.
 *
 * Measured on the real engine: a ChatML template echoes `the water`, an
 * R1-style one `<think></think>the water`; what follows is the raw completion
 * of the prompt llama.cpp rendered.
 */
import type { TokenLogprob } from "../../protocol/types.js";

export interface StreamedText {
  text: string;
  logprobs?: TokenLogprob[];
}

export class PrefillEcho {
  private held = "";
  private heldLogprobs: TokenLogprob[] = [];
  private passed = false;

  constructor(private readonly prefill: string) {}

  /** What of this chunk is generated text: null while the echo has not passed yet (its logprobs are kept for the first generated text). */
  take(chunk: StreamedText): StreamedText | null {
    if (this.passed) return chunk;
    this.held += chunk.text;
    // A loop, not push(...): a chunk's logprobs are as many as the server sent (spread arguments overflow the stack past ~100 k).
    for (const entry of chunk.logprobs ?? []) this.heldLogprobs.push(entry);
    const at = this.held.indexOf(this.prefill);
    if (at < 0) return null;
    this.passed = true;
    return this.release(this.held.slice(at + this.prefill.length));
  }

  /** At the end: what is still held (a reply that never echoed the message is not lost). */
  flush(): StreamedText | null {
    if (this.passed || (!this.held && this.heldLogprobs.length === 0)) return null;
    this.passed = true;
    return this.release(this.held);
  }

  private release(text: string): StreamedText {
    const logprobs = this.heldLogprobs;
    this.held = "";
    this.heldLogprobs = [];
    return logprobs.length > 0 ? { text, logprobs } : { text };
  }
}
