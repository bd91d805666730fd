import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../../src/cluster/cluster.js";
import { parseConfig } from "../../src/config/index.js";
import { eventually, type InProcessGateway, startGateway } from "../support/gateway.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// The dashboard of one replica of several, in Debian's Chromium: the cluster's members, which
// of them serves another config, and Redis's state.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SECRET = "dashboard-cluster-secret-0123456789abcde";

describe("the dashboard of a replica", { timeout: 60_000 }, () => {
  let redis: RedisProcess;
  let gw: InProcessGateway;
  let browser: Browser;
  let page: Page;
  const clusters: Cluster[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    [redis, browser] = await Promise.all([
      startRedis(),
      chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
    ]);
    const config = parseConfig("servers: {}\n", { source: "mcplex.yaml", env: {} });
    const self = new Cluster({ url: redis.url, secret: SECRET, id: "web-1", heartbeatMs: 200 });
    const other = new Cluster({ url: redis.url, secret: SECRET, id: "web-2", heartbeatMs: 200 });
    clusters.push(self, other);
    gw = await startGateway(
      config,
      { cluster: self },
      { replica: { id: self.replica, stateKey: self.stateKey } },
    );
    await self.start(gw.origin, config);
    await other.start(
      "http://127.0.0.1:1",
      parseConfig("servers: {}\nprofiles: { p: {} }\n", { source: "x", env: {} }),
    );
    // Both seen, and the difference noticed, before the page loads its state.
    await eventually(async () => {
      const health = self.health();
      return (health.members as unknown[]).length === 2 && health.status === "degraded" ? true : undefined;
    });
    page = await browser.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${gw.origin}/dashboard`);
    await page.locator('#cluster tr[data-replica="web-2"]').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    for (const cluster of clusters) await cluster.close();
    await redis?.stop();
  });

  it("lists the members, marks itself, and flags the one with another config", async () => {
    expect(await page.locator("#cluster-section").isVisible()).toBe(true);
    expect(await page.locator('#cluster tr[data-replica="web-1"] td').first().textContent()).toBe(
      "web-1 (this one)",
    );
    expect(await page.locator('#cluster tr[data-replica="web-2"] td').nth(1).textContent()).toBe(
      "http://127.0.0.1:1",
    );
    expect(await page.locator('#cluster tr[data-replica="web-2"] .badge').textContent()).toBe(
      "different config",
    );
    expect(await page.locator("#cluster-status").textContent()).toBe("degraded");
    expect(await page.locator("#cluster-redis").textContent()).toBe("Redis up");
    expect(await page.locator("#cluster-warnings").textContent()).toMatch(
      /replicas web-2 serve a different config/,
    );
    expect(errors).toEqual([]);
  });
});
