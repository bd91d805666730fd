/**
 * bench:compare's optional layers step: per front, the plain mcplex target and one target per
 * optional layer (layers.ts) take turns in the rounds of measure.ts, at 1 and 64 calls in
 * flight; each layer's row is what it adds to plain mcplex in the same round (CPU per call,
 * p50 at 1 in flight) and its calls/s over plain mcplex's at 64, medians over rounds with
 * their spread. Renders the page's "Optional layers" section.
 */
import { LAYERS, withLayerTargets } from "./layers.js";
import { type Cells, type LoadOptions, measureRounds, warmUp } from "./measure.js";
import { perRound, type Spread, spread } from "./summary.js";
import { type Front, type Running, start, type TargetSpec } from "./targets.js";

/** The calls in flight the layers are measured at. */
export const LAYER_CONCURRENCY = [1, 64] as const;

export interface LayerFront {
  front: Front;
  specs: TargetSpec[];
  cells: Cells;
  failures: Map<string, string>;
}

export interface LayerCosts {
  load: LoadOptions;
  fronts: LayerFront[];
  seconds: number;
}

/** Measures the layered targets of `specs` (the bench's targets), front by front. */
export async function measureLayers(
  specs: readonly TargetSpec[],
  scratch: string,
  load: LoadOptions,
  log: (line: string) => void,
): Promise<LayerCosts> {
  const began = performance.now();
  const options = { ...load, concurrency: LAYER_CONCURRENCY };
  const fronts = await withLayerTargets(specs, scratch, async (layered) => {
    const out: LayerFront[] = [];
    for (const front of ["stdio", "http"] as Front[]) {
      const frontSpecs = layered.filter((s) => s.front === front);
      const failures = new Map<string, string>();
      const running: Running[] = [];
      try {
        for (const spec of frontSpecs) {
          try {
            running.push(await start(spec));
          } catch (error) {
            failures.set(spec.id, `failed to start: ${String(error).slice(0, 300)}`);
          }
        }
        log(`layers ${front}: warming up ${running.length} targets`);
        await warmUp(running, options.warmUp);
        const cells = await measureRounds(running, options, failures, (line) => log(`layers ${line}`));
        out.push({ front, specs: frontSpecs, cells, failures });
      } finally {
        for (const r of running) await r.stop();
      }
    }
    return out;
  });
  return { load: options, fronts, seconds: (performance.now() - began) / 1000 };
}

/** One layer's row: what it adds to plain mcplex over one front. */
export interface LayerRow {
  front: Front;
  spec: TargetSpec;
  /** CPU µs per call added, at 1 and at 64 in flight. */
  cpu1?: Spread;
  cpu64?: Spread;
  /** p50 µs added at 1 in flight. */
  p50?: Spread;
  /** calls/s over plain mcplex's at 64 in flight. */
  rate64?: Spread;
  failure?: string;
}

/** The rows of every layer, front by front, against plain mcplex of the same rounds. */
export function layerRows(costs: LayerCosts): LayerRow[] {
  const rows: LayerRow[] = [];
  for (const f of costs.fronts) {
    const plain = f.cells.get("mcplex");
    const diff = (id: string, c: number, key: "cpuPerCall" | "p50") => {
      const mine = f.cells.get(id)?.get(c)?.[key];
      const base = plain?.get(c)?.[key];
      return mine && base && spread(perRound(mine, base, (x, y) => x - y));
    };
    for (const spec of f.specs.filter((s) => s.id !== "mcplex")) {
      const mine = f.cells.get(spec.id)?.get(64)?.rate;
      const base = plain?.get(64)?.rate;
      rows.push({
        front: f.front,
        spec,
        cpu1: diff(spec.id, 1, "cpuPerCall"),
        cpu64: diff(spec.id, 64, "cpuPerCall"),
        p50: diff(spec.id, 1, "p50"),
        rate64: mine && base && spread(perRound(mine, base, (x, y) => x / y)),
        failure: f.failures.get(spec.id) ?? f.failures.get("mcplex"),
      });
    }
  }
  return rows;
}

function show(s: Spread | undefined, digits = 0, sign = true): string {
  if (s === undefined) return "–";
  const f = (n: number) => `${sign && n > 0 ? "+" : ""}${n.toFixed(digits)}`;
  if (s.min === s.max) return f(s.median);
  return `${f(s.median)} <sub>${f(s.min)} … ${f(s.max)}</sub>`;
}

const FRONT = { stdio: "stdio", http: "Streamable HTTP" } as const;

/** The "Optional layers" table alone (what `--only layers` prints). */
export function layerTable(costs: LayerCosts): string[] {
  const lines = [
    "| layer | front | + CPU µs/call, 1 in flight | + CPU µs/call, 64 in flight | + p50 µs, 1 in flight | calls/s × plain mcplex, 64 in flight |",
    "|---|---|---|---|---|---|",
  ];
  for (const r of layerRows(costs)) {
    const name = LAYERS.find((l) => `mcplex+${l.id}` === r.spec.id)?.label ?? r.spec.label;
    if (r.cpu64 === undefined && r.failure !== undefined) {
      lines.push(`| ${name} | ${FRONT[r.front]} | not measured: ${r.failure.replaceAll("|", "\\|")} | | | |`);
      continue;
    }
    lines.push(
      `| ${name} | ${FRONT[r.front]} | ${show(r.cpu1)} | ${show(r.cpu64)} | ${show(r.p50)} | ${show(r.rate64, 2, false)} |`,
    );
  }
  return lines;
}

/** The page's section: what plain mcplex runs, how each layer is turned on, the table. */
export function renderLayerCosts(costs: LayerCosts): string[] {
  const { rounds, seconds } = costs.load;
  return [
    "## Optional layers",
    "",
    "**Plain mcplex** is the mcplex target above, with the layers its defaults turn on: over Streamable HTTP, `serve --http` runs the Prometheus metrics (`/metrics`) and the dashboard with its call feed, each fed by every call; over stdio, `serve --stdio` starts no HTTP front, so neither metrics nor the dashboard run (they come with `--dashboard-port`, a row below). Audit, telemetry, sign-in and guardrails are off in both. Each row is plain mcplex with one layer more turned on:",
    "",
    ...LAYERS.map((l) => `- **${l.label}** (${l.fronts.map((f) => FRONT[f]).join(", ")}): ${l.how}.`),
    "",
    `Each layered target takes turns with plain mcplex in the same rounds (measure.ts, the order rotating), so each figure is a difference (or a ratio) with plain mcplex's of the same round: median over rounds, the smallest and largest in small type. To keep this step short it runs ${rounds} rounds of one ${seconds} s window at 1 and at 64 calls in flight only (the tables above: more rounds, four concurrencies); a difference of a few µs is within its spread. CPU counts the target's own processes, as above. This step took ${costs.seconds.toFixed(0)} s.`,
    "",
    ...layerTable(costs),
  ];
}
