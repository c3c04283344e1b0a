/**
 * Turns parser events of one choice into OpenAI chunk deltas and, at the end,
 * the assembled assistant message. Streaming and non-streaming responses are
 * built from the same events, so the concatenated deltas always equal the
 * non-streamed message.
 */
import type { ParseEvent } from "./parse-event.js";
import type { AssistantMessage, ChunkDelta, CustomToolCall, CustomToolCallDelta, FinishReason, TokenLogprob, ToolCall, ToolCallDelta } from "./types.js";

export class ChoiceBuilder {
  private content = "";
  private reasoning = "";
  /** The delta that carried reasoning last: its text is all the openai SDK's stream helpers keep of it. */
  private lastReasoningDelta: ChunkDelta | null = null;
  private sawReasoning = false;
  private readonly calls: Array<ToolCall | CustomToolCall> = [];
  private readonly logprobs: TokenLogprob[] = [];
  private roleSent = false;

  constructor(
    readonly index: number,
    private readonly newToolCallId: () => string,
  ) {}

  get hasToolCalls(): boolean {
    return this.calls.length > 0;
  }

  addLogprobs(entries: TokenLogprob[] | undefined): void {
    if (entries) for (const entry of entries) this.logprobs.push(entry);
  }

  /**
   * Deltas for these events, consecutive events of one kind merged. The first
   * delta of the choice carries the role.
   */
  deltas(events: ParseEvent[]): ChunkDelta[] {
    const out: ChunkDelta[] = [];
    let current: ChunkDelta | null = null;
    let currentKind: string | null = null;
    for (const event of events) {
      const kind = event.type === "tool_call" || event.type === "tool_args" ? "tool" : event.type;
      if (current === null || kind !== currentKind) {
        current = this.roleSent ? {} : { role: "assistant" };
        this.roleSent = true;
        currentKind = kind;
        out.push(current);
      }
      this.apply(event, current);
    }
    return out;
  }

  /** A delta that only opens the choice (role, empty content), for the first chunk of a stream. */
  openingDelta(): ChunkDelta | null {
    if (this.roleSent) return null;
    this.roleSent = true;
    return { role: "assistant", content: "" };
  }

  private apply(event: ParseEvent, delta: ChunkDelta): void {
    switch (event.type) {
      case "content":
        this.content += event.text;
        delta.content = (delta.content ?? "") + event.text;
        break;
      case "reasoning":
        this.sawReasoning = true;
        this.reasoning += event.text;
        delta.reasoning_content = (delta.reasoning_content ?? "") + event.text;
        this.lastReasoningDelta = delta;
        break;
      case "tool_call": {
        const id = this.newToolCallId();
        if (event.custom) {
          this.calls[event.index] = { id, type: "custom", custom: { name: event.name, input: "" } };
          const opening: CustomToolCallDelta & { type: "custom" } = { index: event.index, id, type: "custom", custom: { name: event.name, input: "" } };
          (delta.tool_calls ??= []).push(opening);
          break;
        }
        this.calls[event.index] = { id, type: "function", function: { name: event.name, arguments: "" } };
        (delta.tool_calls ??= []).push({ index: event.index, id, type: "function", function: { name: event.name, arguments: "" } });
        break;
      }
      case "tool_args": {
        const call = this.calls[event.index];
        const calls = (delta.tool_calls ??= []);
        const last = calls[calls.length - 1];
        if (call.type === "custom") {
          call.custom.input += event.text;
          if (last && last.index === event.index && "custom" in last) last.custom.input += event.text;
          else calls.push({ index: event.index, custom: { input: event.text } });
          break;
        }
        call.function.arguments += event.text;
        if (last && last.index === event.index && !("custom" in last)) (last as ToolCallDelta).function.arguments += event.text;
        else calls.push({ index: event.index, function: { arguments: event.text } });
        break;
      }
    }
  }

  /** `tool_calls` when the reply ends with complete calls; a call the output cut keeps the engine's reason (`length`/`stop`), as the hosted API reports it. */
  finishReason(engineFinish: "stop" | "length" | "abort", cutCall = false): FinishReason {
    if (this.calls.length > 0 && engineFinish !== "length" && !cutCall) return "tool_calls";
    return engineFinish === "length" ? "length" : "stop";
  }

  message(): AssistantMessage {
    const message: AssistantMessage = {
      role: "assistant",
      content: this.calls.length > 0 && this.content.trim() === "" ? null : this.content,
      refusal: null,
    };
    if (this.sawReasoning && this.reasoning !== "") message.reasoning_content = this.reasoning;
    if (this.calls.length > 0) message.tool_calls = this.calls.filter(Boolean);
    return message;
  }

  /** The `reasoning_content` of the last delta that had any ("" when none). */
  lastReasoningFragment(): string {
    return this.lastReasoningDelta?.reasoning_content ?? "";
  }

  collectedLogprobs(): TokenLogprob[] {
    return this.logprobs;
  }
}
