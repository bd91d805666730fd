import type { ConnectLinks } from "./connect-links.js";
import type { ConnectRequiredError } from "./user-credentials.js";

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
 * and server a `ConnectRequiredError`'s link was made for, waited on in `signal`.
 */
export function connectWaiter(
  links: ConnectLinks,
  signal: ConnectSignal,
): (error: ConnectRequiredError, abort: AbortSignal) => Promise<void> {
  return async (error, abort) => {
    const server = error.server ?? "";
    const ticket = links.check(new URL(error.url).searchParams.get("ticket"), server);
    return signal.wait(ticket.user, server, abort);
  };
}
