/**
 * The MCP view: an MCP server's tools used by the local model through the
 * Responses API's `mcp` tool, the same request the hosted API takes
 * (docs/mcp.md). The connection is made where the engine runs (the worker).
 *
 *   const tool = { type: "mcp", server_label, server_url, headers, require_approval: "always" };
 *   const stream = await client.responses.create({ model, input, tools: [tool], previous_response_id, stream: true });
 *   // a call the model makes ends the response with an `mcp_approval_request`, and nothing is sent to the server;
 *   // the next request answers it, and an approved call runs and the model goes on:
 *   await client.responses.create({ model, tools: [tool], previous_response_id,
 *     input: [{ type: "mcp_approval_response", approval_request_id, approve }], stream: true });
 */
import type { Client, OutputItem, ResponseStreamEvent } from "../../src/index.js";
import { h, replace } from "./dom.js";
import { createMcpServerForm, type McpServer } from "./mcp-server-form.js";

type McpCall = Extract<OutputItem, { type: "mcp_call" }>;
type ApprovalRequest = Extract<OutputItem, { type: "mcp_approval_request" }>;
type ApprovalResponse = { type: "mcp_approval_response"; approval_request_id: string; approve: boolean };

export function createMcpView(client: Client, selectedModel: () => string): HTMLElement {
  const askFirst = h("input", { type: "checkbox", id: "mcp-require-approval", checked: true });
  const log = h("div", { id: "mcp-log", class: "mcp-log", role: "log", "aria-live": "polite" });
  const input = h("textarea", { id: "mcp-input", rows: 2, "aria-label": "Message", placeholder: "Connect to a server, then ask something its tools can answer…" });
  const send = h("button", { id: "mcp-send", type: "submit", class: "primary", disabled: true }, "Send");
  let server: McpServer | null = null;
  /** The conversation lives in the response store: each turn continues the last response. */
  let previousResponseId: string | null = null;
  let busy = false;
  /** Approval requests not yet answered: a new message waits until they are. */
  let awaitingApproval = false;

  const serverForm = createMcpServerForm(client, (connected) => {
    server = connected;
    previousResponseId = null;
    awaitingApproval = false;
    replace(log);
    send.disabled = false;
  });

  const entry = (kind: string, ...text: string[]) => {
    const element = h("div", { class: `mcp-entry mcp-${kind}` }, ...text);
    log.append(element);
    return element;
  };

  /** The `mcp` tool as the hosted API takes it; the header goes to the connection only. */
  const mcpTool = (s: McpServer) => ({ type: "mcp", server_label: s.label, server_url: s.url, headers: s.headers, require_approval: askFirst.checked ? "always" : "never" });

  /** One response: streams its items into the log; approval requests it ends with get their buttons. */
  async function respond(turnInput: string | ApprovalResponse[]) {
    if (!server) return;
    busy = true;
    send.disabled = true;
    const shown = new Map<string, HTMLElement>();
    try {
      const stream = await client.responses.create({ model: selectedModel(), input: turnInput, tools: [mcpTool(server)], previous_response_id: previousResponseId, stream: true });
      for await (const event of stream) {
        const ended = show(event, shown);
        if (ended) {
          previousResponseId = ended.id;
          const requests = ended.output.filter((item): item is ApprovalRequest => item.type === "mcp_approval_request");
          if (requests.length > 0) askApproval(requests);
        }
      }
    } catch (error) {
      entry("error", error instanceof Error ? error.message : String(error));
    } finally {
      busy = false;
      send.disabled = !server || awaitingApproval;
    }
  }

  /** Writes one event into the log; returns the response when it has ended. */
  function show(event: ResponseStreamEvent, shown: Map<string, HTMLElement>) {
    switch (event.type) {
      case "response.output_item.added":
        if (event.item.type === "message") shown.set(event.item.id, entry("assistant"));
        if (event.item.type === "reasoning") shown.set(event.item.id, reasoningEntry());
        if (event.item.type === "mcp_call") shown.set(event.item.id, log.appendChild(callCard(event.item)));
        return null;
      case "response.output_text.delta":
      case "response.reasoning_text.delta":
        shown.get(event.item_id)?.append(event.delta);
        return null;
      case "response.output_item.done":
        if (event.item.type === "mcp_call") {
          const card = callCard(event.item);
          const running = shown.get(event.item.id);
          if (running) running.replaceWith(card);
          else log.append(card);
        }
        if (event.item.type === "mcp_list_tools" && event.item.error) entry("error", `Listing the tools failed: ${event.item.error}`);
        return null;
      case "response.completed":
      case "response.incomplete":
        return event.response;
      case "response.failed":
        entry("error", event.response.error?.message ?? "The response failed.");
        return null;
      case "error":
        entry("error", event.error.message);
        return null;
      default:
        return null;
    }
  }

  function reasoningEntry(): HTMLElement {
    const body = h("div", { class: "reasoning-body" });
    log.append(h("details", { class: "reasoning mcp-entry" }, h("summary", {}, "Reasoning"), body));
    return body;
  }

  /** The call's name and arguments, then its output or error once it has run. */
  function callCard(call: McpCall): HTMLElement {
    const state = call.status === "in_progress" ? "running" : call.error !== null ? "failed" : "completed";
    return h(
      "div",
      { class: "tool-card mcp-call", dataset: { state, tool: call.name } },
      h("div", {}, h("span", { class: "badge" }, `MCP ${state}`), h("code", {}, `${call.server_label}.${call.name}`)),
      h("pre", { class: "mcp-arguments" }, call.arguments),
      call.error !== null ? h("pre", { class: "mcp-output error" }, call.error) : call.output !== null ? h("pre", { class: "mcp-output" }, call.output) : null,
    );
  }

  /** A card per requested call; once each is approved or declined, one request carries every answer. */
  function askApproval(requests: ApprovalRequest[]) {
    const answers = new Map<string, boolean>();
    awaitingApproval = true;
    for (const request of requests) {
      const verdict = h("span", { class: "mcp-verdict" });
      const decide = (approve: boolean) => {
        answers.set(request.id, approve);
        replace(buttons, verdict);
        replace(verdict, approve ? "Approved" : "Declined: the call is not made");
        card.dataset.decision = approve ? "approved" : "declined";
        if (answers.size < requests.length) return;
        awaitingApproval = false;
        void respond(requests.map((r) => ({ type: "mcp_approval_response", approval_request_id: r.id, approve: answers.get(r.id)! })));
      };
      const buttons = h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "primary mcp-approve", onclick: () => decide(true) }, "Approve"),
        h("button", { type: "button", class: "mcp-decline", onclick: () => decide(false) }, "Decline"),
      );
      const card = h(
        "div",
        { class: "tool-card mcp-approval", role: "group", "aria-label": `Approve ${request.name}?`, dataset: { tool: request.name } },
        h("div", {}, h("span", { class: "badge" }, "Approve?"), h("code", {}, `${request.server_label}.${request.name}`), " wants to run with:"),
        h("pre", { class: "mcp-arguments" }, request.arguments),
        buttons,
      );
      log.append(card);
    }
  }

  const form = h("form", { class: "composer" }, input, h("div", { class: "composer-buttons" }, send));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || busy || awaitingApproval || !server) return;
    input.value = "";
    entry("user", text);
    void respond(text);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  return h(
    "section",
    { class: "mcp", "aria-label": "MCP tools" },
    h("h2", {}, "MCP server tools"),
    h("p", { class: "hint" }, "Connect to an MCP server (it must allow this page's origin with CORS), then chat: the model chosen in the sidebar calls the server's tools through the Responses API's mcp tool."),
    serverForm.element,
    h("label", { class: "inline" }, askFirst, ' Ask me before each call (require_approval: "always")'),
    log,
    form,
  );
}
