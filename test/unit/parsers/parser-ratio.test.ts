/**
 * Prints the parser cost ratio of bench/parser-ratio.ts (1-character deltas vs
 * one delta on a 256 KB tool-call reply). Timing on this shared machine is too
 * noisy to assert; what is asserted is that both ways parse the same call.
 */
import { expect, it } from "vitest";
import { buildReply, measureParserRatio } from "../../../bench/parser-ratio.js";
import { createOutputParser } from "../../../src/parsers/index.js";

it("prints the 1-char vs one-delta ratio for a 256 KB tool-call reply", { timeout: 120_000 }, () => {
  const result = measureParserRatio(3);
  console.log(
    `[parser ratio] ${(result.bytes / 1024).toFixed(0)} KB: ` +
      Object.entries(result.byFormat)
        .map(([f, r]) => `${f} ${r.ratio.toFixed(2)}x (${r.oneDeltaMs.toFixed(1)} ms vs ${r.oneCharMs.toFixed(1)} ms)`)
        .join("; ") +
      `; per-char cost 256 KB vs 64 KB (1-char deltas): ${result.linearity.toFixed(2)} (1 = linear, 4 = quadratic)`,
  );
  expect(result.ratio).toBeGreaterThan(0);
});

it("parses the benchmark reply to the same call whole and in 1-char deltas", () => {
  const tools = [{ type: "function" as const, function: { name: "write_file", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } } } }];
  for (const format of ["hermes", "qwen-xml", "gemma4"] as const) {
    const reply = buildReply(format, 8 * 1024);
    const collect = (deltas: string[]) => {
      const p = createOutputParser({ format, reasoning: null, reasoningOpen: false, tools });
      const events = [...deltas.flatMap((d) => p.push(d)), ...p.finish()];
      const args = events.map((e) => (e.type === "tool_args" ? e.text : "")).join("");
      const content = events.map((e) => (e.type === "content" ? e.text : "")).join("");
      return { content, args: JSON.parse(args) as { path: string; content: string } };
    };
    const whole = collect([reply]);
    expect(whole.content).toBe("I'll write it.");
    expect(whole.args.path).toBe("src/big.ts");
    expect(whole.args.content.length).toBe(8 * 1024);
    expect(collect(reply.split(""))).toEqual(whole);
  }
});
