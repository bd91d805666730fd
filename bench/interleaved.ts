/** A request path measured by {@link measureInterleaved}. */
export type Call = () => Promise<unknown>;

export interface Measured {
  callsPerSecond: number;
  /** Median latency of sequential calls, µs. */
  p50: number;
}

/**
 * Measures several request paths interleaved, so that a slow moment of a shared machine
 * hits all of them alike: latency samples alternate call by call, and throughput runs
 * (`calls` calls with `inFlight` in flight) alternate in rounds, the median round counting.
 */
export async function measureInterleaved(
  paths: Call[],
  options: { calls: number; inFlight: number; sequential: number; rounds?: number },
): Promise<Measured[]> {
  for (const call of paths) for (let i = 0; i < 500; i++) await call(); // warm up
  const latencies: number[][] = paths.map(() => []);
  for (let i = 0; i < options.sequential; i++) {
    for (let c = 0; c < paths.length; c++) {
      const t = performance.now();
      await paths[c]!();
      latencies[c]!.push(performance.now() - t);
    }
  }
  const rates: number[][] = paths.map(() => []);
  for (let r = 0; r < (options.rounds ?? 3); r++) {
    for (let c = 0; c < paths.length; c++) {
      let next = 0;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: options.inFlight }, async () => {
          while (next++ < options.calls) await paths[c]!();
        }),
      );
      rates[c]!.push(options.calls / ((performance.now() - start) / 1000));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return paths.map((_, c) => ({ callsPerSecond: median(rates[c]!), p50: median(latencies[c]!) * 1000 }));
}
