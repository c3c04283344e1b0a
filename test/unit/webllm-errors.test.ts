import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/protocol/api-error.js";
import { mapWebLlmError } from "../../src/engine/webllm/webllm-errors.js";

/** An error as web-llm throws it: a plain Error subclass told apart only by `name`. */
function webLlmError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

describe("web-llm errors → ApiError (by err.name)", () => {
  it("a prompt over the context window is a 400 context_length_exceeded on messages", () => {
    const error = mapWebLlmError(
      webLlmError("ContextWindowSizeExceededError", "Prompt tokens exceed context window size: number of prompt tokens: 5000; context window size: 4096\nConsider shortening the prompt"),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: "context_length_exceeded", param: "messages", type: "invalid_request_error" });
    expect(error.message).toMatch(/5000.*4096.*Shorten the conversation/);
  });

  it.each(["DeviceLostError", "ModelNotLoadedError", "WorkerEngineModelNotLoadedError"])("%s means the device was lost: 503 device_lost", (name) => {
    expect(mapWebLlmError(webLlmError(name, "gone"))).toMatchObject({ status: 503, code: "device_lost" });
  });

  it.each([
    ["MessageOrderError", 400],
    ["ContentTypeError", 400],
    ["RangeError", 400],
    ["UserMessageContentErrorForNonVLM", 400],
    ["ModelNotFoundError", 404],
    ["SpecifiedModelNotFoundError", 404],
    ["PrefillChunkSizeSmallerThanImageError", 413],
    ["WebGPUNotAvailableError", 503],
    ["ShaderF16SupportError", 503],
    ["FeatureSupportError", 503],
    ["ToolCallOutputParseError", 500],
    ["JSONFieldError", 500],
    ["IntegrityError", 502],
    ["QuotaExceededError", 507],
  ])("%s → %i", (name, status) => {
    const error = mapWebLlmError(webLlmError(name, "details"));
    expect(error.status).toBe(status);
    expect(error.message).toContain("details");
  });

  it("a grammar that does not compile names response_format", () => {
    expect(mapWebLlmError(webLlmError("GrammarMatcherInitError", "bad schema"))).toMatchObject({ status: 400, param: "response_format", code: "invalid_response_format" });
  });

  it("a template without a tool role (plain Error) is a 400 on messages", () => {
    expect(mapWebLlmError(new Error("Role is not supported: tool"))).toMatchObject({ status: 400, param: "messages", code: "unsupported_role" });
  });

  it("plain Errors recognised by message: no adapter → 503, storage full → 507", () => {
    expect(mapWebLlmError(new Error("Unable to find a compatible GPU. This issue might be…")).status).toBe(503);
    expect(mapWebLlmError(new Error("Cannot initialize runtime because of requested maxBufferSize 1 exceeds limit 0")).status).toBe(503);
    expect(mapWebLlmError(new Error("ArtifactIndexedDBCache failed to fetch: http://x/params_shard_3.bin")).status).toBe(507);
  });

  it("network failures while loading are 502; unknown failures 500 saying which phase failed", () => {
    expect(mapWebLlmError(new TypeError("Failed to fetch"), "load")).toMatchObject({ status: 502, code: "download_failed" });
    const other = mapWebLlmError(new Error("something odd"), "generate");
    expect(other).toMatchObject({ status: 500, code: "engine_error" });
    expect(other.message).toMatch(/generate failed: something odd/);
    expect(mapWebLlmError("a string thrown").message).toContain("a string thrown");
  });

  it("an ApiError passes through unchanged", () => {
    const original = new ApiError({ status: 429, message: "full" });
    expect(mapWebLlmError(original)).toBe(original);
  });
});
