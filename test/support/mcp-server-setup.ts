/**
 * vitest globalSetup (browser project): two MCP servers for the Chromium tests
 * (test/browser/mcp-worker.test.ts), one answering with CORS headers and one
 * without, their URLs handed over by `inject("mcpCors")` / `inject("mcpNoCors")`.
 */
import type { TestProject } from "vitest/node";
import { boundedTeardown } from "./bounded-teardown.js";
import { startMcpFixture } from "./mcp-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    mcpCors: string;
    mcpNoCors: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cors = await startMcpFixture({ cors: true, requireHeader: ["x-api-key", "browser-k3y"] });
  const bare = await startMcpFixture({ cors: false });
  project.provide("mcpCors", cors.url);
  project.provide("mcpNoCors", bare.url);
  return boundedTeardown("MCP servers", async () => {
    await cors.close();
    await bare.close();
  });
}
