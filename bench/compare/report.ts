/**
 * Writes docs/benchmarks.md from a run of bench:compare, and the README's headline line (the
 * line carrying the marker below): the numbers on both come from the run, never by hand.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release } from "node:os";
import { type FleetResult, renderFleet } from "./fleet-report.js";
import { type LayerCosts, renderLayerCosts } from "./layer-costs.js";
import { CONCURRENCY, type LoadOptions } from "./measure.js";
import type { Absent, Peer } from "./peers.js";
import { type AtConcurrency, type FrontResult, type Row, show, summarize } from "./summary.js";

export const PAGE = new URL("../../docs/benchmarks.md", import.meta.url).pathname;
const README = new URL("../../README.md", import.meta.url).pathname;
/** The README line bench:compare rewrites carries this marker. */
export const HEADLINE_MARKER = "<!-- bench:compare headline -->";

export interface RunInfo {
  seconds: number;
  /** The 1-minute load average when the run began (other work on the machine widens spreads). */
  loadAtStart: number;
  pinned: boolean;
  load: LoadOptions;
  startRounds: number;
  absent: Absent[];
  installed: Peer[];
  /** The step of cold starts with many servers (fleet-step.ts), when it ran. */
  fleet?: FleetResult;
  /** The optional layers' step, when it ran. */
  layers?: LayerCosts;
}

const FRONT_TITLE = { stdio: "stdio", http: "Streamable HTTP" } as const;

function machine(info: RunInfo): string[] {
  const cpu = cpus();
  const pinning = info.pinned
    ? "the whole run pinned to one core (`taskset -c 0`): client, target and upstream share that core, so every hand-off between them is a context switch on it, and calls/s is what one core does for all three"
    : "not pinned: client, target and upstream on any of the cores";
  return [
    `- CPU: ${cpu[0]?.model ?? "unknown"}, ${cpu.length} cores; ${pinning}.`,
    `- Node ${process.version}, Linux ${release()}. Load average (1 min): ${info.loadAtStart.toFixed(1)} when the run began, ${loadavg()[0]!.toFixed(1)} when it ended; above the number of cores, other work shared the machine and the spreads show it.`,
    `- Rounds: ${info.load.rounds}; each round one ${info.load.seconds} s window per target per concurrency; ${info.load.warmUp} s of warm-up per target first; ${info.startRounds} cold starts per target (after one uncounted). The run took ${(info.seconds / 60).toFixed(1)} min.`,
  ];
}

function versions(fronts: FrontResult[], info: RunInfo): string[] {
  const lines = ["| target | front | package and version | started as |", "|---|---|---|---|"];
  const seen = new Set<string>();
  const how: Record<string, string> = {
    direct: "the echo server itself (stdio: bench/echo-server.mjs; HTTP: bench/compare/http-echo-server.mjs)",
    relay: "copies bytes, understands nothing (stdio: bench/relay.mjs; HTTP: bench/compare/tcp-relay.mjs)",
    sdk: "bench/compare/sdk-proxy.mjs: SDK v2 Client to the upstream behind an SDK v2 Server (HTTP: `createMcpHandler`)",
    mcplex:
      "`mcplex serve --stdio` / `serve --http`, `--no-prefix` (tools under their own names), defaults otherwise (over HTTP metrics and the dashboard with its call feed on; over stdio no HTTP front, so neither; audit, telemetry, sign-in, guardrails off), the echo server as its one upstream",
    "mcplex-front":
      "bench/compare/front-only.mjs: mcplex's HTTP front as `serve --http` builds it (the dashboard on) before an in-process `echo` tool, no upstream hop: the front's own cost against the bare echo",
    supergateway: "`supergateway --stdio … --outputTransport streamableHttp --stateful`",
    "mcp-proxy":
      "`mcp-proxy --server stream -- node echo-server.mjs`, defaults otherwise (its event store on)",
  };
  const pkg: Record<string, string> = {
    sdk: "`@modelcontextprotocol/server`, `/client`",
    mcplex: "mcplex (this checkout, from dist/)",
    "mcplex-front": "mcplex (this checkout, from dist/)",
    supergateway: "`supergateway`",
    "mcp-proxy": "`mcp-proxy`",
  };
  for (const f of fronts) {
    for (const s of f.specs) {
      if (seen.has(s.id)) continue;
      seen.add(s.id);
      const servedOn = fronts
        .filter((g) => g.specs.some((t) => t.id === s.id))
        .map((g) => FRONT_TITLE[g.front]);
      lines.push(
        `| ${s.label} | ${servedOn.join(", ")} | ${pkg[s.id] ? `${pkg[s.id]} ${s.version}` : "–"} | ${how[s.id] ?? ""} |`,
      );
    }
  }
  lines.push("");
  lines.push("Not measured:");
  for (const a of info.absent) lines.push(`- **${a.name}**: ${a.reason}.`);
  lines.push(
    "- **supergateway in its default (stateless) mode**: it spawns the server anew for every POST, so it is measured with `--stateful`, one server per session, as a client that keeps a session gets.",
  );
  for (const f of fronts)
    for (const [id, why] of f.failures)
      lines.push(`- **${f.specs.find((s) => s.id === id)?.label ?? id}** (${FRONT_TITLE[f.front]}): ${why}`);
  return lines;
}

function startTable(rows: Row[]): string[] {
  const lines = [
    "| target | first `tools/list`, ms | RSS idle, MB | RSS at 64 in flight, MB | CPU per call at 64 in flight, µs |",
    "|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const top = r.at.get(64);
    lines.push(
      `| ${r.spec.label} | ${show(r.firstList)} | ${show(r.idleRss, 1)} | ${show(r.loadRss, 1)} | ${show(top?.cpuPerCall)} |`,
    );
  }
  return lines;
}

function loadTable(rows: Row[], inFlight: number): string[] {
  const lines = [
    "| target | added p50, µs | added p99, µs | calls/s × direct | CPU per call, µs | p50 / p99, µs | calls/s |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const a: AtConcurrency | undefined = r.at.get(inFlight);
    if (a === undefined) {
      lines.push(`| ${r.spec.label} | not measured | | | | | |`);
      continue;
    }
    const direct = r.spec.role === "direct";
    lines.push(
      `| ${r.spec.label} | ${direct ? "(direct)" : show(a.addedP50)} | ${direct ? "" : show(a.addedP99)} | ${direct ? "1" : show(a.rateFraction, 2)} | ${show(a.cpuPerCall)} | ${a.p50?.median.toFixed(0)} / ${a.p99?.median.toFixed(0)} | ${a.rate?.median.toFixed(0)} |`,
    );
  }
  return lines;
}

/** The page, from the fronts' results and the run's facts. */
export function renderReport(fronts: FrontResult[], info: RunInfo, date = new Date()): string {
  const out = [
    "# Benchmarks: mcplex side by side",
    "",
    `<!-- Generated by \`npm run bench:compare\` (bench/compare/report.ts). Do not edit: rerun it. -->`,
    `Generated by \`npm run bench:compare\` on ${date.toISOString().slice(0, 16).replace("T", " ")} UTC. Every figure on this page and in the chart comes from that run.`,
    "",
    "## The machine",
    "",
    ...machine(info),
    "",
    "## What is measured",
    "",
    "Every target stands between the same raw client and the same raw upstream: a newline-JSON client over stdio, or plain JSON-RPC POSTs over kept-alive HTTP connections (2025-06-18 sessions, answers in JSON or SSE as the target sends them), and `bench/echo-server.mjs`, a lean stdio MCP server with one `echo` tool. **Direct** is that server with nothing between (over HTTP, a bare `node:http` echo speaking Streamable HTTP with JSON answers); the **byte relay** is the least any process between can cost.",
    "",
    "- **Added latency**: a target's p50 (p99) minus direct's, in the same round, with N calls kept in flight. **Calls/s × direct**: the target's calls per second over direct's in the same round.",
    "- **Rounds interleave**: a round gives each target one window per concurrency, the targets' order rotating each round, so that a slow moment of the machine lands on all of them alike. Figures are medians over rounds, the smallest and largest round in small type.",
    "- **CPU per call** and **RSS** count the target's own processes (the one started and its children), not the upstream echo server (nor a shell a peer starts it through): CPU from each thread's schedstat, RSS as VmRSS summed. For direct it is the echo server itself.",
    "- **First `tools/list`**: spawn to the answer of the first `tools/list` (after `initialize`; over HTTP, retried while the port refuses), a cold start as a client that starts its server feels it. RSS idle is read 300 ms after that answer.",
    "",
    "## Targets and versions",
    "",
    ...versions(fronts, info),
  ];
  for (const f of fronts) {
    const rows = summarize(f);
    out.push("", `## ${FRONT_TITLE[f.front]}`, "", ...startTable(rows));
    for (const c of CONCURRENCY) out.push("", `### ${c} in flight`, "", ...loadTable(rows, c));
  }
  if (info.layers !== undefined) out.push("", ...renderLayerCosts(info.layers));
  if (info.fleet !== undefined) out.push("", ...renderFleet(info.fleet));
  out.push(
    "",
    "## Chart",
    "",
    "![Added p50 latency by calls in flight, per target, stdio and Streamable HTTP](benchmarks.svg)",
    "",
    "## Rerun",
    "",
    "```sh",
    "npm ci",
    "npm run bench:compare            # builds, installs the peers into .bench-peers/, writes this page and the chart",
    "npm run bench:compare -- --rounds 9 --seconds 2   # longer, steadier",
    "npm run bench:compare -- --all-cores              # not pinned to one core",
    "npm run bench:compare -- --quick                  # every target answers? (no figures, nothing written)",
    "npm run bench:compare -- --only layers            # the optional layers' step alone (prints its table, writes nothing)",
    "npm run bench:compare -- --only fleet             # the cold start with many servers alone, printed",
    "```",
    "",
    "On a shared or busy machine the spreads widen; compare the figures of one run, not of two.",
    "",
  );
  return out.join("\n");
}

/** The README's one line of headline figures. */
export function headline(fronts: FrontResult[]): string {
  const pick = (front: string, inFlight: number, key: "addedP50" | "rateFraction") => {
    const f = fronts.find((g) => g.front === front);
    const rows = f ? summarize(f) : [];
    return (id: string) => rows.find((r) => r.spec.id === id)?.at.get(inFlight)?.[key]?.median;
  };
  const us = (v: number | undefined) => (v === undefined ? "–" : `${v.toFixed(0)} µs`);
  const x = (v: number | undefined) => (v === undefined ? "–" : `${v.toFixed(2)}×`);
  const stdio = pick("stdio", 1, "addedP50");
  const http = pick("http", 64, "rateFraction");
  return `- [Benchmarks](docs/benchmarks.md) (generated by \`npm run bench:compare\`), side by side with the SDK v2, supergateway and mcp-proxy: over stdio, one call at a time, mcplex adds ${us(stdio("mcplex"))} p50 (a byte relay ${us(stdio("relay"))}, the SDK v2 proxy ${us(stdio("sdk"))}); over Streamable HTTP with 64 in flight it does ${x(http("mcplex"))} direct's calls/s (supergateway ${x(http("supergateway"))}, mcp-proxy ${x(http("mcp-proxy"))}). ${HEADLINE_MARKER}`;
}

/** Writes the page and rewrites the README's headline line, if it has one. */
export function writeReport(fronts: FrontResult[], info: RunInfo): void {
  writeFileSync(PAGE, renderReport(fronts, info));
  const readme = readFileSync(README, "utf8");
  const lines = readme.split("\n");
  const at = lines.findIndex((l) => l.includes(HEADLINE_MARKER));
  if (at === -1) {
    console.log(`README.md has no line with ${HEADLINE_MARKER}: its headline is not updated`);
    return;
  }
  lines[at] = headline(fronts);
  writeFileSync(README, lines.join("\n"));
}
