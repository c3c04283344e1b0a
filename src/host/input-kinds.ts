/**
 * The request's images and audio against what the model takes
 * (models/inputs.ts): a part the model cannot take is a 400 naming the part
 * (`messages[i].content[j]`, or `input[i].content[j]` for Responses) and the
 * model, before anything is loaded or downloaded.
 */
import { ApiError } from "../protocol/api-error.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { ModelInputs } from "../models/inputs.js";

const KIND_OF_PART: Record<string, { kind: "image" | "audio"; what: string }> = {
  image_url: { kind: "image", what: "an image part (`image_url`)" },
  input_audio: { kind: "audio", what: "an audio part (`input_audio`)" },
};

export function checkInputKinds(messages: readonly NormalizedMessage[], modelId: string, inputs: ModelInputs): void {
  messages.forEach((message, i) => {
    if (typeof message.content === "string") return;
    message.content.forEach((part, j) => {
      const needs = KIND_OF_PART[part.type];
      if (!needs || inputs.kinds.includes(needs.kind)) return;
      const param = `${message.param ?? `messages[${i}]`}.content[${j}]`;
      const takes = inputs.kinds.join(" and ");
      throw new ApiError({
        status: 400,
        code: "unsupported_input",
        param,
        message: `\`${param}\` is ${needs.what}, but ${modelId} takes ${takes} only. Use a model whose \`input_modalities\` (models.list()) include "${needs.kind}", e.g. ${needs.kind === "audio" ? "gemma-4-E2B-it" : "gemma-4-E2B-it or Phi-3.5-vision-instruct"}.`,
      });
    });
  });
}
