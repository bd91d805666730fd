import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpFront } from "../../src/fronts/http-front.js";
import { configOf, fixture } from "../support/config.js";
import {
  COMMANDS,
  type InProcessGateway,
  type RawResponse,
  rawHttp,
  serveHttp,
  startGateway,
  yamlConfig,
} from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// The attack: 30,000 2025 sessions opened and never closed were all kept (about 4.8 KiB each)
// until the 30-minute idle sweep. Sessions are capped per client and in total: past a cap the
// longest idle session goes, and when none is idle the new one is refused, saying why.

const LEGACY = "2025-06-18";
const A = "token-for-client-a-0123456789";
const B = "token-for-client-b-0123456789";

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(configOf([fixture("fx")]));
});
afterAll(() => gw?.stop());

const headers = (extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...extra,
});

/** Opens a 2025 session; its id, or the refusal. */
async function initialize(url: string, token?: string): Promise<{ id?: string; res: RawResponse }> {
  const res = await rawHttp(url, {
    headers: headers(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "cap-test", version: "1" } },
    },
  });
  const id = res.headers["mcp-session-id"];
  return { ...(typeof id === "string" ? { id } : {}), res };
}

/** A ping on session `id`: 200 while it lives, 404 once it is gone. */
async function ping(url: string, id: string, token?: string): Promise<number> {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const res = await rawHttp(url, {
    headers: headers({ "mcp-session-id": id, "mcp-protocol-version": LEGACY, ...auth }),
    body: { jsonrpc: "2.0", id: 2, method: "ping" },
  });
  return res.status;
}

/** A slow call on session `id` that keeps it busy until `abort` fires. */
function busy(url: string, id: string, abort: AbortSignal): Promise<unknown> {
  return fetch(url, {
    method: "POST",
    headers: headers({ "mcp-session-id": id, "mcp-protocol-version": LEGACY }),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "fx__slow", arguments: { ms: 60_000, step: 60_000 } },
    }),
    signal: abort,
  }).catch(() => undefined);
}

async function metric(front: HttpFront, name: string): Promise<string> {
  const res = await rawHttp(front.url.replace(/\/mcp$/, "/metrics"), { method: "GET" });
  return res.body
    .split("\n")
    .filter((line) => line.startsWith(name))
    .join("\n");
}

describe("2025 sessions past the cap per client", () => {
  it("evict the longest idle session of that client", async () => {
    const front = await gw.addFront({ maxSessionsPerClient: 3 });
    const first = (await initialize(front.url)).id!;
    const second = (await initialize(front.url)).id!;
    const third = (await initialize(front.url)).id!;
    // The first one is used last: the second is now the longest idle.
    expect(await ping(front.url, first)).toBe(200);
    const fourth = await initialize(front.url);
    expect(fourth.res.status).toBe(200);
    expect(await ping(front.url, second)).toBe(404);
    for (const id of [first, third, fourth.id!]) expect(await ping(front.url, id)).toBe(200);
    expect(await metric(front, "mcplex_active_sessions")).toContain('transport="http"} 3');
    expect(await metric(front, "mcplex_sessions_limited_total")).toContain('outcome="evicted"} 1');
  }, 30_000);

  it("are refused with a clear error when every session of the client is busy", async () => {
    const front = await gw.addFront({ maxSessionsPerClient: 2 });
    const abort = new AbortController();
    try {
      const ids = [(await initialize(front.url)).id!, (await initialize(front.url)).id!];
      const started = callsStarted(gw, 2);
      const calls = ids.map((id) => busy(front.url, id, abort.signal));
      await started;
      const refused = await initialize(front.url);
      expect(refused.res.status).toBe(429);
      expect(refused.res.body).toMatch(/2 sessions open for this client, all busy \(limit 2\)/);
      expect(refused.res.body).toMatch(/DELETE/);
      expect(await metric(front, "mcplex_sessions_limited_total")).toContain('outcome="refused"} 1');
      abort.abort();
      await Promise.all(calls);
    } finally {
      abort.abort();
    }
  }, 30_000);

  it("count per token, so one client's sessions do not evict another's", async () => {
    const front = await gw.addFront({
      maxSessionsPerClient: 2,
      tokens: [{ token: A }, { token: B }],
    });
    const b = (await initialize(front.url, B)).id!;
    for (let i = 0; i < 5; i++) expect((await initialize(front.url, A)).res.status).toBe(200);
    expect(await ping(front.url, b, B)).toBe(200);
  }, 30_000);
});

describe("2025 sessions past the total cap", () => {
  it("evict the longest idle session of any client", async () => {
    const front = await gw.addFront({
      maxSessions: 3,
      maxSessionsPerClient: 3,
      tokens: [{ token: A }, { token: B }],
    });
    const a1 = (await initialize(front.url, A)).id!;
    const a2 = (await initialize(front.url, A)).id!;
    const b1 = (await initialize(front.url, B)).id!;
    const b2 = await initialize(front.url, B);
    expect(b2.res.status).toBe(200);
    expect(await ping(front.url, a1, A)).toBe(404);
    expect(await ping(front.url, a2, A)).toBe(200);
    expect(await ping(front.url, b1, B)).toBe(200);
  }, 30_000);
});

describe("a flood of never-closed 2025 sessions", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-sessions-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it(
    "keeps at most the cap in mcplex serve, whatever the count",
    async () => {
      const cap = attackSize(50, 1000);
      const count = attackSize(300, 30_000);
      const config = join(dir, "mcplex.yaml");
      await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
      const served = await serveHttp(["--config", config, "--max-sessions-per-client", String(cap)]);
      try {
        const rss = async () => {
          const status = await readFile(`/proc/${served.child.pid}/status`, "utf8");
          return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
        };
        const before = await rss();
        for (let i = 0; i < count; i++) {
          const opened = await initialize(served.url);
          if (opened.res.status !== 200) throw new Error(`initialize ${i} answered ${opened.res.status}`);
        }
        const res = await rawHttp(`${served.origin}/metrics`, { method: "GET" });
        const open = res.body.split("\n").filter((l) => l.startsWith("mcplex_active_sessions"));
        const evicted = res.body.split("\n").filter((l) => l.startsWith("mcplex_sessions_limited_total"));
        reportFigure(
          "session flood",
          `${count} sessions opened, cap ${cap}: ${open.join(" ")}; ${evicted.join(" ")}; ` +
            `serve RSS ${before.toFixed(0)} -> ${(await rss()).toFixed(0)} MiB`,
        );
        expect(open.join(" ")).toContain(`transport="http"} ${cap}`);
        expect(evicted.join(" ")).toContain(`outcome="evicted"} ${count - cap}`);
      } finally {
        await served.stop();
      }
    },
    attackTimeout(60_000, 900_000),
  );
});

/** Resolves once `count` more forwarded calls have started in the gateway. */
function callsStarted(gateway: InProcessGateway, count: number): Promise<void> {
  return new Promise((done) => {
    let started = 0;
    const stop = gateway.gateway.watchCalls({
      started() {
        if (++started < count) return;
        stop();
        done();
      },
      ended() {},
    });
  });
}
