/**
 * Errors keep their OpenAI fields across the worker boundary. comlink alone
 * sends only `name`, `message` and `stack`; this handler adds `status`, `type`,
 * `code`, `param` and `retryAfterMs`, and rebuilds an ApiError on the other side.
 * Both the page and the worker import this module.
 */
import * as Comlink from "comlink";
import { ApiError, type ApiErrorInit } from "../protocol/api-error.js";

interface SerializedThrow {
  isError: boolean;
  value: unknown;
}

export function serializeError(error: unknown): ApiErrorInit & { name: string } {
  if (error instanceof ApiError) {
    return { name: error.name, status: error.status, message: error.message, type: error.type, code: error.code, param: error.param, retryAfterMs: error.retryAfterMs };
  }
  if (error instanceof Error && error.name === "AbortError") return { name: "AbortError", status: 499, message: error.message };
  return { name: "ApiError", ...ApiError.from(error).toJSON().error, status: ApiError.from(error).status };
}

export function deserializeError(value: ApiErrorInit & { name?: string }): Error {
  if (value.name === "AbortError") {
    const abort = new Error(value.message);
    abort.name = "AbortError";
    return abort;
  }
  return new ApiError(value);
}

let installed = false;

export function installErrorTransfer(): void {
  if (installed) return;
  installed = true;
  // comlink does not export its throw marker; keep its own test for "this is a thrown value".
  const builtin = Comlink.transferHandlers.get("throw") as Comlink.TransferHandler<unknown, unknown>;
  Comlink.transferHandlers.set("throw", {
    canHandle: builtin.canHandle,
    serialize(value: unknown) {
      const thrown = (value as { value: unknown }).value;
      return [{ isError: true, value: serializeError(thrown) }, []];
    },
    deserialize(serialized: unknown) {
      throw deserializeError((serialized as SerializedThrow).value as ApiErrorInit);
    },
  } as Comlink.TransferHandler<unknown, unknown>);
}
