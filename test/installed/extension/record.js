// A scripted model record (no GPU, no download): what the extension's pages and service worker serve.
export const model = "Qwen3-Scripted-q4f32_1-MLC";
export const record = {
  model: "https://models.invalid/Qwen3-Scripted-MLC",
  model_id: model,
  model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 0,
  engine: { kind: "scripted", replies: ["Hello from the extension.", "Hello through the SDK."] },
};
