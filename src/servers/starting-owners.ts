import { ownersOfName } from "../catalog/tool-naming.js";
import type { ServerConfig } from "../config/types.js";
import { AbortedError } from "../errors.js";
import type { Upstream } from "../upstream/upstream.js";

/**
 * Waits for the servers still starting that may own the exposed name `name` (by its prefix;
 * all of them when the name cannot tell), each up to its own start timeout. `false` when none
 * is starting, so the caller knows a second look in the catalog is pointless. A cancelled
 * `signal` ends the wait, not the starts, which other calls share.
 */
export async function waitForOwners(
  name: string,
  servers: ReadonlyArray<{ config: ServerConfig; upstream: Upstream }>,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const starting = servers.filter((s) => s.config.enabled && s.upstream.state === "starting");
  if (starting.length === 0) return false;
  const owners = ownersOfName(
    name,
    servers.map((s) => s.config),
  );
  const waits = starting
    .filter((s) => owners === undefined || owners.includes(s.config.name))
    .map((s) => s.upstream.start().catch(() => {}));
  if (waits.length === 0) return false;
  await abortable(Promise.all(waits), signal);
  return true;
}

/** `work`, or an {@link AbortedError} as soon as `signal` aborts. The work goes on. */
function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  const cancelled = () => new AbortedError("the call was cancelled while its server was starting");
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
