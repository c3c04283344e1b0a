import { afterEach, beforeEach } from "vitest";

/** Collects unhandled promise rejections during each test of the file, so a test can assert there were none. */
export function recordUnhandledRejections(): { readonly reasons: unknown[] } {
  const record = { reasons: [] as unknown[] };
  const onUnhandled = (reason: unknown) => record.reasons.push(reason);
  beforeEach(() => {
    record.reasons = [];
    process.on("unhandledRejection", onUnhandled);
  });
  afterEach(() => {
    process.off("unhandledRejection", onUnhandled);
  });
  return record;
}
