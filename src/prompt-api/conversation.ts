/**
 * A session's conversation, and one model turn on the client's chat
 * pipeline. The history is what every request sends: the initial prompts
 * (never evicted) and then groups (a prompt with its reply and tool
 * exchanges, or one append), evicted oldest first when the context window
 * overflows. Requests carry the session's `prompt_cache_key` (shared by its
 * clones), so the prompt cache keeps the common prefix and a clone's first
 * prompt prefills only what is new.
 */
import type { Client } from "../client/types.js";
import type { ChatCompletionCreateParams, ChatMessage, ToolCall, Usage, WebGpuStats } from "../protocol/types.js";
import type { Sampling } from "./sampling.js";
import { chatTools, MAX_TOOL_ROUNDS, runToolCalls, type ToolSet } from "./tools.js";
import { domError } from "./errors.js";
import { ApiError } from "../protocol/api-error.js";

export interface ConversationConfig {
  client: Client;
  model: string;
  contextWindow: number;
  sampling: Sampling;
  tools: ToolSet;
  /** Shared by a session and its clones. */
  cacheKey: string;
}

export interface TurnResult {
  /** The reply's text (every round's, when tools were called between). */
  text: string;
  /** What the turn adds to the history after the input: tool exchanges, then the reply (merged into a prefix message). */
  messages: ChatMessage[];
  /** The last request stopped at the length limit (context window): the reply is unfinished. */
  cut: boolean;
}

/** What the last request of a turn reported (tests and diagnostics). */
export interface TurnReport {
  usage: Usage | null;
  stats: WebGpuStats | null;
}

export class Conversation {
  initial: ChatMessage[] = [];
  groups: ChatMessage[][] = [];

  constructor(readonly config: ConversationConfig) {}

  history(): ChatMessage[] {
    return [...this.initial, ...this.groups.flat()];
  }

  copy(): Conversation {
    const copy = new Conversation(this.config);
    copy.initial = this.initial.map(copyMessage);
    copy.groups = this.groups.map((group) => group.map(copyMessage));
    return copy;
  }

  /** Prompt tokens of `messages` in the model (control tokens and the session's tool declarations included). */
  async count(messages: ChatMessage[], signal?: AbortSignal, withTools = true): Promise<number> {
    if (messages.length === 0) return 0;
    const tools = withTools && this.config.tools.size > 0 ? { tools: chatTools(this.config.tools) } : {};
    const counted = await this.config.client.tokens.count({ model: this.config.model, messages: sendable(messages), ...tools }, { signal });
    return counted.input_tokens;
  }

  /**
   * Runs the model on the history plus `input` until it answers in text,
   * executing the tools it calls. `onText` receives the reply as it streams
   * (when given, the requests stream).
   */
  async turn(input: ChatMessage[], responseFormat: Record<string, unknown> | undefined, signal: AbortSignal, report: (r: TurnReport) => void, onText?: (delta: string) => void): Promise<TurnResult> {
    const base = [...this.history(), ...input];
    const added: ChatMessage[] = [];
    let text = "";
    for (let round = 0; ; round++) {
      const reply = await this.request([...base, ...added], responseFormat, signal, onText).catch((error: unknown) => {
        throw refusedGrammar(error, responseFormat);
      });
      report({ usage: reply.usage, stats: reply.stats });
      text += reply.content;
      if (reply.toolCalls.length === 0 || this.config.tools.size === 0) {
        return { text, messages: this.withReply(input, added, reply.content), cut: reply.finish === "length" };
      }
      if (round + 1 >= MAX_TOOL_ROUNDS) throw domError("OperationError", `The model kept calling tools for ${MAX_TOOL_ROUNDS} rounds without answering.`);
      added.push({ role: "assistant", content: reply.content || null, tool_calls: reply.toolCalls });
      for (const result of await runToolCalls(reply.toolCalls, this.config.tools, signal)) added.push(result);
    }
  }

  /** The turn's messages after the input; a prefix message (the input's last, assistant) gets the reply appended instead. */
  private withReply(input: ChatMessage[], added: ChatMessage[], reply: string): ChatMessage[] {
    const last = input[input.length - 1];
    if (added.length === 0 && last?.role === "assistant" && typeof last.content === "string") {
      input[input.length - 1] = { ...last, content: last.content + reply };
      return [];
    }
    return [...added, { role: "assistant", content: reply }];
  }

  private async request(messages: ChatMessage[], responseFormat: Record<string, unknown> | undefined, signal: AbortSignal, onText?: (delta: string) => void) {
    const { client, model, sampling, tools } = this.config;
    const body: ChatCompletionCreateParams = {
      model,
      messages: sendable(messages),
      temperature: sampling.temperature,
      top_k: sampling.topK,
      prompt_cache_key: this.config.cacheKey,
      ...(tools.size > 0 ? { tools: chatTools(tools) } : {}),
      ...(responseFormat ? { response_format: responseFormat as unknown as ChatCompletionCreateParams["response_format"] } : {}),
    };
    if (!onText) {
      const completion = await client.chat.completions.create({ ...body, stream: false }, { signal });
      const message = completion.choices[0].message;
      const toolCalls = (message.tool_calls ?? []).filter((call): call is ToolCall => call.type === "function");
      return { content: message.content ?? "", toolCalls, usage: completion.usage, stats: completion.x_webgpu ?? null, finish: completion.choices[0].finish_reason as string | null };
    }
    const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, { signal });
    let content = "";
    const calls: ToolCall[] = [];
    let usage: Usage | null = null;
    let stats: WebGpuStats | null = null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      if (chunk.x_webgpu) stats = chunk.x_webgpu;
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        content += delta.content;
        onText(delta.content);
      }
      for (const fragment of delta.tool_calls ?? []) {
        const call = (calls[fragment.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
        if (fragment.id) call.id = fragment.id;
        if (fragment.function?.name) call.function.name += fragment.function.name;
        if (fragment.function?.arguments) call.function.arguments += fragment.function.arguments;
      }
    }
    return { content, toolCalls: calls.filter(Boolean), usage, stats, finish };
  }
}

function copyMessage(message: ChatMessage): ChatMessage {
  return { ...message, ...(Array.isArray(message.content) ? { content: [...message.content] } : {}), ...(message.tool_calls ? { tool_calls: message.tool_calls.map((c) => ({ ...c, function: { ...c.function } })) } : {}) };
}

/** A pipeline that refuses the regex grammar extension (or one construct of the pattern): the refusal says it was the RegExp constraint. */
function refusedGrammar(error: unknown, responseFormat: Record<string, unknown> | undefined): unknown {
  if (responseFormat?.type !== "grammar" || !(error instanceof ApiError) || !error.param?.startsWith("response_format")) return error;
  return domError("NotSupportedError", `This RegExp responseConstraint cannot be enforced here (response_format: ${error.message})`);
}

/**
 * The messages with their audio samples copied: a client whose pipeline runs
 * in a worker transfers `pcm_f32` buffers (leaving them empty here), and a
 * session sends its history again with every request.
 */
function sendable(messages: ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    if (!Array.isArray(message.content) || !message.content.some((part) => part.type === "input_audio" && ArrayBuffer.isView(part.input_audio.data))) return message;
    return {
      ...message,
      content: message.content.map((part) =>
        part.type === "input_audio" && part.input_audio.data instanceof Float32Array ? { ...part, input_audio: { ...part.input_audio, data: part.input_audio.data.slice() } } as typeof part : part,
      ),
    };
  });
}
