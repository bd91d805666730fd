import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster, type ClusterEvent } from "../../src/cluster/cluster.js";
import { parseConfig } from "../../src/config/index.js";
import type { McplexConfig } from "../../src/config/types.js";
import { eventually } from "../support/gateway.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

const SECRET = "membership-test-secret-0123456789abcdef";
const config = (servers: string): McplexConfig => parseConfig(servers, { source: "mcplex.yaml", env: {} });
const ONE = config("servers:\n  a:\n    command: node\n");
const TWO = config("servers:\n  a:\n    command: node\n  b:\n    command: node\n");

let redis: RedisProcess;
const clusters: Cluster[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.close()));
  await redis?.stop();
});

function replica(id: string, events: ClusterEvent[] = []): Cluster {
  const cluster = new Cluster({
    url: redis.url,
    secret: SECRET,
    id,
    heartbeatMs: 200,
    onEvent: (e) => events.push(e),
  });
  clusters.push(cluster);
  return cluster;
}

describe("cluster membership", () => {
  it("lists the replicas, and reports one whose config differs in /readyz, /metrics and the log", async () => {
    const events: ClusterEvent[] = [];
    const a = replica("a", events);
    const b = replica("b");
    const registry = new Registry();
    a.registerMetrics(registry);
    await a.start("http://127.0.0.1:1001", ONE);
    await b.start("http://127.0.0.1:1002", ONE);
    await eventually(async () => (a.members().length === 2 ? true : undefined));
    expect(a.health()).toMatchObject({ status: "ok", redis: "up", replica: "a" });
    expect(a.members().map((m) => m.advertise)).toEqual(["http://127.0.0.1:1001", "http://127.0.0.1:1002"]);

    b.setConfig(TWO);
    const health = await eventually(async () => {
      const h = a.health();
      return h.status === "degraded" ? h : undefined;
    });
    expect(health.members).toContainEqual(expect.objectContaining({ id: "b", sameConfig: false }));
    expect(String(health.warnings)).toMatch(/replicas b serve a different config/);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/mcplex_cluster_members\{config="different"\} 1/);
    expect(metrics).toMatch(/mcplex_cluster_replica_info\{replica="a",digest="[0-9a-f]{24}"\} 1/);
    await eventually(async () => (events.some((e) => e.type === "config-mismatch") ? true : undefined));
    // The digest is keyed: it says nothing of the config to whoever reads Redis.
    const digests = new Set((health.members as Array<{ digest: string }>).map((m) => m.digest));
    expect(digests.size).toBe(2);
  });

  it("drops a replica that left, at once, and one that died, when its entry expires", async () => {
    const c = replica("c");
    const d = replica("d");
    await c.start("http://127.0.0.1:1003", ONE);
    await d.start("http://127.0.0.1:1004", ONE);
    await eventually(async () => (c.members().some((m) => m.id === "d") ? true : undefined));
    await d.close();
    await eventually(async () => (c.members().some((m) => m.id === "d") ? undefined : true));
    // A replica that stops heartbeating without a word (its Redis connection cut, as in a crash).
    const g = replica("g");
    await g.start("http://127.0.0.1:1005", ONE);
    await eventually(async () => (c.members().some((m) => m.id === "g") ? true : undefined));
    g.redis.close();
    await eventually(async () => (c.members().some((m) => m.id === "g") ? undefined : true));
  });

  it("keeps the members it knew while a Redis that lost its data fills again", async () => {
    const own = await startRedis();
    const make = (id: string, heartbeatMs: number) =>
      new Cluster({ url: own.url, secret: SECRET, id, heartbeatMs });
    // e reads the list often; f comes back to it only at its own, slower heartbeat.
    const [e, f] = [make("e", 400), make("f", 1000)];
    clusters.push(e, f);
    try {
      await e.start("http://127.0.0.1:1008", ONE);
      await f.start("http://127.0.0.1:1009", ONE);
      await eventually(async () => (e.members().length === 2 ? true : undefined));
      await own.kill();
      await own.restart(); // empty: no replica is registered in it
      await eventually(async () => (e.health().redis === "up" ? true : undefined), { ms: 20_000 });
      // Every read of the list over the next heartbeats still has f: its sessions are not lost.
      const reads: string[][] = [];
      for (let i = 0; i < 60; i++) {
        reads.push(e.members().map((m) => m.id));
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(reads.filter((ids) => !ids.includes("f"))).toEqual([]);
    } finally {
      await Promise.all([e.close(), f.close()]);
      await own.stop();
    }
  });

  it("starts while Redis is down, says so, and joins when Redis comes", async () => {
    const late = await startRedis();
    await late.kill();
    const cluster = new Cluster({ url: late.url, secret: SECRET, id: "late", heartbeatMs: 200 });
    clusters.push(cluster);
    try {
      await cluster.start("http://127.0.0.1:1006", ONE);
      expect(cluster.health()).toMatchObject({ status: "degraded", redis: "down" });
      await late.restart();
      await eventually(async () => (cluster.health().redis === "up" ? true : undefined), { ms: 20_000 });
      // Registered in the new Redis: a replica that starts now sees it.
      const peer = new Cluster({ url: late.url, secret: SECRET, id: "late-peer", heartbeatMs: 200 });
      clusters.push(peer);
      await peer.start("http://127.0.0.1:1007", ONE);
      await eventually(async () => (peer.members().some((m) => m.id === "late") ? true : undefined));
      await peer.close();
      await cluster.close();
    } finally {
      await late.stop();
    }
  });

  it("mints session ids only its own cluster accepts, each naming its owner", () => {
    const a = replica("e");
    const other = new Cluster({ url: redis.url, secret: `${SECRET}-other`, id: "e" });
    const id = a.sessions.mint();
    expect(id.startsWith("e.")).toBe(true);
    expect(a.sessions.locate(id)).toEqual({ kind: "local" });
    expect(replica("f").sessions.locate(id)).toEqual({ kind: "remote", replica: "e" });
    expect(other.sessions.locate(id)).toEqual({ kind: "invalid" });
    expect(a.sessions.mint()).not.toBe(id);
  });
});
