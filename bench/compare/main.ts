/**
 * bench:compare: mcplex side by side with the peers a user would pick instead (the official
 * SDK v2 as a proxy, supergateway, mcp-proxy; 1MCP where npm has it) and the floors (direct,
 * a byte relay), all in front of the same raw upstream and driven by the same raw client, over
 * stdio and Streamable HTTP, at 1, 8, 32 and 64 calls in flight. Writes docs/benchmarks.md, the
 * chart docs/benchmarks.svg and the README's headline line.
 *
 *   npm run bench:compare [-- --rounds R] [--seconds S] [--starts N] [--all-cores] [--quick]
 *     [--fleet-rounds N] [--fleet-http] [--layer-rounds L] [--only fleet|layers]
 *
 * On a machine with two cores or more the whole run is pinned to one (taskset -c 0, inherited
 * by every process it starts) unless `--all-cores`. `--quick`: every target started once and
 * called a few times, no figures, nothing written (what the suite runs). Two steps follow the
 * fronts': the optional layers' (layer-costs.ts; `--layer-rounds`, default 3) and the cold start
 * with many servers (fleet-step.ts; `--fleet-rounds`, default 3, `--fleet-http` measures
 * `serve --http` there too). `--only layers` or `--only fleet` runs that step alone and prints
 * its section instead of writing the page.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { numberArg } from "../process-stats.js";
import { writeChart } from "./chart.js";
import { coldStarts } from "./cold-start.js";
import { renderFleet } from "./fleet-report.js";
import { fleetQuick, fleetStep } from "./fleet-step.js";
import { layerTable, measureLayers } from "./layer-costs.js";
import { measureRounds, warmUp } from "./measure.js";
import { ensurePeers } from "./peers.js";
import { quickCheckAll } from "./quick.js";
import { writeReport } from "./report.js";
import type { FrontResult } from "./summary.js";
import { type Front, type Running, start, targets } from "./targets.js";

const argv = process.argv;
const quick = argv.includes("--quick");
const pinnedRun = argv.includes("--pinned");
const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
if (only !== undefined && only !== "layers" && only !== "fleet")
  throw new Error(`--only takes "layers" or "fleet", not ${only}`);
const fleetOptions = { rounds: numberArg("--fleet-rounds", 3), http: argv.includes("--fleet-http") };

if (!quick && !pinnedRun && !argv.includes("--all-cores") && cpus().length >= 2) {
  const run = spawnSync(
    "taskset",
    ["-c", "0", process.execPath, ...process.execArgv, ...argv.slice(1), "--pinned"],
    {
      stdio: "inherit",
    },
  );
  if (run.error === undefined) process.exit(run.status ?? 1);
  console.log(`(taskset failed, running on all cores: ${run.error.message})`);
}

const began = performance.now();
const loadAtStart = loadavg()[0]!;
const log = (line: string) =>
  console.log(`[${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}`);
if (only === undefined) log("peers: installing what .bench-peers/ lacks");
const setup = only === undefined ? await ensurePeers() : { installed: [], absent: [] };
const scratch = mkdtempSync(join(tmpdir(), "mcplex-compare-"));
const specs = targets(setup.installed, scratch);
/** The optional layers' step: fewer rounds, at 1 and 64 in flight only, to stay short. */
const layerLoad = { rounds: numberArg("--layer-rounds", 3), seconds: numberArg("--seconds", 1), warmUp: 1 };

try {
  if (quick) {
    const results = await quickCheckAll(specs, scratch);
    const width = Math.max(...results.map((r) => r.label.length));
    for (const r of results) console.log(`${r.front.padEnd(5)} ${r.label.padEnd(width)} ${r.error ?? "ok"}`);
    for (const a of setup.absent) console.log(`not measured: ${a.name}: ${a.reason}`);
    const fleet = await fleetQuick(scratch);
    for (const c of fleet) console.log(`fleet ${c.what.padEnd(width)} ${c.error ?? `ok, ${c.tools} tools`}`);
    process.exitCode = [...results, ...fleet].some((r) => r.error !== undefined) ? 1 : 0;
  } else if (only === "fleet") {
    console.log(renderFleet(await fleetStep(scratch, fleetOptions, log)).join("\n"));
  } else if (only === "layers") {
    const layers = await measureLayers(specs, scratch, layerLoad, log);
    console.log(
      ["", "Optional layers (against plain mcplex of the same rounds)", "", ...layerTable(layers)].join("\n"),
    );
  } else {
    const load = {
      rounds: numberArg("--rounds", 5),
      seconds: numberArg("--seconds", 1),
      warmUp: numberArg("--warm-up", 1.5),
    };
    const startRounds = numberArg("--starts", 3);
    const fronts: FrontResult[] = [];
    for (const front of ["stdio", "http"] as Front[]) {
      const frontSpecs = specs.filter((s) => s.front === front);
      const failures = new Map<string, string>();
      log(`${front}: ${startRounds} cold starts of each target`);
      const starts = await coldStarts(frontSpecs, startRounds, failures);
      const running: Running[] = [];
      for (const spec of frontSpecs.filter((s) => !failures.has(s.id))) {
        try {
          running.push(await start(spec));
        } catch (error) {
          failures.set(spec.id, `failed to start: ${String(error).slice(0, 300)}`);
        }
      }
      try {
        log(`${front}: warming up`);
        await warmUp(running, load.warmUp);
        const cells = await measureRounds(running, load, failures, log);
        fronts.push({ front, specs: frontSpecs, cells, starts, failures });
      } finally {
        for (const r of running) await r.stop();
      }
    }
    const layers = await measureLayers(specs, scratch, layerLoad, log);
    const fleet = await fleetStep(scratch, fleetOptions, log);
    const seconds = (performance.now() - began) / 1000;
    const run = {
      layers,
      fleet,
      seconds,
      loadAtStart,
      pinned: pinnedRun,
      load,
      startRounds,
      absent: setup.absent,
      installed: setup.installed,
    };
    writeReport(fronts, run);
    writeChart(fronts);
    log(`wrote docs/benchmarks.md and docs/benchmarks.svg (${(seconds / 60).toFixed(1)} min)`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
