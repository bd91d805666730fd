import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, Gauge, type Registry } from "prom-client";
import type { McplexConfig } from "../config/types.js";
import type { CredentialVault } from "../credentials/user-credentials.js";
import type { ClusterHealth, ClusterLink, SessionDirectory } from "../fronts/cluster-link.js";
import { sendRpcError } from "../fronts/http-exchange.js";
import type { HubOptions } from "../hub/hub-types.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { configDigest } from "./config-digest.js";
import { type ForwardOutcome, forwardRequest } from "./forward.js";
import { type Member, Membership } from "./membership.js";
import { RedisCredentialVault } from "./redis-credential-vault.js";
import { RedisDpopReplays } from "./redis-dpop-replay.js";
import { type RedisEvent, RedisLink } from "./redis-link.js";
import { RedisOAuthStore } from "./redis-oauth-store.js";
import { RedisQuotaStore } from "./redis-quota-store.js";
import { RedisRateLimit } from "./redis-rate-limit.js";
import { ReplicaCredentials } from "./replica-credential.js";
import { deriveKey, SignedIds } from "./signed-ids.js";

type OAuthStore = NonNullable<HubOptions["oauth"]>["store"];

/** Default interval of a replica's heartbeat; its entry lives three of them. */
const DEFAULT_HEARTBEAT_MS = 2000;

/** Options of {@link Cluster}. */
export interface ClusterOptions {
  /** The Redis URL. */
  url: string;
  /** The cluster secret (at least 32 characters), the same on every replica. */
  secret: string;
  /** This replica's id. Default: random. */
  id?: string;
  /** Between two heartbeats (ms). Default 2000. */
  heartbeatMs?: number;
  /** Redis lost and found again, and replicas whose config differs, for the log. */
  onEvent?: (event: ClusterEvent) => void;
}

/** What a {@link Cluster} reports for the log. */
export type ClusterEvent =
  | RedisEvent
  /** Replicas announce a config whose digest differs from this one's. */
  | { type: "config-mismatch"; replicas: string[] };

/**
 * This process as one replica of several, sharing through Redis what they must: who is in the
 * cluster (a heartbeat with a TTL), session ids and request states that name their owner (HMAC
 * with keys derived from the cluster secret), and requests forwarded to the owner with a
 * replica credential. Redis out of reach degrades it (reported in /readyz, the log and the
 * metrics) but stops nothing: forwarding goes on with the last known members.
 *
 * @example
 * const cluster = new Cluster({ url: "redis://redis:6379", secret });
 * const gateway = new Gateway(hub, {
 *   replica: { id: cluster.replica, stateKey: cluster.stateKey, taskKey: cluster.taskKey },
 * });
 * const front = await startHttpFront(gateway, { cluster });
 * await cluster.start("http://10.0.0.5:8420", config);
 */
export class Cluster implements ClusterLink {
  readonly replica: string;
  readonly sessions: SessionDirectory;
  /** The key 2026 request states are signed with on every replica. */
  readonly stateKey: Buffer;
  /** The key task handles (the tasks extension) are signed with on every replica. */
  readonly taskKey: Buffer;
  /** The key config digests are made with. */
  readonly digestKey: Buffer;
  /** What connect links (per-user servers' `/connect` pages) are signed with on every replica. */
  readonly connectKey: Buffer;
  /** Rate limits per token across replicas. */
  readonly rateLimit: RedisRateLimit;
  /** `quotas:` counted for every replica. */
  readonly quotaStore: RedisQuotaStore;
  /** DPoP proofs' `jti`s seen by any replica (sign-in's `ProofReplays`). */
  readonly dpopReplays: RedisDpopReplays;
  /** What DPoP nonces are made with on every replica, so a nonce one issued holds at all. */
  readonly dpopNonceKey: Buffer;
  readonly #credentials: ReplicaCredentials;
  readonly #oauthKey: Buffer;
  readonly #vaultKey: Buffer;
  readonly #link: RedisLink;
  readonly #heartbeatMs: number;
  readonly #emit: (event: ClusterEvent) => void;
  #membership: Membership | undefined;
  #mismatch = "";
  #forwarded: Counter<"kind" | "outcome"> | undefined;
  #closed = false;

  constructor(options: ClusterOptions) {
    this.replica = options.id ?? randomBytes(6).toString("hex");
    this.stateKey = deriveKey(options.secret, "request-state");
    this.taskKey = deriveKey(options.secret, "task-handle");
    this.digestKey = deriveKey(options.secret, "config-digest");
    this.connectKey = deriveKey(options.secret, "connect-links");
    this.#vaultKey = deriveKey(options.secret, "credential-vault");
    this.#credentials = new ReplicaCredentials(deriveKey(options.secret, "replica-credential"), this.replica);
    this.#oauthKey = deriveKey(options.secret, "oauth-store");
    const ids = new SignedIds(deriveKey(options.secret, "session-id"));
    this.sessions = {
      mint: () => ids.mint(this.replica),
      locate: (id) => {
        const owner = ids.owner(id);
        if (owner === undefined) return { kind: "invalid" };
        return owner === this.replica ? { kind: "local" } : { kind: "remote", replica: owner };
      },
    };
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.#emit = options.onEvent ?? (() => {});
    this.#link = new RedisLink(
      options.url,
      (event) => this.#emit(event),
      () => {
        // Redis is back (perhaps empty after a restart): register again at once.
        void this.#membership?.beat().then(() => this.#checkDigests());
      },
    );
    this.rateLimit = new RedisRateLimit(this.#link);
    this.quotaStore = new RedisQuotaStore(this.#link);
    this.dpopReplays = new RedisDpopReplays(this.#link);
    this.dpopNonceKey = deriveKey(options.secret, "dpop-nonce");
  }

  /**
   * Joins the cluster as `advertise` (this replica's origin as the others reach it) serving
   * `config` (its digest is announced). Resolves once Redis answered or the first attempt failed: a replica
   * starts without Redis and joins when it comes.
   */
  async start(advertise: string, config: McplexConfig): Promise<void> {
    this.#membership = new Membership(
      this.#link,
      { id: this.replica, advertise, digest: configDigest(config, this.digestKey), startedAt: Date.now() },
      this.#heartbeatMs,
    );
    await this.#link.connect();
    this.#membership.start();
    await this.#membership.beat();
    this.#checkDigests();
    const check = setInterval(() => this.#checkDigests(), this.#heartbeatMs);
    check.unref();
    this.#stopChecks = () => clearInterval(check);
  }

  #stopChecks = () => {};

  /** Starts connecting to Redis before joining (a hub's first OAuth load may wait for it). */
  connect(): Promise<void> {
    return this.#link.connect();
  }

  /**
   * Servers' OAuth tokens shared by the replicas, encrypted in Redis, with `local` (the
   * replica's own store) keeping a copy and answering while Redis is away.
   */
  oauthStore(local: OAuthStore): OAuthStore {
    return new RedisOAuthStore(this.#link, this.#oauthKey, local);
  }

  /**
   * Each user's credentials for per-user servers, shared by the replicas through Redis (sealed
   * with a key of the cluster secret; no local copy).
   */
  credentialVault(): CredentialVault {
    return new RedisCredentialVault(this.#link, this.#vaultKey);
  }

  /** A reloaded config: its digest is announced at once. */
  setConfig(config: McplexConfig): void {
    this.#membership?.update({ digest: configDigest(config, this.digestKey) });
  }

  /** The Redis client, for the stores that share state through it (rate limits). */
  get redis(): RedisLink {
    return this.#link;
  }

  fromReplica(req: IncomingMessage): boolean | "forged" {
    return this.#credentials.check(req);
  }

  async forward(
    replica: string,
    req: IncomingMessage,
    res: ServerResponse,
    what: "session" | "input" | "task",
    body?: Buffer,
  ): Promise<void> {
    const owner = await this.#membership?.find(replica);
    let outcome: ForwardOutcome = "unreachable";
    if (owner !== undefined) {
      const credential = this.#credentials.mint(req.method ?? "GET", req.url ?? "/mcp");
      outcome = await forwardRequest(owner.advertise, credential, req, res, body);
    }
    this.#forwarded?.inc({ kind: what, outcome: owner === undefined ? "gone" : outcome });
    if (outcome === "relayed" || res.headersSent || res.destroyed) return;
    const id = body === undefined ? null : requestId(body);
    if (what === "session") {
      if (outcome === "unreachable")
        return sendRpcError(
          res,
          404,
          id,
          ErrorCode.SessionNotFound,
          "Session not found: the replica that held it is gone; initialize again",
        );
      return sendRpcError(
        res,
        502,
        id,
        ErrorCode.InternalError,
        "Bad Gateway: the replica that held this session went away while answering; initialize again",
      );
    }
    if (what === "task") {
      // The replica's connection to the server held the task: with it gone, so is the task.
      return sendRpcError(
        res,
        200,
        id,
        outcome === "unreachable" ? ErrorCode.InvalidParams : ErrorCode.InternalError,
        outcome === "unreachable"
          ? "Failed to retrieve task: the replica that held this task is gone, and the task with it; call the tool again"
          : "the replica holding this task went away before answering; get the task again to see where it stands",
      );
    }
    if (outcome === "unreachable")
      return sendRpcError(
        res,
        200,
        id,
        ErrorCode.InvalidParams,
        "Invalid params: the replica holding this call is gone, and the call with it; start the call again without requestState",
      );
    sendRpcError(
      res,
      200,
      id,
      ErrorCode.InternalError,
      "the replica holding this call went away before answering, so whether the tool finished is unknown; start the call again if it is safe to repeat",
    );
  }

  async claimState(state: string, ttlMs: number): Promise<boolean> {
    if (!this.#link.up) return true;
    const key = `mcplex:state:${createHash("sha256").update(state).digest("base64url")}`;
    try {
      const set = await this.#link.client.set(key, this.replica, {
        condition: "NX",
        expiration: { type: "PX", value: ttlMs },
      });
      return set !== null;
    } catch {
      return true;
    }
  }

  /** Every replica as last read from Redis, this one included. */
  members(): Member[] {
    return this.#membership?.members() ?? [];
  }

  health(): ClusterHealth {
    const self = this.#membership?.self;
    const members = this.members().map((m) => ({
      id: m.id,
      advertise: m.advertise,
      digest: m.digest,
      ...(m.id === this.replica ? { self: true } : {}),
      ...(self !== undefined && m.digest !== self.digest ? { sameConfig: false } : {}),
    }));
    const differing = members.filter((m) => m.sameConfig === false).map((m) => m.id);
    const warnings: string[] = [];
    if (!this.#link.up)
      warnings.push(
        `Redis is out of reach (${this.#link.lastError}): sessions are forwarded to the last known replicas, rate limits hold per replica; reconnecting`,
      );
    if (differing.length > 0)
      warnings.push(`replicas ${differing.join(", ")} serve a different config: roll them to the same one`);
    return {
      status: warnings.length === 0 ? "ok" : "degraded",
      replica: this.replica,
      redis: this.#link.up ? "up" : "down",
      members,
      ...(warnings.length === 0 ? {} : { warnings }),
    };
  }

  /** Adds the cluster's metrics to a front's registry (`front.metrics.registry`). */
  registerMetrics(registry: Registry): void {
    const replica = this.replica;
    const cluster = this;
    new Gauge({
      name: "mcplex_cluster_replica_info",
      help: "This replica: its id and the digest of its config (1).",
      labelNames: ["replica", "digest"],
      registers: [registry],
      collect() {
        this.reset();
        this.set({ replica, digest: cluster.#membership?.self.digest ?? "" }, 1);
      },
    });
    new Gauge({
      name: "mcplex_cluster_redis_up",
      help: "Whether this replica reaches Redis (1) or not (0).",
      registers: [registry],
      collect() {
        this.set(cluster.#link.up ? 1 : 0);
      },
    });
    new Gauge({
      name: "mcplex_cluster_members",
      help: "Replicas in the cluster as this one last read them, by whether their config matches this one's.",
      labelNames: ["config"],
      registers: [registry],
      collect() {
        const own = cluster.#membership?.self.digest;
        const members = cluster.members();
        const same = members.filter((m) => m.digest === own).length;
        this.set({ config: "same" }, same);
        this.set({ config: "different" }, members.length - same);
      },
    });
    this.#forwarded = new Counter({
      name: "mcplex_cluster_forwarded_total",
      help: "Requests this replica forwarded to the replica that holds their 2025 session or parked 2026 call, by outcome (relayed, gone, unreachable, broken).",
      labelNames: ["kind", "outcome"],
      registers: [registry],
    });
  }

  #checkDigests(): void {
    const own = this.#membership?.self.digest;
    const differing = this.members()
      .filter((m) => m.digest !== own)
      .map((m) => m.id);
    const text = differing.join(",");
    if (text !== this.#mismatch && differing.length > 0)
      this.#emit({ type: "config-mismatch", replicas: differing });
    this.#mismatch = text;
  }

  /** Leaves the cluster and disconnects; safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopChecks();
    await this.#membership?.stop();
    this.#link.close();
  }
}

/** The JSON-RPC id of a request body, for an error answered in its place. */
function requestId(body: Buffer): string | number | null {
  try {
    const id = (JSON.parse(body.toString("utf8")) as { id?: unknown }).id;
    return typeof id === "string" || typeof id === "number" ? id : null;
  } catch {
    return null;
  }
}
