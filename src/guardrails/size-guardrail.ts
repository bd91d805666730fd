import type { GuardrailConfig } from "../config/types.js";
import type { JsonObject } from "../hub/call-pipeline.js";
import type { ImmediateCheck } from "./guardrail-layer.js";

/** Characters per token of the estimate `maxTokens` is read against (no tokenizer is loaded). */
const CHARS_PER_TOKEN = 4;

/**
 * `size`: a result over `maxBytes` (its JSON) or `maxTokens` (its text, estimated as a token per
 * four characters) is cut: its text parts shortened, from the last, until it fits, with a note
 * saying how much was cut. Its `structuredContent` cannot be cut and stay valid: it is dropped,
 * or the result refused (`structured: refuse`). Parts other than text (images, resources) stay
 * whole; a result that cannot fit even with no text is refused.
 */
export function sizeGuardrail(config: GuardrailConfig): ImmediateCheck {
  const maxBytes = config.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxChars =
    config.maxTokens === undefined ? Number.POSITIVE_INFINITY : config.maxTokens * CHARS_PER_TOKEN;
  return {
    response(result) {
      const bytes = Buffer.byteLength(JSON.stringify(result));
      const chars = textLength(result);
      if (bytes <= maxBytes && chars <= maxChars) return { action: "pass" };
      const over =
        bytes > maxBytes
          ? `${bytes} bytes (limit ${maxBytes})`
          : `about ${Math.ceil(chars / CHARS_PER_TOKEN)} tokens (limit ${config.maxTokens})`;
      if (result.structuredContent !== undefined && config.structured === "refuse")
        return {
          action: "refuse",
          message: `the result is ${over}, and its structured content cannot be cut`,
        };
      const cut = cutToFit(result, maxBytes, maxChars, over);
      if (cut === undefined)
        return { action: "refuse", message: `the result is ${over}, more than its text can be cut to fit` };
      return { action: "rewrite", value: cut, detail: `cut a result of ${over}` };
    },
  };
}

type Part = { type?: unknown; text?: unknown };

function textLength(result: JsonObject): number {
  let chars = 0;
  for (const part of (result.content as Part[] | undefined) ?? [])
    if (typeof part.text === "string") chars += part.text.length;
  return chars;
}

/** The result with its text shortened from the end to fit both bounds, or undefined when it cannot. */
function cutToFit(
  result: JsonObject,
  maxBytes: number,
  maxChars: number,
  over: string,
): JsonObject | undefined {
  const { structuredContent: _, ...rest } = result;
  const parts = ((rest.content as Part[] | undefined) ?? []).map((part) => ({ ...part }));
  const dropped = result.structuredContent === undefined ? "" : ", and its structured content left out";
  const note = { type: "text", text: `[mcplex: this result was ${over}; it was cut to fit${dropped}]` };
  const made = (): JsonObject => ({ ...rest, content: [...parts, note] });
  const fits = () => {
    const cut = made();
    return (
      Buffer.byteLength(JSON.stringify(cut)) <= maxBytes && textLength(cut) - note.text.length <= maxChars
    );
  };
  // From the last text part back: the longest prefix of each that lets the whole fit.
  for (let i = parts.length - 1; i >= 0 && !fits(); i--) {
    const part = parts[i]!;
    if (typeof part.text !== "string") continue;
    const text = part.text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      part.text = text.slice(0, mid);
      if (fits()) lo = mid;
      else hi = mid - 1;
    }
    part.text = text.slice(0, lo);
  }
  return fits() ? made() : undefined;
}
