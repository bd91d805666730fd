import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McplexError } from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, fixture } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { rng } from "../support/rng.js";
import { processGone } from "../support/wait.js";

// The hostile tester's chaos run: calls while upstreams are SIGKILLed at random. What must hold:
// every call settles (none hangs), none runs twice, every error names its server, and no process
// outlives the hub. Kills are
// driven by calls settling (never by time), so the run is the same on a slow machine.

const SERVERS = ["a", "b", "c"];
const CALLS = attackSize(600, 10_000);
const IN_FLIGHT = 8;
/** Chance that a settled call is followed by a kill: about 2% of calls. */
const KILL_CHANCE = 0.02;

let dir: string;
let hub: Hub;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-chaos-"));
  hub = new Hub({
    config: configOf(
      SERVERS.map((name) => fixture(name, [], { env: { FIXTURE_LOG: join(dir, `${name}.log`) } })),
    ),
    // Quick reconnects, and a connection that served for a moment counts as healthy: the breaker
    // (8 failed starts in a row) is not what this run is about.
    backoff: { initial: 20, max: 200, healthyAfter: 50 },
  });
  await hub.start();
});
afterAll(async () => {
  await hub?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Resolves when the server is ready (at once if it is, as far as the hub knows). It first lets
 * pending I/O run, as any client does between calls: a loop of calls that fail without leaving
 * the microtask queue would keep the hub from seeing the child's exit until the run is over.
 */
async function untilReady(server: string): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const off = hub.on((event) => {
      if (event.type === "server-state" && event.server === server && event.state === "ready") done();
    });
    const done = () => {
      off();
      resolve();
    };
    if (hub.servers().find((s) => s.name === server)?.state === "ready") done();
  });
}

/** SIGKILLs `pid`; `false` when it is already gone. */
function signal(pid: number): boolean {
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

describe("calls while upstreams are SIGKILLed at random", () => {
  it(
    "settles every call, runs none twice, names the server in every error, and leaves no process behind",
    async () => {
      const random = rng(16);
      const outcomes: Array<{ server: string; tag: string; ok: boolean; error?: unknown }> = [];
      let kills = 0;
      let next = 0;
      const worker = async () => {
        while (next < CALLS) {
          const i = next++;
          const server = SERVERS[Math.floor(random() * SERVERS.length)]!;
          const tag = `call-${i}`;
          try {
            await hub.callTool(`${server}__mark`, { tag }, { timeout: 30_000 });
            outcomes.push({ server, tag, ok: true });
          } catch (error) {
            outcomes.push({ server, tag, ok: false, error });
            // As a client would: wait for the server to be back before the next call.
            await untilReady(server);
          }
          if (random() < KILL_CHANCE) {
            const victim = hub.servers()[Math.floor(random() * SERVERS.length)];
            // The pid of a server killed a moment ago is still reported until its exit is seen.
            if (victim?.pid !== undefined && signal(victim.pid)) kills++;
          }
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));

      expect(outcomes).toHaveLength(CALLS);
      expect(kills).toBeGreaterThan(0);
      const failed = outcomes.filter((o) => !o.ok);
      for (const { server, error } of failed) {
        expect(error).toBeInstanceOf(McplexError);
        const { code, message } = error as McplexError;
        // A `mark` call is instant: a timeout would be a call that hung.
        expect(code).not.toBe("REQUEST_TIMEOUT");
        expect(message).toContain(server);
      }
      const runs = new Map<string, number>();
      const logs = await Promise.all(
        SERVERS.map((server) => readFile(join(dir, `${server}.log`), "utf8").catch(() => "")),
      );
      for (const log of logs) {
        for (const line of log.split("\n")) {
          if (line.startsWith("ran ")) runs.set(line.slice(4), (runs.get(line.slice(4)) ?? 0) + 1);
        }
      }
      const twice = [...runs].filter(([, n]) => n > 1).map(([tag]) => tag);
      expect(twice).toEqual([]);
      const succeededUnseen = outcomes.filter((o) => o.ok && runs.get(o.tag) !== 1).map((o) => o.tag);
      expect(succeededUnseen).toEqual([]);
      // Nothing outlives the hub: every process that served (the fixture logs its pid) is gone.
      await hub.close();
      const pids = logs.flatMap((log) => [...log.matchAll(/^pid (\d+)$/gm)].map((m) => Number(m[1])));
      expect(pids.length).toBeGreaterThan(SERVERS.length);
      await Promise.all(pids.map((pid) => processGone(pid)));
      reportFigure(
        "chaos",
        `${CALLS} calls, ${kills} SIGKILLs, ${CALLS - failed.length} succeeded, ${failed.length} failed naming their server, 0 hung, 0 ran twice`,
      );
    },
    attackTimeout(180_000, 1_800_000),
  );
});
