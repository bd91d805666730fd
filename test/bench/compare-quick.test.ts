/**
 * Keeps `npm run bench:compare` runnable: its quick mode starts every target of both fronts
 * (the peers installed from npm into .bench-peers/, as the bench does) and checks that each
 * lists the echo tool and echoes, one call and eight at once; and the fleet of ten real servers
 * and the three remote upstreams, each started and listed alone and through mcplex, whose first
 * list must hold all their tools. Nothing about speed.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FLEET_PEERS } from "../../bench/compare/fleet-servers.js";
import { fleetConfig, mcplexSpec, mcplexStart } from "../../bench/compare/fleet-start.js";
import { fleetQuick } from "../../bench/compare/fleet-step.js";
import { ensurePeers, PEERS, type PeerSetup, registryUnreachable } from "../../bench/compare/peers.js";
import { quickCheck, quickCheckAll } from "../../bench/compare/quick.js";
import { type TargetSpec, targets } from "../../bench/compare/targets.js";

const ECHO = new URL("../../bench/echo-server.mjs", import.meta.url).pathname;
let setup: PeerSetup;
const scratch = mkdtempSync(join(tmpdir(), "compare-quick-"));

beforeAll(async () => {
  setup = await ensurePeers();
}, 300_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("bench:compare --quick", () => {
  it("starts every target of both fronts, the optional layers' included, and each lists the echo tool and echoes", async () => {
    // The test machines reach npm (the set-up installs from it too): an unreachable registry fails
    // here, rather than passing a comparison that measured nothing.
    expect(
      registryUnreachable(setup),
      `npm registry unreachable, peers not installed: ${JSON.stringify(setup.absent)}`,
    ).toBe(false);
    // Both peers installed: an install that failed would silently shrink the comparison.
    expect(setup.installed.map((p) => p.pkg).sort()).toEqual(
      Object.values(PEERS)
        .map((p) => p.pkg)
        .sort(),
    );
    const results = await quickCheckAll(targets(setup.installed, scratch), scratch);
    expect(results.map((r) => `${r.front} ${r.id}`).sort()).toEqual(
      [
        "stdio direct",
        "stdio relay",
        "stdio sdk",
        "stdio mcplex",
        "http direct",
        "http relay",
        "http sdk",
        "http mcplex",
        "http mcplex-front",
        "http supergateway",
        "http mcp-proxy",
        // The optional layers (bench/compare/layers.ts), each mcplex with one more turned on.
        "stdio mcplex+audit",
        "stdio mcplex+telemetry",
        "stdio mcplex+guardrails",
        "stdio mcplex+dashboard",
        "http mcplex+audit",
        "http mcplex+telemetry",
        "http mcplex+sign-in",
        "http mcplex+guardrails",
      ].sort(),
    );
    expect(results.filter((r) => r.error !== undefined)).toEqual([]);
    // The audit layer was on: its targets' calls are in their files (written as each stopped).
    for (const front of ["stdio", "http"])
      expect(readFileSync(join(scratch, `layer-${front}-audit.log`), "utf8")).toContain(
        '"method":"tools/call"',
      );
  }, 360_000);

  it("starts the fleet of ten servers and the three remote upstreams, each alone and through mcplex", async () => {
    const checks = await fleetQuick(scratch);
    expect(checks.filter((c) => c.error !== undefined)).toEqual([]);
    // All ten: the three dev dependencies and every package of the fleet installed from npm.
    const fleet = ["everything", "filesystem", "memory", ...FLEET_PEERS.map((p) => p.id)];
    expect(checks.map((c) => c.what)).toEqual([
      ...fleet,
      "mcplex (fleet)",
      "remote east",
      "remote west",
      "remote north",
      "mcplex (remote)",
    ]);
    const tools = (names: string[]) =>
      names.reduce((n, name) => n + (checks.find((c) => c.what === name)?.tools ?? 0), 0);
    for (const c of checks) expect(c.tools, c.what).toBeGreaterThan(0);
    // mcplex's first list held every tool each server lists alone (mcplexStart checks it by name).
    expect(checks.find((c) => c.what === "mcplex (fleet)")?.tools).toBe(tools(fleet));
    expect(checks.find((c) => c.what === "mcplex (remote)")?.tools).toBe(
      tools(["remote east", "remote west", "remote north"]),
    );
  }, 300_000);

  it("fails a start of mcplex whose first list lacks a tool a server lists alone", async () => {
    const lean = { name: "echo", pkg: "-", version: "-", argv: [ECHO], env: {} };
    const config = fleetConfig([lean], scratch);
    await expect(
      mcplexStart(mcplexSpec(config, "stdio"), new Map([["echo", ["echo", "not-offered"]]])),
    ).rejects.toThrow(/lacks 1: echo__not-offered/);
  }, 60_000);

  it("names every peer it does not measure, 1MCP included, with a reason", () => {
    const names = setup.absent.map((a) => a.name);
    expect(names).toContain("1MCP");
    expect(names).toContain("mcp-hub 4.2.1");
    for (const a of setup.absent) expect(a.reason.length).toBeGreaterThan(10);
  });

  it("reports a target that answers with something other than the echo, and one that dies", async () => {
    // A stdio server that lists the echo tool but answers every call with the wrong text.
    const liar = `process.stdin.setEncoding("utf8").on("data", (t) => { for (const l of t.split("\\n")) {
      if (!l) continue; const m = JSON.parse(l); if (m.id === undefined) continue;
      const result = m.method === "tools/list" ? { tools: [{ name: "echo", inputSchema: { type: "object" } }] }
        : m.method === "tools/call" ? { content: [{ type: "text", text: "not the message" }] }
        : { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "x", version: "1" } };
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n"); } });`;
    const base = { version: "-", role: "peer" } as const;
    const broken: TargetSpec[] = [
      { ...base, id: "liar", label: "liar", front: "stdio", argv: () => ["-e", liar] },
      { ...base, id: "dies", label: "dies", front: "http", argv: () => ["-e", "process.exit(3)"] },
    ];
    const [lies, dies] = await quickCheck(broken);
    expect(lies?.error).toMatch(/no echo in .*not the message/);
    expect(dies?.error).toMatch(/exited with 3/);
  }, 60_000);
});
