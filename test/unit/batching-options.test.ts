/**
 * `createClient({ batching })` is checked when the client is made: a bad
 * value fails there with a 400 naming the field and what to pass.
 */
import { describe, expect, it } from "vitest";
import { batchingSettings } from "../../src/engine/batching/options.js";
import { createClient } from "../../src/index.js";

describe("createClient({ batching }): the option as a user writes it", () => {
  it("true is 4 rows; an object keeps what it sets, `forward` included", () => {
    expect(batchingSettings(true)).toEqual({ maxRows: 4 });
    expect(batchingSettings(false)).toBeNull();
    expect(batchingSettings({ maxRows: 8, forward: "batched" })).toEqual({ maxRows: 8, forward: "batched" });
    expect(batchingSettings({ forward: "measured", prefillChunkTokens: 64 })).toEqual({ maxRows: 4, forward: "measured", prefillChunkTokens: 64 });
  });

  it("unset is on by default: 4 rows where sizing to the model and device starts; false is off", () => {
    expect(batchingSettings(undefined)).toEqual({ maxRows: 4, sizeToDevice: true });
    expect(batchingSettings(false)).toBeNull();
  });

  it.each([
    [{ maxRows: 0 }, "batching.maxRows"],
    [{ maxRows: 2.5 }, "batching.maxRows"],
    [{ kvTokens: 3 }, "batching.kvTokens"],
    [{ prefillChunkTokens: 0 }, "batching.prefillChunkTokens"],
    [{ forward: "gpu" }, "batching.forward"],
  ])("%j is refused at createClient with a 400 naming %s", (option, param) => {
    let error: unknown;
    try {
      createClient({ batching: option as never });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ status: 400, param });
    expect(String((error as Error).message)).toContain(param);
  });
});
