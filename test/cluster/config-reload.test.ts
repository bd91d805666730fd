import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type ServeProcess, serveHttp } from "../support/gateway.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// Two `mcplex serve --cluster` replicas, each with its own copy of one config: saving a changed
// copy is announced at once, and both replicas report the difference.

const SECRET = "config-reload-test-secret-0123456789abcd";
let dir: string;
let redis: RedisProcess;
const replicas: ServeProcess[] = [];

// A profile is what a reload applies without a restart here (there are no servers to change).
const config = (profiles: string) => `serve:\n  readyWait: 1m\nservers: {}\n${profiles}`;
const CHANGED = "profiles:\n  readers:\n    tools: { allow: ['*__read*'] }\n";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-cluster-reload-"));
  redis = await startRedis();
  for (const name of ["a", "b"]) {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, config(""));
    replicas.push(
      await serveHttp(["--config", file, "--cluster", redis.url], {
        env: { MCPLEX_CLUSTER_SECRET: SECRET },
      }),
    );
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

interface Cluster {
  status: string;
  members: Array<{ id: string; sameConfig?: boolean }>;
  warnings?: string[];
}
const clusterOf = async (replica: ServeProcess) =>
  ((await (await fetch(`${replica.origin}/readyz`)).json()) as { cluster: Cluster }).cluster;

describe("a replica whose config file changes", () => {
  it("announces its new digest, and every replica reports the difference until they agree again", async () => {
    const [a, b] = replicas as [ServeProcess, ServeProcess];
    await eventually(async () => ((await clusterOf(a)).members.length === 2 ? true : undefined));
    expect((await clusterOf(a)).status).toBe("ok");

    await writeFile(join(dir, "b.yaml"), config(CHANGED));
    for (const replica of [a, b]) {
      const seen = await eventually(async () => {
        const cluster = await clusterOf(replica);
        return cluster.status === "degraded" ? cluster : undefined;
      });
      expect(seen.members.filter((m) => m.sameConfig === false)).toHaveLength(1);
      expect(String(seen.warnings)).toMatch(/serve a different config/);
    }
    // The log line comes with the refresh that found the difference, which /readyz may show first.
    await eventually(
      async () => (/warning: replicas \S+ serve a different config/.test(a.stderr()) ? true : undefined),
      {
        what: "the warning in the log",
      },
    );

    await writeFile(join(dir, "a.yaml"), config(CHANGED));
    await eventually(async () => ((await clusterOf(a)).status === "ok" ? true : undefined));
  });
});
