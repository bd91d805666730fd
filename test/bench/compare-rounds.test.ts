/**
 * bench:compare's rounds on real targets, in miniature: every target gets a window per
 * concurrency, figures come out of each, and a target that dies leaves the rounds with its
 * error kept for the page while the others go on. Nothing about speed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONCURRENCY, measureRounds } from "../../bench/compare/measure.js";
import { type Running, start, targets } from "../../bench/compare/targets.js";

const scratch = mkdtempSync(join(tmpdir(), "compare-rounds-"));
const running: Running[] = [];
afterAll(async () => {
  for (const r of running) await r.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe("bench:compare rounds", () => {
  it("measures every target at every concurrency, and drops one that dies with its error", async () => {
    const stdio = targets([], scratch).filter(
      (s) => s.front === "stdio" && (s.id === "direct" || s.id === "relay"),
    );
    for (const spec of stdio) running.push(await start(spec));
    const doomed = await start({ ...stdio[0]!, id: "doomed", label: "doomed" });
    running.push(doomed);
    process.kill(doomed.pid, "SIGKILL");
    const failures = new Map<string, string>();
    const cells = await measureRounds(running, { rounds: 2, seconds: 0.05, warmUp: 0 }, failures, () => {});
    for (const id of ["direct", "relay"]) {
      for (const c of CONCURRENCY) {
        const cell = cells.get(id)!.get(c)!;
        expect(cell.rate).toHaveLength(2);
        expect(cell.p50.every((v) => v > 0)).toBe(true);
        expect(cell.cpuPerCall.every((v) => Number.isFinite(v))).toBe(true);
      }
    }
    expect([...failures.keys()]).toEqual(["doomed"]);
    expect(failures.get("doomed")).toMatch(/failed under load \(1 in flight\).*exited/);
  }, 60_000);
});
