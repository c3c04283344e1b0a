/**
 * Type fixture (checked by `tsc -p test/types/tsconfig.json`, see test/unit/types.test.ts):
 * ordinary code typed with the OpenAI SDK v7 (`openai-v7`, an npm alias of openai@7) must compile against this
 * library's client under `strict: true`, in both directions (SDK request types in,
 * our responses out as the SDK's types). Nothing here runs.
 */
import type OpenAI from "openai-v7";
import type { APIError } from "openai-v7";
import type {
  ChatCompletion as SdkChatCompletion,
  ChatCompletionChunk as SdkChatCompletionChunk,
  ChatCompletionCreateParams,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption,
} from "openai-v7/resources/chat/completions";
import { expectTypeOf } from "vitest";
import { ApiError, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionCreateParams as OurParams, type Client } from "../../src/index.js";

declare const client: Client;
declare const messages: ChatCompletionMessageParam[];
declare const tools: ChatCompletionTool[];
declare const toolChoice: ChatCompletionToolChoiceOption;
declare const nonStreaming: ChatCompletionCreateParamsNonStreaming;
declare const streaming: ChatCompletionCreateParamsStreaming;
declare const either: ChatCompletionCreateParams;
declare const sdkRequestOptions: OpenAI.RequestOptions;

export async function sdkParamsIn(): Promise<void> {
  // Whole SDK param objects, as apps build them.
  const completion: SdkChatCompletion = await client.chat.completions.create(nonStreaming);
  const stream = await client.chat.completions.create(streaming);
  for await (const chunk of stream) {
    const sdkChunk: SdkChatCompletionChunk = chunk;
    // Reasoning on the delta, no cast.
    const reasoning: string | null | undefined = chunk.choices[0]?.delta.reasoning_content;
    void sdkChunk;
    void reasoning;
  }
  const maybeStream = await client.chat.completions.create(either, sdkRequestOptions);
  void maybeStream;

  // SDK-typed pieces in a literal body.
  const reply = await client.chat.completions.create({ model: "Qwen3-0.6B", messages, tools, tool_choice: toolChoice, temperature: null });
  const fromOurs: SdkChatCompletion = reply;

  // Our reply goes back into SDK-typed history.
  const history: ChatCompletionMessageParam[] = [...messages, reply.choices[0].message];
  await client.chat.completions.create({ model: "Qwen3-0.6B", messages: history });

  // The same literal an app writes for the SDK, every role and part kind.
  const literal: ChatCompletionMessageParam[] = [
    { role: "developer", content: [{ type: "text", text: "Be brief." }] },
    { role: "system", content: "You are helpful." },
    { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "low" } }] },
    { role: "user", content: [{ type: "input_audio", input_audio: { data: "AA", format: "wav" } }, { type: "file", file: { file_id: "file-1" } }] },
    { role: "assistant", content: [{ type: "refusal", refusal: "No." }], refusal: "No.", audio: null },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
    { role: "assistant", tool_calls: [{ id: "call_2", type: "custom", custom: { name: "g", input: "x" } }] },
    { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "42" }] },
    { role: "function", name: "f", content: null },
  ];
  const sdkTools: ChatCompletionTool[] = [
    { type: "function", function: { name: "f", description: "d", parameters: { type: "object" }, strict: null } },
    { type: "custom", custom: { name: "g", format: { type: "text" } } },
  ];
  await client.chat.completions.create({
    model: "Qwen3-0.6B",
    messages: literal,
    tools: sdkTools,
    tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "f" } }] } },
    response_format: { type: "json_schema", json_schema: { name: "x", schema: {}, strict: null } },
    stream_options: null,
    reasoning_effort: "low",
  });
  const s = await client.chat.completions.create({ ...nonStreaming, stream: true, stream_options: { include_usage: true, include_obfuscation: false } });
  for await (const chunk of s) void (chunk satisfies SdkChatCompletionChunk);

  void completion;
  void fromOurs;
}

export function errorsOut(error: ApiError): void {
  // Code that handles the SDK's errors handles ours.
  const asSdk: APIError = error;
  const status: number | undefined = asSdk.status;
  const body: object | undefined = asSdk.error;
  void status;
  void body;
}

export function typeRelations(): void {
  // Ours → the SDK's, both ways the app uses them.
  expectTypeOf<ChatCompletion>().toExtend<SdkChatCompletion>();
  expectTypeOf<ChatCompletionChunk>().toExtend<SdkChatCompletionChunk>();
  expectTypeOf<ApiError>().toExtend<APIError>();
  // The SDK's → ours.
  expectTypeOf<ChatCompletionCreateParamsNonStreaming>().toExtend<OurParams>();
  expectTypeOf<ChatCompletionCreateParamsStreaming>().toExtend<OurParams & { stream: true }>();
  expectTypeOf<ChatCompletionMessageParam>().toExtend<OurParams["messages"][number]>();
  expectTypeOf<ChatCompletionTool>().toExtend<NonNullable<OurParams["tools"]>[number]>();
  expectTypeOf<ChatCompletionToolChoiceOption>().toExtend<NonNullable<OurParams["tool_choice"]>>();
  // Reasoning is typed on the delta and on the message: no cast needed.
  expectTypeOf<ChatCompletionChunk["choices"][number]["delta"]["reasoning_content"]>().toEqualTypeOf<string | undefined>();
  expectTypeOf<ChatCompletion["choices"][number]["message"]["reasoning_content"]>().toEqualTypeOf<string | null | undefined>();
  // Negative control: the relation checks can fail.
  expectTypeOf<{ model: number }>().not.toExtend<OurParams>();
}

export async function negativeControls(): Promise<void> {
  // @ts-expect-error `model` is required.
  await client.chat.completions.create({ messages });
  // @ts-expect-error a streaming body resolves to a Stream, not a ChatCompletion.
  const wrong: SdkChatCompletion = await client.chat.completions.create(streaming);
  // @ts-expect-error `messages` must be an array of messages.
  await client.chat.completions.create({ model: "Qwen3-0.6B", messages: "hi" });
  // @ts-expect-error an unknown role stays rejected.
  await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "wizard", content: "x" }] });
  void wrong;
}
