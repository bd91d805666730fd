/**
 * bench:compare's step of cold starts with many servers: the fleet of ten stdio servers and the
 * three remote HTTP upstreams, in rounds (fleet-start.ts, remote-start.ts), or, in quick mode,
 * each started once and listed, checking answers and tools, nothing about speed.
 */
import type { FleetResult } from "./fleet-report.js";
import { ensureFleet } from "./fleet-servers.js";
import {
  fleetConfig,
  fleetRounds,
  mcplexSpec,
  mcplexStart,
  serverStart,
  writeMcplexConfig,
} from "./fleet-start.js";
import { REMOTES, remoteRounds, remoteStart, startRemotes } from "./remote-start.js";

export interface FleetStepOptions {
  rounds: number;
  http: boolean;
}

/** Installs what the fleet lacks, then measures the fleet and the remote set. */
export async function fleetStep(
  scratch: string,
  options: FleetStepOptions,
  log: (line: string) => void,
): Promise<FleetResult> {
  log("fleet: installing what .bench-peers/ lacks of the fleet");
  const setup = await ensureFleet(scratch);
  const fleet = await fleetRounds(setup.servers, scratch, options, log);
  const remote = await remoteRounds(scratch, options.rounds, log);
  return { rounds: options.rounds, fleet, remote, absent: setup.absent };
}

export interface FleetCheck {
  /** What was started: a server's name, `mcplex (fleet)`, an upstream, `mcplex (remote)`. */
  what: string;
  /** The tools it listed. */
  tools?: number;
  /** Undefined when it answered; else what went wrong. */
  error?: string;
}

async function check(what: string, work: () => Promise<number>): Promise<FleetCheck> {
  try {
    return { what, tools: await work() };
  } catch (error) {
    return { what, error: String(error).slice(0, 400) };
  }
}

/**
 * Quick mode: each fleet server started once alone, then mcplex with all of them (its first
 * list must hold every server's tools); each remote upstream listed once through its relay,
 * then mcplex with the three. A package not installed is a failed check too.
 */
export async function fleetQuick(scratch: string): Promise<FleetCheck[]> {
  const setup = await ensureFleet(scratch);
  const checks: FleetCheck[] = setup.absent.map((a) => ({ what: a.name, error: a.reason }));
  const tools = new Map<string, string[]>();
  for (const server of setup.servers) {
    checks.push(
      await check(server.name, async () => {
        const listed = (await serverStart(server)).tools;
        tools.set(server.name, listed);
        return listed.length;
      }),
    );
  }
  const config = fleetConfig(
    setup.servers.filter((s) => tools.has(s.name)),
    scratch,
  );
  const count = (m: Map<string, string[]>) => [...m.values()].reduce((n, t) => n + t.length, 0);
  checks.push(
    await check("mcplex (fleet)", async () => {
      await mcplexStart(mcplexSpec(config, "stdio"), tools);
      return count(tools);
    }),
  );
  const remotes = await startRemotes(5).catch((error: unknown) => error as Error);
  if (remotes instanceof Error) return [...checks, { what: "remote servers", error: String(remotes) }];
  try {
    const remoteTools = new Map<string, string[]>();
    for (const name of REMOTES) {
      checks.push(
        await check(`remote ${name}`, async () => {
          const listed = (await remoteStart(remotes.far.get(name)!)).tools;
          remoteTools.set(name, listed);
          return listed.length;
        }),
      );
    }
    const remoteConfig = writeMcplexConfig(
      `${scratch}/remote.yaml`,
      Object.fromEntries([...remotes.far].map(([name, url]) => [name, { url: url.href }])),
    );
    checks.push(
      await check("mcplex (remote)", async () => {
        await mcplexStart(mcplexSpec(remoteConfig, "stdio"), remoteTools);
        return count(remoteTools);
      }),
    );
  } finally {
    remotes.stop();
  }
  return checks;
}
