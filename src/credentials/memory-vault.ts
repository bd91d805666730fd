import type { CredentialVault, UserServerRecord } from "./user-credentials.js";

/**
 * A {@link CredentialVault} in this process's memory: what a library hub uses when given none,
 * and what tests put users' values in. Records last as long as the process; `exclusive` runs
 * one `run` at a time per (user, server), in the order asked (a promise chain per key).
 *
 * @example
 * const vault = memoryCredentialVault();
 * await vault.put(user.key, "github", { values: { GITHUB_TOKEN: "..." }, connectedAt: Date.now() });
 */
export function memoryCredentialVault(): CredentialVault {
  /** user key -> server -> record. */
  const records = new Map<string, Map<string, UserServerRecord>>();
  /** `user\0server` -> the last `run` queued, settled or not. */
  const chains = new Map<string, Promise<unknown>>();
  return {
    async get(user, server) {
      return records.get(user)?.get(server);
    },
    async put(user, server, record) {
      let own = records.get(user);
      if (own === undefined) {
        own = new Map();
        records.set(user, own);
      }
      own.set(server, record);
    },
    async delete(user, server) {
      const own = records.get(user);
      if (own === undefined) return [];
      const deleted = server === undefined ? [...own.keys()] : own.has(server) ? [server] : [];
      for (const name of deleted) own.delete(name);
      if (own.size === 0) records.delete(user);
      return deleted;
    },
    async servers(user) {
      return [...(records.get(user)?.keys() ?? [])];
    },
    async users() {
      return [...records.keys()];
    },
    exclusive<T>(user: string, server: string, run: () => Promise<T>): Promise<T> {
      const key = `${user}\0${server}`;
      const before = chains.get(key) ?? Promise.resolve();
      const result = before.then(run, run);
      // The chain goes on whatever `run` did; the last link removes itself once done.
      const link = result.then(
        () => {},
        () => {},
      );
      chains.set(key, link);
      void link.then(() => {
        if (chains.get(key) === link) chains.delete(key);
      });
      return result;
    },
  };
}
