/**
 * What the emitter must know about a grammar before and while it writes it:
 * the rules each rule uses (an undefined one refused), which rules and nodes
 * can match the empty text or some non-empty text (fixpoints over the rules,
 * each node's answer computed once per pass and remembered), and that no rule
 * can begin with itself (left recursion aborts web-llm 0.2.79's xgrammar).
 * Apart from the EBNF writing (ebnf-writer.ts) because these are facts about
 * the grammar's language, whatever text spells it.
 *
 * CompileBudget is the work bound the two share: each node visited without a
 * remembered answer is one step; past MAX_COMPILE_STEPS, a refusal naming the
 * rule being worked on.
 */
import { GrammarError, type Grammar, type Node } from "./ir.js";
import { MAX_CHAIN } from "./limits.js";

/** The steps taken so far, bounded, and the rule they are taken for. */
export class CompileBudget {
  private steps = 0;
  /** The rule being worked on, for a refusal's message. */
  current: string;

  constructor(
    private readonly grammar: Grammar,
    private readonly maxSteps: number,
  ) {
    this.current = grammar.root;
  }

  /** One unit of work (a node visited without a remembered answer); past MAX_COMPILE_STEPS, a refusal naming the rule. */
  step(): void {
    if (++this.steps <= this.maxSteps) return;
    const where = this.grammar.rules.size === 1 ? "the expression" : `rule \`${this.current.replace(/\0/g, "")}\``;
    throw new GrammarError(`${where} takes more than ${this.maxSteps} steps to compile, over the bound; nest fewer groups or quantifiers`, "too_large");
  }
}

/** Rule names, each after the rules it uses (through cycles, in some order): one pass of a fixpoint settles an acyclic grammar. */
function dependenciesFirst(uses: Map<string, Set<string>>): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  for (const start of uses.keys()) {
    if (seen.has(start)) continue;
    seen.add(start);
    // Iterative DFS: a long chain of rules must not overflow the stack.
    const stack: Array<[string, Iterator<string>]> = [[start, uses.get(start)!.values()]];
    while (stack.length > 0) {
      const [name, it] = stack[stack.length - 1];
      const next = it.next();
      if (next.done) {
        order.push(name);
        stack.pop();
      } else if (!seen.has(next.value)) {
        seen.add(next.value);
        stack.push([next.value, uses.get(next.value)!.values()]);
      }
    }
  }
  return order;
}

/** A grammar's nullable and text-producing rules, checked for undefined rules, too many empty ones and left recursion on construction. */
export class GrammarAnalysis {
  private readonly nullable = new Map<string, boolean>();
  private readonly producesText = new Map<string, boolean>();
  /** Rule names in dependency order. */
  private readonly order: string[];
  // Per-node answers, each computed once. They read `nullable` and
  // `producesText`, so they are cleared while those are still being computed.
  private nullableMemo = new Map<Node, boolean>();
  private textMemo = new Map<Node, boolean>();

  constructor(
    private readonly grammar: Grammar,
    private readonly budget: CompileBudget,
  ) {
    const uses = new Map<string, Set<string>>();
    for (const [name, body] of grammar.rules) uses.set(name, this.rulesUsed(name, body));
    if (!grammar.rules.has(grammar.root)) throw new GrammarError(`the start rule \`${grammar.root}\` is not defined`, "invalid");
    this.order = dependenciesFirst(uses);
    this.fixpoint(this.nullable, (n) => this.isNullable(n));
    this.fixpoint(this.producesText, (n) => this.canProduceText(n));
    // A chain of 1 000 rules that can be empty aborted web-llm 0.2.79's xgrammar (300 did not).
    const empty = [...this.nullable.values()].filter(Boolean).length;
    if (empty > MAX_CHAIN) throw new GrammarError(`${empty} rules that can match the empty text, over the bound of ${MAX_CHAIN}`, "too_large");
    this.refuseLeftRecursion();
  }

  /** Whether rule `name` matches some non-empty text. */
  ruleProducesText(name: string): boolean {
    return this.producesText.get(name) ?? false;
  }

  /** The rules `node` uses (each node once: nodes can be shared); an undefined one is refused. */
  private rulesUsed(rule: string, body: Node): Set<string> {
    const used = new Set<string>();
    const seen = new Set<Node>();
    const visit = (node: Node): void => {
      if (seen.has(node)) return;
      seen.add(node);
      this.budget.step();
      switch (node.k) {
        case "ref":
          if (!this.grammar.rules.has(node.name)) throw new GrammarError(`rule \`${rule}\` uses \`${node.name}\`, which is not defined`, "invalid");
          used.add(node.name);
          return;
        case "seq":
        case "alt":
          for (const item of node.items) visit(item);
          return;
        case "rep":
          visit(node.item);
          return;
        default:
          return;
      }
    };
    this.budget.current = rule;
    visit(body);
    return used;
  }

  private fixpoint(map: Map<string, boolean>, of: (node: Node) => boolean): void {
    for (const name of this.order) map.set(name, false);
    for (let changed = true; changed; ) {
      changed = false;
      // A remembered `false` may be stale once a rule turns true; the last pass, which changes nothing, sees only current ones.
      this.nullableMemo = new Map();
      this.textMemo = new Map();
      for (const name of this.order) {
        this.budget.current = name;
        if (!map.get(name) && of(this.grammar.rules.get(name)!)) {
          map.set(name, true);
          changed = true;
        }
      }
    }
  }

  /** Whether the node can match the empty text. */
  isNullable(node: Node): boolean {
    const known = this.nullableMemo.get(node);
    if (known !== undefined) return known;
    this.budget.step();
    let empty: boolean;
    switch (node.k) {
      case "lit":
        empty = node.text === "";
        break;
      case "class":
      case "raw":
        empty = false;
        break;
      case "seq":
        empty = node.items.every((i) => this.isNullable(i));
        break;
      case "alt":
        empty = node.items.some((i) => this.isNullable(i));
        break;
      case "rep":
        empty = node.min === 0 || this.isNullable(node.item);
        break;
      case "ref":
        empty = this.nullable.get(node.name) ?? false;
        break;
    }
    this.nullableMemo.set(node, empty);
    return empty;
  }

  /** Whether the node matches some non-empty text (and matches anything at all). */
  private canProduceText(node: Node): boolean {
    const known = this.textMemo.get(node);
    if (known !== undefined) return known;
    this.budget.step();
    let text: boolean;
    switch (node.k) {
      case "lit":
        text = node.text !== "";
        break;
      case "class":
        text = node.ranges.length > 0;
        break;
      case "seq":
        text = node.items.every((i) => this.matchesSomething(i)) && node.items.some((i) => this.canProduceText(i));
        break;
      case "alt":
        text = node.items.some((i) => this.canProduceText(i));
        break;
      case "rep":
        text = (node.max ?? 1) > 0 && this.canProduceText(node.item);
        break;
      case "ref":
        text = this.producesText.get(node.name) ?? false;
        break;
      case "raw":
        text = true;
        break;
    }
    this.textMemo.set(node, text);
    return text;
  }

  private matchesSomething(node: Node): boolean {
    return this.isNullable(node) || this.canProduceText(node);
  }

  /** Adds to `into` the rules that can come first in the node's text (after items that can be empty). */
  private firstRules(node: Node, into: Set<string>, seen: Set<Node>): void {
    if (seen.has(node)) return;
    seen.add(node);
    this.budget.step();
    switch (node.k) {
      case "seq":
        for (const item of node.items) {
          this.firstRules(item, into, seen);
          if (!this.isNullable(item)) return;
        }
        return;
      case "alt":
        for (const item of node.items) this.firstRules(item, into, seen);
        return;
      case "rep":
        this.firstRules(node.item, into, seen);
        return;
      case "ref":
        into.add(node.name);
        return;
      default:
        return;
    }
  }

  private refuseLeftRecursion(): void {
    const edges = new Map<string, Set<string>>();
    for (const [name, body] of this.grammar.rules) {
      const first = new Set<string>();
      this.budget.current = name;
      this.firstRules(body, first, new Set());
      edges.set(name, first);
    }
    const state = new Map<string, 1 | 2>();
    const visit = (start: string): void => {
      // Iterative DFS: a long chain of rules must not overflow the stack.
      const stack: Array<[string, Iterator<string>]> = [[start, edges.get(start)!.values()]];
      state.set(start, 1);
      while (stack.length > 0) {
        const [name, it] = stack[stack.length - 1];
        const next = it.next();
        if (next.done) {
          state.set(name, 2);
          stack.pop();
          continue;
        }
        const s = state.get(next.value);
        if (s === 1) throw new GrammarError(`left recursion (rule \`${next.value}\` can begin with itself); write the repetition with \`*\` or \`+\` instead`);
        if (s === undefined) {
          state.set(next.value, 1);
          stack.push([next.value, edges.get(next.value)!.values()]);
        }
      }
    };
    for (const name of edges.keys()) if (!state.has(name)) visit(name);
  }
}
