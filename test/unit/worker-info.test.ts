/** Where the engine runs, as an app can read it: in this thread, `worker: false` says "none". */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

describe("client.workerInfo() and gpu.info().worker", () => {
  it("report no worker for an in-process client", async () => {
    const client = createClient({ worker: false, engine: createScriptedEngine({ replies: [] }) });
    expect(await client.workerInfo()).toEqual({ worker: "none", tabs: 1 });
    expect((await client.gpu.info()).worker).toBe("none");
  });
});
