/** vitest globalSetup (browser project): starts the artifact server and hands its URL to tests via `inject("artifactServer")`. */
import type { TestProject } from "vitest/node";
import { boundedTeardown } from "./bounded-teardown.js";
import { startArtifactServer } from "./artifact-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    artifactServer: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startArtifactServer();
  project.provide("artifactServer", server.url);
  return boundedTeardown("artifact server", () => server.close());
}
