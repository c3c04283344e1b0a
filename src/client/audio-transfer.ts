/**
 * Audio samples and bytes a JS caller passes (`pcm_f32` Float32Array, or
 * encoded bytes) go to the worker transferred, not copied: a recording of
 * tens of seconds is megabytes. The page's array is handed over (empty
 * afterwards); a detached one sent again is refused here, with the reason,
 * since it could not even be posted.
 */
import * as Comlink from "comlink";
import { invalidParam } from "../protocol/api-error.js";

type Part = { type?: unknown; input_audio?: { data?: unknown } };

/** `body` marked for transfer of its audio buffers (chat `messages` and Responses `input`), or as it is. */
export function withAudioTransfer<T>(body: T): T {
  const buffers = new Set<ArrayBuffer>();
  const scan = (list: unknown, name: string) => {
    if (!Array.isArray(list)) return;
    list.forEach((message: { content?: unknown }, i) => {
      if (!message || !Array.isArray(message.content)) return;
      (message.content as Part[]).forEach((part, j) => {
        const data = part?.type === "input_audio" ? part.input_audio?.data : undefined;
        if (!ArrayBuffer.isView(data)) return;
        const buffer = data.buffer;
        if (!(buffer instanceof ArrayBuffer)) return;
        if (buffer.byteLength === 0) {
          const param = `${name}[${i}].content[${j}].input_audio.data`;
          throw invalidParam(param, `\`${param}\` is empty: its buffer was transferred to the worker by an earlier request. Send a copy (data.slice()) to keep one.`, "invalid_audio");
        }
        buffers.add(buffer);
      });
    });
  };
  const b = body as { messages?: unknown; input?: unknown } | null;
  scan(b?.messages, "messages");
  scan(b?.input, "input");
  return buffers.size === 0 ? body : Comlink.transfer(body, [...buffers]);
}
