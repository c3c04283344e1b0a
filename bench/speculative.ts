/**
 * Speculative-decoding trace: tasks an in-browser app gives a model, on the
 * scripted engine, which simulates speculation on its own tokens (the
 * scripted reply is the model's choice; drafts from the proposer are checked
 * against it). Each task runs twice on fresh clients, with speculation on and
 * off, and reports forward passes per generated token, drafted and accepted
 * tokens, and whether the output is the same.
 *
 * Tasks: a code edit with and without `prediction`, JSON extraction from a
 * document, an answer quoting retrieved passages, a tool call copying the
 * user's text, a greedy regenerate, and open chat (nothing to copy).
 *
 * Runs in Node (bench/run.mjs loads it through Vite; `BENCH_ONLY=speculative`
 * runs this trace alone) and from the unit test that holds the goals
 * (test/unit/speculative-trace.test.ts).
 */
import { createClient } from "../src/index.js";
import { createScriptedEngine } from "../src/testing.js";
import type { ChatCompletion, ChatCompletionCreateParams } from "../src/protocol/types.js";
import type { EngineRequest } from "../src/engine/types.js";
import { Vocabulary, renderPrompt, scriptedTokens } from "../src/engine/scripted-prompt.js";
import { ScriptedSpeculation } from "../src/engine/scripted-speculation.js";
import type { Proposer } from "../src/engine/speculative/proposer.js";
import { GPU_LIKE_COST, SWIFTSHADER_COST, type ForwardCost } from "../src/engine/speculative/draft-sizing.js";
import { forcedDraft } from "../src/engine/speculative/jump-forward.js";
import { scriptedForcedText } from "../src/engine/scripted-jump-forward.js";
import { PlainPromptLookup } from "./plain-lookup.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";

export type TaskKind = "edit+prediction" | "grounded" | "regenerate" | "open";

/** The goals per kind of task: passes per generated token, and rejected draft tokens per generated token. */
export const SPECULATIVE_GOALS: Record<TaskKind, { passesPerToken: number; rejectedPerToken: number }> = {
  "edit+prediction": { passesPerToken: 0.35, rejectedPerToken: Infinity },
  grounded: { passesPerToken: 0.5, rejectedPerToken: Infinity },
  regenerate: { passesPerToken: 0.3, rejectedPerToken: Infinity },
  // Open chat must not get slower: never more passes than tokens, and few wasted drafts.
  open: { passesPerToken: 1, rejectedPerToken: 0.25 },
};

export interface SpeculativeTask {
  task: string;
  kind: TaskKind;
  /** Generated tokens (completion_tokens). */
  tokens: number;
  /** Forward passes after the prefill, speculation on and off. */
  passes: number;
  passesOff: number;
  draftTokens: number;
  acceptedDraftTokens: number;
  /** Drafted tokens the model rejected, per generated token. */
  rejectedPerToken: number;
  passesPerToken: number;
  /** The output (content and tool calls) is the same as with speculation off. */
  sameOutput: boolean;
  acceptedPredictionTokens?: number;
  rejectedPredictionTokens?: number;
  /** Grounded tasks: passes per token of plain prompt lookup (n = 3..1, k = 8) on the same tokens. */
  plainLookupPassesPerToken?: number;
}

// ── the tasks' texts ──────────────────────────────────────────────────────

const FILE = [
  'import { readFile } from "node:fs/promises";',
  "",
  "export interface Invoice {",
  "  id: string;",
  "  customer: string;",
  "  total: number;",
  "  paid: boolean;",
  "}",
  "",
  "/** Loads the invoices of one customer from a JSON file. */",
  "export async function loadInvoices(path: string, customer: string): Promise<Invoice[]> {",
  '  const text = await readFile(path, "utf8");',
  "  const all = JSON.parse(text) as Invoice[];",
  "  return all.filter((invoice) => invoice.customer === customer);",
  "}",
  "",
  "/** The amount a customer still owes. */",
  "export function outstanding(invoices: Invoice[]): number {",
  "  let sum = 0;",
  "  for (const invoice of invoices) {",
  "    if (!invoice.paid) sum += invoice.total;",
  "  }",
  "  return Math.round(sum * 100) / 100;",
  "}",
  "",
  "/** Invoices above a threshold, largest first. */",
  "export function largest(invoices: Invoice[], threshold: number): Invoice[] {",
  "  return invoices.filter((invoice) => invoice.total > threshold).sort((a, b) => b.total - a.total);",
  "}",
  "",
  "/** A one-line summary for the dashboard. */",
  "export function summary(invoices: Invoice[]): string {",
  "  const owed = outstanding(invoices);",
  "  return `${invoices.length} invoices, ${owed} outstanding`;",
  "}",
].join("\n");
const EDITED = FILE.replaceAll("outstanding(", "amountDue(").replace("The amount a customer still owes.", "The amount a customer still owes, rounded to cents.");
const EDIT_ASK = `Rename the function outstanding to amountDue everywhere and say in its comment that it rounds to cents. Reply with the whole file only.\n\n${FILE}`;

const PEOPLE = [
  ["Maria Lopez", "2024-03-14", "1,250.00", "Lisbon"],
  ["Tom Becker", "2024-04-02", "980.50", "Berlin"],
  ["Aiko Tanaka", "2024-04-19", "2,310.75", "Osaka"],
  ["Samuel Okafor", "2024-05-07", "640.00", "Lagos"],
  ["Elena Petrova", "2024-05-28", "1,775.20", "Sofia"],
  ["Lucas Martin", "2024-06-11", "3,005.00", "Lyon"],
];
const DOCUMENT = [
  "Quarterly payments report, prepared by the finance team for the regional offices.",
  ...PEOPLE.map(([name, date, amount, city]) => `On ${date} the office in ${city} received a payment of ${amount} EUR from ${name}, who asked for a receipt by email. The payment was checked and booked the same week.`),
  "All amounts are in euros and include tax. Questions go to the finance team.",
].join("\n");
const EXTRACTED = `[\n${PEOPLE.map(([name, date, amount, city]) => `  {"name": "${name}", "date": "${date}", "amount": "${amount}", "city": "${city}"}`).join(",\n")}\n]`;

// The same payments, with keys of the app's schema and values normalised: fewer long copies.
const MONTHS = ["January", "February", "March", "April", "May", "June", "July"];
const NORMALISED = `{"payments": [\n${PEOPLE.map(([name, date, amount, city]) => {
  const [y, m, d] = date.split("-");
  return `  {"payer": "${name}", "office": "${city}", "booked_on": "${Number(d)} ${MONTHS[Number(m) - 1]} ${y}", "amount_eur": ${amount.replace(",", "")}, "receipt": "email"}`;
}).join(",\n")}\n], "currency": "EUR", "tax_included": true}`;

const PASSAGES = [
  "The Vasco da Gama Bridge spans the Tagus estuary near Lisbon and is 12.3 kilometres long, which made it the longest bridge in Europe when it opened in 1998.",
  "The bridge was built to relieve congestion on the 25 de Abril Bridge and to connect the north and south of the Lisbon region without passing through the city centre.",
  "Its foundations were designed to withstand an earthquake four and a half times stronger than the 1755 Lisbon earthquake, and the structure is expected to last 120 years.",
  "Tolls are charged only in the southbound direction, and the bridge carries about 60,000 vehicles per day on six lanes.",
];
const QUESTION = "How long is the Vasco da Gama Bridge, when did it open, and how strong an earthquake can it withstand? Quote the passages.";
const QUOTED = `According to the passages, "The Vasco da Gama Bridge spans the Tagus estuary near Lisbon and is 12.3 kilometres long, which made it the longest bridge in Europe when it opened in 1998." On earthquakes: "Its foundations were designed to withstand an earthquake four and a half times stronger than the 1755 Lisbon earthquake, and the structure is expected to last 120 years." So it is 12.3 km long, opened in 1998, and is built for an earthquake four and a half times stronger than that of 1755.`;

const SHORT_QUOTES = `The passages give three facts. Length: it "is 12.3 kilometres long", and it "opened in 1998". Purpose: it "was built to relieve congestion on the 25 de Abril Bridge". Safety: its foundations can "withstand an earthquake four and a half times stronger than the 1755 Lisbon earthquake". Traffic: "about 60,000 vehicles per day on six lanes", with tolls "only in the southbound direction".`;

const NOTE = "Hi Anna, the team meeting moves from Thursday to Friday at 10:30 in room 4B. Please bring the printed budget draft and the list of open questions from the client call, and tell Marco that the slides are due on Wednesday evening.";
const EMAIL_TOOL = {
  type: "function" as const,
  function: {
    name: "send_email",
    description: "Sends an email.",
    parameters: { type: "object", properties: { to: { type: "string" }, subject: { type: "string" }, body: { type: "string" } }, required: ["to", "body"] },
  },
};
const CALL = `<tool_call>\n{"name": "send_email", "arguments": {"to": "anna@example.com", "subject": "Team meeting moves to Friday", "body": "${NOTE}"}}\n</tool_call>`;

const STORY_ASK = "Write a short paragraph about what makes a good morning routine.";
const STORY =
  "A good morning routine starts the night before: going to bed at a regular hour makes waking up feel less like a fight. Once up, a glass of water and a few minutes of daylight tell the body that the day has begun. Some people like to stretch or walk around the block, others prefer to sit quietly with coffee and plan the three things that matter most today. What counts is not the exact recipe but its calm repetition, so that the first hour asks for no decisions and leaves energy for the ones that come later.";
const OPEN_ASK = "I feel stuck in my job. Any advice?";
const OPEN =
  "Feeling stuck is common, and it usually means something has stopped growing rather than that anything is wrong with you. Start by noticing which parts of your week still give you energy and which drain it. Talk to your manager about a project that stretches you, or learn a skill on the side that points toward work you would enjoy. If nothing changes after a few months, quietly explore other teams or companies: a conversation costs little and often shows options you did not know existed.";

// ── running one task ─────────────────────────────────────────────────────

type Body = Omit<ChatCompletionCreateParams, "model" | "stream">;

interface Run {
  last: ChatCompletion;
  /** The measured request as the engine received it. */
  request: EngineRequest;
}

/** Runs `bodies` in order on a fresh client; the last one is measured. */
async function run(bodies: Body[], replies: string[], speculative: boolean): Promise<Run> {
  const engine = createScriptedEngine({ replies });
  const client = createClient({ engine, worker: false, speculative });
  let last: ChatCompletion | null = null;
  for (const body of bodies) last = await client.chat.completions.create({ model: MODEL, ...body, stream: false });
  return { last: last!, request: engine.requests.at(-1)! };
}

const visible = (c: ChatCompletion) => JSON.stringify({ content: c.choices[0].message.content, calls: (c.choices[0].message.tool_calls ?? []).map((t) => t.function) });

/** A task as the scripted engine received it (the measured request) with the model's reply and the request's other draft sources. */
export interface RecordedTask {
  task: string;
  kind: TaskKind;
  request: EngineRequest;
  reply: string;
  /** The reply the prompt cache held after the same prompt (a regenerate). */
  cachedReply?: string;
}

export interface Simulated {
  tokens: number;
  passes: number;
  draftTokens: number;
  acceptedDraftTokens: number;
  /** What the passes after the prefill cost by `cost` (0 without). */
  cost: number;
  /** Tokens the cost model expected those passes to yield (with `cost`). */
  expectedTokens: number;
  jumpForwardTokens: number;
}

/**
 * A recorded task decoded again on its own tokens, counted as the scripted
 * engine counts (ScriptedSpeculation): with `proposer` (the bench's plain
 * lookup), with ours sized by a device's `cost`, or with speculation off.
 */
export function simulate(t: RecordedTask, how: { proposer?: (prompt: number[]) => Proposer; cost?: ForwardCost; off?: boolean; jumpForward?: boolean } = {}): Simulated {
  const vocab = new Vocabulary();
  const prompt = renderPrompt(t.request.messages, t.request.continueFinalMessage, vocab).ids;
  const words = scriptedTokens(t.reply);
  const ids = vocab.encode(words);
  // Jump-forward as the scripted engine mirrors it (a tool-call grammar's forced markup).
  const format = t.request.responseFormat;
  const forced = how.jumpForward !== false && !how.off && format?.type === "structural_tag" ? (at: number) => () => forcedDraft(scriptedForcedText(format, words.slice(0, at).join("")), (text) => vocab.encode(scriptedTokens(text))) : null;
  const prediction = t.request.prediction !== undefined ? vocab.encode(scriptedTokens(t.request.prediction)) : undefined;
  const sources = how.off ? null : { prompt, ...(prediction ? { prediction } : {}), ...(t.cachedReply ? { cachedReplies: [vocab.encode(scriptedTokens(t.cachedReply))] } : {}) };
  const speculation = new ScriptedSpeculation(ids, sources, prediction?.length, { ...(how.proposer ? { proposer: how.proposer(prompt) } : {}), ...(how.cost ? { cost: how.cost } : {}) });
  const output: number[] = [];
  for (const id of ids) {
    speculation.next(output, ids.length - output.length, forced?.(output.length));
    output.push(id);
  }
  speculation.end(output);
  const usage = speculation.usage(output);
  return {
    tokens: ids.length,
    passes: usage.decodePasses,
    draftTokens: usage.draftTokens,
    acceptedDraftTokens: usage.acceptedDraftTokens,
    cost: speculation.cost,
    expectedTokens: speculation.expectedTokens,
    jumpForwardTokens: usage.jumpForwardTokens ?? 0,
  };
}

/** Passes per generated token of `proposer` on a recorded task. */
export function passesPerToken(t: RecordedTask, proposer: (prompt: number[]) => Proposer): number {
  const r = simulate(t, { proposer });
  return r.passes / r.tokens;
}

export const plainLookup = (prompt: number[]) => new PlainPromptLookup(prompt);

async function task(name: string, kind: TaskKind, bodies: Body[], replies: string[]): Promise<SpeculativeTask> {
  const measured = await run(bodies, replies, true);
  const on = measured.last;
  const off = (await run(bodies, replies, false)).last;
  const tokens = on.usage.completion_tokens;
  const x = on.x_webgpu;
  const details = on.usage.completion_tokens_details;
  return {
    task: name,
    kind,
    tokens,
    passes: x.decode_passes,
    passesOff: off.x_webgpu.decode_passes,
    draftTokens: x.draft_tokens,
    acceptedDraftTokens: x.accepted_draft_tokens,
    rejectedPerToken: (x.draft_tokens - x.accepted_draft_tokens) / tokens,
    passesPerToken: x.decode_passes / tokens,
    sameOutput: visible(on) === visible(off) && tokens === off.usage.completion_tokens,
    ...(kind === "grounded" ? { plainLookupPassesPerToken: passesPerToken({ task: name, kind, request: measured.request, reply: replies.at(-1)! }, plainLookup) } : {}),
    ...(details.accepted_prediction_tokens !== undefined ? { acceptedPredictionTokens: details.accepted_prediction_tokens, rejectedPredictionTokens: details.rejected_prediction_tokens } : {}),
  };
}

const user = (content: string) => ({ role: "user" as const, content });

/** The grounded tasks: a request and the model's reply, each copying from its prompt. */
const GROUNDED: Array<{ task: string; body: Body; reply: string }> = [
  { task: "code edit, without prediction", body: { messages: [user(EDIT_ASK)] }, reply: EDITED },
  { task: "JSON extraction from a document", body: { messages: [{ role: "system", content: "Extract name, date, amount and city of every payment as a JSON array." }, user(DOCUMENT)], response_format: { type: "json_object" } }, reply: EXTRACTED },
  { task: "answer quoting retrieved passages", body: { messages: [{ role: "system", content: `Answer from these passages:\n${PASSAGES.join("\n")}` }, user(QUESTION)] }, reply: QUOTED },
  { task: "tool call copying the user's text", body: { messages: [user(`Email this to anna@example.com: ${NOTE}`)], tools: [EMAIL_TOOL] }, reply: CALL },
];

/**
 * Grounded tasks that copy less (keys renamed, values normalised; short
 * quotes woven into the answer): held to plain prompt lookup, not to the
 * 0.5 passes per token a long copy reaches.
 */
const GROUNDED_SHORT_COPIES: Array<{ task: string; body: Body; reply: string }> = [
  { task: "JSON extraction, keys renamed and values normalised", body: { messages: [{ role: "system", content: "Return the payments as JSON: payer, office, booked_on (day month year), amount_eur (a number), receipt; then currency and tax_included." }, user(DOCUMENT)], response_format: { type: "json_object" } }, reply: NORMALISED },
  { task: "answer quoting short phrases", body: { messages: [{ role: "system", content: `Answer from these passages:\n${PASSAGES.join("\n")}` }, user("Summarise the bridge's length, purpose, safety and traffic, quoting the passages.")] }, reply: SHORT_QUOTES },
];

/** Every task as the scripted engine receives it (prompt shaped by the host), with its reply: proposers and device profiles are compared on these. */
export async function recordedTasks(): Promise<RecordedTask[]> {
  const recorded: RecordedTask[] = [];
  const edit: Body = { messages: [user(EDIT_ASK)], prediction: { type: "content", content: FILE } };
  recorded.push({ task: "code edit, with prediction", kind: "edit+prediction", request: (await run([edit], [EDITED], true)).request, reply: EDITED });
  for (const g of [...GROUNDED, ...GROUNDED_SHORT_COPIES]) recorded.push({ task: g.task, kind: "grounded", request: (await run([g.body], [g.reply], true)).request, reply: g.reply });
  const again: Body = { messages: [user(STORY_ASK)], temperature: 0 };
  recorded.push({ task: "greedy regenerate", kind: "regenerate", request: (await run([again], [STORY], true)).request, reply: STORY, cachedReply: STORY });
  recorded.push({ task: "open chat", kind: "open", request: (await run([{ messages: [user(OPEN_ASK)] }], [OPEN], true)).request, reply: OPEN });
  return recorded;
}

export interface ProfileRow {
  device: string;
  /** Tokens per unit of cost (per ms on the profile's scale): decoding alone, what the cost model expected of its drafts, what they gave. */
  off: number;
  expected: number;
  measured: number;
  /** The slowest task's time with drafting over its time without (≤ 1: never slower). */
  worstTask: { task: string; ratio: number };
}

/**
 * Tokens per ms over every recorded task on SwiftShader's measured profile
 * and a GPU-like one: decoding alone, expected by the cost model when it
 * sized the drafts, and given by the drafts against the recorded replies.
 */
export async function benchDraftCosts(tasks?: RecordedTask[]): Promise<ProfileRow[]> {
  const recorded = tasks ?? (await recordedTasks());
  const rows: ProfileRow[] = [];
  for (const [device, cost] of [["SwiftShader (decode 15 s, verify ≈ 4 decodes)", SWIFTSHADER_COST], ["GPU-like (verify of k ≤ 8 ≈ 1.1 decodes)", GPU_LIKE_COST]] as const) {
    let tokens = 0;
    let expected = 0;
    let on = 0;
    let off = 0;
    let worstTask = { task: "", ratio: 0 };
    for (const t of recorded) {
      const drafting = simulate(t, { cost });
      const alone = simulate(t, { cost, off: true });
      // Tokens after the prefill's first: what the passes produced.
      tokens += drafting.tokens - 1;
      expected += drafting.expectedTokens;
      on += drafting.cost;
      off += alone.cost;
      const ratio = drafting.cost / alone.cost;
      if (ratio > worstTask.ratio) worstTask = { task: t.task, ratio };
    }
    rows.push({ device, off: tokens / off, expected: expected / on, measured: tokens / on, worstTask });
  }
  return rows;
}

/** Passes per generated token of ours and of plain prompt lookup on every recorded grounded task. */
export async function benchAgainstPlainLookup(tasks?: RecordedTask[]): Promise<Array<{ task: string; ours: number; plain: number }>> {
  const recorded = tasks ?? (await recordedTasks());
  return recorded
    .filter((t) => t.kind === "grounded")
    .map((t) => {
      const ours = simulate(t);
      const plain = simulate(t, { proposer: plainLookup });
      return { task: t.task, ours: ours.passes / ours.tokens, plain: plain.passes / plain.tokens };
    });
}

/** A forced `set_unit` tool call (issue 34's real-engine case) on the scripted engine: passes with and without jump-forward. */
export async function benchJumpForward(): Promise<{ tokens: number; passesOff: number; passesWithout: number; passesWith: number; jumpForwardTokens: number }> {
  const setUnit = {
    type: "function" as const,
    function: { name: "set_unit", description: "Sets the temperature unit.", parameters: { type: "object", properties: { unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["unit"] } },
  };
  const reply = `<tool_call>\n{"name": "set_unit", "arguments": {"unit": "celsius"}}\n</tool_call>`;
  const body: Body = { messages: [user("Show temperatures in celsius from now on.")], tools: [setUnit], tool_choice: { type: "function", function: { name: "set_unit" } } };
  const t: RecordedTask = { task: "forced set_unit call", kind: "grounded", request: (await run([body], [reply], true)).request, reply };
  const withJump = simulate(t);
  return { tokens: withJump.tokens, passesOff: simulate(t, { off: true }).passes, passesWithout: simulate(t, { jumpForward: false }).passes, passesWith: withJump.passes, jumpForwardTokens: withJump.jumpForwardTokens };
}

export async function benchSpeculative(): Promise<{ tasks: SpeculativeTask[] }> {
  const tasks: SpeculativeTask[] = [];
  tasks.push(await task("code edit, with prediction", "edit+prediction", [{ messages: [user(EDIT_ASK)], prediction: { type: "content", content: FILE } }], [EDITED]));
  for (const g of GROUNDED) tasks.push(await task(g.task, "grounded", [g.body], [g.reply]));
  const again = { messages: [user(STORY_ASK)], temperature: 0 };
  tasks.push(await task("greedy regenerate", "regenerate", [again, again], [STORY, STORY]));
  tasks.push(await task("open chat", "open", [{ messages: [user(OPEN_ASK)] }], [OPEN]));
  return { tasks };
}
