import type { IncomingMessage, ServerResponse } from "node:http";
import type { CredentialVault, UserRef } from "../credentials/user-credentials.js";
import type { Identity } from "../fronts/authenticator.js";
import type { FrontPageHost } from "../fronts/front-page.js";
import { sendJson } from "../fronts/http-exchange.js";
import { connectionsOf, type RevokeConnections, usersWithConnections } from "./user-connections.js";

/**
 * What the dashboard needs to show and end per-user connections: the vault they are kept in,
 * how a request's identity names its user there (the call path's own mapping, so that the
 * dashboard sees the records the calls made), and how to end one.
 */
export interface DashboardCredentials {
  vault: CredentialVault;
  /** The signed-in user an identity is (`undefined` for static tokens and anonymous callers). */
  userOf: (identity: Identity) => UserRef | undefined;
  /**
   * Ends a user's connections (revokes at the server, deletes from the vault, closes live
   * connections). Absent: disconnecting and revoking answer 501.
   */
  revoke?: RevokeConnections;
}

const SIGN_IN_NEEDED =
  "Forbidden: connections are kept per signed-in user, and this request is not one (a static token or no credential); sign in to the gateway with OAuth to see and end yours";
const NOT_OPERATOR =
  "Forbidden: other users' connections are for operators, and you are not one; ask the gateway's operator (an auth.access rule with operator: true, or an operator token)";
const NO_VAULT =
  "Not Implemented: this gateway keeps no per-user credentials (it was started without a credential vault)";
const NO_REVOKE =
  "Not Implemented: this gateway cannot end per-user connections (it was started without a revoke function); delete them offline with `mcplex connections revoke`";

/** `/api/connections[/<server>]` and `/api/users[/<key>/connections[/<server>]]`. */
const PATH = /^\/api\/(?:(connections)(?:\/([^/]+))?|(users)(?:\/([^/]+)\/connections(?:\/([^/]+))?)?)$/;

/**
 * The per-user connection endpoints of the dashboard's API, under the same admission as its
 * other data and actions (Host/Origin, the token in `Authorization`; DELETEs rate-limited):
 *
 * - `GET /api/connections`: the signed-in user's connected servers (when, and whether by OAuth
 *   or values: never a token or value); `DELETE /api/connections/<server>` disconnects one.
 *   Static-token and anonymous callers have none: 403, sign-in needed.
 * - Operators only: `GET /api/users` (users with connections: key, subject, servers);
 *   `DELETE /api/users/<key>/connections[/<server>]` revokes one server's or all.
 *
 * A DELETE needs no body and no content type: no page of another site can send one without a
 * CORS preflight, which the front never grants.
 */
export class ConnectionsApi {
  readonly #host: FrontPageHost;
  readonly #credentials: DashboardCredentials | undefined;

  constructor(host: FrontPageHost, credentials: DashboardCredentials | undefined) {
    this.#host = host;
    this.#credentials = credentials;
  }

  /** Whether `path` is one of these endpoints' (or under `/api/connections`, `/api/users`). */
  static owns(path: string): boolean {
    return /^\/api\/(connections|users)(\/|$)/.test(path);
  }

  /** Whether the page should show "Your connections" and "Users" to `viewer`. */
  panels(viewer: { operator: boolean; identity?: Identity }): { connections: boolean; users: boolean } {
    const credentials = this.#credentials;
    if (credentials === undefined) return { connections: false, users: false };
    const user = viewer.identity === undefined ? undefined : credentials.userOf(viewer.identity);
    return { connections: user !== undefined, users: viewer.operator };
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const match = PATH.exec(path);
    if (match === null) {
      sendJson(res, 404, {
        error: `no such endpoint ${path}; use /api/connections[/<server>] or /api/users[/<key>/connections[/<server>]]`,
      });
      return;
    }
    const [, mine, server, users, key, userServer] = match;
    const list = (mine !== undefined && server === undefined) || (users !== undefined && key === undefined);
    const allow = list ? "GET" : "DELETE";
    if (req.method !== allow) {
      res.writeHead(405, { allow }).end();
      return;
    }
    req.resume();
    const caller = await this.#host.admit(req, !list);
    if ("status" in caller) {
      sendJson(res, caller.status, { error: caller.message }, caller.headers);
      return;
    }
    const credentials = this.#credentials;
    if (credentials === undefined) return sendJson(res, 501, { error: NO_VAULT });
    try {
      if (mine !== undefined) {
        const user = caller.identity === undefined ? undefined : credentials.userOf(caller.identity);
        if (user === undefined) return sendJson(res, 403, { error: SIGN_IN_NEEDED });
        if (server === undefined) {
          const connections = await connectionsOf(credentials.vault, user.key);
          return sendJson(res, 200, { user: { subject: user.subject }, connections }, NO_STORE);
        }
        return await this.#revoke(res, user.key, decode(server), true);
      }
      if (!caller.operator) return sendJson(res, 403, { error: NOT_OPERATOR });
      if (key === undefined)
        return sendJson(res, 200, { users: await usersWithConnections(credentials.vault) }, NO_STORE);
      return await this.#revoke(res, decode(key), userServer === undefined ? undefined : decode(userServer));
    } catch (error) {
      if (!res.headersSent) sendJson(res, 500, { error: `connections: ${(error as Error).message}` });
    }
  }

  /** Ends `server`'s (or every) connection of the user kept under `key`: 404 when there is none. */
  async #revoke(res: ServerResponse, key: string, server: string | undefined, own = false): Promise<void> {
    const { vault, revoke } = this.#credentials!;
    if (revoke === undefined) return sendJson(res, 501, { error: NO_REVOKE });
    // Names only: nothing is opened to learn whether there is something to end.
    const servers = await vault.servers(key);
    if (server !== undefined && !servers.includes(server)) {
      if (own) return sendJson(res, 404, { error: `you have not connected server "${server}"` });
      return sendJson(res, 404, {
        error: `user "${key}" has not connected server "${server}"`,
        hint:
          servers.length === 0
            ? "the user has no connections"
            : `the user has connected: ${[...servers].sort().join(", ")}`,
      });
    }
    if (server === undefined && servers.length === 0)
      return sendJson(res, 404, {
        error: `no user "${key}" holds a connection (GET /api/users lists those who do)`,
      });
    const outcome = await revoke(key, server);
    sendJson(res, 200, outcome, NO_STORE);
  }
}

const NO_STORE = { "cache-control": "no-store" };

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
