import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { runCli } from "../support/cli.js";
import { issuesOf } from "../support/config-errors.js";
import { postRev2026, rev2026Request, serveHttp } from "../support/gateway.js";

const SECRET = "a-cluster-secret-of-at-least-32-chars!";

describe("the cluster: block", () => {
  it("reads url, advertise, secret and id, and redacts the secret and the URL's password", () => {
    const config = parseConfig(
      [
        "servers: {}",
        "cluster:",
        "  url: redis://:hunter2-password@redis:6379",
        "  advertise: http://10.0.0.5:8420/",
        "  secret: ${CLUSTER_SECRET}",
        "  id: web-1",
      ].join("\n"),
      { source: "mcplex.yaml", env: { CLUSTER_SECRET: SECRET } },
    );
    expect(config.cluster).toEqual({
      url: "redis://:hunter2-password@redis:6379",
      advertise: "http://10.0.0.5:8420",
      secret: SECRET,
      id: "web-1",
    });
    expect(config.secrets).toEqual(expect.arrayContaining([SECRET, "hunter2-password"]));
  });

  it("names the exact path of each mistake, with what to write instead", () => {
    const issues = issuesOf(
      [
        "servers: {}",
        "cluster:",
        "  url: http://redis:6379",
        "  advertise: http://0.0.0.0:8420",
        "  secret: short",
        "  id: 'has space'",
        "  ttl: 3",
      ].join("\n"),
    );
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(byPath["cluster.url"]).toMatch(/Redis URL such as "redis:\/\/redis:6379"/);
    expect(byPath["cluster.advertise"]).toMatch(/0\.0\.0\.0/);
    expect(byPath["cluster.secret"]).toMatch(/at least 32 characters.*openssl rand/);
    expect(byPath["cluster.id"]).toMatch(/letters, digits/);
    expect(byPath["cluster.ttl"]).toMatch(/unknown key "ttl"/);
    expect(JSON.stringify(issues)).not.toContain("short");
  });

  it("refuses an advertise address with a path", () => {
    const issues = issuesOf("servers: {}\ncluster:\n  advertise: http://10.0.0.5:8420/mcp\n");
    expect(issues).toEqual([
      expect.objectContaining({
        path: "cluster.advertise",
        message: expect.stringMatching(/without a path/),
      }),
    ]);
  });
});

describe("mcplex serve --cluster", () => {
  let dir: string;
  let config: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-cluster-cli-"));
    config = join(dir, "mcplex.yaml");
    await writeFile(config, "servers: {}\n");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("refuses a URL that is not Redis's", async () => {
    const out = await runCli(["serve", "--config", config, "--port", "0", "--cluster", "http://redis:6379"]);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/--cluster must be a Redis URL/);
  });

  it("says where the cluster secret goes when there is none", async () => {
    const out = await runCli(
      ["serve", "--config", config, "--port", "0", "--cluster", "redis://127.0.0.1:1"],
      {
        env: { MCPLEX_CLUSTER_SECRET: "" },
      },
    );
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/cluster\.secret/);
    expect(out.stderr).toMatch(/MCPLEX_CLUSTER_SECRET/);
  });

  it("asks for cluster.advertise on a wildcard bind, before listening", async () => {
    const out = await runCli(
      [
        "serve",
        "--config",
        config,
        "--host",
        "0.0.0.0",
        "--port",
        "0",
        "--token",
        "a-token-of-sixteen-chars",
        "--cluster",
        "redis://127.0.0.1:1",
      ],
      { env: { MCPLEX_CLUSTER_SECRET: "a-cluster-secret-of-at-least-32-chars!" } },
    );
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/cluster\.advertise is required: this replica listens on 0\.0\.0\.0/);
    expect(out.stderr).toMatch(/hint: set cluster\.advertise/);
  });

  it("is for --http only", async () => {
    const out = await runCli(["serve", "--stdio", "--config", config, "--cluster", "redis://127.0.0.1:1"]);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/cluster mode .* is for --http/);
  });
});

describe("mcplex serve --rate-limit", () => {
  it("admits the burst, then answers 429 with Retry-After", async () => {
    const served = await serveHttp(["--rate-limit", "0.1:2"]);
    try {
      const statuses: number[] = [];
      let retryAfter: unknown;
      for (let i = 0; i < 3; i++) {
        const answer = await postRev2026(served.url, rev2026Request(i, "tools/list"));
        statuses.push(answer.status);
        retryAfter ??= answer.headers["retry-after"];
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    } finally {
      await served.stop();
    }
  });

  it("refuses a rate that is not requests per second with an optional burst", async () => {
    const out = await runCli(["serve", "--port", "0", "--rate-limit", "fast"]);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(
      /--rate-limit must be requests per second with an optional burst, such as 20 or 20:40/,
    );
  });
});
