/**
 * Two signed-in users' calls interleaved through `/mcp` to a per-user stdio server, uncached and
 * cached calls mixed with the same arguments from both: the process that answers says whose it
 * is (its user, key and tag from that user's `${user:NAME}` values), and not one answer reaches
 * the other user. A few hundred calls each in the normal suite, a thousand under
 * `npm run test:hostile`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type PerUserGateway, startPerUserGateway, valuesOf } from "./per-user-gateway.js";

let gw: PerUserGateway;
beforeAll(async () => {
  gw = await startPerUserGateway(["alice", "bob"]);
}, 60_000);
afterAll(() => gw?.close());

describe("two users interleaved on a per-user server", () => {
  it(
    "never cross: every answer comes from the caller's own process with the caller's values",
    async () => {
      const calls = attackSize(300, 1000);
      const crossings: string[] = [];
      const pids = new Map<string, Set<number>>();
      const run = async (user: string) => {
        const values = valuesOf(user);
        for (let i = 0; i < calls; i += 10) {
          const batch = Array.from({ length: Math.min(10, calls - i) }, (_, j) => {
            const cached = (i + j) % 3 === 0;
            return gw.whoami(user, cached ? "who__whoami_cached" : "who__whoami", {
              echo: `n${(i + j) % 7}`,
            });
          });
          for (const answer of await Promise.all(batch)) {
            if (answer.user !== user || answer.key !== values.API_KEY || answer.tag !== values.TAG)
              crossings.push(`${user} got the answer of ${answer.user}'s process`);
            const own = pids.get(user) ?? new Set();
            own.add(answer.pid);
            pids.set(user, own);
          }
        }
      };
      await Promise.all([run("alice"), run("bob")]);
      expect(crossings).toEqual([]);
      // No process served both.
      const [alice, bob] = [pids.get("alice")!, pids.get("bob")!];
      expect([...alice].filter((pid) => bob.has(pid))).toEqual([]);
      reportFigure("per-user interleaving", `${calls} calls per user, ${crossings.length} crossings`);
    },
    attackTimeout(120_000, 600_000),
  );
});
