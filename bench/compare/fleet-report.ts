/**
 * The page's section on cold starts with many servers (fleet-start.ts, remote-start.ts): every
 * figure from the run, each ratio taken round by round against the floor of the same round.
 */
import type { FleetRounds, McplexStart } from "./fleet-start.js";
import type { Absent } from "./peers.js";
import type { RemoteRounds } from "./remote-start.js";
import { perRound, show, spread } from "./summary.js";

/** What the fleet step of a run gives the page. */
export interface FleetResult {
  rounds: number;
  fleet: FleetRounds;
  remote: RemoteRounds;
  /** Fleet packages not installed, and why. */
  absent: Absent[];
}

/** The target of issue 36: mcplex's first full list within this factor of the floor. */
export const FLEET_TARGET = 1.2;

/** Per round, the largest (or sum) over the servers' lists of that round. */
function across(lists: readonly (readonly number[])[], op: (values: number[]) => number): number[] {
  const n = Math.min(...lists.map((l) => l.length));
  return Number.isFinite(n) ? Array.from({ length: n }, (_, i) => op(lists.map((l) => l[i]!))) : [];
}

function fleetLines(f: FleetRounds): string[] {
  const aloneMax = across([...f.alone.values()], (v) => Math.max(...v));
  const lines = [
    "| server | package and version | tools | alone: spawn to first `tools/list`, ms |",
    "|---|---|---|---|",
  ];
  for (const s of f.servers) {
    lines.push(
      `| ${s.name} | \`${s.pkg}\` ${s.version} | ${f.tools.get(s.name)?.length ?? "–"} | ${show(spread(f.alone.get(s.name) ?? []))} |`,
    );
  }
  const tools = [...f.tools.values()].reduce((n, t) => n + t.length, 0);
  const ratio = (a: readonly number[], b: readonly number[]) => spread(perRound(a, b, (x, y) => x / y));
  const row = (label: string, runs: readonly McplexStart[], bold: boolean) => {
    const ms = runs.map((r) => r.ms);
    const cpu = runs.map((r) => r.cpu * 1000);
    const x = show(ratio(ms, f.together), 2);
    return `| ${label} | ${show(spread(ms))} | ${bold ? `**${x}**` : x} | ${show(spread(cpu))} (mcplex itself ${show(spread(runs.map((r) => r.ownCpu * 1000)))}) | ${show(ratio(cpu, togetherCpu), 2)} |`;
  };
  const togetherCpu = f.togetherCpu.map((c) => c * 1000);
  lines.push(
    "",
    `| start of all ${f.servers.length} (${tools} tools) | ms | × (b), same round | CPU by then, ms | CPU × (b) |`,
    "|---|---|---|---|---|",
    `| (a) the slowest server, started alone | ${show(spread(aloneMax))} | ${show(ratio(aloneMax, f.together), 2)} | | |`,
    `| (b) all at once by the raw client, to the last one's answer (the floor) | ${show(spread(f.together))} | 1 | ${show(spread(togetherCpu))} | 1 |`,
    row(`(c) \`mcplex serve --stdio\`, to its first \`tools/list\` with all ${tools}`, f.stdio, true),
  );
  if (f.http.length > 0) lines.push(row("(c) `mcplex serve --http`, the same", f.http, false));
  return lines;
}

function remoteLines(r: RemoteRounds): string[] {
  const alone = [...r.alone.values()];
  const sum = across(alone, (v) => v.reduce((a, b) => a + b, 0));
  const max = across(alone, (v) => Math.max(...v));
  const distance = perRound(r.mcplex, r.mcplexNear, (x, y) => x - y);
  const lines = ["| | ms |", "|---|---|"];
  for (const [name, ms] of r.alone)
    lines.push(`| upstream ${name} alone: connect and first \`tools/list\` | ${show(spread(ms))} |`);
  lines.push(
    `| their sum (connected one after another) | ${show(spread(sum))} |`,
    `| their max (connected concurrently) | ${show(spread(max))} |`,
    `| \`mcplex serve --stdio\` with the three as \`url:\` servers, spawn to its first full \`tools/list\` | ${show(spread(r.mcplex))} |`,
    `| the same without the delay (mcplex's own start) | ${show(spread(r.mcplexNear))} |`,
    `| **what the distance added to mcplex's start** (the two above, per round) | **${show(spread(distance))}** |`,
  );
  return lines;
}

/** The section, from the fleet step's results. */
export function renderFleet(result: FleetResult): string[] {
  const { fleet, remote } = result;
  const out = [
    "## Cold start with many servers",
    "",
    `What a user feels when a client spawns \`mcplex serve\` in front of ten real servers from npm (stdio, each started as \`node\` and its entry file, no npm resolution in the timing): spawn to the answer of mcplex's first \`tools/list\`, the tools of all ten in it. The configs set \`serve.readyWait: 120s\`, so that the first list waits for every server (by default mcplex answers after 1 s with the servers up so far and announces the others with \`list_changed\`). ${result.rounds} rounds after one not counted; each round starts every server alone, then all ten at once, then mcplex, the order rotating.`,
    "",
    `The target is (c) within ${FLEET_TARGET}× the slowest server's own start. Started alone, that is (a); but mcplex starts all ten at once on the same cores, and there the floor is (b), the ten spawned together by the raw client, time to the last one's answer: the target is read against (b). The raw client spawns each server in a session of its own, as mcplex does (with Linux's autogroup scheduling a session is a unit of CPU share: spawned otherwise, the floor would get less of a busy core than mcplex's servers do). With the run pinned to one core, (b) is close to the ten starts' CPU time added up. CPU is every process's (the servers', and mcplex's with them) from its threads' schedstat at the answer: it is what the start costs the machine, and it moves less than time does when other work shares the core.`,
    "",
    ...fleetLines(fleet),
  ];
  for (const f of fleet.failures) out.push(`- not measured: ${f}`);
  for (const a of result.absent) out.push(`- **${a.name}** not measured: ${a.reason}.`);
  out.push(
    "",
    "### Remote upstreams",
    "",
    `Three Streamable HTTP servers (server-everything in its \`streamableHttp\` mode, on loopback), each behind \`bench/compare/delay-relay.mjs\`, which holds every chunk ${remote.oneWayMs} ms each way (a round trip of ${2 * remote.oneWayMs} ms, as to a server in another region; a new connection's first bytes wait one round trip more, a TCP handshake's; no TLS). The raw client connects to each alone (initialize, initialized, \`tools/list\`); mcplex connects to the three from one config. Connected one after another, the distance would add their sum to mcplex's start; connected concurrently, about their max.`,
    "",
    ...remoteLines(remote),
  );
  for (const f of remote.failures) out.push(`- not measured: ${f}`);
  return out;
}
