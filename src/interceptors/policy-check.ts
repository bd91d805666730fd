import { Policies, type PolicyCaller, type PolicyVerdict } from "../access/policies.js";
import { callerVariables, policyVariables, requestVariables } from "../access/policy-variables.js";
import { resolvedNames } from "../access/resolved-names.js";
import type { Catalog } from "../catalog/catalog.js";
import type { CatalogTool } from "../catalog/types.js";
import type { PolicyVariables } from "../config/policy-expressions.js";
import type { McplexConfig } from "../config/types.js";
import { NOT_FOUND_CODES, NotFoundError, RpcError } from "../errors.js";
import type {
  CallRequest,
  Handler,
  Interceptor,
  JsonObject,
  RequestContext,
  RequestTarget,
} from "../hub/call-pipeline.js";
import { interceptor, targetName } from "../hub/call-pipeline.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { jsonOf } from "../protocol/raw-json.js";

/** Where a list method keeps its items, and what each item is as a target. */
const LISTS: Readonly<Record<string, { key: string; kind: "tool" | "prompt" | "resource" }>> = {
  "tools/list": { key: "tools", kind: "tool" },
  "prompts/list": { key: "prompts", kind: "prompt" },
  "resources/list": { key: "resources", kind: "resource" },
};

/** What {@link PolicyCheck} needs of the hub: a place on its path, and its catalog (to resolve listed names). */
export interface PolicyHost {
  /** Puts a layer on the path of every call (`hub.use`); gives back what takes it off. */
  use(layer: Interceptor): () => void;
  readonly catalog: Catalog;
  /** Counts a decision (`hub.decided`: the gateway's metrics). */
  decided(by: "policy", name: string, effect: string): void;
}

/**
 * The policies at work on the hub's pipeline (every front's requests, the library's, `mcplex
 * call` and `chat`): `policies:` and `auth.require` decided in one place ({@link Policies}), on
 * each request with the target it resolved to, whatever route named it. A denied request
 * answers as a name outside the caller's profile does (the rule's message); a `require` the
 * signed-in caller lacks scopes for answers `ErrorCode.Forbidden` with
 * `data: { reason: "insufficient_scope", scope }` (the HTTP fronts make it a step-up challenge);
 * a result a response rule denies is withheld (`Forbidden`, `reason: "policy"`). Lists leave out
 * what a rule denies whatever the arguments. Every rule that held goes to
 * `RequestContext.decisions`, for the audit trail and the span. With no rule the layer is not on
 * the path at all.
 */
export class PolicyCheck {
  readonly #hub: PolicyHost;
  #remove: (() => void) | undefined;
  #policies: Policies | undefined;

  constructor(hub: PolicyHost) {
    this.#hub = hub;
  }

  /** Takes a config's policies (at start and on every reload): on the path while there are any. */
  configure(config: Pick<McplexConfig, "policies" | "auth">): void {
    const rules = config.policies ?? [];
    const scopes = config.auth?.require ?? [];
    // Made before the old layer goes: rules that cannot be made leave the old ones at work.
    const policies = rules.length === 0 && scopes.length === 0 ? undefined : new Policies(rules, scopes);
    const layer =
      policies === undefined
        ? undefined
        : policyLayer(policies, this.#hub.catalog, (name, effect) =>
            this.#hub.decided("policy", name, effect),
          );
    this.#remove?.();
    this.#remove = layer === undefined ? undefined : this.#hub.use(layer);
    this.#policies = policies;
  }

  /**
   * Whether a rule denies `tool` to a caller whatever the arguments (see {@link Policies.hides}):
   * for lists made outside the pipeline, such as the tools `mcplex chat` offers its model (this
   * machine's user, `caller.via == "local"`).
   */
  hides(
    tool: CatalogTool,
    caller: Partial<Pick<RequestContext, "identity" | "profile" | "front">> = {},
  ): boolean {
    const policies = this.#policies;
    if (policies === undefined) return false;
    return policies.hides({
      caller: callerVariables(caller),
      request: requestVariables({
        id: 0,
        method: "tools/call",
        params: {},
        target: { kind: "tool", name: tool.name, server: tool.server, tool },
      } as CallRequest),
      response: {},
      now: new Date(),
    });
  }

  /** Takes the layer off the path. */
  close(): void {
    this.#remove?.();
    this.#remove = undefined;
  }
}

/** The layer of one set of {@link Policies}. */
export function policyLayer(
  policies: Policies,
  catalog: Catalog,
  count: (rule: string, effect: string) => void = () => {},
): Interceptor {
  // Parsed results only for rules that read them; a list is the gateway's own object either way.
  return interceptor({ needs: policies.readsResults ? "parsed" : "raw" }, (next) => (request) => {
    const list = LISTS[request.method];
    if (list !== undefined)
      return next(request).then((result) => withoutHidden(policies, catalog, request, result, list));
    const target = request.target;
    // A target the caller's profile does not reach has no server: it goes on to be answered as
    // unknown, as a name that exists nowhere is; a rule's answer first would reveal it exists.
    const names = target === undefined ? undefined : resolvedNames(target);
    if (target === undefined || names?.server === undefined) return next(request);
    const identity = request.context.identity;
    const caller: PolicyCaller = { signedIn: identity?.via === "oauth", scopes: identity?.scopes ?? [] };
    // Made once: the response phase adds the result to the same variables.
    const variables = policyVariables(request, undefined, names);
    if (policies.decidesRequests) {
      const verdict = policies.decideRequest(variables, target, caller);
      record(request, target, verdict, count);
      const refusal = refusalOf(request, target, verdict);
      if (refusal !== undefined) return Promise.reject(refusal);
    }
    if (!policies.readsResults) return next(request);
    return answered(policies, request, target, variables, caller, next, count);
  });
}

async function answered(
  policies: Policies,
  request: CallRequest,
  target: RequestTarget,
  variables: PolicyVariables,
  caller: PolicyCaller,
  next: Handler,
  count: (rule: string, effect: string) => void,
): Promise<JsonObject> {
  const result = await next(request);
  const verdict = policies.decideResponse({ ...variables, response: jsonOf(result) }, caller);
  record(request, target, verdict, count);
  if (verdict.denied === undefined) return result;
  throw new RpcError(ErrorCode.Forbidden, `Forbidden: the result was withheld: ${verdict.denied.message}`, {
    reason: "policy",
    rule: verdict.denied.rule,
  });
}

/** Why a request may not go on, or `undefined` when it may. */
function refusalOf(request: CallRequest, target: RequestTarget, verdict: PolicyVerdict): Error | undefined {
  if (verdict.denied !== undefined) {
    const kind = target.kind === "prompt" || target.kind === "resource" ? target.kind : "tool";
    return new NotFoundError(
      NOT_FOUND_CODES[kind],
      verdict.denied.message,
      kind === "tool" ? { tool: targetName(target) } : {},
    );
  }
  if (verdict.outcome !== "require") return undefined;
  const granted = request.context.identity?.scopes ?? [];
  return new RpcError(
    ErrorCode.Forbidden,
    `Forbidden: ${request.method} of ${targetName(target)} needs the scope(s) ${verdict.missing.join(", ")}, which your sign-in did not grant; sign in again granting them`,
    { reason: "insufficient_scope", scope: [...granted, ...verdict.missing].join(" ") },
  );
}

/** Adds the rules that held to the request's decisions. */
function record(
  request: CallRequest,
  target: RequestTarget,
  verdict: PolicyVerdict,
  count: (rule: string, effect: string) => void,
): void {
  if (verdict.decisions.length === 0) return;
  const context = request.context;
  context.decisions ??= [];
  const decisions = context.decisions;
  const name = targetName(target);
  for (const decision of verdict.decisions) {
    count(decision.rule, decision.effect);
    decisions.push({
      by: "policy",
      name: decision.rule,
      effect: decision.effect,
      phase: decision.phase,
      target: name,
      ...(decision.missing === undefined || decision.missing.length === 0
        ? {}
        : { missing: decision.missing }),
      ...(decision.error === undefined ? {} : { error: decision.error }),
    });
  }
}

/** A list without the items a rule denies this caller whatever the arguments. */
function withoutHidden(
  policies: Policies,
  catalog: Catalog,
  request: CallRequest,
  result: JsonObject,
  list: { key: string; kind: "tool" | "prompt" | "resource" },
): JsonObject {
  const parsed = jsonOf(result);
  const items = parsed[list.key];
  if (!Array.isArray(items) || items.length === 0) return result;
  const kept = items.filter(
    (item) => !policies.hides(policyVariables(asItemRequest(request, catalog, list.kind, item))),
  );
  return kept.length === items.length ? result : { ...parsed, [list.key]: kept };
}

/** A listed item as the request that would use it, with no arguments, its target resolved. */
function asItemRequest(
  request: CallRequest,
  catalog: Catalog,
  kind: "tool" | "prompt" | "resource",
  item: unknown,
): CallRequest {
  const entry = item as { name?: unknown; uri?: unknown };
  const name = String(kind === "resource" ? entry.uri : entry.name);
  const { profile } = request.context;
  let target: RequestTarget;
  if (kind === "tool") {
    const tool = catalog.resolveTool(name, profile);
    target = tool === undefined ? { kind, name } : { kind, name, server: tool.server, tool };
  } else if (kind === "prompt") {
    const prompt = catalog.resolvePrompt(name, profile);
    target = prompt === undefined ? { kind, name } : { kind, name, server: prompt.server, prompt };
  } else {
    const resource = catalog.resolveResource(name, profile);
    target =
      resource === undefined ? { kind, uri: name } : { kind, uri: name, server: resource.server, resource };
  }
  const method = kind === "tool" ? "tools/call" : kind === "prompt" ? "prompts/get" : "resources/read";
  return { ...request, method, params: {}, target };
}
