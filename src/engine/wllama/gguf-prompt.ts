/**
 * The loaded GGUF's own chat template, ready to render prompts
 * (gguf-template.ts): its source (`tokenizer.chat_template`) from llama.cpp's
 * metadata, else from the GGUF's header (llama.cpp's metadata lacks it where
 * its own Jinja cannot render the template: measured with a floor division),
 * BOS/EOS text from the GGUF's vocabulary,
 * `@huggingface/jinja` loaded on first use. Where any of it fails (no
 * template, Jinja this engine cannot parse or render, the module not
 * loadable), the engine lets llama.cpp render the template, as before, and
 * says so in `models.status(id).chat_template` (report(): renderer
 * "llama.cpp" and why) and once per load on the console (a warning naming the
 * model and why, for the developer reading the console).
 */
import { readGgufTemplateInfo } from "../../models/gguf-header.js";
import type { ChatTemplateReport, EngineRequest } from "../types.js";
import { compileGgufTemplate, TemplateUnsupported, type GgufTemplate } from "./gguf-template.js";
import { importJinja } from "./import-jinja.js";

/** What llama.cpp reports of the loaded model (wllama's LoadedContextInfo): the template and the BOS/EOS ids (-1: none). */
export interface TemplateSource {
  metadata?: Record<string, string>;
  token_bos?: number;
  token_eos?: number;
  add_bos_token?: boolean;
}

/** A fallback's reason as status shows it: the Jinja error's first line, at most this many characters. */
const REASON_CHARS = 200;

export class GgufPrompts {
  private template: Promise<GgufTemplate | null> | undefined;
  private warned = false;
  /** Why the latest render fell back to llama.cpp; undefined once ours rendered (or none ran yet). */
  private fellBack: string | undefined;

  constructor(
    private readonly model: string,
    private readonly info: () => TemplateSource,
    private readonly file: Blob | undefined,
  ) {}

  /** The prompt for `request` rendered by us, or undefined: llama.cpp renders it (createChatCompletion). */
  async render(request: EngineRequest): Promise<string | undefined> {
    const template = await this.compiled();
    if (!template) return undefined;
    try {
      const prompt = template.render(request);
      this.fellBack = undefined;
      return prompt;
    } catch (error) {
      if (!(error instanceof TemplateUnsupported)) throw error;
      this.fallBack(error);
      return undefined;
    }
  }

  /**
   * Who renders the template: llama.cpp where ours cannot parse it, or where
   * the latest request's render failed (a template may render some
   * conversations and not others); else jinja. Before any request only the
   * parse is known (a template that fails only as it renders reads "jinja"
   * until a request has tried it).
   */
  async report(): Promise<ChatTemplateReport> {
    const template = await this.compiled();
    return template && this.fellBack === undefined ? { renderer: "jinja" } : { renderer: "llama.cpp", reason: this.fellBack ?? "" };
  }

  private compiled(): Promise<GgufTemplate | null> {
    this.template ??= this.compile().catch((error) => this.fallBack(error));
    return this.template;
  }

  private async compile(): Promise<GgufTemplate> {
    const info = this.info();
    const ids = [info.token_bos ?? -1, info.token_eos ?? -1];
    const file = this.file;
    const header = file ? await readGgufTemplateInfo(async (end) => new Uint8Array(await file.slice(0, end).arrayBuffer()), ids.filter((id) => id >= 0)) : null;
    const source = info.metadata?.["tokenizer.chat_template"] ?? header?.chatTemplate;
    if (!source) throw new TemplateUnsupported("the GGUF has no tokenizer.chat_template");
    const textOf = (id: number) => (id < 0 ? "" : header?.tokenTexts.get(id));
    const jinja = await importJinja();
    return compileGgufTemplate(jinja, source, { bos: textOf(ids[0]), eos: textOf(ids[1]), addBos: info.add_bos_token ?? false });
  }

  private fallBack(error: unknown): null {
    const message = error instanceof Error ? error.message : String(error);
    const line = message.split("\n")[0];
    this.fellBack = line.length > REASON_CHARS ? `${line.slice(0, REASON_CHARS - 1)}…` : line;
    if (!this.warned) {
      this.warned = true;
      console.warn(`webgpu-openai: ${this.model}: llama.cpp renders the chat template (${message}).`);
    }
    return null;
  }
}
