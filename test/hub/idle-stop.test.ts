/**
 * `idleTimeout`: a real stdio server (server-memory, the SDK fixture) is stopped after that long
 * without a call, its process ends, its tools stay listed, and the next call starts it again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { Hub, type HubEvent } from "../../src/hub/hub.js";
import { configOf, fixture, MEMORY, stdio } from "../support/config.js";
import { alive, nextEvent } from "../support/wait.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function memory(extra: Partial<ServerConfig>): ServerConfig {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-idle-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return stdio("memory", MEMORY, [], {
    env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
    ...extra,
  } as never);
}

function hubOf(server: ServerConfig): { hub: Hub; events: HubEvent[] } {
  const hub = new Hub({ config: configOf([server]) });
  cleanups.push(() => hub.close());
  const events: HubEvent[] = [];
  hub.on((event) => events.push(event));
  return { hub, events };
}

const wentIdle = (hub: Hub, server: string) =>
  nextEvent(hub, (e) => e.type === "server-state" && e.server === server && e.state === "idle");

describe("a server with idleTimeout", () => {
  it("ends its process when not called, keeps its tools listed, and starts again on the next call", async () => {
    const { hub, events } = hubOf(memory({ idleTimeout: 300 }));
    const idle = wentIdle(hub, "memory");
    await hub.start();
    events.length = 0; // the start itself is announced; what follows must not be
    const first = hub.servers()[0]!;
    expect(first).toMatchObject({ state: "ready", starts: 1, idleStops: 0 });
    const pid = first.pid!;
    const listed = hub.tools().map((t) => t.name);
    expect(listed).toContain("memory__read_graph");

    await idle;
    // `idle` is reported once the connection is closed, and closing waits for the exit.
    expect(alive(pid)).toBe(false);
    expect(hub.servers()[0]).toMatchObject({ state: "idle", starts: 1, idleStops: 1 });
    expect(hub.servers()[0]?.pid).toBeUndefined();
    expect(hub.tools().map((t) => t.name)).toEqual(listed);
    expect(hub.tools().every((t) => t.available)).toBe(true);

    const result = await hub.callTool("memory__read_graph", {});
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain("entities");
    const again = hub.servers()[0]!;
    expect(again).toMatchObject({ state: "ready", starts: 2, idleStops: 1 });
    expect(again.pid).not.toBe(pid);
    expect(alive(again.pid!)).toBe(true);
    expect(hub.tools().map((t) => t.name)).toEqual(listed);
    // Stopping and starting again changed nothing a client lists.
    expect(events.filter((e) => e.type === "catalog-changed")).toEqual([]);
  });

  it("is stopped again after the restart, once idle for as long", async () => {
    const { hub } = hubOf(memory({ idleTimeout: 200 }));
    await hub.start();
    await wentIdle(hub, "memory");
    const idleAgain = wentIdle(hub, "memory");
    await hub.callTool("memory__read_graph", {});
    const pid = hub.servers()[0]!.pid!;
    await idleAgain;
    expect(alive(pid)).toBe(false);
    expect(hub.servers()[0]).toMatchObject({ state: "idle", starts: 2, idleStops: 2 });
  });

  it("is not stopped while a call is in flight", async () => {
    const { hub, events } = hubOf(fixture("slow", [], { idleTimeout: 100 }));
    await hub.start();
    const pid = hub.servers()[0]!.pid!;
    const result = await hub.callTool("slow__slow", { ms: 1500, step: 100, tag: "held" });
    expect(result.content).toEqual([{ type: "text", text: "slept 1500" }]);
    // The call answered on the first connection: no stop cut it, no restart served it.
    const states = events.filter((e) => e.type === "server-state").map((e) => (e as { state: string }).state);
    expect(states).toEqual(["starting", "ready"]);
    expect(hub.servers()[0]).toMatchObject({ pid, starts: 1, idleStops: 0 });
  });

  it("with lazy: true, starts on the first call and stops again when idle, its tools still listed", async () => {
    const { hub } = hubOf(memory({ lazy: true, idleTimeout: 200 }));
    await hub.start();
    expect(hub.servers()[0]).toMatchObject({ state: "idle", starts: 0 });
    await hub.startServer("memory");
    const tools = hub.tools().map((t) => t.name);
    expect(tools).toContain("memory__create_entities");
    const pid = hub.servers()[0]!.pid!;
    await wentIdle(hub, "memory");
    expect(alive(pid)).toBe(false);
    expect(hub.tools().map((t) => t.name)).toEqual(tools);
    const created = await hub.callTool("memory__create_entities", {
      entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }],
    });
    expect(created.isError).not.toBe(true);
    expect(hub.servers()[0]).toMatchObject({ state: "ready", starts: 2, idleStops: 1 });
  });
});
