import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import type { Identity } from "./authenticator.js";
import type { BudgetLease } from "./memory-budget.js";

/**
 * Why admission turned a caller away: the status, the message and the headers to answer with.
 * (A request a header or body check refused is a `GuardRefusal`, ./http-guard.ts.)
 */
export interface AdmissionRefusal {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** What the HTTP front learned about the caller before the body was read. */
export interface Caller {
  profile?: string;
  /** The catalog mode its credential or its front chose (see `RequestContext.mode`). */
  mode?: CatalogMode;
  /** Who it is, for what is kept per caller (see `RequestContext.caller`). */
  key?: string;
  /** Who the front's `Authenticator` said it is. */
  identity?: Identity;
  sseAllowed: boolean;
  /**
   * Called when the request becomes a long-lived stream: it leaves the calls in flight (a
   * graceful close does not wait for it, and it holds no call slot) for the streams' own
   * bound. Returns why it may not (too many open streams), or `undefined`.
   */
  openStream?: () => string | undefined;
  /** What its message holds of the memory budget; its answer is charged to it too. */
  lease?: BudgetLease;
  /**
   * For a signed-in caller: the `WWW-Authenticate` challenge of a 403 when its token lacks
   * `scope` (a call refused with `ErrorCode.Forbidden`, `insufficient_scope`).
   */
  challenge?: (scope: string) => string;
  /** Headers the authenticator gives the answer (a fresh `DPoP-Nonce`), set before it is written. */
  responseHeaders?: Readonly<Record<string, string>>;
}

/** A caller let in: its identity, its rate-limit key, whether it is the operator, and its profile. */
export type Admitted = Caller & { key: string; operator: boolean; identity: Identity };

/**
 * Why `caller` may not use a session its front opened for another request, or `undefined` when
 * it may. A session serves one profile; static tokens of that profile share it, as they always
 * have. A signed-in user's session is theirs alone: many users share a profile, and the session
 * carries its user's identity (scopes included) into every request made on it.
 */
export function sessionRefusal(
  session: { profile: string | undefined; key: string | undefined; identity: Identity | undefined },
  caller: Caller,
): string | undefined {
  if (session.profile !== caller.profile) return "Forbidden: this session belongs to another token";
  const signedIn = session.identity?.via === "oauth" || caller.identity?.via === "oauth";
  if (signedIn && session.key !== caller.key) return "Forbidden: this session belongs to another user";
  return undefined;
}
