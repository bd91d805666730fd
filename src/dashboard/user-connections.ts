import type { CredentialVault, UserServerRecord } from "../credentials/user-credentials.js";
import { McplexError } from "../errors.js";

/**
 * What a user holds for a server, as shown to that user and to operators: how it was made,
 * never what it is (no token, no value).
 */
export interface ConnectionView {
  server: string;
  /** When the user connected (ms since the epoch). */
  connectedAt: number;
  /** `oauth`: the user's own grant (per-user OAuth); `values`: `${user:NAME}` values the user set. */
  kinds: Array<"oauth" | "values">;
}

/** A user holding connections, as an operator sees them (`GET /api/users`, `mcplex connections list`). */
export interface UserConnectionsView {
  /** What the vault keeps the user under (a digest of issuer and subject): what revoking names. */
  key: string;
  /** The user's `sub`, when a record kept it. */
  subject?: string;
  connections: ConnectionView[];
}

/** What revoking did for one server: its record left the vault, and how revocation at the server went. */
export interface RevokedServer {
  server: string;
  /**
   * `revoked`: the server's authorization server took the revocation (RFC 7009); `unsupported`:
   * it offers none, and the tokens stay valid there until they expire; `failed`: it was asked
   * and refused or did not answer (see `error`); `none`: there was nothing to revoke (values
   * only); `not-asked`: the server was not asked (offline), tokens stay valid until they expire.
   */
  revocation: "revoked" | "unsupported" | "failed" | "none" | "not-asked";
  /** Why revocation failed, for the person revoking (never a token). */
  error?: string;
}

/**
 * What revoking (a disconnect, an operator's revoke) did: one entry per server whose record
 * left the vault. The connect pages' `disconnect()` results are this list.
 */
export interface RevokeOutcome {
  servers: RevokedServer[];
}

/**
 * Ends a user's connections: to `server`, or to every server without one. The gateway's is
 * the disconnect of the connect pages (revokes at the server, deletes from the vault, closes the
 * user's live connections); {@link deleteOnly} is the offline one.
 */
export type RevokeConnections = (userKey: string, server?: string) => Promise<RevokeOutcome>;

/**
 * Revoking that only deletes from the vault: what `mcplex connections revoke` does on a vault
 * file with no gateway running (no live connection to close; the server is not asked to revoke,
 * so a token it issued stays valid there until it expires).
 */
export function deleteOnly(vault: CredentialVault): RevokeConnections {
  return async (userKey, server) => {
    const names = server === undefined ? await vault.servers(userKey) : [server];
    const oauth = new Set<string>();
    for (const name of names)
      if ((await vault.get(userKey, name))?.oauth?.tokens !== undefined) oauth.add(name);
    const deleted = await vault.delete(userKey, server);
    return {
      servers: deleted.map((name) => ({
        server: name,
        revocation: oauth.has(name) ? ("not-asked" as const) : ("none" as const),
      })),
    };
  };
}

/** A record as shown: when and how, nothing of what. */
export function connectionView(server: string, record: UserServerRecord): ConnectionView {
  const kinds: ConnectionView["kinds"] = [];
  if (record.oauth !== undefined) kinds.push("oauth");
  if (record.values !== undefined) kinds.push("values");
  return { server, connectedAt: record.connectedAt, kinds };
}

/** The user's connections (by {@link UserConnectionsView.key}), sorted by server. */
export async function connectionsOf(vault: CredentialVault, user: string): Promise<ConnectionView[]> {
  return (await userOf(vault, user)).connections;
}

/** Every user holding a connection, with them, sorted by subject then key. */
export async function usersWithConnections(vault: CredentialVault): Promise<UserConnectionsView[]> {
  const users = await Promise.all((await vault.users()).map((key) => userOf(vault, key)));
  return users
    .filter((u) => u.connections.length > 0)
    .sort((a, b) => (a.subject ?? "").localeCompare(b.subject ?? "") || a.key.localeCompare(b.key));
}

async function userOf(vault: CredentialVault, key: string): Promise<UserConnectionsView> {
  const servers = [...(await vault.servers(key))].sort();
  const records = await Promise.all(servers.map((server) => vault.get(key, server)));
  let subject: string | undefined;
  const connections: ConnectionView[] = [];
  servers.forEach((server, i) => {
    const record = records[i];
    // Deleted between the listing and the read (a disconnect on another replica): gone.
    if (record === undefined) return;
    subject ??= record.subject;
    connections.push(connectionView(server, record));
  });
  return { key, ...(subject === undefined ? {} : { subject }), connections };
}

/**
 * The one user `who` names among `users`: by key, or by subject when one user has it. Unknown,
 * or a subject that two issuers' users share, is an error saying how to name them.
 *
 * @throws McplexError INVALID_ARGUMENT naming the users there are.
 */
export function findUser(users: readonly UserConnectionsView[], who: string): UserConnectionsView {
  const byKey = users.find((u) => u.key === who);
  if (byKey !== undefined) return byKey;
  const bySubject = users.filter((u) => u.subject === who);
  if (bySubject.length === 1) return bySubject[0]!;
  if (bySubject.length > 1)
    throw new McplexError(
      "INVALID_ARGUMENT",
      `${bySubject.length} users have the subject "${who}" (from different identity providers)`,
      { hint: `name one by its key: ${bySubject.map((u) => u.key).join(", ")}` },
    );
  const known = users.map((u) => u.subject ?? u.key);
  throw new McplexError("INVALID_ARGUMENT", `no user "${who}" holds a connection`, {
    hint:
      known.length === 0
        ? "no user has connected a server yet"
        : `users with connections: ${known.slice(0, 20).join(", ")}${known.length > 20 ? ", …" : ""}`,
  });
}

/**
 * Checks that `user` holds a connection to `server`.
 *
 * @throws McplexError INVALID_ARGUMENT naming the servers the user has connected.
 */
export function checkConnected(user: UserConnectionsView, server: string): void {
  if (user.connections.some((c) => c.server === server)) return;
  const name = user.subject ?? user.key;
  const servers = user.connections.map((c) => c.server);
  throw new McplexError("INVALID_ARGUMENT", `user "${name}" has not connected server "${server}"`, {
    server,
    hint:
      servers.length === 0
        ? `"${name}" has no connections`
        : `"${name}" has connected: ${servers.join(", ")}`,
  });
}

/**
 * Where an operator lists and revokes users' connections: a vault on this machine
 * ({@link vaultConnections}) or a running gateway's operator endpoints (`ConnectionsClient`).
 */
export interface ConnectionsAdmin {
  /** Every user holding a connection. */
  users(signal?: AbortSignal): Promise<UserConnectionsView[]>;
  /** Ends the user's connection to `server`, or all of the user's. */
  revoke(userKey: string, server?: string, signal?: AbortSignal): Promise<RevokeOutcome>;
}

/** A vault's users and connections, revoked with `revoke` (default {@link deleteOnly}). */
export function vaultConnections(vault: CredentialVault, revoke?: RevokeConnections): ConnectionsAdmin {
  const end = revoke ?? deleteOnly(vault);
  return {
    users: () => usersWithConnections(vault),
    revoke: (userKey, server) => end(userKey, server),
  };
}
