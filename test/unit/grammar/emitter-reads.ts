/**
 * The emitter's work, counted: a grammar's nodes behind Proxies that count
 * every read of their fields. An exponential walk multiplies exactly these,
 * and the count does not depend on the machine's load.
 */
import { toEbnf, type EmitOptions } from "../../../src/grammar/emit.js";
import { GrammarError, type Grammar } from "../../../src/grammar/ir.js";

/** The grammar with its nodes behind Proxies that count the emitter's reads of their fields. */
function counted(grammar: Grammar): { grammar: Grammar; reads: () => number } {
  let reads = 0;
  const proxies = new WeakMap<object, object>();
  const wrap = <T,>(value: T): T => {
    if (typeof value !== "object" || value === null) return value;
    let proxy = proxies.get(value);
    if (!proxy) {
      const isNode = "k" in value;
      proxy = new Proxy(value, {
        get(target, key, receiver) {
          if (isNode) {
            reads++;
            // code-point ranges are data, not nodes: handed out as they are
            if (key === "ranges") return Reflect.get(target, key, receiver);
          }
          return wrap(Reflect.get(target, key, receiver));
        },
      });
      proxies.set(value, proxy);
    }
    return proxy as T;
  };
  const rules = new Map([...grammar.rules].map(([name, node]) => [name, wrap(node)]));
  return { grammar: { rules, root: grammar.root }, reads: () => reads };
}

/** Reads of grammar nodes while compiling it (to EBNF or to a refusal). */
export function work(grammar: Grammar, options: EmitOptions = {}): number {
  const probe = counted(grammar);
  try {
    toEbnf(probe.grammar, options);
  } catch (error) {
    if (!(error instanceof GrammarError)) throw error;
  }
  return probe.reads();
}

