import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryProofReplays, type ProofReplays } from "../../src/auth/dpop-replay.js";
import { RedisDpopReplays } from "../../src/cluster/redis-dpop-replay.js";
import { RedisLink } from "../../src/cluster/redis-link.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { issuesOf } from "../support/config-errors.js";
import { eventually } from "../support/gateway.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// Where DPoP proofs' jtis are remembered (ProofReplays): one contract for the memory store of a
// gateway alone and the Redis one of a cluster; what the Redis one does when Redis goes away;
// and the `auth.dpop` block that sets the window they are kept for.

let redis: RedisProcess;
const links: RedisLink[] = [];

beforeAll(async () => {
  redis = await startRedis();
}, 60_000);

afterAll(async () => {
  for (const link of links) link.close();
  await redis?.stop();
});

async function redisReplays(): Promise<RedisDpopReplays> {
  const link = new RedisLink(redis.url, () => {});
  links.push(link);
  await link.connect();
  return new RedisDpopReplays(link);
}

const stores: Array<[string, () => Promise<ProofReplays>]> = [
  ["MemoryProofReplays", async () => new MemoryProofReplays()],
  ["RedisDpopReplays", redisReplays],
];

describe.each(stores)("%s, as ProofReplays", (_name, make) => {
  it("grants a key once within its time, and again once that time is over", async () => {
    const store = await make();
    const key = `k-${Math.random()}`;
    expect(await store.claim(key, 200)).toBe(true);
    expect(await store.claim(key, 200)).toBe(false);
    expect(await store.claim(`${key}-other`, 200)).toBe(true);
    await eventually(async () => ((await store.claim(key, 200)) ? true : undefined), {
      what: "the key's time to end",
    });
  });

  it("grants one of many claims of the same key made at once", async () => {
    const store = await make();
    const key = `race-${Math.random()}`;
    const granted = await Promise.all(Array.from({ length: 20 }, () => store.claim(key, 60_000)));
    expect(granted.filter(Boolean)).toHaveLength(1);
  });
});

describe("RedisDpopReplays across replicas and through an outage", () => {
  it("refuses at one replica a key another claimed, and keeps its own claims while Redis is away", async () => {
    const [a, b] = [await redisReplays(), await redisReplays()];
    expect(await a.claim("shared", 60_000)).toBe(true);
    expect(await b.claim("shared", 60_000)).toBe(false);
    await redis.kill();
    try {
      // Its own claim stays refused; a new key is granted (each replica alone for the outage).
      expect(await a.claim("shared", 60_000)).toBe(false);
      expect(await a.claim("during-outage", 60_000)).toBe(true);
      expect(await a.claim("during-outage", 60_000)).toBe(false);
    } finally {
      await redis.restart();
    }
  }, 30_000);
});

describe("auth.dpop", () => {
  const base = "auth:\n  issuers: [http://127.0.0.1:1]\n  dpop:\n";
  it("reads required, nonce, algorithms and window", () => {
    const config = parseConfig(
      `${base}    required: true\n    nonce: true\n    algorithms: [ES256, EdDSA]\n    window: 90s\n`,
      {
        source: "mcplex.yaml",
        env: {},
      },
    );
    expect(config.auth?.dpop).toEqual({
      required: true,
      nonce: true,
      algorithms: ["ES256", "EdDSA"],
      window: 90_000,
    });
  });

  it("refuses symmetric algorithms, a window out of bounds and unknown keys, at their path", () => {
    const issues = issuesOf(`${base}    algorithms: [HS256, none]\n    window: 2h\n    replay: redis\n`);
    const paths = issues.map((issue) => issue.path);
    expect(paths).toEqual(
      expect.arrayContaining(["auth.dpop.algorithms", "auth.dpop.window", "auth.dpop.replay"]),
    );
    expect(issues.find((issue) => issue.path === "auth.dpop.algorithms")?.message).toMatch(
      /HS256, none not accepted/,
    );
  });
});
