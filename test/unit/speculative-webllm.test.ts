/**
 * Speculative decoding on web-llm's pipeline (src/engine/speculative/
 * webllm-speculative.ts) against a stand-in that decodes
 * (support/fake-webllm-decoder.ts): web-llm 0.2.79's generation loop over a
 * simulated paged KV cache, with a model whose logits are a function of what
 * the sequence holds. Every request runs twice — speculation on and off, on
 * fresh pipelines — and must give the same tokens, text, finish reason,
 * logprobs and cache contents, in fewer forward passes where drafts fit.
 */
import { describe, expect, it } from "vitest";
import { WebLlmSpeculative, type SpeculativePipeline, type SpeculativeRequest } from "../../src/engine/webllm/speculative/webllm-speculative.js";
import type { SpeculationUsage as SpeculativeCounts } from "../../src/engine/speculative/counters.js";
import { WebLlmPromptCache, type WebLlmPipeline } from "../../src/engine/webllm/prompt-cache/webllm-binding.js";
import { WebLlmCacheSlot } from "../../src/engine/webllm/prompt-cache/webllm-cache-slot.js";
import { WebLlmSpeculativeSlot } from "../../src/engine/webllm/speculative/webllm-speculative-slot.js";
import type { EngineRequest } from "../../src/engine/types.js";
import { decodeIds, encodeText, FakeDecodingPipeline, TemplateMatcher, type GenConfig, type TemplateGrammar } from "./support/fake-webllm-decoder.js";

interface Setup {
  pipe: FakeDecodingPipeline;
  spec: WebLlmSpeculative;
  cache: WebLlmPromptCache | null;
}

function setup(options: { promptCache?: boolean; batchPrefill?: boolean; webllm?: "0.2.79" | "0.2.86"; device?: { single(tokens: number): number } } = {}): Setup {
  const pipe = new FakeDecodingPipeline({ batchPrefill: options.batchPrefill, webllm: options.webllm, device: options.device });
  // Speculation hooks first, the prompt cache on top (as webllm-cache-slot.ts attaches them).
  // Decode steps timed on the stand-in's simulated device (GPU-like: a verify costs about a decode).
  const spec = new WebLlmSpeculative(pipe as unknown as SpeculativePipeline, true, { now: () => pipe.clock });
  const cache = options.promptCache ? new WebLlmPromptCache(pipe as unknown as WebLlmPipeline, { budgetTokens: 4096, maxSequences: 4, pageSize: 1 }) : null;
  if (cache) spec.setSequenceInfo(cache);
  return { pipe, spec, cache };
}

interface Outcome {
  tokens: number[];
  text: string;
  finish: string | null;
  logprobs: unknown[];
  counts: SpeculativeCounts | null;
  /** What the request's KV sequence holds afterwards. */
  held: number[];
  verifies: number[];
  decodes: number;
}

async function run(s: Setup, prompt: string, config: GenConfig, request: Partial<SpeculativeRequest> = {}, options: { abortAfter?: number } = {}): Promise<Outcome> {
  const { pipe, spec, cache } = s;
  spec.begin({ enabled: true, ...request });
  cache?.begin({});
  const verifiesBefore = pipe.verifies.length;
  const decodesBefore = pipe.passes.decode;
  if (options.abortAfter !== undefined) {
    // web-llm's interruptGenerate: triggerStop between decode steps
    const step = pipe.decodeStep;
    let n = 0;
    pipe.decodeStep = async (c) => {
      await step.call(pipe, c);
      if (++n === options.abortAfter) pipe.triggerStop();
    };
  }
  await pipe.generate(encodeText(prompt), config, !!cache);
  const seq = cache?.sequence() ?? 0;
  expect(pipe.held(seq)!.length, "once the reply stops, the sequence holds no draft token").toBe(pipe.filledKVCacheLength);
  const counts = spec.end();
  cache?.end("done");
  const held = pipe.held(seq) as number[];
  expect(held.length, "the sequence holds exactly what was accepted").toBe(pipe.filledKVCacheLength);
  if (cache) for (const sq of cache.policy!.sequences()) expect(pipe.held(sq.id), `sequence ${sq.id} holds what the prompt cache believes`).toEqual(sq.tokens);
  return {
    tokens: pipe.outputIds.slice(),
    text: pipe.outputMessage,
    finish: pipe.finishReason,
    logprobs: pipe.tokenLogprobArray.slice(),
    counts,
    held,
    verifies: pipe.verifies.slice(verifiesBefore),
    decodes: pipe.passes.decode - decodesBefore,
  };
}

/** The same request with speculation on and off: identical output and cache; the counts add up. */
async function compare(prompt: string, config: GenConfig, request: Partial<SpeculativeRequest> = {}, options: { abortAfter?: number } = {}) {
  const on = await run(setup(), prompt, config, request, options);
  const off = await run(setup(), prompt, config, { enabled: false }, options);
  expect(on.tokens, "same tokens").toEqual(off.tokens);
  expect(on.text, "same text").toBe(off.text);
  expect(on.finish, "same finish").toBe(off.finish);
  expect(on.logprobs, "same logprobs").toEqual(off.logprobs);
  expect(on.held, "the cache holds what it holds without speculation").toEqual(off.held);
  expect(off.verifies).toEqual([]);
  const c = on.counts as SpeculativeCounts;
  expect(c.decodePasses, "passes = decode forwards + verify forwards").toBe(on.decodes + on.verifies.length);
  expect(c.draftTokens, "drafts = verify tokens minus the fed token").toBe(on.verifies.reduce((n, v) => n + v - 1, 0));
  expect(off.counts?.decodePasses, "without speculation: one pass per token after the first").toBe(off.decodes);
  return { on, off };
}

// The model copies what followed the last two tokens earlier in its context: n-gram drafts fit it.
const REPEATING = "thecatsatonthematthecatsatonthemat";

describe("speculative decoding on web-llm's pipeline: output unchanged", () => {
  it("greedy: the same tokens in fewer passes when the reply repeats its context", async () => {
    const { on, off } = await compare(REPEATING, { max_tokens: 40 });
    expect(on.tokens.length).toBe(40);
    expect(on.counts!.acceptedDraftTokens).toBeGreaterThan(10);
    expect(on.counts!.decodePasses).toBeLessThan(off.counts!.decodePasses / 2);
    expect(on.counts!.decodePasses + on.counts!.acceptedDraftTokens, "every step is a pass or an accepted draft token").toBe(39);
  });

  it("a prediction equal to the reply: a handful of passes, its tokens counted as accepted", async () => {
    const base = await run(setup(), "abcxyz", { max_tokens: 32 }, { enabled: false });
    const { on } = await compare("abcxyz", { max_tokens: 32 }, { prediction: base.text });
    expect(on.counts!.decodePasses / on.tokens.length).toBeLessThanOrEqual(0.35);
    // OpenAI's counts: the prediction's tokens that appeared in the output, and the rest
    expect(on.counts!.acceptedPredictionTokens).toBe(32);
    expect(on.counts!.rejectedPredictionTokens).toBe(0);
  });

  it("a prediction that diverges: same output, its rejected tokens rolled back and counted", async () => {
    const base = await run(setup(), "abcxyz", { max_tokens: 24 }, { enabled: false });
    const { on } = await compare("abcxyz", { max_tokens: 24 }, { prediction: base.text.slice(0, 6) + "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq" });
    expect(on.counts!.acceptedPredictionTokens).toBeGreaterThanOrEqual(4);
    expect(on.counts!.draftTokens).toBeGreaterThan(0);
    expect(on.counts!.rejectedPredictionTokens).toBeGreaterThan(0);
    expect(on.counts!.acceptedPredictionTokens).toBeLessThan(on.counts!.draftTokens);
  });

  it("max_tokens exactly, with a prediction longer than the limit", async () => {
    const base = await run(setup(), REPEATING, { max_tokens: 40 }, { enabled: false });
    const { on } = await compare(REPEATING, { max_tokens: 13 }, { prediction: base.text });
    expect(on.tokens.length).toBe(13);
    expect(on.finish).toBe("length");
    // the draft never reaches past the limit: a verify of k drafts leaves room for k + 1 tokens
    expect(on.counts!.draftTokens - on.counts!.acceptedDraftTokens).toBe(0);
  });

  it("a stop string inside an accepted draft: nothing after it, the draft's rest popped", async () => {
    const base = await run(setup(), REPEATING, { max_tokens: 40 }, { enabled: false });
    const stop = base.text.slice(17, 19);
    const { on } = await compare(REPEATING, { max_tokens: 40, stop: [stop] }, { prediction: base.text });
    expect(on.finish).toBe("stop");
    expect(on.text.includes(stop)).toBe(false);
    expect(on.tokens.length).toBeLessThan(40);
  });

  it("a stop token sampled at a draft position: not emitted, not kept", async () => {
    const base = await run(setup(), REPEATING, { max_tokens: 40 }, { enabled: false });
    const stopToken = base.tokens[21];
    const withStop = async (enabled: boolean) => {
      const s = setup();
      s.pipe.stopTokens = [stopToken];
      return run(s, REPEATING, { max_tokens: 40 }, { enabled, prediction: base.text });
    };
    const on = await withStop(true);
    const off = await withStop(false);
    expect(on.tokens).toEqual(off.tokens);
    expect(on.finish).toBe("stop");
    expect(on.tokens.includes(stopToken)).toBe(false);
    expect(on.held).toEqual(off.held);
    expect(on.counts!.acceptedDraftTokens).toBeGreaterThan(0);
  });

  it("presence/frequency and repetition penalties apply as if decoded one by one", async () => {
    const base = await run(setup(), REPEATING, { max_tokens: 30 }, { enabled: false });
    for (const penalties of [{ presence_penalty: 2, frequency_penalty: 2 }, { repetition_penalty: 4 }]) {
      const { on, off } = await compare(REPEATING, { max_tokens: 30, ...penalties }, { prediction: base.text });
      expect(off.tokens, "the penalties change the reply").not.toEqual(base.tokens);
      expect(on.counts!.draftTokens).toBeGreaterThan(0);
    }
  });

  it("logprobs and top_logprobs for every token, accepted draft tokens included", async () => {
    const { on } = await compare(REPEATING, { max_tokens: 30, logprobs: true, top_logprobs: 3 });
    expect(on.logprobs).toHaveLength(30);
    expect(on.counts!.acceptedDraftTokens).toBeGreaterThan(0);
  });

  it("a grammar: drafted tokens it forbids are never sampled nor shown to the matcher", async () => {
    const base = await run(setup(), REPEATING, { max_tokens: 30 }, { enabled: false });
    // The stand-in's matcher throws on any token it does not allow: a draft fed to it would fail the request.
    const { on, off } = await compare(REPEATING, { max_tokens: 30, grammar: true }, { prediction: base.text });
    expect(off.tokens).not.toEqual(base.tokens);
    expect(on.counts!.draftTokens).toBeGreaterThan(0);
  });

  it("sampling with a seed: the same reply, one RNG draw per token as without speculation", async () => {
    for (const seed of [1, 2, 3]) {
      const base = await run(setup(), REPEATING, { max_tokens: 30 }, { enabled: false });
      const { on } = await compare(REPEATING, { max_tokens: 30, temperature: 0.7, seed, logprobs: true, top_logprobs: 2 }, { prediction: base.text });
      expect(on.counts!.draftTokens).toBeGreaterThan(0);
    }
  });

  it("an abort between steps pops the pending draft", async () => {
    const base = await run(setup(), REPEATING, { max_tokens: 40 }, { enabled: false });
    const { on } = await compare(REPEATING, { max_tokens: 40 }, { prediction: base.text }, { abortAfter: 3 });
    expect(on.finish).toBe("abort");
    expect(on.tokens.length).toBe(4);
  });
});

describe("speculative decoding with the prompt cache", () => {
  it("web-llm 0.2.86's decode step (forwardDecodeToken, asynchronous getInputData): the same tokens and exact sequences", async () => {
    const base = await run(setup({ promptCache: true, webllm: "0.2.86" }), REPEATING, { max_tokens: 30, logprobs: true, top_logprobs: 2 }, { enabled: false });
    const on = await run(setup({ promptCache: true, webllm: "0.2.86" }), REPEATING, { max_tokens: 30, logprobs: true, top_logprobs: 2 }, { prediction: base.text });
    expect(on.tokens).toEqual(base.tokens);
    expect(on.logprobs).toEqual(base.logprobs);
    expect(on.held).toEqual(base.held);
    expect(on.counts!.decodePasses).toBeLessThan(10);
  });

  it("a regenerate drafts from the reply the cache holds after the same prompt; sequences stay exact", async () => {
    const s = setup({ promptCache: true });
    const plain = setup({ promptCache: true });
    const prompt = "hellothereworld";
    const first = await run(s, prompt, { max_tokens: 30 });
    const firstPlain = await run(plain, prompt, { max_tokens: 30 }, { enabled: false });
    expect(first.tokens).toEqual(firstPlain.tokens);
    const again = await run(s, prompt, { max_tokens: 30 });
    const againPlain = await run(plain, prompt, { max_tokens: 30 }, { enabled: false });
    expect(again.tokens).toEqual(againPlain.tokens);
    expect(again.held).toEqual(againPlain.held);
    expect(again.counts!.decodePasses / again.tokens.length, "the previous reply is the draft").toBeLessThanOrEqual(0.3);
    // next turn: extends the sequence speculation wrote to
    const next = prompt + decodeIds(again.tokens) + "andmore";
    const third = await run(s, next, { max_tokens: 20 });
    const thirdPlain = await run(plain, next, { max_tokens: 20 }, { enabled: false });
    expect(third.tokens).toEqual(thirdPlain.tokens);
    expect(third.held).toEqual(thirdPlain.held);
  });
});

describe("speculative decoding: where it does not apply", () => {
  it("a library without batch_prefill decodes as today, passes still counted", async () => {
    const s = setup({ batchPrefill: false });
    expect(s.spec.unsupported).toBe("model library without batch_prefill");
    const out = await run(s, REPEATING, { max_tokens: 20 }, { prediction: "thecatsatonthemat" });
    expect(out.verifies).toEqual([]);
    expect(out.counts).toMatchObject({ decodePasses: 19, draftTokens: 0, acceptedDraftTokens: 0 });
  });

  it("sliding-window and recurrent-state models are left alone", () => {
    const sliding = new FakeDecodingPipeline();
    sliding.slidingWindowSize = 1024;
    expect(new WebLlmSpeculative(sliding as unknown as SpeculativePipeline).unsupported).toBe("sliding-window model");
    const hybrid = new FakeDecodingPipeline() as FakeDecodingPipeline & { rnnState?: unknown };
    hybrid.rnnState = {};
    expect(new WebLlmSpeculative(hybrid as unknown as SpeculativePipeline).unsupported).toBe("model with recurrent state");
  });
});

describe("speculative decoding through the web-llm cache slot (as the engine attaches it)", () => {
  function slotSetup() {
    const pipe = new FakeDecodingPipeline();
    const slot = new WebLlmCacheSlot(undefined, new WebLlmSpeculativeSlot());
    slot.attach(pipe, { budgetTokens: 4096, maxSequences: 4 });
    return { pipe, slot };
  }
  const request = (extra: Partial<EngineRequest> = {}): EngineRequest => ({ model: "m", messages: [], sampling: { stop: [], max_tokens: 30 }, thinking: { enabled: false }, continueFinalMessage: false, ...extra });
  const policyHolds = (pipe: FakeDecodingPipeline, slot: WebLlmCacheSlot) => {
    for (const s of slot.current!.policy!.sequences()) expect(pipe.held(s.id), `sequence ${s.id} holds what the prompt cache believes`).toEqual(s.tokens);
  };

  it("hooks below the prompt cache: the cache records one token per step, and the usage carries the counts", async () => {
    const { pipe, slot } = slotSetup();
    slot.begin(request({ prediction: undefined }));
    await pipe.generate(encodeText(REPEATING), { max_tokens: 30 }, true);
    slot.end("stop", true);
    const counts = slot.decodeCounts!;
    expect(counts.acceptedDraftTokens).toBeGreaterThan(0);
    expect(counts.decodePasses + counts.acceptedDraftTokens).toBe(29);
    expect(slot.current!.policy!.sequences().map((s) => s.tokens.length), "the sequence is kept: prompt and every fed token").toEqual([REPEATING.length + 29]);
    policyHolds(pipe, slot);
    const verifies = pipe.verifies.length;
    slot.begin(request({ speculative: false }));
    await pipe.generate(encodeText(REPEATING), { max_tokens: 30 }, true);
    slot.end("stop", true);
    expect(slot.decodeCounts).toMatchObject({ decodePasses: 29, draftTokens: 0 });
    expect(pipe.verifies.length, "speculative: false for the request: no verify pass").toBe(verifies);
  });

  it("a request abandoned mid-draft (its consumer stopped reading): the next request finds exact sequences", async () => {
    const { pipe, slot } = slotSetup();
    slot.begin(request());
    const step = pipe.decodeStep;
    pipe.decodeStep = async (c) => {
      const verifies = pipe.verifies.length;
      await step.call(pipe, c);
      // right after a verify pass (its draft still pending), web-llm's generator is simply not resumed: no triggerStop, no end()
      if (pipe.verifies.length > verifies) pipe.stopped = () => true;
    };
    await pipe.generate(encodeText(REPEATING), { max_tokens: 30 }, true);
    expect(pipe.verifies.length).toBeGreaterThan(0);
    pipe.decodeStep = step;
    pipe.stopped = () => pipe.stopTriggered;
    slot.begin(request());
    await pipe.generate(encodeText(REPEATING + "x"), { max_tokens: 10 }, true);
    slot.end("stop", true);
    expect(slot.current!.policy!.sequences().length).toBeGreaterThan(0);
    policyHolds(pipe, slot);
  });
});

describe("speculative decoding on web-llm's pipeline: drafts sized by the device's measured costs", () => {
  // SwiftShader as measured (compute-bound): a verify costs 4 decodes, flat up to ~30 tokens.
  const swiftShader = { single: (tokens: number) => (tokens <= 1 ? 10 : 40) };

  async function timed(device: typeof swiftShader | undefined, prompt: string, config: GenConfig, request: Partial<SpeculativeRequest> = {}) {
    const s = setup({ device });
    const started = s.pipe.clock;
    const outcome = await run(s, prompt, config, request);
    return { ...outcome, ms: s.pipe.clock - started, spec: s.spec };
  }

  it("learns what a decode and a verify cost on the device from the steps it times", async () => {
    const { spec, verifies, decodes } = await timed(swiftShader, "qwertyuiopasdf", { max_tokens: 48 });
    expect(decodes, "a decode is measured first, on a plain step").toBeGreaterThan(0);
    expect(verifies.length, "the first worthwhile draft is the probe").toBeGreaterThan(0);
    expect(spec.costs.single(1)).toBeCloseTo(10);
    expect(spec.costs.single(verifies[0])).toBeCloseTo(40);
  });

  it("on a device where a verify costs 4 decodes: never slower than speculation off once a probe measured it, same tokens", async () => {
    for (const prompt of ["abcxyz", "qwertyuiopasdf", REPEATING, "thecatsat", "hello world hello"]) {
      const s = setup({ device: swiftShader });
      const first = await run(s, prompt, { max_tokens: 64 });
      const firstMs = s.pipe.clock;
      const second = await run(s, prompt, { max_tokens: 64 });
      const secondMs = s.pipe.clock - firstMs;
      const off = await timed(swiftShader, prompt, { max_tokens: 64 }, { enabled: false });
      expect(first.tokens, prompt).toEqual(off.tokens);
      expect(second.tokens, prompt).toEqual(off.tokens);
      expect(firstMs, `${prompt}: the first request pays at most one losing probe (a verify instead of a decode)`).toBeLessThanOrEqual(off.ms + 30);
      expect(secondMs, `${prompt}: then never slower`).toBeLessThanOrEqual(off.ms);
    }
  });

  it("there, a prediction the model follows is still drafted long", async () => {
    const base = await timed(swiftShader, "abcxyz", { max_tokens: 40 }, { enabled: false });
    const on = await timed(swiftShader, "abcxyz", { max_tokens: 40 }, { prediction: base.text });
    expect(on.tokens).toEqual(base.tokens);
    expect(on.counts!.decodePasses / on.tokens.length).toBeLessThanOrEqual(0.35);
    expect(on.ms).toBeLessThan(base.ms * 0.6);
  });

  it("where a verify costs about a decode, more is drafted and more time saved than where it costs 4", async () => {
    const prompt = "hello world hello";
    const swift = await timed(swiftShader, prompt, { max_tokens: 64 });
    const swiftOff = await timed(swiftShader, prompt, { max_tokens: 64 }, { enabled: false });
    const gpu = await timed(undefined, prompt, { max_tokens: 64 });
    const gpuOff = await timed(undefined, prompt, { max_tokens: 64 }, { enabled: false });
    expect(gpu.tokens).toEqual(swift.tokens);
    expect(gpu.counts!.draftTokens).toBeGreaterThan(swift.counts!.draftTokens);
    expect(gpu.ms / gpuOff.ms).toBeLessThan(swift.ms / swiftOff.ms);
    expect(gpu.ms / gpuOff.ms).toBeLessThan(0.5);
  });
});

describe("speculative decoding on web-llm's pipeline: grammar jump-forward", () => {
  const letters = (id: number) => decodeIds([id]);
  // A forced call: its fixed markup, free arguments ending with `z`, then the fixed close, then free text.
  const call: TemplateGrammar = { fixed: ["callsetunitwithargs", "endofthecall"], terminator: "z", tokenText: letters };

  async function generateWith(grammar: TemplateGrammar, enabled: boolean, options: { jumpForward?: boolean; tokenizer?: FakeDecodingPipeline["tokenizer"] } = {}) {
    const s = setup();
    if (options.tokenizer) s.pipe.tokenizer = options.tokenizer;
    const original = TemplateMatcher.prototype.findJumpForwardString;
    if (options.jumpForward === false) TemplateMatcher.prototype.findJumpForwardString = () => "";
    try {
      return await run(s, "abcxyz", { max_tokens: 60, grammar, response_format: { type: "grammar" } }, { enabled });
    } finally {
      TemplateMatcher.prototype.findJumpForwardString = original;
    }
  }

  it("a forced call: the same tokens with and without jump-forward, its fixed markup in a pass or two, counted as jump-forward drafts", async () => {
    const off = await generateWith(call, false);
    const without = await generateWith(call, true, { jumpForward: false });
    const jumped = await generateWith(call, true);
    expect(decodeIds(off.tokens).startsWith("callsetunitwithargs")).toBe(true);
    expect(without.tokens).toEqual(off.tokens);
    expect(jumped.tokens).toEqual(off.tokens);
    expect(jumped.held).toEqual(off.held);
    expect(without.counts!.jumpForwardTokens).toBeUndefined();
    expect(jumped.counts!.jumpForwardTokens).toBeGreaterThanOrEqual(17);
    // The first token comes from the prefill; the other 18 forced characters but the boundary's: one verify.
    expect(jumped.counts!.decodePasses).toBeLessThanOrEqual(without.counts!.decodePasses - 15);
  });

  it("a forced string that ends inside a token: the model's own token crosses the boundary, the output does not change", async () => {
    // Two-letter tokens: "et" inside the fixed text, "tq" from its last letter into the free text.
    const pairs: Record<number, string> = { 26: "et", 27: "tq", 28: "ca" };
    const tokenText = (id: number) => pairs[id] ?? letters(id);
    const encode = (text: string) => {
      const ids: number[] = [];
      for (let i = 0; i < text.length; ) {
        const pair = Object.entries(pairs).find(([, t]) => text.startsWith(t, i));
        ids.push(pair ? Number(pair[0]) : encodeText(text[i])[0]);
        i += pair ? 2 : 1;
      }
      return ids;
    };
    const tokenizer = { encode, decode: decodeIds };
    const grammar: TemplateGrammar = { fixed: ["callset", "done"], terminator: "z", tokenText };
    const off = await generateWith(grammar, false, { tokenizer });
    const jumped = await generateWith(grammar, true, { tokenizer });
    expect(jumped.tokens).toEqual(off.tokens);
    expect(jumped.held).toEqual(off.held);
    expect(jumped.counts!.jumpForwardTokens).toBeGreaterThan(0);
    expect(jumped.counts!.decodePasses).toBeLessThanOrEqual(off.counts!.decodePasses);
  });

  it("a matcher web-llm kept from an earlier constrained request does not draft for an unconstrained one", async () => {
    const s = setup();
    const matcher = { findJumpForwardString: () => "callsetunit", allows: () => true, acceptToken: () => true };
    const pipe = s.pipe as unknown as { grammarMatcher: unknown; isGrammarConstrained: (f: unknown) => boolean };
    const generate = s.pipe.generate.bind(s.pipe);
    s.pipe.generate = async (prompt, config, multiround) => {
      const running = generate(prompt, config, multiround);
      pipe.grammarMatcher = matcher; // set after generate() reset it: as web-llm keeps it for reuse
      return running;
    };
    const r = await run(s, "abcxyz", { max_tokens: 30 }, { enabled: true });
    expect(r.counts!.jumpForwardTokens, "web-llm 0.2.79: no response_format").toBeUndefined();
    pipe.isGrammarConstrained = (format) => (format as { type?: string } | undefined)?.type === "json_object";
    const again = await run(s, "abcxyz", { max_tokens: 30 }, { enabled: true });
    expect(again.counts!.jumpForwardTokens, "web-llm 0.2.86: isGrammarConstrained says no").toBeUndefined();
  });
});
