/**
 * The TVM scopes web-llm's code opens on a row's view (webllm-rows.ts),
 * counted, so that a prefill that ends with an error leaves none open.
 *
 * web-llm's prefill step opens a scope before it feeds the prompt and closes
 * it after. 0.2.86 closes it in a `finally`; 0.2.79 does not: when its
 * forward throws (an abort while the row's prompt waits for the steps, or the
 * step's forward failing on the device), the scope stays on tvmjs's one
 * stack, which every row shares, for good: one per failed prefill. The view's
 * runtime is the pipeline's, except that the scopes opened and closed through
 * it are counted; what a failed prefill left open is then closed by the rows.
 */

/** Scopes opened through a view's runtime and not yet closed through it. */
export interface ScopeCount {
  open: number;
}

/** The scope calls of tvmjs's runtime, as far as the count needs them. */
export interface ScopedRuntime {
  beginScope(): void;
  endScope(): void;
}

/**
 * `tvm` with its `beginScope`/`endScope` counted in `count`. Every other
 * member is the runtime's own, its methods called on the runtime itself (so a
 * method that sets a field of the runtime sets it there, not on the wrapper).
 */
export function countingScopes<T extends ScopedRuntime>(tvm: T, count: ScopeCount): T {
  const beginScope = () => {
    tvm.beginScope();
    count.open++;
  };
  const endScope = () => {
    tvm.endScope();
    count.open--;
  };
  // Bound once per method: web-llm reads the runtime's methods on every token (no function made per read).
  const bound = new WeakMap<object, unknown>();
  return new Proxy(tvm, {
    get(target, property) {
      if (property === "beginScope") return beginScope;
      if (property === "endScope") return endScope;
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      let method = bound.get(value);
      if (method === undefined) bound.set(value, (method = (value as (...args: unknown[]) => unknown).bind(target)));
      return method;
    },
    set(target, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
}

/**
 * Closes the `left` scopes a failed prefill left open on `tvm`. Called in a
 * turn of the pipeline's work: every scope on the stack is then an empty one
 * (rows' prefill steps waiting for the steps; forwards and samplers close
 * theirs within their turn), so closing the top ones frees nothing that is in use.
 */
export function closeLeftScopes(tvm: ScopedRuntime, count: ScopeCount, left: number): void {
  for (let i = 0; i < left; i++) {
    tvm.endScope();
    count.open--;
  }
}
