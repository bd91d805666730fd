import type { ServerConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { UserConnectionPlan, UserCredentialSource, UserRef } from "./user-credentials.js";

/** The sources a {@link credentialRouter} picks from, one per kind of `credentials:`. */
export interface CredentialSources {
  /** `credentials: per-user`: the user's own OAuth grant or values (the vault's). */
  perUser?: UserCredentialSource;
  /** `credentials: { exchange }`: the user's token exchanged (a `TokenExchangeSource`). */
  exchange?: UserCredentialSource;
}

/**
 * One {@link UserCredentialSource} over one source per kind of `credentials:`, the hub's
 * `userCredentials`: a server's plan comes from the source of its kind, never from another
 * (an exchange server never gets a vault's grant, nor a per-user server an exchanged token).
 *
 * @example
 * const userCredentials = credentialRouter({
 *   perUser: perUserSource(...),
 *   exchange: new TokenExchangeSource({ issuers }),
 * });
 */
export function credentialRouter(sources: CredentialSources): UserCredentialSource {
  return {
    plan(user: UserRef, server: ServerConfig, signal?: AbortSignal): Promise<UserConnectionPlan> {
      const credentials = server.credentials;
      const kind = typeof credentials === "object" && credentials !== null ? "exchange" : "perUser";
      if (credentials === undefined || credentials === "shared") {
        return Promise.reject(
          new McplexError(
            "INVALID_ARGUMENT",
            `${server.name}: is called with shared credentials, so no user's plan is made for it`,
            { server: server.name },
          ),
        );
      }
      const source = sources[kind];
      if (source === undefined) {
        const what = kind === "exchange" ? "credentials: { exchange }" : "credentials: per-user";
        return Promise.reject(
          new McplexError(
            "INVALID_ARGUMENT",
            `${server.name}: ${what} has no credential source in this gateway`,
            {
              server: server.name,
              hint: "Serve it with mcplex serve, or give the hub a source for it (HubOptions.userCredentials).",
            },
          ),
        );
      }
      return source.plan(user, server, signal);
    },
  };
}
