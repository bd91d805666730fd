import { createHash } from "node:crypto";
import type { CredentialVault, UserServerRecord } from "../credentials/user-credentials.js";
import { McplexError } from "../errors.js";
import { openText, sealText } from "../storage/sealed-text.js";
import type { RedisLink } from "./redis-link.js";
import { withRedisLock } from "./redis-lock.js";

/** Deletes fields ARGV[2..] of the user's hash, and drops the user (ARGV[1]) from the set once it is empty. */
const DELETE = `
local n = 0
for i = 2, #ARGV do n = n + redis.call('HDEL', KEYS[1], ARGV[i]) end
if redis.call('HLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
return n`;
const USERS = "mcplex:cred-users";

/**
 * Each user's credentials for per-user servers, shared by the replicas through Redis: a hash
 * per user (`mcplex:cred:<user key>`, one field per server), each record sealed with a key
 * derived from the cluster secret (AES-256-GCM, its user and server bound in, so a record
 * moved to another user's hash does not open), and a lock per (user, server) so that a
 * rotating refresh token is spent by one replica only. Unlike the shared OAuth store there is
 * no local copy: a replica that cannot reach Redis refuses the per-user call (a retryable
 * error) rather than use a record other replicas may have replaced or deleted.
 */
export class RedisCredentialVault implements CredentialVault {
  readonly #link: RedisLink;
  readonly #key: Buffer;

  /** `key`: 32 bytes derived from the cluster secret (`Cluster.credentialVault()` makes one). */
  constructor(link: RedisLink, key: Buffer) {
    this.#link = link;
    this.#key = key;
  }

  async get(user: string, server: string): Promise<UserServerRecord | undefined> {
    const sealed = await this.#redis((c) => c.hGet(hashOf(user), server));
    if (typeof sealed !== "string") return undefined;
    return JSON.parse(this.#open(sealed, user, server)) as UserServerRecord;
  }

  async put(user: string, server: string, record: UserServerRecord): Promise<void> {
    const sealed = this.#seal(JSON.stringify(record), user, server);
    await this.#redis((c) => c.multi().hSet(hashOf(user), server, sealed).sAdd(USERS, user).exec());
  }

  async delete(user: string, server?: string): Promise<string[]> {
    const names = server === undefined ? await this.servers(user) : [server];
    if (names.length === 0) return [];
    const present = await this.#redis((c) => Promise.all(names.map((name) => c.hExists(hashOf(user), name))));
    const deleted = names.filter((_, i) => Boolean(present[i]));
    if (deleted.length === 0) return [];
    await this.#redis((c) => c.eval(DELETE, { keys: [hashOf(user), USERS], arguments: [user, ...deleted] }));
    return deleted;
  }

  async servers(user: string): Promise<string[]> {
    return (await this.#redis((c) => c.hKeys(hashOf(user)))).sort();
  }

  async users(): Promise<string[]> {
    return (await this.#redis((c) => c.sMembers(USERS))).sort();
  }

  async exclusive<T>(user: string, server: string, run: () => Promise<T>): Promise<T> {
    await this.#link.firstAttempt;
    return withRedisLock(
      this.#link,
      `mcplex:cred-lock:${createHash("sha256").update(`${user}\0${server}`).digest("base64url")}`,
      run,
    );
  }

  async #redis<T>(operation: (client: RedisLink["client"]) => Promise<T>): Promise<T> {
    await this.#link.firstAttempt;
    try {
      if (!this.#link.up) throw new Error(this.#link.lastError || "not connected");
      return await operation(this.#link.client);
    } catch (error) {
      throw new McplexError(
        "SECRET_STORE_INVALID",
        `the credential vault in Redis is out of reach: ${(error as Error).message}`,
        { retryable: true, hint: "per-user servers answer again once Redis is back" },
        { cause: error },
      );
    }
  }

  #seal(text: string, user: string, server: string): string {
    return sealText(this.#key, text, boundTo(user, server));
  }

  #open(sealed: string, user: string, server: string): string {
    try {
      return openText(this.#key, sealed, boundTo(user, server));
    } catch {
      throw new McplexError(
        "SECRET_STORE_INVALID",
        `the credential vault in Redis holds a record for server ${server} this replica cannot open`,
        { server, hint: "every replica needs the same cluster secret; the user can connect again" },
      );
    }
  }
}

function hashOf(user: string): string {
  return `mcplex:cred:${user}`;
}

function boundTo(user: string, server: string): Buffer {
  return Buffer.from(`mcplex-credentials\0${user}\0${server}`, "utf8");
}
