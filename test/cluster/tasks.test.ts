import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TASKS_EXTENSION } from "../../src/protocol/tasks.js";
import {
  COMMANDS,
  eventually,
  postRev2026,
  rev2026Headers,
  rev2026Request,
  type ServeProcess,
  serveHttp,
} from "../support/gateway.js";
import { type NginxProcess, startNginx } from "../support/nginx.js";
import { type RedisProcess, startRedis } from "../support/redis.js";
import { postStream } from "../support/sse-stream.js";

// Tasks across three `mcplex serve` replicas (each its own hub and its own stdio child of the
// tasks fixture), one Redis, real nginx round-robin in front. A task lives in the child of the
// replica its tools/call reached; its handle names that replica, so a tasks/get, tasks/update,
// tasks/cancel or listen that lands on another replica is forwarded there.

const SECRET = "cluster-test-secret-0123456789abcdefghij";
const IDS = ["r1", "r2", "r3"] as const;
const TOKEN = "cluster-task-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

let dir: string;
let redis: RedisProcess;
let nginx: NginxProcess;
const replicas = new Map<string, ServeProcess>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-cluster-tasks-"));
  redis = await startRedis();
  const config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "serve:",
      "  readyWait: 1m",
      "servers:",
      "  jobs:",
      `    command: ${JSON.stringify(COMMANDS.tasks.command)}`,
      `    args: ${JSON.stringify(COMMANDS.tasks.args)}`,
      "tokens:",
      // An operator's token: the test reads /readyz and /metrics with it too.
      `  - token: ${TOKEN}`,
      "    operator: true",
      "cluster:",
      `  url: ${redis.url}`,
      "  id: ${REPLICA_ID}",
      "",
    ].join("\n"),
  );
  const started = await Promise.all(
    IDS.map((id) =>
      serveHttp(["--config", config], { env: { REPLICA_ID: id, MCPLEX_CLUSTER_SECRET: SECRET } }),
    ),
  );
  IDS.forEach((id, i) => {
    replicas.set(id, started[i]!);
  });
  nginx = await startNginx({ upstreams: started.map((r) => r.origin.replace("http://", "")) });
  for (const replica of started) {
    await eventually(
      async () => {
        const readyz = (await (await fetch(`${replica.origin}/readyz`, { headers: AUTH })).json()) as {
          cluster: { members: unknown[] };
        };
        return readyz.cluster.members.length === 3 ? true : undefined;
      },
      { what: "three members" },
    );
  }
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all([...replicas.values()].map((r) => r.stop()));
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

let ids = 0;

/** The headers of a 2026 request of the test's token, Mcp-Name mirroring a task's handle. */
function headers(message: { method: string; params: Record<string, unknown> }): Record<string, string> {
  const h: Record<string, string> = { ...rev2026Headers(message), authorization: `Bearer ${TOKEN}` };
  if (typeof message.params.taskId === "string") h["mcp-name"] = message.params.taskId;
  return h;
}

/** A 2026 request through `url` (nginx, or one replica's /mcp). */
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const message = rev2026Request(++ids, method, params, WITH_TASKS);
  return (await postRev2026(url, message, headers(message))).json as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
}

/** The replica a handle names (its readable part). */
function ownerOf(handle: string): string {
  const named = JSON.parse(Buffer.from(handle.split(".")[1]!, "base64url").toString()) as string[];
  return named[2]!;
}

/** Requests about tasks the replicas forwarded to another one, all together. */
async function forwardedTasks(): Promise<number> {
  let total = 0;
  for (const replica of replicas.values()) {
    const text = await (await fetch(`${replica.origin}/metrics`, { headers: AUTH })).text();
    for (const match of text.matchAll(/^mcplex_cluster_forwarded_total\{([^}]*)\} (\d+)/gm)) {
      if (/kind="task"/.test(match[1]!) && /outcome="relayed"/.test(match[1]!)) total += Number(match[2]);
    }
  }
  return total;
}

/** The replicas other than `owner`, as URLs of their /mcp. */
const others = (owner: string) => IDS.filter((id) => id !== owner).map((id) => replicas.get(id)!.url);

describe("tasks across three replicas behind nginx round-robin", () => {
  it("a task created on one replica is polled, updated and cancelled through the others", async () => {
    const created = await rpc(nginx.url, "tools/call", {
      name: "jobs__confirm_delete",
      arguments: { filename: "c.txt" },
    });
    const handle = created.result?.taskId as string;
    const owner = ownerOf(handle);
    expect(IDS).toContain(owner);
    const [second, third] = others(owner) as [string, string];
    const before = await forwardedTasks();

    // Polled through both other replicas until it asks; each answer is the owner's.
    const asked = await eventually(async () => {
      const got = await rpc(second, "tasks/get", { taskId: handle });
      expect(got.result?.taskId).toBe(handle);
      return got.result?.status === "input_required" ? got.result : undefined;
    });
    expect((await rpc(third, "tasks/get", { taskId: handle })).result?.status).toBe("input_required");
    const [key] = Object.keys(asked.inputRequests as object);
    // Answered through a third replica, and the answer reaches the task in the owner's child.
    const ack = await rpc(third, "tasks/update", {
      taskId: handle,
      inputResponses: { [key!]: { action: "accept", content: { confirm: true } } },
    });
    expect(ack.result).toMatchObject({ resultType: "complete" });
    const done = await eventually(async () => {
      const got = await rpc(nginx.url, "tasks/get", { taskId: handle });
      return got.result?.status === "completed" ? got.result : undefined;
    });
    expect(done.result).toEqual({ content: [{ type: "text", text: "deleted c.txt" }] });
    expect(await forwardedTasks()).toBeGreaterThanOrEqual(before + 3);

    // Cancelled through another replica than the one that created it.
    const running = (
      await rpc(nginx.url, "tools/call", { name: "jobs__slow_compute", arguments: { seconds: 60 } })
    ).result?.taskId as string;
    const [elsewhere] = others(ownerOf(running));
    expect((await rpc(elsewhere!, "tasks/cancel", { taskId: running })).result).toMatchObject({
      resultType: "complete",
    });
    expect((await rpc(nginx.url, "tasks/get", { taskId: running })).result?.status).toBe("cancelled");
  });

  it("a listen that lands on another replica hears the task's notifications from its owner", async () => {
    const handle = (
      await rpc(nginx.url, "tools/call", { name: "jobs__slow_compute", arguments: { seconds: 60 } })
    ).result?.taskId as string;
    const [elsewhere] = others(ownerOf(handle));
    const message = rev2026Request(
      ++ids,
      "subscriptions/listen",
      { notifications: { taskIds: [handle] } },
      WITH_TASKS,
    );
    const stream = await postStream(elsewhere!, message, headers(message));
    try {
      const ack = await stream.next();
      expect(ack.params).toMatchObject({ notifications: { taskIds: [handle] } });
      await rpc(nginx.url, "tasks/cancel", { taskId: handle });
      for (;;) {
        const told = await stream.next();
        const params = told.params as { taskId?: string; status?: string };
        expect(params.taskId).toBe(handle);
        if (params.status === "cancelled") break;
      }
    } finally {
      stream.close();
    }
  });

  it("a forged handle naming another replica is refused where it lands, never forwarded", async () => {
    const handle = (
      await rpc(nginx.url, "tools/call", { name: "jobs__slow_compute", arguments: { seconds: 60 } })
    ).result?.taskId as string;
    const [prefix, payload, mac] = handle.split(".") as [string, string, string];
    const named = JSON.parse(Buffer.from(payload, "base64url").toString()) as string[];
    const elsewhere = IDS.find((id) => id !== named[2])!;
    // The same task said to live on another replica, under the original MAC.
    const moved = Buffer.from(JSON.stringify([named[0], named[1], elsewhere])).toString("base64url");
    const forged = `${prefix}.${moved}.${mac}`;
    const before = await forwardedTasks();
    for (const url of [...replicas.values()].map((r) => r.url)) {
      expect((await rpc(url, "tasks/get", { taskId: forged })).error?.code).toBe(-32602);
    }
    expect(await forwardedTasks()).toBe(before);
    await rpc(nginx.url, "tasks/cancel", { taskId: handle });
  });
});
