import type { IncomingMessage, ServerResponse } from "node:http";
import type { RateDecision } from "./rate-limiter.js";

/** Where the session a 2025 session id names lives. */
export type SessionLocation =
  | { kind: "local" }
  /** Another replica's: requests for it are forwarded there. */
  | { kind: "remote"; replica: string }
  /** Not an id any replica minted (forged, altered or foreign): refused, never forwarded. */
  | { kind: "invalid" };

/**
 * Mints 2025 session ids and says where each lives. Alone, a gateway mints random ids and
 * every session is its own ({@link LOCAL_SESSIONS}); a replica mints ids that name it,
 * integrity-protected, so any replica can tell the owner without asking anyone.
 */
export interface SessionDirectory {
  mint(): string;
  locate(id: string): SessionLocation;
}

/** The session directory of a gateway on its own. */
export const LOCAL_SESSIONS: SessionDirectory = {
  mint: () => crypto.randomUUID(),
  locate: () => ({ kind: "local" }),
};

/**
 * A rate limit every replica takes from (a limiter store shared through Redis). `undefined`,
 * or a promise of `undefined`, when it cannot decide now (Redis out of reach): the front's own
 * limiter decides instead.
 */
export interface SharedRateLimit {
  take(key: string, perSecond: number, burst: number): Promise<RateDecision | undefined> | undefined;
}

/** The cluster's part of `/readyz`. */
export interface ClusterHealth {
  /** `degraded` while Redis is out of reach or replicas disagree on the config. */
  status: "ok" | "degraded";
  [key: string]: unknown;
}

/**
 * What an HTTP front needs of the replicas around it (src/cluster/ implements it with Redis):
 * session ids that name their owner, requests forwarded to the replica that holds their
 * session, parked call or task, and the credential replicas present to each other.
 */
export interface ClusterLink {
  /** This replica's id. */
  readonly replica: string;
  readonly sessions: SessionDirectory;
  /**
   * Whether `req` came from another replica: `true` with a valid cluster credential, `"forged"`
   * with one that is not, `false` without.
   */
  fromReplica(req: IncomingMessage): boolean | "forged";
  /**
   * Proxies `req` (its body already read when given, else streamed) to `replica` and relays the
   * answer; answers itself, with an error that says what to do, when the replica is gone. `what`
   * the request follows: a 2025 session, a call parked on input, or a task (its handle).
   */
  forward(
    replica: string,
    req: IncomingMessage,
    res: ServerResponse,
    what: "session" | "input" | "task",
    body?: Buffer,
  ): Promise<void>;
  /**
   * Claims a 2026 request state for this retry: `false` when a retry already used it (on any
   * replica). Without shared state (Redis unreachable) every claim is granted, and the owner's
   * own single-use check still holds.
   */
  claimState(state: string, ttlMs: number): Promise<boolean>;
  /** Rate limits per token across replicas (the front's `rateLimit`, shared). */
  readonly rateLimit?: SharedRateLimit;
  health(): ClusterHealth;
}
