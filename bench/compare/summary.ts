/**
 * From rounds to the page's figures: per target and concurrency, what it adds to direct
 * (the difference of each round's figures with direct's in the same round, so that a slow
 * moment of the machine cancels out), as medians over rounds with their spread (min–max).
 */
import type { Start } from "./cold-start.js";
import { type Cells, CONCURRENCY } from "./measure.js";
import type { Front, TargetSpec } from "./targets.js";

/** A median over rounds, with the smallest and largest round. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread | undefined {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return undefined;
  const mid = finite.length >> 1;
  const median = finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
  return { median, min: finite[0]!, max: finite[finite.length - 1]! };
}

export interface AtConcurrency {
  /** The target's own figures. */
  p50?: Spread;
  p99?: Spread;
  rate?: Spread;
  /** Against direct in the same round. */
  addedP50?: Spread;
  addedP99?: Spread;
  rateFraction?: Spread;
  cpuPerCall?: Spread;
}

export interface Row {
  spec: TargetSpec;
  at: Map<number, AtConcurrency>;
  firstList?: Spread;
  idleRss?: Spread;
  loadRss?: Spread;
  failure?: string;
}

export interface FrontResult {
  front: Front;
  specs: TargetSpec[];
  cells: Cells;
  starts: Map<string, Start>;
  failures: Map<string, string>;
}

/** `a[i] op b[i]` for the rounds both have. */
export function perRound(
  a: readonly number[],
  b: readonly number[],
  op: (x: number, y: number) => number,
): number[] {
  return a.slice(0, Math.min(a.length, b.length)).map((x, i) => op(x, b[i]!));
}

/** A spread as the page prints it: the median, the smallest and largest round in small type. */
export function show(s: Spread | undefined, digits = 0, unit = ""): string {
  if (s === undefined) return "–";
  const f = (n: number) => n.toFixed(digits);
  if (s.min === s.max) return `${f(s.median)}${unit}`;
  return `${f(s.median)}${unit} <sub>${f(s.min)}–${f(s.max)}</sub>`;
}

/** The rows of one front's table, direct first. */
export function summarize(result: FrontResult): Row[] {
  const direct = result.cells.get("direct");
  return result.specs.map((spec) => {
    const cells = result.cells.get(spec.id);
    const at = new Map<number, AtConcurrency>();
    for (const c of CONCURRENCY) {
      const cell = cells?.get(c);
      const base = direct?.get(c);
      if (cell === undefined || cell.rate.length === 0) continue;
      at.set(c, {
        p50: spread(cell.p50),
        p99: spread(cell.p99),
        rate: spread(cell.rate),
        cpuPerCall: spread(cell.cpuPerCall),
        addedP50: base && spread(perRound(cell.p50, base.p50, (x, y) => x - y)),
        addedP99: base && spread(perRound(cell.p99, base.p99, (x, y) => x - y)),
        rateFraction: base && spread(perRound(cell.rate, base.rate, (x, y) => x / y)),
      });
    }
    const start = result.starts.get(spec.id);
    const top = cells?.get(CONCURRENCY[CONCURRENCY.length - 1]!);
    return {
      spec,
      at,
      firstList: start && spread(start.ms),
      idleRss: start && spread(start.idleRss),
      loadRss: top && spread(top.rss),
      failure: result.failures.get(spec.id),
    };
  });
}
