/**
 * The unchanged OpenAI SDK v7 on `client.fetch` of a scripted client whose host runs in the
 * default worker; every client made by a test is terminated after it.
 */
import { afterEach } from "vitest";
import OpenAI from "openai-v7";
import { createClient, type Client } from "../../../src/index.js";
import { createScriptedEngine } from "../../../src/testing.js";

export const BASE = "http://localhost.webgpu/v1";

let clients: Client[] = [];
afterEach(() => {
  for (const client of clients) client.terminate();
  clients = [];
});

export function setup(replies: string[]): { client: Client; openai: OpenAI } {
  const client = createClient({ engine: createScriptedEngine({ replies }) });
  clients.push(client);
  const openai = new OpenAI({ baseURL: BASE, apiKey: "local", dangerouslyAllowBrowser: true, maxRetries: 0, fetch: (url: string | URL | Request, init?: RequestInit) => client.fetch(url, init) });
  return { client, openai };
}
