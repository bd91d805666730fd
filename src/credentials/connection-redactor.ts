import { redactor, type SecretSet } from "../config/redact.js";
import type { OAuthHost, OAuthRecord } from "../upstream/oauth.js";
import type { UserConnectionPlan } from "./user-credentials.js";

/** Below this length a user's value is not redacted: a 3-letter value would hide every such word. */
const MIN_VALUE_LENGTH = 4;

/**
 * How many tokens (OAuth access and refresh tokens, exchanged tokens) one connection keeps
 * redacting: the newest, so that a connection refreshed for days does not grow its redactor.
 */
export const MAX_CONNECTION_TOKENS = 8;

/**
 * What one user's connection to a per-user server redacts: the config's secrets (shared by
 * everyone) and that user's own (their `${user:NAME}` values, the OAuth and exchanged tokens
 * their connection was given). Only that user's results, errors and notifications go through
 * it: a user's values never enter a redactor shared by all, so that no user learns another's
 * value by seeing a guess of it come back as `***`, nor has their text rewritten, or their
 * calls slowed, by values another user chose. It lives as long as the connection (held beside
 * it, dropped with it), and is prepared again only when its own secrets or the config's change.
 */
export class ConnectionRedactor {
  readonly #shared: SecretSet;
  readonly #values: readonly string[];
  /** The user's values and the newest tokens: a new array each time it changes. */
  #own: readonly string[];
  #tokens: readonly string[] = [];
  #prepared:
    | { shared: readonly string[]; own: readonly string[]; redact: (text: string) => string }
    | undefined;

  constructor(shared: SecretSet, values: Readonly<Record<string, string>> = {}) {
    this.#shared = shared;
    this.#values = [...new Set(Object.values(values))].filter((value) => value.length >= MIN_VALUE_LENGTH);
    this.#own = this.#values;
  }

  /** A token this connection was given (an OAuth or exchanged token): redacted from now on. */
  addToken(token: string | undefined): void {
    if (token === undefined || token.length < MIN_VALUE_LENGTH || this.#tokens.includes(token)) return;
    this.#tokens = [...this.#tokens, token].slice(-MAX_CONNECTION_TOKENS);
    this.#own = [...this.#values, ...this.#tokens];
  }

  /** `text` with the config's secrets and this user's own replaced by `***`. */
  readonly redact = (text: string): string => {
    const shared = this.#shared.secrets;
    let prepared = this.#prepared;
    if (prepared === undefined || prepared.shared !== shared || prepared.own !== this.#own) {
      // One redactor over both, longest first: a user's value inside a secret of the config's
      // (or the other way round) must not leave the rest of the longer one showing.
      prepared = { shared, own: this.#own, redact: redactor([...shared, ...this.#own]) };
      this.#prepared = prepared;
    }
    return prepared.redact(text);
  };

  /** How many secrets a text from this connection is redacted of (the config's and the user's). */
  get size(): number {
    return new Set([...this.#shared.secrets, ...this.#own]).size;
  }
}

/** `plan` with every token it gives (exchanged, OAuth access and refresh) added to `redactor`. */
export function redactedPlan(plan: UserConnectionPlan, redactor: ConnectionRedactor): UserConnectionPlan {
  const out: UserConnectionPlan = { ...plan };
  const { bearer, oauth } = plan;
  if (bearer !== undefined) {
    const given = async (signal?: AbortSignal) => {
      const token = await bearer(signal);
      redactor.addToken(token);
      return token;
    };
    const invalidate = (bearer as { invalidate?: (token: string) => void }).invalidate;
    out.bearer =
      invalidate === undefined ? given : Object.assign(given, { invalidate: invalidate.bind(bearer) });
  }
  if (oauth !== undefined) out.oauth = redactedOAuth(oauth, redactor);
  return out;
}

function redactedOAuth(oauth: OAuthHost, redactor: ConnectionRedactor): OAuthHost {
  const seen = (record: OAuthRecord | undefined) => {
    redactor.addToken(record?.tokens?.access_token);
    redactor.addToken(record?.tokens?.refresh_token);
    return record;
  };
  const { store } = oauth;
  return {
    ...oauth,
    store: {
      load: async (server) => seen(await store.load(server)),
      save: (server, record) => store.save(server, seen(record)!),
      ...(store.exclusive === undefined ? {} : { exclusive: store.exclusive.bind(store) }),
    },
  };
}
