import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HubEvent } from "../../src/hub/hub.js";
import { runCli } from "../support/cli.js";
import { configOf, stdio } from "../support/config.js";
import { type InProcessGateway, startGateway } from "../support/gateway.js";
import { nextEvent } from "../support/wait.js";

// A server that keeps dying: its breaker opens after the configured failures in a row, shows
// "open until HH:MM:SS" in /readyz and `list`, and closes by itself; a server that serves
// calls between its deaths is reconnected at once each time.

const SLOW_READER = resolve("test/fixtures/servers/slow-reader-server.mjs");
const OPEN_UNTIL = /^open until \d\d:\d\d:\d\d$/;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-breaker-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const ready = (server: string) => (e: HubEvent) =>
  e.type === "server-state" && e.server === server && e.state === "ready";

async function readyz(
  gw: InProcessGateway,
): Promise<{ name: string; breaker?: string; breakerOpenUntil?: number }> {
  const body = (await (await fetch(`${gw.origin}/readyz`)).json()) as { servers: { name: string }[] };
  return body.servers.find((s) => s.name === "flaky")!;
}

function pidOf(gw: InProcessGateway): number {
  return gw.hub.servers().find((s) => s.name === "flaky")!.pid!;
}

describe("the reconnect breaker", () => {
  it("opens after the configured failures in a row, shows until when in /readyz, and closes by itself", async () => {
    const gw = await startGateway(
      configOf([
        stdio("flaky", process.execPath, [SLOW_READER], {
          breaker: { failures: 2, openFor: 3000 },
          backoff: { initial: 100, max: 200 },
        }),
      ]),
    );
    try {
      const back = nextEvent(gw.hub, ready("flaky"));
      process.kill(pidOf(gw), "SIGKILL");
      await back;
      expect((await readyz(gw)).breaker).toBeUndefined();
      const recovered = nextEvent(gw.hub, ready("flaky"), 30_000);
      recovered.catch(() => {}); // awaited below; a failure before then must not go unhandled
      const down = nextEvent(
        gw.hub,
        (e) => e.type === "server-state" && e.server === "flaky" && e.state !== "ready",
      );
      process.kill(pidOf(gw), "SIGKILL");
      await down;
      const open = await readyz(gw);
      expect(open.breaker).toMatch(OPEN_UNTIL);
      expect(open.breakerOpenUntil! - Date.now()).toBeGreaterThan(1000);
      expect(gw.hub.servers()[0]!.breaker).toBe(open.breaker);
      // The dashboard's data carries it too (its page shows "breaker open until ...").
      const dashboard = (await (await fetch(`${gw.origin}/dashboard/state`)).json()) as {
        servers: { name: string; breakerOpenUntil?: number }[];
      };
      expect(dashboard.servers.find((s) => s.name === "flaky")!.breakerOpenUntil).toBe(open.breakerOpenUntil);
      await recovered;
      expect((await readyz(gw)).breaker).toBeUndefined();
      expect(await gw.hub.callTool("flaky__pid", {})).toBeDefined();
    } finally {
      await gw.stop();
    }
  }, 60_000);

  it("stays closed for a server killed again and again that serves calls in between", async () => {
    // Default breaker (8 failures); quick backoff so the test does not wait on it.
    const gw = await startGateway(
      configOf([stdio("flaky", process.execPath, [SLOW_READER], { backoff: { initial: 100, max: 200 } })]),
    );
    try {
      for (let kill = 0; kill < 10; kill++) {
        await gw.hub.callTool("flaky__pid", {});
        const back = nextEvent(gw.hub, ready("flaky"), 30_000);
        process.kill(pidOf(gw), "SIGKILL");
        await back;
        expect(gw.hub.servers()[0]!.breaker).toBeUndefined();
      }
    } finally {
      await gw.stop();
    }
  }, 120_000);

  it("is configured per server, shown by list, and its bad keys are named by config check", async () => {
    const config = join(dir, "mcplex.yaml");
    await writeFile(
      config,
      [
        "servers:",
        "  dies:",
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ["-e", "process.exit(3)"]`,
        "    breaker: { failures: 1, openFor: 10m }",
        "",
      ].join("\n"),
    );
    const list = await runCli(["list", "--json", "--config", config]);
    const server = JSON.parse(list.stdout).servers[0];
    expect(server.breaker).toMatch(OPEN_UNTIL);
    const text = await runCli(["list", "--config", config]);
    expect(text.stdout).toMatch(/^dies {2}failed .*breaker open until \d\d:\d\d:\d\d$/m);

    await writeFile(
      config,
      ["servers:", "  dies:", '    command: "x"', "    breaker: { failurs: 1, openFor: soon }", ""].join(
        "\n",
      ),
    );
    const check = await runCli(["config", "check", "--config", config]);
    expect(check.code).toBe(2);
    expect(check.stdout + check.stderr).toMatch(/servers\.dies\.breaker\.failurs.*did you mean "failures"/);
    expect(check.stdout + check.stderr).toMatch(/servers\.dies\.breaker\.openFor.*not a duration/);
  }, 60_000);
});
