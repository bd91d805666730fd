import type { CatalogTool } from "../catalog/types.js";
import type { GuardrailConfig } from "../config/types.js";
import type { JsonObject } from "../hub/call-pipeline.js";
import type { GuardrailCheck, GuardrailOutcome } from "./guardrail-layer.js";

/** How long a service may take when the entry says nothing. */
const DEFAULT_TIMEOUT_MS = 2000;
/** The most of a service's answer read. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * `webhook`: a guardrail service of the team's own, asked over HTTP with the call (its tool and
 * arguments) or its result in the shape of the MCP interceptors extension (SEP-2624):
 * `{ type, event: "tools/call", phase, payload, context }`. A validator answers
 * `{ valid, messages?: [{ message, severity? }] }`, `valid: false` refusing; a mutator answers
 * `{ modified, payload? }`, a modified payload replacing the arguments or the result. A service
 * that does not answer in `timeout`, answers an error status or something else makes the
 * guardrail fail: the call is refused unless the entry says `failOpen`.
 */
export function webhookGuardrail(config: GuardrailConfig): GuardrailCheck {
  const url = config.url!;
  const type = config.type ?? "validator";
  const ask = async (
    phase: "request" | "response",
    payload: JsonObject,
    tool: CatalogTool,
  ): Promise<GuardrailOutcome> => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...config.headers },
      body: JSON.stringify({
        type,
        event: "tools/call",
        phase,
        payload,
        context: { server: tool.server, tool: tool.name },
      }),
      signal: AbortSignal.timeout(config.timeout ?? DEFAULT_TIMEOUT_MS),
      redirect: "error",
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`the guardrail service answered ${response.status}`);
    if (text.length > MAX_ANSWER_BYTES) throw new Error("the guardrail service answered more than 8 MiB");
    let answer: { valid?: unknown; messages?: unknown; modified?: unknown; payload?: unknown };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new Error("the guardrail service answered something that is not JSON");
    }
    return type === "validator" ? validation(answer) : mutation(answer, phase);
  };
  return {
    request: (args, tool) => ask("request", args, tool),
    response: (result, tool) => ask("response", result, tool),
  };
}

function validation(answer: { valid?: unknown; messages?: unknown }): GuardrailOutcome {
  if (typeof answer.valid !== "boolean")
    throw new Error("the guardrail service's answer has no boolean `valid`");
  if (answer.valid) return { action: "pass" };
  const messages = Array.isArray(answer.messages)
    ? answer.messages
        .map((m) =>
          typeof (m as { message?: unknown })?.message === "string" ? (m as { message: string }).message : "",
        )
        .filter((m) => m !== "")
    : [];
  return {
    action: "refuse",
    message: messages.length > 0 ? messages.join("; ") : "the guardrail service refused it",
  };
}

function mutation(
  answer: { modified?: unknown; payload?: unknown },
  phase: "request" | "response",
): GuardrailOutcome {
  if (typeof answer.modified !== "boolean")
    throw new Error("the guardrail service's answer has no boolean `modified`");
  if (!answer.modified) return { action: "pass" };
  const payload = answer.payload;
  if (typeof payload !== "object" || payload === null || Array.isArray(payload))
    throw new Error("the guardrail service modified the payload but gave no object for it");
  const what = phase === "request" ? "the arguments" : "the result";
  return { action: "rewrite", value: payload as JsonObject, detail: `the guardrail service rewrote ${what}` };
}
