import {
  celProblem,
  compilePolicyExpression,
  type PolicyExpression,
  type PolicyVariables,
  toolGuard,
} from "../config/policy-expressions.js";
import type { PolicyEffect, PolicyRuleConfig, ScopeRuleConfig } from "../config/types.js";
import type { RequestTarget } from "../hub/call-pipeline.js";
import { scopeRules } from "./access-rules.js";

/** One rule that held for a request (or could not be evaluated), as the audit trail and the span show it. */
export interface PolicyDecision {
  rule: string;
  effect: PolicyEffect;
  phase: "request" | "response";
  /** A `require` rule's scopes the caller lacks (empty when it holds them all). */
  missing?: string[];
  /** Why the rule's condition could not be evaluated (it then counts as holding, but for `allow`). */
  error?: string;
}

/** What the rules make of one request or result. */
export interface PolicyVerdict {
  /** `require`: the caller must sign in again granting {@link missing}. */
  outcome: "allow" | "deny" | "require";
  /** The rule that denied. */
  denied?: { rule: string; message: string };
  /** Scopes the `require` rules that held ask and the caller lacks, in rule order. */
  missing: string[];
  /** Every rule that held or failed, in order. */
  decisions: PolicyDecision[];
}

/** What a rule needs besides its condition's variables: the caller's sign-in. */
export interface PolicyCaller {
  /** Signed in through `auth:` (only then do `require` rules concern the caller). */
  signedIn: boolean;
  scopes: readonly string[];
}

interface CompiledRule {
  config: PolicyRuleConfig;
  holds: PolicyExpression;
  /** The only tools it can hold for (its condition says `request.tool == "..." && ...`). */
  tools: ReadonlySet<string> | undefined;
}

/**
 * The policies of a config, compiled once: the CEL rules of `policies:` and the scope rules of
 * `auth.require` as one decision. Rules are read in order: `audit` rules that hold are recorded,
 * `require` rules that hold add the scopes the caller lacks (a caller who did not sign in is not
 * concerned: their access is their profile), and the first `allow` or `deny` that holds decides;
 * none deciding allows. A condition that cannot be evaluated (a key the request does not have)
 * fails closed: a `deny` or `require` rule counts as holding, an `allow` as not.
 */
export class Policies {
  readonly #request: CompiledRule[];
  readonly #response: CompiledRule[];
  readonly #scopes: ((target: RequestTarget, granted: readonly string[]) => string[]) | undefined;

  constructor(rules: readonly PolicyRuleConfig[], scopeRequirements: readonly ScopeRuleConfig[] = []) {
    const compiled = rules.map((config) => {
      const holds = compileRule(config);
      return { config, holds, tools: toolGuard(holds) };
    });
    this.#request = compiled.filter((rule) => rule.config.phase === "request");
    this.#response = compiled.filter((rule) => rule.config.phase === "response");
    this.#scopes = scopeRequirements.length === 0 ? undefined : scopeRules(scopeRequirements);
  }

  /** Whether a rule reads results (the layer then needs them parsed). */
  get readsResults(): boolean {
    return this.#response.length > 0;
  }

  /** Whether any rule decides requests (else only results are decided). */
  get decidesRequests(): boolean {
    return this.#request.length > 0 || this.#scopes !== undefined;
  }

  /** The verdict on a request about to reach its server. */
  decideRequest(variables: PolicyVariables, target: RequestTarget, caller: PolicyCaller): PolicyVerdict {
    const verdict = decide(this.#request, variables, caller, "request");
    if (this.#scopes !== undefined && caller.signedIn && verdict.outcome !== "deny") {
      const missing = this.#scopes(target, caller.scopes).filter((scope) => !verdict.missing.includes(scope));
      if (missing.length > 0) {
        verdict.missing.push(...missing);
        verdict.decisions.push({ rule: "auth.require", effect: "require", phase: "request", missing });
        if (verdict.outcome === "allow" && verdict.denied === undefined) verdict.outcome = "require";
      }
    }
    return verdict;
  }

  /** The verdict on a result, before it goes back: `deny` or `allow`. */
  decideResponse(variables: PolicyVariables, caller: PolicyCaller): PolicyVerdict {
    return decide(this.#response, variables, caller, "response");
  }

  /**
   * Whether a listed tool, prompt or resource is left out of a caller's list: a `deny` rule holds
   * for it whatever the arguments (its condition is true with none), and no `allow` rule before
   * it might hold. A rule that reads the arguments cannot tell: the name stays listed, and the
   * call is decided when it comes.
   */
  hides(variables: PolicyVariables): boolean {
    const tool = (variables.request as { tool?: unknown }).tool;
    for (const { config, holds, tools } of this.#request) {
      if (config.effect !== "allow" && config.effect !== "deny") continue;
      if (tools !== undefined && !tools.has(tool as string)) continue;
      let value: unknown;
      try {
        value = holds(variables);
      } catch {
        return false;
      }
      if (value === true) return config.effect === "deny";
    }
    return false;
  }
}

function compileRule(config: PolicyRuleConfig): PolicyExpression {
  const expression = compilePolicyExpression(config.when);
  // The config was checked when it was read: a rule that does not compile here was made in code.
  if ("problem" in expression) throw new TypeError(`policy "${config.name}": ${expression.problem}`);
  return expression;
}

function decide(
  rules: readonly CompiledRule[],
  variables: PolicyVariables,
  caller: PolicyCaller,
  phase: "request" | "response",
): PolicyVerdict {
  const verdict: PolicyVerdict = { outcome: "allow", missing: [], decisions: [] };
  const tool = (variables.request as { tool?: unknown }).tool;
  for (const { config, holds, tools } of rules) {
    // A rule only for other tools does not hold: not evaluated (see `toolGuard`).
    if (tools !== undefined && !tools.has(tool as string)) continue;
    let value: unknown;
    let error: string | undefined;
    try {
      value = holds(variables);
    } catch (failure) {
      error = celProblem(failure, config.when);
    }
    const held = error !== undefined ? config.effect !== "allow" : value === true;
    if (!held) continue;
    const decision: PolicyDecision = { rule: config.name, effect: config.effect, phase };
    if (error !== undefined) decision.error = error;
    verdict.decisions.push(decision);
    if (config.effect === "audit") continue;
    if (config.effect === "require") {
      if (!caller.signedIn) continue;
      const missing = (config.scopes ?? []).filter(
        (scope) => !caller.scopes.includes(scope) && !verdict.missing.includes(scope),
      );
      decision.missing = missing;
      verdict.missing.push(...missing);
      continue;
    }
    if (config.effect === "deny") {
      verdict.outcome = "deny";
      verdict.denied = { rule: config.name, message: denialMessage(config, error) };
    }
    // `allow` or `deny`: the first that holds decides.
    return finished(verdict);
  }
  return finished(verdict);
}

function finished(verdict: PolicyVerdict): PolicyVerdict {
  if (verdict.outcome === "allow" && verdict.missing.length > 0) verdict.outcome = "require";
  return verdict;
}

/** What a denied caller reads: the rule's message, else a sentence naming the rule. */
function denialMessage(config: PolicyRuleConfig, error: string | undefined): string {
  if (error !== undefined)
    return `denied by policy "${config.name}": its condition could not be evaluated for this request (${error})`;
  return config.message ?? `denied by policy "${config.name}"`;
}
