/**
 * Turns the family parser's events of one generation into Responses output
 * items and, when streaming, the spec's semantic events with increasing
 * `sequence_number`. The non-streamed Response and the stream are built from
 * the same events, so the deltas always concatenate to the final items.
 *
 * Items follow the parser: reasoning text opens a `reasoning` item, content a
 * `message` item (one `output_text` part), each call a `function_call` item;
 * a change of kind closes the open item. When `reasoning.summary` is asked
 * for, the reasoning text is mirrored as one `summary_text` part (a local
 * model has no separate summarizer; clients such as the AI SDK read
 * reasoning only from the summary).
 */
import type { ParseEvent } from "../parse-event.js";
import type { TokenLogprob, ToolCall } from "../types.js";
import { randomId } from "../ids.js";
import { customCallArguments } from "../custom-tools.js";
import { argumentsDelta, argumentsDone, callEnded, callStarted, newMcpId, type McpApprovalRequestItem, type McpCallItem } from "./mcp-items.js";
import type {
  CustomToolCallItem,
  FunctionCallItem,
  ItemStatus,
  OutputItem,
  OutputMessageItem,
  ReasoningItem,
  ResponseObject,
  ResponseStreamEvent,
  ResponseUsage,
} from "./types.js";

export interface OutputBuilderOptions {
  /** Receives each step's events; null: not streaming (no events are built). */
  emit: ((events: ResponseStreamEvent[]) => void) | null;
  summary: boolean;
  logprobs: boolean;
  newCallId: () => string;
  /** Ids for the items, in the order they open, before new ones are made (a resumed response keeps its items' ids). */
  itemIds?: string[];
  /**
   * Whether a call of `name` is a hosted tool's (an `mcp` server's tool): it
   * then opens an `mcp_call` item, or an `mcp_approval_request` when the call
   * waits for the app; null: a function call (host/responses-mcp.ts).
   */
  hostedCall?: (name: string) => { approval: boolean; server_label: string } | null;
}

/** A hosted call the model made in this generation: its item and output index (host/responses-mcp.ts runs it). */
export interface HostedCall {
  item: McpCallItem | McpApprovalRequestItem;
  index: number;
}

type Open =
  | { kind: "reasoning"; item: ReasoningItem; index: number; text: string }
  | { kind: "message"; item: OutputMessageItem; index: number; text: string; logprobs: TokenLogprob[] }
  | { kind: "call"; item: FunctionCallItem; index: number }
  | { kind: "custom"; item: CustomToolCallItem; index: number }
  | { kind: "hosted"; item: McpCallItem | McpApprovalRequestItem; index: number };

const itemId = (prefix: string) => `${prefix}_${randomId(24)}`;

export class ResponseOutputBuilder {
  private sequence = 0;
  private readonly items: OutputItem[] = [];
  private open: Open | null = null;
  /** Function-call items (and their output index) by the parser's call index. */
  private readonly calls = new Map<number, { item: FunctionCallItem | CustomToolCallItem | McpCallItem | McpApprovalRequestItem; index: number }>();
  /** Hosted calls opened since the last `takeHostedCalls`. */
  private hosted: HostedCall[] = [];
  private pending: ResponseStreamEvent[] = [];
  private readonly streaming: boolean;

  constructor(private readonly options: OutputBuilderOptions) {
    this.streaming = options.emit !== null;
  }

  get output(): OutputItem[] {
    return this.items;
  }

  /** A copy of the output so far, the open item with its text so far (what retrieve shows of a running response). */
  outputSoFar(): OutputItem[] {
    const items = structuredCloneLite(this.items);
    const open = this.open;
    if (open?.kind === "message") (items[open.index] as OutputMessageItem).content = [this.textPart(open.text, [...open.logprobs])];
    if (open?.kind === "reasoning") (items[open.index] as ReasoningItem).content = [{ type: "reasoning_text", text: open.text }];
    return items;
  }

  /** Events that open a stream: `response.created`, `response.in_progress`. */
  opening(snapshot: ResponseObject): void {
    this.event({ type: "response.created", sequence_number: 0, response: snapshot });
    this.event({ type: "response.in_progress", sequence_number: 0, response: structuredCloneLite(snapshot) });
    this.flush();
  }

  /** One step's parser events (and that step's logprobs, attributed to output text). */
  write(events: ParseEvent[], logprobs: TokenLogprob[] | undefined): void {
    let logprobsPending = this.options.logprobs ? logprobs : undefined;
    for (const event of events) {
      switch (event.type) {
        case "reasoning": {
          const open = this.open?.kind === "reasoning" ? this.open : this.openReasoning();
          open.text += event.text;
          if (this.streaming) {
            this.event({ type: "response.reasoning_text.delta", sequence_number: 0, item_id: open.item.id, output_index: open.index, content_index: 0, delta: event.text });
            if (this.options.summary) this.event({ type: "response.reasoning_summary_text.delta", sequence_number: 0, item_id: open.item.id, output_index: open.index, summary_index: 0, delta: event.text });
          }
          break;
        }
        case "content": {
          const open = this.open?.kind === "message" ? this.open : this.openMessage();
          open.text += event.text;
          const lp = logprobsPending;
          logprobsPending = undefined;
          if (lp) for (const entry of lp) open.logprobs.push(entry);
          if (this.streaming) {
            // `logprobs` is required by the spec (ResponseOutputTextDeltaStreamingEvent): empty when not asked for.
            this.event({ type: "response.output_text.delta", sequence_number: 0, item_id: open.item.id, output_index: open.index, content_index: 0, delta: event.text, logprobs: lp ?? [] });
          }
          break;
        }
        case "tool_call":
          this.openCall(event.index, event.name, event.custom === true);
          break;
        case "tool_args": {
          const call = this.calls.get(event.index);
          if (!call) break;
          if (call.item.type === "mcp_call" || call.item.type === "mcp_approval_request") {
            call.item.arguments += event.text;
            if (this.streaming && call.item.type === "mcp_call") this.event({ ...argumentsDelta(call.item, call.index, event.text) });
            break;
          }
          if (call.item.type === "custom_tool_call") {
            call.item.input += event.text;
            if (this.streaming) this.event({ type: "response.custom_tool_call_input.delta", sequence_number: 0, item_id: call.item.id, output_index: call.index, delta: event.text });
            break;
          }
          call.item.arguments += event.text;
          if (this.streaming) {
            this.event({ type: "response.function_call_arguments.delta", sequence_number: 0, item_id: call.item.id, output_index: call.index, delta: event.text });
          }
          break;
        }
      }
    }
    this.flush();
  }

  /** Closes the open item; `length` marks it incomplete. */
  finish(finish: "stop" | "length" | "abort"): void {
    this.close(finish === "length" ? "incomplete" : "completed");
    this.flush();
  }

  /** The terminal event (`response.completed`, `.incomplete` or `.failed`) with the final Response. */
  terminal(response: ResponseObject): void {
    const type = response.status === "failed" ? "response.failed" : response.status === "incomplete" ? "response.incomplete" : "response.completed";
    this.event({ type, sequence_number: 0, response });
    this.flush();
  }

  /** The reply as an app sends it back (message texts joined, calls with their call ids): the KV-reuse memory's key. */
  reply(): { content: string; toolCalls: ToolCall[]; reasoning: string } {
    let content = "";
    let reasoning = "";
    const toolCalls: ToolCall[] = [];
    for (const item of this.items) {
      if (item.type === "message") content += item.content[0]?.text ?? "";
      else if (item.type === "reasoning") reasoning += item.content?.map((part) => part.text).join("") ?? "";
      else if (item.type === "function_call") toolCalls.push({ id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } });
      // As validation normalizes a custom call sent back: the function call it was rendered as.
      else if (item.type === "custom_tool_call") toolCalls.push({ id: item.call_id, type: "function", function: { name: item.name, arguments: customCallArguments(item.input) } });
    }
    return { content, toolCalls, reasoning };
  }

  // ── items ────────────────────────────────────────────────────────────────

  private openReasoning(): Extract<Open, { kind: "reasoning" }> {
    this.close("completed");
    const item: ReasoningItem = { type: "reasoning", id: this.nextId("rs"), summary: [], content: [] };
    const open = { kind: "reasoning" as const, item, index: this.items.length, text: "" };
    this.items.push(item);
    this.open = open;
    if (this.streaming) {
      this.event({ type: "response.output_item.added", sequence_number: 0, output_index: open.index, item: { type: "reasoning", id: item.id, summary: [], content: [] } });
      this.event({ type: "response.content_part.added", sequence_number: 0, item_id: item.id, output_index: open.index, content_index: 0, part: { type: "reasoning_text", text: "" } });
      if (this.options.summary) this.event({ type: "response.reasoning_summary_part.added", sequence_number: 0, item_id: item.id, output_index: open.index, summary_index: 0, part: { type: "summary_text", text: "" } });
    }
    return open;
  }

  private openMessage(): Extract<Open, { kind: "message" }> {
    this.close("completed");
    const item: OutputMessageItem = { type: "message", id: this.nextId("msg"), status: "in_progress", role: "assistant", content: [] };
    const open = { kind: "message" as const, item, index: this.items.length, text: "", logprobs: [] as TokenLogprob[] };
    this.items.push(item);
    this.open = open;
    if (this.streaming) {
      this.event({ type: "response.output_item.added", sequence_number: 0, output_index: open.index, item: { type: "message", id: item.id, status: "in_progress", role: "assistant", content: [] } });
      this.event({ type: "response.content_part.added", sequence_number: 0, item_id: item.id, output_index: open.index, content_index: 0, part: this.textPart("", []) });
    }
    return open;
  }

  /** The hosted calls the model made since the last take (each settled by `settleHosted`, or an approval request, done already). */
  takeHostedCalls(): HostedCall[] {
    const taken = this.hosted;
    this.hosted = [];
    return taken;
  }

  /**
   * A hosted tool's item that no model output opens (an `mcp_list_tools`
   * listing, a call the app approved): output_item.added with `added` (the
   * item as it starts), the events `inner` gives for its output index, and
   * output_item.done with the item as it ends. `settled: false` leaves it
   * open for `settleHosted`.
   */
  addHosted(item: OutputItem, added: OutputItem, inner: (index: number) => ResponseStreamEvent[], settled = true): number {
    this.close("completed");
    const index = this.items.length;
    this.items.push(item);
    if (this.streaming) {
      this.event({ type: "response.output_item.added", sequence_number: 0, output_index: index, item: structuredCloneLite(added) });
      for (const event of inner(index)) this.event(event);
      if (settled) this.event({ type: "response.output_item.done", sequence_number: 0, output_index: index, item: structuredCloneLite(item) });
    }
    this.flush();
    return index;
  }

  /** A hosted call has run: `response.mcp_call.completed` (or `.failed`) and output_item.done with its output or error. */
  settleHosted(item: McpCallItem, index: number): void {
    if (this.streaming) {
      this.event({ ...callEnded(item, index) });
      this.event({ type: "response.output_item.done", sequence_number: 0, output_index: index, item: structuredCloneLite(item) });
    }
    this.flush();
  }

  private openCall(parserIndex: number, name: string, custom: boolean): void {
    this.close("completed");
    const index = this.items.length;
    const hosted = custom ? null : (this.options.hostedCall?.(name) ?? null);
    if (hosted) {
      const item: McpCallItem | McpApprovalRequestItem = hosted.approval
        ? { type: "mcp_approval_request", id: this.options.itemIds?.shift() ?? newMcpId("mcpr"), server_label: hosted.server_label, name, arguments: "" }
        : { type: "mcp_call", id: this.options.itemIds?.shift() ?? newMcpId("mcp"), server_label: hosted.server_label, name, arguments: "", output: null, error: null, status: "in_progress", approval_request_id: null };
      const open = { kind: "hosted" as const, item, index };
      this.items.push(item);
      this.calls.set(parserIndex, open);
      this.hosted.push({ item, index });
      this.open = open;
      if (this.streaming) {
        this.event({ type: "response.output_item.added", sequence_number: 0, output_index: index, item: { ...item } });
        if (item.type === "mcp_call") this.event({ ...callStarted(item, index) });
      }
      return;
    }
    const open: Extract<Open, { kind: "call" | "custom" }> = custom
      ? { kind: "custom", item: { type: "custom_tool_call", id: this.nextId("ctc"), call_id: this.options.newCallId(), name, input: "" }, index }
      : { kind: "call", item: { type: "function_call", id: this.nextId("fc"), call_id: this.options.newCallId(), name, arguments: "", status: "in_progress" }, index };
    this.items.push(open.item);
    this.calls.set(parserIndex, open);
    this.open = open;
    if (this.streaming) this.event({ type: "response.output_item.added", sequence_number: 0, output_index: index, item: { ...open.item } });
  }

  private nextId(prefix: string): string {
    return this.options.itemIds?.shift() ?? itemId(prefix);
  }

  /** OutputTextContent requires `logprobs` (as the hosted API sends it): empty when not asked for. */
  private textPart(text: string, logprobs: TokenLogprob[]) {
    return { type: "output_text" as const, text, annotations: [], logprobs: this.options.logprobs ? logprobs : [] };
  }

  private close(status: ItemStatus): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    const { item, index } = open;
    switch (open.kind) {
      case "reasoning": {
        open.item.content = [{ type: "reasoning_text", text: open.text }];
        if (this.options.summary) open.item.summary = [{ type: "summary_text", text: open.text }];
        if (this.streaming) {
          this.event({ type: "response.reasoning_text.done", sequence_number: 0, item_id: item.id, output_index: index, content_index: 0, text: open.text });
          this.event({ type: "response.content_part.done", sequence_number: 0, item_id: item.id, output_index: index, content_index: 0, part: { type: "reasoning_text", text: open.text } });
          if (this.options.summary) {
            this.event({ type: "response.reasoning_summary_text.done", sequence_number: 0, item_id: item.id, output_index: index, summary_index: 0, text: open.text });
            this.event({ type: "response.reasoning_summary_part.done", sequence_number: 0, item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: open.text } });
          }
        }
        break;
      }
      case "message": {
        const message = open.item;
        message.content = [this.textPart(open.text, open.logprobs)];
        message.status = status;
        if (this.streaming) {
          this.event({ type: "response.output_text.done", sequence_number: 0, item_id: item.id, output_index: index, content_index: 0, text: open.text, logprobs: this.options.logprobs ? [...open.logprobs] : [] });
          this.event({ type: "response.content_part.done", sequence_number: 0, item_id: item.id, output_index: index, content_index: 0, part: this.textPart(open.text, [...open.logprobs]) });
        }
        break;
      }
      case "custom": {
        if (this.streaming) this.event({ type: "response.custom_tool_call_input.done", sequence_number: 0, item_id: item.id, output_index: index, input: open.item.input });
        break;
      }
      case "call": {
        const call = open.item;
        call.status = status;
        if (this.streaming) this.event({ type: "response.function_call_arguments.done", sequence_number: 0, item_id: item.id, output_index: index, arguments: call.arguments });
        break;
      }
      case "hosted": {
        // An mcp_call's output_item.done comes once it has run (settleHosted); an approval request is done as written.
        if (open.item.type === "mcp_call") {
          if (this.streaming) this.event({ ...argumentsDone(open.item, index) });
          return;
        }
        break;
      }
    }
    if (this.streaming) this.event({ type: "response.output_item.done", sequence_number: 0, output_index: index, item: structuredCloneLite(item) });
  }

  // ── events ───────────────────────────────────────────────────────────────

  private event(event: ResponseStreamEvent): void {
    event.sequence_number = this.sequence++;
    this.pending.push(event);
  }

  private flush(): void {
    if (this.pending.length === 0 || !this.options.emit) return;
    const events = this.pending;
    this.pending = [];
    this.options.emit(events);
  }
}

/** A deep copy of plain JSON data: snapshots in events must not change when the builder goes on. */
export function structuredCloneLite<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function responseUsage(usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number }; completion_tokens_details: { reasoning_tokens: number } }): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details.cached_tokens },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details.reasoning_tokens },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}
