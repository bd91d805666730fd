import picomatch from "picomatch";
import { isEmailAddress, stringList, wholeMatcher } from "../config/claim-matchers.js";
import type { AccessRuleConfig, AuthConfig, ScopeRuleConfig } from "../config/types.js";
import type { RequestTarget } from "../hub/call-pipeline.js";
import { resolvedNames } from "./resolved-names.js";

/**
 * The caller a token names, with the claims a rule reads, gathered once per token. A caller is
 * its issuer and its subject together: two issuers' equal `sub` are two callers. A token without
 * a `sub` is a machine caller (client credentials), known by its `client`.
 */
export interface UserClaims {
  /** The issuer that vouched for the token (its entry of `auth.issuers`). */
  readonly issuer: string;
  /** The token's `sub`; absent for a machine caller. */
  readonly sub?: string;
  /** The OAuth client (`client_id`, else `azp`), where the token names one. */
  readonly client?: string;
  /** The email claim, when it is one valid address (see `isEmailAddress`). */
  readonly email?: string;
  /** Whether the issuer says it verified {@link email} (the claim is the boolean `true`). */
  readonly emailVerified: boolean;
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

/** The claims the rules read, where `auth.claims` says they are, each taken only with its type. */
export function userClaims(
  claims: Readonly<Record<string, unknown>>,
  issuer: string,
  config: AuthConfig,
): UserClaims {
  const email = claimAt(claims, config.claims.email);
  const client = typeof claims.client_id === "string" ? claims.client_id : claims.azp;
  return {
    issuer,
    ...(typeof claims.sub === "string" && claims.sub !== "" ? { sub: claims.sub } : {}),
    ...(typeof client === "string" && client !== "" ? { client } : {}),
    ...(typeof email === "string" && isEmailAddress(email) ? { email } : {}),
    emailVerified: claimAt(claims, config.claims.emailVerified) === true,
    groups: stringList(claimAt(claims, config.claims.groups)),
    // RFC 6749 §3.3: `scope` is space-separated; some providers send `scp` as a list.
    scopes:
      typeof claims.scope === "string" ? claims.scope.split(" ").filter(Boolean) : stringList(claims.scp),
  };
}

/**
 * A compiled `auth.access`: the first rule whose `when` holds, or `undefined` when none does. A
 * rule with `client` matches machine callers only, a rule without it users only; `issuer`
 * narrows it to those issuers' tokens; an `email` matches a verified address only, unless the
 * rule says `unverifiedEmail`.
 */
export function accessRules(
  rules: readonly AccessRuleConfig[] | undefined,
): (user: UserClaims) => AccessRuleConfig | undefined {
  // No rules: every signed-in user is let in, with the front's profile and no operator rights;
  // a machine caller only by a rule that names its client.
  if (rules === undefined) return (user) => (user.sub === undefined ? undefined : { when: {} });
  const compiled = rules.map((rule) => {
    const { issuer, client, groups, scope } = rule.when;
    const sub = rule.when.sub === undefined ? undefined : wholeMatcher(rule.when.sub);
    const email = rule.when.email === undefined ? undefined : wholeMatcher(rule.when.email, { email: true });
    const unverified = rule.when.unverifiedEmail === true;
    return (user: UserClaims) =>
      (issuer === undefined || issuer.includes(user.issuer)) &&
      (client === undefined
        ? user.sub !== undefined
        : user.sub === undefined && user.client !== undefined && client.includes(user.client)) &&
      (sub === undefined || (user.sub !== undefined && sub(user.sub))) &&
      (email === undefined ||
        (user.email !== undefined && (unverified || user.emailVerified) && email(user.email))) &&
      (groups === undefined || groups.some((group) => user.groups.includes(group))) &&
      (scope === undefined || scope.every((s) => user.scopes.includes(s)));
  });
  return (user) => {
    const index = compiled.findIndex((matches) => matches(user));
    return index === -1 ? undefined : rules[index];
  };
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
