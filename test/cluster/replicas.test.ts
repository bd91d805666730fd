import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replicaCredential } from "../../src/cluster/replica-credential.js";
import { deriveKey } from "../../src/cluster/signed-ids.js";
import { type HttpFixture, startHttpFixture } from "../fixtures/servers/http-fixture-server.js";
import {
  COMMANDS,
  eventually,
  postRev2026,
  rawHttp,
  resultText,
  rev2026Request,
  type ServeProcess,
  serveHttp,
} from "../support/gateway.js";
import { type NginxProcess, startNginx } from "../support/nginx.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// Three `mcplex serve` replicas (each its own hub and its own stdio child), one Redis, real
// nginx round-robin in front: any replica answers any request, whatever the client's revision.

const SECRET = "cluster-test-secret-0123456789abcdefghij";
const IDS = ["r1", "r2", "r3"] as const;

let dir: string;
let redis: RedisProcess;
let fixture: HttpFixture;
let nginx: NginxProcess;
const replicas = new Map<string, ServeProcess>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-cluster-"));
  [redis, fixture] = await Promise.all([startRedis(), startHttpFixture()]);
  const config = join(dir, "mcplex.yaml");
  // One file for every replica, as a rollout ships it: the replica id comes from the environment.
  await writeFile(
    config,
    [
      "serve:",
      "  readyWait: 1m",
      "servers:",
      "  fx:",
      `    url: ${fixture.url}`,
      "  legacy:",
      `    command: ${JSON.stringify(COMMANDS.legacyFixture.command)}`,
      `    args: ${JSON.stringify(COMMANDS.legacyFixture.args)}`,
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
  // Every replica sees the other two before the tests send anything.
  for (const replica of started) {
    await eventually(async () => ((await readyz(replica)).cluster.members.length === 3 ? true : undefined), {
      what: "three members",
    });
  }
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all([...replicas.values()].map((r) => r.stop()));
  await fixture?.close();
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

interface Readyz {
  status: string;
  cluster: {
    status: string;
    replica: string;
    redis: string;
    members: Array<{ id: string }>;
    warnings?: string[];
  };
}

async function readyz(replica: ServeProcess): Promise<Readyz> {
  return (await fetch(`${replica.origin}/readyz`)).json() as Promise<Readyz>;
}

/** Requests the replicas forwarded to another one, all replicas together, by outcome. */
async function forwarded(): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const replica of replicas.values()) {
    if (replica.child.exitCode !== null || replica.child.signalCode !== null) continue;
    const text = await (await fetch(`${replica.origin}/metrics`)).text();
    for (const match of text.matchAll(/^mcplex_cluster_forwarded_total\{([^}]*)\} (\d+)/gm)) {
      const outcome = /outcome="([^"]+)"/.exec(match[1]!)![1]!;
      totals[outcome] = (totals[outcome] ?? 0) + Number(match[2]);
    }
  }
  return totals;
}

function connect(
  mode: "legacy" | "auto",
  url = nginx.url,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; streamOpened: Promise<void> }> {
  const client = new Client(
    { name: "cluster-test", version: "1.0.0" },
    { versionNegotiation: { mode }, capabilities: { elicitation: {} } },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { name: "Grace" },
  }));
  // Told when the 2025 session's GET stream is open: what goes out before it is lost.
  let opened = () => {};
  const streamOpened = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.method ?? "GET") === "GET" && res.ok) opened();
      return res;
    },
  });
  return client.connect(transport).then(() => ({ client, transport, streamOpened }));
}

describe("three replicas behind nginx round-robin", () => {
  it("serve the SDK v2 client of both generations: lists and calls", async () => {
    for (const mode of ["auto", "legacy"] as const) {
      const { client } = await connect(mode);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(["fx__echo", "legacy__ask_name"]));
        for (let i = 0; i < 4; i++) {
          const result = await client.callTool({ name: "fx__echo", arguments: { message: `${mode} ${i}` } });
          expect(resultText(result)).toBe(`echo: ${mode} ${i}`);
        }
      } finally {
        await client.close();
      }
    }
  });

  it("keep a 2025 session whose requests alternate replicas: GET stream, elicitation, progress, cancellation, DELETE", async () => {
    const before = (await forwarded()).relayed ?? 0;
    const { client, transport, streamOpened } = await connect("legacy");
    const sessionId = transport.sessionId!;
    expect(IDS.some((id) => sessionId.startsWith(`${id}.`))).toBe(true);
    await streamOpened;
    try {
      // The list change reaches the client on its GET stream, held by the owner.
      const changed = new Promise<void>((done) =>
        client.setNotificationHandler("notifications/tools/list_changed", () => done()),
      );
      await client.callTool({ name: "legacy__add_tool", arguments: {} });
      await changed;

      // The 2025 upstream's elicitation reaches this client, whichever replica the call landed on.
      for (let i = 0; i < 3; i++)
        expect(resultText(await client.callTool({ name: "legacy__ask_name", arguments: {} }))).toBe(
          "hello Grace",
        );

      const progress: number[] = [];
      const slept = await client.callTool(
        { name: "fx__slow", arguments: { ms: 200, step: 50 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(resultText(slept)).toBe("slept 200");
      expect(progress.length).toBeGreaterThan(0);

      const abort = new AbortController();
      const started = new Promise<void>((resolve) => {
        const call = client.callTool(
          { name: "fx__slow", arguments: { ms: 60_000, step: 50, tag: "session-cancel" } },
          { signal: abort.signal, onprogress: () => resolve() },
        );
        call.catch(() => {});
      });
      await started;
      abort.abort();
      await fixture.log.waitFor("cancelled session-cancel");
      // Most of these requests landed on a replica that does not hold the session.
      expect(((await forwarded()).relayed ?? 0) - before).toBeGreaterThanOrEqual(2);

      await transport.terminateSession();
      for (let i = 0; i < 3; i++) {
        const after = await rawHttp(nginx.url, {
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": sessionId,
          },
          body: { jsonrpc: "2.0", id: i, method: "tools/list", params: {} },
        });
        expect(after.status).toBe(404);
      }
    } finally {
      await client.close();
    }
  });

  it("serve a 2024-11-05 HTTP+SSE client whose POSTs land on other replicas than its stream", async () => {
    const before = (await forwarded()).relayed ?? 0;
    const client = new Client(
      { name: "cluster-sse", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "Lin" },
    }));
    const transport = new SSEClientTransport(new URL(nginx.url.replace(/\/mcp$/, "/sse")));
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("fx__echo");
      for (let i = 0; i < 4; i++)
        expect(
          resultText(await client.callTool({ name: "fx__echo", arguments: { message: `sse ${i}` } })),
        ).toBe(`echo: sse ${i}`);
      // The upstream's elicitation goes out on the stream, and its answer comes back by a POST.
      expect(resultText(await client.callTool({ name: "legacy__ask_name", arguments: {} }))).toBe(
        "hello Lin",
      );
      // Round-robin over three replicas: most of those POSTs reached the stream's owner forwarded.
      expect(((await forwarded()).relayed ?? 0) - before).toBeGreaterThanOrEqual(2);
    } finally {
      await client.close();
    }
    // An id no replica minted is not found on any, and not forwarded.
    const relayed = (await forwarded()).relayed ?? 0;
    for (let i = 0; i < 3; i++) {
      const answer = await rawHttp(nginx.url.replace(/\/mcp$/, `/messages?sessionId=r1.forged${i}.AAAA`), {
        headers: { "content-type": "application/json" },
        body: { jsonrpc: "2.0", id: i, method: "tools/list", params: {} },
      });
      expect(answer.status).toBe(404);
    }
    expect((await forwarded()).relayed ?? 0).toBe(relayed);
  });

  it("serve a browser's 2025 session, Origin and all, whose requests land on other replicas", async () => {
    // A page served through nginx sends nginx's origin; the owner of its session sees the
    // request forwarded, addressed to itself, and takes it as the replica that let it in did.
    const page = { origin: nginx.url.replace(/\/mcp$/, ""), "content-type": "application/json" };
    const accept = { accept: "application/json, text/event-stream" };
    const init = await rawHttp(nginx.url, {
      headers: { ...page, ...accept },
      body: {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "page", version: "1" },
        },
      },
    });
    expect(init.status).toBe(200);
    const session = {
      "mcp-session-id": String(init.headers["mcp-session-id"]),
      "mcp-protocol-version": "2025-06-18",
    };
    const before = (await forwarded()).relayed ?? 0;
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const res = await rawHttp(nginx.url, {
        headers: { ...page, ...accept, ...session },
        body: { jsonrpc: "2.0", id: i, method: "tools/list", params: {} },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(((await forwarded()).relayed ?? 0) - before).toBeGreaterThanOrEqual(2);
    // Another origin is refused where it enters, and never forwarded.
    const foreign = await rawHttp(nginx.url, {
      headers: { ...page, ...accept, ...session, origin: "http://localhost:9999" },
      body: { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} },
    });
    expect(foreign.status).toBe(403);
  });

  it("completes a 2026 input_required call whose retry lands on another replica", async () => {
    const caps = { elicitation: {} };
    const r1 = replicas.get("r1")!;
    const r2 = replicas.get("r2")!;
    const first = await postRev2026(
      r1.url,
      rev2026Request(1, "tools/call", { name: "legacy__ask_name" }, caps),
    );
    const result = (first.json as { result: Record<string, unknown> }).result;
    expect(result.resultType).toBe("input_required");
    const [key] = Object.keys(result.inputRequests as object);
    const retry = rev2026Request(
      2,
      "tools/call",
      {
        name: "legacy__ask_name",
        inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } },
        requestState: result.requestState,
      },
      caps,
    );
    const second = await postRev2026(r2.url, retry);
    const done = (second.json as { result: Record<string, unknown> }).result;
    expect(resultText(done)).toBe("hello Ada");

    // Replayed, on any replica: refused there, never sent to the owner again.
    const relayed = (await forwarded()).relayed ?? 0;
    for (const replica of [r1, r2, replicas.get("r3")!]) {
      const replay = await postRev2026(replica.url, { ...retry, id: 3 });
      expect((replay.json as { error: { message: string } }).error.message).toMatch(/already used/);
    }
    expect((await forwarded()).relayed ?? 0).toBe(relayed);
  });

  it("completes the SDK's own input_required rounds through round-robin", async () => {
    const { client } = await connect("auto");
    try {
      for (let i = 0; i < 3; i++) {
        const result = await client.callTool({ name: "legacy__ask_name", arguments: {} });
        expect(resultText(result)).toBe("hello Grace");
      }
    } finally {
      await client.close();
    }
  });

  it("refuses forged session ids, request states and replica credentials, forwarding none", async () => {
    const { transport, client } = await connect("legacy");
    const real = transport.sessionId!;
    await client.close();
    const before = await forwarded();
    const [owner, nonce, mac] = real.split(".") as [string, string, string];
    const forgeries = [
      `${owner}.${nonce}.${mac.slice(0, -2)}${mac.endsWith("AA") ? "BB" : "AA"}`,
      `${IDS.find((id) => id !== owner)}.${nonce}.${mac}`,
      `${owner}.AAAAAAAAAAAAAAAAAAAAAA.${mac}`,
      "r1.not-an-id",
    ];
    for (const id of forgeries) {
      const answer = await rawHttp(nginx.url, {
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": id,
        },
        body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
      });
      expect(answer.status).toBe(404);
    }

    const caps = { elicitation: {} };
    const first = await postRev2026(
      replicas.get("r1")!.url,
      rev2026Request(1, "tools/call", { name: "legacy__ask_name" }, caps),
    );
    const state = String((first.json as { result: { requestState: string } }).result.requestState);
    const forged = state.replace(/\.r1\./, ".r2.");
    expect(forged).not.toBe(state);
    const answer = await postRev2026(
      replicas.get("r3")!.url,
      rev2026Request(
        2,
        "tools/call",
        { name: "legacy__ask_name", inputResponses: {}, requestState: forged },
        caps,
      ),
    );
    expect((answer.json as { error: { message: string } }).error.message).toMatch(/modified/);

    const impostor = await rawHttp(replicas.get("r2")!.url, {
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-mcplex-replica": `r1.${Date.now()}.AAAA`,
        "mcp-session-id": real,
      },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    });
    expect(impostor.status).toBe(401);
    // A credential made with the cluster's key: accepted fresh, refused a few minutes old.
    const key = deriveKey(SECRET, "replica-credential");
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const stale = await rawHttp(replicas.get("r2")!.url, {
      headers: {
        ...headers,
        "x-mcplex-replica": replicaCredential(key, "r1", "POST", "/mcp", Date.now() - 180_000),
      },
      body: list,
    });
    expect(stale.status).toBe(401);
    const fresh = await rawHttp(replicas.get("r2")!.url, {
      headers: { ...headers, "x-mcplex-replica": replicaCredential(key, "r1", "POST", "/mcp") },
      body: list,
    });
    // Past the credential, a request without a session is what it is anywhere: initialize first.
    expect(fresh.status).toBe(400);
    expect(await forwarded()).toEqual(before);
  });

  it("keeps serving under load while Redis is killed and restarted, says so in /readyz, and recovers", async () => {
    const { client } = await connect("legacy");
    // Load through nginx for the whole outage: stateless 2026 calls, and a 2025 session whose
    // requests the members last known forward to its owner. Every call must answer, none hang.
    let running = true;
    let answered = 0;
    const failures: unknown[] = [];
    const worker = async (w: number) => {
      for (let i = 0; running; i++) {
        try {
          if (w % 2 === 0) {
            const answer = await postRev2026(
              nginx.url,
              rev2026Request(i, "tools/call", { name: "fx__echo", arguments: { message: `w${w}` } }),
            );
            expect(resultText((answer.json as { result: unknown }).result)).toBe(`echo: w${w}`);
          } else {
            const result = await client.callTool({ name: "fx__echo", arguments: { message: `s${w}.${i}` } });
            expect(resultText(result)).toBe(`echo: s${w}.${i}`);
          }
          answered++;
        } catch (error) {
          failures.push(error);
        }
      }
    };
    const load = Array.from({ length: 6 }, (_, w) => worker(w));
    try {
      await redis.kill();
      const r1 = replicas.get("r1")!;
      const degraded = await eventually(async () => {
        const report = await readyz(r1);
        return report.cluster.redis === "down" ? report : undefined;
      });
      expect(degraded.status).toBe("degraded");
      expect(degraded.cluster.warnings?.join(" ")).toMatch(/Redis is out of reach/);
      const duringOutage = answered;
      await eventually(async () => (answered > duringOutage + 20 ? true : undefined), {
        what: "calls answered while Redis is down",
      });
      await redis.restart();
      for (const replica of replicas.values()) {
        await eventually(
          async () => {
            const report = await readyz(replica);
            return report.cluster.redis === "up" && report.cluster.members.length === 3 ? true : undefined;
          },
          { what: "Redis reached again" },
        );
      }
      expect((await readyz(r1)).status).toBe("ok");
      running = false;
      await Promise.all(load);
      expect(failures).toEqual([]);
      expect(answered).toBeGreaterThan(duringOutage);
      // The dashboard's state lists the members too.
      const state = (await (await fetch(`${r1.origin}/dashboard/state`)).json()) as Readyz;
      expect(state.cluster.members.map((m) => m.id)).toEqual(["r1", "r2", "r3"]);
    } finally {
      running = false;
      await Promise.all(load);
      await client.close();
    }
  });

  it("after a replica is SIGKILLed under load, fails only its in-flight calls, 404s its sessions, and serves a new session", async () => {
    const r3 = replicas.get("r3")!;
    // A session r3 holds: opened straight at r3, used through nginx.
    const { client, transport } = await connect("legacy", r3.url);
    const sessionId = transport.sessionId!;
    expect(sessionId.startsWith("r3.")).toBe(true);
    // A 2026 call parked on r3, waiting for its client's input.
    const caps = { elicitation: {} };
    const parked = await postRev2026(
      r3.url,
      rev2026Request(1, "tools/call", { name: "legacy__ask_name" }, caps),
    );
    const { requestState, inputRequests } = (parked.json as { result: Record<string, unknown> }).result;
    // A call in flight in that session, through nginx: it breaks with r3, it does not hang.
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId,
    };
    const res = await fetch(nginx.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "fx__slow", arguments: { ms: 60_000, step: 50 }, _meta: { progressToken: "p" } },
      }),
    });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("notifications/progress")) seen += (await reader.read()).value ?? "";
    // Load on the other replicas while r3 dies: none of it may fail.
    const others = [replicas.get("r1")!, replicas.get("r2")!];
    const load = Array.from({ length: 12 }, (_, i) =>
      postRev2026(
        others[i % 2]!.url,
        rev2026Request(100 + i, "tools/call", { name: "fx__slow", arguments: { ms: 300 } }),
      ),
    );
    await r3.stop("SIGKILL");
    const rest = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return seen;
        seen += value;
      }
    })();
    // Either the stream errors or it ends without the call's result: never a result, never a hang.
    const outcome = await rest.then(
      (text) => text,
      (error: unknown) => error as Error,
    );
    if (typeof outcome === "string") expect(outcome).not.toContain('"result"');
    else expect(outcome).toBeInstanceOf(Error);
    for (const answer of await Promise.all(load))
      expect(resultText((answer.json as { result: unknown }).result)).toBe("slept 300");
    await client.close();

    for (let i = 0; i < 3; i++) {
      const answer = await rawHttp(nginx.url, {
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
        },
        body: { jsonrpc: "2.0", id: i, method: "tools/list", params: {} },
      });
      expect(answer.status).toBe(404);
    }
    // The parked call went with r3: its retry, wherever it lands, says to start again, at once.
    const [key] = Object.keys(inputRequests as object);
    const retry = await postRev2026(
      replicas.get("r1")!.url,
      rev2026Request(
        2,
        "tools/call",
        {
          name: "legacy__ask_name",
          inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } },
          requestState,
        },
        caps,
      ),
    );
    expect((retry.json as { error: { message: string } }).error.message).toMatch(
      /replica holding this call is gone.*start the call again/,
    );
    // The client's next initialize lands on a live replica.
    const again = await connect("legacy");
    try {
      expect(again.transport.sessionId!.startsWith("r3.")).toBe(false);
      for (let i = 0; i < 3; i++)
        expect(
          resultText(await again.client.callTool({ name: "fx__echo", arguments: { message: `${i}` } })),
        ).toBe(`echo: ${i}`);
    } finally {
      await again.client.close();
    }
  });
});
