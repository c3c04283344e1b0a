/** vitest globalSetup (browser project): starts the GGUF server and hands its URL to tests via `inject("ggufServer")`. */
import type { TestProject } from "vitest/node";
import { boundedTeardown } from "./bounded-teardown.js";
import { startGgufServer } from "./gguf-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    ggufServer: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startGgufServer();
  project.provide("ggufServer", server.url);
  return boundedTeardown("GGUF server", () => server.close());
}
