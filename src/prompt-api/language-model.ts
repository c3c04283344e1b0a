/**
 * createPromptApi: the `LanguageModel` class (Chrome's Prompt API, as the
 * webmachinelearning/prompt-api explainer defines it) backed by a client of
 * this library: the statics availability(), params() and create(); the
 * sessions are PromptSession (session.ts).
 */
import { createClient, type Client, type ClientOptions } from "../client/create-client.js";
import { deviceMemoryGb } from "../gpu/fit.js";
import { Conversation } from "./conversation.js";
import { abortReason, domError, quotaExceeded, toDomException } from "./errors.js";
import { checkInput, convertInput, expectedTypes } from "./messages.js";
import { chooseModel } from "./model-choice.js";
import { createMonitor } from "./monitor.js";
import { PARAMS, resolveSampling } from "./sampling.js";
import { CONSTRUCT, PromptSession } from "./session.js";
import { checkTools } from "./tools.js";
import type { Availability, LanguageModelClass, LanguageModelCreateCoreOptions, LanguageModelCreateOptions, LanguageModelExpected, LanguageModelParams } from "./types.js";

export interface PromptApiOptions extends ClientOptions {
  /** The client whose pipeline serves the sessions (e.g. one on the scripted engine in tests). Default: `createClient(options)`, made on first use. */
  client?: Client;
  /** The model behind `LanguageModel`: a catalog id or alias. Default: the catalog's best fit for this device (model-choice.ts). */
  model?: string;
}

const INPUT_TYPES = new Set(["text", "image", "audio", "tool-response"]);
const OUTPUT_TYPES = new Set(["text", "image", "audio", "tool-call"]);

/** Malformed expectations are errors (TypeError, RangeError for a bad language tag); unsupported ones are not (see `unsupported`). */
function checkExpectations(options: LanguageModelCreateCoreOptions): void {
  for (const [key, allowed] of [["expectedInputs", INPUT_TYPES], ["expectedOutputs", OUTPUT_TYPES]] as const) {
    const list = options[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new TypeError(`\`${key}\` must be an array of { type, languages }.`);
    for (const entry of list as LanguageModelExpected[]) {
      if (typeof entry !== "object" || entry === null || !allowed.has(entry.type)) throw new TypeError(`\`${key}\` has an entry whose type is not one of ${[...allowed].join(", ")}.`);
      if (entry.languages !== undefined) Intl.getCanonicalLocales(entry.languages);
    }
  }
}

/** Why the model cannot take these expectations, or null. Languages are not refused: the catalog's models are multilingual, with quality varying by language. */
function unsupported(options: LanguageModelCreateCoreOptions, modalities: readonly string[], model: string): string | null {
  for (const entry of options.expectedInputs ?? []) {
    if ((entry.type === "image" || entry.type === "audio") && !modalities.includes(entry.type)) return `${model} does not take ${entry.type} input.`;
  }
  for (const entry of options.expectedOutputs ?? []) {
    if (entry.type === "image" || entry.type === "audio") return `The Prompt API outputs text only; ${entry.type} output is not supported.`;
  }
  return null;
}

/** Input kinds the default model must take: the media types expected. */
const neededKinds = (options: LanguageModelCreateCoreOptions) => new Set((options.expectedInputs ?? []).map((e) => e.type).filter((t) => t === "image" || t === "audio"));

const newCacheKey = () => `prompt-api-${globalThis.crypto?.randomUUID?.() ?? Math.random().toString(36).slice(2)}`;

export function createPromptApi(options: PromptApiOptions = {}): LanguageModelClass {
  const { client: given, model: fixedModel, ...clientOptions } = options;
  let made: Client | null = given ?? null;
  const client = () => (made ??= createClient(clientOptions));
  /** Models a create() is loading right now: availability() says `downloading` for them. */
  const loading = new Map<string, number>();

  async function modelFor(core: LanguageModelCreateCoreOptions): Promise<string | null> {
    if (fixedModel !== undefined) return fixedModel;
    const [list, gpu] = await Promise.all([client().models.list(), client().gpu.info()]);
    return chooseModel(list.data, gpu, neededKinds(core), deviceMemoryGb());
  }

  class LanguageModel extends PromptSession {
    static async availability(core: LanguageModelCreateCoreOptions = {}): Promise<Availability> {
      checkExpectations(core);
      resolveSampling(core);
      const model = await modelFor(core).catch(() => null);
      if (model === null) return "unavailable";
      const status = await client().models.status(model);
      if (status.status === "unavailable") return "unavailable";
      const info = await client().models.retrieve(model);
      if (unsupported(core, info.input_modalities, info.id)) return "unavailable";
      if (status.status === "downloadable" && (loading.get(status.id) ?? 0) > 0) return "downloading";
      return status.status;
    }

    static async params(): Promise<LanguageModelParams> {
      return { ...PARAMS };
    }

    static async create(createOptions: LanguageModelCreateOptions = {}): Promise<LanguageModel> {
      const signal = createOptions.signal;
      if (signal?.aborted) throw abortReason(signal);
      const sampling = resolveSampling(createOptions);
      const tools = checkTools(createOptions.tools);
      checkExpectations(createOptions);
      const expected = expectedTypes(createOptions.expectedInputs);
      const initial = createOptions.initialPrompts === undefined ? [] : checkInput(createOptions.initialPrompts, { where: "create", firstSequence: true, expected });
      const monitor = createMonitor(createOptions.monitor);
      try {
        const model = await modelFor(createOptions);
        if (model === null) throw domError("NotSupportedError", "No model of the catalog fits this device (WebGPU missing, or too little memory for any of them).");
        const info = await client().models.retrieve(model);
        const refusal = unsupported(createOptions, info.input_modalities, info.id);
        if (refusal) throw domError("NotSupportedError", refusal);
        monitor.progress(0);
        const loaded = await trackLoad(loading, info.id, () => client().models.load(model, { signal, onProgress: (p) => monitor.progress(p.fraction) }));
        monitor.progress(1);
        const conversation = new Conversation({ client: client(), model: loaded.model, contextWindow: info.context_window, sampling, tools, cacheKey: newCacheKey() });
        conversation.initial = await convertInput(initial);
        const usage = await conversation.count(conversation.history(), signal);
        if (usage >= info.context_window) throw quotaExceeded(usage, info.context_window);
        if (signal?.aborted) throw abortReason(signal);
        const session = new LanguageModel(CONSTRUCT, { conversation, expected, contextUsage: usage, firstSequence: initial.length === 0 });
        // The create() signal destroys the session later too, as the explainer says.
        signal?.addEventListener("abort", () => session.destroy(signal.reason), { once: true });
        return session;
      } catch (error) {
        throw toDomException(error, signal);
      }
    }
  }
  return LanguageModel as unknown as LanguageModelClass;
}

async function trackLoad<T>(loading: Map<string, number>, id: string, load: () => Promise<T>): Promise<T> {
  loading.set(id, (loading.get(id) ?? 0) + 1);
  try {
    return await load();
  } finally {
    loading.set(id, (loading.get(id) ?? 1) - 1);
  }
}

export interface InstalledPromptApi {
  /** The class `globalThis.LanguageModel` now is: ours, or the browser's own when it had one and `replace` was not set. */
  LanguageModel: LanguageModelClass;
  /** Whether ours was installed. */
  installed: boolean;
  /** Restores what `globalThis.LanguageModel` was before (nothing, or the browser's own). */
  uninstall(): void;
}

/**
 * Defines `globalThis.LanguageModel` with createPromptApi(options) where the
 * browser has none (every browser but Chrome 148+ desktop windows, and every
 * worker), or everywhere with `replace: true`.
 */
export function installPromptApi(options: PromptApiOptions & { replace?: boolean } = {}): InstalledPromptApi {
  const { replace = false, ...apiOptions } = options;
  const scope = globalThis as { LanguageModel?: LanguageModelClass };
  const had = Object.getOwnPropertyDescriptor(scope, "LanguageModel");
  const existing = scope.LanguageModel;
  if (existing !== undefined && !replace) return { LanguageModel: existing, installed: false, uninstall() {} };
  const LanguageModel = createPromptApi(apiOptions);
  // As a WebIDL interface is exposed: writable, configurable, not enumerable.
  Object.defineProperty(scope, "LanguageModel", { value: LanguageModel, writable: true, configurable: true, enumerable: false });
  return {
    LanguageModel,
    installed: true,
    uninstall() {
      if (scope.LanguageModel !== LanguageModel) return;
      if (had) Object.defineProperty(scope, "LanguageModel", had);
      else delete scope.LanguageModel;
    },
  };
}
