// Plain Node: the package and its testing entry import, and a scripted reply streams in this thread.
const { createClient } = await import("webgpu-openai");
const { createScriptedEngine } = await import("webgpu-openai/testing");
const client = createClient({ worker: false, engine: createScriptedEngine({ replies: ["Hello from Node."] }) });
let text = "";
const stream = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }], stream: true });
for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
console.log(JSON.stringify({ text }));
