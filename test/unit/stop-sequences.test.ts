/** `stop`: output cut before the first match, never a partial stop sequence in a delta. */
import { describe, expect, it } from "vitest";
import { StopGuard } from "../../src/host/stop-guard.js";
import { scriptedClient, user } from "./support/client.js";

const base = { model: "Qwen3-0.6B", messages: [user("hi")] };

describe("stop sequences", () => {
  it("a stop spanning several tokens is cut from streamed and non-streamed output alike", async () => {
    const reply = "alpha beta gamma delta";
    const { client } = scriptedClient(() => reply);
    const completion = await client.chat.completions.create({ ...base, stop: ["beta gamma"] });
    expect(completion.choices[0].message.content).toBe("alpha ");
    const stream = await client.chat.completions.create({ ...base, stop: ["beta gamma"], stream: true });
    const deltas: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
    expect(deltas.join("")).toBe("alpha ");
    expect(deltas.some((d) => d.includes("beta"))).toBe(false);
  });

  it("text that only looked like the start of a stop sequence is released", async () => {
    const { client } = scriptedClient(() => "alpha beta delta");
    const completion = await client.chat.completions.create({ ...base, stop: ["beta gamma"] });
    expect(completion.choices[0]).toMatchObject({ message: { content: "alpha beta delta" }, finish_reason: "stop" });
  });

  it("the earliest of several stop sequences wins", () => {
    const guard = new StopGuard(["XY", "B"]);
    expect(guard.push("aX") + guard.push("AB") + guard.push("XY") + guard.finish()).toBe("aXA");
  });

  it("held text is a proper prefix only, and nothing follows a match", () => {
    const guard = new StopGuard(["</s>"]);
    expect(guard.push("hello <")).toBe("hello ");
    expect(guard.push("/")).toBe("");
    expect(guard.push("x")).toBe("</x");
    expect(guard.push("</s> more")).toBe("");
    expect(guard.push("later")).toBe("");
    expect(guard.hit).toBe(true);
  });
});
