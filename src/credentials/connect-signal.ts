import type { ConnectLinks } from "./connect-links.js";
import type { ConnectRequiredError, CredentialVault } from "./user-credentials.js";

/**
 * Tells whoever waits that a user has connected a server (the connect page's callback or form
 * stored their credentials): a call that asked the user to connect then goes on. In this
 * process only; a connect finished on another replica is seen by a retried call instead.
 */
export class ConnectSignal {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** The user `user` (a `UserRef.key`) has connected `server`. */
  notify(user: string, server: string): void {
    const key = keyOf(user, server);
    const waiters = this.#waiting.get(key);
    this.#waiting.delete(key);
    for (const wake of waiters ?? []) wake();
  }

  /** Resolves on the next {@link notify} for (user, server); rejects with the signal's reason on abort. */
  wait(user: string, server: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const key = keyOf(user, server);
    return new Promise<void>((resolve, reject) => {
      const waiters = this.#waiting.get(key) ?? new Set();
      this.#waiting.set(key, waiters);
      const onAbort = () => {
        waiters.delete(wake);
        if (waiters.size === 0 && this.#waiting.get(key) === waiters) this.#waiting.delete(key);
        reject(signal?.reason);
      };
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      waiters.add(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** How many waits are pending, for tests and metrics. */
  get size(): number {
    let n = 0;
    for (const waiters of this.#waiting.values()) n += waiters.size;
    return n;
  }
}

function keyOf(user: string, server: string): string {
  return `${user}\0${server}`;
}

/**
 * What the gateway's connect prompt waits with (`connectPrompt({ waitConnected })`): the user
 * and server a `ConnectRequiredError`'s link was made for, waited on in `signal`. With `vault`
 * (replicas: the browser's callback may land on another one, whose signal this process does not
 * hear), the vault is also looked at every `pollMs` (default 2 s) for a record connected since
 * the wait began.
 */
export function connectWaiter(
  links: ConnectLinks,
  signal: ConnectSignal,
  options: { vault?: CredentialVault; pollMs?: number } = {},
): (error: ConnectRequiredError, abort: AbortSignal) => Promise<void> {
  const { vault, pollMs = 2000 } = options;
  return async (error, abort) => {
    const server = error.server ?? "";
    const { user } = links.check(new URL(error.url).searchParams.get("ticket"), server);
    if (vault === undefined) return signal.wait(user, server, abort);
    const since = Date.now();
    const done = new AbortController();
    const both = AbortSignal.any([abort, done.signal]);
    const waits = [signal.wait(user, server, both), connectedIn(vault, user, server, since, pollMs, both)];
    // The one that loses rejects when `done` aborts it.
    for (const wait of waits) wait.catch(() => {});
    try {
      await Promise.race(waits);
    } finally {
      done.abort();
    }
  };
}

/** Resolves once the vault holds a record of (user, server) connected at `since` or later. */
async function connectedIn(
  vault: CredentialVault,
  user: string,
  server: string,
  since: number,
  pollMs: number,
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, pollMs);
      timer.unref();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    const record = await vault.get(user, server).catch(() => undefined);
    if (record !== undefined && record.connectedAt >= since) return;
  }
}
