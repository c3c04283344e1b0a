import type { ErrorBody } from "./types.js";

/** The `error.type` strings hosted OpenAI-compatible APIs use, keyed by status. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  404: "not_found_error",
  413: "invalid_request_error",
  429: "rate_limit_error",
  500: "server_error",
  503: "service_unavailable",
  504: "timeout_error",
  507: "insufficient_storage",
};

export interface ApiErrorInit {
  status: number;
  message: string;
  type?: string;
  code?: string | null;
  param?: string | null;
  /** 429 only: when to try again. */
  retryAfterMs?: number;
}

/**
 * Every failure the library reports: the OpenAI error body fields plus the
 * HTTP status. It crosses the worker boundary intact (see worker/transfer.ts)
 * and the fetch layer turns it into a response with that status and body.
 */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.type = init.type ?? TYPE_BY_STATUS[init.status] ?? "server_error";
    this.code = init.code ?? null;
    this.param = init.param ?? null;
    this.retryAfterMs = init.retryAfterMs;
  }

  /**
   * The OpenAI SDK's `APIError` fields, so code written against the SDK's
   * errors takes ours: `error` is the body's `error` object; there is no HTTP
   * response (in-process or worker call), so no headers and no request id.
   * Getters, not fields: they derive from the fields above and need no transfer.
   */
  get error(): ErrorBody["error"] {
    return this.toJSON().error;
  }

  get headers(): Headers | undefined {
    return undefined;
  }

  get requestID(): string | null | undefined {
    return undefined;
  }

  /** Whether retrying the same request could succeed (drives `x-should-retry`). */
  get retryable(): boolean {
    return this.status === 429 || this.status === 504 || this.status === 503;
  }

  toJSON(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  static from(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    if (isApiErrorLike(error)) return new ApiError(error);
    const message = error instanceof Error ? error.message : String(error);
    return new ApiError({ status: 500, message: message || "Internal error", code: "internal_error" });
  }
}

function isApiErrorLike(value: unknown): value is ApiErrorInit {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as ApiErrorInit).status === "number" &&
    typeof (value as ApiErrorInit).message === "string"
  );
}

/** 400 naming the offending parameter. */
export function invalidParam(param: string, message: string, code: string | null = "invalid_value"): ApiError {
  return new ApiError({ status: 400, message, param, code });
}

export function isAbortError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: string }).name === "AbortError";
}

export function abortError(reason = "The request was aborted."): Error {
  const error = new Error(reason);
  error.name = "AbortError";
  return error;
}
