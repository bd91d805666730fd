import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { parseConfig } from "../../src/config/index.js";
import { DEFAULT_PORT } from "../../src/fronts/http-guard.js";
import { runCli } from "../support/cli.js";
import { serveHttp } from "../support/gateway.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// deploy/ cannot run here (no Docker, no Kubernetes), so what it says is checked against the
// CLI: the files parse, the configs are valid, the command lines are the CLI's own, and the
// ports and probe paths are the ones it serves.

const read = (path: string) => readFileSync(join("deploy", path), "utf8");
const yamlDocs = (path: string) => {
  const docs = parseAllDocuments(read(path));
  for (const doc of docs) expect(doc.errors, path).toEqual([]);
  return docs.map((doc) => doc.toJS() as Record<string, any>);
};
const env = {
  MCPLEX_TOKEN: "a-token-of-the-deploy-test",
  MCPLEX_CLUSTER_SECRET: "a-cluster-secret-of-the-deploy-test-0123",
  REDIS_URL: "redis://redis:6379",
  ADVERTISE: "http://mcplex-1:8420",
  REPLICA_ID: "mcplex-1",
  POD_IP: "10.0.0.5",
  POD_NAME: "mcplex-5d8f9-x2x7q",
};

const dockerfile = read("Dockerfile");
const dockerCmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
const compose = yamlDocs("compose.yaml")[0]!;
const kube = yamlDocs("kubernetes/mcplex.yaml");
const kind = (k: string, name: string) => kube.find((d) => d.kind === k && d.metadata.name === name)!;
const container = kind("Deployment", "mcplex").spec.template.spec.containers[0];
const commandLines: Record<string, string[]> = {
  Dockerfile: dockerCmd,
  "compose.yaml": compose["x-replica"].command,
  "kubernetes/mcplex.yaml": container.args,
};

describe("deploy/", () => {
  it("parses: the Dockerfile's command, the compose file and every Kubernetes document", () => {
    expect(compose.services).toHaveProperty("redis");
    expect(Object.keys(compose.services).filter((s) => s.startsWith("mcplex-"))).toHaveLength(3);
    expect(kube.map((d) => d.kind).sort()).toEqual(
      ["ConfigMap", "Deployment", "Deployment", "Secret", "Service", "Service"].sort(),
    );
  });

  it("holds configs mcplex accepts, each with a complete cluster: block", () => {
    const configs = {
      "mcplex.yaml": read("mcplex.yaml"),
      "kubernetes ConfigMap": kind("ConfigMap", "mcplex-config").data["mcplex.yaml"] as string,
    };
    for (const [where, text] of Object.entries(configs)) {
      const config = parseConfig(text, { source: where, env });
      expect(config.cluster, where).toEqual({
        url: expect.stringMatching(/^redis:\/\//),
        advertise: expect.stringMatching(/^http:\/\/.+:8420$/),
        secret: env.MCPLEX_CLUSTER_SECRET,
        id: expect.any(String),
      });
      expect(config.tokens.length, where).toBeGreaterThan(0);
    }
  });

  it("runs mcplex serve with flags the CLI has, on the port every file names", async () => {
    const help = (await runCli(["--help"])).stdout + (await runCli(["--help"])).stderr;
    for (const [where, args] of Object.entries(commandLines)) {
      expect(args[0], where).toBe("serve");
      for (const flag of args.filter((a) => a.startsWith("--")))
        expect(help, `${where} ${flag}`).toContain(flag);
      expect(args[args.indexOf("--port") + 1], where).toBe(String(DEFAULT_PORT));
    }
    expect(dockerfile).toContain(`EXPOSE ${DEFAULT_PORT}`);
    expect(container.ports[0].containerPort).toBe(DEFAULT_PORT);
    expect(read("nginx.conf").match(/server mcplex-\d:(\d+);/g)).toEqual([
      `server mcplex-1:${DEFAULT_PORT};`,
      `server mcplex-2:${DEFAULT_PORT};`,
      `server mcplex-3:${DEFAULT_PORT};`,
    ]);
    expect(container.livenessProbe.httpGet.path).toBe("/healthz");
    expect(container.readinessProbe.exec.command.join(" ")).toContain("/readyz");
  });

  describe("the command line, run", () => {
    let redis: RedisProcess;
    let dir: string;
    beforeAll(async () => {
      redis = await startRedis();
      dir = await mkdtemp(join(tmpdir(), "mcplex-deploy-"));
    });
    afterAll(async () => {
      await redis?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it("serves /healthz and /readyz (with the operator token) as the probes ask", async () => {
      // The deploy config, with a local Redis and no server to fetch from the network.
      const config = join(dir, "mcplex.yaml");
      await writeFile(config, read("mcplex.yaml").replace(/servers:\n(?: {2}.*\n)+/, "servers: {}\n"));
      const args = [...dockerCmd.slice(2)];
      args.splice(args.indexOf("--port"), 2);
      args[args.indexOf("--host") + 1] = "127.0.0.1";
      args[args.indexOf("--config") + 1] = config;
      const served = await serveHttp(args, {
        env: { ...env, REDIS_URL: redis.url, ADVERTISE: "http://127.0.0.1:1" },
      });
      try {
        expect((await fetch(`${served.origin}/healthz`)).status).toBe(200);
        const ready = await fetch(`${served.origin}/readyz`, {
          headers: { authorization: `Bearer ${env.MCPLEX_TOKEN}` },
        });
        expect(ready.status).toBe(200);
        expect(((await ready.json()) as { cluster: { replica: string } }).cluster.replica).toBe("mcplex-1");
      } finally {
        await served.stop();
      }
    });
  });
});
