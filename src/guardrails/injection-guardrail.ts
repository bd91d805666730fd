import { someString } from "../config/redact.js";
import type { JsonObject } from "../hub/call-pipeline.js";
import type { GuardrailOutcome, ImmediateCheck } from "./guardrail-layer.js";

// Text aimed at the model rather than at the user: phrases that tell a model to drop its
// instructions, take a new role, hide something from its user, or that imitate the markers
// of a chat template. A heuristic, and a weak one: it misses what is phrased otherwise (or in
// another language), and may take an honest text about prompt injection for one. Every
// pattern's repetitions are bounded: results and descriptions come from servers.

const SIGNS: ReadonlyArray<{ sign: string; pattern: RegExp }> = [
  {
    sign: "ignore previous instructions",
    pattern:
      /\b(?:ignore|disregard|forget|override)\b.{0,40}?\b(?:previous|prior|above|earlier|all|any|your|the system)\b.{0,20}?\b(?:instructions?|prompts?|rules?|directions?)\b/i,
  },
  { sign: "a new role", pattern: /\byou are (?:now|no longer)\b|\bfrom now on,? you (?:are|will|must)\b/i },
  {
    sign: "hide from the user",
    pattern:
      /\b(?:do not|don't|never) (?:tell|inform|mention|reveal|show)(?: (?:this|it|anything))?(?: to)? the user\b/i,
  },
  { sign: "a system prompt", pattern: /\b(?:system prompt|developer message|new instructions?:)/i },
  { sign: "chat template markers", pattern: /<\|im_start\|>|<\|system\|>|\[INST\]|<<SYS>>|<\/?system>/i },
  {
    sign: "an order to the assistant",
    pattern:
      /\b(?:assistant|AI|model|LLM)\b.{0,20}?\b(?:must|should|is required to)\b.{0,40}?\b(?:call|run|send|execute|fetch)\b/i,
  },
];

/** The signs of injection in `text`, by name. */
export function injectionSigns(text: string): string[] {
  return SIGNS.filter(({ pattern }) => pattern.test(text)).map(({ sign }) => sign);
}

/**
 * `injection`: results (and tool descriptions, see `describe`) read for text aimed at the model.
 * What it finds is recorded (the default mode is `audit`); in `enforce` mode a result with it is
 * withheld, and a description replaced by a note saying so.
 */
export function injectionGuardrail(): ImmediateCheck & { describe(description: string): GuardrailOutcome } {
  const found = (value: unknown): string[] => {
    const signs = new Set<string>();
    someString(value, (text) => {
      for (const sign of injectionSigns(text)) signs.add(sign);
      return false;
    });
    return [...signs];
  };
  return {
    response(result: JsonObject) {
      if (result.isError === true) return { action: "pass" };
      const signs = found(result);
      return signs.length === 0
        ? { action: "pass" }
        : {
            action: "refuse",
            message: `the result reads like instructions to the model (${signs.join(", ")})`,
          };
    },
    describe(description: string) {
      const signs = found(description);
      if (signs.length === 0) return { action: "pass" };
      return {
        action: "rewrite",
        value: {
          description: `[description withheld by mcplex: it reads like instructions to the model (${signs.join(", ")})]`,
        },
        detail: `the description reads like instructions to the model (${signs.join(", ")})`,
      };
    },
  };
}
