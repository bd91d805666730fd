/**
 * A sandbox's network modes (`none`, `all`) and its lifetime: the whole tree in the sandbox
 * (bwrap, the server, what the server started) ends when mcplex is killed outright, and the
 * pids cgroup and the proxy's socket directory are gone after a clean stop.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_DEFAULTS } from "../../src/config/read-sandbox.js";
import type { SandboxConfig } from "../../src/config/types.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, stdio } from "../support/config.js";
import { until } from "../support/wait.js";

const PROBE = resolve("test/fixtures/servers/sandbox-probe-server.mjs");
let listener: Server;
let port = 0;

beforeAll(async () => {
  listener = createServer((_req, res) => res.end("host"));
  await new Promise<void>((done) => listener.listen(0, "127.0.0.1", done));
  port = (listener.address() as AddressInfo).port;
});
afterAll(() => listener.close());

async function withProbe<T>(sandbox: SandboxConfig, use: (hub: Hub) => Promise<T>): Promise<T> {
  const hub = new Hub({ config: configOf([stdio("probe", "node", [PROBE], { sandbox } as never)]) });
  try {
    await hub.start();
    expect(hub.servers()[0]).toMatchObject({ state: "ready" });
    return await use(hub);
  } finally {
    await hub.close();
  }
}

async function connectFrom(hub: Hub): Promise<{ ok: boolean; code?: string }> {
  const result = await hub.callTool("probe__probe", { kind: "connect", host: "127.0.0.1", port });
  return JSON.parse((result.content[0] as { text: string }).text);
}

/** Processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("a sandbox's network", () => {
  it("none: a connection to a host port fails (its own namespace, loopback only)", async () => {
    await withProbe(SANDBOX_DEFAULTS, async (hub) => {
      expect(await connectFrom(hub)).toMatchObject({ ok: false, code: "ECONNREFUSED" });
    });
  });

  it("all: the same connection is made", async () => {
    await withProbe({ ...SANDBOX_DEFAULTS, network: "all" }, async (hub) => {
      expect(await connectFrom(hub)).toMatchObject({ ok: true });
    });
  });

  it("a host list: the proxy's socket directory and the pids cgroup are gone after the stop", async () => {
    // This process's own directories: other test files run sandboxes of their own meanwhile.
    const ours = () =>
      readdirSync(tmpdir()).filter((name) => name.startsWith(`mcplex-proxy-${process.pid}-`));
    const before = ours();
    await withProbe({ ...SANDBOX_DEFAULTS, network: [`127.0.0.1:${port}`] }, async () => {
      expect(ours().length).toBe(before.length + 1);
    });
    const after = ours();
    expect(after).toEqual(before);
    if (existsSync("/sys/fs/cgroup/pids")) {
      const cgroups = () =>
        readdirSync("/sys/fs/cgroup/pids").filter((name) => name.startsWith(`mcplex-${process.pid}-`));
      await until(() => cgroups().length === 0, 5_000, "the pids cgroups to be removed");
    }
  });
});

describe("a sandbox's lifetime", () => {
  it("ends with mcplex, even when mcplex is killed outright", async () => {
    const marker = `sandbox-lifetime-${process.pid}-${Date.now()}`;
    const script = `
      const { Hub } = await import(${JSON.stringify(resolve("dist/hub/hub.js"))});
      const server = { name: "probe", enabled: true, timeout: 10000, startTimeout: 20000, lazy: false, tools: {},
        transport: "stdio", command: "node", args: [${JSON.stringify(PROBE)}, ${JSON.stringify(marker)}], env: {},
        sandbox: ${JSON.stringify({ ...SANDBOX_DEFAULTS, network: ["127.0.0.1:9"] })} };
      const hub = new Hub({ config: { source: "t", format: "mcplex", servers: [server], profiles: {}, tokens: [], secrets: [] } });
      await hub.start();
      console.log(hub.servers()[0].state);
    `;
    const mcplex: ChildProcess = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const state = await new Promise<string>((done) =>
      mcplex.stdout!.once("data", (chunk) => done(String(chunk).trim())),
    );
    expect(state).toBe("ready");
    // bwrap and the server inside it, both named by the marker.
    expect(processesWith(marker).length).toBeGreaterThanOrEqual(2);
    const reaped = new Promise((done) => mcplex.once("exit", done));
    mcplex.kill("SIGKILL");
    await reaped;
    await until(() => processesWith(marker).length === 0, 10_000, "the sandboxed tree to end");
    // Its proxy directory and pids cgroup outlived it; the next mcplex to sandbox a server removes them.
    const proxyDirs = () =>
      readdirSync(tmpdir()).filter((name) => name.startsWith(`mcplex-proxy-${mcplex.pid}-`));
    expect(proxyDirs()).toHaveLength(1);
    await withProbe({ ...SANDBOX_DEFAULTS, network: ["127.0.0.1:9"] }, async () => {});
    expect(proxyDirs()).toEqual([]);
    const leftover = `/sys/fs/cgroup/pids/mcplex-${mcplex.pid}-1`;
    if (existsSync("/sys/fs/cgroup/pids")) {
      // Empty once the killed processes are reaped too (they count until then).
      const tasks = () =>
        existsSync(leftover) ? readFileSync(`${leftover}/cgroup.procs`, "utf8").trim() : "";
      await until(() => tasks() === "", 10_000, "the killed tree to be reaped");
      await withProbe(SANDBOX_DEFAULTS, async () => {});
      expect(existsSync(leftover)).toBe(false);
    }
  });
});
