// Next's defaults: nothing set for webgpu-openai (its worker and web-llm chunk need no configuration).
export default {};
