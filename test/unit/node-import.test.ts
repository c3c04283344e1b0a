/** Importing the library in Node must not touch browser globals (SSR, tests, CLIs). */
import { afterEach, describe, expect, it, vi } from "vitest";

const BROWSER_GLOBALS = ["window", "document", "self", "navigator", "Worker", "indexedDB", "caches", "localStorage"];

describe("import in Node", () => {
  afterEach(() => {
    for (const name of BROWSER_GLOBALS) delete (globalThis as Record<string, unknown>)[`__touched_${name}`];
  });

  it("reads no browser global while importing index, testing and prompt-api", async () => {
    const touched: string[] = [];
    const saved = new Map<string, PropertyDescriptor | undefined>();
    for (const name of BROWSER_GLOBALS) {
      saved.set(name, Object.getOwnPropertyDescriptor(globalThis, name));
      Object.defineProperty(globalThis, name, {
        configurable: true,
        get() {
          touched.push(name);
          return undefined;
        },
      });
    }
    try {
      vi.resetModules();
      const index = await import("../../src/index.js");
      const testing = await import("../../src/testing.js");
      const promptApi = await import("../../src/prompt-api/index.js");
      expect(typeof promptApi.installPromptApi).toBe("function");
      expect(typeof index.createClient).toBe("function");
      expect(typeof testing.createScriptedEngine).toBe("function");
    } finally {
      for (const [name, descriptor] of saved) {
        if (descriptor) Object.defineProperty(globalThis, name, descriptor);
        else delete (globalThis as Record<string, unknown>)[name];
      }
    }
    expect(touched).toEqual([]);
  });
});
