import { createHash } from "node:crypto";
import type { CredentialVault, UserRef, UserServerRecord } from "../../src/credentials/user-credentials.js";
import type { RevokeConnections, RevokedServer } from "../../src/dashboard/user-connections.js";
import type { Identity } from "../../src/fronts/authenticator.js";

/**
 * A `CredentialVault` in a Map, for the dashboard's and the CLI's tests of what they do with
 * one (the vaults themselves, encrypted file and Redis, have their own contract suite).
 */
export class TestVault implements CredentialVault {
  readonly records = new Map<string, Map<string, UserServerRecord>>();

  async get(user: string, server: string): Promise<UserServerRecord | undefined> {
    return this.records.get(user)?.get(server);
  }
  async put(user: string, server: string, record: UserServerRecord): Promise<void> {
    const servers = this.records.get(user) ?? new Map<string, UserServerRecord>();
    this.records.set(user, servers);
    servers.set(server, record);
  }
  async delete(user: string, server?: string): Promise<string[]> {
    const servers = this.records.get(user);
    if (servers === undefined) return [];
    const deleted = server === undefined ? [...servers.keys()] : servers.delete(server) ? [server] : [];
    if (server === undefined || servers.size === 0) this.records.delete(user);
    return deleted;
  }
  async servers(user: string): Promise<string[]> {
    return [...(this.records.get(user)?.keys() ?? [])];
  }
  async users(): Promise<string[]> {
    return [...this.records.keys()];
  }
  async exclusive<T>(_user: string, _server: string, run: () => Promise<T>): Promise<T> {
    return run();
  }
}

/** The vault's key of a user: a digest of issuer and subject, as the call path makes it. */
export function testUserKey(issuer: string | undefined, subject: string): string {
  return createHash("sha256")
    .update(`${issuer ?? ""}\n${subject}`)
    .digest("base64url");
}

/** A signed-in identity's `UserRef`; none for static tokens and anonymous callers. */
export function testUserOf(identity: Identity): UserRef | undefined {
  if (identity.via !== "oauth" || identity.subject === undefined) return undefined;
  return {
    key: testUserKey(identity.issuer, identity.subject),
    subject: identity.subject,
    ...(identity.issuer === undefined ? {} : { issuer: identity.issuer }),
  };
}

/** Records kept as the connect pages keep them: an OAuth grant with tokens, or `${user:NAME}` values. */
export const SECRET_ACCESS_TOKEN = "ya29.access-token-that-must-never-be-shown";
export const SECRET_REFRESH_TOKEN = "1//refresh-token-that-must-never-be-shown";
export const SECRET_VALUE = "ghp_personal-token-that-must-never-be-shown";

export function oauthRecord(subject: string, connectedAt = Date.now()): UserServerRecord {
  return {
    subject,
    connectedAt,
    oauth: {
      client: { client_id: "mcplex-client-id", client_secret: "client-secret-that-must-never-be-shown" },
      tokens: {
        access_token: SECRET_ACCESS_TOKEN,
        refresh_token: SECRET_REFRESH_TOKEN,
        token_type: "Bearer",
        expires_in: 3600,
      },
    } as UserServerRecord["oauth"],
  };
}

export function valuesRecord(subject: string, connectedAt = Date.now()): UserServerRecord {
  return { subject, connectedAt, values: { GITHUB_TOKEN: SECRET_VALUE } };
}

/**
 * A revoke function as the gateway's disconnect does it, over the test vault: deletes, and
 * reports each OAuth grant revoked. `calls` records what it was asked.
 */
export function testRevoke(vault: TestVault): RevokeConnections & {
  calls: Array<[string, string?]>;
  /** How the next revocations of a server go instead of `revoked` (a server that refuses, say). */
  answers: Map<string, RevokedServer>;
} {
  const calls: Array<[string, string?]> = [];
  const answers = new Map<string, RevokedServer>();
  const revoke = async (key: string, server?: string) => {
    calls.push(server === undefined ? [key] : [key, server]);
    const oauth = new Set<string>();
    for (const name of await vault.servers(key))
      if ((await vault.get(key, name))?.oauth !== undefined) oauth.add(name);
    const deleted = await vault.delete(key, server);
    return {
      servers: deleted.map(
        (name): RevokedServer =>
          answers.get(name) ?? { server: name, revocation: oauth.has(name) ? "revoked" : "none" },
      ),
    };
  };
  return Object.assign(revoke, { calls, answers });
}
