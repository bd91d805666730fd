import { spawnSync } from "node:child_process";

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A request path measured by {@link measureInterleaved}. */
export type Call = () => Promise<unknown>;

export interface Measured {
  callsPerSecond: number;
  /** Median latency of sequential calls, µs. */
  p50: number;
}

/** Calls per path, with `inFlight` in flight, before anything is measured. */
const WARM_UP = 10_000;

/** Makes `calls` calls with `inFlight` of them in flight at any time. */
async function inParallel(call: Call, calls: number, inFlight: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < calls) await call();
    }),
  );
}

/** Sequential calls per block: paths take turns block by block, not call by call. */
const BLOCK = 100;

/**
 * Measures several request paths alternately, so that a slow moment of a shared machine
 * hits all of them alike: latency samples are taken in blocks of {@link BLOCK} calls per
 * path in turn, and throughput runs (`calls` calls with `inFlight` in flight) alternate in
 * rounds, the median round counting.
 *
 * Blocks, not single calls: on these VMs an idle vCPU halts at once (haltpoll with
 * guest_halt_poll_ns=0) and waking it costs tens of µs. Alternating call by call left each
 * path's server idle for as long as the other paths' calls took, so a fast path paid the
 * slow path's idle time in extra wake-ups.
 */
export async function measureInterleaved(
  paths: Call[],
  options: { calls: number; inFlight: number; sequential: number; rounds?: number },
): Promise<Measured[]> {
  // Warm up every path to its steady state first: a Node process runs its hot path in the
  // interpreter for the first few thousand calls (callgrind counted more than twice the
  // instructions per call in the gateway before its JIT was done), and a benchmark that
  // starts measuring there reports the JIT, not the code.
  for (const call of paths) {
    await inParallel(call, WARM_UP, options.inFlight);
    for (let i = 0; i < 1000; i++) await call();
  }
  const latencies: number[][] = paths.map(() => []);
  for (let done = 0; done < options.sequential; done += BLOCK) {
    for (let c = 0; c < paths.length; c++) {
      for (let i = 0; i < Math.min(BLOCK, options.sequential - done); i++) {
        const t = performance.now();
        await paths[c]!();
        latencies[c]!.push(performance.now() - t);
      }
    }
  }
  const rates: number[][] = paths.map(() => []);
  for (let r = 0; r < (options.rounds ?? 3); r++) {
    for (let c = 0; c < paths.length; c++) {
      const start = performance.now();
      await inParallel(paths[c]!, options.calls, options.inFlight);
      rates[c]!.push(options.calls / ((performance.now() - start) / 1000));
    }
  }
  return paths.map((_, c) => ({ callsPerSecond: median(rates[c]!), p50: median(latencies[c]!) * 1000 }));
}

/**
 * Runs this benchmark a second time pinned to one core (`taskset -c 0`, inherited by every
 * process it starts), unless it is that second run. On one core a request hands over from
 * process to process by a context switch instead of waking a halted vCPU, which is what
 * the reference figures in the issues were measured on. Prints the pinned run's output.
 */
export function alsoOnOneCore(): void {
  if (process.argv.includes("--one-core") || process.argv.includes("--all-cores-only")) return;
  const run = spawnSync(
    "taskset",
    ["-c", "0", process.execPath, ...process.execArgv, ...process.argv.slice(1), "--one-core"],
    {
      stdio: "inherit",
    },
  );
  if (run.error !== undefined) console.log(`(no one-core run: ${run.error.message})`);
}

/** "all cores" or "one core", for the table headings. */
export const coresLabel = process.argv.includes("--one-core")
  ? "pinned to one core (taskset -c 0)"
  : "all cores";
