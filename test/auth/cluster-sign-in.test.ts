/**
 * Sign-in across replicas: two `mcplex serve` processes with one config (the same `auth:`,
 * `auth.resource` = nginx's URL), one Redis, real nginx round-robin in front with no
 * stickiness. A user signs in once, through nginx, at the real authorization server of
 * test/support/oidc-provider.ts; the token then works whichever replica serves a request, and
 * a 2025 session whose requests nginx sends to the other replica (forwarded to its owner, the
 * client's Authorization with it) keeps working. Which replica answered is read in band: each
 * replica runs its own fixture server, whose `pid` tool says its process id.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type FetchLike, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { COMMANDS, eventually, resultText, type ServeProcess, serveHttp } from "../support/gateway.js";
import { type NginxProcess, startNginx } from "../support/nginx.js";
import { type AuthServer, connectWithSignIn, startAuthServer } from "../support/oidc-provider.js";
import { type RedisProcess, startRedis } from "../support/redis.js";
import { dpopClientProvider } from "./dpop-gateway.js";

const SECRET = "cluster-sign-in-secret-0123456789abcdefgh";
/** Reads /metrics and /readyz (static tokens keep working beside sign-in). */
const OPERATOR_TOKEN = "cluster-operator-token-0123456789abcdef";
const IDS = ["r1", "r2"] as const;

let dir: string;
let as: AuthServer;
let redis: RedisProcess;
let nginx: NginxProcess;
const replicas: ServeProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-cluster-sign-in-"));
  [as, redis] = await Promise.all([startAuthServer(), startRedis()]);
  // nginx's URL is the resource every replica names, so nginx comes first, in front of the
  // ports the replicas will listen on.
  const ports = [await freePort(), await freePort()];
  nginx = await startNginx({ upstreams: ports.map((p) => `127.0.0.1:${p}`) });
  const config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    `serve:
  readyWait: 1m
servers:
  fx:
    command: ${JSON.stringify(COMMANDS.fixture.command)}
    args: ${JSON.stringify(COMMANDS.fixture.args)}
cluster:
  url: ${redis.url}
  id: \${REPLICA_ID}
tokens:
  - token: ${OPERATOR_TOKEN}
    operator: true
auth:
  resource: ${nginx.origin}
  issuers:
    - issuer: ${as.issuer}
  scopes: ["mcp:tools"]
`,
  );
  replicas.push(
    ...(await Promise.all(
      IDS.map((id, i) =>
        serveHttp(["--config", config, "--port", String(ports[i])], {
          env: { REPLICA_ID: id, MCPLEX_CLUSTER_SECRET: SECRET },
        }),
      ),
    )),
  );
  for (const replica of replicas) {
    await eventually(
      async () => ((await operatorJson(replica, "/readyz")).cluster.members.length === 2 ? true : undefined),
      { what: "two members" },
    );
  }
  as.resetCounts();
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
  await rm(dir, { recursive: true, force: true });
});

async function operatorJson(replica: ServeProcess, path: string) {
  const response = await fetch(`${replica.origin}${path}`, {
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  });
  return (await response.json()) as { cluster: { members: unknown[] } };
}

/** A counter of one replica's /metrics, summed over the series whose labels include `labels`. */
async function metric(replica: ServeProcess, name: string, labels: string[]): Promise<number> {
  const text = await (
    await fetch(`${replica.origin}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
  ).text();
  let total = 0;
  for (const match of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\d+)`, "gm")))
    if (labels.every((label) => match[1]!.includes(label))) total += Number(match[2]);
  return total;
}

/** The statuses of the /mcp requests a client sent (to see that none was refused). */
function statuses(seen: number[]): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (String(input instanceof Request ? input.url : input).startsWith(nginx.url))
      seen.push(response.status);
    return response;
  };
}

describe("replicas behind nginx, one sign-in", () => {
  /** Alice's sign-in (an SDK OAuth client provider), made once and used by both clients. */
  let auth: ReturnType<AuthServer["clientProvider"]>;

  it("signs in once through nginx; the token works on every request, whichever replica serves it", async () => {
    auth = as.clientProvider({ user: "alice" });
    const seen: number[] = [];
    // 2026 requests stand alone: nginx, round-robin with no stickiness (startNginx without
    // `sticky`), sends them to both replicas in turn.
    const client = new Client(
      { name: "cluster-sign-in", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    const transport = await connectWithSignIn(
      client,
      () =>
        new StreamableHTTPClientTransport(new URL(nginx.url), {
          authProvider: auth,
          fetch: statuses(seen),
        }),
      auth,
    );
    const before = await Promise.all(
      replicas.map((r) => metric(r, "mcplex_requests_total", ['tool="fx__pid"'])),
    );
    try {
      expect(transport.sessionId).toBeUndefined();
      // The resource is nginx's URL, whichever replica answered the metadata request.
      expect(decodeJwt(auth.accessToken!)).toMatchObject({ aud: nginx.url, sub: "alice" });
      seen.length = 0;
      const pids = new Set<string>();
      for (let i = 0; i < 8; i++)
        pids.add(resultText(await client.callTool({ name: "fx__pid", arguments: {} })));
      // Two fixture processes answered: one per replica.
      expect(pids.size).toBe(2);
      expect(seen.filter((status) => status !== 200)).toEqual([]);
      expect(auth.redirects).toBe(1);
    } finally {
      await transport.close();
      await client.close();
    }
    // Each replica's own count of the calls it answered agrees.
    const after = await Promise.all(
      replicas.map((r) => metric(r, "mcplex_requests_total", ['tool="fx__pid"'])),
    );
    const served = after.map((n, i) => n - before[i]!);
    expect(served.every((n) => n > 0)).toBe(true);
    expect(served.reduce((a, b) => a + b, 0)).toBe(8);
    // Each replica fetched the provider's keys once for itself, whatever it verified.
    expect(as.jwksFetches).toBeGreaterThanOrEqual(1);
    expect(as.jwksFetches).toBeLessThanOrEqual(2);
  });

  /** Requests the replicas relayed to a session's owner, counted over both. */
  const relayed = () =>
    Promise.all(replicas.map((r) => metric(r, "mcplex_cluster_forwarded_total", ['outcome="relayed"']))).then(
      (counts) => counts.reduce((a, b) => a + b, 0),
    );

  it("keeps a 2025 session working when nginx sends its requests to the other replica (forwarded with the token)", async () => {
    const before = await relayed();
    const seen: number[] = [];
    const client = new Client({ name: "cluster-sign-in-2025", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(nginx.url), {
      authProvider: auth,
      fetch: statuses(seen),
    });
    await client.connect(transport);
    try {
      const owner = IDS.find((id) => transport.sessionId?.startsWith(`${id}.`));
      expect(owner).toBeDefined();
      const pids = new Set<string>();
      for (let i = 0; i < 6; i++)
        pids.add(resultText(await client.callTool({ name: "fx__pid", arguments: {} })));
      // Every call ran at the session's owner, however nginx routed it.
      expect(pids.size).toBe(1);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("fx__echo");
      expect(seen.filter((status) => status >= 400)).toEqual([]);
    } finally {
      await transport.close();
      await client.close();
    }
    expect((await relayed()) - before).toBeGreaterThanOrEqual(2);
    // The same sign-in throughout: no second trip to the authorization server.
    expect(auth.redirects).toBe(1);
  });

  it("signs in with DPoP through nginx; a 2025 session's forwarded requests pass, and a captured proof replayed at either replica is refused", async () => {
    const dpopAuth = await dpopClientProvider(as, "bob");
    const before = await relayed();
    const seen: number[] = [];
    /** The last DPoP proof (and token) a request carried, as an attacker on the path would see it. */
    let captured: { authorization: string; dpop: string } | undefined;
    const capture: FetchLike = async (input, init) => {
      const headers = new Headers(init?.headers);
      const proof = headers.get("dpop");
      const response = await statuses(seen)(input, init);
      if (proof !== null && response.status === 200 && init?.method === "POST")
        captured = { authorization: headers.get("authorization")!, dpop: proof };
      return response;
    };
    const client = new Client({ name: "cluster-dpop", version: "1.0.0" });
    const transport = await connectWithSignIn(
      client,
      () => new StreamableHTTPClientTransport(new URL(nginx.url), { authProvider: dpopAuth, fetch: capture }),
      dpopAuth,
    );
    try {
      expect(dpopAuth.tokens()?.token_type.toLowerCase()).toBe("dpop");
      const pids = new Set<string>();
      for (let i = 0; i < 6; i++)
        pids.add(resultText(await client.callTool({ name: "fx__pid", arguments: {} })));
      // One owner ran every call; nginx sent some to the other replica, which checked the
      // proof and forwarded them (the owner does not spend the jti a second time).
      expect(pids.size).toBe(1);
      expect(seen.filter((status) => status >= 400 && status !== 401)).toEqual([]);
    } finally {
      await transport.close();
      await client.close();
    }
    expect((await relayed()) - before).toBeGreaterThanOrEqual(2);
    expect(captured).toBeDefined();
    // Its htu is nginx's URL (auth.resource): either replica checks it against that, and both
    // know its jti is spent, one through Redis.
    for (const replica of replicas) {
      const answer = await fetch(`${replica.origin}/mcp`, {
        method: "POST",
        headers: {
          ...captured!,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/list",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toContain('error="invalid_dpop_proof"');
      expect(await answer.text()).toContain("used before");
    }
  });
});
