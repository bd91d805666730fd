import {
  type AuthorizationServerMetadata,
  discoverAuthorizationServerMetadata,
  discoverOAuthServerInfo,
  type FetchLike,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.js";
import { deadlineSignal } from "../protocol/deadline-signal.js";
import type { OAuthRecord } from "../upstream/oauth.js";
import type { CredentialVault } from "./user-credentials.js";

/** How long revoking at one authorization server may take before the disconnect goes on without it. */
const REVOKE_MS = 10_000;

/** Options of {@link disconnect}. */
export interface DisconnectOptions {
  vault: CredentialVault;
  /** The configured server of a name, for its URL and `oauth:` client (a record of a server since removed is only deleted). */
  server: (name: string) => ServerConfig | undefined;
  /**
   * Closes the user's live connections (and processes) to `server`, or to all their servers:
   * the hub's `closeUser`. Called after the records are deleted, so nothing reconnects with them.
   */
  closeUser?: (user: string, server?: string) => unknown;
  /** The `fetch` revocation goes through. Default global fetch. */
  fetch?: FetchLike;
  signal?: AbortSignal;
}

/** What {@link disconnect} did for one server. */
export interface Disconnected {
  server: string;
  /**
   * `revoked`: the authorization server took the revocation (RFC 7009); `unsupported`: it offers
   * none (no `revocation_endpoint`), the tokens live until they expire; `failed`: it was asked
   * and did not answer 200 (see `error`); `none`: there were no tokens (values only).
   */
  revocation: "revoked" | "unsupported" | "failed" | "none";
  /** Why revocation failed, for the operator (never a token). */
  error?: string;
}

/**
 * Ends a user's connection to `server`, or to every server they connected: deletes the vault
 * record(s), closes the user's live connections, and revokes their tokens at the server's
 * authorization server where it offers RFC 7009 revocation (the refresh token, then the access
 * token). The records are deleted first and whatever revocation does: a revocation that fails
 * is reported, never a reason to keep the user's tokens.
 *
 * @example
 * const done = await disconnect(user.key, "github", { vault, server: (n) => servers.get(n), closeUser: hub.closeUser });
 * // [{ server: "github", revocation: "revoked" }]
 */
export async function disconnect(
  user: string,
  server: string | undefined,
  options: DisconnectOptions,
): Promise<Disconnected[]> {
  const { vault } = options;
  const names = server === undefined ? await vault.servers(user) : [server];
  const records = await Promise.all(names.map(async (name) => [name, await vault.get(user, name)] as const));
  const deleted = new Set(await vault.delete(user, server));
  await options.closeUser?.(user, server);
  const results: Disconnected[] = [];
  for (const [name, record] of records) {
    if (!deleted.has(name)) continue;
    const tokens = record?.oauth?.tokens;
    if (tokens === undefined) {
      results.push({ server: name, revocation: "none" });
      continue;
    }
    results.push({ server: name, ...(await revoke(name, record!.oauth!, options)) });
  }
  return results;
}

async function revoke(
  name: string,
  oauth: OAuthRecord,
  options: DisconnectOptions,
): Promise<Pick<Disconnected, "revocation" | "error">> {
  const fetchFn = options.fetch ?? fetch;
  const deadline = deadlineSignal(REVOKE_MS, options.signal);
  const limited: FetchLike = (input, init) => fetchFn(input, { ...init, signal: deadline.signal });
  try {
    const metadata = await authorizationServer(name, oauth, options.server(name), limited);
    // Typed on the OAuth half of the union only; an OpenID provider's metadata carries it too.
    const endpoint = (metadata as { revocation_endpoint?: string } | undefined)?.revocation_endpoint;
    if (endpoint === undefined) return { revocation: "unsupported" };
    const config = options.server(name);
    const configured = config !== undefined && "oauth" in config ? config.oauth : undefined;
    const clientId = configured?.clientId ?? oauth.client?.client_id;
    const clientSecret =
      configured?.clientId === undefined ? oauth.client?.client_secret : configured.clientSecret;
    if (clientId === undefined) return { revocation: "failed", error: "no client to revoke as" };
    const tokens = oauth.tokens!;
    const asked = [
      ...(tokens.refresh_token === undefined ? [] : [[tokens.refresh_token, "refresh_token"] as const]),
      [tokens.access_token, "access_token"] as const,
    ];
    for (const [token, hint] of asked) {
      const body = new URLSearchParams({ token, token_type_hint: hint });
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
      if (clientSecret === undefined) body.set("client_id", clientId);
      else
        headers.authorization = `Basic ${Buffer.from(
          `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`,
        ).toString("base64")}`;
      const response = await limited(endpoint, { method: "POST", headers, body });
      const answer = errorOf(await response.text().catch(() => ""));
      if (response.status === 200) continue;
      // A self-contained (JWT) access token may not be revocable (RFC 7009 §2.2.1): it ends
      // with the refresh token's grant where the server tracks that, else when it expires.
      if (hint === "access_token" && answer === "unsupported_token_type") continue;
      return {
        revocation: "failed",
        error: `the revocation endpoint answered ${response.status}${answer ? ` ${answer}` : ""} for the ${hint}`,
      };
    }
    return { revocation: "revoked" };
  } catch (error) {
    return { revocation: "failed", error: `revocation failed: ${(error as Error).message}` };
  } finally {
    deadline.clear();
  }
}

/** The authorization server's metadata: from the issuer the tokens were issued by, else found from the server. */
async function authorizationServer(
  name: string,
  oauth: OAuthRecord,
  config: ServerConfig | undefined,
  fetchFn: FetchLike,
): Promise<AuthorizationServerMetadata | undefined> {
  const issuer = oauth.tokens?.issuer ?? oauth.client?.issuer;
  if (issuer !== undefined) return discoverAuthorizationServerMetadata(issuer, { fetchFn });
  if (config === undefined || !("url" in config)) throw new Error(`${name} is no longer configured`);
  return (await discoverOAuthServerInfo(config.url, { fetchFn })).authorizationServerMetadata;
}

/** The `error` code of an OAuth error answer, if it is one. */
function errorOf(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    return typeof error === "string" && /^[\w.-]{1,64}$/.test(error) ? error : undefined;
  } catch {
    return undefined;
  }
}
