import type { Catalog } from "../catalog/catalog.js";
import { toolSelector } from "../catalog/tool-selector.js";
import type { CatalogTool } from "../catalog/types.js";
import type { GuardrailConfig } from "../config/types.js";
import { RpcError } from "../errors.js";
import type { CallRequest, Interceptor, JsonObject, LayerDecision } from "../hub/call-pipeline.js";
import { interceptor } from "../hub/call-pipeline.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { jsonOf, RawJson } from "../protocol/raw-json.js";

/** What a guardrail makes of one side of a call: nothing to do, a refusal, or a rewrite. */
export type GuardrailOutcome =
  | { action: "pass" }
  /** Something found and only recorded (a kind the entry audits). */
  | { action: "note"; detail: string }
  | { action: "refuse"; message: string }
  | { action: "rewrite"; value: JsonObject; detail: string };

/** An outcome now, or once a check that waits (a rule set loading, a service asked) has it. */
export type Checked = GuardrailOutcome | Promise<GuardrailOutcome>;

/** One guardrail's checks: on the arguments before the call, on the result after it. */
export interface GuardrailCheck {
  /** `arguments` of a call of `tool`; a rewrite gives the arguments the server gets. */
  request?(args: JsonObject, tool: CatalogTool): Checked;
  /** The result of a call of `tool`; a rewrite gives the result the caller gets. */
  response?(result: JsonObject, tool: CatalogTool): Checked;
  /**
   * A listed tool's description (`tools/list`, in the response phase); a rewrite's
   * `value.description` replaces it.
   */
  describe?(description: string, tool: CatalogTool): GuardrailOutcome;
  /**
   * Whether a result whose JSON text (as the server sent it, holding no escape, so every string
   * in it is written as it is) cannot hold anything this check finds: such a result passes as
   * the server's text, never parsed. A check without it reads every result parsed.
   */
  clearText?(json: string): boolean;
}

/** A guardrail whose checks answer at once (size, schema, pii). */
export interface ImmediateCheck extends GuardrailCheck {
  request?(args: JsonObject, tool: CatalogTool): GuardrailOutcome;
  response?(result: JsonObject, tool: CatalogTool): GuardrailOutcome;
}

/** Where a guardrail's decisions are counted (the gateway's metrics): by guardrail and outcome, never by caller. */
export type GuardrailCounter = (guardrail: string, outcome: string) => void;

/**
 * One guardrail at work on the hub's path, as SEP-2624 describes an interceptor: on the tool
 * calls its selectors pick, in its phase; in `enforce` mode its refusal or rewrite is applied, in
 * `audit` mode only recorded; a check that throws refuses the call (`failed-closed`) unless the
 * entry says `failOpen`. Each decision goes to the request's decisions (the audit trail, the
 * span) and to `count`.
 */
export function guardrailLayer(
  config: GuardrailConfig,
  check: GuardrailCheck,
  count: GuardrailCounter,
  catalog?: Pick<Catalog, "resolveTool">,
): Interceptor {
  const picks = toolSelector(config);
  const onRequest = config.phase !== "response" ? check.request : undefined;
  const onResponse = config.phase !== "request" ? check.response : undefined;
  const describe = config.phase !== "request" && catalog !== undefined ? check.describe : undefined;
  // A check of results reads them parsed, unless it can tell a clean one by its text; one of
  // arguments alone lets them pass as text.
  const clearText = check.clearText;
  const needs = onResponse === undefined || clearText !== undefined ? "raw" : "parsed";
  return interceptor({ needs }, (next) => (request) => {
    if (describe !== undefined && request.method === "tools/list")
      return next(request).then((result) =>
        described(config, describe, catalog!, picks, request, result, count),
      );
    const target = request.target;
    const tool = request.method === "tools/call" && target?.kind === "tool" ? target.tool : undefined;
    if (tool === undefined || !picks(tool, request.context.profile)) return next(request);
    const respond = (sent: CallRequest): Promise<JsonObject> => {
      if (onResponse === undefined) return next(sent);
      return next(sent).then((result) => {
        // Most results hold nothing a check looks for: told by their text, they are not parsed.
        if (
          clearText !== undefined &&
          result instanceof RawJson &&
          !result.text.includes("\\") &&
          clearText(result.text)
        )
          return result;
        const outcome = run(config, () => onResponse(jsonOf(result), tool), "response", sent, count);
        return outcome instanceof Promise
          ? outcome.then((o) => answered(config, tool, o, result))
          : answered(config, tool, outcome, result);
      });
    };
    if (onRequest === undefined) return respond(request);
    const args = (request.params.arguments ?? {}) as JsonObject;
    const proceed = (outcome: GuardrailOutcome): Promise<JsonObject> => {
      if (outcome.action === "refuse") return Promise.reject(refusal(config, tool, outcome.message));
      if (outcome.action !== "rewrite") return respond(request);
      return respond({ ...request, params: { ...request.params, arguments: outcome.value } });
    };
    // A check that answers at once (size, schema, pii) adds no promise of its own.
    const outcome = run(config, () => onRequest(args, tool), "request", request, count);
    return outcome instanceof Promise ? outcome.then(proceed) : proceed(outcome);
  });
}

/** A `tools/list` result with the descriptions `describe` rewrites replaced (in `enforce` mode). */
function described(
  config: GuardrailConfig,
  describe: NonNullable<GuardrailCheck["describe"]>,
  catalog: Pick<Catalog, "resolveTool">,
  picks: (tool: CatalogTool, profile: string | undefined) => boolean,
  request: CallRequest,
  result: JsonObject,
  count: GuardrailCounter,
): JsonObject {
  const listed = jsonOf(result);
  const tools = listed.tools;
  if (!Array.isArray(tools)) return result;
  const { profile } = request.context;
  let changed = false;
  const next = tools.map((item: { name?: unknown; description?: unknown }) => {
    const tool = typeof item.name === "string" ? catalog.resolveTool(item.name, profile) : undefined;
    if (tool === undefined || typeof item.description !== "string" || !picks(tool, profile)) return item;
    const forTool = {
      ...request,
      target: { kind: "tool" as const, name: tool.name, server: tool.server, tool },
    };
    const outcome = settled(config, describe(item.description, tool), "response", forTool, count);
    if (outcome.action !== "rewrite") return item;
    changed = true;
    return { ...item, description: outcome.value.description };
  });
  return changed ? { ...listed, tools: next } : result;
}

/** The result the caller gets: as it came, rewritten, or withheld as a tool error the model reads. */
function answered(
  config: GuardrailConfig,
  tool: CatalogTool,
  outcome: GuardrailOutcome,
  result: JsonObject,
): JsonObject {
  if (outcome.action === "rewrite") return outcome.value;
  if (outcome.action !== "refuse") return result;
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: `${tool.name}: result withheld by the ${config.guardrail} guardrail: ${outcome.message}`,
      },
    ],
  };
}

/** The check's outcome as the entry's mode and `failOpen` make it, recorded. */
function run(
  config: GuardrailConfig,
  check: () => Checked,
  phase: "request" | "response",
  request: CallRequest,
  count: GuardrailCounter,
): Checked {
  const failed = (error: unknown): GuardrailOutcome => {
    const reason = error instanceof Error ? error.message : String(error);
    record(request, config, phase, config.failOpen ? "failed-open" : "failed-closed", reason, count);
    return config.failOpen
      ? { action: "pass" }
      : { action: "refuse", message: `the ${config.guardrail} guardrail failed (${reason})` };
  };
  let produced: Checked;
  try {
    produced = check();
  } catch (error) {
    return failed(error);
  }
  if (produced instanceof Promise)
    return produced.then((outcome) => settled(config, outcome, phase, request, count), failed);
  return settled(config, produced, phase, request, count);
}

/** An outcome as the entry's mode makes it, recorded. */
function settled(
  config: GuardrailConfig,
  outcome: GuardrailOutcome,
  phase: "request" | "response",
  request: CallRequest,
  count: GuardrailCounter,
): GuardrailOutcome {
  if (outcome.action === "pass") return outcome;
  if (outcome.action === "note") {
    record(request, config, phase, "noted", outcome.detail, count);
    return { action: "pass" };
  }
  const audit = config.mode === "audit";
  const effect =
    outcome.action === "refuse" ? (audit ? "would-refuse" : "refused") : audit ? "would-rewrite" : "rewrote";
  record(
    request,
    config,
    phase,
    effect,
    outcome.action === "refuse" ? outcome.message : outcome.detail,
    count,
  );
  return audit ? { action: "pass" } : outcome;
}

function record(
  request: CallRequest,
  config: GuardrailConfig,
  phase: "request" | "response",
  effect: string,
  detail: string,
  count: GuardrailCounter,
): void {
  const context = request.context;
  context.decisions ??= [];
  const decision: LayerDecision = { by: "guardrail", name: config.guardrail, effect, phase, detail };
  const target = request.target;
  if (target?.kind === "tool") decision.target = target.name;
  context.decisions.push(decision);
  count(config.guardrail, effect);
}

/** A call the guardrail refuses before it is made: invalid params, naming the guardrail and the tool. */
function refusal(config: GuardrailConfig, tool: CatalogTool, message: string): RpcError {
  return new RpcError(
    ErrorCode.InvalidParams,
    `${tool.name}: refused by the ${config.guardrail} guardrail: ${message}`,
    {
      reason: "guardrail",
      guardrail: config.guardrail,
    },
  );
}
