import { resolve } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { Upstream } from "../../src/upstream/upstream.js";
import { stdio } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// A server whose start never ends (it completes the handshake, then never answers tools/list)
// is bounded by its `startTimeout` alone, and a full collection of the heap (a loaded gateway
// has one every few seconds) must not take that deadline away: it once was a timeout signal
// that only `AbortSignal.any` watched, weakly, so the start waited for ever.

/** A full collection of the heap, from a task of its own (the frame that started holds nothing). */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
const collectSoon = () => new Promise<void>((done) => setImmediate(() => done(collectGarbage())));

const MUTE = resolve("test/fixtures/servers/mute-lists-server.mjs");
const START_MS = 2_000;

/** Whether `error` or one of its causes is a timeout (the start's `TimeoutError` or a request's). */
function timedOut(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) if (e.name === "TimeoutError") return true;
  return false;
}

describe("a server whose start never ends", () => {
  const SERVERS = attackSize(2, 10);

  it(
    `fails each of ${SERVERS} starts with its startTimeout after a full collection of the heap`,
    async () => {
      const upstreams = Array.from(
        { length: SERVERS },
        (_, i) =>
          new Upstream(
            // Each request's own timeout is far away: only the start's deadline can end the wait.
            stdio(`mute${i}`, process.execPath, [MUTE], { startTimeout: START_MS, timeout: 600_000 }),
            { clientInfo: { name: "test", version: "1" }, onEvent: () => {} },
          ),
      );
      try {
        const starts = upstreams.map((upstream) =>
          upstream.start().then(
            () => undefined,
            (e: unknown) => e,
          ),
        );
        await collectSoon();
        const errors = await Promise.all(starts);
        const failed = errors.filter(timedOut).length;
        reportFigure(
          "starts that never end, after a full GC",
          `${failed} of ${SERVERS} failed at startTimeout`,
        );
        expect(failed).toBe(SERVERS);
        for (const upstream of upstreams) expect(upstream.state).toBe("failed");
      } finally {
        await Promise.all(upstreams.map((upstream) => upstream.close()));
      }
    },
    attackTimeout(20_000, 60_000),
  );
});
