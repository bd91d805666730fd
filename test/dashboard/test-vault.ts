import type { CredentialVault, UserServerRecord } from "../../src/credentials/user-credentials.js";
import type { RevokeConnections, RevokedServer } from "../../src/dashboard/user-connections.js";

/**
 * The user keys and `UserRef`s the call path makes (`src/credentials/user-ref.ts`), so that the
 * dashboard's tests see the records the calls would have made.
 */
export { userKey as testUserKey, userRefOf as testUserOf } from "../../src/credentials/user-ref.js";

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
export function testRevoke(vault: CredentialVault): RevokeConnections & {
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
