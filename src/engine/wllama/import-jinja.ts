/**
 * The one place `@huggingface/jinja` is loaded: on the first chat of a GGUF
 * model whose prompt its own template renders (gguf-template.ts), so pages
 * that never run one never load it. An app's bundler resolves the literal
 * `import()` below; where it cannot load, the error reaches gguf-prompt.ts,
 * which lets llama.cpp render the template instead (and says so).
 */
import type { JinjaModule } from "./gguf-template.js";

export async function importJinja(): Promise<JinjaModule> {
  return (await import("@huggingface/jinja")) as JinjaModule;
}
