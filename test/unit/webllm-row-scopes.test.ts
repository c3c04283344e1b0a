/**
 * The rows' view of tvmjs's runtime (webllm-row-scopes.ts): scopes counted,
 * every other member the runtime's own. web-llm reads the runtime's methods
 * on the per-token path, so a method is bound once, not on every read.
 */
import { describe, expect, it } from "vitest";
import { countingScopes, type ScopeCount } from "../../src/engine/webllm/batching/webllm-row-scopes.js";

class Runtime {
  depth = 0;
  device = "swiftshader";
  beginScope(): void {
    this.depth++;
  }
  endScope(): void {
    this.depth--;
  }
  setDevice(name: string): void {
    this.device = name;
  }
}

describe("the rows' counting view of the runtime", () => {
  it("counts the scopes opened and closed through it, on the runtime's own stack", () => {
    const runtime = new Runtime();
    const count: ScopeCount = { open: 0 };
    const view = countingScopes(runtime, count);
    view.beginScope();
    view.beginScope();
    view.endScope();
    expect([count.open, runtime.depth]).toEqual([1, 1]);
  });

  it("binds each method once: read twice, the same function, called on the runtime itself", () => {
    const runtime = new Runtime();
    const view = countingScopes(runtime, { open: 0 });
    expect(view.setDevice).toBe(view.setDevice);
    const setDevice = view.setDevice;
    setDevice("gpu");
    expect(runtime.device).toBe("gpu");
  });

  it("a method the runtime replaces is read anew", () => {
    const runtime = new Runtime();
    const view = countingScopes(runtime, { open: 0 });
    const before = view.setDevice;
    runtime.setDevice = function (this: Runtime, name: string) {
      this.device = `replaced ${name}`;
    };
    expect(view.setDevice).not.toBe(before);
    view.setDevice("gpu");
    expect(runtime.device).toBe("replaced gpu");
  });
});
