/**
 * Start-up as a client that spawns (or starts) its server feels it: the time from spawn to the
 * answer of the first `tools/list` (initialize, initialized, then the list), and the target's
 * own resident memory once it has answered and gone idle. Targets take turns in rounds.
 */
import { rssMb } from "./process-tree.js";
import { start, type TargetSpec } from "./targets.js";

export interface Start {
  /** Spawn to the first tools/list answer, ms, one per round. */
  ms: number[];
  /** Own VmRSS 300 ms after that answer, MB, one per round. */
  idleRss: number[];
}

/** Checks that a tools/list result offers the echo tool. */
export function hasEcho(result: unknown): boolean {
  return ((result as { tools?: { name?: string }[] })?.tools ?? []).some((t) => t.name === "echo");
}

async function once(spec: TargetSpec, into: Start): Promise<void> {
  const t = performance.now();
  const r = await start(spec);
  try {
    const list = await r.connection.request("tools/list", {});
    const ms = performance.now() - t;
    if (!hasEcho(list)) throw new Error(`no echo tool in ${JSON.stringify(list).slice(0, 200)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    into.ms.push(ms);
    into.idleRss.push(rssMb(r.own()));
  } finally {
    await r.stop();
  }
}

/** `rounds` cold starts of each target, the order rotating each round; failures are kept. */
export async function coldStarts(
  specs: readonly TargetSpec[],
  rounds: number,
  failures: Map<string, string>,
): Promise<Map<string, Start>> {
  const starts = new Map(specs.map((s) => [s.id, { ms: [], idleRss: [] } as Start]));
  // Round -1 is not counted: the first spawn of each pays for a cold page cache.
  for (let round = -1; round < rounds; round++) {
    for (let k = 0; k < specs.length; k++) {
      const spec = specs[(round + 1 + k) % specs.length]!;
      if (failures.has(spec.id)) continue;
      try {
        await once(spec, round < 0 ? { ms: [], idleRss: [] } : starts.get(spec.id)!);
      } catch (error) {
        failures.set(spec.id, `failed to start: ${String(error).slice(0, 300)}`);
      }
    }
  }
  return starts;
}
