import { scopeRules } from "../access/access-rules.js";
import { resolvedNames } from "../access/resolved-names.js";
import type { ScopeRuleConfig } from "../config/types.js";
import { RpcError } from "../errors.js";
import { type Interceptor, interceptor } from "../hub/call-pipeline.js";
import { ErrorCode } from "../protocol/error-codes.js";

/**
 * Refuses a signed-in caller's request whose target needs scopes its token lacks
 * (`auth.require`), before it reaches a server. It sees every request with the target it resolved
 * to, whatever route named it: a direct call, an MCP App's unprefixed name, `call_tool` and
 * `run_code`'s inner calls (each a request from the top of the pipeline), a task's requests (as
 * the call that created the task). The refusal is `ErrorCode.Forbidden` with
 * `data: { reason: "insufficient_scope", scope }`, where `scope` is what to sign in again with
 * (the scopes held and those missing). The HTTP fronts answer it 403 with a step-up challenge;
 * code mode's inner calls and the other fronts get it as a JSON-RPC error. Callers that did not
 * sign in (static tokens, stdio, the library) are not concerned: their access is their profile.
 */
export function scopeCheck(rules: readonly ScopeRuleConfig[]): Interceptor {
  const missingFor = scopeRules(rules);
  // It reads no result.
  return interceptor({ needs: "raw" }, (next) => (request) => {
    const identity = request.context.identity;
    const target = request.target;
    // A target the caller's profile does not reach has no server: it goes on to be answered as
    // unknown, as a name that exists nowhere is; asking for a scope first would reveal it exists.
    // A tool of a per-user server the caller has not connected to yet is checked now, as the
    // tool it will be once connected: the call that follows the connect does not come back here.
    if (identity?.via !== "oauth" || target === undefined || resolvedNames(target).server === undefined)
      return next(request);
    const granted = identity.scopes ?? [];
    const missing = missingFor(target, granted);
    if (missing.length === 0) return next(request);
    const name = target.kind === "resource" ? target.uri : target.name;
    return Promise.reject(
      new RpcError(
        ErrorCode.Forbidden,
        `Forbidden: ${request.method} of ${name} needs the scope(s) ${missing.join(", ")}, which your sign-in did not grant; sign in again granting them`,
        { reason: "insufficient_scope", scope: [...granted, ...missing].join(" ") },
      ),
    );
  });
}
