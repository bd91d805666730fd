import { createHash } from "node:crypto";
import type { Identity } from "./identity.js";
import type { UserRef } from "./user-credentials.js";

/** One `UserRef` per identity object: an identity rides on every request of its token. */
const refs = new WeakMap<Identity, UserRef>();

/**
 * The key everything per user is kept under: SHA-256 of the issuer and the subject (`\0`
 * between them), hex. The same on every replica and across restarts; two issuers' equal `sub`
 * are two keys.
 */
export function userKey(issuer: string | undefined, subject: string): string {
  return createHash("sha256")
    .update(`${issuer ?? ""}\0${subject}`)
    .digest("hex");
}

/**
 * The signed-in user behind a request's identity (`via: "oauth"` with a subject), or
 * `undefined` for static tokens, anonymous callers and the library: those use shared servers
 * only. Its `subjectToken` reads the caller's access token through the identity's accessor, so
 * no JSON of either carries it.
 *
 * @example
 * const user = userRefOf(request.context.identity);
 * if (user === undefined) throw signInRequired(config);
 */
export function userRefOf(identity: Identity | undefined): UserRef | undefined {
  if (identity?.via !== "oauth" || identity.subject === undefined) return undefined;
  let ref = refs.get(identity);
  if (ref === undefined) {
    const { subject, issuer, accessToken } = identity;
    ref = {
      key: userKey(issuer, subject),
      subject,
      ...(issuer === undefined ? {} : { issuer }),
      ...(accessToken === undefined ? {} : { subjectToken: accessToken }),
    };
    refs.set(identity, ref);
  }
  return ref;
}
