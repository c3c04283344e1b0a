/**
 * The chat: streams replies with `client.chat.completions.create({ stream: true })`,
 * splits `reasoning_content` from `content`, runs the tool loop (the model's
 * tool_calls run in the page and go back as `role: "tool"` messages), and
 * offers stop, regenerate and edit. The microphone button records a message
 * (MediaRecorder) and sends it as an `input_audio` part, with any typed text.
 */
import type { ChatMessage, Client, Stream, ToolCall, Usage, WebGpuStats } from "../../src/index.js";
import { AssistantView, type AssistantTurn, type ReplyMetrics } from "./assistant-view.js";
import { h, replace } from "./dom.js";
import type { ChatSettings } from "./settings.js";
import { runTool } from "./tools.js";
import { createAudioStatus } from "./audio-status.js";
import { MicRecorder, clock, toAudioPart } from "./recorder.js";

/** A model that keeps calling tools is stopped after this many rounds. */
const MAX_TOOL_ROUNDS = 5;

export interface Chat {
  element: HTMLElement;
  /** The conversation so far, without the system prompt (the drop-in view replays it). */
  messages(): ChatMessage[];
}

export function createChat(client: Client, settings: ChatSettings, currentModel: () => string): Chat {
  /** What the model has seen: user, assistant and tool messages, in order. */
  let messages: ChatMessage[] = [];
  /** Per assistant message: how its reply went. */
  const metrics = new WeakMap<ChatMessage, ReplyMetrics>();
  let running: Stream | null = null;
  /** Cancels a request still waiting for its stream (model loading, queued). */
  let pending: AbortController | null = null;
  let busy = false;
  /** The last request's failure, shown under the conversation until the next request. */
  let failure: string | null = null;

  const log = h("div", { class: "log", role: "log", "aria-live": "polite" });
  const input = h("textarea", { id: "prompt", rows: 2, placeholder: "Message the model — Enter to send, Shift+Enter for a new line, Esc to stop", "aria-label": "Message" });
  const send = h("button", { id: "send", class: "primary", type: "submit" }, "Send");
  const stop = h("button", { id: "stop", type: "button", disabled: true, onclick: () => stopReply() }, "Stop");
  const clear = h("button", { id: "new-chat", type: "button", class: "link", onclick: () => newChat() }, "New chat");
  const mic = h("button", { id: "mic", type: "button", title: "Record a spoken message (models that take audio)", "aria-pressed": "false", onclick: () => void toggleMic() }, "🎤 Speak");
  const micStatus = createAudioStatus("mic-status");
  const recorder = new MicRecorder();
  const form = h("form", { class: "composer" }, input, h("div", { class: "composer-buttons" }, send, mic, stop, clear));
  const element = h("section", { class: "chat", "aria-label": "Chat" }, log, form, micStatus.element, settings.element);

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || busy) return;
    input.value = "";
    messages.push({ role: "user", content: text });
    void respond();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && busy) stopReply();
  });

  /** A streaming reply stops with `stream.controller.abort()`; a request not yet streaming, with its signal. */
  function stopReply() {
    if (running) running.controller.abort();
    else pending?.abort();
  }

  /** First click: check the model takes audio, then record. Second click: stop, load the model (progress), send. */
  async function toggleMic() {
    if (recorder.recording) {
      mic.setAttribute("aria-pressed", "false");
      replace(mic, "🎤 Speak");
      micStatus.set("preparing", "Preparing the recording…");
      try {
        const recording = await recorder.stop();
        const part = await toAudioPart(recording);
        const model = currentModel();
        await client.models.load(model, { onProgress: (p) => micStatus.loading(p) });
        const text = input.value.trim();
        input.value = "";
        messages.push({ role: "user", content: text ? [part, { type: "text", text }] : [part] });
        micStatus.set("listening", `Sent ${clock(recording.seconds)} of audio: the worker decodes it and the model listens…`);
        await respond();
        micStatus.set("idle", "");
      } catch (error) {
        micStatus.set("error", error instanceof Error ? error.message : String(error));
      }
      return;
    }
    if (busy) return;
    try {
      const model = await client.models.retrieve(currentModel());
      if (!model.input_modalities?.includes("audio")) {
        micStatus.set("error", `${model.id} does not take audio. Pick a model whose inputs include audio (Gemma 4 E2B).`);
        return;
      }
      await recorder.start((seconds) => micStatus.set("recording", `● Recording ${clock(seconds)} — click Stop & send`));
      mic.setAttribute("aria-pressed", "true");
      replace(mic, "■ Stop & send");
      micStatus.set("recording", "● Recording 0:00 — click Stop & send");
    } catch (error) {
      micStatus.set("error", error instanceof Error ? `Microphone: ${error.message}` : String(error));
    }
  }

  function setBusy(value: boolean) {
    busy = value;
    mic.disabled = value;
    send.disabled = value;
    stop.disabled = !value;
    clear.disabled = value;
    element.classList.toggle("busy", value);
  }

  /** Answers the last user message, running tools until the model replies without calling one. */
  async function respond(): Promise<void> {
    setBusy(true);
    failure = null;
    render();
    try {
      for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
        const reply = await streamOneReply();
        messages.push(reply.message);
        metrics.set(reply.message, reply.metrics);
        if (reply.aborted || !reply.message.tool_calls?.length) break;
        for (const call of reply.message.tool_calls) {
          messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(runTool(call.function.name, call.function.arguments)) });
        }
        render();
      }
    } catch (error) {
      if (!pending?.signal.aborted) failure = error instanceof Error ? error.message : String(error);
    } finally {
      running = null;
      pending = null;
      setBusy(false);
      render();
      input.focus();
    }
  }

  async function streamOneReply(): Promise<{ message: ChatMessage; metrics: ReplyMetrics; aborted: boolean }> {
    const view = new AssistantView();
    const turn: AssistantTurn = { reasoning: "", content: "", toolCalls: [], results: new Map(), metrics: null, streaming: true };
    log.append(view.element);
    view.update(turn);

    const system = settings.systemPrompt();
    const sent = performance.now();
    running = null;
    pending = new AbortController();
    const stream = await client.chat.completions.create(
      {
        model: currentModel(),
        messages: system ? [{ role: "system", content: system }, ...messages] : messages,
        ...settings.requestFields(),
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal: pending.signal },
    );
    running = stream;

    let firstTokenAt: number | null = null;
    let usage: Usage | null = null;
    let stats: WebGpuStats | null = null;
    let finish = "aborted";
    let frame = 0;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      if (chunk.x_webgpu) stats = chunk.x_webgpu;
      const choice = chunk.choices[0];
      if (!choice) continue;
      const { delta } = choice;
      if (firstTokenAt === null && (delta.content || delta.reasoning_content || delta.tool_calls)) firstTokenAt = performance.now();
      turn.reasoning += delta.reasoning_content ?? "";
      turn.content += delta.content ?? "";
      for (const part of delta.tool_calls ?? []) mergeToolCallDelta(turn.toolCalls, part);
      if (choice.finish_reason) finish = choice.finish_reason;
      // Repaint at most once per frame however fast the deltas come.
      frame ||= requestAnimationFrame(() => {
        frame = 0;
        view.update(turn);
      });
    }
    cancelAnimationFrame(frame);
    const aborted = stream.controller.signal.aborted;
    const decodeSeconds = firstTokenAt === null ? 0 : (performance.now() - firstTokenAt) / 1000;
    const replyMetrics: ReplyMetrics = {
      ttftMs: firstTokenAt === null ? null : firstTokenAt - sent,
      // The engine's own decode speed when it reports one; otherwise what the page measured.
      tokensPerS: stats?.decode_tokens_per_s || (usage && decodeSeconds > 0 ? usage.completion_tokens / decodeSeconds : null),
      promptTokens: usage?.prompt_tokens ?? null,
      cachedTokens: usage?.prompt_tokens_details.cached_tokens ?? null,
      completionTokens: usage?.completion_tokens ?? null,
      finish: aborted ? "stopped" : finish,
    };
    view.element.remove();
    const message: ChatMessage = {
      role: "assistant",
      content: turn.content || null,
      ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
      ...(turn.toolCalls.length > 0 && !aborted ? { tool_calls: turn.toolCalls } : {}),
    };
    return { message, metrics: replyMetrics, aborted };
  }

  function newChat() {
    if (busy) return;
    messages = [];
    failure = null;
    render();
    input.focus();
  }

  /** Drops the last reply (and its tool rounds) and asks again. */
  function regenerate() {
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    if (lastUser < 0 || busy) return;
    messages = messages.slice(0, lastUser + 1);
    void respond();
  }

  /** Rewrites a user message and answers again from there; later turns are dropped. */
  function edit(index: number, bubble: HTMLElement) {
    if (busy) return;
    const original = String(messages[index].content ?? "");
    const editor = h("textarea", { class: "edit-box", rows: 3, "aria-label": "Edit message" }, original);
    const save = () => {
      const text = editor.value.trim();
      if (!text) return;
      messages = [...messages.slice(0, index), { role: "user", content: text }];
      void respond();
    };
    editor.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        event.stopPropagation();
        render();
      }
    });
    replace(bubble, editor, h("div", { class: "actions" }, h("button", { class: "primary", onclick: save }, "Save & resend"), h("button", { onclick: render }, "Cancel")));
    editor.focus();
  }

  /** Redraws the finished part of the conversation from `messages`. */
  function render() {
    const results = new Map(messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id ?? "", String(m.content ?? "")]));
    const lastAssistant = messages.map((m) => m.role).lastIndexOf("assistant");
    const views = messages.map((message, index) => {
      if (message.role === "user") {
        const bubble = h("article", { class: "msg user", "aria-label": "You" }, userContent(message.content));
        // A spoken message is sent again as recorded (regenerate), not edited.
        if (typeof message.content === "string") bubble.append(h("div", { class: "actions" }, h("button", { class: "link", disabled: busy, onclick: () => edit(index, bubble) }, "Edit")));
        return bubble;
      }
      if (message.role !== "assistant") return null; // tool results show on their call's card
      const view = new AssistantView();
      view.update({
        reasoning: message.reasoning_content ?? "",
        content: String(message.content ?? ""),
        toolCalls: message.tool_calls ?? [],
        results,
        metrics: metrics.get(message) ?? null,
        streaming: false,
      });
      if (index === lastAssistant && !busy) view.setActions(h("button", { class: "link regenerate", onclick: regenerate }, "Regenerate"));
      return view.element;
    });
    replace(log, ...(messages.length === 0 ? [emptyState()] : views), failure ? h("div", { class: "error", role: "alert" }, failure) : null);
    log.scrollTop = log.scrollHeight;
  }

  render();
  return { element, messages: () => messages };
}

/** A user message: its text, and a player for each recording it carries. */
function userContent(content: ChatMessage["content"]): HTMLElement {
  if (!Array.isArray(content)) return h("div", { class: "content" }, String(content ?? ""));
  return h(
    "div",
    { class: "content" },
    ...content.map((part) => {
      if (part.type === "text") return h("div", {}, part.text);
      if (part.type === "input_audio" && typeof part.input_audio.data === "string") {
        return h("audio", { class: "voice", controls: true, src: `data:audio/${part.input_audio.format};base64,${part.input_audio.data}` });
      }
      return h("div", { class: "muted" }, `[${part.type}]`);
    }),
  );
}

/** Streamed tool calls arrive in pieces: the first names the call, later ones append arguments. */
function mergeToolCallDelta(calls: ToolCall[], part: { index: number; id?: string; function?: { name?: string; arguments?: string } }) {
  const call = (calls[part.index] ??= { id: part.id ?? `call_${part.index}`, type: "function", function: { name: "", arguments: "" } });
  if (part.id) call.id = part.id;
  if (part.function?.name) call.function.name += part.function.name;
  if (part.function?.arguments) call.function.arguments += part.function.arguments;
}

function emptyState(): HTMLElement {
  return h(
    "div",
    { class: "empty" },
    h("p", {}, "Ask anything. Try: "),
    h("ul", {}, h("li", {}, "What is 17.5% of 2,340? (calculator)"), h("li", {}, "Convert 26.2 miles to km (units)"), h("li", {}, "What does shader-f16 do? (search)")),
  );
}
