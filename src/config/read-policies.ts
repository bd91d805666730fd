import { describeValue, joinPath } from "./config-issues.js";
import { compilePolicyExpression } from "./policy-expressions.js";
import { scopeList } from "./read-auth.js";
import type { PolicyEffect, PolicyRuleConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

const RULE_KEYS = ["name", "when", "effect", "phase", "message", "scopes"];
const EFFECTS: readonly PolicyEffect[] = ["allow", "deny", "require", "audit"];
/** What a rule on a result can do: the request was already let through. */
const RESPONSE_EFFECTS: readonly PolicyEffect[] = ["deny", "audit"];

/**
 * `policies:`: a list of `{ name, when, effect, phase?, message?, scopes? }`. Each `when` is
 * compiled now, so a rule that is not valid CEL (or does not yield a bool) is a config error
 * naming the rule and the position, caught by `mcplex config check` before anything runs. A
 * `when` is taken as written: `${...}` is CEL's business here, never expanded, so no value from
 * the environment becomes part of a condition.
 */
export function readPolicies(reader: ValueReader, value: unknown): PolicyRuleConfig[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    reader.fail(
      "policies",
      `must be a list of rules such as [{ name: no-deletes, when: 'request.tool.endsWith("delete")', effect: deny }], not ${describeValue(value)}`,
    );
    return undefined;
  }
  const rules: PolicyRuleConfig[] = [];
  const names = new Set<string>();
  value.forEach((item, i) => {
    const rule = readRule(reader, item, joinPath("policies", i));
    if (rule === undefined) return;
    if (names.has(rule.name)) {
      reader.fail(
        joinPath(joinPath("policies", i), "name"),
        `"${rule.name}" names another rule too; names are unique`,
      );
      return;
    }
    names.add(rule.name);
    rules.push(rule);
  });
  return rules;
}

function readRule(reader: ValueReader, item: unknown, path: string): PolicyRuleConfig | undefined {
  const node = reader.map(item, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, RULE_KEYS);
  const name = reader.nonEmpty(node.name, joinPath(path, "name"));
  if (node.name === undefined)
    reader.fail(joinPath(path, "name"), "is required: the audit trail and refusals name the rule");
  const at = name === undefined ? path : `${path} (${name})`;
  const effect = node.effect;
  if (!EFFECTS.includes(effect as PolicyEffect)) {
    reader.fail(
      joinPath(path, "effect"),
      `must be one of ${EFFECTS.join(", ")}, not ${describeValue(effect)}`,
    );
    return undefined;
  }
  const phase = node.phase ?? "request";
  if (phase !== "request" && phase !== "response") {
    reader.fail(joinPath(path, "phase"), `must be request or response, not ${describeValue(phase)}`);
    return undefined;
  }
  if (phase === "response" && !RESPONSE_EFFECTS.includes(effect as PolicyEffect)) {
    reader.fail(
      joinPath(path, "effect"),
      `${String(effect)} cannot apply to a result (the request went through); a response rule may deny or audit`,
    );
    return undefined;
  }
  const when = readWhen(reader, node.when, joinPath(path, "when"), at);
  const rule: PolicyRuleConfig = {
    name: name ?? "",
    when: when ?? "",
    effect: effect as PolicyEffect,
    phase,
  };
  if (node.message !== undefined) {
    if (effect !== "deny")
      reader.fail(joinPath(path, "message"), "is what a deny answers; this rule does not deny");
    const message = reader.nonEmpty(node.message, joinPath(path, "message"));
    if (message !== undefined) rule.message = message;
  }
  if (effect === "require") {
    const scopes = scopeList(reader, node.scopes, joinPath(path, "scopes"));
    if (scopes === undefined || scopes.length === 0) {
      if (node.scopes === undefined || scopes?.length === 0)
        reader.fail(
          joinPath(path, "scopes"),
          "must name the scopes a matching request needs, such as [admin]",
        );
      return undefined;
    }
    rule.scopes = scopes;
  } else if (node.scopes !== undefined) {
    reader.fail(joinPath(path, "scopes"), "belongs to a require rule; this rule does not require scopes");
  }
  return name === undefined || when === undefined ? undefined : rule;
}

/** A rule's condition: CEL text that compiles to a bool, or an issue naming the rule and the position. */
function readWhen(reader: ValueReader, value: unknown, path: string, rule: string): string | undefined {
  if (typeof value !== "string" || value.trim() === "") {
    reader.fail(
      path,
      `must be a CEL condition such as '"admins" in caller.groups', not ${describeValue(value)} (quote it in YAML)`,
    );
    return undefined;
  }
  const compiled = compilePolicyExpression(value);
  if ("problem" in compiled) {
    reader.fail(path, `of ${rule} is not a valid condition: ${compiled.problem}`);
    return undefined;
  }
  return value;
}
