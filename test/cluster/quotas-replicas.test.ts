import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectHttp, eventually, type ServeProcess, serveHttp } from "../support/gateway.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// `quotas:` shared by two `mcplex serve --http --cluster` replicas through a real Redis, called
// with the SDK client: a caller's calls count on whichever replica takes them, and the refusal
// (a JSON-RPC error) says when to retry, in its message and in `data.retryAt`.

const SECRET = "quota-replicas-test-secret-0123456789abcd";
const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdefgh";
let dir: string;
let redis: RedisProcess;
const replicas: ServeProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-quota-replicas-"));
  await writeFile(join(dir, "notes.md"), "hello\n");
  redis = await startRedis();
  const config = `serve:
  readyWait: 1m
servers:
  ws:
    type: workspace
    root: ${JSON.stringify(dir)}
tokens:
  - { token: ${ALICE} }
  - { token: ${BOB} }
quotas:
  - name: reads
    tools: ["ws__read_file"]
    calls: 2
    window: 1h
`;
  for (const name of ["a", "b"]) {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, config);
    replicas.push(
      await serveHttp(["--config", file, "--cluster", redis.url], { env: { MCPLEX_CLUSTER_SECRET: SECRET } }),
    );
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function read(url: string, token: string) {
  const client: Client = await connectHttp(url, { token, name: "quota-test" });
  try {
    return await client.callTool({ name: "ws__read_file", arguments: { path: "notes.md" } });
  } finally {
    await client.close();
  }
}
const text = (result: { content?: unknown }) =>
  ((result.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? "").join("");

describe("quotas across replicas", () => {
  it("counts a caller's calls on every replica, refuses the one over with when to retry, and counts it", async () => {
    const [a, b] = replicas as [ServeProcess, ServeProcess];
    // Both replicas reach Redis before the first call: the counts are shared from the start.
    for (const replica of [a, b])
      await eventually(async () => {
        const answer = await fetch(`${replica.origin}/readyz`, {
          headers: { authorization: `Bearer ${ALICE}` },
        });
        const ready = (await answer.json()) as {
          cluster?: { members: unknown[] };
        };
        return (ready.cluster?.members.length ?? 0) === 2 ? true : undefined;
      });
    expect(text(await read(a.url, ALICE))).toContain("hello");
    expect(text(await read(b.url, ALICE))).toContain("hello");
    const before = Date.now();
    const refused = (await read(a.url, ALICE).catch((error: unknown) => error)) as {
      message: string;
      data: { code: string; retryAt: number };
    };
    expect(refused.message).toMatch(
      /quota "reads" allows 2 calls per 1h per caller; try again in \d+ s \(at /,
    );
    const meta = refused.data;
    expect(meta.code).toBe("QUOTA_EXCEEDED");
    // The next window starts on the hour (Redis's clock): within the hour to come.
    expect(meta.retryAt).toBeGreaterThan(before);
    expect(meta.retryAt % 3_600_000).toBe(0);
    expect(meta.retryAt - before).toBeLessThanOrEqual(3_600_000 + 5_000);
    // Another caller has a count of its own, on either replica.
    expect(text(await read(b.url, BOB))).toContain("hello");
    const metrics = await (
      await fetch(`${a.origin}/metrics`, { headers: { authorization: `Bearer ${ALICE}` } })
    ).text();
    expect(metrics).toMatch(/mcplex_decisions_total\{by="quota",name="reads",effect="refused"\} 1/);
  });
});

describe("RedisQuotaStore", () => {
  it("shares running places between stores, and counts locally while Redis is down", async () => {
    const { RedisLink } = await import("../../src/cluster/redis-link.js");
    const { RedisQuotaStore } = await import("../../src/cluster/redis-quota-store.js");
    const own = await startRedis();
    const links = [new RedisLink(own.url, () => {}), new RedisLink(own.url, () => {})];
    try {
      await Promise.all(links.map((link) => link.connect()));
      const [one, two] = links.map((link) => new RedisQuotaStore(link)) as [
        InstanceType<typeof RedisQuotaStore>,
        InstanceType<typeof RedisQuotaStore>,
      ];
      expect(await one.enter("k", "call-1", 1)).toBe(true);
      expect(await two.enter("k", "call-2", 1)).toBe(false);
      one.leave("k", "call-1");
      await expect.poll(() => two.enter("k", "call-3", 1)).toBe(true);
      expect(await one.take("w", 1, 60_000)).toEqual({ ok: true });
      expect(await two.take("w", 1, 60_000)).toMatchObject({ ok: false });
      // Redis gone: each store counts on its own rather than refusing every call.
      await own.kill();
      await expect.poll(() => links[0]!.up).toBe(false);
      expect(await one.take("w", 1, 60_000)).toEqual({ ok: true });
      expect(await one.take("w", 1, 60_000)).toMatchObject({ ok: false });
      expect(await one.enter("k", "call-4", 1)).toBe(true);
      one.leave("k", "call-4");
      expect(await one.enter("k", "call-5", 1)).toBe(true);
    } finally {
      for (const link of links) link.close();
      await own.stop();
    }
  });
});
