import picomatch from "picomatch";
import type { AccessRuleConfig, AuthConfig, ScopeRuleConfig } from "../config/types.js";
import type { RequestTarget } from "../hub/call-pipeline.js";
import { resolvedNames } from "./resolved-names.js";

/** The claims a rule reads, gathered once per token. */
export interface UserClaims {
  readonly sub: string;
  readonly email?: string;
  readonly groups: readonly string[];
  readonly scopes: readonly string[];
}

/**
 * The value at a dotted `path` of a token's claims (`realm_access.roles`); a claim whose own
 * name holds a dot (`https://example.com/groups`) is found whole first.
 */
export function claimAt(claims: Readonly<Record<string, unknown>>, path: string): unknown {
  if (path in claims) return claims[path];
  let value: unknown = claims;
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The claims the rules read, where `auth.claims` says they are. */
export function userClaims(claims: Readonly<Record<string, unknown>>, config: AuthConfig): UserClaims {
  const email = claimAt(claims, config.claims.email);
  return {
    sub: String(claims.sub),
    ...(typeof email === "string" ? { email } : {}),
    groups: stringsOf(claimAt(claims, config.claims.groups)),
    // RFC 9068 `scope` is space-separated; some providers send `scp` as a list.
    scopes:
      typeof claims.scope === "string" ? claims.scope.split(" ").filter(Boolean) : stringsOf(claims.scp),
  };
}

function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return value.split(/[ ,]+/).filter(Boolean);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** A compiled `auth.access`: the first rule whose `when` holds, or `undefined` when none does. */
export function accessRules(
  rules: readonly AccessRuleConfig[] | undefined,
): (user: UserClaims) => AccessRuleConfig | undefined {
  // No rules: everyone signed in is let in, with the front's profile and no operator rights.
  if (rules === undefined) return () => ({ when: {} });
  const compiled = rules.map((rule) => {
    const sub = globs(rule.when.sub);
    const email = globs(rule.when.email, true);
    const { groups, scope } = rule.when;
    return (user: UserClaims) =>
      (sub === undefined || sub(user.sub)) &&
      (email === undefined || (user.email !== undefined && email(user.email))) &&
      (groups === undefined || groups.some((group) => user.groups.includes(group))) &&
      (scope === undefined || scope.every((s) => user.scopes.includes(s)));
  });
  return (user) => {
    const index = compiled.findIndex((matches) => matches(user));
    return index === -1 ? undefined : rules[index];
  };
}

function globs(
  patterns: readonly string[] | undefined,
  nocase = false,
): ((text: string) => boolean) | undefined {
  return patterns === undefined ? undefined : picomatch([...patterns], { dot: true, nocase });
}

/** Names are flat strings here, not paths: `*` matches across `/` (as profiles' globs do). */
function flatGlobs(patterns: readonly string[] | undefined): ((text: string) => boolean) | undefined {
  if (patterns === undefined) return undefined;
  const match = picomatch(
    patterns.map((p) => p.replaceAll("/", "\uE000")),
    { dot: true },
  );
  return (text) => match(text.replaceAll("/", "\uE000"));
}

/**
 * A compiled `auth.require`: the scopes a request's target needs and the caller lacks. A rule
 * applies to what the target resolved to, whatever name the request reached it by: `tools` globs
 * match the tool's exposed name (`server__tool`, as the catalog lists it, also when an MCP App
 * called it by its server's own name; a task's requests match the tool whose call created it),
 * `prompts` the prompt's exposed name, `resources` any of the URIs that name the resource (the
 * one asked, its server's own, and its qualified `mcplex://` form), and `servers` the server the
 * target resolved to.
 */
export function scopeRules(
  rules: readonly ScopeRuleConfig[],
): (target: RequestTarget, granted: readonly string[]) => string[] {
  const compiled = rules.map((rule) => ({
    tools: flatGlobs(rule.tools),
    resources: flatGlobs(rule.resources),
    prompts: flatGlobs(rule.prompts),
    servers: rule.servers,
    scopes: rule.scopes,
  }));
  return (target, granted) => {
    const { server, tool, prompt, uris } = resolvedNames(target);
    const missing: string[] = [];
    for (const rule of compiled) {
      const applies =
        (server !== undefined && rule.servers?.includes(server) === true) ||
        (tool !== undefined && rule.tools?.(tool) === true) ||
        (prompt !== undefined && rule.prompts?.(prompt) === true) ||
        uris.some((uri) => rule.resources?.(uri) === true);
      if (!applies) continue;
      for (const scope of rule.scopes)
        if (!granted.includes(scope) && !missing.includes(scope)) missing.push(scope);
    }
    return missing;
  };
}
