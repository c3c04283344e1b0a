import { client, MODEL } from "./client.js";
import { runTool, tools } from "./tools.js";

/**
 * One user turn: stream the reply into `onText`, run any tool calls and send the results back,
 * until the model answers in words. Returns the new history. `signal` stops it.
 */
export async function sendTurn(history, onText, onToolCall, signal) {
  const messages = [...history];
  for (;;) {
    const stream = await client.chat.completions.create({ model: MODEL, messages, tools, stream: true }, { signal });
    let content = "";
    const calls = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) onText((content += delta.content));
      for (const part of delta?.tool_calls ?? []) {
        // A call arrives as its id and name first, then its arguments in fragments.
        const call = (calls[part.index] ??= { id: part.id, type: "function", function: { name: "", arguments: "" } });
        if (part.function?.name) call.function.name = part.function.name;
        if (part.function?.arguments) call.function.arguments += part.function.arguments;
      }
    }
    messages.push({ role: "assistant", content, ...(calls.length ? { tool_calls: calls } : {}) });
    if (calls.length === 0) return messages;
    for (const call of calls) {
      const result = runTool(call);
      onToolCall(call, result);
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
}
