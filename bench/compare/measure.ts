/**
 * The load part of bench:compare: every target of a front takes turns, window by window, so
 * that a slow moment of the machine lands on all of them alike. A round runs one window per
 * concurrency per target (the order of the targets rotating each round); a window keeps N calls
 * in flight for a fixed time and records each call's latency, the calls made, the CPU the
 * target's own processes used, and (at the highest concurrency) their resident memory.
 */

import { withDeadline } from "./deadline.js";
import { cpuSeconds, rssMb } from "./process-tree.js";
import { echoCall } from "./raw-clients.js";
import type { Running } from "./targets.js";

export const CONCURRENCY = [1, 8, 32, 64] as const;

/** One target's figures at one concurrency, one entry per round. */
export interface Cell {
  /** Latency percentiles of the round's calls, µs. */
  p50: number[];
  p99: number[];
  /** Calls per second. */
  rate: number[];
  /** The target's own CPU per call, µs. */
  cpuPerCall: number[];
  /** The target's own resident memory in the middle of the window, MB. */
  rss: number[];
}

export interface LoadOptions {
  rounds: number;
  /** Seconds per window. */
  seconds: number;
  /** Seconds of warm-up per target before the rounds. */
  warmUp: number;
  /** The calls in flight measured (default {@link CONCURRENCY}). */
  concurrency?: readonly number[];
}

/** The value at fraction `q` of the sorted values (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Keeps `inFlight` echo calls going on `r` until `seconds` have passed. */
async function drive(r: Running, inFlight: number, seconds: number, latencies?: number[]): Promise<number> {
  let calls = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        await echoCall(r.connection);
        latencies?.push(performance.now() - t);
        calls++;
      }
    }),
  );
  return calls;
}

/** Warms each target up (its JIT, its connections) before anything is measured. */
export async function warmUp(running: readonly Running[], seconds: number): Promise<void> {
  for (const r of running) await drive(r, 8, seconds);
}

/** How long past its window a target may keep a call unanswered before it leaves the rounds. */
const STALL_MS = 30_000;

/** One measured window: its figures are pushed onto `cell`. */
async function window(r: Running, inFlight: number, seconds: number, cell: Cell): Promise<void> {
  const own = r.own();
  const latencies: number[] = [];
  let rss = Number.NaN;
  const sample = setTimeout(() => (rss = rssMb(own)), (seconds * 1000) / 2);
  const cpuBefore = cpuSeconds(own);
  const started = performance.now();
  const calls = await withDeadline(
    drive(r, inFlight, seconds, latencies),
    seconds * 1000 + STALL_MS,
    `calls unanswered ${STALL_MS / 1000} s after the window`,
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(own) - cpuBefore;
  clearTimeout(sample);
  latencies.sort((a, b) => a - b);
  cell.p50.push(quantile(latencies, 0.5) * 1000);
  cell.p99.push(quantile(latencies, 0.99) * 1000);
  cell.rate.push(calls / elapsed);
  cell.cpuPerCall.push((cpu * 1e6) / calls);
  if (!Number.isNaN(rss)) cell.rss.push(rss);
}

export type Cells = Map<string, Map<number, Cell>>;

/**
 * Runs the rounds over `running` (all of one front). A target whose calls fail leaves the
 * rounds; its error is kept in `failures` for the page.
 */
export async function measureRounds(
  running: readonly Running[],
  options: LoadOptions,
  failures: Map<string, string>,
  progress: (line: string) => void,
): Promise<Cells> {
  const concurrency = options.concurrency ?? CONCURRENCY;
  const cells: Cells = new Map(
    running.map((r) => [
      r.spec.id,
      new Map(concurrency.map((c) => [c, { p50: [], p99: [], rate: [], cpuPerCall: [], rss: [] } as Cell])),
    ]),
  );
  let live = [...running];
  for (let round = 0; round < options.rounds; round++) {
    progress(`${running[0]?.spec.front} round ${round + 1}/${options.rounds}`);
    for (const inFlight of concurrency) {
      const order = live.map((_, k) => live[(round + k) % live.length]!);
      for (const r of order) {
        try {
          await window(r, inFlight, options.seconds, cells.get(r.spec.id)!.get(inFlight)!);
        } catch (error) {
          failures.set(
            r.spec.id,
            `failed under load (${inFlight} in flight): ${String(error).slice(0, 300)}`,
          );
          live = live.filter((l) => l !== r);
        }
      }
    }
  }
  return cells;
}
