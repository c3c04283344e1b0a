/**
 * A JSON schema is compiled once per request: validation compiles it (the size
 * bound, refused as a 400 before the request queues) and the engine's request
 * builder takes that EBNF instead of compiling the schema again.
 */
import { describe, expect, it } from "vitest";
import { jsonSchemaCompilations } from "../../../src/grammar/json-schema-ebnf.js";
import { validateRequest } from "../../../src/protocol/validate.js";
import { validateResponsesRequest } from "../../../src/protocol/responses/validate.js";
import { responseFormatFor } from "../../../src/engine/webllm/webllm-request.js";

const weather = (extra: string) => ({
  type: "object",
  properties: { city: { type: "string" }, [extra]: { type: "integer" } },
  required: ["city"],
  additionalProperties: false,
});

describe("a response_format schema", () => {
  it("is compiled once from validation to the engine's request (chat)", () => {
    const schema = weather("days_chat");
    const before = jsonSchemaCompilations();
    const request = validateRequest({ model: "m", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "w", schema } } });
    const format = responseFormatFor(request.responseFormat, true);
    expect(format?.type).toBe("grammar");
    expect((format as { grammar: string }).grammar).toContain("days_chat");
    expect(jsonSchemaCompilations() - before).toBe(1);
  });

  it("is compiled once from validation to the engine's request (Responses text.format)", () => {
    const schema = weather("days_responses");
    const before = jsonSchemaCompilations();
    const request = validateResponsesRequest({ model: "m", input: "hi", text: { format: { type: "json_schema", name: "w", schema } } }, { get: () => undefined } as never);
    const format = responseFormatFor(request.normalized.responseFormat, true);
    expect((format as { grammar: string }).grammar).toContain("days_responses");
    expect(jsonSchemaCompilations() - before).toBe(1);
  });

  it("is compiled afresh when the app changes the same schema object between requests", () => {
    const schema = weather("hours") as { properties: Record<string, unknown> };
    const body = () => ({ model: "m", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "w", schema } } });
    responseFormatFor(validateRequest(body()).responseFormat, true);
    const before = jsonSchemaCompilations();
    schema.properties.minutes = { type: "integer" };
    const format = responseFormatFor(validateRequest(body()).responseFormat, true);
    expect((format as { grammar: string }).grammar).toContain("minutes");
    expect(jsonSchemaCompilations() - before).toBe(1);
  });
});
