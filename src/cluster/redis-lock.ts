import { randomBytes } from "node:crypto";
import type { RedisLink } from "./redis-link.js";

/** A lock outlives a stuck holder this long at most. */
const LOCK_MS = 30_000;
/** How long one waits for another replica's turn to end before going ahead anyway. */
const LOCK_WAIT_MS = 35_000;
/** Deletes the lock only if this holder still has it (it may have expired and passed on). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Runs `run` while this replica holds the Redis lock `key` (`SET NX PX`, released only by its
 * holder), so that one replica at a time spends a rotating refresh token. Waits for another
 * holder with growing pauses, at most {@link LOCK_WAIT_MS}, then goes ahead anyway: a stuck
 * replica must not stop the others. Without Redis it runs at once (the caller decides whether
 * that is safe).
 */
export async function withRedisLock<T>(link: RedisLink, key: string, run: () => Promise<T>): Promise<T> {
  const owner = randomBytes(12).toString("base64url");
  const deadline = Date.now() + LOCK_WAIT_MS;
  let held = false;
  let pause = 20;
  while (link.up && Date.now() < deadline) {
    try {
      held =
        (await link.client.set(key, owner, {
          condition: "NX",
          expiration: { type: "PX", value: LOCK_MS },
        })) !== null;
    } catch {
      break;
    }
    if (held) break;
    // Another replica holds it: wait for its end (what it stored is then read and used).
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 500);
  }
  try {
    return await run();
  } finally {
    if (held) await link.client.eval(RELEASE, { keys: [key], arguments: [owner] }).catch(() => {});
  }
}
