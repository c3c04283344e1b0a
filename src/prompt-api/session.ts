/**
 * A Prompt API session: prompt(), promptStreaming(), append(), clone(),
 * destroy(), measureContextUsage() and the context figures, over a
 * Conversation. Operations run one at a time in call order; one aborted while
 * it waits leaves the queue at once, one aborted while it runs leaves no trace
 * in the history (only evictions it caused stay, as the explainer says) and
 * does not hold up the operations after it, even when it never ends.
 */
import { Conversation, type TurnReport } from "./conversation.js";
import { planConstraint, withInstruction, type ConstraintPlan } from "./constraint.js";
import { abortReason, domError, quotaExceeded, toDomException } from "./errors.js";
import { checkInput, convertInput, type InputRules } from "./messages.js";
import type {
  LanguageModelAppendOptions,
  LanguageModelCloneOptions,
  LanguageModelMessage,
  LanguageModelPrompt,
  LanguageModelPromptOptions,
  LanguageModelSamplingMode,
} from "./types.js";
import type { ChatMessage } from "../protocol/types.js";

/** Only the library constructs sessions (`new LanguageModel()` is a TypeError, as in Chrome). */
export const CONSTRUCT = Symbol("construct");

export interface SessionSetup {
  conversation: Conversation;
  expected: ReadonlySet<string>;
  contextUsage: number;
  /** Nothing has been sent yet: a system message may still come first. */
  firstSequence: boolean;
}

interface PreparedPrompt {
  checked: LanguageModelMessage[];
  plan: ConstraintPlan;
}

type Handler = ((event: Event) => unknown) | null;

export class PromptSession extends EventTarget {
  #conversation: Conversation;
  #expected: ReadonlySet<string>;
  #usage: number;
  #firstSequence: boolean;
  #tail: Promise<unknown> = Promise.resolve();
  /** Aborts every running and waiting operation on destroy(). */
  #life = new AbortController();
  #destroyed = false;
  #onOverflow: Handler = null;
  #handlerListening = false;
  /** What the last model request of this session reported (usage, x_webgpu): for tests and diagnostics. */
  #report: TurnReport | null = null;

  constructor(token: symbol, setup: SessionSetup) {
    if (token !== CONSTRUCT) throw new TypeError("Illegal constructor: use LanguageModel.create().");
    super();
    this.#conversation = setup.conversation;
    this.#expected = setup.expected;
    this.#usage = setup.contextUsage;
    this.#firstSequence = setup.firstSequence;
  }

  get lastReport(): TurnReport | null {
    return this.#report;
  }
  get contextUsage(): number {
    return this.#usage;
  }
  get inputUsage(): number {
    return this.#usage;
  }
  get contextWindow(): number {
    return this.#conversation.config.contextWindow;
  }
  get inputQuota(): number {
    return this.contextWindow;
  }
  get topK(): number {
    return this.#conversation.config.sampling.topK;
  }
  get temperature(): number {
    return this.#conversation.config.sampling.temperature;
  }
  get samplingMode(): LanguageModelSamplingMode | undefined {
    return this.#conversation.config.sampling.mode;
  }
  get oncontextoverflow(): Handler {
    return this.#onOverflow;
  }
  set oncontextoverflow(handler: Handler) {
    // As an event handler attribute: its listener takes its place among the others when first set.
    if (!this.#handlerListening) {
      this.#handlerListening = true;
      this.addEventListener("contextoverflow", (event) => this.#onOverflow?.call(this, event));
    }
    this.#onOverflow = typeof handler === "function" ? handler : null;
  }
  get onquotaoverflow(): Handler {
    return this.#onOverflow;
  }
  set onquotaoverflow(handler: Handler) {
    this.oncontextoverflow = handler;
  }

  prompt(input: LanguageModelPrompt, options: LanguageModelPromptOptions = {}): Promise<string> {
    return this.#run(options.signal, () => this.#prepare(input, options), (prepared, signal) => this.#respond(prepared, signal));
  }

  promptStreaming(input: LanguageModelPrompt, options: LanguageModelPromptOptions = {}): ReadableStream<string> {
    const cancel = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, cancel.signal]) : cancel.signal;
    let enqueue: (text: string) => void = () => {};
    return new ReadableStream<string>({
      start: (controller) => {
        enqueue = (text) => controller.enqueue(text);
        this.#run(signal, () => this.#prepare(input, options), (prepared, runSignal) => this.#respond(prepared, runSignal, (text) => enqueue(text))).then(
          () => controller.close(),
          (error) => {
            if (!cancel.signal.aborted) controller.error(error);
          },
        );
      },
      // The reader gave up: stop generating; the turn is not kept.
      cancel: (reason) => cancel.abort(reason ?? domError("AbortError", "The stream was cancelled.")),
    });
  }

  async append(input: LanguageModelPrompt, options: LanguageModelAppendOptions = {}): Promise<undefined> {
    await this.#run(
      options.signal,
      () => checkInput(input, this.#rules("append")),
      async (checked, signal) => {
        const messages = await convertInput(checked);
        await this.#makeRoom(messages, signal);
        if (signal.aborted) throw abortReason(signal);
        this.#conversation.groups.push(messages);
        this.#firstSequence = false;
        await this.#recount();
      },
    );
    return undefined;
  }

  measureContextUsage(input: LanguageModelPrompt, options: LanguageModelPromptOptions = {}): Promise<number> {
    const signal = options.signal;
    return this.#guard(signal, async () => {
      const prepared = this.#prepare(input, options);
      const messages = await convertInput(prepared.checked);
      return this.#conversation.count(withInstruction(messages, prepared.plan.instruction), signal, false);
    });
  }

  measureInputUsage(input: LanguageModelPrompt, options: LanguageModelPromptOptions = {}): Promise<number> {
    return this.measureContextUsage(input, options);
  }

  /** A new session with this one's options and history; their shared prefix stays in the prompt cache, so the clone does not prefill it again. */
  clone(options: LanguageModelCloneOptions = {}): Promise<PromptSession> {
    return this.#run(
      options.signal,
      () => undefined,
      async () => {
        const Class = this.constructor as new (token: symbol, setup: SessionSetup) => PromptSession;
        return new Class(CONSTRUCT, { conversation: this.#conversation.copy(), expected: this.#expected, contextUsage: this.#usage, firstSequence: this.#firstSequence });
      },
    );
  }

  destroy(reason?: unknown): undefined {
    if (this.#destroyed) return undefined;
    this.#destroyed = true;
    this.#life.abort(reason ?? domError("AbortError", "The session was destroyed."));
    return undefined;
  }

  // ── internals ──

  #rules(where: InputRules["where"]): InputRules {
    return { where, firstSequence: this.#firstSequence, expected: this.#expected };
  }

  /** prompt(), promptStreaming(), measureContextUsage(): the input checked and the constraint planned. */
  #prepare(input: LanguageModelPrompt, options: LanguageModelPromptOptions): PreparedPrompt {
    return { checked: checkInput(input, this.#rules("prompt")), plan: planConstraint(options) };
  }

  async #respond(prepared: PreparedPrompt, signal: AbortSignal, onText?: (text: string) => void): Promise<string> {
    const input = withInstruction(await convertInput(prepared.checked), prepared.plan.instruction);
    await this.#makeRoom(input, signal);
    const turn = await this.#conversation.turn(input, prepared.plan.responseFormat, signal, (report) => (this.#report = report), onText);
    prepared.plan.check(turn.text, turn.cut);
    if (signal.aborted) throw abortReason(signal);
    this.#conversation.groups.push([...input, ...turn.messages]);
    this.#firstSequence = false;
    await this.#recount();
    return turn.text;
  }

  /** Evicts the oldest groups until history + `input` fits; a QuotaExceededError (nothing evicted) when even the initial prompts + input do not. */
  async #makeRoom(input: ChatMessage[], signal: AbortSignal): Promise<void> {
    const conversation = this.#conversation;
    const window = this.contextWindow;
    let needed = await conversation.count([...conversation.history(), ...input], signal);
    if (needed < window) return;
    const floor = await conversation.count([...conversation.initial, ...input], signal);
    if (floor >= window) {
      const alone = await conversation.count(input, signal, false);
      throw quotaExceeded(alone, Math.max(0, window - this.#usage));
    }
    while (needed >= window && conversation.groups.length > 0) {
      // Work whose caller gave up may still be running after the queue moved on: it changes nothing once aborted.
      if (signal.aborted) throw abortReason(signal);
      conversation.groups.shift();
      needed = await conversation.count([...conversation.history(), ...input], signal);
    }
    this.#usage = await conversation.count(conversation.history(), signal);
    this.dispatchEvent(new Event("contextoverflow"));
    this.dispatchEvent(new Event("quotaoverflow"));
  }

  /** After a committed turn: a count that fails (the worker went away) does not fail the turn; the last request's token figures stand in. */
  async #recount(): Promise<void> {
    try {
      this.#usage = await this.#conversation.count(this.#conversation.history());
    } catch {
      const usage = this.#report?.usage;
      if (usage) this.#usage = usage.prompt_tokens + usage.completion_tokens;
    }
  }

  /** Runs `work` now (not queued) with the destroy and abort checks and error translation. */
  async #guard<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    if (this.#destroyed) throw domError("InvalidStateError", "The session has been destroyed.");
    if (signal?.aborted) throw abortReason(signal);
    try {
      return await work();
    } catch (error) {
      throw toDomException(error, signal);
    }
  }

  /**
   * Queues an operation: `check` runs at once (bad input rejects before
   * queueing), `work` when every earlier operation has settled. Abort (the
   * caller's signal, or destroy()) rejects at once, queued or running.
   */
  #run<C, T>(signal: AbortSignal | undefined, check: () => C, work: (checked: C, signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.#destroyed) return Promise.reject(domError("InvalidStateError", "The session has been destroyed."));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    let checked: C;
    try {
      checked = check();
    } catch (error) {
      return Promise.reject(error);
    }
    const combined = signal ? AbortSignal.any([signal, this.#life.signal]) : this.#life.signal;
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(combined.reason ?? domError("AbortError", "The operation was aborted."));
      if (combined.aborted) fail();
      else combined.addEventListener("abort", fail, { once: true });
    });
    aborted.catch(() => {});
    const running = this.#tail.then(() => {
      if (combined.aborted) throw combined.reason;
      return work(checked, combined);
    });
    // The next operation starts once this one has stopped, or once its caller gave up on it: aborted work
    // that does not end (a tool that never returns) must not wedge the session. Aborted work changes
    // nothing after the abort (#respond, append and #makeRoom check the signal before every change).
    this.#tail = Promise.race([running, aborted]).catch(() => {});
    const translated = running.catch((error) => {
      throw toDomException(error, combined);
    });
    return Promise.race([translated, aborted]);
  }
}
