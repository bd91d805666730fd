import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@redis/client";
import { afterAll, describe, expect, it } from "vitest";
import { startNginx } from "../support/nginx.js";
import { startRedis } from "../support/redis.js";

describe("the cluster tests' real parts", () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

  it("starts a redis-server that keeps values, and restarts it on the same port after a SIGKILL", async () => {
    const redis = await startRedis();
    const client = createClient({ url: redis.url, socket: { reconnectStrategy: false } });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.set("k", "v");
      expect(await client.get("k")).toBe("v");
      await redis.kill();
      await expect(client.get("k")).rejects.toThrow();
      await redis.restart();
      const again = createClient({ url: redis.url });
      await again.connect();
      // Nothing persisted: a restarted Redis is an empty one.
      expect(await again.get("k")).toBeNull();
      again.destroy();
    } finally {
      client.destroy();
      await redis.stop();
    }
  });

  it("puts nginx round-robin in front of two HTTP servers", async () => {
    const ports: number[] = [];
    for (const name of ["a", "b"]) {
      const server = createServer((_req, res) => res.end(name));
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      ports.push((server.address() as AddressInfo).port);
    }
    const nginx = await startNginx({ upstreams: ports.map((p) => `127.0.0.1:${p}`) });
    try {
      const seen: string[] = [];
      for (let i = 0; i < 4; i++) seen.push(await (await fetch(`${nginx.origin}/x`)).text());
      expect(new Set(seen)).toEqual(new Set(["a", "b"]));
      expect(seen[0]).not.toBe(seen[1]);
    } finally {
      await nginx.stop();
    }
  });
});
