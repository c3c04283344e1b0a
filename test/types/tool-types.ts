/**
 * Type fixture (checked by `tsc -p test/types/tsconfig.json`, see test/unit/sdk-types.test.ts):
 * the reply's types follow the request's `tools`. Function tools only (or none):
 * calls and deltas are function calls, `call.function` needs no check, as before
 * custom tools existed. A custom tool, or a list that may hold one: the union,
 * where `function` must be checked (the `@ts-expect-error` lines fail tsc if that
 * error is gone). Nothing here runs.
 */
import type { ChatCompletionTool as SdkTool, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { expectTypeOf } from "vitest";
import type { AnyToolCall, AnyToolCallDelta, ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool, Client, FunctionTool, Stream, ToolCall, ToolCallDelta } from "../../src/index.js";

declare const client: Client;
declare const functionTools: FunctionTool[];
declare const anyTools: ChatCompletionTool[];
declare const sdkTools: SdkTool[];
declare const sdkStreaming: ChatCompletionCreateParamsStreaming;
declare const maybeStream: boolean;

const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object" } } } as const;

export async function functionToolsGetFunctionCalls(): Promise<void> {
  const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
  const reply = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: functionTools });
  const message = reply.choices[0]!.message;
  messages.push(message);
  for (const call of message.tool_calls ?? []) {
    messages.push({ role: "tool", tool_call_id: call.id, content: call.function.name + call.function.arguments });
  }
  expectTypeOf(message.tool_calls).toEqualTypeOf<ToolCall[] | undefined>();

  const literal = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: [weather] });
  expectTypeOf(literal.choices[0]!.message.tool_calls).toEqualTypeOf<ToolCall[] | undefined>();
  const inline = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: [{ type: "function", function: { name: "f" } }] });
  expectTypeOf(inline.choices[0]!.message.tool_calls).toEqualTypeOf<ToolCall[] | undefined>();
  const none = await client.chat.completions.create({ model: "Qwen3-0.6B", messages });
  expectTypeOf(none.choices[0]!.message.tool_calls).toEqualTypeOf<ToolCall[] | undefined>();

  const stream = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: functionTools, stream: true });
  for await (const chunk of stream) {
    for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) void (tc.function.name ?? tc.function.arguments);
    expectTypeOf(chunk.choices[0]!.delta.tool_calls).toEqualTypeOf<ToolCallDelta[] | undefined>();
  }

  const either = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: [weather], stream: maybeStream });
  if (!(Symbol.asyncIterator in either)) expectTypeOf(either.choices[0]!.message.tool_calls).toEqualTypeOf<ToolCall[] | undefined>();
}

export async function customToolsGetTheUnion(): Promise<void> {
  const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Write SQL." }];
  const custom = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: [weather, { type: "custom", custom: { name: "sql" } }] });
  expectTypeOf(custom.choices[0]!.message.tool_calls).toEqualTypeOf<AnyToolCall[] | undefined>();
  // @ts-expect-error a custom call has no `function`: the request declared a custom tool.
  void custom.choices[0]!.message.tool_calls?.[0]!.function.name;
  messages.push(custom.choices[0]!.message);

  const mixed = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: anyTools });
  expectTypeOf(mixed.choices[0]!.message.tool_calls).toEqualTypeOf<AnyToolCall[] | undefined>();
  const fromSdk = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: sdkTools });
  expectTypeOf(fromSdk.choices[0]!.message.tool_calls).toEqualTypeOf<AnyToolCall[] | undefined>();

  const stream = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: anyTools, stream: true });
  for await (const chunk of stream) {
    expectTypeOf(chunk.choices[0]!.delta.tool_calls).toEqualTypeOf<AnyToolCallDelta[] | undefined>();
    // @ts-expect-error a custom call's delta has no `function`.
    void chunk.choices[0]?.delta.tool_calls?.[0]!.function.name;
  }
  const sdkStream = await client.chat.completions.create(sdkStreaming);
  for await (const chunk of sdkStream) expectTypeOf(chunk.choices[0]!.delta.tool_calls).toEqualTypeOf<AnyToolCallDelta[] | undefined>();
}

export async function annotatedWithTheWideNames(): Promise<void> {
  // Code that annotates with the named (wide) types keeps compiling: the narrow replies are assignable to them.
  const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Hi" }];
  const reply: ChatCompletion = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: functionTools });
  const stream: Stream = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools: functionTools, stream: true });
  const narrow: ChatCompletion<ToolCall> = await client.chat.completions.create({ model: "Qwen3-0.6B", messages });
  const chunks: Stream<ChatCompletionChunk<ToolCallDelta>> = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, stream: true });
  void [reply, stream, narrow, chunks];
}
