/**
 * The Responses `mcp` tool on the real engine (driven by scripts/smoke-real.mjs,
 * step `mcp`): the driver serves a real MCP server (test/support/mcp-server.ts,
 * CORS on) from Node; the page's client asks a Responses request whose
 * `tool_choice` forces the server's `add` tool, with `require_approval:
 * "never"`. The grammar forces the call (random weights follow no
 * instruction); the library runs it on the server and feeds its output to the
 * model's next generation, which writes the reply. The report lists the
 * output items (type, name, arguments, output, error), status and usage.
 */
import { createClient } from "../../src/index.js";
import { chatRecord } from "./mixed-smoke.js";

type Json = Record<string, unknown>;

export interface McpSmokeOptions {
  modelId: string;
  serverUrl: string;
  maxTokens: number;
  /**
   * The server's tool the call is forced to (default "add"). "big" takes no
   * arguments, so the grammar writes the whole call: a random-weight model
   * writes a JSON number's digits without end, and `add`'s call may never close.
   */
  tool?: "add" | "big";
}

declare global {
  interface Window {
    smokeMcp(options: McpSmokeOptions): Promise<Json>;
    smokeMcpReport: Json;
  }
}

export function defineMcpSmoke(): void {
  window.smokeMcp = async (options) => {
    const tool = options.tool ?? "add";
    const report: Json = { serverUrl: options.serverUrl, maxTokens: options.maxTokens, tool };
    window.smokeMcpReport = report;
    const client = createClient({ models: [chatRecord(options.modelId)], cache: "indexeddb" });
    const t0 = performance.now();
    try {
      await client.models.load(options.modelId);
      report.loadMs = Math.round(performance.now() - t0);
      console.info(`[mcp] loaded in ${report.loadMs} ms`);
      const t1 = performance.now();
      const response = await client.responses.create({
        model: options.modelId,
        input: tool === "add" ? "What is 2 + 3? Use the add tool." : "Show the big output. Use the big tool.",
        tools: [{ type: "mcp", server_label: "fixture", server_url: options.serverUrl, allowed_tools: [tool], require_approval: "never" }],
        tool_choice: { type: "mcp", server_label: "fixture", name: tool },
        max_output_tokens: options.maxTokens,
        temperature: 0,
      } as never);
      report.ms = Math.round(performance.now() - t1);
      const r = response as unknown as { status: string; output: Array<Record<string, unknown>>; usage: unknown; incomplete_details?: unknown; x_webgpu?: unknown };
      report.status = r.status;
      report.incomplete = r.incomplete_details ?? null;
      report.usage = r.usage;
      report.output = r.output.map((item) => ({
        type: item.type,
        name: item.name,
        server_label: item.server_label,
        arguments: item.arguments,
        output: item.output,
        error: item.error,
        tools: Array.isArray(item.tools) ? (item.tools as Array<{ name: string }>).map((t) => t.name) : undefined,
        text: item.type === "message" ? JSON.stringify(item.content).slice(0, 300) : undefined,
      }));
      console.info(`[mcp] ${JSON.stringify(report)}`);
    } catch (error) {
      const e = error as { name?: string; message?: string; status?: number; code?: string };
      report.error = { name: e?.name, status: e?.status, code: e?.code, message: String(e?.message ?? error).slice(0, 600) };
    } finally {
      await client.terminate?.();
    }
    report.done = true;
    return report;
  };
}
