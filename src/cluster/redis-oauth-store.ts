import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { HubOptions } from "../hub/hub-types.js";
import type { RedisLink } from "./redis-link.js";
import { withRedisLock } from "./redis-lock.js";

/** Where a hub keeps servers' OAuth records (src/upstream/oauth.ts `OAuthStore`). */
type OAuthStore = NonNullable<HubOptions["oauth"]>["store"];
type OAuthRecord = NonNullable<Awaited<ReturnType<OAuthStore["load"]>>>;

/**
 * Servers' OAuth records shared by the replicas: kept in Redis encrypted (AES-256-GCM, a key
 * derived from the cluster secret), so one replica's refresh serves all; a lock per server
 * makes a rotating refresh token spent by one replica at a time. The replica's own store
 * (the secret store) keeps a copy and answers while Redis is out of reach.
 */
export class RedisOAuthStore implements OAuthStore {
  readonly #link: RedisLink;
  readonly #key: Buffer;
  readonly #local: OAuthStore;

  constructor(link: RedisLink, key: Buffer, local: OAuthStore) {
    this.#link = link;
    this.#key = key;
    this.#local = local;
  }

  async load(server: string): Promise<OAuthRecord | undefined> {
    await this.#link.firstAttempt;
    if (this.#link.up) {
      try {
        const sealed = await this.#link.client.get(keyOf("oauth", server));
        if (typeof sealed === "string") return JSON.parse(this.#open(sealed, server)) as OAuthRecord;
      } catch {
        // Out of reach, or sealed with another secret: the replica's own copy answers.
      }
    }
    return this.#local.load(server);
  }

  async save(server: string, record: OAuthRecord): Promise<void> {
    await this.#local.save(server, record);
    if (!this.#link.up) return;
    try {
      await this.#link.client.set(keyOf("oauth", server), this.#seal(JSON.stringify(record), server));
    } catch {
      // Kept locally; shared again on the next save.
    }
  }

  async exclusive<T>(server: string, run: () => Promise<T>): Promise<T> {
    return withRedisLock(this.#link, keyOf("oauth-lock", server), run);
  }

  #seal(text: string, server: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    // The server's name is bound in: a record cannot be moved to another server's key.
    cipher.setAAD(Buffer.from(server));
    const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
  }

  #open(sealed: string, server: string): string {
    const raw = Buffer.from(sealed, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(server));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  }
}

/** Redis keys hold a hash of the server's name, not the name. */
function keyOf(kind: string, server: string): string {
  return `mcplex:${kind}:${createHash("sha256").update(server).digest("base64url")}`;
}
