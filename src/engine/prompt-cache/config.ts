/**
 * The `createClient({ promptCache })` option and the default KV budget.
 *
 * `promptCache: false` turns prompt caching off: the engine keeps only what
 * web-llm itself reuses (the previous conversation, extended byte for byte).
 * `true` or absent: on, with the default budget; an object sets
 * `budgetTokens` (all cached sequences together, shared prefixes counted
 * once) and `maxSequences`.
 *
 * Default budget: an eighth of the device's memory for the KV cache, divided
 * by the model's KV bytes per token, and kept between one and eight context
 * windows:
 *
 *   kvBytesPerToken = 2 (K and V) × layers × kv heads × head dim × bytes per element
 *   budgetTokens    = clamp(floor(deviceMemory / 8 / kvBytesPerToken), window, 8 × window)
 *
 * deviceMemory is `navigator.deviceMemory` (Chrome caps it at 8 GB) or 4 GB
 * when the browser does not say. An engine that does not know the model's
 * KV size (the scripted engine) uses 128 KiB per token, an 8B model in f16.
 */

export interface PromptCacheConfig {
  /** Tokens all cached sequences may hold together (shared prefixes once). Default: see the formula above. */
  budgetTokens?: number;
  /** Most conversations kept at once. Default 16. */
  maxSequences?: number;
}

export type PromptCacheOption = boolean | PromptCacheConfig;

/**
 * What the host hands the engine (at load, and to the engines it creates): the
 * option checked, plus the device memory the default budget is derived from.
 * `enabled` undefined: the client did not say; the engine's own setting (its
 * factory's `promptCache`) applies, else on.
 */
export interface PromptCacheSettings extends PromptCacheConfig {
  enabled?: boolean;
  deviceMemoryGb?: number;
}

export const DEFAULT_DEVICE_MEMORY_GB = 4;
/** Tokens per page of web-llm's paged KV cache: the policy counts storage in these. */
export const KV_PAGE_SIZE = 16;
/** KV bytes per token assumed when the model's are unknown: an 8B model (32 layers, 8 KV heads of 128) in f16. */
export const NOMINAL_KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2;

/** Checks the option (a RangeError names the field) and resolves it with the device memory. */
export function promptCacheSettings(option: PromptCacheOption | undefined, deviceMemoryGb?: number): PromptCacheSettings {
  const memory = deviceMemoryGb !== undefined ? { deviceMemoryGb } : {};
  if (option === undefined) return memory;
  if (option === false) return { enabled: false };
  const config = option === true ? {} : option;
  if (typeof config !== "object" || config === null) throw new RangeError("promptCache must be true, false, or { budgetTokens?, maxSequences? }.");
  if (config.budgetTokens !== undefined && !(Number.isInteger(config.budgetTokens) && config.budgetTokens >= 1)) {
    throw new RangeError(`promptCache.budgetTokens must be an integer ≥ 1, got ${String(config.budgetTokens)}.`);
  }
  if (config.maxSequences !== undefined && !(Number.isInteger(config.maxSequences) && config.maxSequences >= 1)) {
    throw new RangeError(`promptCache.maxSequences must be an integer ≥ 1, got ${String(config.maxSequences)}.`);
  }
  return { enabled: true, ...memory, ...(config.budgetTokens !== undefined ? { budgetTokens: config.budgetTokens } : {}), ...(config.maxSequences !== undefined ? { maxSequences: config.maxSequences } : {}) };
}

/** The engine's settings: the host's (what the client said) over the engine factory's own. */
export function mergeSettings(host: PromptCacheSettings | undefined, own: PromptCacheOption | PromptCacheSettings | undefined): PromptCacheSettings {
  const base = typeof own === "object" ? own : own === undefined ? {} : { enabled: own };
  if (!host) return base;
  if (host.enabled === undefined) return { ...base, ...(host.deviceMemoryGb !== undefined ? { deviceMemoryGb: host.deviceMemoryGb } : {}) };
  return host;
}

/** KV bytes per token from a model's shape (mlc-chat-config's layers, KV heads, head dim) and element size (2 for f16, 4 for f32). */
export function kvBytesPerToken(shape: { layers: number; kvHeads: number; headDim: number; bytesPerElement: number }): number {
  return 2 * shape.layers * shape.kvHeads * shape.headDim * shape.bytesPerElement;
}

/** The default budget in tokens (formula in the header). */
export function defaultBudgetTokens(input: { contextWindow: number; kvBytesPerToken?: number; deviceMemoryGb?: number }): number {
  const memory = (input.deviceMemoryGb ?? DEFAULT_DEVICE_MEMORY_GB) * 1024 ** 3;
  const perToken = input.kvBytesPerToken ?? NOMINAL_KV_BYTES_PER_TOKEN;
  const tokens = Math.floor(memory / 8 / perToken);
  return Math.min(Math.max(tokens, input.contextWindow), 8 * input.contextWindow);
}
