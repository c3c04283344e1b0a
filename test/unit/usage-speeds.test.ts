/**
 * The speeds in `x_webgpu` (prefill and decode tokens per second) as the host
 * records them from the engine's usage: a CPU-emulated GPU decodes ~0.05
 * tokens a second, which must not read as 0.
 */
import { describe, expect, it } from "vitest";
import { recordUsage } from "../../src/host/generation-loop.js";
import type { WebGpuStats } from "../../src/protocol/types.js";

const usage = (prefillTokensPerS: number, decodeTokensPerS: number) => ({ promptTokens: 156, cachedTokens: 0, completionTokens: 36, prefillTokensPerS, decodeTokensPerS });

describe("x_webgpu speeds", () => {
  it("keep three significant figures, slow or fast (one decimal read a SwiftShader decode of 0.093 tok/s as 0)", () => {
    const slow = {} as WebGpuStats;
    recordUsage(slow, usage(0.9381, 0.09297));
    expect(slow.prefill_tokens_per_s).toBe(0.938);
    expect(slow.decode_tokens_per_s).toBe(0.093);
    const fast = {} as WebGpuStats;
    recordUsage(fast, usage(1834.6, 61.27));
    expect(fast.prefill_tokens_per_s).toBe(1830);
    expect(fast.decode_tokens_per_s).toBe(61.3);
  });

  it("no usage reported: zeros", () => {
    const none = {} as WebGpuStats;
    recordUsage(none, null);
    expect(none.decode_tokens_per_s).toBe(0);
  });
});
