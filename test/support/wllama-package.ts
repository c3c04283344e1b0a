/** Where `@wllama/wllama` (3.8.1, a dependency) is: the wllama engine's tests serve its wasm from there. */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const inRepo = fileURLToPath(new URL("../../node_modules/@wllama/wllama", import.meta.url));

/** The package folder, or null when it is not installed. */
export function wllamaPackageDir(): string | null {
  return existsSync(inRepo) ? inRepo : null;
}
