import { type accessRules, type UserClaims, userClaims } from "../access/access-rules.js";
import type { AuthConfig } from "../config/types.js";
import { userKey } from "../credentials/user-ref.js";
import type { AuthOutcome, Identity } from "../fronts/authenticator.js";
import type { VerifiedToken } from "./token-verifier.js";

/**
 * What a verified token makes of its caller: the `Identity` `auth.access` gives its claims
 * (`via: "oauth"`, principal key, profile, operator rights, mode), or a 403 when no rule admits
 * it or it lacks the scopes every call needs (`auth.scopes`). `token` rides on the identity as a
 * hidden function, for token exchange only.
 */
export function outcomeOf(
  verified: VerifiedToken,
  token: string,
  config: AuthConfig,
  ruleFor: ReturnType<typeof accessRules>,
): AuthOutcome {
  const user = userClaims(verified.claims, verified.issuer, config);
  const rule = ruleFor(user);
  const missing = config.scopes.filter((scope) => !user.scopes.includes(scope));
  if (rule === undefined) {
    return {
      ok: false,
      status: 403,
      message:
        "Forbidden: you are signed in, but no rule of this gateway's auth.access admits you; ask its operator for access",
    };
  }
  if (missing.length > 0) {
    const scope = [...new Set([...user.scopes, ...config.scopes])].join(" ");
    return {
      ok: false,
      status: 403,
      message: `Forbidden: the token lacks the scope(s) ${missing.join(", ")}; sign in again granting them`,
      wwwAuthenticate: `Bearer error="insufficient_scope", scope="${scope}"`,
    };
  }
  const identity: { -readonly [K in keyof Identity]: Identity[K] } = {
    key: principalKey(user),
    via: "oauth",
    issuer: verified.issuer,
    scopes: user.scopes,
    groups: user.groups,
    operator: rule.operator === true,
    expiresAt: verified.expiresAt,
  };
  if (user.sub !== undefined) identity.subject = user.sub;
  if (user.email !== undefined) {
    identity.email = user.email;
    identity.emailVerified = user.emailVerified;
  }
  // For policies (`caller.claims`); not enumerable, as below: no JSON or log line carries them.
  Object.defineProperty(identity, "claims", {
    value: Object.freeze({ ...verified.claims }),
    enumerable: false,
  });
  // For token exchange only: a function, and not enumerable, so that no JSON, log or
  // comparison of the identity carries the token.
  Object.defineProperty(identity, "accessToken", { value: () => token, enumerable: false });
  if (user.client !== undefined) identity.client = user.client;
  if (rule.profile !== undefined) identity.profile = rule.profile;
  if (rule.mode !== undefined) identity.mode = rule.mode;
  return { ok: true, identity };
}

/**
 * The key of a caller's identity (limits, caches, sessions, parked calls, task handles): its
 * issuer with its subject, hashed, as the credential vault keys users (`userKey`); `user:` for
 * a user, `client:` for a machine caller (no `sub`), so neither can be taken for the other.
 */
function principalKey(user: UserClaims): string {
  return user.sub === undefined
    ? `client:${userKey(user.issuer, user.client ?? "")}`
    : `user:${userKey(user.issuer, user.sub)}`;
}
