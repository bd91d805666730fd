import type { OAuthRecord, OAuthStore } from "../upstream/oauth.js";
import type { CredentialVault } from "./user-credentials.js";

/**
 * One user's OAuth records as an {@link OAuthStore}, for the `ServerOAuthProvider` of that
 * user's connection: `load`/`save` read and write the `oauth` of the user's vault record for
 * the server (its `values` kept), and `exclusive` is the vault's lock for (user, server), so a
 * rotating refresh token is spent once across replicas.
 */
export function userOAuthStore(vault: CredentialVault, user: string): OAuthStore {
  return {
    load: async (server) => (await vault.get(user, server))?.oauth,
    async save(server, record: OAuthRecord) {
      const current = await vault.get(user, server);
      await vault.put(user, server, {
        ...current,
        oauth: record,
        connectedAt: current?.connectedAt ?? Date.now(),
      });
    },
    exclusive: (server, run) => vault.exclusive(user, server, run),
  };
}
