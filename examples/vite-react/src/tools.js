// The tools the model may call, in the OpenAI shape, and the code that runs them.
export const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

const implementations = {
  // A real app would call a weather API here.
  get_weather: ({ city }) => ({ city, celsius: 18, sky: "cloudy" }),
};

export function runTool(call) {
  const run = implementations[call.function.name];
  if (!run) return { error: `unknown tool ${call.function.name}` };
  return run(JSON.parse(call.function.arguments || "{}"));
}
