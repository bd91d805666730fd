import { emailPatternProblem } from "./claim-matchers.js";
import { joinPath } from "./config-issues.js";
import type {
  AccessRuleConfig,
  AuthConfig,
  AuthIssuerConfig,
  DashboardSignInConfig,
  DpopConfig,
  ScopeRuleConfig,
} from "./types.js";
import type { ValueReader } from "./value-reader.js";

/** Signature algorithms accepted unless an issuer lists its own: asymmetric ones only. */
export const DEFAULT_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

const DEFAULT_CLOCK_TOLERANCE_MS = 30_000;
const DEFAULT_JWKS_COOLDOWN_MS = 60_000;

/**
 * The `auth:` block (see {@link AuthConfig}). Every problem is recorded at its exact path;
 * an introspection client's secret is redacted from logs. `profiles` are the config's, for
 * rules that name one.
 */
export function readAuth(
  reader: ValueReader,
  value: unknown,
  profiles: readonly string[],
): AuthConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const node = reader.map(value, "auth");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "auth", [
    "resource",
    "audience",
    "issuers",
    "scopes",
    "clockTolerance",
    "jwksCooldown",
    "claims",
    "access",
    "require",
    "dashboard",
    "dpop",
  ]);
  const auth: AuthConfig = {
    issuers: readIssuers(reader, node.issuers),
    scopes: scopeList(reader, node.scopes, "auth.scopes") ?? [],
    clockTolerance: DEFAULT_CLOCK_TOLERANCE_MS,
    jwksCooldown: DEFAULT_JWKS_COOLDOWN_MS,
    claims: { groups: "groups", email: "email", emailVerified: "email_verified" },
    require: readRequire(reader, node.require),
  };
  const resource = reader.nonEmpty(node.resource, "auth.resource");
  if (resource !== undefined) {
    const problem = resourceProblem(reader.probe(resource));
    if (problem !== undefined) reader.fail("auth.resource", problem);
    else auth.resource = resource.replace(/\/+$/, "");
  }
  const audience = reader.stringList(node.audience, "auth.audience");
  if (audience !== undefined) auth.audience = audience;
  if (node.clockTolerance !== undefined) {
    // Zero is a fair choice here (no leeway), which `duration` refuses.
    const ms = node.clockTolerance === 0 ? 0 : reader.duration(node.clockTolerance, "auth.clockTolerance");
    if (ms !== undefined && ms > 300_000)
      reader.fail(
        "auth.clockTolerance",
        'must be at most 5 minutes; clocks that far apart need fixing (NTP), e.g. "30s"',
      );
    else if (ms !== undefined) auth.clockTolerance = ms;
  }
  const cooldown = reader.duration(node.jwksCooldown, "auth.jwksCooldown");
  if (cooldown !== undefined) auth.jwksCooldown = cooldown;
  const claims = reader.map(node.claims, "auth.claims");
  if (claims !== undefined) {
    reader.knownKeys(claims, "auth.claims", ["groups", "email", "emailVerified"]);
    for (const key of ["groups", "email", "emailVerified"] as const) {
      const path = reader.nonEmpty(claims[key], `auth.claims.${key}`);
      if (path !== undefined) auth.claims[key] = path;
    }
  }
  if (node.access !== undefined && node.access !== null)
    auth.access = readAccess(reader, node.access, profiles, auth.issuers);
  const dashboard = readDashboard(reader, node.dashboard, auth.issuers);
  if (dashboard !== undefined) auth.dashboard = dashboard;
  const dpop = readDpop(reader, node.dpop);
  if (dpop !== undefined) auth.dpop = dpop;
  return auth;
}

/** DPoP proof algorithms accepted unless `auth.dpop.algorithms` says: asymmetric ones only (RFC 9449 §4.2). */
export const DEFAULT_DPOP_ALGORITHMS: readonly string[] = DEFAULT_ALGORITHMS;
const DEFAULT_DPOP_WINDOW_MS = 300_000;

/** `auth.dpop`: whether DPoP-bound tokens are required, nonces, the proof algorithms and window. */
function readDpop(reader: ValueReader, value: unknown): DpopConfig | undefined {
  const node = reader.map(value, "auth.dpop");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "auth.dpop", ["required", "nonce", "algorithms", "window"]);
  const dpop: DpopConfig = {
    required: reader.boolean(node.required, "auth.dpop.required") ?? false,
    nonce: reader.boolean(node.nonce, "auth.dpop.nonce") ?? false,
    algorithms: [...DEFAULT_DPOP_ALGORITHMS],
    window: DEFAULT_DPOP_WINDOW_MS,
  };
  const algorithms = reader.stringList(node.algorithms, "auth.dpop.algorithms");
  if (algorithms !== undefined) {
    const refused = algorithms.filter((alg) => !DEFAULT_DPOP_ALGORITHMS.includes(alg));
    if (refused.length > 0)
      reader.fail(
        "auth.dpop.algorithms",
        `${refused.join(", ")} not accepted: a DPoP proof is signed with an asymmetric key (${DEFAULT_DPOP_ALGORITHMS.join(", ")})`,
      );
    else if (algorithms.length === 0) reader.fail("auth.dpop.algorithms", "must name at least one algorithm");
    else dpop.algorithms = algorithms;
  }
  const window = reader.duration(node.window, "auth.dpop.window");
  if (window !== undefined) {
    if (window < 10_000 || window > 3_600_000)
      reader.fail(
        "auth.dpop.window",
        'must be between 10 seconds and 1 hour: how long a proof stays good after it is signed, e.g. "5m"',
      );
    else dpop.window = window;
  }
  return dpop;
}

/** `auth.dashboard`: the issuer and client the web dashboard signs in with, and its scopes. */
function readDashboard(
  reader: ValueReader,
  value: unknown,
  issuers: readonly AuthIssuerConfig[],
): DashboardSignInConfig | undefined {
  const node = reader.map(value, "auth.dashboard");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "auth.dashboard", ["issuer", "clientId", "scopes"]);
  const out: DashboardSignInConfig = {};
  const issuer = reader.nonEmpty(node.issuer, "auth.dashboard.issuer");
  if (issuer !== undefined) {
    const known = issuers.map((entry) => reader.probe(entry.issuer));
    if (issuers.length > 0 && !known.includes(reader.probe(issuer)))
      reader.fail(
        "auth.dashboard.issuer",
        `is not one of auth.issuers (${known.join(", ")}); the page signs in where the gateway accepts tokens from`,
      );
    else out.issuer = issuer;
  }
  const clientId = reader.nonEmpty(node.clientId, "auth.dashboard.clientId");
  if (clientId !== undefined) out.clientId = clientId;
  const scopes = scopeList(reader, node.scopes, "auth.dashboard.scopes");
  if (scopes !== undefined) out.scopes = scopes;
  return out;
}

/** Why `resource` cannot be the gateway's public URL, or `undefined`. */
export function resourceProblem(resource: string): string | undefined {
  if (!/^https?:\/\/[^/]/i.test(resource) || !URL.canParse(resource))
    return 'must be the http(s) URL clients reach this gateway at, such as "https://mcp.example.com"';
  const url = new URL(resource);
  if (url.search !== "" || url.hash !== "") return "must have no query or fragment (RFC 8707)";
  if (/\/(mcp|sse|ws)\/?$/.test(url.pathname))
    return `names an endpoint (${url.pathname}); give the URL without it, such as "${url.origin}": /mcp, /sse and /ws are added`;
  return undefined;
}

function readIssuers(reader: ValueReader, value: unknown): AuthIssuerConfig[] {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
    reader.fail(
      "auth.issuers",
      'needs at least one authorization server, such as [{ issuer: "https://login.example.com" }]',
    );
    return [];
  }
  if (!Array.isArray(value)) {
    reader.fail(
      "auth.issuers",
      "must be a list of { issuer, jwksUri?, algorithms?, introspection? } entries",
    );
    return [];
  }
  const issuers: AuthIssuerConfig[] = [];
  const seen = new Set<string>();
  value.forEach((item, i) => {
    const path = joinPath("auth.issuers", i);
    const node = typeof item === "string" ? { issuer: item } : reader.map(item, path);
    if (node === undefined) return;
    reader.knownKeys(node, path, ["issuer", "jwksUri", "algorithms", "introspection"]);
    const issuer = reader.nonEmpty(node.issuer, joinPath(path, "issuer"));
    if (issuer === undefined) {
      if (node.issuer === undefined) reader.fail(path, 'needs an "issuer": the `iss` its tokens carry');
      return;
    }
    const checked = reader.probe(issuer);
    if (!httpUrl(checked))
      reader.fail(
        joinPath(path, "issuer"),
        'must be the issuer URL its tokens carry in `iss`, such as "https://login.example.com"',
      );
    if (seen.has(checked)) reader.fail(joinPath(path, "issuer"), "is listed twice");
    seen.add(checked);
    const entry: AuthIssuerConfig = { issuer, algorithms: [...DEFAULT_ALGORITHMS] };
    const jwksUri = reader.nonEmpty(node.jwksUri, joinPath(path, "jwksUri"));
    if (jwksUri !== undefined) {
      if (!httpUrl(reader.probe(jwksUri)))
        reader.fail(joinPath(path, "jwksUri"), "must be the http(s) URL of the issuer's JSON Web Key Set");
      else entry.jwksUri = jwksUri;
    }
    const algorithms = reader.stringList(node.algorithms, joinPath(path, "algorithms"));
    if (algorithms !== undefined) {
      const refused = algorithms.filter((alg) => !DEFAULT_ALGORITHMS.includes(alg));
      if (refused.length > 0)
        reader.fail(
          joinPath(path, "algorithms"),
          `${refused.join(", ")} not accepted: only asymmetric signatures are (${DEFAULT_ALGORITHMS.join(", ")}); ` +
            "`none` and HS* would let anyone who knows the public key (or nothing) sign tokens",
        );
      else if (algorithms.length === 0)
        reader.fail(joinPath(path, "algorithms"), "must name at least one algorithm");
      else entry.algorithms = algorithms;
    }
    const introspection = readIntrospection(reader, node.introspection, joinPath(path, "introspection"));
    if (introspection !== undefined) entry.introspection = introspection;
    issuers.push(entry);
  });
  checkIntrospectionRouting(reader, issuers);
  return issuers;
}

function readIntrospection(
  reader: ValueReader,
  value: unknown,
  path: string,
): AuthIssuerConfig["introspection"] | undefined {
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, ["endpoint", "clientId", "clientSecret", "prefix"]);
  const clientId = reader.nonEmpty(node.clientId, joinPath(path, "clientId"));
  if (clientId === undefined) {
    if (node.clientId === undefined)
      reader.fail(
        path,
        'needs a "clientId": the client mcplex authenticates as at the introspection endpoint',
      );
    return undefined;
  }
  const out: NonNullable<AuthIssuerConfig["introspection"]> = { clientId };
  const endpoint = reader.nonEmpty(node.endpoint, joinPath(path, "endpoint"));
  if (endpoint !== undefined) {
    if (!httpUrl(reader.probe(endpoint)))
      reader.fail(
        joinPath(path, "endpoint"),
        "must be the http(s) URL of the issuer's introspection endpoint (RFC 7662)",
      );
    else out.endpoint = endpoint;
  }
  const secret = reader.string(node.clientSecret, joinPath(path, "clientSecret"));
  if (secret !== undefined) {
    reader.secrets.add(secret);
    out.clientSecret = secret;
  }
  const prefix = reader.nonEmpty(node.prefix, joinPath(path, "prefix"));
  if (prefix !== undefined) out.prefix = prefix;
  return out;
}

/**
 * An opaque token goes to one issuer only (introspection shows it to whoever is asked): with
 * several issuers that introspect, all but one say by `prefix` which tokens are theirs, and no
 * prefix starts another.
 */
function checkIntrospectionRouting(reader: ValueReader, issuers: readonly AuthIssuerConfig[]): void {
  const introspecting = issuers
    .map((entry, i) => ({ entry, path: joinPath(joinPath("auth.issuers", i), "introspection") }))
    .filter(({ entry }) => entry.introspection !== undefined);
  const unprefixed = introspecting.filter(({ entry }) => entry.introspection?.prefix === undefined);
  for (const { path } of unprefixed.slice(1))
    reader.fail(
      joinPath(path, "prefix"),
      `is needed: ${unprefixed[0]!.path} already takes the opaque tokens no prefix claims, and an opaque token is shown to one issuer only; give the prefix this issuer's tokens start with`,
    );
  introspecting.forEach(({ entry, path }, i) => {
    const prefix = entry.introspection?.prefix;
    if (prefix === undefined) return;
    for (const other of introspecting.slice(i + 1)) {
      const theirs = other.entry.introspection?.prefix;
      if (theirs !== undefined && (theirs.startsWith(prefix) || prefix.startsWith(theirs)))
        reader.fail(
          joinPath(path, "prefix"),
          `overlaps ${joinPath(other.path, "prefix")}: a token would match both; make each prefix start no other`,
        );
    }
  });
}

function readAccess(
  reader: ValueReader,
  value: unknown,
  profiles: readonly string[],
  issuers: readonly AuthIssuerConfig[],
): AccessRuleConfig[] {
  if (!Array.isArray(value)) {
    reader.fail(
      "auth.access",
      "must be a list of { when, profile?, operator?, mode? } rules, first match wins",
    );
    return [];
  }
  const rules: AccessRuleConfig[] = [];
  value.forEach((item, i) => {
    const path = joinPath("auth.access", i);
    const node = reader.map(item, path);
    if (node === undefined) return;
    reader.knownKeys(node, path, ["when", "profile", "operator", "mode"]);
    const whenPath = joinPath(path, "when");
    const when = reader.map(node.when, whenPath);
    if (when === undefined) {
      if (node.when === undefined)
        reader.fail(
          path,
          'needs "when": the claims it matches, e.g. { groups: [admins] } ({} matches everyone)',
        );
      return;
    }
    const rule = readWhen(reader, when, whenPath, issuers);
    if (rule === undefined) return;
    const profile = reader.nonEmpty(node.profile, joinPath(path, "profile"));
    if (profile !== undefined) {
      if (!profiles.includes(profile))
        reader.fail(
          joinPath(path, "profile"),
          `names no profile "${profile}"; define it under profiles:${profiles.length === 0 ? "" : ` (there are ${profiles.join(", ")})`}`,
        );
      else rule.profile = profile;
    }
    const operator = reader.boolean(node.operator, joinPath(path, "operator"));
    if (operator !== undefined) rule.operator = operator;
    if (node.mode !== undefined && node.mode !== null) {
      const mode = reader.choice(node.mode, joinPath(path, "mode"), ["all", "search", "code"] as const);
      if (mode !== undefined) rule.mode = mode;
    }
    rules.push(rule);
  });
  return rules;
}

/** One rule's `when`: which issuers' callers, and which of their claims. */
function readWhen(
  reader: ValueReader,
  when: Record<string, unknown>,
  path: string,
  issuers: readonly AuthIssuerConfig[],
): AccessRuleConfig | undefined {
  reader.knownKeys(when, path, ["issuer", "client", "sub", "email", "unverifiedEmail", "groups", "scope"]);
  const rule: AccessRuleConfig = { when: {} };
  for (const key of ["issuer", "client", "sub", "email", "groups", "scope"] as const) {
    const list = oneOrMany(reader, when[key], joinPath(path, key));
    if (list !== undefined) rule.when[key] = list;
  }
  const known = issuers.map((entry) => entry.issuer);
  const issuer = rule.when.issuer;
  if (issuer !== undefined) {
    const unknown = issuer.filter((name) => !known.includes(name));
    if (unknown.length > 0)
      return reader.fail(
        joinPath(path, "issuer"),
        `${unknown.join(", ")} is not one of auth.issuers (${known.join(", ")}); name the issuer exactly as listed there`,
      );
  } else if (issuers.length > 1)
    return reader.fail(
      joinPath(path, "issuer"),
      `is required when auth.issuers lists several: a rule would otherwise match the same claims (sub, email, groups) from every issuer; name the issuer(s) it is for, such as issuer: ${known[0]}`,
    );
  if (rule.when.client !== undefined && (rule.when.sub !== undefined || rule.when.email !== undefined))
    return reader.fail(
      path,
      "names a client (a machine caller, whose token has no sub) and a user's sub or email; write one rule for the machine caller and one for users",
    );
  for (const [i, pattern] of (rule.when.email ?? []).entries()) {
    const problem = emailPatternProblem(reader.probe(pattern));
    if (problem !== undefined) return reader.fail(joinPath(joinPath(path, "email"), i), problem);
  }
  const unverified = reader.boolean(when.unverifiedEmail, joinPath(path, "unverifiedEmail"));
  if (unverified !== undefined) {
    if (rule.when.email === undefined)
      return reader.fail(
        joinPath(path, "unverifiedEmail"),
        "applies to an email condition; give email too, or remove it",
      );
    rule.when.unverifiedEmail = unverified;
  }
  return rule;
}

function readRequire(reader: ValueReader, value: unknown): ScopeRuleConfig[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    reader.fail(
      "auth.require",
      'must be a list of { tools | resources | prompts | servers, scopes } entries, such as [{ tools: ["github__*"], scopes: [github] }]',
    );
    return [];
  }
  const rules: ScopeRuleConfig[] = [];
  value.forEach((item, i) => {
    const path = joinPath("auth.require", i);
    const node = reader.map(item, path);
    if (node === undefined) return;
    reader.knownKeys(node, path, ["tools", "resources", "prompts", "servers", "scopes"]);
    const scopes = scopeList(reader, node.scopes, joinPath(path, "scopes"));
    if (scopes === undefined || scopes.length === 0) {
      if (node.scopes === undefined || scopes?.length === 0)
        reader.fail(
          joinPath(path, "scopes"),
          "must name the scopes the matching calls need, such as [github]",
        );
      return;
    }
    const rule: ScopeRuleConfig = { scopes };
    for (const key of ["tools", "resources", "prompts", "servers"] as const) {
      const list = oneOrMany(reader, node[key], joinPath(path, key));
      if (list !== undefined) rule[key] = list;
    }
    if (
      rule.tools === undefined &&
      rule.resources === undefined &&
      rule.prompts === undefined &&
      rule.servers === undefined
    ) {
      reader.fail(
        path,
        "selects nothing; give tools, resources, prompts or servers (globs; servers by name)",
      );
      return;
    }
    rules.push(rule);
  });
  return rules;
}

/** A string or a list of strings, as a list. */
function oneOrMany(reader: ValueReader, value: unknown, path: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") {
    const text = reader.nonEmpty(value, path);
    return text === undefined ? undefined : [text];
  }
  return reader.stringList(value, path);
}

/** Scope names: visible ASCII without spaces or quotes (RFC 6749 §3.3), so they fit a challenge. */
export function scopeList(reader: ValueReader, value: unknown, path: string): string[] | undefined {
  const list = oneOrMany(reader, value, path);
  if (list === undefined) return undefined;
  const bad = list.filter((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(reader.probe(scope)));
  if (bad.length > 0) {
    reader.fail(
      path,
      `${bad.map((s) => JSON.stringify(s)).join(", ")}: a scope is one word of visible ASCII without " or \\`,
    );
    return undefined;
  }
  return list;
}

function httpUrl(text: string): boolean {
  return /^https?:\/\/[^/]/i.test(text) && URL.canParse(text);
}
