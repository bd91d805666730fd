import { createHash } from "node:crypto";
import type { HubOptions } from "../hub/hub-types.js";
import { openText, sealText } from "../storage/sealed-text.js";
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

  // The server's name is bound in: a record cannot be moved to another server's key.
  #seal(text: string, server: string): string {
    return sealText(this.#key, text, Buffer.from(server));
  }

  #open(sealed: string, server: string): string {
    return openText(this.#key, sealed, Buffer.from(server));
  }
}

/** Redis keys hold a hash of the server's name, not the name. */
function keyOf(kind: string, server: string): string {
  return `mcplex:${kind}:${createHash("sha256").update(server).digest("base64url")}`;
}
