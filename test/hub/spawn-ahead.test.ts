import type { ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Hub } from "../../src/hub/hub.js";
import { dropSpawnedAhead, spawnAhead } from "../../src/upstream/spawn-server.js";
import { configOf, stdio } from "../support/config.js";

const ECHO = resolve("bench/echo-server.mjs");
const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((done) => child.once("exit", () => done()));

// `mcplex serve` starts its servers' processes before the hub's code has loaded; the hub's
// transports then take them instead of starting their own.
describe("spawnAhead", () => {
  let hub: Hub | undefined;
  afterEach(async () => {
    dropSpawnedAhead();
    await hub?.close();
    hub = undefined;
  });

  it("a hub's start takes the process started ahead for its server, and starts no other", async () => {
    const server = stdio("echo", process.execPath, [ECHO]);
    const [child] = spawnAhead([server]);
    expect(child?.pid).toBeGreaterThan(0);
    hub = new Hub({ config: configOf([server]) });
    await hub.start();
    const [status] = hub.servers();
    expect(status).toMatchObject({ state: "ready", pid: child!.pid });
    expect(hub.tools().length).toBeGreaterThan(0);
  });

  it("starts only what the hub's start starts: not disabled, lazy or unshared servers", () => {
    const started = spawnAhead([
      stdio("off", process.execPath, [ECHO, "off"], { enabled: false }),
      stdio("lazy", process.execPath, [ECHO, "lazy"], { lazy: true }),
      stdio("own", process.execPath, [ECHO, "own"], { share: false }),
      stdio("simulated", process.execPath, [ECHO, "simulated"], { simulate: true }),
    ]);
    expect(started).toEqual([]);
  });

  it("stops the processes no transport took", async () => {
    const [child] = spawnAhead([stdio("echo", process.execPath, [ECHO])]);
    dropSpawnedAhead();
    await exited(child!);
    expect(child!.signalCode).toBe("SIGKILL");
  });

  it("a command not found fails the server's start as before, with the hint", async () => {
    const server = stdio("missing", "/nonexistent/mcplex-no-such-server");
    spawnAhead([server]);
    hub = new Hub({ config: configOf([server]) });
    await hub.start();
    const [status] = hub.servers();
    expect(status?.state).toBe("failed");
    expect(status?.error).toMatch(/could not start.*was not found/);
  });

  it("a process that ended before it was taken fails the start with its exit, without waiting for the timeout", async () => {
    const server = stdio("quits", process.execPath, ["-e", "process.exit(3)"], { startTimeout: 60_000 });
    const [child] = spawnAhead([server]);
    await exited(child!);
    hub = new Hub({ config: configOf([server]) });
    await hub.start();
    const [status] = hub.servers();
    expect(status?.state).not.toBe("ready");
    expect(status?.error).toMatch(/exited with code 3/);
  });
});
