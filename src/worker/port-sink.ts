/**
 * A ChunkSink over a MessagePort. Chunks written in the same task travel in
 * one message: a generation that yields many tokens between two macrotasks
 * costs one postMessage, not one per token.
 */
import type { ChunkSink } from "../host/engine-host.js";
import type { ApiError } from "../protocol/api-error.js";
import type { ChatCompletionChunk } from "../protocol/types.js";
import type { PortMessage } from "./protocol.js";
import { serializeError } from "./transfer.js";
import { packChunks } from "./chunk-wire.js";

/** Runs `fn` in a later task, without setTimeout's 4 ms clamp. */
function nextTask(fn: () => void): void {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    fn();
  };
  channel.port2.postMessage(null);
}

export class PortSink implements ChunkSink {
  private pending: ChatCompletionChunk[] = [];
  private scheduled = false;
  private closed = false;

  constructor(private readonly port: MessagePort) {}

  write(chunks: ChatCompletionChunk[]): void {
    if (this.closed) return;
    for (const chunk of chunks) this.pending.push(chunk);
    if (!this.scheduled) {
      this.scheduled = true;
      nextTask(() => this.flush());
    }
  }

  end(): void {
    this.finish({ type: "end" });
  }

  fail(error: ApiError): void {
    this.finish({ type: "error", error: serializeError(error) });
  }

  private flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const chunks = this.pending;
    this.pending = [];
    this.post({ type: "chunks", packed: packChunks(chunks) });
  }

  private finish(message: PortMessage): void {
    if (this.closed) return;
    this.flush();
    this.post(message);
    this.closed = true;
    this.port.close();
  }

  private post(message: PortMessage): void {
    this.port.postMessage(message);
  }
}
