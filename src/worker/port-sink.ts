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
import { packEvents } from "./event-wire.js";
import type { ResponseStreamEvent } from "../protocol/responses/types.js";
import type { TranscriptionStreamEvent } from "../protocol/transcription-types.js";
import type { CompletionChunk } from "../protocol/completions-types.js";
import type { StreamWire } from "../host/endpoints.js";

/** Runs `fn` in a later task, without setTimeout's 4 ms clamp. */
function nextTask(fn: () => void): void {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    fn();
  };
  channel.port2.postMessage(null);
}

/** Batches what is written in one task into one message; `pack` gives that message's wire form. */
class BatchingPortSink<T> implements ChunkSink<T> {
  private pending: T[] = [];
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly port: MessagePort,
    private readonly pack: (items: T[]) => PortMessage,
  ) {}

  write(chunks: T[]): void {
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
    this.post(this.pack(chunks));
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

/** Chat chunks (compact wire form: worker/chunk-wire.ts). */
export class PortSink extends BatchingPortSink<ChatCompletionChunk> {
  constructor(port: MessagePort) {
    super(port, (chunks) => ({ type: "chunks", packed: packChunks(chunks) }));
  }
}

/** Responses stream events (compact wire form: worker/event-wire.ts). */
export class EventPortSink extends BatchingPortSink<ResponseStreamEvent> {
  constructor(port: MessagePort) {
    super(port, (events) => ({ type: "events", packed: packEvents(events) }));
  }
}

/** Raw-completion chunks (one choice's text each), batched per task and sent as they are. */
export class CompletionPortSink extends BatchingPortSink<CompletionChunk> {
  constructor(port: MessagePort) {
    super(port, (chunks) => ({ type: "completion", chunks }));
  }
}

/** Transcription stream events (few and small: a delta per token and one `done`, sent as they are). */
export class TranscriptPortSink extends BatchingPortSink<TranscriptionStreamEvent> {
  constructor(port: MessagePort) {
    super(port, (events) => ({ type: "transcript", events }));
  }
}

/** The sink that writes a stream's wire form (host/endpoints.ts `wire`) to its port. */
export function portSinkFor(wire: StreamWire, port: MessagePort): ChunkSink<unknown> {
  switch (wire) {
    case "chunks":
      return new PortSink(port) as ChunkSink<unknown>;
    case "events":
      return new EventPortSink(port) as ChunkSink<unknown>;
    case "completion":
      return new CompletionPortSink(port) as ChunkSink<unknown>;
    case "transcript":
      return new TranscriptPortSink(port) as ChunkSink<unknown>;
  }
}
