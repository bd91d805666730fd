import type { ServerConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { ConnectLinks } from "./connect-links.js";
import {
  ConnectRequiredError,
  type CredentialVault,
  type UserConnectionPlan,
  type UserCredentialSource,
  type UserRef,
} from "./user-credentials.js";
import { userOAuthStore } from "./user-oauth-store.js";
import { userValueNames } from "./user-value-names.js";

/** Options of {@link perUserSource}. */
export interface PerUserSourceOptions {
  vault: CredentialVault;
  /** Makes the link a user who has not connected is sent to. */
  links: ConnectLinks;
}

/**
 * The {@link UserCredentialSource} of `credentials: per-user` servers, from the vault: a server
 * with `${user:NAME}` placeholders gets the user's values (set once at its connect page); a
 * remote server without any gets the user's own OAuth grant, refreshed under the vault's lock
 * (once across replicas). A user who has not connected, or whose grant can no longer be
 * refreshed, gets {@link ConnectRequiredError} with a fresh link; never another's credentials.
 *
 * @example
 * const vault = new FileCredentialVault();
 * const hub = new Hub({ config, vault, userCredentials: credentialRouter({ perUser: perUserSource({ vault, links }) }) });
 */
export function perUserSource(options: PerUserSourceOptions): UserCredentialSource {
  const { vault, links } = options;
  return {
    async plan(user: UserRef, server: ServerConfig, signal?: AbortSignal): Promise<UserConnectionPlan> {
      if (server.credentials !== "per-user") {
        throw new McplexError("INVALID_ARGUMENT", `${server.name}: not a credentials: per-user server`, {
          server: server.name,
        });
      }
      const required = () => new ConnectRequiredError(server.name, links.connectUrl(user, server.name));
      const record = await vault.get(user.key, server.name);
      signal?.throwIfAborted();
      const names = userValueNames(server);
      if (names.length > 0) {
        const values = record?.values ?? {};
        if (!names.every((name) => typeof values[name] === "string")) throw required();
        return { values: Object.fromEntries(names.map((name) => [name, values[name]!])) };
      }
      if (server.transport === "stdio") return {};
      if (record?.oauth?.tokens === undefined) throw required();
      return {
        oauth: { store: userOAuthStore(vault, user.key), grantRequired: () => required() },
      };
    },
  };
}
