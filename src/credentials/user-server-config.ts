// What a per-user server (`credentials:` other than `shared`) is for one user: its plan, and its
// config with that user's values in place of the `${user:NAME}` placeholders.
import { DEFAULT_OAUTH_REDIRECT } from "../config/read-server.js";
import type { ServerConfig } from "../config/types.js";
import { fillUserPlaceholders, optionFromValue, userValueProblem } from "../config/user-placeholders.js";
import { McplexError } from "../errors.js";
import {
  ConnectRequiredError,
  type CredentialVault,
  type UserConnectionPlan,
  type UserCredentialSource,
  type UserRef,
} from "./user-credentials.js";

/** Where a user connects a server (`HubOptions.connectUrl`), when the hub knows. */
export type ConnectUrl = (user: UserRef, server: string) => string;

/**
 * The refusal of a call whose user has not connected `server` (or not set every value it needs):
 * a {@link ConnectRequiredError} with the page to do it, else a `CONNECT_REQUIRED` saying who can.
 */
export function connectRequired(
  user: UserRef,
  server: string,
  connectUrl: ConnectUrl | undefined,
  missing: readonly string[] = [],
  problem?: string,
): McplexError {
  const what =
    problem !== undefined
      ? ` (${problem})`
      : missing.length === 0
        ? ""
        : ` (${[...missing]
            .sort()
            .map((name) => `\${user:${name}}`)
            .join(", ")} not set)`;
  if (connectUrl !== undefined) {
    const url = connectUrl(user, server);
    return new ConnectRequiredError(
      server,
      url,
      `${server}: connect your account first${what}, at ${url}; then call again`,
    );
  }
  return new McplexError(
    "CONNECT_REQUIRED",
    `${server}: you have not connected this server yet${what}, and this gateway offers no page to connect it; ask its operator to store your credentials`,
    { server, hint: "A library hub takes users' values through HubOptions.vault (CredentialVault.put)." },
  );
}

/**
 * The plans of a hub given no {@link UserCredentialSource}: a user's `${user:NAME}` values as the
 * vault holds them, nothing for per-user OAuth or token exchange (those need a source).
 */
export function vaultPlans(vault: CredentialVault, connectUrl: ConnectUrl | undefined): UserCredentialSource {
  return {
    async plan(user, server) {
      if (typeof server.credentials === "object")
        throw new McplexError(
          "TOKEN_EXCHANGE_FAILED",
          `${server.name}: token exchange (and ID-JAGs) need the gateway's credential source, and this hub has none; serve it with mcplex serve, or give HubOptions.userCredentials`,
          { server: server.name },
        );
      const record = await vault.get(user.key, server.name);
      if (record === undefined) throw connectRequired(user, server.name, connectUrl);
      return record.values === undefined ? {} : { values: record.values };
    },
  };
}

/**
 * `config` as `user`'s connection runs it: each `${user:NAME}` filled from the plan's values
 * (a name without one refuses, never sends the placeholder), no idle stop of its own (the
 * user's connection closes whole when idle), started at once, and for per-user OAuth the
 * server's `oauth:` settings, or the defaults, as the client of the user's grant.
 */
export function userServerConfig(
  config: ServerConfig,
  plan: UserConnectionPlan,
  user: UserRef,
  connectUrl: ConnectUrl | undefined,
): ServerConfig {
  const values = plan.values ?? {};
  const missing = new Set<string>();
  const fill = (text: string) => fillUserPlaceholders(text, values, (name) => missing.add(name));
  const fillMap = (map: Record<string, string>) =>
    Object.fromEntries(Object.entries(map).map(([key, text]) => [key, fill(text)]));
  const { idleTimeout: _, ...rest } = config;
  let own: ServerConfig = { ...rest, lazy: false } as ServerConfig;
  if (own.transport === "stdio") {
    // A value never becomes an option: refused where it would start an argument with "-".
    for (const arg of own.args) {
      const name = optionFromValue(arg, values);
      if (name !== undefined)
        throw connectRequired(
          user,
          config.name,
          connectUrl,
          [],
          userValueProblem([arg], name, values[name]!),
        );
    }
    own = { ...own, args: own.args.map(fill), env: fillMap(own.env) };
  } else if (
    own.transport === "streamable-http" ||
    own.transport === "sse" ||
    own.transport === "websocket"
  ) {
    const { oauth, ...remote } = own;
    own = { ...remote, headers: fillMap(own.headers) };
    // OAuth only with the user's own grant: without it, a shared token store would lend one
    // user's grant to another.
    if (plan.oauth !== undefined && own.transport !== "websocket")
      own = {
        ...own,
        oauth: oauth ?? {
          grant: "authorization_code",
          redirectUrl: DEFAULT_OAUTH_REDIRECT,
          clientName: "mcplex",
        },
      };
  }
  if (missing.size > 0) throw connectRequired(user, config.name, connectUrl, [...missing]);
  return own;
}
