/**
 * `samplingMode` (and the legacy `temperature` / `topK`) → the chat request's
 * sampling parameters. The modes are the explainer's presets; their values
 * are ours (documented in docs/prompt-api.md).
 */
import type { LanguageModelCreateCoreOptions, LanguageModelParams, LanguageModelSamplingMode } from "./types.js";

export const PARAMS: LanguageModelParams = { defaultTopK: 3, maxTopK: 128, defaultTemperature: 1, maxTemperature: 2 };

export const SAMPLING_MODES: Record<LanguageModelSamplingMode, { temperature: number; topK: number }> = {
  "most-predictable": { temperature: 0, topK: 1 },
  predictable: { temperature: 0.3, topK: 3 },
  balanced: { temperature: 0.7, topK: 40 },
  creative: { temperature: 1, topK: 64 },
  "most-creative": { temperature: 1.5, topK: 128 },
};

export interface Sampling {
  mode: LanguageModelSamplingMode | undefined;
  temperature: number;
  topK: number;
}

export function resolveSampling(options: LanguageModelCreateCoreOptions): Sampling {
  const { samplingMode, temperature, topK } = options;
  const raw = temperature !== undefined || topK !== undefined;
  if (samplingMode !== undefined && raw) throw new TypeError("`samplingMode` and `temperature`/`topK` are mutually exclusive.");
  if (samplingMode !== undefined) {
    const preset = SAMPLING_MODES[samplingMode];
    if (!preset) throw new TypeError(`Unknown samplingMode ${JSON.stringify(samplingMode)}.`);
    return { mode: samplingMode, ...preset };
  }
  if (!raw) return { mode: "balanced", ...SAMPLING_MODES.balanced };
  if (temperature !== undefined && !(temperature >= 0 && temperature <= PARAMS.maxTemperature)) throw new RangeError(`temperature must be between 0 and ${PARAMS.maxTemperature}.`);
  if (topK !== undefined && !(Number.isInteger(topK) && topK >= 1 && topK <= PARAMS.maxTopK)) throw new RangeError(`topK must be an integer between 1 and ${PARAMS.maxTopK}.`);
  return { mode: undefined, temperature: temperature ?? PARAMS.defaultTemperature, topK: topK ?? PARAMS.defaultTopK };
}
