import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Cluster } from "../../src/cluster/cluster.js";
import { parseConfig } from "../../src/config/index.js";
import {
  eventually,
  type InProcessGateway,
  postRev2026,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// Three in-process replicas (each its own hub and gateway) sharing one Redis: a rate limit per
// token holds for the cluster, not per replica; with Redis away, each replica limits alone.

const SECRET = "rate-limit-test-secret-0123456789abcdef";
// One request every 10 s after the burst: refill during a test is at most a request or two.
const RATE = { perSecond: 0.1, burst: 30 };
const TOKEN = "a-token-of-the-rate-limit-test";
/** Spent on the 2024-11-05 transport's endpoint only: a bucket of its own. */
const SSE_TOKEN = "another-token-of-the-rate-limit-test";
/** Spent on WebSocket upgrades only. */
const WS_TOKEN = "a-websocket-token-of-the-rate-limit-test";

let redis: RedisProcess;
const replicas: Array<{ gateway: InProcessGateway; cluster: Cluster }> = [];

beforeAll(async () => {
  redis = await startRedis();
  const tokens = [TOKEN, SSE_TOKEN, WS_TOKEN].map((t) => `  - token: ${t}\n`).join("");
  const config = parseConfig(`servers: {}\ntokens:\n${tokens}`, {
    source: "mcplex.yaml",
    env: {},
  });
  for (const id of ["a", "b", "c"]) {
    const cluster = new Cluster({ url: redis.url, secret: SECRET, id });
    const gateway = await startGateway(
      config,
      { rateLimit: RATE, cluster },
      { replica: { id, stateKey: cluster.stateKey } },
    );
    await cluster.start(gateway.origin, config);
    replicas.push({ gateway, cluster });
  }
}, 60_000);

afterAll(async () => {
  for (const { gateway, cluster } of replicas) {
    await gateway.stop();
    await cluster.close();
  }
  await redis?.stop();
});

/** Sends `count` requests to each of `targets` at once; how many were let in, and how many refused 429. */
async function burst(targets: InProcessGateway[], count: number): Promise<{ ok: number; refused: number }> {
  const answers = await Promise.all(
    targets.flatMap((target) =>
      Array.from({ length: count }, (_, i) =>
        postRev2026(target.url, rev2026Request(i, "tools/list"), { authorization: `Bearer ${TOKEN}` }),
      ),
    ),
  );
  const ok = answers.filter((a) => a.status === 200).length;
  const refused = answers.filter((a) => a.status === 429).length;
  expect(ok + refused).toBe(answers.length);
  return { ok, refused };
}

describe("rate limits per token across replicas", () => {
  it("admit the configured burst once for the whole cluster, within 10%", async () => {
    const { ok } = await burst(
      replicas.map((r) => r.gateway),
      30,
    );
    expect(ok).toBeGreaterThanOrEqual(RATE.burst);
    expect(ok).toBeLessThanOrEqual(RATE.burst * 1.1);
  });

  it("hold on the 2024-11-05 transport's /messages too", async () => {
    const answers = await Promise.all(
      replicas.flatMap(({ gateway }) =>
        Array.from({ length: 30 }, (_, i) =>
          fetch(new URL("/messages?sessionId=none", gateway.origin), {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${SSE_TOKEN}` },
            body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" }),
          }),
        ),
      ),
    );
    // Admitted ones reach the session lookup (no such session: 404); the rest are refused 429.
    const statuses = answers.map((a) => a.status);
    const admitted = statuses.filter((s) => s === 404).length;
    expect(admitted + statuses.filter((s) => s === 429).length).toBe(answers.length);
    expect(admitted).toBeGreaterThanOrEqual(RATE.burst);
    expect(admitted).toBeLessThanOrEqual(RATE.burst * 1.1);
  });

  it("hold on /ws upgrades too, admitted like every other entry", async () => {
    const upgrade = (gateway: InProcessGateway) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(gateway.wsUrl, "mcp", {
          headers: { authorization: `Bearer ${WS_TOKEN}` },
        });
        socket.once("open", () => {
          socket.close();
          resolve(101);
        });
        socket.once("unexpected-response", (_req, res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        socket.once("error", () => resolve(0));
      });
    const statuses = await Promise.all(
      replicas.flatMap(({ gateway }) => Array.from({ length: 30 }, () => upgrade(gateway))),
    );
    const opened = statuses.filter((s) => s === 101).length;
    expect(opened + statuses.filter((s) => s === 429).length).toBe(statuses.length);
    expect(opened).toBeGreaterThanOrEqual(RATE.burst);
    expect(opened).toBeLessThanOrEqual(RATE.burst * 1.1);
  });

  it("fall back to each replica's own limit while Redis is down, and share again when it returns", async () => {
    await redis.kill();
    const [a, b] = replicas;
    await eventually(async () => (a!.cluster.health().redis === "down" ? true : undefined));
    expect(String(a!.cluster.health().warnings)).toMatch(/rate limits hold per replica/);
    // Alone, each replica admits its own burst: the shared one is not there to spend.
    const alone = await burst([a!.gateway], 40);
    expect(alone.ok).toBeGreaterThanOrEqual(RATE.burst);
    expect(alone.ok).toBeLessThanOrEqual(RATE.burst * 1.1);

    await redis.restart();
    for (const r of replicas)
      await eventually(async () => (r.cluster.health().redis === "up" ? true : undefined));
    // A new Redis holds a full bucket, shared by the replicas again.
    const shared = await burst([a!.gateway, b!.gateway], 30);
    expect(shared.ok).toBeGreaterThanOrEqual(RATE.burst);
    expect(shared.ok).toBeLessThanOrEqual(RATE.burst * 1.1);
  });
});
