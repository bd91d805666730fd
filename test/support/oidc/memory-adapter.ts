/**
 * `oidc-provider`'s storage adapter, in memory, owned by the test server rather than by one
 * `Provider` instance: a key rotation builds a new `Provider` on the same port, and registered
 * clients, sessions and grants must outlive it. (It also keeps the provider from warning that
 * its own development adapter is in use.)
 */

/** What `oidc-provider` stores: a model's payload, with the fields the adapter indexes. */
interface Payload {
  uid?: string;
  userCode?: string;
  grantId?: string;
  consumed?: number;
  [field: string]: unknown;
}

interface Entry {
  payload: Payload;
  /** Epoch ms; `Infinity` for entries without a lifetime (clients). */
  expiresAt: number;
}

/** One model's adapter: the interface of `oidc-provider`'s `example/my_adapter.js`. */
export interface ModelAdapter {
  upsert(id: string, payload: Payload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<Payload | undefined>;
  findByUid(uid: string): Promise<Payload | undefined>;
  findByUserCode(userCode: string): Promise<Payload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * The models a grant's revocation takes with it (as in `oidc-provider`'s own memory adapter).
 * Others carry a `grantId` too: an interaction started in a session that had a grant would go
 * with it, and a user who signs in as someone else (the session's grants revoked at the
 * logout) would come back to "interaction session not found".
 */
const GRANTABLE = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
  "PreAuthorizedCode",
]);

/** The storage of one test server; its `adapter` goes into the provider's `adapter` option. */
export class MemoryStorage {
  readonly #entries = new Map<string, Entry>();
  /** Session uid → session id; user code → device code id. */
  readonly #index = new Map<string, string>();
  /** Grant id → keys of the tokens issued under it (for `revokeByGrantId`). */
  readonly #grants = new Map<string, Set<string>>();

  /** The adapter factory `oidc-provider` calls once per model name. */
  readonly adapter = (model: string): ModelAdapter => {
    const key = (id: string) => `${model}:${id}`;
    return {
      upsert: async (id, payload, expiresIn) => {
        const expiresAt =
          typeof expiresIn === "number" ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY;
        this.#entries.set(key(id), { payload, expiresAt });
        if (model === "Session" && payload.uid !== undefined) this.#index.set(`uid:${payload.uid}`, id);
        if (payload.userCode !== undefined) this.#index.set(`userCode:${payload.userCode}`, id);
        if (GRANTABLE.has(model) && payload.grantId !== undefined) {
          const members = this.#grants.get(payload.grantId) ?? new Set();
          members.add(key(id));
          this.#grants.set(payload.grantId, members);
        }
      },
      find: async (id) => this.#find(key(id)),
      findByUid: async (uid) => this.#findIndexed(model, `uid:${uid}`),
      findByUserCode: async (userCode) => this.#findIndexed(model, `userCode:${userCode}`),
      consume: async (id) => {
        const entry = this.#entries.get(key(id));
        if (entry !== undefined) entry.payload.consumed = Math.floor(Date.now() / 1000);
      },
      destroy: async (id) => {
        this.#entries.delete(key(id));
      },
      revokeByGrantId: async (grantId) => {
        for (const member of this.#grants.get(grantId) ?? []) this.#entries.delete(member);
        this.#grants.delete(grantId);
      },
    };
  };

  #find(key: string): Payload | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.payload;
  }

  #findIndexed(model: string, index: string): Payload | undefined {
    const id = this.#index.get(index);
    return id === undefined ? undefined : this.#find(`${model}:${id}`);
  }
}
