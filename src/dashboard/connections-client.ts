import { McplexError, UpstreamUnavailableError } from "../errors.js";
import { deadlineSignal } from "../protocol/deadline-signal.js";
import type { ConnectionsAdmin, RevokeOutcome, UserConnectionsView } from "./user-connections.js";

/** How long one request to the gateway may take, ms. */
const REQUEST_MS = 30_000;

/**
 * A running gateway's operator endpoints for users' connections (`GET /api/users`,
 * `DELETE /api/users/<key>/connections[/<server>]`), as `mcplex connections --url` uses them.
 * `url` is the gateway's address (its origin, `/mcp` or `/dashboard` URL alike); `token` an
 * operator's: a static token bound to no profile, or a signed-in operator's access token.
 *
 * @example
 * const admin = new ConnectionsClient("http://127.0.0.1:8420", { token: process.env.MCPLEX_TOKEN });
 * for (const user of await admin.users()) console.log(user.subject, user.connections.length);
 */
export class ConnectionsClient implements ConnectionsAdmin {
  readonly #origin: string;
  readonly #token: string | undefined;

  /** @throws McplexError INVALID_ARGUMENT for a URL that is not http(s). */
  constructor(url: string, options: { token?: string } = {}) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw new McplexError("INVALID_ARGUMENT", `--url ${url} is not an http(s) URL`, {
        hint: "give the gateway's address, such as http://127.0.0.1:8420",
      });
    this.#origin = new URL(url).origin;
    this.#token = options.token;
  }

  async users(signal?: AbortSignal): Promise<UserConnectionsView[]> {
    const body = (await this.#request("GET", "/api/users", signal)) as { users?: unknown };
    if (!Array.isArray(body.users))
      throw new UpstreamUnavailableError(`${this.#origin}/api/users did not answer a list of users`);
    return body.users as UserConnectionsView[];
  }

  async revoke(userKey: string, server?: string, signal?: AbortSignal): Promise<RevokeOutcome> {
    const path = `/api/users/${encodeURIComponent(userKey)}/connections${
      server === undefined ? "" : `/${encodeURIComponent(server)}`
    }`;
    return (await this.#request("DELETE", path, signal)) as RevokeOutcome;
  }

  async #request(method: string, path: string, signal?: AbortSignal): Promise<unknown> {
    const deadline = deadlineSignal(REQUEST_MS, signal);
    try {
      return await this.#answer(method, path, deadline.signal);
    } finally {
      deadline.clear();
    }
  }

  /** `method` on `path`, its answer read whole, within `signal`. */
  async #answer(method: string, path: string, signal: AbortSignal): Promise<unknown> {
    const url = `${this.#origin}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: this.#token === undefined ? {} : { authorization: `Bearer ${this.#token}` },
        signal,
      });
    } catch (error) {
      // fetch throws a bare "fetch failed"; its cause says why (ECONNREFUSED, "bad port").
      const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
      const why =
        typeof cause?.code === "string"
          ? cause.code
          : typeof cause?.message === "string"
            ? cause.message
            : (error as Error).message;
      throw new UpstreamUnavailableError(
        `cannot reach the gateway at ${this.#origin}: ${why}`,
        { hint: "check --url: the address `mcplex serve` prints (its dashboard's origin)" },
        { cause: error },
      );
    }
    const body = (await res.json().catch(() => ({}))) as { error?: unknown; hint?: unknown };
    if (res.ok) return body;
    const said = typeof body.error === "string" ? body.error : `${res.status} ${res.statusText}`;
    const hint = typeof body.hint === "string" ? body.hint : undefined;
    switch (res.status) {
      case 401:
        throw new McplexError(
          "INVALID_ARGUMENT",
          `the gateway at ${this.#origin} refused the credential: ${said}`,
          {
            hint:
              this.#token === undefined
                ? "pass an operator's token with --token"
                : "check --token: it must be an operator's, and valid",
          },
        );
      case 403:
        throw new McplexError(
          "INVALID_ARGUMENT",
          `not an operator of the gateway at ${this.#origin}: ${said}`,
          {
            hint: "use an operator's token: a static token bound to no profile, or a signed-in operator's (auth.access with operator: true)",
          },
        );
      case 404:
        throw new McplexError("INVALID_ARGUMENT", said, hint === undefined ? {} : { hint });
      default:
        throw new UpstreamUnavailableError(
          `the gateway at ${this.#origin} answered ${method} ${path} with ${res.status}: ${said}`,
          hint === undefined ? {} : { hint },
        );
    }
  }
}
