/**
 * Where `@wllama/wllama` (3.8.1) is on this machine: in node_modules once it is a
 * dependency; until then a copy installed outside the repository
 * (`cd /tmp/wllama-mod && npm install @wllama/wllama@3.8.1`), which vite.config.ts
 * aliases for the browser tests. Remove the fallback when package.json has it.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const inRepo = fileURLToPath(new URL("../../node_modules/@wllama/wllama", import.meta.url));
const outside = "/tmp/wllama-mod/node_modules/@wllama/wllama";

/** The package folder, or null when neither copy exists. */
export function wllamaPackageDir(): string | null {
  if (existsSync(inRepo)) return inRepo;
  return existsSync(outside) ? outside : null;
}

/** True when the package is only available outside node_modules (the alias is needed). */
export function wllamaOutsideRepo(): boolean {
  return !existsSync(inRepo) && existsSync(outside);
}
