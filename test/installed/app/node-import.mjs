// Plain Node: the package, its testing entry and its static entry import, and a scripted reply streams in this thread.
const { createScriptedEngine } = await import("webgpu-openai/testing");

async function reply({ createClient }) {
  const client = createClient({ worker: false, engine: createScriptedEngine({ replies: ["Hello from Node."] }) });
  let text = "";
  const stream = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }], stream: true });
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
  return text;
}

console.log(JSON.stringify({ text: await reply(await import("webgpu-openai")), static: await reply(await import("webgpu-openai/static")) }));
